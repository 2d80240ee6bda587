"""A OneSignal stand-in for the GQLPush tests, on Python's standard http.server: the endpoints GQLPush uses, with the
request shapes, required fields, authorization and answers OneSignal documents, and a record of every request.
Written from these pages (read 2026-11-28):

- Keys and the Authorization header: https://documentation.onesignal.com/docs/keys-and-ids ("Authorization: Key
  YOUR_REST_API_KEY"; the page spells the scheme `Key` and `key`, and auth schemes are case-insensitive, RFC 9110
  §11.1, so either is accepted); legacy keys: https://documentation.onesignal.com/v7.0/docs/accounts-and-keys
  ("Basic REST_API_KEY").
- Notifications: https://documentation.onesignal.com/reference/push-notification (POST /notifications?c=push,
  `include_aliases` with `target_channel`, `included_segments`/`excluded_segments`, `filters`, one targeting mode per
  request, 2,000 ids a call) and https://documentation.onesignal.com/reference/create-message. The 200 answer is
  `{"id", "external_id", "errors"?}`: no `recipients`; an empty `id` means no notification was made.
- Users and subscriptions: https://documentation.onesignal.com/reference/create-user (POST /apps/{app_id}/users: at
  least one alias or subscription, at most 20 subscriptions; a (type, token) that exists moves to this user),
  https://documentation.onesignal.com/reference/create-subscription (POST /apps/{app_id}/users/by/{label}/{id}/
  subscriptions, `Authorization: Key`; 201 created, 202 moved here, 200 already here),
  https://documentation.onesignal.com/reference/update-subscription (PATCH …/subscriptions/{id}, the type cannot
  change; 202), https://documentation.onesignal.com/reference/delete-subscription (DELETE …/subscriptions/{id}; 202),
  https://documentation.onesignal.com/reference/transfer-subscription (PATCH …/subscriptions/{id}/owner with one
  alias in `identity`).
- Identity verification: https://documentation.onesignal.com/docs/identity-verification (a JWT signed with ES256 by
  the app's server, claims `iss` = app id, `exp`, `identity`, and `subscriptions` for email and SMS; sent as
  `Authorization: Bearer <JWT>`; it guards logging a user in, adding email and SMS subscriptions and changing
  aliases).
- v1 (`--v1`): https://documentation.onesignal.com/reference/add-a-device, /reference/edit-device and
  https://documentation.onesignal.com/v7.0/reference/create-notification (players, `include_external_user_ids`,
  `external_user_id_auth_hash` = hex(HMAC-SHA256(REST API key, external_user_id)), `recipients` in the answer).

Where the pages are silent the stand-in picks and says so here: a request to a user endpoint that carries an
Authorization header must carry a valid one (App API key or, with verification on, a valid identity JWT), and one
without any is served as the create/update/delete pages show (no header) unless identity verification guards it;
a transfer to an external id no user has yet makes that user; a create-user request without aliases whose
subscription exists names that subscription's user (the page counts a subscription as a user identifier), so it
is answered with that user, unchanged; error bodies of today's API are
`{"errors": [{"code", "title"}]}` with 400 (bad request), 401 (identity), 403 (key), 404 (unknown id).

Arguments: APP_ID REST_KEY [--v1] [--identity-verification[=PUBLIC_KEY_PEM_FILE]]. Without --v1 it serves today's
API only, with it v1 only. Identity verification is the v1 hash with --v1, else the ES256 JWT checked against the
public key in the file. GET /_requests answers the requests so far; POST /_refuse_next with `{"method", "status"}`
makes the next request with that method fail with that status (a test's switch for a failing OneSignal). Prints `READY http://127.0.0.1:PORT` and serves
until its standard input closes."""
import hashlib
import hmac
import json
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, unquote, urlsplit

from http_peer import serve_until_stdin_closes

APP_ID, REST_KEY = sys.argv[1], sys.argv[2]
FLAGS = sys.argv[3:]
V1 = "--v1" in FLAGS
VERIFY = next((f for f in FLAGS if f.startswith("--identity-verification")), None)
PUBLIC_KEY = None
if VERIFY and "=" in VERIFY:
    with open(VERIFY.split("=", 1)[1]) as file:
        PUBLIC_KEY = file.read()
LOCK = threading.Lock()
REQUESTS = []
REFUSE_NEXT = []  # [(method, status)], set by POST /_refuse_next
PLAYERS = {}  # v1: player id -> {"identifier", "external_user_id", "device_type"}
USERS = {}  # onesignal_id -> {"aliases": {label: id}, "properties": {}}
SUBSCRIPTIONS = {}  # subscription id -> {"type", "token", "enabled", "owner", …}
TYPES = {"iOSPush", "AndroidPush", "FireOSPush", "ChromeExtensionPush", "ChromePush", "WindowsPush",
         "SafariLegacyPush", "FirefoxPush", "macOSPush", "HuaweiPush", "SafariPush", "Email", "SMS"}
CHANNEL_TYPES = {"push": TYPES - {"Email", "SMS"}, "email": {"Email"}, "sms": {"SMS"}}
TARGETING = ["include_aliases", "include_subscription_ids", "included_segments", "filters",
             "include_external_user_ids", "include_player_ids"]


class Refusal(Exception):
    def __init__(self, message, status=400, code="invalid_request"):
        super().__init__(message)
        self.status, self.code = status, code


def scheme_and_value(header):
    scheme, _, value = (header or "").partition(" ")
    return scheme.lower(), value.strip()


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
        url = urlsplit(self.path)
        path, query = url.path, parse_qs(url.query)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if path == "/_requests":
            with LOCK:
                return self.answer(200, REQUESTS)
        body = None
        if raw:
            if not self.headers.get("Content-Type", "").startswith("application/json"):
                return self.refuse(Refusal("Content-Type must be application/json"))
            try:
                body = json.loads(raw)
            except ValueError:
                return self.refuse(Refusal("Body is not valid JSON"))
        if path == "/_refuse_next" and isinstance(body, dict):
            with LOCK:
                REFUSE_NEXT.append((body.get("method"), int(body.get("status", 503))))
            return self.answer(200, {})
        with LOCK:
            REQUESTS.append({"method": self.command, "path": path, "query": url.query,
                             "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
            refused = next((r for r in REFUSE_NEXT if r[0] == self.command), None)
            if refused:
                REFUSE_NEXT.remove(refused)
        if refused:
            return self.refuse(Refusal("Service unavailable (the test asked for it)", refused[1], "unavailable"))
        try:
            status, payload = self.route_v1(path, body) if V1 else self.route(path, query, body)
        except Refusal as refusal:
            return self.refuse(refusal)
        self.answer(status, payload)

    def refuse(self, refusal):
        if V1:
            return self.answer(refusal.status, {"errors": [str(refusal)]})
        self.answer(refusal.status, {"errors": [{"code": refusal.code, "title": str(refusal)}]})

    # MARK: today's API

    def route(self, path, query, body):
        parts = [unquote(p) for p in path.strip("/").split("/")]
        if self.command == "POST" and parts == ["notifications"]:
            return self.notify(query.get("c", [None])[0], body)
        if len(parts) < 3 or parts[0] != "apps":
            raise Refusal(f"No route for {self.command} {path}", 404, "not_found")
        if parts[1] != APP_ID:
            raise Refusal("App not found", 404, "app-not-found")
        rest = parts[2:]
        if self.command == "POST" and rest == ["users"]:
            return self.create_user(self.json_object(body))
        if self.command == "POST" and len(rest) == 5 and rest[:2] == ["users", "by"] and rest[4] == "subscriptions":
            return self.add_subscription(rest[2], rest[3], self.json_object(body))
        if rest[0] == "subscriptions" and len(rest) == 2 and self.command in ("PATCH", "DELETE"):
            return self.edit_subscription(rest[1], body)
        if rest[0] == "subscriptions" and len(rest) == 3 and rest[2] == "owner" and self.command == "PATCH":
            return self.transfer(rest[1], self.json_object(body))
        raise Refusal(f"No route for {self.command} {path}", 404, "not_found")

    @staticmethod
    def json_object(body):
        if not isinstance(body, dict):
            raise Refusal("The body must be a JSON object")
        return body

    def check_key(self, required):
        """The App API key in `Authorization: Key …`; `required` refuses a request without one."""
        scheme, value = scheme_and_value(self.headers.get("Authorization"))
        if scheme == "key" and hmac.compare_digest(value, REST_KEY):
            return True
        if scheme or required:
            raise Refusal("Access denied: give a valid App API key as 'Authorization: Key <key>'", 403, "forbidden")
        return False

    def check_identity(self, external_id, contact_tokens):
        """Identity verification: a change to who the user is, or an email or SMS subscription added, needs the App
        API key or a valid identity JWT for that user (whose `subscriptions` claim names the tokens)."""
        scheme, value = scheme_and_value(self.headers.get("Authorization"))
        if scheme == "bearer" and PUBLIC_KEY:
            import jwt  # PyJWT, pinned in requirements.txt

            try:
                claims = jwt.decode(value, PUBLIC_KEY, algorithms=["ES256"], issuer=APP_ID,
                                    options={"require": ["exp", "iss", "identity"]})
            except jwt.PyJWTError as error:
                raise Refusal(f"The identity token is not valid: {type(error).__name__}", 401, "unauthorized")
            if external_id is not None and claims["identity"].get("external_id") != external_id:
                raise Refusal("The identity token is for another user", 401, "unauthorized")
            allowed = {(s.get("type"), s.get("token")) for s in claims.get("subscriptions") or []}
            if any(t not in allowed for t in contact_tokens):
                raise Refusal("The identity token does not name this email or SMS subscription", 401, "unauthorized")
            return
        if self.check_key(required=False):
            return
        if PUBLIC_KEY and (external_id is not None or contact_tokens):
            raise Refusal("Identity verification is on: give 'Authorization: Bearer <identity JWT>'", 401,
                          "unauthorized")

    @staticmethod
    def subscription_fields(sub):
        if not isinstance(sub, dict) or sub.get("type") not in TYPES:
            raise Refusal(f"A subscription needs a type, one of {', '.join(sorted(TYPES))}")
        if "token" in sub and not isinstance(sub["token"], str):
            raise Refusal("A subscription token must be a string")
        if "enabled" in sub and not isinstance(sub["enabled"], bool):
            raise Refusal("enabled must be a boolean")
        return sub

    def find_user(self, label, alias):
        return next((oid for oid, u in USERS.items() if u["aliases"].get(label) == alias), None)

    def view(self, oid, only=None):
        user = USERS[oid]
        subs = [dict(s, id=sid) for sid, s in SUBSCRIPTIONS.items() if s["owner"] == oid and (only is None or sid in only)]
        for s in subs:
            s.pop("owner", None)
        return {"identity": dict(user["aliases"], onesignal_id=oid), "properties": user["properties"],
                "subscriptions": subs}

    def place(self, sub, oid):
        """Adds or moves the (type, token) subscription to `oid`: (status, id)."""
        token = sub.get("token")
        found = next((sid for sid, s in SUBSCRIPTIONS.items() if token and (s["type"], s["token"]) == (sub["type"], token)),
                     None)
        fields = {k: v for k, v in sub.items() if k not in ("id", "owner")}
        if found is None:
            sid = str(uuid.uuid4())
            SUBSCRIPTIONS[sid] = dict({"enabled": True}, **fields, owner=oid)
            return 201, sid
        moved = SUBSCRIPTIONS[found]["owner"] != oid
        SUBSCRIPTIONS[found].update(fields, owner=oid)
        return (202 if moved else 200), found

    def create_user(self, body):
        identity = body.get("identity") or {}
        subs = body.get("subscriptions") or []
        if not isinstance(identity, dict) or not all(isinstance(k, str) and isinstance(v, str) and k and v
                                                     for k, v in identity.items()):
            raise Refusal("identity must map alias labels to alias ids (non-empty strings)")
        if "onesignal_id" in identity and len(identity) == 1:
            raise Refusal("onesignal_id is read-only: give another alias to create a user")
        if not isinstance(subs, list) or len(subs) > 20:
            raise Refusal("subscriptions must be an array of at most 20")
        subs = [self.subscription_fields(s) for s in subs]
        if not identity and not subs:
            raise Refusal("Give at least one alias or one subscription")
        if "properties" in body and not isinstance(body["properties"], dict):
            raise Refusal("properties must be an object")
        contacts = [(s["type"], s.get("token")) for s in subs if s["type"] in ("Email", "SMS")]
        self.check_identity(identity.get("external_id") if identity else None, contacts)
        with LOCK:
            oid = next((self.find_user(k, v) for k, v in identity.items() if self.find_user(k, v)), None)
            if not identity:  # the subscription is the user identifier: its owner, if it exists
                oid = next((s["owner"] for s in SUBSCRIPTIONS.values() for sub in subs
                            if sub.get("token") and (s["type"], s["token"]) == (sub["type"], sub["token"])), None)
            status = 200 if oid else 201
            if oid is None:
                oid = str(uuid.uuid4())
                USERS[oid] = {"aliases": {}, "properties": {}}
            USERS[oid]["aliases"].update({k: v for k, v in identity.items() if k != "onesignal_id"})
            USERS[oid]["properties"].update(body.get("properties") or {})
            for sub in subs:
                self.place(sub, oid)
            return status, self.view(oid)

    def add_subscription(self, label, alias, body):
        sub = self.subscription_fields(body.get("subscription"))
        contacts = [(sub["type"], sub.get("token"))] if sub["type"] in ("Email", "SMS") else []
        scheme, _ = scheme_and_value(self.headers.get("Authorization"))
        if scheme == "bearer":
            self.check_identity(alias if label == "external_id" else None, contacts)
        else:
            self.check_key(required=True)
        with LOCK:
            oid = alias if label == "onesignal_id" and alias in USERS else self.find_user(label, alias)
            if oid is None:
                raise Refusal(f"No user with {label} {alias}", 404, "user-not-found")
            status, sid = self.place(sub, oid)
            view = dict(SUBSCRIPTIONS[sid], id=sid)
            view.pop("owner")
            return status, {"subscription": view}

    def edit_subscription(self, sid, body):
        self.check_key(required=False)
        with LOCK:
            if sid not in SUBSCRIPTIONS:
                raise Refusal(f"No subscription with id {sid}", 404, "subscription-not-found")
            if self.command == "DELETE":
                del SUBSCRIPTIONS[sid]
                return 202, {}
            sub = self.json_object(body).get("subscription")
            if not isinstance(sub, dict):
                raise Refusal("The body needs a subscription object")
            if "type" in sub and sub["type"] != SUBSCRIPTIONS[sid]["type"]:
                raise Refusal("A subscription's type cannot change: delete it and create another")
            if "enabled" in sub and not isinstance(sub["enabled"], bool):
                raise Refusal("enabled must be a boolean")
            SUBSCRIPTIONS[sid].update({k: v for k, v in sub.items() if k not in ("id", "owner", "type")})
            return 202, {}

    def transfer(self, sid, body):
        identity = body.get("identity")
        if not isinstance(identity, dict) or len(identity) != 1:
            raise Refusal("identity must name exactly one alias of the user to transfer to")
        (label, alias), = identity.items()
        self.check_identity(alias if label == "external_id" else None, [])
        with LOCK:
            if sid not in SUBSCRIPTIONS:
                raise Refusal(f"No subscription with id {sid}", 404, "subscription-not-found")
            oid = alias if label == "onesignal_id" and alias in USERS else self.find_user(label, alias)
            if oid is None and label == "onesignal_id":
                raise Refusal(f"No user with onesignal_id {alias}", 404, "user-not-found")
            if oid is None:
                oid = str(uuid.uuid4())
                USERS[oid] = {"aliases": {label: alias}, "properties": {}}
            SUBSCRIPTIONS[sid]["owner"] = oid
            return 200, {"identity": dict(USERS[oid]["aliases"], onesignal_id=oid)}

    def notify(self, channel_query, body):
        self.check_key(required=True)
        body = self.json_object(body)
        if body.get("app_id") != APP_ID:
            raise Refusal("app_id not found: give your app's id in app_id")
        modes = [t for t in TARGETING if t in body]
        if "excluded_segments" in body and "included_segments" not in body:
            raise Refusal("excluded_segments needs included_segments")
        if len(modes) != 1:
            raise Refusal("Give exactly one way to target: include_aliases, include_subscription_ids, "
                          "included_segments (with excluded_segments) or filters")
        if modes[0] in ("include_external_user_ids", "include_player_ids"):
            raise Refusal(f"{modes[0]} is v1 targeting: use include_aliases with target_channel")
        channel = body.get("target_channel", channel_query or "push")
        if channel not in CHANNEL_TYPES or (channel_query and channel_query != channel):
            raise Refusal("target_channel must be push, email or sms (and match ?c=)")
        if channel == "email":
            if not isinstance(body.get("email_subject"), str) or not isinstance(body.get("email_body"), str):
                raise Refusal("An email needs email_subject and email_body")
        else:
            contents = body.get("contents")
            if not isinstance(contents, dict) or not isinstance(contents.get("en"), str):
                raise Refusal("contents needs an English (en) string")
        if "data" in body and not isinstance(body["data"], dict):
            raise Refusal("data must be a JSON object")
        with LOCK:
            reachable = {sid: s for sid, s in SUBSCRIPTIONS.items()
                         if s["type"] in CHANNEL_TYPES[channel] and s.get("enabled", True)}
            owners = {s["owner"] for s in reachable.values()}
            invalid = []
            if modes[0] == "include_aliases":
                aliases = body["include_aliases"]
                if "target_channel" not in body:
                    raise Refusal("include_aliases needs target_channel")
                if not isinstance(aliases, dict) or not aliases or not all(
                        isinstance(v, list) and v and all(isinstance(i, str) for i in v) for v in aliases.values()):
                    raise Refusal("include_aliases maps an alias label to a non-empty array of ids")
                if sum(len(v) for v in aliases.values()) > 2000:
                    raise Refusal("include_aliases is limited to 2000 entries per request")
                for label, ids in aliases.items():
                    invalid += [i for i in ids if self.find_user(label, i) not in owners]
                reached = sum(len(v) for v in aliases.values()) - len(invalid)
            elif modes[0] == "include_subscription_ids":
                ids = body["include_subscription_ids"]
                reached = len([i for i in ids if i in reachable]) if isinstance(ids, list) else 0
            elif modes[0] == "included_segments":
                segments = body["included_segments"]
                if not isinstance(segments, list) or not segments or not all(isinstance(s, str) for s in segments):
                    raise Refusal("included_segments must be a non-empty array of segment names")
                reached = len(reachable)  # the stand-in's every segment holds every subscription
            else:
                filters = body["filters"]
                if not isinstance(filters, list) or not filters or not all(
                        isinstance(f, dict) and ("field" in f or "operator" in f) for f in filters):
                    raise Refusal("filters must be a non-empty array of filter objects (field …) and operators")
                reached = len(reachable)
        if reached == 0:
            return 200, {"id": "", "errors": ["All included players are not subscribed"]}
        answer = {"id": str(uuid.uuid4()), "external_id": None}
        if invalid:
            answer["errors"] = {"invalid_aliases": {"external_id": invalid}}
        return 200, answer

    # MARK: v1

    def route_v1(self, path, body):
        if self.command == "POST" and path == "/api/v1/players":
            return self.add_player(body)
        if self.command == "PUT" and path.startswith("/api/v1/players/"):
            return self.edit_player(path.rsplit("/", 1)[1], body)
        if self.command == "POST" and path == "/api/v1/notifications":
            return self.notify_v1(body)
        raise Refusal(f"No route for {self.command} {path}", 404)

    @staticmethod
    def check_app_v1(body):
        if not isinstance(body, dict) or body.get("app_id") != APP_ID:
            raise Refusal("app_id not found. You may be missing a Content-Type: application/json header.")

    @staticmethod
    def external_user_id(body):
        external = body.get("external_user_id")
        if external is None:
            return None
        if not isinstance(external, str):
            raise Refusal("external_user_id must be a string")
        if VERIFY and external != "":
            expected = hmac.new(REST_KEY.encode(), external.encode(), hashlib.sha256).hexdigest()
            given = body.get("external_user_id_auth_hash")
            if not isinstance(given, str) or not hmac.compare_digest(given, expected):
                raise Refusal("External user id auth hash is invalid or missing (identity verification is required)")
        return external

    def add_player(self, body):
        self.check_app_v1(body)
        if not isinstance(body.get("device_type"), int):
            raise Refusal("device_type is required and must be an integer")
        identifier = body.get("identifier")
        if identifier is not None and not isinstance(identifier, str):
            raise Refusal("identifier must be a string")
        external = self.external_user_id(body)
        with LOCK:
            player = next((k for k, v in PLAYERS.items() if identifier and v["identifier"] == identifier), None)
            player = player or str(uuid.uuid4())
            record = PLAYERS.setdefault(player, {"identifier": identifier, "external_user_id": None})
            record["device_type"] = body["device_type"]
            if external is not None:
                record["external_user_id"] = external or None
        return 200, {"success": True, "id": player}

    def edit_player(self, player, body):
        self.check_app_v1(body)
        external = self.external_user_id(body)
        with LOCK:
            if player not in PLAYERS:
                raise Refusal(f"No user with this id found: {player}")
            if external is not None:
                PLAYERS[player]["external_user_id"] = external or None
        return 200, {"success": True}

    def notify_v1(self, body):
        scheme, value = scheme_and_value(self.headers.get("Authorization"))
        if scheme != "basic" or not hmac.compare_digest(value, REST_KEY):
            raise Refusal("Give a valid legacy REST API key as 'Authorization: Basic <key>'", 403)
        self.check_app_v1(body)
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

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any


if __name__ == "__main__":
    serve_until_stdin_closes(Handler)
