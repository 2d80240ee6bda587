import ArgumentParser

@main
struct GQLCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gql-cli",
        abstract: "Drives every GraphQLite layer from a shell.",
        subcommands: []
    )
}
