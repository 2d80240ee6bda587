/// The help text `query`, `mutate` and `subscribe` share.
enum ClientHelp {
    static let transport = """
        With --url, the operation is posted over HTTP; with only --ws-url it travels on the WebSocket \
        (--protocol). --appsync-key makes an AWS AppSync client (x-api-key; real-time URL derived from --url \
        unless --ws-url is given), --hasura-secret a Hasura one (x-hasura-admin-secret).
        """

    static let exitStatus = """
        Exit status: 0 for a response without errors; 2 when the response has GraphQL errors (it is still \
        printed, a summary goes to standard error); 1 when there is no response (unreachable server, refused \
        credentials, timeout); 64 for bad options. Keys, secrets and header values never appear in messages.
        """

    static func operationDiscussion(example: String) -> String {
        """
        Prints the response object, {"data": …, "errors": […]} (errors only when there are some), as one line of \
        JSON, or indented with --pretty. \(transport)

        \(exitStatus)

        Example: \(example)
        """
    }
}
