import GQLStore

extension DemoCommand {
    /// The demo's object, as the product's README defines it.
    struct User: GQLObject {
        var userId = 0
        var name = ""
        var age = 0
        var approved = false
        var nickname: String? = nil

        static func primaryKey() -> String { "userId" }
        static func tableName() -> String { "User" }

        init() {}

        init(_ userId: Int, _ name: String, age: Int, nickname: String? = nil) {
            self.userId = userId
            self.name = name
            self.age = age
            self.nickname = nickname
        }

        var summary: String {
            "\(userId) \(name), \(age)\(approved ? ", approved" : "")\(nickname.map { ", \"\($0)\"" } ?? "")"
        }
    }

    /// The same table in a later version of the app: one more property, so opening adds its column.
    struct UserV2: GQLObject {
        var userId = 0
        var name = ""
        var age = 0
        var approved = false
        var nickname: String? = nil
        var email = "unknown@example.com"

        static func primaryKey() -> String { "userId" }
        static func tableName() -> String { "User" }
    }
}
