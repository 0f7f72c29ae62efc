"""Every path and query parameter of every route, and every integer of every request body, holds
only values the database can take (issue 35, items 13 and 14):

* a NUL character (``%00``) in a path is a 404, in a query string a 422, on every route, before any
  route or the database sees it (PostgreSQL text cannot hold NUL: it was a 500);
* every integer parameter and body field has a lower and an upper bound in the OpenAPI, so a
  number past the database's 64 bits (``99999999999999999999999``) is a 422 naming it, never a 500.

The routes come from the app's own OpenAPI: a new route is covered without touching this file.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from app.config import Settings
from app.main import create_app
from tests.api.support import SECRET, Api

HUGE = "99999999999999999999999"
SQL_BIGINT_MAX = 2**63 - 1


def _openapi() -> dict[str, Any]:
    schema: dict[str, Any] = create_app(Settings(database_url="sqlite+aiosqlite://", secret_key=SECRET)).openapi()
    return schema


OPENAPI = _openapi()


def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, operation)
        for path, operations in OPENAPI["paths"].items()
        for method, operation in operations.items()
    ]


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = OPENAPI["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _integers(schema: dict[str, Any], where: str, seen: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """Every integer schema inside ``schema`` (objects, arrays, unions, references followed once)."""
    ref = schema.get("$ref")
    if ref is not None:
        if ref in seen:
            return []
        seen = seen | {ref}
    schema = _resolve(schema)
    found = []
    if schema.get("type") == "integer":
        found.append((where, schema))
    for branch in schema.get("anyOf", []) + schema.get("oneOf", []) + schema.get("allOf", []):
        found += _integers(branch, where, seen)
    for name, prop in schema.get("properties", {}).items():
        found += _integers(prop, f"{where}.{name}", seen)
    if isinstance(schema.get("items"), dict):
        found += _integers(schema["items"], f"{where}[]", seen)
    if isinstance(schema.get("additionalProperties"), dict):
        found += _integers(schema["additionalProperties"], f"{where}{{}}", seen)
    return found


def _inputs(operation: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(where, schema) of each parameter and of the request body."""
    found = [(f"{p['in']} {p['name']}", p.get("schema", {})) for p in operation.get("parameters", [])]
    body = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if body is not None:
        found.append(("body", body["schema"]))
    return found


def test_every_integer_a_client_sends_is_bounded() -> None:
    """Path, query, header and body integers alike: a minimum and a maximum the database can hold."""
    unbounded = []
    for method, path, operation in _operations():
        for where, schema in _inputs(operation):
            for name, integer in _integers(schema, where, set()):
                enum = integer.get("enum") or ([integer["const"]] if "const" in integer else None)
                low = min(enum) if enum else integer.get("minimum", integer.get("exclusiveMinimum"))
                high = max(enum) if enum else integer.get("maximum", integer.get("exclusiveMaximum"))
                if low is None or high is None or not -SQL_BIGINT_MAX <= low <= high <= SQL_BIGINT_MAX:
                    unbounded.append(f"{method} {path}: {name} ({integer})")
    assert not unbounded, "\n".join(unbounded)


def _filled(path: str, value: str, only: str | None = None) -> str:
    """``path`` with ``value`` in the parameter ``only`` (every parameter when None), ``1`` elsewhere."""
    return re.sub(r"\{(\w+)\}", lambda m: value if only in (None, m.group(1)) else "1", path)


async def _clients(api: Api) -> list[httpx.AsyncClient]:
    """Nobody, a guest, and an admin: every route is reached past its sign-in check by one of them."""
    return [api.client(), await api.guest("Gus"), await api.admin()]


@pytest.mark.parametrize(("method", "path"), [(m, p) for m, p, _ in _operations() if "{" in p])
async def test_a_nul_in_a_path_is_not_found(api: Api, method: str, path: str) -> None:
    for client in await _clients(api):
        for name in re.findall(r"\{(\w+)\}", path):
            response = await client.request(method, _filled(path, "a%00b", name), json={})
            assert response.status_code == 404, (method, path, name, response.status_code, response.text)
            assert response.json()["code"] == "not_found"


@pytest.mark.parametrize(
    ("method", "path", "name"),
    [(m, p, q["name"]) for m, p, o in _operations() for q in o.get("parameters", []) if q["in"] == "query"],
)
async def test_a_nul_in_a_query_parameter_is_refused(api: Api, method: str, path: str, name: str) -> None:
    for client in await _clients(api):
        response = await client.request(method, _filled(path, "1"), params={name: "a\x00b"})
        assert response.status_code == 422, (method, path, name, response.status_code, response.text)
        assert response.json()["detail"][0]["loc"] == ["query"]


@pytest.mark.parametrize(
    ("method", "path", "where", "name"),
    [
        (m, p, q["in"], q["name"])
        for m, p, o in _operations()
        for q in o.get("parameters", [])
        if q["in"] in ("path", "query") and _integers(q.get("schema", {}), q["name"], set())
    ],
)
async def test_a_number_past_64_bits_is_refused(api: Api, method: str, path: str, where: str, name: str) -> None:
    """``DELETE /api/tables/<code>/bots/99999999999999999999999`` was a 500 for anyone signed in."""
    answers = []
    for client in await _clients(api):
        if where == "path":
            response = await client.request(method, _filled(path, HUGE, name), json={})
        else:
            response = await client.request(method, _filled(path, "1"), params={name: HUGE})
        answers.append(response.status_code)
        if response.status_code in (401, 403):
            continue  # refused before the parameter is read (sign-in, admins only)
        assert response.status_code == 422, (method, path, name, response.status_code, response.text)
        assert [where, name] in [error["loc"] for error in response.json()["detail"]], response.text
    assert 422 in answers, answers  # the admin, at least, got as far as the parameter
