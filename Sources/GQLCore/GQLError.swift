/// The error every GraphQLite layer throws: a code to act on, a message for people, and the context
/// (SQL, table, column, operation, HTTP status) the failure happened in.
///
/// ```swift
/// do {
///     try db.execute("DELETE FROM Nope")
/// } catch let error as GQLError where error.code == .sqlite {
///     print(error.message, error.sql ?? "")
/// }
/// // or match the code directly:
/// catch GQLError.Code.unknownTable { ... }
/// ```
public struct GQLError: Error, Sendable, Hashable {
    /// What went wrong, as a value a caller can branch on.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        /// A code named by a module of the toolkit. Modules above GQLCore add their own codes
        /// (`static let signature = GQLError.Code("signature")` in an extension); two codes are equal when
        /// their names are, so a name must be unique across the toolkit.
        package init(_ name: String) { self.name = name }
        public var description: String { name }

        /// Text that is not valid JSON.
        public static let invalidJSON = Code("invalidJSON")
        /// A value that cannot be stored or sent (NaN, infinity, an unsupported type).
        public static let invalidValue = Code("invalidValue")
        /// An argument the caller passed is not usable (empty name, missing key, bad option).
        public static let invalidArgument = Code("invalidArgument")
        /// A value could not be encoded into a row or a request.
        public static let encoding = Code("encoding")
        /// A row or a response could not be decoded into the requested type.
        public static let decoding = Code("decoding")
        /// SQLite refused a statement; `sqliteCode`, `sql` and the message say why.
        public static let sqlite = Code("sqlite")
        /// A table name that is neither registered nor present in the database file.
        public static let unknownTable = Code("unknownTable")
        /// An observer condition that SQLite cannot compile.
        public static let invalidCondition = Code("invalidCondition")
        /// The row to update does not exist; nothing was written.
        public static let notFound = Code("notFound")
        /// A type or table without a usable primary key.
        public static let missingPrimaryKey = Code("missingPrimaryKey")
        /// The database file was written by a newer schema version than the code knows.
        public static let downgradeAttempt = Code("downgradeAttempt")
        /// A migration step threw; the file stays at the previous version.
        public static let migrationFailed = Code("migrationFailed")
        /// A write was started from inside another write on the same database; use the transaction.
        public static let nestedWrite = Code("nestedWrite")
        /// The database or connection was closed.
        public static let closed = Code("closed")
        /// A file or directory could not be created or opened.
        public static let io = Code("io")
        /// A server answered with a non-2xx HTTP status; ``GQLError/httpStatus`` holds it.
        public static let http = Code("http")
        /// A request did not complete within its timeout.
        public static let timeout = Code("timeout")
        /// The task waiting for a request was cancelled.
        public static let cancelled = Code("cancelled")
        /// A server's answer was not the JSON a GraphQL response must be.
        public static let invalidResponse = Code("invalidResponse")
        /// A server's answer was larger than the configured maximum.
        public static let responseTooLarge = Code("responseTooLarge")
        /// A server answered with a redirect, which the toolkit never follows (the request carried credentials that
        /// must not reach another origin); the message names the target without its query or user info.
        public static let redirect = Code("redirect")
        /// A server refused the credentials of a connection (WebSocket close 4401/4403, `connection_error`).
        public static let unauthorized = Code("unauthorized")
        /// A connection was lost or could not be made; reconnecting may help.
        public static let connection = Code("connection")
        /// A cryptographic operation failed: a malformed key or signature, or libcrypto out of memory.
        public static let crypto = Code("crypto")
        /// The key does not open an encrypted file (a GQLStore database, GQLAuth's token file); the file was not
        /// changed.
        public static let wrongKey = Code("wrongKey")
        /// An encrypted file failed authentication: it was altered or damaged on disk. For a database the message
        /// names the page and the file (database, WAL or journal); no unauthenticated byte was returned.
        public static let corrupt = Code("corrupt")
        /// The file is encrypted and was opened without a key.
        public static let keyRequired = Code("keyRequired")
        /// The file is not encrypted (a plain SQLite database, a plain token file) and was opened with a key.
        public static let notEncrypted = Code("notEncrypted")
        /// The file is in a format this version cannot read: an encrypted GQLStore database written by a development
        /// build before its first release (pages under the key itself, not under a key of their own per file). The
        /// file was not changed.
        public static let unsupportedFormat = Code("unsupportedFormat")
    }

    /// What went wrong.
    public var code: Code
    /// A sentence for people: what failed and where.
    public var message: String
    /// The SQL statement involved, if any.
    public var sql: String?
    /// The table involved, if any.
    public var table: String?
    /// The column involved, if any.
    public var column: String?
    /// The operation involved (a verb such as `insert`, a migration step, a GraphQL operation name).
    public var operation: String?
    /// The HTTP status involved, if any.
    public var httpStatus: Int?
    /// SQLite's extended result code, for `.sqlite` errors.
    public var sqliteCode: Int32?
    /// A web service's own name for the failure (S3's `NoSuchKey`, Auth0's `invalid_grant` …), if it gave one.
    public var serviceCode: String?
    /// The id a web service gave the failed request (S3's `RequestId`), for its support.
    public var requestId: String?
    /// How long the server asked the client to wait before trying again (HTTP `Retry-After` on a 429 or 503), when
    /// it asked in a form that can be read.
    public var retryAfter: Duration?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, sql: String? = nil, table: String? = nil, column: String? = nil,
        operation: String? = nil, httpStatus: Int? = nil, sqliteCode: Int32? = nil, serviceCode: String? = nil,
        requestId: String? = nil
    ) {
        self.code = code
        self.message = message
        self.sql = sql
        self.table = table
        self.column = column
        self.operation = operation
        self.httpStatus = httpStatus
        self.sqliteCode = sqliteCode
        self.serviceCode = serviceCode
        self.requestId = requestId
    }
}

extension GQLError: CustomStringConvertible {
    public var description: String {
        var text = "GQLError.\(code): \(message)"
        if let operation { text += " [operation: \(operation)]" }
        if let table { text += " [table: \(table)]" }
        if let column { text += " [column: \(column)]" }
        if let httpStatus { text += " [HTTP \(httpStatus)]" }
        if let sqliteCode { text += " [SQLite code \(sqliteCode)]" }
        if let serviceCode { text += " [service code: \(serviceCode)]" }
        if let requestId { text += " [request id: \(requestId)]" }
        if let retryAfter { text += " [retry after \(retryAfter)]" }
        if let sql { text += " [SQL: \(sql)]" }
        return text
    }
}

extension GQLError.Code {
    /// Lets `catch GQLError.Code.unknownTable { }` match a thrown ``GQLError`` by its code.
    public static func ~= (code: GQLError.Code, error: any Error) -> Bool {
        (error as? GQLError)?.code == code
    }
}
