"""The OpenAPI and docs/api.md describe every route: each answers a typed body (no bare ``object``),
each is in the document, and what the table routes really answer is declared field by field."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from tests.api.support import SECRET
from tests.support.wait import wait_until
from tests.tables.harness import Player, signup

API_MD = Path(__file__).resolve().parents[2] / "docs" / "api.md"


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    schema: dict[str, Any] = create_app(Settings(database_url="sqlite+aiosqlite://", secret_key=SECRET)).openapi()
    return schema


def _operations(openapi: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        f"{method.upper()} {path}": operation
        for path, operations in openapi["paths"].items()
        for method, operation in operations.items()
    }


def _resolve(schema: dict[str, Any], openapi: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = openapi["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _untyped(schema: dict[str, Any], openapi: dict[str, Any]) -> str | None:
    """Why ``schema`` does not say what the body holds, or None when it does."""
    schema = _resolve(schema, openapi)
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches:
        reasons = [_untyped(branch, openapi) for branch in branches if branch.get("type") != "null"]
        return next((reason for reason in reasons if reason), None)
    if schema.get("type") == "array":
        return _untyped(schema.get("items", {}), openapi)
    if schema.get("type") == "object" or "properties" in schema:
        return None if schema.get("properties") else f"an object without properties: {schema}"
    return None if schema.get("type") else f"no type: {schema}"


def test_every_route_answers_a_typed_body(openapi: dict[str, Any]) -> None:
    problems = []
    for label, operation in _operations(openapi).items():
        for status, response in operation["responses"].items():
            if not status.startswith("2"):
                continue
            content = response.get("content", {})
            if status == "204":
                if content:
                    problems.append(f"{label} {status}: a 204 has no body")
                continue
            if not content:
                problems.append(f"{label} {status}: no body described")
            for media, body in content.items():
                reason = _untyped(body.get("schema", {}), openapi)
                if reason:
                    problems.append(f"{label} {status} {media}: {reason}")
    assert not problems, "\n".join(problems)


def test_every_route_is_in_the_api_document(openapi: dict[str, Any]) -> None:
    text = API_MD.read_text()
    missing = [label for label in _operations(openapi) if not re.search(re.escape(label) + r"(?![\w/{])", text)]
    assert not missing, f"docs/api.md does not mention: {missing}"


def _undeclared(value: Any, schema: dict[str, Any], openapi: dict[str, Any], where: str = "") -> list[str]:
    """The places in ``value`` (a JSON answer) that ``schema`` does not declare."""
    schema = _resolve(schema, openapi)
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches:
        if value is None:
            return []
        found = [_undeclared(value, branch, openapi, where) for branch in branches if branch.get("type") != "null"]
        return min(found, key=len)
    if isinstance(value, list):
        return [
            p
            for i, item in enumerate(value)
            for p in _undeclared(item, schema.get("items", {}), openapi, f"{where}[{i}]")
        ]
    if not isinstance(value, dict):
        return []
    properties = schema.get("properties")
    if properties is None:
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            return [p for key, item in value.items() for p in _undeclared(item, extra, openapi, f"{where}.{key}")]
        return []  # a free-form object, declared as such (e.g. a replay's move)
    out = []
    for key, item in value.items():
        if key not in properties:
            out.append(f"{where}.{key}")
        else:
            out.extend(_undeclared(item, properties[key], openapi, f"{where}.{key}"))
    return out


def test_what_the_table_routes_answer_is_declared(client: TestClient, openapi: dict[str, Any]) -> None:
    """A table's life through the REST routes; every field of every answer is in the OpenAPI."""
    operations = _operations(openapi)
    seen: set[str] = set()

    def call(label: str, headers: dict[str, str] | None = None, json: Any = None, **params: str) -> Any:
        method, template = label.split(" ", 1)
        response = client.request(method, template.format(**params), headers=headers, json=json)
        status = str(response.status_code)
        assert status.startswith("2"), (label, response.text)
        if status == "204":
            assert "content" not in operations[label]["responses"][status], label
            seen.add(label)
            return None
        schema = operations[label]["responses"][status]["content"]["application/json"]["schema"]
        body = response.json()
        assert not _undeclared(body, schema, openapi), (label, _undeclared(body, schema, openapi))
        seen.add(label)
        return body

    alice, bob = signup(client, "alice"), signup(client, "bob")
    call("GET /api/presets")
    created = call("POST /api/tables", alice, {"seats": 3, "timer": 0, "bot_delay_ms": 0})
    code, watch = created["code"], created["watch_code"]
    assert created["table"]["seats"][0]["kind"] == "empty"  # the creator is not seated
    call("GET /api/tables")
    call("GET /api/tables/{code}", code=code)
    call("GET /api/tables/{code}", code=watch)
    joined = call("POST /api/tables/{code}/join", alice, {"seat": 0}, code=code)
    assert joined["type"] == "ack" and joined["seat"] == 0 and isinstance(joined["version"], int)
    call("POST /api/tables/{code}/bots", alice, {"level": "easy", "seat": 2}, code=code)
    call("DELETE /api/tables/{code}/bots/{seat}", alice, code=code, seat="2")
    call("POST /api/tables/{code}/join", bob, {}, code=code)
    assert call("POST /api/tables/{code}/start", alice, code=code)["match_id"]
    assert call("GET /api/tables/{code}", code=code)["status"] == "playing"
    call("POST /api/tables/{code}/leave", bob, code=code)  # forfeits: the match is over
    finished = call("GET /api/tables/{code}", alice, code=code)
    assert finished["status"] == "finished" and finished["results"]["coin_changes"]
    call("POST /api/tables/{code}/rematch", alice, code=code)
    bob_key = finished["seats"][1]["player"]  # still in his seat after the match
    call("POST /api/tables/{code}/report", alice, {"player": bob_key, "reason": "rude"}, code=code)
    spare = call("POST /api/tables", alice, {"seats": 2, "timer": 0})["code"]
    mine = call("GET /api/me/tables", alice)["tables"]
    assert spare in {row["code"] for row in mine}
    call("POST /api/tables/{code}/close", alice, code=spare)
    # The finished match is recorded by a background settlement.
    wait_until(lambda: bool(client.get("/api/matches").json()["items"]), 10, "the finished match is recorded")
    matches = call("GET /api/matches")
    match_id = matches["items"][0]["id"]
    call("GET /api/matches/{match_id}", match_id=match_id)
    call("GET /api/matches/{match_id}/replay", match_id=match_id)
    # A staked table: the match starts once both, at the table, have confirmed (the ready check).
    staked = call("POST /api/tables", alice, {"stake": 10, "timer": 0, "bot_delay_ms": 0})["code"]
    url = f"/ws/tables/{staked}"
    with client.websocket_connect(url, headers=alice) as one, client.websocket_connect(url, headers=bob) as two:
        Player(one, "alice").hello()
        Player(two, "bob").hello()
        call("POST /api/tables/{code}/join", alice, {}, code=staked)
        call("POST /api/tables/{code}/join", bob, {}, code=staked)  # bob confirms by filling the table
        assert call("POST /api/tables/{code}/ready", alice, code=staked)["type"] == "ack"
        assert call("GET /api/tables/{code}", code=staked)["status"] == "playing"
    table_routes = {label for label in operations if "/api/tables" in label or label == "GET /api/presets"}
    assert table_routes <= seen, table_routes - seen


# --- every answer a route's code can give is listed (issue 35.19) -----------------------------------

API_DIR = Path(__file__).resolve().parents[2] / "app" / "api"


class _Raises:
    """The HTTP statuses each function of app/api can raise (or build an ``HTTPException`` for),
    directly or through the functions of app/api it calls, read from the source."""

    def __init__(self) -> None:
        self.functions: dict[tuple[str, str], ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.imports: dict[str, dict[str, tuple[str, str]]] = {}
        for path in API_DIR.rglob("*.py"):
            module = "app." + ".".join(path.relative_to(API_DIR.parent).with_suffix("").parts)
            tree = ast.parse(path.read_text())
            names: dict[str, tuple[str, str]] = {}
            for node in tree.body:
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    self.functions[(module, node.name)] = node
                elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("app.api"):
                    for alias in node.names:
                        names[alias.asname or alias.name] = (node.module, alias.name)
            self.imports[module] = names
        self.memo: dict[tuple[str, str], set[int]] = {}

    def of(self, module: str, name: str) -> set[int]:
        key = (module, name)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = set()  # a cycle adds nothing
        function = self.functions.get(key)
        found: set[int] = set()
        if function is not None:
            for node in ast.walk(function):
                if not isinstance(node, ast.Call):
                    continue
                callee = node.func.id if isinstance(node.func, ast.Name) else None
                if callee == "HTTPException":
                    found |= self._status(function, node)
                elif callee is not None:
                    local = (module, callee)
                    target = local if local in self.functions else self.imports[module].get(callee)
                    if target is not None:
                        found |= self.of(*target)
        self.memo[key] = found
        return found

    def _status(self, function: ast.AST, call: ast.Call) -> set[int]:
        arg = call.args[0] if call.args else next(k.value for k in call.keywords if k.arg == "status_code")
        if isinstance(arg, ast.Constant) and isinstance(arg.value, int):
            return {arg.value}
        if isinstance(arg, ast.Attribute):
            return {int(arg.attr.split("_")[1])}  # status.HTTP_409_CONFLICT
        assert isinstance(arg, ast.Name), ast.dump(arg)
        params = [a.arg for a in function.args.args] if isinstance(function, ast.FunctionDef) else []
        if arg.id in params:  # a helper's parameter: the constants its callers in that module pass
            position = params.index(arg.id)
            module = next(m for (m, _), f in self.functions.items() if f is function)
            passed = {
                call_node.args[position].value
                for (m, _), other in self.functions.items()
                if m == module
                for call_node in ast.walk(other)
                if isinstance(call_node, ast.Call)
                and isinstance(call_node.func, ast.Name)
                and call_node.func.id == function.name
                and len(call_node.args) > position
                and isinstance(call_node.args[position], ast.Constant)
            }
            if passed:
                return {value for value in passed if isinstance(value, int)}
        for node in ast.walk(function):  # http = {...}.get(code, 409)
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == arg.id for t in node.targets):
                constants = [c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant)]
                return {value for value in constants if isinstance(value, int)}
        raise AssertionError(f"cannot tell the status of {ast.dump(call)}")


def test_every_answer_a_route_can_give_is_listed(openapi: dict[str, Any]) -> None:
    """What a route's own code raises (HTTPException, through its helpers too) is in its OpenAPI
    responses; what the layers around the routes answer is added by app/api/answers.py."""
    raises = _Raises()
    app = create_app(Settings(database_url="sqlite+aiosqlite://", secret_key=SECRET))
    missing = []
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        if not isinstance(route, APIRoute) or not route.include_in_schema:
            continue
        raised = raises.of(route.endpoint.__module__, route.endpoint.__name__)
        for method in context.methods or ():
            listed = {int(code) for code in openapi["paths"][context.path_format][method.lower()]["responses"]}
            if raised - listed:
                missing.append(f"{method} {context.path_format}: {sorted(raised - listed)}")
    assert not missing, "\n".join(missing)


def test_the_guards_answers_are_listed(openapi: dict[str, Any]) -> None:
    operations = _operations(openapi)
    for label, operation in operations.items():
        responses = operation["responses"]
        assert {"413", "422", "503"} <= set(responses), label
        if label.split()[0] in ("POST", "PUT", "PATCH", "DELETE"):
            assert "cross_site_request" in responses["403"]["description"], label
            assert "unsupported_media_type" in responses["415"]["description"], label
        if "{" in label:
            assert "404" in responses, label
    for label in ("POST /api/auth/signup", "POST /api/auth/login", "POST /api/auth/logout"):
        assert "403" in operations[label]["responses"], label
    assert "too_many_tables" in operations["POST /api/tables"]["responses"]["429"]["description"]
