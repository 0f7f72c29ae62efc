"""The uvicorn internals that ``app/api/uvicorn_protocol.py`` builds on are still there, with the
shapes it expects. A uvicorn upgrade that changes them fails here, naming that file, instead of
at run time on the first websocket. (``tests/api/test_uvicorn_protocol.py`` then checks the
behaviour under a real server.)"""

from __future__ import annotations

import asyncio
import inspect
import re
from typing import Any

import pytest
import uvicorn
import websockets
from uvicorn.config import Config
from uvicorn.protocols.websockets import websockets_sansio_impl
from uvicorn.server import ServerState

from app.api.uvicorn_protocol import WebSocketProtocol

WHERE = "app/api/uvicorn_protocol.py"
HINT = (
    f"{WHERE} subclasses uvicorn's WebSocketsSansIOProtocol and uses its internals; uvicorn "
    f"{uvicorn.__version__} (websockets {websockets.__version__}) changed"
)

# method -> the parameters (after self) the subclass calls or overrides it with
METHODS: dict[str, list[str]] = {
    "handle_connect": ["event"],
    "send_receive_event_to_app": [],
    "handle_parser_exception": [],
}

# attribute -> what it must be on a fresh protocol (None: only set later, checked in the source)
ATTRIBUTES: dict[str, Any] = {
    "queue": asyncio.Queue,
    "read_paused": bool,
    "transport": None,  # set by connection_made
    "close_sent": bool,
    "handshake_complete": bool,
    "initial_response": type(None),
    "frames": list,
    "curr_msg_data_type": str,
    "conn": websockets.ServerProtocol,
    "scope": None,  # built by handle_connect
    "request": None,  # both set by handle_connect, dropped once the handshake is done
    "response": None,
}


def test_the_base_class_is_where_the_protocol_imports_it_from() -> None:
    base = getattr(websockets_sansio_impl, "WebSocketsSansIOProtocol", None)
    assert base is not None, f"{HINT}: websockets_sansio_impl has no WebSocketsSansIOProtocol"
    assert WebSocketProtocol.__mro__[1] is base, f"{HINT}: WebSocketProtocol no longer derives from it directly"


@pytest.mark.parametrize("name", sorted(METHODS))
def test_each_method_it_overrides_or_calls_keeps_its_signature(name: str) -> None:
    base = websockets_sansio_impl.WebSocketsSansIOProtocol
    method = getattr(base, name, None)
    assert callable(method), f"{HINT}: WebSocketsSansIOProtocol.{name} is gone"
    params = list(inspect.signature(method).parameters)[1:]
    assert params == METHODS[name], f"{HINT}: WebSocketsSansIOProtocol.{name} now takes {params}, not {METHODS[name]}"


@pytest.mark.parametrize("name", sorted(ATTRIBUTES))
def test_each_attribute_it_reads_or_writes_is_still_kept(name: str) -> None:
    source = inspect.getsource(websockets_sansio_impl.WebSocketsSansIOProtocol)
    assert re.search(rf"self\.{name}\b\s*(:[^=\n]+)?=", source), (
        f"{HINT}: WebSocketsSansIOProtocol no longer assigns self.{name}"
    )


async def test_a_fresh_protocol_has_the_attributes_with_the_expected_types() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("never called")

    config = Config(app, ws=WebSocketProtocol, lifespan="off")
    config.load()
    protocol = WebSocketProtocol(config, ServerState(), {}, _loop=asyncio.get_running_loop())
    for name, kind in ATTRIBUTES.items():
        if kind is None:
            continue
        assert hasattr(protocol, name), f"{HINT}: a new protocol has no attribute {name!r}"
        value = getattr(protocol, name)
        assert isinstance(value, kind), f"{HINT}: {name!r} is now a {type(value).__name__}, not a {kind.__name__}"
    assert protocol.curr_msg_data_type in ("text", "bytes"), f"{HINT}: curr_msg_data_type holds other values"
    conn = protocol.conn
    assert list(inspect.signature(conn.send_close).parameters)[:1] == ["code"], f"{HINT}: conn.send_close changed"
    assert hasattr(websockets.protocol.State, "OPEN"), f"{HINT}: websockets.protocol.State.OPEN is gone"
    assert conn.state is not websockets.protocol.State.OPEN  # before the handshake, as write_text_frame assumes
