"""An Auth0-shaped tenant for the GQLAuth tests, on Python's standard http.server, with tokens signed by PyJWT.

It follows Auth0's documented Authentication and Management API shapes: POST /dbconnections/signup and
/dbconnections/change_password, POST /oauth/token (password-realm, refresh_token and client_credentials grants; form
or JSON bodies), POST /oauth/revoke, GET /.well-known/jwks.json, PATCH /api/v2/users/{id}, with Auth0's error bodies
(`error` / `error_description` on /oauth, `code` / `description` / `name` on /dbconnections, `statusCode` / `error` /
`message` / `errorCode` on /api/v2). ID tokens are RS256 under a key generated here (published in the JWKS with its
kid) or HS256 under the client secret (`--alg HS256`); issuer https://<domain>/, audience the client id.

What it follows, from Auth0's documentation (read 2026-11-28):
- Change password, https://auth0.com/docs/api/authentication/change-password/change-password: POST
  /dbconnections/change_password with `client_id`, `email` and `connection` (all required; `organization` optional)
  sends the reset e-mail and answers 200 with a plain-text sentence. Here a body without the client id, with another
  one, without an e-mail or naming another connection is refused with a 400 in the /dbconnections error shape (the
  page lists no error bodies; the codes are this stand-in's), and each accepted request is kept for
  GET /test/reset_emails instead of an e-mail.
- Access token profiles, https://auth0.com/docs/secure/tokens/access-tokens/access-token-profiles: an API's access
  tokens use the Auth0 token profile by default, a JWT with `iss`, `sub`, `aud` (the API, plus
  https://<domain>/userinfo when `openid` is asked for), `azp` (the client id), `iat`, `exp` and `scope`, and an
  ordinary `typ: JWT` header; the RFC 9068 profile (`typ: at+jwt`, `client_id`, `jti`) is an API's opt-in, not done
  here.
- Refresh token, https://auth0.com/docs/api/authentication#refresh-token: `scope` is optional; without it the new
  tokens carry the scopes of the original sign-in, with it a reduced set (a scope the sign-in did not have is
  refused here, 403 `access_denied`).

Test hooks under /test (never part of Auth0): GET /test/stats counts the requests by kind; GET /test/reset_emails
lists the change-password requests accepted ({"email", "connection"}); POST /test/config changes
what later answers look like (`expires_in`, `access_exp_offset` for JWT access tokens, `id_token` overrides: `aud`, `iss`, `exp_offset`, `forge`, `alg`;
`rotate_key`, `revoke_refresh_tokens`, `reject_access_tokens`, `refresh_delay`, `block`), and GET /api/private checks
a bearer access token as an API would (401 when unknown or rejected; 200 with its `sub` and `scope`). Access tokens
are opaque unless the sign-in names an `audience` (an API); then they are RS256 JWTs for it in the Auth0 token
profile, and refreshes keep that audience.

Arguments: --domain D --client-id C [--client-secret S] [--alg RS256|HS256]. Prints `READY http://127.0.0.1:PORT` and
serves until its standard input closes. Time is the real clock; the client under test brings its own."""
import argparse
import json
import secrets
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

PASSWORD_REALM = "http://auth0.com/oauth/grant-type/password-realm"


def new_key(kid):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    jwk.update({"kid": kid, "use": "sig", "alg": "RS256"})
    return {"kid": kid, "private": key, "jwk": jwk}


class Tenant:
    def __init__(self, options):
        self.domain = options.domain
        self.issuer = f"https://{options.domain}/"
        self.client_id = options.client_id
        self.client_secret = options.client_secret
        self.alg = options.alg
        self.lock = threading.Lock()
        self.users = {}  # email -> {"id", "password", "blocked"}
        self.refresh_tokens = {}  # token -> (user id, audience, the sign-in's scope)
        self.access_tokens = {}  # token -> (user id, scope); user id "" for the Management API
        self.reset_emails = []  # the accepted change-password requests
        self.stats = {}
        self.failed_attempts = {}
        self.keys = [new_key("k1")]
        self.config = {"expires_in": 86400, "id_token": {}, "refresh_delay": 0}

    def count(self, kind):
        with self.lock:
            self.stats[kind] = self.stats.get(kind, 0) + 1

    def user_by_id(self, user_id):
        return next((email for email, user in self.users.items() if user["id"] == user_id), None)

    def id_token(self, email, user_id):
        now = int(time.time())
        overrides = dict(self.config["id_token"])
        claims = {
            "iss": overrides.pop("iss", self.issuer),
            "aud": overrides.pop("aud", self.client_id),
            "sub": user_id,
            "email": email,
            "email_verified": False,
            "iat": now,
            "exp": now + 36000 + overrides.pop("exp_offset", 0),
        }
        alg = overrides.pop("alg", self.alg)
        if overrides.pop("forge", False):
            # The right kid and claims under a key the tenant never published.
            return jwt.encode(claims, new_key("forged")["private"], algorithm="RS256", headers={"kid": self.keys[-1]["kid"]})
        if alg == "HS256":
            return jwt.encode(claims, self.client_secret or "", algorithm="HS256")
        key = self.keys[-1]
        return jwt.encode(claims, key["private"], algorithm="RS256", headers={"kid": key["kid"]})

    def access_token(self, user_id, scope, audience):
        """Opaque without an audience (Auth0's default); with one, an RS256 JWT for that API in the Auth0 token
        profile (Auth0's default profile: no `typ: at+jwt`, no `client_id` or `jti`)."""
        if not audience:
            return "at-" + secrets.token_urlsafe(24)
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": user_id,
            "aud": [audience, self.issuer + "userinfo"] if "openid" in scope.split() else audience,
            "azp": self.client_id,
            "iat": now,
            "exp": now + int(self.config["expires_in"]) + int(self.config.get("access_exp_offset", 0)),
            "scope": scope,
        }
        key = self.keys[-1]
        return jwt.encode(claims, key["private"], algorithm="RS256", headers={"kid": key["kid"], "typ": "JWT"})

    def issue(self, email, user_id, scope, refresh_token=None, audience=None):
        access = self.access_token(user_id, scope, audience)
        answer = {
            "access_token": access,
            "id_token": self.id_token(email, user_id),
            "token_type": "Bearer",
            "expires_in": self.config["expires_in"],
            "scope": scope,
        }
        with self.lock:
            self.access_tokens[access] = (user_id, scope)
            if refresh_token is None and "offline_access" in scope.split():
                refresh_token = "rt-" + secrets.token_urlsafe(24)
                self.refresh_tokens[refresh_token] = (user_id, audience, scope)
                answer["refresh_token"] = refresh_token
        return answer


class Handler(BaseHTTPRequestHandler):
    tenant: Tenant = None

    def log_message(self, *args):
        pass

    def answer(self, status, payload=None, content_type="application/json"):
        if payload is None:
            body = b""
        elif isinstance(payload, bytes):
            body = payload
        else:
            body = json.dumps(payload).encode()
        self.send_response(status)
        if body:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        content_type = self.headers.get("Content-Type", "")
        if content_type.startswith("application/x-www-form-urlencoded"):
            return {k: v[-1] for k, v in parse_qs(raw.decode(), keep_blank_values=True).items()}
        return json.loads(raw) if raw else {}

    def oauth_error(self, status, error, description):
        self.answer(status, {"error": error, "error_description": description})

    def client_ok(self, fields, secret_required=False):
        tenant = self.tenant
        if fields.get("client_id") != tenant.client_id:
            self.oauth_error(401, "access_denied", "Unauthorized")
            return False
        given = fields.get("client_secret")
        if (given is not None or secret_required) and given != tenant.client_secret:
            self.oauth_error(401, "access_denied", "Unauthorized")
            return False
        return True

    # MARK: routes

    def do_GET(self):
        tenant = self.tenant
        path = urlsplit(self.path).path
        if path == "/.well-known/jwks.json":
            tenant.count("jwks")
            return self.answer(200, {"keys": [key["jwk"] for key in tenant.keys]})
        if path == "/test/stats":
            with tenant.lock:
                return self.answer(200, dict(tenant.stats))
        if path == "/test/reset_emails":
            with tenant.lock:
                return self.answer(200, list(tenant.reset_emails))
        if path == "/api/private":
            tenant.count("api")
            auth = self.headers.get("Authorization", "")
            token = auth[len("Bearer "):] if auth.startswith("Bearer ") else None
            with tenant.lock:
                user, scope = tenant.access_tokens.get(token, (None, None)) if token else (None, None)
            if not user:
                return self.answer(401, {"error": "invalid_token"})
            return self.answer(200, {"sub": user, "scope": scope})
        self.answer(404, {"error": "not_found"})

    def do_PATCH(self):
        tenant = self.tenant
        path = urlsplit(self.path).path
        if not path.startswith("/api/v2/users/"):
            return self.answer(404, {"error": "not_found"})
        tenant.count("management_patch")
        auth = self.headers.get("Authorization", "")
        with tenant.lock:
            holder = tenant.access_tokens.get(auth[len("Bearer "):]) if auth.startswith("Bearer ") else None
            allowed = holder is not None and holder[0] == ""
        if not allowed:
            return self.answer(401, {"statusCode": 401, "error": "Unauthorized", "message": "Invalid token"})
        user_id = unquote(path[len("/api/v2/users/"):])
        fields = self.body()
        email = tenant.user_by_id(user_id)
        if email is None:
            return self.answer(404, {"statusCode": 404, "error": "Not Found", "message": "The user does not exist.",
                                     "errorCode": "inexistent_user"})
        password = fields.get("password", "")
        if len(password) < 8:
            return self.answer(400, {"statusCode": 400, "error": "Bad Request",
                                     "message": "PasswordStrengthError: Password is too weak", "errorCode": "invalid_body"})
        tenant.users[email]["password"] = password
        self.answer(200, {"user_id": user_id, "email": email})

    def do_POST(self):
        tenant = self.tenant
        path = urlsplit(self.path).path
        fields = self.body()
        if path == "/dbconnections/signup":
            tenant.count("signup")
            return self.signup(fields)
        if path == "/dbconnections/change_password":
            tenant.count("change_password")
            return self.change_password(fields)
        if path == "/oauth/token":
            return self.token(fields)
        if path == "/oauth/revoke":
            tenant.count("revoke")
            if not self.client_ok(fields):
                return None
            with tenant.lock:
                tenant.refresh_tokens.pop(fields.get("token"), None)
            return self.answer(200)
        if path == "/test/config":
            with tenant.lock:
                if fields.pop("rotate_key", False):
                    tenant.keys = [new_key(f"k{len(tenant.stats) + 2}-{secrets.token_hex(2)}")]
                if fields.pop("revoke_refresh_tokens", False):
                    tenant.refresh_tokens.clear()
                if fields.pop("reject_access_tokens", False):
                    tenant.access_tokens = {k: v for k, v in tenant.access_tokens.items() if v[0] == ""}
                for email in fields.pop("block", []):
                    tenant.users[email]["blocked"] = True
                tenant.config.update(fields)
                return self.answer(200, {"kids": [key["kid"] for key in tenant.keys]})
        self.answer(404, {"error": "not_found"})

    def signup(self, fields):
        tenant = self.tenant
        if fields.get("client_id") != tenant.client_id or fields.get("connection") != "Username-Password-Authentication":
            return self.answer(400, {"name": "BadRequestError", "code": "invalid_connection",
                                     "description": "Invalid connection", "statusCode": 400})
        email, password = fields.get("email", ""), fields.get("password", "")
        if len(password) < 8:
            return self.answer(400, {"name": "PasswordStrengthError", "message": "Password is too weak",
                                     "code": "invalid_password",
                                     "description": {"rules": [{"message": "At least %d characters in length",
                                                                "format": [8], "code": "lengthAtLeast",
                                                                "verified": False}], "verified": False},
                                     "policy": "* At least 8 characters in length", "statusCode": 400})
        with tenant.lock:
            if email in tenant.users:
                return self.answer(400, {"name": "BadRequestError", "code": "invalid_signup",
                                         "description": "Invalid sign up", "statusCode": 400})
            user_id = "auth0|" + secrets.token_hex(12)
            tenant.users[email] = {"id": user_id, "password": password, "blocked": False}
        self.answer(200, {"_id": user_id[len("auth0|"):], "email": email, "email_verified": False})

    def change_password(self, fields):
        """Auth0 answers the same for a known and an unknown e-mail (no user enumeration); the body must be whole."""
        tenant = self.tenant
        if fields.get("client_id") != tenant.client_id:
            return self.answer(400, {"name": "BadRequestError", "code": "invalid_request",
                                     "description": "client_id is required and must be this tenant's application",
                                     "statusCode": 400})
        if not fields.get("email"):
            return self.answer(400, {"name": "BadRequestError", "code": "invalid_request",
                                     "description": "Missing required parameter: email", "statusCode": 400})
        if fields.get("connection") != "Username-Password-Authentication":
            return self.answer(400, {"name": "BadRequestError", "code": "invalid_connection",
                                     "description": "Invalid connection", "statusCode": 400})
        with tenant.lock:
            tenant.reset_emails.append({"email": fields["email"], "connection": fields["connection"]})
        return self.answer(200, b"We've just sent you an email to reset your password.", "text/html")

    def token(self, fields):
        tenant = self.tenant
        grant = fields.get("grant_type")
        if grant == PASSWORD_REALM:
            tenant.count("token_password")
            if not self.client_ok(fields):
                return None
            email = fields.get("username", "")
            user = tenant.users.get(email)
            if tenant.failed_attempts.get(email, 0) >= 10:
                return self.oauth_error(429, "too_many_attempts",
                                        "Your account has been blocked after multiple consecutive login attempts.")
            if user is None or user["password"] != fields.get("password") or fields.get("realm") != "Username-Password-Authentication":
                tenant.failed_attempts[email] = tenant.failed_attempts.get(email, 0) + 1
                return self.oauth_error(403, "invalid_grant", "Wrong email or password.")
            if user["blocked"]:
                return self.oauth_error(401, "unauthorized", "user is blocked")
            return self.answer(
                200, tenant.issue(email, user["id"], fields.get("scope", "openid"), audience=fields.get("audience")))
        if grant == "refresh_token":
            tenant.count("token_refresh")
            if not self.client_ok(fields):
                return None
            time.sleep(float(tenant.config.get("refresh_delay", 0)))
            token = fields.get("refresh_token")
            with tenant.lock:
                user_id, audience, granted = tenant.refresh_tokens.get(token, (None, None, ""))
            email = tenant.user_by_id(user_id) if user_id else None
            if email is None:
                return self.oauth_error(403, "invalid_grant", "Unknown or invalid refresh token.")
            # The scope asked for (a subset of the sign-in's), or the sign-in's own when none is asked for.
            asked = fields.get("scope") or granted
            if not set(asked.split()) <= set(granted.split()):
                return self.oauth_error(403, "access_denied", "The refresh token does not grant the scope asked for.")
            return self.answer(200, tenant.issue(email, user_id, asked, token, audience=audience))
        if grant == "client_credentials":
            tenant.count("token_client_credentials")
            if not self.client_ok(fields, secret_required=True):
                return None
            if fields.get("audience") != f"https://{tenant.domain}/api/v2/":
                return self.oauth_error(403, "access_denied", "Service not enabled within domain")
            access = "mgmt-" + secrets.token_urlsafe(24)
            with tenant.lock:
                tenant.access_tokens[access] = ("", "update:users")
            return self.answer(200, {"access_token": access, "token_type": "Bearer", "expires_in": 86400,
                                     "scope": "update:users"})
        self.oauth_error(400, "unsupported_grant_type", "Unsupported grant type")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--domain", required=True)
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--client-secret")
    parser.add_argument("--alg", default="RS256", choices=["RS256", "HS256"])
    Handler.tenant = Tenant(parser.parse_args())
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"READY http://127.0.0.1:{server.server_address[1]}", flush=True)
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
