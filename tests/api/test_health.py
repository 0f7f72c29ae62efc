from fastapi.testclient import TestClient

from app.main import create_app, drain
from tests.api.support import Api


def test_health_answers_ok() -> None:
    # The defaults, as served by bash scripts/run.sh: on 127.0.0.1:8000 with the embedded key.
    with TestClient(create_app(), base_url="http://127.0.0.1:8000") as client:
        response = client.get("/api/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


async def test_readiness_fails_at_once_when_the_server_drains_while_liveness_stays(api: Api) -> None:
    """``/api/ready`` is the readiness probe, ``/api/health`` the liveness one (docs/operations.md):
    a draining server (SIGTERM) is alive but takes nothing new, and says so with a retryable 503."""
    client = await api.signed_up("drainer")
    assert (await client.get("/api/ready")).status_code == 200
    await drain(api.app)
    ready = await client.get("/api/ready")
    assert ready.status_code == 503 and ready.json()["detail"].startswith("draining")
    assert (await client.get("/api/health")).json() == {"status": "ok"}
    opened = await client.post("/api/tables", json={"stake": 0})
    assert opened.status_code == 503 and opened.json()["detail"].startswith("draining")
    assert opened.headers["retry-after"] == "1"
