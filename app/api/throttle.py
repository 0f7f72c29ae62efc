"""Rate limits on the auth routes, counted in the database so every server process (and machine)
counts the same requests.

Each limit allows ``limit`` hits per bucket within ``window_s`` seconds; a bucket is the limit's
name and whom it counts (``"signup:203.0.113.7"``, ``"wrong-password:203.0.113.7:bob"``). Hits are
rows of ``throttle_hits``; each new hit first deletes every row whose window has passed, so
made-up names and addresses cannot grow the table without bound.

``AuthThrottles`` holds the limits of ``app/api/routes/auth.py`` (all settings, ``DURAK_*``):

- wrong passwords per name *and* address (``login_failures`` per ``login_window_s``): a stranger
  guessing from elsewhere cannot lock a player out; a success clears the name at that address;
- log-in attempts per address (``logins_per_ip`` per ``login_ip_window_s``);
- sign-ups per address (``signups_per_ip`` per ``signup_window_s``): each grants starting coins;
  an IPv6 client's sign-ups count for its /64, and also for its /56 (``signups_per_56``) and its
  /48 (``signups_per_48``), in the same window: one site hands its hosts many /64s;
- guest sessions per address (``guests_per_ip`` per ``guest_window_s``);

and of the player reports of ``app/api/routes/tables.py`` (each stores the table's last chat lines):

- reports per person, account or guest (``reports_per_person`` per ``report_window_s``);
- reports per address (``reports_per_ip`` per ``report_window_s``): guests are cheap to make.

The address is the client address of the request. Behind a reverse proxy that is the proxy's,
unless the server trusts the proxy: uvicorn then replaces it with the last address the proxy added
to ``X-Forwarded-For``, and only for proxies listed in ``FORWARDED_ALLOW_IPS`` (uvicorn's setting,
default 127.0.0.1), so a client cannot pick its own address by sending the header. IPv6 clients
are counted per /64 network (one host usually holds a whole /64).
"""

from __future__ import annotations

import math
import time
import zlib
from collections.abc import Callable

from fastapi import HTTPException, status
from sqlalchemy import delete, select, text
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request

from app.api.limits import is_ipv6, network_of
from app.config import Settings
from app.db.models import ThrottleHit
from app.db.session import Database

BUCKET_MAX = 400  # the column's length


class Throttle:
    """At most ``limit`` hits per bucket within ``window_s`` seconds."""

    def __init__(self, name: str, limit: int, window_s: float, clock: Callable[[], float] = time.time) -> None:
        self.name = name
        self.limit = limit
        self.window_s = window_s
        self.clock = clock  # Unix seconds: the rows are compared across processes

    def bucket(self, who: str) -> str:
        """The bucket of ``who`` (case-folded, cut to the column; NUL, which PostgreSQL text
        refuses, replaced)."""
        return f"{self.name}:{who}".casefold().replace("\x00", "\ufffd")[:BUCKET_MAX]

    async def retry_after(self, db: Database, who: str) -> float | None:
        """Seconds until ``who`` may be counted again, or None when he may now."""
        now = self.clock()
        async with db.session() as session:
            return await self._wait(session, self.bucket(who), now)

    async def admit(self, db: Database, who: str) -> float | None:
        """Count one hit for ``who`` if the limit allows it (None); else the seconds to wait, and
        nothing is counted. Concurrent hits on one bucket take turns on PostgreSQL (an advisory
        lock) and SQLite (one writer), so the limit holds under a burst too."""
        now, bucket = self.clock(), self.bucket(who)

        async def admit(session: AsyncSession) -> float | None:
            await _lock(session, bucket)
            wait = await self._wait(session, bucket, now)
            if wait is None:
                await self._add(session, bucket, now)
            return wait

        return await db.write(admit)

    async def hit(self, db: Database, who: str) -> None:
        """Count one hit for ``who``, whatever the limit says."""
        now, bucket = self.clock(), self.bucket(who)

        async def record(session: AsyncSession) -> None:
            await self._add(session, bucket, now)

        await db.write(record)

    async def clear(self, db: Database, who: str) -> None:
        bucket = self.bucket(who)

        async def clear(session: AsyncSession) -> None:
            await session.execute(delete(ThrottleHit).where(ThrottleHit.bucket == bucket))

        await db.write(clear)

    async def _wait(self, session: AsyncSession, bucket: str, now: float) -> float | None:
        # The bucket is full while it holds ``limit`` hits in the window, until the ``limit``-th
        # newest of them ages out. Only that one row is read (the index on bucket and time finds
        # it), not every hit: a high limit must not make each request load them all.
        oldest_counted = await session.scalar(
            select(ThrottleHit.at)
            .where(ThrottleHit.bucket == bucket, ThrottleHit.at > now - self.window_s)
            .order_by(ThrottleHit.at.desc())
            .offset(self.limit - 1)
            .limit(1)
        )
        if oldest_counted is None:
            return None
        return max(0.0, oldest_counted + self.window_s - now)

    async def _add(self, session: AsyncSession, bucket: str, now: float) -> None:
        await session.execute(delete(ThrottleHit).where(ThrottleHit.until <= now))
        session.add(ThrottleHit(bucket=bucket, at=now, until=now + self.window_s))


async def _lock(session: AsyncSession, bucket: str) -> None:
    if (await session.connection()).dialect.name == "postgresql":
        key = zlib.crc32(bucket.encode()) - 2**31  # a signed 32-bit key per bucket
        await session.execute(text("SELECT pg_advisory_xact_lock(:space, :key)"), {"space": 0x7468, "key": key})


class AuthThrottles:
    """The limits on log-in, sign-up, guest sessions and player reports (see the module), from the
    settings."""

    def __init__(self, settings: Settings, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock

        def now() -> float:
            return self.clock()

        limits = settings.throttle
        self.wrong_password = Throttle("wrong-password", limits.login_failures, limits.login_window_s, now)
        self.login = Throttle("login", limits.logins_per_ip, limits.login_ip_window_s, now)
        self.signup = Throttle("signup", limits.signups_per_ip, limits.signup_window_s, now)
        self.signup_56 = Throttle("signup", limits.signups_per_56, limits.signup_window_s, now)
        self.signup_48 = Throttle("signup", limits.signups_per_48, limits.signup_window_s, now)
        self.guest = Throttle("guest", limits.guests_per_ip, limits.guest_window_s, now)
        self.report = Throttle("report", limits.reports_per_person, limits.report_window_s, now)
        self.report_ip = Throttle("report-ip", limits.reports_per_ip, limits.report_window_s, now)


    async def admit_signup(self, db: Database, request: Request) -> float | None:
        """Count a sign-up from the request's client for its address (an IPv6 client's /64) and, for
        an IPv6 client, its /56 and /48 too: None when every limit allows it, else the seconds to
        wait. A refused sign-up is counted nowhere, so one host cannot use up its site's allowance
        with refused attempts."""
        host = request.client.host if request.client else ""
        limits = [(self.signup, network_of(host))]
        if is_ipv6(host):
            limits += [(self.signup_56, network_of(host, 56)), (self.signup_48, network_of(host, 48))]
        waits = [await throttle.retry_after(db, network) for throttle, network in limits]
        if any(wait is not None for wait in waits):
            return max(wait for wait in waits if wait is not None)
        for throttle, network in limits:
            wait = await throttle.admit(db, network)  # a sign-up racing this one may fill it first
            if wait is not None:
                return wait
        return None


def retry_later(wait: float, what: str) -> HTTPException:
    """429 with ``Retry-After`` (whole seconds, at least 1)."""
    seconds = max(1, math.ceil(wait))
    return HTTPException(
        status.HTTP_429_TOO_MANY_REQUESTS,
        detail=f"{what}; try again in {seconds} s",
        headers={"Retry-After": str(seconds)},
    )


def client_address(request: Request) -> str:
    """Whom the per-address limits count: the client's IP address (see the module), an IPv6
    address as its /64 network."""
    return network_of(request.client.host if request.client else "")
