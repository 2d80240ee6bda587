"""What the http.server test peers share: serve a handler on a free loopback port, announce it with
`READY http://127.0.0.1:PORT`, and stop when standard input closes (how GQLTestSupport's PythonPeer ends a peer)."""
import sys
import threading
from http.server import ThreadingHTTPServer


def serve_until_stdin_closes(handler) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # serve_forever notices shutdown() only between polls: at its default 0.5 s, every peer's stop waited up to
    # that long (a few hundred peers start in `make test`).
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    print(f"READY http://127.0.0.1:{server.server_address[1]}", flush=True)
    sys.stdin.read()
    server.shutdown()
