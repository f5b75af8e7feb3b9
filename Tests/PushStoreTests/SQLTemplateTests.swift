import Foundation
@testable import PushStore
import Testing
import PGClient

@Suite("SQL templates")
struct SQLTemplateTests {
    @Test("a template renders each marker, every occurrence, in place; a marker with no value stays")
    func renders() {
        let t = SQLTemplate("a /*X*/ b /*Y*/ c /*X*/", markers: ["/*X*/", "/*Y*/"])
        #expect(t.render(["/*X*/": "1", "/*Y*/": "2"]) == "a 1 b 2 c 1")
        #expect(t.render(["/*X*/": ""]) == "a  b /*Y*/ c ")
        #expect(SQLTemplate("no markers", markers: ["/*X*/"]).render(["/*X*/": "1"]) == "no markers")
        #expect(SQLTemplate("/*X*//*X*/", markers: ["/*X*/"]).render(["/*X*/": "z"]) == "zz")
    }

    @Test("the claim, its heads and its last due entry render as text replacement would, for every size and filter")
    func claimTexts() {
        let filters = ["", "AND n.id = $31::bigint", ClaimFilter.heldSQL(environment: "$4")]
        for (considerate, template) in [(true, ClaimStatement.templates.considerate), (false, ClaimStatement.templates.plain)] {
            let sql = ClaimStatement.sql(considerate: considerate)
            for limit in [1, 3, 100, 500, 1_000] {
                for filter in filters {
                    let expected = sql.replacingOccurrences(of: "/*SIZE*/", with: String(ClaimStatement.sizeBound(limit)))
                        .replacingOccurrences(of: "/*FILTER*/", with: filter)
                    let rendered = template.render([ClaimStatement.sizeMarker: String(ClaimStatement.sizeBound(limit)),
                                                    ClaimFilter.marker: filter])
                    #expect(rendered == expected)
                    #expect(!rendered.contains("/*SIZE*/") && !rendered.contains("/*FILTER*/"))
                }
            }
            #expect(sql.components(separatedBy: ClaimFilter.marker).count > 2, "the claim filters its walk and the cap check")
        }
        for (template, name) in [(PGConnection.headsSQL, "heads"), (PGConnection.lastDueSQL, "last due")] {
            let rendered = template.render([ClaimFilter.marker: "AND true"])
            #expect(rendered.contains("AND true") && !rendered.contains(ClaimFilter.marker), "\(name)")
        }
    }
}
