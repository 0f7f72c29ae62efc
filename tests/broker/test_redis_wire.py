"""Our own Redis connections (``app/broker/redis_wire.py``) log in by themselves: the URL's
database, user and password, client name and TLS, on real redis-servers."""

from __future__ import annotations

import asyncio
import ssl
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from app.broker import BrokerOptions, BrokerUnavailable, Message, open_broker
from app.broker.redis_wire import Commands, RedisTarget, pack_command
from app.store.redis import RedisStore
from tests.broker.conftest import OwnRedis, free_port, next_event, redis_server_binary, running
from tests.services import require_redis


def test_a_url_says_where_and_how_to_log_in() -> None:
    target = RedisTarget.from_url("redis://alice:p%40ss@cache.example:6380/3?client_name=durak-1")
    assert (target.host, target.port, target.path, target.db) == ("cache.example", 6380, None, 3)
    assert (target.username, target.password, target.client_name, target.tls) == ("alice", "p@ss", "durak-1", None)
    assert target.handshake() == [
        ("AUTH", "alice", "p@ss"),
        ("SELECT", 3),
        ("CLIENT", "SETNAME", "durak-1"),
        ("PING",),
    ]
    assert "p@ss" not in repr(target) and "p@ss" not in str(target)

    plain = RedisTarget.from_url("redis://127.0.0.1")
    assert (plain.host, plain.port, plain.db, plain.handshake()) == ("127.0.0.1", 6379, 0, [("PING",)])
    assert RedisTarget.from_url("redis://:secret@h/0").handshake() == [("AUTH", "secret"), ("PING",)]

    unix = RedisTarget.from_url("unix:///run/redis/redis.sock?db=2&password=pw")
    assert (unix.path, unix.db) == ("/run/redis/redis.sock", 2)
    assert unix.handshake() == [("AUTH", "pw"), ("SELECT", 2), ("PING",)]

    tls = RedisTarget.from_url("rediss://h:6380/0")
    assert tls.tls is not None and tls.tls.verify_mode == ssl.CERT_REQUIRED and tls.tls.check_hostname
    unverified = RedisTarget.from_url("rediss://h:6380/0?ssl_cert_reqs=none")
    assert unverified.tls is not None and unverified.tls.verify_mode == ssl.CERT_NONE

    for bad in ("http://h/0", "redis://h/zero", "unix://?db=0", "rediss://h/0?ssl_cert_reqs=maybe"):
        with pytest.raises(ValueError):
            RedisTarget.from_url(bad)


@pytest.mark.redis
async def test_the_database_in_the_url_is_selected() -> None:
    url = require_redis()
    server = RedisTarget.from_url(url)
    key = f"test:wire:{uuid.uuid4().hex}"
    commands = Commands(RedisTarget.from_url(f"redis://{server.host}:{server.port}/7"), 2, 2)
    on_7 = Redis(host=server.host, port=server.port, db=7)
    on_0 = Redis(host=server.host, port=server.port, db=0)
    try:
        assert await commands.call(pack_command("SET", key, "here"), 1, "SET") == [b"OK"]
        assert await on_7.get(key) == b"here"
        assert await on_0.get(key) is None
    finally:
        await commands.aclose()
        await on_7.delete(key)
        await on_7.aclose()
        await on_0.aclose()


@pytest.mark.redis
async def test_users_and_passwords_are_checked_and_a_wrong_one_is_refused_clearly(own_redis: OwnRedis) -> None:
    # A private server: the ACL user exists only there and goes away with it.
    admin = Redis.from_url(own_redis.url)
    try:
        await admin.acl_setuser("durak-test", enabled=True, passwords=["+right"], keys=["*"], channels=["*"],
                                commands=["+@all"])
    finally:
        await admin.aclose()
    base = f"127.0.0.1:{own_redis.port}/0"
    name = f"durak-wire-{uuid.uuid4().hex[:8]}"
    commands = Commands(RedisTarget.from_url(f"redis://durak-test:right@{base}?client_name={name}"), 2, 2)
    try:
        assert await commands.call(pack_command("ACL", "WHOAMI"), 1, "WHOAMI") == [b"durak-test"]
        [names] = await commands.call(pack_command("CLIENT", "GETNAME"), 1, "GETNAME")
        assert names == name.encode()
    finally:
        await commands.aclose()

    wrong = Commands(RedisTarget.from_url(f"redis://durak-test:wrong@{base}"), 2, 2)
    with pytest.raises(BrokerUnavailable, match=r"redis refused AUTH as user 'durak-test'.*WRONGPASS") as refused:
        await wrong.call(pack_command("PING"), 1, "PING")
    assert "wrong" not in str(refused.value)  # the password is never in the message
    await wrong.aclose()

    broker = open_broker(f"redis://durak-test:wrong@{base}", BrokerOptions(connect_timeout_s=2))
    with pytest.raises(BrokerUnavailable, match="WRONGPASS"):
        await broker.start()
    assert not broker.healthy

    async with open_broker(f"redis://durak-test:right@{base}", BrokerOptions(prefix="acl:")) as broker:
        async with broker.subscribe("c") as sub:
            await broker.publish("c", "logged in")
            assert await next_event(sub) == Message("c", b"logged in")
        assert await broker.acquire_lease("L", "me", 5) is not None

        broker.publish_nowait([("c", "muted")])  # the user may turn replies off (CLIENT REPLY)

    # A user who may not turn replies off is told so when the broker starts, naming the command.
    admin = Redis.from_url(own_redis.url)
    try:
        await admin.acl_setuser("durak-chatty", enabled=True, passwords=["+right"], keys=["*"], channels=["*"],
                                commands=["+@all", "-client|reply"])
    finally:
        await admin.aclose()
    chatty = open_broker(f"redis://durak-chatty:right@{base}", BrokerOptions(prefix="acl:", connect_timeout_s=2))
    with pytest.raises(BrokerUnavailable, match=r"publishing connection.*redis refused CLIENT REPLY.*NOPERM"):
        await chatty.start()
    assert not chatty.healthy

    store = RedisStore(f"redis://durak-test:right@{base}", prefix="acl:")
    try:
        await store.save("T", 1, {"spec": {"watch_code": "W", "private": True}, "version": 0}, [], create=True)
        await store.append("T", 1, {"version": 1, "deadline": None}, '{"a":1}', 0)  # the own connection
        assert (await store.load("T"))[1] == ['{"a":1}']  # type: ignore[index]
    finally:
        await store.close()


@pytest.fixture
def tls_redis(tmp_path: Path) -> Iterator[tuple[OwnRedis, int, Path]]:
    """A private redis-server that also listens with TLS (a self-signed certificate for 127.0.0.1)."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    try:
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
             "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
             "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
            check=True, capture_output=True,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"cannot make a test certificate with openssl: {exc}")
    tls_port = free_port()
    server = OwnRedis(
        redis_server_binary(),
        ("--tls-port", str(tls_port), "--tls-cert-file", str(cert), "--tls-key-file", str(key),
         "--tls-ca-cert-file", str(cert), "--tls-auth-clients", "no"),
    )
    try:
        with running(server):
            yield server, tls_port, cert
    except RuntimeError as exc:  # a redis-server built without TLS does not start with these options
        pytest.skip(f"redis-server with TLS did not start: {exc}")


@pytest.mark.redis
async def test_rediss_connects_with_tls_and_checks_the_certificate(tls_redis: tuple[OwnRedis, int, Path]) -> None:
    _, port, cert = tls_redis
    trusted = f"rediss://localhost:{port}/0?ssl_ca_certs={cert}"
    async with open_broker(trusted, BrokerOptions(prefix="tls:")) as broker, broker.subscribe("c") as sub:
        await broker.publish("c", "sealed")
        assert await next_event(sub) == Message("c", b"sealed")

    untrusted = Commands(RedisTarget.from_url(f"rediss://localhost:{port}/0"), 2, 2)
    with pytest.raises(BrokerUnavailable, match="CERTIFICATE_VERIFY_FAILED"):
        await untrusted.call(pack_command("PING"), 1, "PING")
    await untrusted.aclose()


async def test_a_server_that_hangs_up_or_never_answers_the_handshake_is_unavailable() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1)
        writer.close()

    async def stay_silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await reader.read(1 << 16):  # reads the handshake, answers nothing, until the client leaves
            pass
        writer.close()

    for handler, message in ((hang_up, "connection closed by redis"), (stay_silent, "cannot connect")):
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        commands = Commands(RedisTarget.from_url(f"redis://127.0.0.1:{port}/0"), connect_timeout_s=0.3,
                            command_timeout_s=0.3)
        try:
            with pytest.raises(BrokerUnavailable, match=message):
                await commands.call(pack_command("PING"), 1, "PING")
        finally:
            await commands.aclose()
            server.close()


@pytest.mark.redis
def test_the_wire_works_on_uvloop_as_under_python_m_app() -> None:
    uvloop = pytest.importorskip("uvloop")
    url = require_redis()

    async def publish_and_receive() -> None:
        options = BrokerOptions(prefix=f"test:{uuid.uuid4().hex}:")
        async with open_broker(url, options) as broker, broker.subscribe("c") as sub:
            await broker.publish_many([("c", "on"), ("c", "uvloop")])
            assert [await next_event(sub), await next_event(sub)] == [Message("c", b"on"), Message("c", b"uvloop")]

    uvloop.run(publish_and_receive())


@pytest.mark.redis
@pytest.mark.parametrize("written", [False, True], ids=["before-the-write", "after-the-write"])
async def test_a_command_of_a_process_that_was_stopped_gets_its_reply(written: bool) -> None:
    """The process stops (SIGSTOP, a stalled machine: here the event loop is blocked) with a command
    on its way, longer than the command's timeout. When it runs again the timer has long passed, but
    Redis was never given the process's time to answer: the reply is taken, not a timeout (a move
    saved just before a freeze was answered "unavailable" while the store had it)."""
    url = require_redis()
    commands = Commands(RedisTarget.from_url(url), connect_timeout_s=2, command_timeout_s=0.2)
    try:
        assert await commands.call(pack_command("PING"), 1, "PING") == [b"PONG"]
        loop = asyncio.get_running_loop()
        pipe = commands._pipe
        assert pipe is not None
        request = pipe.request

        def request_then_stop(data: bytes, count: int) -> Any:
            if not written:  # stopped before the command leaves (it is written at the end of the turn)
                loop.call_soon(time.sleep, 0.6)
            fut = request(data, count)
            if written:  # stopped right after it left: Redis answers while the process is stopped
                loop.call_soon(time.sleep, 0.6)
            return fut

        pipe.request = request_then_stop  # type: ignore[method-assign]
        started = time.monotonic()
        assert await commands.call(pack_command("ECHO", "after the freeze"), 1, "ECHO") == [b"after the freeze"]
        assert time.monotonic() - started >= 0.6  # the freeze did happen while the command waited
    finally:
        await commands.aclose()


@pytest.mark.redis
async def test_a_command_that_gets_no_reply_in_the_process_s_own_time_still_fails() -> None:
    url = require_redis()
    commands = Commands(RedisTarget.from_url(url), connect_timeout_s=2, command_timeout_s=0.2)
    try:
        started = time.monotonic()
        with pytest.raises(BrokerUnavailable, match="did not answer"):
            await commands.call(pack_command("BLPOP", f"test:wire:{uuid.uuid4().hex}", "2"), 1, "BLPOP")
        assert time.monotonic() - started < 1.0
    finally:
        await commands.aclose()
