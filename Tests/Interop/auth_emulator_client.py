"""Independent clients of the Auth0 emulator and of the GraphQL API it signs in to (GQLEmulatorsTests'
OwnerScopeInteropTests): PyJWT verifies the issued tokens with the emulator's JWKS, and the Python `gql` client calls
an owner-scoped model (`@auth(rules: [{ allow: owner }])`) with the issued access tokens.

    .venv/bin/python Tests/Interop/auth_emulator_client.py --auth http://127.0.0.1:PORT --client-id ID \
        --graphql http://127.0.0.1:PORT/graphql

Steps, one line `ok <what>` each on standard output: two users sign up (POST /dbconnections/signup) and sign in
(POST /oauth/token, the password-realm grant); the discovery document names the issuer and the JWKS; PyJWT's
PyJWKClient fetches the key and jwt.decode checks each ID token (RS256, audience the client id, the issuer) and
access token (audience the issuer's /userinfo); with the gql client (AIOHTTPTransport, `Authorization: Bearer`),
each user creates a Note, which carries its `sub` as owner, and lists its own Note only; a request with no token
is refused. Exit status 0 when every step passed, 1 with `FAIL <step>: <why>` on standard error otherwise. Only
loopback URLs are accepted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import urllib.request
from urllib.parse import urlparse

import jwt
from gql import Client, gql
from gql.transport.aiohttp import AIOHTTPTransport
from gql.transport.exceptions import TransportQueryError, TransportServerError

PASSWORD_REALM = "http://auth0.com/oauth/grant-type/password-realm"
CREATE = gql("mutation($input: CreateNoteInput!) { createNote(input: $input) { id text owner } }")
LIST = gql("{ listNotes { items { id text owner } } }")


def post(url: str, body: dict) -> dict:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def step(name: str, condition: bool, why: str = "") -> None:
    if not condition:
        print(f"FAIL {name}: {why}", file=sys.stderr)
        sys.exit(1)
    print(f"ok {name}", flush=True)


async def graphql(url: str, token: str | None, document, variables=None) -> dict:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    transport = AIOHTTPTransport(url=url, headers=headers, timeout=10)
    async with Client(transport=transport, fetch_schema_from_transport=False, execute_timeout=10) as session:
        return await session.execute(document, variable_values=variables)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--auth", required=True)
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--graphql", required=True)
    options = parser.parse_args()
    for url in (options.auth, options.graphql):
        if urlparse(url).hostname not in ("127.0.0.1", "localhost", "::1"):
            print(f"FAIL arguments: {url} is not a loopback URL", file=sys.stderr)
            sys.exit(2)

    discovery = get(options.auth + "/.well-known/openid-configuration")
    issuer = discovery["issuer"]
    step("discovery", discovery["jwks_uri"] == options.auth + "/.well-known/jwks.json", json.dumps(discovery))
    keys = jwt.PyJWKClient(discovery["jwks_uri"])

    users = {}
    for email in ("py-ann@example.com", "py-bob@example.com"):
        post(options.auth + "/dbconnections/signup", {
            "client_id": options.client_id, "email": email, "password": "correct horse battery",
            "connection": "Username-Password-Authentication"})
        tokens = post(options.auth + "/oauth/token", {
            "grant_type": PASSWORD_REALM, "client_id": options.client_id, "username": email,
            "password": "correct horse battery", "realm": "Username-Password-Authentication",
            "scope": "openid profile email offline_access"})
        id_token = tokens["id_token"]
        key = keys.get_signing_key_from_jwt(id_token).key
        claims = jwt.decode(id_token, key, algorithms=["RS256"], audience=options.client_id, issuer=issuer)
        step(f"PyJWT verifies {email}'s ID token", claims["email"] == email and claims["sub"].startswith("auth0|"),
             json.dumps(claims))
        access = jwt.decode(tokens["access_token"], keys.get_signing_key_from_jwt(tokens["access_token"]).key,
                            algorithms=["RS256"], audience=issuer + "userinfo", issuer=issuer)
        step(f"PyJWT verifies {email}'s access token", access["sub"] == claims["sub"] and "azp" in access)
        try:
            jwt.decode(id_token, key, algorithms=["RS256"], audience="someone-else", issuer=issuer)
            step("PyJWT refuses another audience", False, "accepted")
        except jwt.InvalidAudienceError:
            pass
        users[email] = (claims["sub"], tokens["access_token"])

    for email, (sub, token) in users.items():
        created = await graphql(options.graphql, token, CREATE, {"input": {"text": f"{email}'s note"}})
        step(f"gql createNote as {email}", created["createNote"]["owner"] == sub, json.dumps(created))
    for email, (sub, token) in users.items():
        listed = await graphql(options.graphql, token, LIST)
        items = listed["listNotes"]["items"]
        step(f"gql listNotes as {email} sees its own note only",
             len(items) == 1 and items[0]["owner"] == sub and items[0]["text"] == f"{email}'s note", json.dumps(items))
    try:
        await graphql(options.graphql, None, LIST)
        step("no token is refused", False, "accepted")
    except TransportServerError as error:
        step("no token is refused", error.code == 401, str(error))
    except TransportQueryError as error:
        # The API answers 401 with a GraphQL error body, which gql reports as the query's error.
        step("no token is refused", "Unauthorized" in str(error), str(error))


if __name__ == "__main__":
    asyncio.run(main())
