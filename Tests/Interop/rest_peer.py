"""A JSON web service for the GQLREST tests, on Python's standard http.server: every request is answered with what
arrived (method, path, raw query, parsed query, headers, the body decoded by its content type), so a test sees the
request exactly as a server parses it. `/status/<code>` answers that status with an Auth0-style error body
(`error`, `error_description`); `/text` answers a body that is not JSON. Prints `READY http://127.0.0.1:PORT` and
serves until its standard input closes."""
import json
import sys
import threading
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, payload, content_type="application/json"):
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if parts.path.startswith("/status/"):
            status = int(parts.path.rsplit("/", 1)[1])
            return self.answer(status, {"error": "invalid_grant", "error_description": "Wrong email or password."})
        if parts.path == "/text":
            return self.answer(200, b"plain text, not JSON", "text/plain")
        content_type = self.headers.get("Content-Type", "")
        body = None
        if content_type.startswith("application/json"):
            body = json.loads(raw)
        elif content_type.startswith("application/x-www-form-urlencoded"):
            body = {k: v for k, v in parse_qs(raw.decode(), keep_blank_values=True).items()}
        elif content_type.startswith("multipart/form-data"):
            message = BytesParser(policy=HTTP).parsebytes(
                b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw
            )
            body = {}
            for part in message.iter_parts():
                name = part.get_param("name", header="content-disposition")
                data = part.get_payload(decode=True) or b""
                filename = part.get_filename()
                body[name] = (
                    {"filename": filename, "type": part.get_content_type(), "hex": data.hex()}
                    if filename
                    else data.decode()
                )
        self.answer(
            200,
            {
                "method": self.command,
                "path": parts.path,
                "rawQuery": parts.query,
                "query": {k: v for k, v in parse_qs(parts.query, keep_blank_values=True).items()},
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body,
            },
        )

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"READY http://127.0.0.1:{server.server_address[1]}", flush=True)
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
