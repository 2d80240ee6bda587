"""A OneSignal REST API v1 stand-in for the GQLPush tests, on Python's standard http.server: the endpoints GQLPush
uses, with OneSignal's documented request and answer shapes and its checks, and a record of every request.

- POST /api/v1/players — add a device: `app_id` (a known app), `device_type` (an integer), `identifier` (the push
  token); answers `{"success": true, "id": <player id>}`, the same id again for a token already known. An
  `external_user_id` may come with it (then checked like an edit).
- PUT /api/v1/players/<id> — edit a device: `app_id`, `external_user_id` ("" removes it); with identity
  verification on (`--identity-verification`), `external_user_id_auth_hash` must be hex(HMAC-SHA256(REST API key,
  external_user_id)) for a non-empty id; answers `{"success": true}`.
- POST /api/v1/notifications — needs `Authorization: Basic <REST API key>`; `app_id`, `contents` with `en`,
  `include_external_user_ids` (at most 2,000); answers `{"id", "recipients", "external_id": null}`, with
  `"errors": {"invalid_external_user_ids": [...]}` when some ids have no device, and — still HTTP 200, as OneSignal
  does — `{"id": "", "recipients": 0, "errors": ["All included players are not subscribed"]}` when none has.
- Errors are `{"errors": ["…"]}` with HTTP 400 (403 for a wrong REST API key), as OneSignal answers them.
- GET /_requests — the requests received so far (method, path, headers, JSON body), for the tests.

Arguments: APP_ID REST_KEY [--identity-verification]. Prints `READY http://127.0.0.1:PORT` and serves until its
standard input closes."""
import hashlib
import hmac
import json
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from http_peer import serve_until_stdin_closes

APP_ID, REST_KEY = sys.argv[1], sys.argv[2]
IDENTITY_VERIFICATION = "--identity-verification" in sys.argv[3:]
LOCK = threading.Lock()
REQUESTS = []
PLAYERS = {}  # player id -> {"identifier": …, "external_user_id": …, "device_type": …}


class Refusal(Exception):
    def __init__(self, message, status=400):
        super().__init__(message)
        self.status = status


def check_app(body):
    if not isinstance(body, dict):
        raise Refusal("Body must be a JSON object. You may be missing a Content-Type: application/json header.")
    if body.get("app_id") != APP_ID:
        raise Refusal("app_id not found. You may be missing a Content-Type: application/json header.")


def check_external_user_id(body):
    external = body.get("external_user_id")
    if external is None:
        return None
    if not isinstance(external, str):
        raise Refusal("external_user_id must be a string")
    if IDENTITY_VERIFICATION and external != "":
        expected = hmac.new(REST_KEY.encode(), external.encode(), hashlib.sha256).hexdigest()
        given = body.get("external_user_id_auth_hash")
        if not isinstance(given, str) or not hmac.compare_digest(given, expected):
            raise Refusal("External user id auth hash is invalid or missing (identity verification is required)")
    return external


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, payload):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        path = urlsplit(self.path).path
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if path == "/_requests":
            with LOCK:
                return self.answer(200, REQUESTS)
        body = None
        if raw:
            if not self.headers.get("Content-Type", "").startswith("application/json"):
                return self.answer(400, {"errors": ["Content-Type must be application/json"]})
            try:
                body = json.loads(raw)
            except ValueError:
                return self.answer(400, {"errors": ["Body is not valid JSON"]})
        with LOCK:
            REQUESTS.append(
                {
                    "method": self.command,
                    "path": path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": body,
                }
            )
        try:
            status, payload = self.route(path, body)
        except Refusal as refusal:
            status, payload = refusal.status, {"errors": [str(refusal)]}
        self.answer(status, payload)

    def route(self, path, body):
        if self.command == "POST" and path == "/api/v1/players":
            return self.add_player(body)
        if self.command == "PUT" and path.startswith("/api/v1/players/"):
            return self.edit_player(path.rsplit("/", 1)[1], body)
        if self.command == "POST" and path == "/api/v1/notifications":
            return self.notify(body)
        return 404, {"errors": [f"No route for {self.command} {path}"]}

    def add_player(self, body):
        check_app(body)
        if not isinstance(body.get("device_type"), int):
            raise Refusal("device_type is required and must be an integer")
        identifier = body.get("identifier")
        if identifier is not None and not isinstance(identifier, str):
            raise Refusal("identifier must be a string")
        external = check_external_user_id(body)
        with LOCK:
            player = next((k for k, v in PLAYERS.items() if identifier and v["identifier"] == identifier), None)
            player = player or str(uuid.uuid4())
            record = PLAYERS.setdefault(player, {"identifier": identifier, "external_user_id": None})
            record["device_type"] = body["device_type"]
            if external is not None:
                record["external_user_id"] = external or None
        return 200, {"success": True, "id": player}

    def edit_player(self, player, body):
        check_app(body)
        external = check_external_user_id(body)
        with LOCK:
            if player not in PLAYERS:
                raise Refusal(f"No user with this id found: {player}")
            if external is not None:
                PLAYERS[player]["external_user_id"] = external or None
        return 200, {"success": True}

    def notify(self, body):
        if self.headers.get("Authorization") != f"Basic {REST_KEY}":
            raise Refusal(
                "Please include a case-sensitive header of Authorization: Basic <YOUR-REST-API-KEY-HERE> with a "
                "valid REST API key.",
                403,
            )
        check_app(body)
        contents = body.get("contents")
        if not isinstance(contents, dict) or not isinstance(contents.get("en"), str):
            raise Refusal("Notification contents for each language must be a string; English (en) is required")
        ids = body.get("include_external_user_ids")
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
            raise Refusal("include_external_user_ids must be a non-empty array of strings")
        if len(ids) > 2000:
            raise Refusal("include_external_user_ids is limited to 2000 entries per request")
        if "data" in body and not isinstance(body["data"], dict):
            raise Refusal("data must be a JSON object")
        with LOCK:
            known = {v["external_user_id"] for v in PLAYERS.values() if v["external_user_id"]}
        invalid = [i for i in ids if i not in known]
        recipients = len(ids) - len(invalid)
        if recipients == 0:
            return 200, {"id": "", "recipients": 0, "external_id": None,
                         "errors": ["All included players are not subscribed"]}
        answer = {"id": str(uuid.uuid4()), "recipients": recipients, "external_id": None}
        if invalid:
            answer["errors"] = {"invalid_external_user_ids": invalid}
        return 200, answer

    do_GET = do_POST = do_PUT = handle_any


if __name__ == "__main__":
    serve_until_stdin_closes(Handler)
