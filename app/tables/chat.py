"""Table chat, apart from the game: the phrase keys, the per-player rate limit and the last
lines kept per table.

Chat is not game state: it never passes through the table's actor. A line is published on the
table's chat channel (``channels.chat``, app/transport; one per table; the line says whether it is
the players' or the spectators' chat) and every process with connections at that table fans it out
to them (``app.api.chat``). The last :data:`HISTORY` lines of a table are kept where the broker
keeps its shared state, in a capped list (:meth:`app.broker.Broker.push_capped`): the broker hub's
memory for ``memory://``, a Redis list for ``redis://`` and ``redis+cluster://``.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Literal, NotRequired, TypedDict, cast

import orjson

from app.broker.base import Broker
from app.tables.messages import Chat, ChatPhraseKey

MAX_TEXT = 200
HISTORY = 50
RATE_COUNT = 5  # messages ...
RATE_WINDOW_S = 10.0  # ... per this many seconds, per player and table
HISTORY_TTL_S = 24 * 3600  # a Redis history outlives its table by at most a day

# The quick phrases: clients send the key and show it in their own language.
PHRASES = ("gg", "hurry", "well_played", "oops", "hello", "thanks", "nice_move", "bad_luck")

PLAYERS: Literal["players"] = "players"
SPECTATORS: Literal["spectators"] = "spectators"


class ChatSender(TypedDict):
    """Who wrote a line (``from`` of the ``chat`` message)."""

    name: str
    seat: int | None  # None: a spectator
    guest: bool
    player: str  # the writer's person key


ChatLine = TypedDict(
    "ChatLine",
    {
        "type": Literal["chat"],
        "id": str,
        "from": ChatSender,
        "channel": Literal["players", "spectators"],
        "at": int,  # milliseconds since the epoch
        "text": NotRequired[str],
        "key": NotRequired[ChatPhraseKey],  # a quick phrase's, instead of a text
        "history": NotRequired[bool],  # sent after the welcome, from the kept lines
        "players_hidden": NotRequired[bool],  # routing: a spectator's line the match's players do not see
        "hidden_from": NotRequired[list[str]],  # routing: the players then seated
    },
)
"""One chat line as the ``chat`` message writes it (``app.tables.messages.Chat``), and, as it is
published and kept, with the routing fields (:data:`ROUTING`) the servers hide lines by."""


def chat_line(
    *,
    id: str,
    sender: ChatSender,
    channel: Literal["players", "spectators"],
    at: int,
    text: str | None = None,
    key: ChatPhraseKey | None = None,
    history: bool | None = None,
) -> ChatLine:
    """A line as the ``chat`` message's writer writes it (a text, or a quick phrase's ``key``)."""
    return cast(ChatLine, Chat.wire(id=id, from_=sender, channel=channel, at=at, text=text, key=key, history=history))


def history_key(code: str) -> str:
    """The broker key of the table's chat history (tagged with the code, as its channels are)."""
    return f"chat:{{{code}}}"


def clean_text(text: str) -> str:
    """The text as it is sent on: without control characters and surrounding whitespace."""
    return "".join(ch for ch in text if ch == " " or ch.isprintable()).strip()


class RateLimit:
    """At most ``count`` messages per ``window_s`` per key (a sliding window of send times)."""

    def __init__(
        self, count: int = RATE_COUNT, window_s: float = RATE_WINDOW_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.count = count
        self.window_s = window_s
        self.clock = clock
        self.sent: dict[str, deque[float]] = {}

    def take(self, key: str) -> int:
        """0 when the message may go (and it is counted), else the milliseconds to wait."""
        now = self.clock()
        times = self.sent.setdefault(key, deque())
        while times and now - times[0] >= self.window_s:
            times.popleft()
        if len(times) >= self.count:
            return max(1, int((times[0] + self.window_s - now) * 1000) + 1)
        times.append(now)
        if len(self.sent) > 10_000:  # forget idle players
            for stale in [k for k, v in self.sent.items() if not v or now - v[-1] >= self.window_s]:
                del self.sent[stale]
        return 0


async def remember(broker: Broker, code: str, line: bytes) -> None:
    """Keep ``line`` (JSON of one chat message) among the table's last :data:`HISTORY` lines."""
    await broker.push_capped(history_key(code), line, HISTORY, ttl_s=HISTORY_TTL_S)


async def history(broker: Broker, code: str) -> list[ChatLine]:
    """The table's last lines, oldest first (as :func:`remember` kept them)."""
    return [orjson.loads(line) for line in await broker.read_list(history_key(code))]


def visible(line: ChatLine, *, seated: bool, persons: frozenset[str] | None = frozenset()) -> bool:
    """Whether a connection sees a line. Spectators see everything; the players of a staked match do
    not see the spectators' chat said while it ran (the line says so: ``players_hidden``, and names
    the players then seated: ``hidden_from``). A player is a person, not a connection: a connection
    that is seated, or whose ``persons`` (the keys its cookies stand for: its session, and every
    account seen on its browser's device) include one of those players, does not see it; nor does
    one whose persons are not known yet (None)."""
    if line.get("channel") != SPECTATORS or not line.get("players_hidden"):
        return True
    if seated or persons is None or EVERY_PLAYER in persons:
        return False
    return not persons.intersection(line.get("hidden_from") or ())


EVERY_PLAYER = "*"  # in a connection's persons: taken for every player (who it is cannot be told now)
ROUTING = ("players_hidden", "hidden_from")  # what a line carries for the servers, not for clients


def public(line: ChatLine) -> ChatLine:
    """The message a client gets (without the routing fields)."""
    out = line.copy()
    out.pop("players_hidden", None)
    out.pop("hidden_from", None)
    return out
