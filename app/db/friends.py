"""Friends, blocks, challenges and presence, on the database.

Friendship is by **request and accept**, as the big card-game apps do it: a request waits until the
other player accepts it (by requesting back, or accepting); either may end it (remove, decline,
cancel: one row per pair goes). A **block** ends any friendship and pending request and challenge
between the two, refuses new ones both ways, and hides the blocked player's table chat from the
blocker. A **challenge** names a private table opened with the challenger's rules; it waits for
the friend until it is answered or expires. **Presence** is when an account last had a page of the
web client open (its notice feed keeps the row fresh) and the table it last sat down at.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import FRIEND_ACCEPTED, FRIEND_PENDING, Account, Block, Challenge, Friendship, Presence
from app.db.session import Database

log = logging.getLogger("durak.friends")

ONLINE_WITHIN = timedelta(seconds=75)  # the notice feed refreshes presence every 30 s


class FriendError(Exception):
    """A refused friend, block or challenge action: ``code`` is stable, ``status`` the HTTP one."""

    def __init__(self, code: str, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


def _insert(session: AsyncSession) -> Any:
    return pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert


def _pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


async def friendship(session: AsyncSession, a: int, b: int) -> Friendship | None:
    low, high = _pair(a, b)
    return await session.get(Friendship, (low, high), populate_existing=True)


async def are_friends(session: AsyncSession, a: int, b: int) -> bool:
    row = await friendship(session, a, b)
    return row is not None and row.status == FRIEND_ACCEPTED


async def blocked_between(session: AsyncSession, a: int, b: int) -> bool:
    """Whether either of the two blocked the other."""
    found = await session.scalar(
        select(Block.blocker_id).where(
            or_(
                and_(Block.blocker_id == a, Block.blocked_id == b),
                and_(Block.blocker_id == b, Block.blocked_id == a),
            )
        )
    )
    return found is not None


async def request(session: AsyncSession, me: int, other: int, now: datetime) -> str:
    """Ask ``other`` to be friends, or accept his request: "requested" (waiting for him) or "friends"."""
    if me == other:
        raise FriendError("yourself", "you cannot befriend yourself", 422)
    if await blocked_between(session, me, other):
        raise FriendError("cannot_befriend", "you cannot send this player a friend request")
    low, high = _pair(me, other)
    await session.execute(
        _insert(session)(Friendship)
        .values(low_id=low, high_id=high, requested_by=me, status=FRIEND_PENDING, created_at=now)
        .on_conflict_do_nothing(index_elements=["low_id", "high_id"])
    )
    row = await friendship(session, me, other)
    assert row is not None
    if row.status == FRIEND_ACCEPTED:
        return "friends"
    if row.requested_by == me:
        return "requested"
    row.status, row.accepted_at = FRIEND_ACCEPTED, now
    await session.flush()
    return "friends"


async def remove(session: AsyncSession, me: int, other: int) -> bool:
    """End a friendship, cancel my request or decline his: whether there was one."""
    low, high = _pair(me, other)
    gone = await session.execute(delete(Friendship).where(Friendship.low_id == low, Friendship.high_id == high))
    return bool(getattr(gone, "rowcount", 0))


async def block(session: AsyncSession, me: int, other: int, now: datetime) -> None:
    """Block ``other``: the friendship or request between us ends, pending challenges are cancelled."""
    if me == other:
        raise FriendError("yourself", "you cannot block yourself", 422)
    await session.execute(
        _insert(session)(Block)
        .values(blocker_id=me, blocked_id=other, created_at=now)
        .on_conflict_do_nothing(index_elements=["blocker_id", "blocked_id"])
    )
    await remove(session, me, other)
    await session.execute(
        update(Challenge)
        .where(
            Challenge.status == "pending",
            or_(
                and_(Challenge.from_id == me, Challenge.to_id == other),
                and_(Challenge.from_id == other, Challenge.to_id == me),
            ),
        )
        .values(status="cancelled", answered_at=now)
    )


async def unblock(session: AsyncSession, me: int, other: int) -> bool:
    gone = await session.execute(delete(Block).where(Block.blocker_id == me, Block.blocked_id == other))
    return bool(getattr(gone, "rowcount", 0))


async def blocked_by(session: AsyncSession, me: int) -> list[int]:
    """The accounts ``me`` blocked."""
    return list((await session.scalars(select(Block.blocked_id).where(Block.blocker_id == me))).all())


@dataclass(frozen=True, slots=True)
class Person:
    account_id: int
    name: str
    since: datetime


@dataclass(frozen=True, slots=True)
class Circle:
    friends: list[Person]
    incoming: list[Person]  # requests to me
    outgoing: list[Person]  # my requests
    blocked: list[Person]


async def circle(session: AsyncSession, me: int) -> Circle:
    """My friends, the requests both ways and whom I blocked, each by name, oldest first."""
    rows = (
        await session.scalars(
            select(Friendship)
            .where(or_(Friendship.low_id == me, Friendship.high_id == me))
            .order_by(Friendship.created_at)
        )
    ).all()
    blocks = (await session.scalars(select(Block).where(Block.blocker_id == me).order_by(Block.created_at))).all()
    others = {row.high_id if row.low_id == me else row.low_id for row in rows} | {b.blocked_id for b in blocks}
    names = dict((await session.execute(select(Account.id, Account.name).where(Account.id.in_(others)))).all())
    friends, incoming, outgoing = [], [], []
    for row in rows:
        other = row.high_id if row.low_id == me else row.low_id
        if row.status == FRIEND_ACCEPTED:
            friends.append(Person(other, names[other], row.accepted_at or row.created_at))
        elif row.requested_by == me:
            outgoing.append(Person(other, names[other], row.created_at))
        else:
            incoming.append(Person(other, names[other], row.created_at))
    friends.sort(key=lambda person: person.name.casefold())
    blocked = [Person(b.blocked_id, names[b.blocked_id], b.created_at) for b in blocks]
    return Circle(friends, incoming, outgoing, blocked)


# ---------------------------------------------------------------------- presence


async def seen(session: AsyncSession, account_id: int, now: datetime | None, *, table_code: str | None = None) -> None:
    """Note that the account is here (``now``; None: it has just gone), and, with ``table_code``,
    at which table it sat down."""
    values: dict[str, Any] = {"seen_at": now} if table_code is None else {"table_code": table_code}
    await session.execute(
        _insert(session)(Presence)
        .values(account_id=account_id, **values)
        .on_conflict_do_update(index_elements=["account_id"], set_=values)
    )


async def note_table(db: Database, account_id: int, table_code: str) -> None:
    """The account sat down at ``table_code`` (a write of its own; a failure is only logged)."""
    try:
        await db.write(lambda session: seen(session, account_id, None, table_code=table_code))
    except Exception:
        log.warning("could not note where account %s sat down", account_id, exc_info=True)


async def presence_of(session: AsyncSession, account_ids: list[int]) -> dict[int, Presence]:
    if not account_ids:
        return {}
    rows = (await session.scalars(select(Presence).where(Presence.account_id.in_(account_ids)))).all()
    return {row.account_id: row for row in rows}


def is_online(presence: Presence | None, now: datetime) -> bool:
    return presence is not None and presence.seen_at is not None and now - presence.seen_at <= ONLINE_WITHIN


# ---------------------------------------------------------------------- challenges


async def pending_challenge(session: AsyncSession, from_id: int, to_id: int, now: datetime) -> Challenge | None:
    return await session.scalar(
        select(Challenge).where(
            Challenge.from_id == from_id,
            Challenge.to_id == to_id,
            Challenge.status == "pending",
            Challenge.expires_at > now,
        )
    )


async def challenges_of(session: AsyncSession, me: int, now: datetime) -> tuple[list[Challenge], list[Challenge]]:
    """My pending challenges that have not expired: (to me, from me), newest first."""
    rows = (
        await session.scalars(
            select(Challenge)
            .where(
                or_(Challenge.to_id == me, Challenge.from_id == me),
                Challenge.status == "pending",
                Challenge.expires_at > now,
            )
            .order_by(Challenge.id.desc())
            .limit(100)
        )
    ).all()
    return [row for row in rows if row.to_id == me], [row for row in rows if row.from_id == me]


async def challenge_for(session: AsyncSession, challenge_id: int, me: int) -> Challenge:
    """A challenge from or to ``me`` (404 otherwise: nobody learns of others' challenges)."""
    row = await session.get(Challenge, challenge_id, populate_existing=True)
    if row is None or me not in (row.from_id, row.to_id):
        raise FriendError("no_challenge", "no such challenge", 404)
    return row


def still_open(row: Challenge, now: datetime) -> None:
    if row.status != "pending":
        raise FriendError("challenge_closed", f"this challenge was {row.status} already")
    if row.expires_at <= now:
        raise FriendError("challenge_closed", "this challenge has expired")


async def answer(session: AsyncSession, challenge_id: int, me: int, status: str, now: datetime) -> Challenge:
    """Close a pending challenge: ``accepted``/``declined`` by the challenged, ``cancelled`` by the
    challenger (FriendError when it is not open or not his to answer)."""
    row = await challenge_for(session, challenge_id, me)
    still_open(row, now)
    if (status == "cancelled" and row.from_id != me) or (status != "cancelled" and row.to_id != me):
        raise FriendError("not_yours", "only the challenged friend answers a challenge, the challenger cancels it", 403)
    row.status, row.answered_at = status, now
    await session.flush()
    return row


async def names_of(session: AsyncSession, ids: set[int]) -> dict[int, str]:
    if not ids:
        return {}
    return dict((await session.execute(select(Account.id, Account.name).where(Account.id.in_(ids)))).all())
