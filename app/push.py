"""Web Push: notices that reach a player whose tab is closed (a friend's challenge, a tournament about
to start, "your turn" once a reconnect grace has started).

Each notice is a small JSON document (``{kind, params, url, tag, lang}``; the page's service worker,
``web/js/push-sw.js``, words it in the player's language) encrypted for each of the account's browsers
as RFC 8291 says (``aes128gcm``: ECDH P-256 with the browser's key, HKDF-SHA256, AES-128-GCM, with
``cryptography``) and POSTed to the browser's push service with a VAPID signature (RFC 8292,
``py-vapid``). ``http-ece`` (and ``pywebpush``, which needs it) ships no wheel, and this project
installs wheels only, hence the encryption here; a test holds it to the RFC's own worked example.

The VAPID key comes from ``DURAK_VAPID_PRIVATE_KEY``, or is made on first start and kept in the
database (``server_keys``), the same for every server process. Endpoints are accepted only on the
push services of ``DURAK_PUSH_HOSTS`` (the server never POSTs elsewhere); a service that answers 404
or 410 has dropped the subscription, which goes here too.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import logging
import os
import struct
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from py_vapid import Vapid02
from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import PushSubscription, ServerKey
from app.db.session import Database

log = logging.getLogger("durak.push")

RECORD_SIZE = 4096
TTL_S = 3600  # how long a push service keeps a notice for a browser that is offline
MAX_PER_ACCOUNT = 10  # subscriptions kept per account (the oldest go)
VAPID_KEY_NAME = "vapid"
KINDS = ("challenge", "tournament_starting", "your_turn")
NO_SUBSCRIPTION_RECHECK_S = 60.0  # an account found without a subscription is not looked up again before


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# ---------------------------------------------------------------------- RFC 8291 encryption


def _hkdf(salt: bytes, ikm: bytes, info: bytes, length: int) -> bytes:
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    return hmac.new(prk, info + b"\x01", hashlib.sha256).digest()[:length]


def encrypt(
    plaintext: bytes,
    p256dh: bytes,
    auth: bytes,
    *,
    salt: bytes | None = None,
    server_key: ec.EllipticCurvePrivateKey | None = None,
) -> bytes:
    """The ``aes128gcm`` body of one push message for the browser whose public key is ``p256dh``
    (65 bytes, uncompressed) and auth secret ``auth`` (16 bytes). ``salt`` and ``server_key`` are
    fresh random ones unless given (the RFC's example gives them)."""
    if len(plaintext) > RECORD_SIZE - 17 - 86:
        raise ValueError("a push message holds at most 3993 bytes")
    salt = salt if salt is not None else os.urandom(16)
    server_key = server_key if server_key is not None else ec.generate_private_key(ec.SECP256R1())
    browser = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), p256dh)
    server_public = server_key.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    shared = server_key.exchange(ec.ECDH(), browser)
    ikm = _hkdf(auth, shared, b"WebPush: info\x00" + p256dh + server_public, 32)
    key = _hkdf(salt, ikm, b"Content-Encoding: aes128gcm\x00", 16)
    nonce = _hkdf(salt, ikm, b"Content-Encoding: nonce\x00", 12)
    ciphertext = AESGCM(key).encrypt(nonce, plaintext + b"\x02", None)
    return salt + struct.pack(">IB", RECORD_SIZE, len(server_public)) + server_public + ciphertext


# ---------------------------------------------------------------------- keys and subscriptions


def _insert(session: AsyncSession) -> Any:
    return pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert


def vapid_from(text: str) -> Vapid02:
    text = text.strip()
    if text.startswith("-----BEGIN"):
        return Vapid02.from_pem(text.encode())
    return Vapid02.from_string(text)


async def vapid_key(db: Database, configured: str) -> Vapid02:
    """The VAPID key: the configured one, or the one kept in the database (made now if none is)."""
    if configured:
        return vapid_from(configured)
    fresh = ec.generate_private_key(ec.SECP256R1()).private_numbers().private_value.to_bytes(32, "big")

    async def keep(session: AsyncSession) -> str:
        await session.execute(
            _insert(session)(ServerKey)
            .values(name=VAPID_KEY_NAME, value=b64url(fresh))
            .on_conflict_do_nothing(index_elements=["name"])
        )
        value = await session.scalar(select(ServerKey.value).where(ServerKey.name == VAPID_KEY_NAME))
        assert value is not None
        return value

    return vapid_from(await db.write(keep))


def public_key_of(vapid: Vapid02) -> str:
    """The key browsers subscribe with (``applicationServerKey``), base64url."""
    raw = vapid.public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return b64url(raw)


def endpoint_refusal(endpoint: str, hosts: list[str], allow_http: bool) -> str | None:
    """Why the server will not POST to ``endpoint``, or None."""
    parts = urlsplit(endpoint)
    if parts.scheme != "https" and not (allow_http and parts.scheme == "http"):
        return "a push endpoint is an https:// URL"
    host = (parts.hostname or "").lower()
    if not host or not any(host == allowed or host.endswith("." + allowed) for allowed in hosts):
        return "that is not a known push service"
    if parts.username or parts.password:
        return "a push endpoint carries no credentials"
    return None


def key_refusal(p256dh: str, auth: str) -> str | None:
    try:
        point, secret = unb64url(p256dh), unb64url(auth)
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    except (ValueError, TypeError):
        return "keys.p256dh is not a P-256 public key (base64url, uncompressed)"
    if len(point) != 65:
        return "keys.p256dh is not a P-256 public key (base64url, uncompressed)"
    if len(secret) != 16:
        return "keys.auth is 16 bytes, base64url"
    return None


async def subscribe(
    session: AsyncSession, *, account_id: int, endpoint: str, p256dh: str, auth: str, lang: str
) -> PushSubscription:
    """Keep a browser's subscription for the account (an endpoint seen before moves to it)."""
    values = {"account_id": account_id, "p256dh": p256dh, "auth": auth, "lang": lang}
    await session.execute(
        _insert(session)(PushSubscription)
        .values(endpoint=endpoint, **values)
        .on_conflict_do_update(index_elements=["endpoint"], set_=values)
    )
    mine = (
        await session.scalars(
            select(PushSubscription)
            .where(PushSubscription.account_id == account_id)
            .order_by(PushSubscription.id.desc())
            .execution_options(populate_existing=True)
        )
    ).all()
    for old in mine[MAX_PER_ACCOUNT:]:
        await session.delete(old)
    return next(row for row in mine if row.endpoint == endpoint)


async def unsubscribe(session: AsyncSession, *, account_id: int, endpoint: str) -> bool:
    gone = await session.execute(
        delete(PushSubscription).where(PushSubscription.account_id == account_id, PushSubscription.endpoint == endpoint)
    )
    return bool(getattr(gone, "rowcount", 0))


# ---------------------------------------------------------------------- sending


@dataclass(frozen=True, slots=True)
class Notice:
    """What a push says: ``kind`` (one of ``KINDS``) with its ``params``, the page it opens, and a tag
    (a later notice of the same tag replaces the earlier one on the device)."""

    kind: str
    params: dict[str, Any]
    url: str
    tag: str


def challenge_notice(challenger: str, code: str, rules: dict[str, Any]) -> Notice:
    return Notice(
        "challenge",
        {"name": challenger, "deck": rules.get("deck"), "seats": rules.get("seats"), "stake": rules.get("stake", 0)},
        "/#/friends",
        f"challenge-{code[:8]}",
    )


def your_turn_notice(table_name: str, code: str, seconds: int) -> Notice:
    return Notice("your_turn", {"table": table_name, "seconds": seconds}, f"/t/{code}", f"turn-{code[:8]}")


def tournament_notice(name: str, minutes: int, url: str) -> Notice:
    """For the tournaments (issue 37, part 2): "<name> starts in <minutes> min"."""
    return Notice("tournament_starting", {"name": name, "minutes": minutes}, url, f"tournament-{name[:24]}")


class PushSender:
    """Sends notices to every browser of an account, in the background (a notice never holds up the
    request or the table that caused it)."""

    def __init__(
        self,
        db: Database,
        vapid: Vapid02,
        subject: str,
        *,
        http: httpx.AsyncClient | None = None,
        timeout_s: float = 10.0,
    ) -> None:
        self.db = db
        self.vapid = vapid
        self.subject = subject
        self._http = http
        self._timeout_s = timeout_s
        self._tasks: set[asyncio.Task[int]] = set()
        # Accounts found without a subscription, until when (monotonic): "your turn" is asked for on
        # every decision of a player who is away, and most players have no device subscribed.
        self._none_until: dict[int, float] = {}

    @property
    def http(self) -> httpx.AsyncClient:
        """Made at the first notice sent: its TLS context costs ~20 ms of CPU (the CA bundle), which
        an app that sends none (most test apps, a server without subscribers) never pays."""
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=self._timeout_s, follow_redirects=False)
        return self._http

    def subscribed(self, account_id: int) -> None:
        """The account has a new subscription: look again from now on."""
        self._none_until.pop(account_id, None)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._http is not None:
            await self._http.aclose()

    def notify_soon(self, account_id: int, notice: Notice) -> None:
        task = asyncio.get_running_loop().create_task(self._quietly(self.notify(account_id, notice)))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _quietly(self, work: Coroutine[Any, Any, int]) -> int:
        try:
            return await work
        except Exception:
            log.warning("a push notice could not be sent", exc_info=True)
            return 0

    async def notify(self, account_id: int, notice: Notice) -> int:
        """Send ``notice`` to each of the account's subscriptions; how many push services took it."""
        if self._none_until.get(account_id, 0.0) > time.monotonic():
            return 0
        async with self.db.session() as session:
            subscriptions = (
                await session.scalars(select(PushSubscription).where(PushSubscription.account_id == account_id))
            ).all()
        if not subscriptions:
            if len(self._none_until) > 100_000:
                self._none_until.clear()
            self._none_until[account_id] = time.monotonic() + NO_SUBSCRIPTION_RECHECK_S
            return 0
        sent = await asyncio.gather(*(self._send(sub, notice) for sub in subscriptions))
        return sum(sent)

    def _headers(self, endpoint: str) -> dict[str, str]:
        parts = urlsplit(endpoint)
        audience = f"{parts.scheme}://{parts.netloc}"
        claims = {"aud": audience, "sub": self.subject, "exp": int(time.time()) + 12 * 3600}
        signed: dict[str, str] = self.vapid.sign(claims)
        return {
            **signed,
            "TTL": str(TTL_S),
            "Urgency": "high",
            "Content-Encoding": "aes128gcm",
            "Content-Type": "application/octet-stream",
        }

    async def _send(self, sub: PushSubscription, notice: Notice) -> int:
        payload = orjson.dumps(
            {"kind": notice.kind, "params": notice.params, "url": notice.url, "tag": notice.tag, "lang": sub.lang}
        )
        body = encrypt(payload, unb64url(sub.p256dh), unb64url(sub.auth))
        try:
            response = await self.http.post(sub.endpoint, content=body, headers=self._headers(sub.endpoint))
        except httpx.HTTPError as exc:
            log.info("push to %s failed: %s", urlsplit(sub.endpoint).hostname, exc)
            return 0
        if response.status_code in (404, 410):  # the browser dropped it: so do we
            endpoint = sub.endpoint

            async def drop(session: AsyncSession) -> None:
                await session.execute(delete(PushSubscription).where(PushSubscription.endpoint == endpoint))

            await self.db.write(drop)
            return 0
        if response.status_code >= 300:
            log.info("push service %s answered %d", urlsplit(sub.endpoint).hostname, response.status_code)
            return 0
        return 1
