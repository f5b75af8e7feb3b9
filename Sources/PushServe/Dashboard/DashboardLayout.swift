/// The frame of every dashboard page: head, navigation, search box and the signed-in key.
struct DashboardLayout {
    /// The name of the key the page is shown to (the session's).
    var keyName: String
    /// The session's CSRF token, for the sign-out form.
    var csrfToken: String

    /// The hidden field every form of a session carries (checked by ``AuthMiddleware``).
    var csrfField: HTML { "<input type=\"hidden\" name=\"\(SessionCookie.csrfFieldName)\" value=\"\(csrfToken)\">" }

    /// The path the dashboard is served under.
    static let root = "/dashboard"

    /// A whole page. `refreshing` pages reload their `<main>` every few seconds (`DashboardAssets.script`).
    func page(title: String, refreshing: Bool = false, notice: String? = nil, _ body: HTML) -> HTML {
        let main: HTML = refreshing ? "<main id=\"main\" data-refresh=\"5\">" : "<main id=\"main\">"
        let banner: HTML = notice.map { "<p class=\"notice\" role=\"status\">\($0)</p>" } ?? ""
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title) · pushq</title>
            <link rel="stylesheet" href="\(Self.root)/assets/dashboard.css">
            <script src="\(Self.root)/assets/dashboard.js" defer></script></head>
            <body><header><a class="brand" href="\(Self.root)">pushq</a>
            <nav><a href="\(Self.root)">Overview</a> <a href="\(Self.root)/failures">Failures</a></nav>
            <form class="search" method="get" action="\(Self.root)/search"><input type="search" name="q" placeholder="id, token, user_ref or key=value" aria-label="Search" required>
            <button type="submit">Search</button></form>
            <form class="signout" method="post" action="/logout">\(csrfField)
            <span class="key">\(keyName)</span> <button type="submit">Sign out</button></form></header>
            \(banner)\(main)<h1>\(title)</h1>
            \(body)</main></body></html>
            """
    }
}
