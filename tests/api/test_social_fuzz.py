"""schemathesis against the routes of seasons, friends, challenges, notices and Web Push (the feed's
stream aside: it never ends), in-process: no 500s, no undocumented status codes, answers that match
their schemas; each case sent without a session and again as a signed-in player. (Schema-valid data
that the strict types refuse, such as 5.0 for an integer, is not counted as a failure.)"""

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
from schemathesis.specs.openapi.checks import positive_data_acceptance

from app.api.deps import COOKIE_NAME
from app.cli import create_admin
from app.config import Settings
from app.main import create_app
from tests.api.support import PASSWORD, SECRET
from tests.limits import RELAXED_LIMITS

SOCIAL_PATHS = r"^/api/(seasons|friends|blocks|challenges|notices$|push/)"
EXAMPLES_PER_OPERATION = int(os.environ.get("DURAK_FUZZ_EXAMPLES", "25"))


@pytest.fixture
def target(database_url: str, cheap_hashing: None) -> Iterator[tuple[schemathesis.BaseSchema, str]]:
    asyncio.run(create_admin(database_url, "fuzzsocial", PASSWORD, 1000))
    app = create_app(Settings(database_url=database_url, secret_key=SECRET, **RELAXED_LIMITS))
    try:
        with asgi.get_client(app) as client:
            response = client.post("/api/auth/login", json={"name": "fuzzsocial", "password": PASSWORD})
            assert response.status_code == 200, response.text
            cookie = response.cookies[COOKIE_NAME]
            client.post("/api/auth/signup", json={"name": "friendly", "password": PASSWORD})
        yield schemathesis.openapi.from_asgi("/openapi.json", app).include(path_regex=SOCIAL_PATHS), cookie
    finally:
        asgi.shutdown_lifespans()


def test_social_routes_conform_to_their_schema(target: tuple[schemathesis.BaseSchema, str]) -> None:
    schema, cookie = target
    operations = [result.ok() for result in schema.get_all_operations()]
    labels = {op.label for op in operations}
    assert {"GET /api/seasons", "POST /api/friends/{name}/challenge", "POST /api/push/subscriptions"} <= labels
    assert "GET /api/notices/stream" not in labels

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
            # Types are strict (docs/api.md): 5.0 is no seat count, though JSON Schema calls it an integer.
            case.call_and_validate(excluded_checks=[positive_data_acceptance])
            if not (case.cookies or {}).get(COOKIE_NAME):
                case.call_and_validate(cookies={COOKIE_NAME: cookie}, excluded_checks=[positive_data_acceptance])

        check()
