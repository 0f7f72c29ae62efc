"""``python -m app``: check the secret key, apply migrations, then serve on the configured host and
port. Off a loopback address the server refuses to start with the default or a short secret key."""

from __future__ import annotations

import uvicorn

from app.api.security import secret_key_problem
from app.api.uvicorn_protocol import WebSocketProtocol
from app.config import get_settings
from app.db.migrate import upgrade_sync


def main() -> None:
    settings = get_settings()
    problem = secret_key_problem(settings)
    if problem is not None:
        raise SystemExit(f"durak: {problem}")
    upgrade_sync(settings.database_url)  # the schema only ever comes from the migrations
    uvicorn.run(
        "app.main:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        ws=WebSocketProtocol,  # uvicorn's sans-I/O protocol plus direct text frames (see the module)
        ws_per_message_deflate=False,
        ws_max_size=64 * 1024,
        forwarded_allow_ips=settings.forwarded_allow_ips,  # whose X-Forwarded-Proto decides Secure cookies
    )


if __name__ == "__main__":
    main()
