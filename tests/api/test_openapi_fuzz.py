"""schemathesis against the OpenAPI schema, in-process: no 500s, no undocumented status codes,
responses that match their schemas.

Each operation gets positive and negative examples; every case is sent as generated (usually
without a session) and again with an admin's session cookie, so the admin routes are explored past
the 401. (Driven from a plain test through hypothesis rather than schemathesis' pytest plugin, which
does not run under this pytest version.)
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.python import asgi

from app.api.deps import COOKIE_NAME
from app.cli import create_admin
from app.config import Settings
from app.main import create_app
from tests.api.support import PASSWORD, SECRET
from tests.limits import RELAXED_LIMITS

OUR_PATHS = r"^/api/(auth/|me$|me/integrity$|matches|admin/)"
EXAMPLES_PER_OPERATION = int(os.environ.get("DURAK_FUZZ_EXAMPLES", "40"))  # raise it to dig deeper


@pytest.fixture
def target(database_url: str, cheap_hashing: None) -> Iterator[tuple[schemathesis.BaseSchema, str]]:
    asyncio.run(create_admin(database_url, "fuzzadmin", PASSWORD, 1000))
    app = create_app(Settings(database_url=database_url, secret_key=SECRET, **RELAXED_LIMITS))
    try:
        with asgi.get_client(app) as client:
            response = client.post("/api/auth/login", json={"name": "fuzzadmin", "password": PASSWORD})
            assert response.status_code == 200, response.text
            cookie = response.cookies[COOKIE_NAME]
        yield schemathesis.openapi.from_asgi("/openapi.json", app).include(path_regex=OUR_PATHS), cookie
    finally:
        asgi.shutdown_lifespans()


def test_api_conforms_to_its_schema(target: tuple[schemathesis.BaseSchema, str]) -> None:
    schema, admin_cookie = target
    operations = [result.ok() for result in schema.get_all_operations()]
    labels = {op.label for op in operations}
    assert {
        "POST /api/auth/signup",
        "GET /api/matches/{match_id}/replay",
        "GET /api/matches/{match_id}/analysis",
        "GET /api/admin/reports",
        "POST /api/admin/matches/{match_id}/reverse",
        "GET /api/me/integrity",
        "POST /api/auth/guest/name",
    } <= labels
    assert len(operations) == 24, labels

    for operation in operations:
        strategy = st.one_of(
            operation.as_strategy(GenerationMode.POSITIVE), operation.as_strategy(GenerationMode.NEGATIVE)
        )

        @given(case=strategy)
        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def check(case: schemathesis.Case) -> None:
            case.call_and_validate()
            if not (case.cookies or {}).get(COOKIE_NAME):
                case.call_and_validate(cookies={COOKIE_NAME: admin_cookie})

        check()
