"""What every operation can answer, in the OpenAPI: each route declares the answers its own code
gives (``responses=`` with ``app/api/errors.responses``); this module adds, to every operation,
those that the layers around the routes give, generated from what each layer refuses:

* ``BrowserGuard`` (app/api/security.py): 403 ``cross_site_request`` and 415
  ``unsupported_media_type`` to every state-changing request (POST, PUT, PATCH, DELETE); 404
  ``not_found`` to a NUL in a path (operations with path parameters); 422 to a NUL in a query string
  (any operation);
* ``BodySizeLimit`` (app/api/body_limit.py): 413 to a body past the limit (any request);
* ``WeakKeyGuard`` (app/api/security.py): 503 ``weak_secret_key`` to a connection from beyond this
  machine while the server has a weak key (any request);
* the sign-in dependencies (app/api/deps.py): 401 without a session, 403 for a guest where an
  account is needed or a player where an admin is.

An answer the route lists already keeps its description, and the layer's reason is added to it.
``tests/api/test_api_docs.py`` checks the routes' own lists against what their code raises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts

from app.api import deps
from app.api.body_limit import MAX_BODY_BYTES
from app.api.security import STATE_CHANGING

Answer = tuple[int, str, dict[str, Any]]  # status, description, content

ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}}
CODED = {"application/json": {"schema": {"$ref": "#/components/schemas/CodedErrorOut"}}}
CODED_SCHEMA = {
    "title": "CodedErrorOut",
    "type": "object",
    "properties": {
        "detail": {"type": "string", "title": "Detail", "description": "`<code>: <why>`"},
        "code": {"type": "string", "title": "Code", "description": "A stable code for the refusal."},
    },
    "required": ["detail", "code"],
}

# (status, description, content) by the layer that answers it.
CROSS_SITE = (403, "`cross_site_request`: the request comes from another origin's page (docs/security.md).", CODED)
NOT_JSON = (415, "`unsupported_media_type`: a request body that is not `application/json`.", CODED)
NUL_IN_PATH = (404, "`not_found`: a path parameter holds a NUL character (`%00`).", CODED)
VALIDATION = {"application/json": {"schema": {"$ref": "#/components/schemas/HTTPValidationError"}}}
NUL_IN_QUERY = (422, "A query parameter holds a NUL character (`%00`); `loc` is `[\"query\"]`.", VALIDATION)
TOO_LARGE = (413, f"The request body is larger than {MAX_BODY_BYTES} bytes.", ERROR)
WEAK_KEY = (
    503,
    "`weak_secret_key`: the server runs with a weak DURAK_SECRET_KEY and serves only its own machine.",
    CODED,
)
NOT_SIGNED_IN = (401, "No valid session cookie.", ERROR)
NOT_AN_ACCOUNT = (403, "A guest: this needs an account.", ERROR)
NOT_AN_ADMIN = (403, "Admins only.", ERROR)

# The sign-in dependencies and what each refuses with.
DEPENDENCY_ANSWERS: dict[Callable[..., Any], tuple[Answer, ...]] = {
    deps.get_current_user: (NOT_SIGNED_IN,),
    deps.get_current_account: (NOT_SIGNED_IN, NOT_AN_ACCOUNT),
    deps.get_admin_account: (NOT_SIGNED_IN, NOT_AN_ADMIN),
}


def layer_answers(route: APIRoute, path: str, method: str) -> list[Answer]:
    """What the layers around ``route`` (at ``path``) can answer to a ``method`` request."""
    answers = [TOO_LARGE, NUL_IN_QUERY, WEAK_KEY]
    if method in STATE_CHANGING:
        answers += [CROSS_SITE, NOT_JSON]
    if "{" in path:
        answers.append(NUL_IN_PATH)
    answers += [answer for call in _calls(route.dependant) for answer in DEPENDENCY_ANSWERS.get(call, ())]
    return answers


def _calls(dependant: Dependant) -> list[Callable[..., Any]]:
    found: list[Callable[..., Any]] = []
    for sub in dependant.dependencies:
        if sub.call is not None:
            found.append(sub.call)
        found += _calls(sub)
    return found


def document_answers(app: FastAPI) -> None:
    """Add the layers' answers to every operation of ``app``'s OpenAPI (generated once)."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = generate()
            schema.setdefault("components", {}).setdefault("schemas", {})["CodedErrorOut"] = CODED_SCHEMA
            for context in iter_route_contexts(app.routes):  # the routes of the included routers too
                route, path = context.original_route, context.path_format
                if not isinstance(route, APIRoute) or not route.include_in_schema or path is None:
                    continue
                for method in context.methods or ():
                    operation = schema["paths"].get(path, {}).get(method.lower())
                    if operation is not None:
                        _add(operation["responses"], layer_answers(route, path, method))
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _add(listed: dict[str, Any], answers: list[Answer]) -> None:
    for status, description, content in answers:
        entry = listed.get(str(status))
        if entry is None:
            listed[str(status)] = {"description": description, "content": content}
        elif description not in entry.get("description", ""):
            entry["description"] = f"{entry.get('description', '').rstrip()} Or: {description}".strip()
