"""Web Push against a local push endpoint (no outside network): the encryption is RFC 8291's to the
byte, every push carries a valid VAPID signature for its endpoint and decrypts with the browser's own
keys; a friend's challenge and "your turn" (once a reconnect grace has started) reach a closed tab;
subscriptions are checked before the server would ever POST to them."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from py_vapid import Vapid02
from sqlalchemy import func, select

from app import push
from app.api.turn_push import AwayTurns
from app.config import Settings
from app.db.models import PushSubscription
from app.main import create_app
from tests.api.support import SECRET, Api
from tests.limits import RELAXED_LIMITS
from tests.support.wait import eventually

# RFC 8291, section 5 and appendix A: "When I grow up, I want to be a watermelon".
RFC = {
    "plaintext": b"When I grow up, I want to be a watermelon",
    "as_private": "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw",
    "ua_public": "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4",
    "ua_private": "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94",
    "salt": "DGv6ra1nlYgDCS1FRnbzlw",
    "auth": "BTBZMqHH6r4Tts7J_aSIgg",
    "body": "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6"
    "PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN",
}


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_the_encryption_is_rfc_8291s_worked_example_byte_for_byte() -> None:
    server_key = ec.derive_private_key(int.from_bytes(unb64(RFC["as_private"]), "big"), ec.SECP256R1())
    body = push.encrypt(
        RFC["plaintext"], unb64(RFC["ua_public"]), unb64(RFC["auth"]), salt=unb64(RFC["salt"]), server_key=server_key
    )
    assert b64(body) == RFC["body"]


# ---------------------------------------------------------------------- a browser and its push service


@dataclass
class Browser:
    """A browser's push keys, and what its push service received (as the browser would read it)."""

    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    auth: bytes = field(default_factory=lambda: os.urandom(16))

    @property
    def p256dh(self) -> bytes:
        return self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )

    def decrypt(self, body: bytes) -> dict[str, Any]:
        """The browser's side of RFC 8291, written from the RFC (not with the server's code)."""
        salt, record_size, id_length = body[:16], int.from_bytes(body[16:20], "big"), body[20]
        assert record_size == 4096 and id_length == 65
        sender = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), body[21:86])
        shared = self.key.exchange(ec.ECDH(), sender)
        prk = hmac.new(self.auth, shared, hashlib.sha256).digest()
        info = b"WebPush: info\x00" + self.p256dh + body[21:86] + b"\x01"
        ikm = hmac.new(prk, info, hashlib.sha256).digest()
        prk2 = hmac.new(salt, ikm, hashlib.sha256).digest()
        key = hmac.new(prk2, b"Content-Encoding: aes128gcm\x00\x01", hashlib.sha256).digest()[:16]
        nonce = hmac.new(prk2, b"Content-Encoding: nonce\x00\x01", hashlib.sha256).digest()[:12]
        plain = AESGCM(key).decrypt(nonce, body[86:], None)
        assert plain.endswith(b"\x02")  # the last (only) record's delimiter
        message: dict[str, Any] = json.loads(plain[:-1])
        return message


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class PushService:
    """A local push endpoint: takes the encrypted POSTs and answers as a push service does (201, or
    410 for a subscription it dropped)."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.gone: set[str] = set()
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                service.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(410 if self.path in service.gone else 201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def to(self, path: str) -> list[Received]:
        return [item for item in self.received if item.path == path]


@pytest.fixture
def service() -> Iterator[PushService]:
    running = PushService()
    try:
        yield running
    finally:
        running.close()


@pytest.fixture
async def social(database_url: str, cheap_hashing: None) -> AsyncIterator[Api]:
    settings = Settings(
        database_url=database_url,
        secret_key=SECRET,
        push_hosts=["127.0.0.1"],
        push_allow_http=True,
        vapid_subject="mailto:ops@durak.test",
        **RELAXED_LIMITS,
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        yield Api(app=app, settings=settings)


async def subscribe(client: httpx.AsyncClient, endpoint: str, browser: Browser, lang: str = "en") -> None:
    body = {"endpoint": endpoint, "keys": {"p256dh": b64(browser.p256dh), "auth": b64(browser.auth)}, "lang": lang}
    response = await client.post("/api/push/subscriptions", json=body)
    assert response.status_code == 201, response.text


def check_vapid(item: Received, service: PushService, public_key: str) -> None:
    authorization = item.headers["authorization"]
    assert authorization.startswith("vapid t=") and f"k={public_key}" in authorization
    assert Vapid02.verify(authorization)  # signed by the key the server publishes
    token = authorization.split("t=", 1)[1].split(",", 1)[0]
    claims = json.loads(unb64(token.split(".")[1]))
    assert claims["aud"] == service.base and claims["sub"] == "mailto:ops@durak.test"
    assert item.headers["content-encoding"] == "aes128gcm" and int(item.headers["ttl"]) > 0


async def test_a_challenge_reaches_the_friends_browser_encrypted_and_signed(social: Api, service: PushService) -> None:
    alice, bob = await social.signed_up("alice"), await social.signed_up("bob")
    await alice.post("/api/friends/bob")
    await bob.post("/api/friends/alice")
    phone = Browser()
    await subscribe(bob, f"{service.base}/bob-phone", phone, lang="ru")
    public_key = (await social.client().get("/api/push/key")).json()["public_key"]
    made = await alice.post("/api/friends/bob/challenge", json={"deck": 24, "stake": 0})
    assert made.status_code == 201

    await eventually(lambda: bool(service.to("/bob-phone")), timeout=10, what="the push arrived", every=0.02)
    [item] = service.to("/bob-phone")
    check_vapid(item, service, public_key)
    notice = phone.decrypt(item.body)
    assert notice["kind"] == "challenge" and notice["params"]["name"] == "alice" and notice["params"]["deck"] == 24
    assert notice["lang"] == "ru" and notice["url"] == "/#/friends"


async def test_a_dropped_subscription_is_forgotten(social: Api, service: PushService) -> None:
    bob = await social.signed_up("bob")
    browser = Browser()
    await subscribe(bob, f"{service.base}/old", browser)
    service.gone.add("/old")
    sender: push.PushSender = social.app.state.push
    bob_id = int((await bob.get("/api/me")).json()["id"])
    assert await sender.notify(bob_id, push.tournament_notice("Friday cup", 5, "/#/")) == 0
    async with social.db.session() as session:
        assert await session.scalar(select(func.count()).select_from(PushSubscription)) == 0


async def test_your_turn_is_pushed_once_when_the_grace_starts(social: Api, service: PushService) -> None:
    alice, bob = await social.signed_up("alice"), await social.signed_up("bob")
    devices = {"alice": Browser(), "bob": Browser()}
    await subscribe(alice, f"{service.base}/alice", devices["alice"])
    await subscribe(bob, f"{service.base}/bob", devices["bob"])
    code = (await alice.post("/api/tables", json={"name": "Night game", "timer": 0})).json()["code"]
    for client in (alice, bob):  # nobody has the table open: each is away from the start
        assert (await client.post(f"/api/tables/{code}/join", json={})).status_code == 200

    async def deciding() -> str | None:
        table = (await alice.get(f"/api/tables/{code}")).json()
        graced = [seat["name"] for seat in table["seats"] if seat.get("deadline_kind") == "grace"]
        return graced[0] if table["status"] == "playing" and graced else None

    await eventually(deciding, what="the match waits for someone away", every=0.02)
    away = await deciding()
    assert away is not None
    await eventually(lambda: bool(service.to(f"/{away}")), timeout=10, what="the push arrived", every=0.02)
    notice = devices[away].decrypt(service.to(f"/{away}")[0].body)
    assert notice["kind"] == "your_turn" and notice["params"]["table"] == "Night game"
    grace_s = social.settings.decisions.disconnect_grace_s
    assert notice["url"] == f"/t/{code}" and 0 < notice["params"]["seconds"] <= grace_s
    other = "bob" if away == "alice" else "alice"
    # more changes of the same decision tell nobody again: the watcher, called as after any change,
    # starts no push (one would be a task of the sender's at once)
    sender: push.PushSender = social.app.state.push
    await eventually(lambda: not sender._tasks, what="the first push is done")
    registry = social.app.state.tables
    [away_turns] = [watch for watch in registry.change_watchers if isinstance(watch, AwayTurns)]
    away_turns(registry.tables[code])
    assert not sender._tasks
    assert len(service.to(f"/{away}")) == 1 and service.to(f"/{other}") == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"endpoint": "https://evil.example.com/push/1"}, "endpoint"),
        ({"endpoint": "ftp://127.0.0.1/push"}, "endpoint"),
        ({"endpoint": "http://user:pw@127.0.0.1/push"}, "endpoint"),
        ({"keys": {"p256dh": "A" * 87, "auth": "B" * 22}}, "keys"),
        ({"keys": {"p256dh": b64(Browser().p256dh), "auth": "short"}}, "auth"),
        ({"lang": "xx"}, "lang"),
        ({"endpoint": "http://127.0.0.1/\x00"}, "endpoint"),
    ],
)
async def test_bad_subscriptions_are_refused(
    social: Api, service: PushService, change: dict[str, Any], field: str
) -> None:
    bob = await social.signed_up("bob")
    browser = Browser()
    body = {"endpoint": f"{service.base}/x", "keys": {"p256dh": b64(browser.p256dh), "auth": b64(browser.auth)}}
    response = await bob.post("/api/push/subscriptions", json={**body, **change})
    assert response.status_code == 422, response.text
    assert field in json.dumps(response.json()["detail"])


async def test_who_may_subscribe_and_unsubscribe(social: Api, service: PushService) -> None:
    browser = Browser()
    body = {"endpoint": f"{service.base}/g", "keys": {"p256dh": b64(browser.p256dh), "auth": b64(browser.auth)}}
    assert (await social.client().post("/api/push/subscriptions", json=body)).status_code == 401
    assert (await (await social.guest("guesty")).post("/api/push/subscriptions", json=body)).status_code == 403
    bob = await social.signed_up("bob")
    assert (await bob.post("/api/push/subscriptions", json=body)).status_code == 201
    gone = await bob.request("DELETE", "/api/push/subscriptions", json={"endpoint": body["endpoint"]})
    assert gone.status_code == 204
    again = await bob.request("DELETE", "/api/push/subscriptions", json={"endpoint": body["endpoint"]})
    assert again.status_code == 404


async def test_the_vapid_key_is_made_once_and_shared(social: Api, database_url: str) -> None:
    first = push.public_key_of(await push.vapid_key(social.db, ""))
    assert first == (await social.client().get("/api/push/key")).json()["public_key"]
    assert push.public_key_of(await push.vapid_key(social.db, "")) == first  # the stored one, every time
    configured = push.b64url(
        ec.generate_private_key(ec.SECP256R1()).private_numbers().private_value.to_bytes(32, "big")
    )
    assert push.public_key_of(await push.vapid_key(social.db, configured)) != first


async def test_a_device_subscribed_after_a_notice_found_none_gets_the_next_one(
    social: Api, service: PushService
) -> None:
    bob = await social.signed_up("bob")
    bob_id = int((await bob.get("/api/me")).json()["id"])
    sender: push.PushSender = social.app.state.push
    notice = push.your_turn_notice("Night game", "c0de" * 5, 42)
    assert await sender.notify(bob_id, notice) == 0  # nobody to tell: not asked again for a minute
    device = Browser()
    await subscribe(bob, f"{service.base}/late", device)
    assert await sender.notify(bob_id, notice) == 1
    assert device.decrypt(service.to("/late")[0].body)["params"] == {"table": "Night game", "seconds": 42}
