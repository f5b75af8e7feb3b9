/// The OpenAPI 3.1 document of the API (`openapi.json` beside this file, embedded in the binary),
/// served at `/api/v1/openapi.json`. A test validates it with `openapi-spec-validator` and checks
/// that its paths and methods are exactly the routes registered under `/api/v1`.
enum OpenAPIDocument {
    static let text = String(decoding: PackageResources.openapi_json, as: UTF8.self)
}
