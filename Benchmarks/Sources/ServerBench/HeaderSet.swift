/// The header lines a throughput row's requests carry besides wrk's own (`Host`, `Content-Length`) and
/// `Content-Type: application/json`: wrk's bare request, a Python `requests` session's, a browser page's.
enum HeaderSet: String, CaseIterable, Sendable {
    /// wrk's request as it is: no header but the three above.
    case bare
    /// A `requests.Session().post(url, json=…)` of requests 2.32.
    case python
    /// A `fetch(url, {method: "POST", headers: {"Content-Type": "application/json"}, …})` from a page of
    /// ``origin`` in Chrome 131, which GQLDevServer allows (`--allowed-origin`).
    case browser

    /// The page origin of the browser's requests.
    static let origin = "http://app.example"

    /// The names `--headers` takes.
    static let allNames = Set(allCases.map(\.rawValue))

    var lines: [(name: String, value: String)] {
        switch self {
        case .bare:
            return []
        case .python:
            return [
                ("User-Agent", "python-requests/2.32.3"), ("Accept-Encoding", "gzip, deflate"), ("Accept", "*/*"),
                ("Connection", "keep-alive"),
            ]
        case .browser:
            return [
                ("Connection", "keep-alive"), ("sec-ch-ua-platform", "\"Linux\""),
                (
                    "User-Agent",
                    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
                ),
                ("sec-ch-ua", "\"Chromium\";v=\"131\", \"Not_A Brand\";v=\"24\""), ("sec-ch-ua-mobile", "?0"),
                ("Accept", "*/*"), ("Origin", Self.origin), ("Sec-Fetch-Site", "cross-site"),
                ("Sec-Fetch-Mode", "cors"), ("Sec-Fetch-Dest", "empty"), ("Referer", Self.origin + "/"),
                ("Accept-Encoding", "gzip, deflate, br, zstd"), ("Accept-Language", "en-US,en;q=0.9"),
            ]
        }
    }

    /// How a row names the set.
    var label: String {
        switch self {
        case .bare: "bare"
        case .python: "Python requests headers"
        case .browser: "browser headers, allowed origin"
        }
    }

    /// Lua that adds the set's lines to every request wrk sends.
    var lua: String {
        lines.map { "wrk.headers[\(WrkLoad.lua($0.name))] = \(WrkLoad.lua($0.value))\n" }.joined()
    }
}
