import PushStore
import PushTestSupport
import Testing
import PGClient

/// The grants of `pushq migrate --print-grants` (``RoleGrants``) against a migrated schema: they
/// name every object of it, apply as printed, and leave each role unable to change the schema.
/// That serve and the worker run under them is shown by `LeastPrivilegeTests` (PushWorkerTests).
@Suite("Role grants")
struct RoleGrantsTests {
    /// `kind name` of every table, sequence and function of schema pushq but trigger functions
    /// (which need no grant): a function with its argument types, as `GRANT` names it.
    static func schemaObjects(_ db: PGConnection) async throws -> Set<String> {
        let r = try await db.query("""
            SELECT CASE c.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END || ' ' || c.relname
              FROM pg_class c WHERE c.relnamespace = 'pushq'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
            UNION ALL
            SELECT 'FUNCTION ' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')'
              FROM pg_proc p WHERE p.pronamespace = 'pushq'::regnamespace AND p.prorettype <> 'trigger'::regtype
            """)
        return Set((0..<r.count).compactMap { r.string($0, 0) })
    }

    /// The identity arguments without their names, as the catalog writes them.
    static func withoutArgumentNames(_ object: String) -> String {
        guard object.hasPrefix("FUNCTION "), let open = object.firstIndex(of: "("), object.hasSuffix(")") else { return object }
        let arguments = object[object.index(after: open)..<object.index(before: object.endIndex)]
        let types = arguments.split(separator: ",").map { argument -> String in
            let words = argument.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
            return words.count == 2 ? String(words[1]) : String(words.first ?? "")
        }
        return String(object[...open]) + types.joined(separator: ", ") + ")"
    }

    @Test("the catalog classifies every table, sequence and function of schema pushq, and names nothing else")
    func catalogCoversSchema() async throws {
        try await TestDatabase.withConnection { db in
            let inSchema = Set(try await Self.schemaObjects(db).map(Self.withoutArgumentNames))
            let inCatalog = Set(RoleGrants.catalog.map { "\($0.kind.rawValue) \($0.name)" })
            #expect(inSchema.subtracting(inCatalog).sorted() == [], "a migration added what RoleGrants.catalog does not classify")
            #expect(inCatalog.subtracting(inSchema).sorted() == [], "RoleGrants.catalog names what the schema does not have")
        }
    }

    @Test("a role given the printed grants owns nothing and cannot DROP, TRUNCATE, ALTER or CREATE in schema pushq (42501)",
          arguments: DatabaseRole.allCases)
    func grantsChangeNoSchema(use: DatabaseRole) async throws {
        try await TestRoles.with(["pushq_\(use.rawValue)_t"]) { roles in
            try await TestDatabase.with { url in
                let owner = try await PGConnection.connect(url, logger: TestDatabase.logger)
                try await owner.execute(RoleGrants.sql(for: use, role: roles[0]))
                let owned = try await owner.query("""
                    SELECT count(*) FROM pg_class WHERE relnamespace = 'pushq'::regnamespace AND pg_has_role($1, relowner, 'USAGE')
                    """, [roles[0]]).decode(Int.self, 0, 0)
                #expect(owned == 0)
                await owner.close()

                let role = try await PGConnection.connect(TestRoles.url(url, user: roles[0]), logger: TestDatabase.logger)
                #expect(try await role.query("SELECT current_user").string(0, 0) == roles[0])
                let tables = RoleGrants.catalog.filter { $0.kind == .table }.map(\.name)
                #expect(tables.count >= 16)
                for table in tables {
                    for statement in ["DROP TABLE pushq.\(table)", "TRUNCATE pushq.\(table)",
                                      "ALTER TABLE pushq.\(table) ADD COLUMN x int", "ALTER TABLE pushq.\(table) DISABLE TRIGGER ALL"] {
                        do {
                            try await role.execute(statement)
                            Issue.record("\(use) role could: \(statement)")
                        } catch let error as PGError {
                            #expect(error.sqlState == "42501", "\(statement): \(error)")
                        }
                    }
                }
                do {
                    try await role.execute("CREATE TABLE pushq.intruder (id int)")
                    Issue.record("\(use) role could create a table in schema pushq")
                } catch let error as PGError {
                    #expect(error.sqlState == "42501", "\(error)")
                }
                await role.close()
            }
        }
    }

    @Test("the statements are idempotent, quote the role, and refuse a role that does not exist by name")
    func statementsApply() async throws {
        #expect(RoleGrants.sql(for: .serve, role: #"we"ird"#).contains(#"TO "we""ird";"#))
        #expect(RoleGrants.roleNameProblem("") != nil && RoleGrants.roleNameProblem(String(repeating: "r", count: 64)) != nil)
        #expect(RoleGrants.roleNameProblem("pushq_serve") == nil)
        try await TestRoles.with(["pushq_worker_t"]) { roles in
            try await TestDatabase.withConnection { db in
                try await db.grant(.worker, to: roles[0])
                try await db.grant(.worker, to: roles[0])
                let can = try await db.query("""
                    SELECT has_table_privilege($1, 'pushq.notifications', 'UPDATE'), has_table_privilege($1, 'pushq.api_keys', 'SELECT'),
                           has_table_privilege($1, 'pushq.notifications', 'INSERT')
                    """, [roles[0]])
                #expect(can.string(0, 0) == "t" && can.string(0, 1) == "f" && can.string(0, 2) == "f")
                do {
                    try await db.grant(.serve, to: "pushq_nobody_\(roles[0])")
                    Issue.record("granted to a role that does not exist")
                } catch let error as PGError {
                    #expect(error.sqlState == "42704" && "\(error)".contains("pushq_nobody_"), "\(error)")
                }
            }
        }
    }
}
