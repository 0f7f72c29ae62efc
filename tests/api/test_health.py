from fastapi.testclient import TestClient

from app.main import create_app


def test_health_answers_ok() -> None:
    # The defaults, as served by bash scripts/run.sh: on 127.0.0.1:8000 with the embedded key.
    with TestClient(create_app(), base_url="http://127.0.0.1:8000") as client:
        response = client.get("/api/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
