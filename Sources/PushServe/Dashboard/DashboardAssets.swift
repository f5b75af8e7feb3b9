/// The dashboard's stylesheet and script, served by `pushq serve` itself: a page loads nothing
/// from another host (it works with no internet), and the Content-Security-Policy allows only
/// the server's own files (``contentSecurityPolicy``).
enum DashboardAssets {
    /// Sent with every dashboard page: scripts, styles and forms of this origin only, no frames.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// Every few seconds (`data-refresh` on `<main>`), fetches the page again and swaps in its
    /// `<main>`; not while the tab is hidden, and never over a focused field. A refresh that
    /// fails (signed out, server gone) leaves the page as it is and says so.
    static let script = """
        "use strict";
        (function () {
          var main = document.getElementById("main");
          if (!main || !main.dataset.refresh) return;
          var seconds = Math.max(2, parseInt(main.dataset.refresh, 10) || 5);
          function refresh() {
            if (document.hidden || (document.activeElement && document.activeElement.form)) return;
            fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
              .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.text(); })
              .then(function (text) {
                var fresh = new DOMParser().parseFromString(text, "text/html").getElementById("main");
                if (!fresh) throw new Error("no main");
                main.replaceChildren.apply(main, Array.from(fresh.childNodes));
                main.removeAttribute("data-stale");
              })
              .catch(function () { main.setAttribute("data-stale", "true"); });
          }
          window.setInterval(refresh, seconds * 1000);
        })();
        """

    static let stylesheet = """
        body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d232a; background: #f6f7f9; }
        header { display: flex; gap: 1.5em; align-items: center; padding: .6em 1.2em; background: #1d232a; color: #fff; flex-wrap: wrap; }
        header a { color: #fff; text-decoration: none; margin-right: 1em; }
        .brand { font-weight: 700; font-size: 1.2em; }
        .search input { width: 22em; }
        .signout { margin-left: auto; }
        main { padding: 1em 1.2em; }
        main[data-stale]::before { content: "Not refreshed: the server did not answer"; color: #a40000; }
        h1 { font-size: 1.4em; margin: .2em 0 .6em; }
        h2 { font-size: 1.1em; margin: 1.4em 0 .4em; }
        section { background: #fff; border: 1px solid #d8dde3; border-radius: 6px; padding: .6em 1em; margin-bottom: 1em; }
        table { border-collapse: collapse; }
        th, td { text-align: left; padding: .2em .8em .2em 0; border-bottom: 1px solid #eceff2; vertical-align: top; }
        td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
        pre { background: #f0f2f4; padding: .5em; overflow-x: auto; max-width: 60em; white-space: pre-wrap; word-break: break-all; }
        .notice { background: #e6f4ea; border: 1px solid #9fd3ad; padding: .5em 1em; margin: 1em 1.2em 0; }
        .error { background: #fdecea; border: 1px solid #f5b3ab; padding: .5em 1em; }
        .grid { display: flex; flex-wrap: wrap; gap: 1em; }
        .grid > section { flex: 1 1 20em; }
        .chart { width: 100%; max-width: 760px; height: auto; }
        .legend span { margin-right: 1.2em; }
        .sent { color: #1a7f37; } .failed { color: #cf222e; } .invalidated { color: #bc4c00; }
        .muted { color: #6a737d; }
        button.danger { background: #cf222e; color: #fff; border: 0; padding: .4em 1em; border-radius: 4px; }
        form.inline { display: inline; }
        """
}
