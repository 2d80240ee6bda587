/// The help text `query`, `mutate` and `subscribe` share.
enum ClientHelp {
    static let transport = """
        With --url, the operation is posted over HTTP; with only --ws-url it travels on the WebSocket \
        (--protocol). --appsync-key makes an AWS AppSync client (x-api-key; real-time URL derived from --url \
        unless --ws-url is given; with --protocol appsync the --header pairs are the real-time authorization), \
        --hasura-secret a Hasura one (x-hasura-admin-secret). --url is http(s) (or ws(s), then it is the \
        WebSocket endpoint), --ws-url ws(s) or http(s), without a user name or password.
        """

    /// The exit statuses, the one place that describes them (``ClientFailure`` produces them).
    static func exitStatus(subscribing: Bool) -> String {
        let outcomes =
            subscribing
            ? "0 as above; 2 when the server refuses the subscription with GraphQL errors (events that carry "
                + "errors are printed and do not change it); 1 when the connection fails or is lost for good"
            : "0 for a response without errors; 2 when the response has GraphQL errors (it is still printed, a "
                + "summary goes to standard error); 1 when there is no response (unreachable server, refused "
                + "credentials, timeout); 130 or 143 when SIGINT or SIGTERM interrupted it"
        return "Exit status: \(outcomes); 64 for bad options (including an operation that does not parse or is not "
            + "of the command's kind). Keys, secrets and credential headers never appear in messages."
    }

    static func operationDiscussion(example: String) -> String {
        """
        Prints the response object, {"data": …, "errors": […]} (errors only when there are some), as one line of \
        JSON, or indented with --pretty. \(transport)

        \(exitStatus(subscribing: false))

        Example: \(example)
        """
    }
}
