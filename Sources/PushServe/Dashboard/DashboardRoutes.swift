import Foundation
import Hummingbird
import PushCore
import PushStore
import PGClient

/// The dashboard under `/dashboard` (and `/` leading there): server-rendered pages over the
/// store's bounded queries, and the operator's actions, each confirmed, CSRF-checked (by
/// ``AuthMiddleware``, for sessions) and audited. Any key may read; actions need the scope
/// that allows them (``DashboardAction/operatesFleet``).
struct DashboardRoutes: ServeRoutes {
    func register(on router: Router<ServeContext>, services: ServeServices) {
        router.get("/") { _, _ in Response(status: .seeOther, headers: [.location: DashboardLayout.root]) }
        let dashboard = router.group("dashboard")
        dashboard.get("assets/dashboard.js") { _, _ in Self.asset(DashboardAssets.script, type: "text/javascript; charset=utf-8") }
        dashboard.get("assets/dashboard.css") { _, _ in Self.asset(DashboardAssets.stylesheet, type: "text/css; charset=utf-8") }
        dashboard.get { request, context in
            try await Self.page(context) { page in
                let (status, series) = try await services.dashboardRead { c in
                    var status = try await c.queueStatus(failureMinutes: 60)
                    status.tenants = try await c.topTenants()
                    return (status, try await c.minuteSeries())
                }
                return page.overview(status, series: series, notice: Self.notice(request))
            }
        }
        dashboard.get("failures") { _, context in
            try await Self.page(context) { page in
                let (hour, day) = try await services.dashboardRead { c in
                    (try await c.failureReasons(minutes: 60), try await c.failureReasons(minutes: 1_440))
                }
                return page.failures(hour: hour, day: day)
            }
        }
        dashboard.get("failures/rows") { request, context in
            try await Self.page(context) { page in
                let reason = request.uri.queryParameters["reason"].map(String.init) ?? ""
                let minutes = request.uri.queryParameters["minutes"].flatMap { Int($0) } == 60 ? 60 : 1_440
                let rows = try await services.dashboardRead {
                    try await $0.failedRows(reason: reason, minutes: minutes, limit: PGConnection.dashboardListLimit)
                }
                return page.failedRows(reason: reason, minutes: minutes, rows: rows)
            }
        }
        dashboard.get("search") { request, context in try await Self.search(request, context, services) }
        dashboard.get("notifications/:id") { request, context in
            try await Self.respond(context) { page in
                guard let id = context.parameters.get("id").flatMap({ Int64($0) }),
                      let record = try await services.dashboardRead({ try await $0.notificationRecord(id: id) }) else {
                    return (page.nothingFound(context.parameters.get("id") ?? ""), .notFound)
                }
                return (page.notification(record, notice: Self.notice(request)), .ok)
            }
        }
        dashboard.get("users") { request, context in
            try await Self.page(context) { page in
                let ref = request.uri.queryParameters["ref"].map(String.init) ?? ""
                let (devices, rows) = try await services.dashboardRead { try await $0.userPage(userRef: ref) }
                return page.userPage(ref, devices: devices, rows: rows)
            }
        }
        dashboard.get("confirm") { request, context in
            try await Self.respond(context) { page in
                guard let action = DashboardAction(fields: Self.fields(request.uri.queryParameters)) else {
                    return (page.refused("That action is not one the dashboard knows."), .badRequest)
                }
                if let refusal = Self.refusal(action, context) { return (page.refused(refusal), .forbidden) }
                return (page.confirm(action), .ok)
            }
        }
        dashboard.post("actions") { request, context in try await Self.act(request, context, services) }
    }

    /// The search box: an id opens its page, anything else lists what it finds.
    static func search(_ request: Request, _ context: ServeContext, _ services: ServeServices) async throws -> Response {
        let text = request.uri.queryParameters["q"].map(String.init) ?? ""
        if case .id(let id) = DashboardSearch(text) {
            return Response(status: .seeOther, headers: [.location: "\(DashboardLayout.root)/notifications/\(id)"])
        }
        return try await page(context) { page in
            switch DashboardSearch(text) {
            case .token(let token):
                let found = try await services.dashboardRead { try await $0.rows(forToken: token) }
                return page.tokenPage(token, devices: found.devices, rows: found.rows)
            case .user(let ref):
                let found = try await services.dashboardRead { try await $0.userPage(userRef: ref) }
                return page.userPage(ref, devices: found.devices, rows: found.rows)
            case .metadata(let key, let value):
                let rows = try await services.dashboardRead { try await $0.rows(metadataKey: key, value: value) }
                return page.metadataResults(key: key, value: value, rows: rows)
            case .id, nil:
                return page.nothingFound(text)
            }
        }
    }

    /// An action's form, posted from its confirmation page: carried out and audited, then back
    /// to the page it concerns with what it did (303, so a reload does not post it again).
    static func act(_ request: Request, _ context: ServeContext, _ services: ServeServices) async throws -> Response {
        var request = request
        let fields = formFields(String(buffer: try await request.collectBody(upTo: 64 * 1024)))
        guard let caller = context.caller, let action = DashboardAction(fields: fields) else {
            return try await respond(context) { ($0.refused("That action is not one the dashboard knows."), .badRequest) }
        }
        if let refusal = refusal(action, context) { return try await respond(context) { ($0.refused(refusal), .forbidden) } }
        let entry = caller.audit(action.auditName, target: action.auditTarget)
        let done = try await services.audited(entry) { try await $0.perform(action, audit: entry) }
        return Response(status: .seeOther, headers: [.location: DashboardFormat.url(action.returnPath, action.queryItems + [("done", done)])])
    }

    /// Why the caller may not do `action` (``ServeContext/require(_:)``'s words), nil when it may.
    static func refusal(_ action: DashboardAction, _ context: ServeContext) -> String? {
        do {
            _ = try context.require(action.operatesFleet ? .operate : .enqueue)
            return nil
        } catch let error as APIError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    /// What an action that just ran did, from the query of the page it came back to.
    static func notice(_ request: Request) -> String? {
        let fields = Self.fields(request.uri.queryParameters)
        guard let done = fields["done"], let action = DashboardAction(fields: fields) else { return nil }
        return action.doneMessage(done)
    }

    static func fields(_ query: Parameters) -> [String: String] {
        var out: [String: String] = [:]
        for (key, value) in query where out[String(key)] == nil { out[String(key)] = String(value) }
        return out
    }

    /// A page for the caller, 200.
    static func page(_ context: ServeContext, _ render: (DashboardPage) async throws -> HTML) async throws -> Response {
        try await respond(context) { (try await render($0), .ok) }
    }

    /// A page for the caller, with its status, sent with the dashboard's security headers.
    static func respond(_ context: ServeContext, _ render: (DashboardPage) async throws -> (HTML, HTTPResponse.Status)) async throws -> Response {
        let caller = try context.require(.readQueue)
        let page = DashboardPage(layout: DashboardLayout(keyName: caller.name, csrfToken: caller.csrfToken ?? ""),
                                 canCancel: caller.scope.allows(.enqueue), canOperate: caller.scope.allows(.operate))
        var headers = headers("text/html; charset=utf-8")
        let (html, status): (HTML, HTTPResponse.Status)
        do {
            (html, status) = try await render(page)
        } catch let cut as DashboardCut {
            (html, status) = (page.stopped(cut), .serviceUnavailable)
        } catch is DatabaseBusy {
            (html, status) = (page.busy(), .serviceUnavailable)
            headers[.retryAfter] = "1"
        }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html.rendered)))
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(status: .ok, headers: headers(type), body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func headers(_ type: String) -> HTTPFields {
        [.contentType: type, .cacheControl: "no-store", .contentSecurityPolicy: DashboardAssets.contentSecurityPolicy,
         .xContentTypeOptions: "nosniff", .referrerPolicy: "same-origin"]
    }
}

extension HeaderName {
    static let contentSecurityPolicy = HeaderName("Content-Security-Policy")!
    static let xContentTypeOptions = HeaderName("X-Content-Type-Options")!
    static let referrerPolicy = HeaderName("Referrer-Policy")!
}
