import ArgumentParser
import GQLNet
import GQLServices

extension AuthOptions {
    /// The authorization provider of `gql-cli query|mutate|subscribe --auth`: the signed-in user's access token
    /// from the token file (`tokenFile`, or where `gql-cli auth` keeps it), refreshed as GQLAuth does.
    ///
    /// - Throws: a usage error when nobody has signed in with `gql-cli auth signin` (no tenant remembered, or no
    ///   tokens).
    static func authorization(tokenFile: String?) throws -> GQLServer.AuthorizationProvider {
        let options = try AuthOptions.parse(tokenFile.map { ["--token-file", $0] } ?? [])
        let auth = try options.auth().0
        guard auth.isSignedIn else {
            throw ValidationError("--auth: nobody is signed in; run gql-cli auth signin first")
        }
        return auth.authorization
    }
}
