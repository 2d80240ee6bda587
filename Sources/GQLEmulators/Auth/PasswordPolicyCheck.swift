import GQLCore

/// Checks a password against a ``GQLAuthEmulator/PasswordPolicy`` and says why it fails in Auth0's
/// `PasswordStrengthError` shape: the rules with `verified` for each, and the policy as text.
struct PasswordPolicyCheck {
    let policy: GQLAuthEmulator.PasswordPolicy

    /// The error body for `password`, or nil when it meets the policy.
    func refusal(_ password: String) -> GQLValues? {
        let characters = Array(password)
        var rules: [GQLValue] = []
        var lines: [String] = []
        var passed = true

        func rule(_ message: String, _ code: String, format: [Int64], verified: Bool, items: [GQLValue]? = nil) {
            var entry: GQLValues = [
                "message": .string(message), "code": .string(code),
                "format": .array(format.map { .int($0) }), "verified": .bool(verified),
            ]
            if let items { entry["items"] = .array(items) }
            rules.append(.object(entry))
            passed = passed && verified
        }

        let minimum: Int64 =
            switch policy {
            case .none: 1
            case .low: 6
            case .fair, .good: 8
            case .excellent: 10
            }
        rule(
            "At least %d characters in length", "lengthAtLeast", format: [minimum],
            verified: characters.count >= minimum)
        lines.append("* At least \(minimum) characters in length")

        let kinds: [(String, String, (Character) -> Bool)] = [
            ("lower case letters (a-z)", "lowerCase", { $0.isLowercase }),
            ("upper case letters (A-Z)", "upperCase", { $0.isUppercase }),
            ("numbers (i.e. 0-9)", "numbers", { $0.isNumber }),
            ("special characters (e.g. !@#$%^&*)", "specialCharacters", { !$0.isLetter && !$0.isNumber }),
        ]
        let present = kinds.map { kind in characters.contains(where: kind.2) }
        switch policy {
        case .none, .low:
            break
        case .fair:
            // Lower case, upper case and numbers, each required.
            let items = kinds.prefix(3).enumerated().map { index, kind in
                GQLValue.object(
                    ["message": .string(kind.0), "code": .string(kind.1), "verified": .bool(present[index])])
            }
            rule(
                "Should contain:", "shouldContain", format: [], verified: present.prefix(3).allSatisfy { $0 },
                items: items)
            lines.append("* Should contain:")
            lines += kinds.prefix(3).map { "  * \($0.0)" }
        case .good, .excellent:
            let items = kinds.enumerated().map { index, kind in
                GQLValue.object(
                    ["message": .string(kind.0), "code": .string(kind.1), "verified": .bool(present[index])])
            }
            rule(
                "Contain at least %d of the following %d types of characters:", "containsAtLeast", format: [3, 4],
                verified: present.filter { $0 }.count >= 3, items: items)
            lines.append("* Contain at least 3 of the following 4 types of characters:")
            lines += kinds.map { "  * \($0.0)" }
        }
        if policy == .excellent {
            var longestRun = characters.isEmpty ? 0 : 1
            var run = 1
            for index in characters.indices.dropFirst() {
                run = characters[index] == characters[index - 1] ? run + 1 : 1
                longestRun = max(longestRun, run)
            }
            rule(
                "No more than %d identical characters in a row (e.g., \"aaa\" not allowed)", "identicalChars",
                format: [2], verified: longestRun <= 2)
            lines.append("* No more than 2 identical characters in a row (e.g., \"aaa\" not allowed)")
        }
        guard !passed else { return nil }
        return [
            "name": "PasswordStrengthError", "message": "Password is too weak", "code": "invalid_password",
            "description": ["rules": .array(rules), "verified": false],
            "policy": .string(lines.joined(separator: "\n")), "statusCode": 400,
        ]
    }
}
