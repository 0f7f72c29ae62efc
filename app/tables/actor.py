"""One asyncio actor per live table: the only writer of its match.

Every command reaches the actor through the broker channel ``t:<code>:in`` and is applied one at a
time; every change bumps ``version`` and is pushed, redacted, to each connected seat on
``t:<code>:p:<principal>`` and to spectators on ``t:<code>:watch``. Nothing here assumes that the
connection and the actor live in the same process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any

import orjson

from app.broker import Broker, BrokerError, Gap
from app.engine import (
    Forfeit,
    IllegalAction,
    Rules,
    RulesError,
    State,
    action_from_json,
    action_to_json,
    apply,
    decision,
    event_to_json,
    legal_actions,
    new_match,
    payout,
    public_cards,
    public_view,
    seat_view,
    series_update,
    timeout_actions,
    view,
)
from app.engine.actions import ActionParseError
from app.tables import channels
from app.tables.bot_runner import BotRunner
from app.tables.channels import dumps
from app.tables.hooks import CannotStart, FinishedMatch, MatchHooks
from app.tables.spec import BOT_LEVELS, DecisionLimits, Principal, RematchProposal, Seat, TableSpec
from app.tables.store import Fenced, LogGap, MemoryStore, TableStore

log = logging.getLogger("durak.table")

HISTORY = 64  # versions kept for resuming clients; older gaps get a snapshot
DEDUPE = 512  # command ids remembered per table
REMATCH_WINDOW_S = 60.0  # how long a rematch proposal waits for every player's agreement (§8)
TAKEOVER_GRACE_S = 3.0  # extra decision time after a table moved to another process
RETRY_S = 1.0  # storage unreachable: try the timer or a bot again after this long
PLAY_TYPES = ("lead", "throw_in", "cover", "transfer", "take", "pass", "challenge", "exchange_trump")


class Refused(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class TableActor:
    def __init__(
        self,
        spec: TableSpec,
        broker: Broker,
        hooks: MatchHooks,
        bots: BotRunner,
        *,
        on_change: Callable[[TableActor], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        store: TableStore | None = None,
        token: int = 1,
        limits: DecisionLimits = DecisionLimits(),
    ) -> None:
        self.spec = spec
        self.limits = limits
        self.store: TableStore = store if store is not None else MemoryStore()
        self.token = token  # the lease's fencing token: every write to the store carries it
        self.fenced = False
        self._dirty = False
        self._log_stored: int | None = None  # entries of our log known to be in the store
        self.broker = broker
        self.hooks = hooks
        self.bots = bots
        self.on_change = on_change
        self.clock = clock
        self.seats = [Seat(i) for i in range(spec.rules.seats)]
        self.status = "waiting"  # waiting | playing | finished
        self.rules: Rules = spec.rules
        self.game: State | None = None
        self.match_id: str | None = None
        self.log: list[dict[str, Any]] = []  # {"a": action JSON, "k": dedupe key or None}
        self.version = 0
        self.history: deque[tuple[int, list[dict[str, Any]]]] = deque(maxlen=HISTORY)
        self.spectators: set[str] = set()
        self.conn_owner: dict[str, str] = {}  # connection id -> principal key
        self.series: dict[str, tuple[int, int]] = {}
        # Cheating tables: when the open challenge window closes (§9).
        self.window_closes: float | None = None
        self.deadline: float | None = None  # the move timer (tables with a timer)
        self.decision_since: float | None = None  # when the current decision came (the last move)
        self.gone_since: dict[int, float] = {}  # seat -> when its player's last connection closed
        self._limits_retry_at: float | None = None  # a timed-out decision could not be saved: retry then
        self._deciding_of: State | None = None  # the game ``_deciding`` was computed for
        self._deciding: list[int] = []
        self.rematch: RematchProposal | None = None
        self.results: dict[str, Any] | None = None
        self.next_dealer: int | None = None
        self.created = time.time()
        self._done: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()
        self._inbox: deque[dict[str, Any]] = deque()  # commands and internal messages, in order
        self._inbox_waiter: asyncio.Future[None] | None = None  # set while _run waits for one
        # Person and spectator channels that a connection in another process has used (it sent a
        # command through the broker): their frames go through the broker. Every other frame of the
        # table is delivered in this process only (docs/architecture.md, "Local delivery").
        self._remote_channels: set[str] = set()
        self._channel_prefix = channels.of_table(self.code)
        self._alarm: asyncio.TimerHandle | None = None  # wakes _run for the earliest deadline
        self._alarm_at: float | None = None
        self._task: asyncio.Task[None] | None = None
        self._pump: asyncio.Task[None] | None = None
        self._bot_asked: dict[int, int] = {}
        self._bot_tasks: dict[int, asyncio.Task[None]] = {}
        self._settle_task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._outbox: list[tuple[str, str]] | None = None  # set while one command is handled

    # ------------------------------------------------------------------ lifetime

    @property
    def code(self) -> str:
        return self.spec.code

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"table-{self.code[:8]}")
        await self._ready.wait()

    async def stop(self) -> None:
        if self._alarm is not None:
            self._alarm.cancel()
        for task in (*self._bot_tasks.values(), self._pump, self._task):
            if task is not None:
                task.cancel()
        for task in (*self._bot_tasks.values(), self._pump, self._task):
            if task is not None:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if self._settle_task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._settle_task), 5)

    async def _run(self) -> None:
        async with self.broker.subscribe(channels.inbox(self.code)) as sub:
            self._pump = asyncio.create_task(self._pump_from(sub))
            self._ready.set()
            while True:
                message = await self._next_message()
                self._outbox = []  # what one command (or timer) publishes goes out together, in order
                try:
                    await (self._on_deadline() if message is None else self._handle(message))
                except Exception:  # one bad command must never kill the table
                    what = "timer" if message is None else repr(message.get("op"))
                    log.exception("table %s: %s handling failed", self.code[:8], what)
                await self._flush()

    async def _pump_from(self, sub: Any) -> None:
        async for item in sub:
            if isinstance(item, Gap):
                continue  # commands lost in a gap are answered by the clients' own timeouts
            try:
                message = orjson.loads(item.data)
            except ValueError:
                continue
            if isinstance(message, dict):
                self.post(message)

    def post(self, message: dict[str, Any]) -> None:
        """Queue a message for the actor: commands of a connection in this process, bot decisions."""
        self._inbox.append(message)
        self._wake()

    async def _next_message(self) -> dict[str, Any] | None:
        """The next queued message, or None when a deadline has come (a deadline that has passed goes
        before the messages queued behind it). A queued message is taken at once; while waiting, one
        timer stays armed for the earliest deadline seen and is re-armed only when that moves
        earlier (a decision timer moves later with every move: its timer then fires once, early,
        and is set again for the new deadline)."""
        inbox = self._inbox
        while True:
            due = self._next_deadline()
            if due is not None and due <= self.clock():
                return None
            if inbox:
                return inbox.popleft()
            if due is not None and (self._alarm_at is None or due < self._alarm_at):
                if self._alarm is not None:
                    self._alarm.cancel()
                self._alarm = asyncio.get_running_loop().call_later(due - self.clock(), self._ring)
                self._alarm_at = due
            waiter = self._inbox_waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                self._inbox_waiter = None

    def _ring(self) -> None:
        self._alarm = self._alarm_at = None
        self._wake()

    def _wake(self) -> None:
        """Let ``_next_message`` look again (a message came, or a deadline may have)."""
        waiter = self._inbox_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # ------------------------------------------------------------------ dispatch

    async def _handle(self, message: dict[str, Any]) -> None:
        op = message.get("op")
        sender = message.get("principal")  # a Principal from this process, its JSON from another
        principal = sender if isinstance(sender, Principal) or sender is None else Principal.from_json(sender)
        conn = message.get("conn")
        cmd_id = message.get("id")
        if conn and principal is not None and not isinstance(sender, Principal):  # from another process
            person = channels.person(self.code, principal.key)
            if person not in self._remote_channels:
                self._remote_channels.update((person, channels.watch(self.code)))
        if op == "bot":
            await self._on_bot(message)
            return
        if op == "bye":
            await self._on_bye(conn)
            return
        if op == "wake":
            self._schedule_bots()
            return
        if principal is None:
            return
        key = (principal.key, str(cmd_id)) if cmd_id is not None and op in PLAY_TYPES else None
        if key is not None and key in self._done:
            reply = dict(self._done[key])
            reply["duplicate"] = True
            await self._reply(message, principal, reply)
            return
        if op == "hello":
            await self._on_hello(message, principal, conn)
            return
        try:
            if op in PLAY_TYPES:
                reply = await self._on_play(principal, message)
            elif op == "join":
                reply = await self._on_join(principal, message.get("seat"), message.get("rating"))
            elif op == "leave":
                reply = await self._on_leave(principal)
            elif op == "add_bot":
                reply = await self._on_add_bot(principal, message.get("seat"), message.get("level"))
            elif op == "remove_bot":
                reply = await self._on_remove_bot(principal, message.get("seat"))
            elif op == "start":
                reply = await self._on_start(principal)
            elif op == "rematch":
                reply = await self._on_rematch(principal)
            elif op == "info":
                reply = {"type": "info", "table": self.info(principal), "watch_code": self.spec.watch_code}
            else:
                raise Refused("unknown_type", f"unknown command {op!r}")
        except Refused as refused:
            reply = {"type": "error", "id": cmd_id, "code": refused.code, "message": refused.message}
        if cmd_id is not None:
            reply.setdefault("id", cmd_id)
        if key is not None:
            self._done[key] = reply
            while len(self._done) > DEDUPE:
                self._done.popitem(last=False)
        await self._reply(message, principal, reply)

    async def _reply(self, message: dict[str, Any], principal: Principal, reply: dict[str, Any]) -> None:
        if message.get("reply"):
            await self._publish(message["reply"], reply)
        elif message.get("conn"):
            await self._publish(channels.person(self.code, principal.key), reply, conn=message["conn"])

    async def _publish(self, channel: str, payload: dict[str, Any], conn: str | None = None) -> None:
        """Person and spectator channels carry frames; reply channels (REST calls) plain JSON."""
        text = dumps(payload) if channel.startswith("reply:") else channels.frame(payload, conn)
        await self._send([(channel, text)])

    # ------------------------------------------------------------------ seats and connections

    def seat_of(self, principal: Principal) -> Seat | None:
        for seat in self.seats:
            if seat.principal is not None and seat.principal.key == principal.key:
                return seat
        return None

    async def _on_hello(self, message: dict[str, Any], principal: Principal, conn: str | None) -> None:
        """Answer with the welcome; then, when the connection is new here, tell everybody who is
        connected now (``presence``), so that a connection's first message is always its welcome."""
        seat = self.seat_of(principal)
        arrived = bool(conn) and conn not in self.conn_owner
        if conn:
            self.conn_owner[conn] = principal.key
            if seat is not None:
                seat.connections.add(conn)
                self.gone_since.pop(seat.seat, None)
            else:
                self.spectators.add(conn)
        reply: dict[str, Any] = {"type": "welcome", **self._snapshot(seat.seat if seat else None, principal)}
        last_version = message.get("last_version")
        if isinstance(last_version, int) and not isinstance(last_version, bool):
            missed = self._events_since(last_version, seat.seat if seat else None)
            if missed is not None:
                reply["events"] = missed
                reply["resumed_from"] = last_version
        if "resumed_from" not in reply:
            reply["recent"] = self._recent_events(seat.seat if seat else None)
        await self._reply(message, principal, reply)
        if arrived:
            await self._presence_changed()

    async def _on_bye(self, conn: str | None) -> None:
        if not conn:
            return
        self.spectators.discard(conn)
        self.conn_owner.pop(conn, None)
        for seat in self.seats:
            if conn in seat.connections:
                seat.connections.discard(conn)
                if not seat.connections and self.status == "playing":
                    self.gone_since[seat.seat] = self.clock()
        await self._presence_changed()

    async def _presence_changed(self) -> None:
        """A connection came or went: the table's state did not change (no new version), only who
        is here. Every connection gets the table facts again as a ``presence`` message."""
        base = self.info()
        base.pop("you", None)
        head = f'{{"type":"presence","version":{self.version},"table":'
        outbox: list[tuple[str, str]] = []
        for seat in self.seats:
            if seat.principal is not None and seat.connections and seat.kind == "human":
                text = head + dumps({**base, "you": seat.principal.key}) + "}"
                frame = channels.frame_text("presence", text, version=self.version, seat=seat.seat)
                outbox.append((channels.person(self.code, seat.principal.key), frame))
        if self.spectators:
            text = head + dumps({**base, "code": None}) + "}"  # never the invite code to a watcher
            outbox.append((channels.watch(self.code), channels.frame_text("presence", text, version=self.version)))
        await self._send(outbox)
        if self.on_change is not None:
            self.on_change(self)

    async def _on_join(self, principal: Principal, wanted: Any, rating: Any = None) -> dict[str, Any]:
        if self.seat_of(principal) is not None:
            raise Refused("already_seated", "you already have a seat at this table")
        if self.status == "playing":
            raise Refused("match_running", "the match is running; join after it ends or watch")
        if self.rules.stake > 0 and principal.is_guest:
            raise Refused("guests_free_tables_only", "guests can sit only at free tables; sign up to play for coins")
        seat = self._free_seat(wanted)
        seat.kind, seat.principal, seat.level = "human", principal, None
        seat.rating = rating if isinstance(rating, dict) and principal.account_id is not None else None
        seat.connections = {c for c, key in self.conn_owner.items() if key == principal.key}
        self.spectators -= seat.connections
        if self.status == "finished":
            self._agree_to_rematch(seat)  # sitting down after a match is asking for the next one
        await self._changed([{"type": "seat", "seat": seat.seat, "name": principal.name, "kind": "human"}])
        await self._maybe_autostart()
        return {"type": "ack", "seat": seat.seat, "version": self.version}

    def _free_seat(self, wanted: Any) -> Seat:
        if wanted is not None:
            if not isinstance(wanted, int) or isinstance(wanted, bool) or not 0 <= wanted < len(self.seats):
                raise Refused("bad_seat", f"there is no seat {wanted!r} at this table")
            if self.seats[wanted].kind != "empty":
                raise Refused("seat_taken", f"seat {wanted} is taken")
            return self.seats[wanted]
        for seat in self.seats:
            if seat.kind == "empty":
                return seat
        raise Refused("table_full", "every seat at this table is taken")

    async def _on_leave(self, principal: Principal) -> dict[str, Any]:
        seat = self.seat_of(principal)
        if seat is None:
            raise Refused("not_seated", "you have no seat at this table")
        if self.status == "playing" and self.game is not None and seat.seat not in self.game.out:
            await self._apply_engine(Forfeit(seat.seat, "left"))
            return {"type": "ack", "version": self.version}
        if self.status == "playing":
            raise Refused("match_running", "you are already out; you can leave when the match ends")
        had_connections = self._vacate(seat)
        await self._changed([{"type": "seat", "seat": seat.seat, "name": None, "kind": "empty"}])
        if had_connections:
            await self._tell_watching(principal)
        return {"type": "ack", "version": self.version}

    def _vacate(self, seat: Seat) -> bool:
        """Free a player's seat between matches; his connections watch from now on. Whether he had any."""
        moved, self.spectators = seat.connections, self.spectators | seat.connections
        seat.kind, seat.principal, seat.connections, seat.rating = "empty", None, set(), None
        if self.rematch is not None:
            self.rematch.agreed.discard(seat.seat)
        return bool(moved)

    async def _tell_watching(self, principal: Principal) -> None:
        """Tell a player's connections they watch now (seated ones listen on one channel)."""
        snapshot = {"type": "welcome", **self._snapshot(None, principal)}
        await self._publish(channels.person(self.code, principal.key), snapshot)

    def _require_creator(self, principal: Principal) -> None:
        if principal.key != self.spec.creator.key:
            raise Refused("not_creator", "only the table's creator can do that")

    async def _on_add_bot(self, principal: Principal, wanted: Any, level: Any) -> dict[str, Any]:
        self._require_creator(principal)
        if self.status == "playing":
            raise Refused("match_running", "bots can be seated only between matches")
        if level not in BOT_LEVELS:
            raise Refused("bad_level", f"bot level must be one of {', '.join(BOT_LEVELS)}")
        if self.rules.stake > 0:
            raise Refused("bots_free_tables_only", "bots hold no coins: they sit only at free tables")
        seat = self._free_seat(wanted)
        seat.kind, seat.principal, seat.level = "bot", None, str(level)
        await self._changed([{"type": "seat", "seat": seat.seat, "name": seat.name, "kind": "bot"}])
        await self._maybe_autostart()
        return {"type": "ack", "seat": seat.seat, "version": self.version}

    async def _on_remove_bot(self, principal: Principal, wanted: Any) -> dict[str, Any]:
        self._require_creator(principal)
        if self.status == "playing":
            raise Refused("match_running", "bots can be removed only between matches")
        if not isinstance(wanted, int) or not 0 <= wanted < len(self.seats) or self.seats[wanted].kind != "bot":
            raise Refused("bad_seat", f"there is no bot in seat {wanted!r}")
        self.seats[wanted].kind, self.seats[wanted].level = "empty", None
        await self._changed([{"type": "seat", "seat": wanted, "name": None, "kind": "empty"}])
        return {"type": "ack", "version": self.version}

    # ------------------------------------------------------------------ match lifetime

    async def _maybe_autostart(self) -> None:
        """A waiting table starts when its last seat fills; after a match, only a rematch that every
        player has agreed to starts (§8)."""
        with contextlib.suppress(Refused):
            if self.status == "finished":
                await self._start_rematch_if_agreed()
            elif self.status == "waiting" and all(seat.kind != "empty" for seat in self.seats):
                await self._start_match()

    async def _on_start(self, principal: Principal) -> dict[str, Any]:
        self._require_creator(principal)
        if self.status == "playing":
            raise Refused("match_running", "the match is already running")
        if self.status == "finished":
            raise Refused("match_over", "the match is over: a rematch starts when every player has asked for it")
        await self._start_match()
        return {"type": "ack", "version": self.version, "match_id": self.match_id}

    async def _start_match(self) -> None:
        taken = [seat for seat in self.seats if seat.kind != "empty"]
        if len(taken) < 2:
            raise Refused("not_enough_players", "a match needs at least 2 seated players")
        if len(taken) != len(self.seats):
            try:
                self.rules = self.rules.with_changes(seats=len(taken))
            except RulesError as exc:
                raise Refused("bad_rules", str(exc)) from exc
            self.seats = [Seat(i, s.kind, s.principal, s.level, s.connections) for i, s in enumerate(taken)]
        match_id = uuid.uuid4().hex
        accounts = [s.principal.account_id for s in self.seats if s.principal and s.principal.account_id is not None]
        if self.rules.stake > 0:
            if len(accounts) != len(self.seats):
                raise Refused("guests_free_tables_only", "every seat at a staked table needs an account")
            try:
                await self.hooks.match_started(match_id=match_id, stake=self.rules.stake, account_ids=accounts)
            except CannotStart as exc:
                raise Refused(exc.code, exc.message) from exc
        dealer = self.next_dealer if self.next_dealer is not None and self.next_dealer < len(self.seats) else None
        self.game = new_match(self.rules, None, dealer)
        self.match_id = match_id
        self.log = []
        self.results = None
        self.status = "playing"
        self.rematch = None
        self.gone_since.clear()
        self._bot_asked.clear()
        self.bots.reset(self.code, {s.seat: s.level or "normal" for s in self.seats if s.kind == "bot"})
        await self._changed(
            [
                {
                    "type": "match_start",
                    "match_id": match_id,
                    "dealer": self.game.dealer,
                    "attacker": self.game.attacker,
                    "defender": self.game.defender,
                }
            ]
        )

    # A rematch is a proposal (§8): the first ``rematch`` after a match opens it, every seated player
    # agrees with his own ``rematch`` (bots agree by themselves, a player who sits down in a free seat
    # agrees by sitting), and the match starts -- and takes the stakes -- only when every seat is
    # taken by someone who agreed. ``leave`` declines. When the window closes, the seats of those who
    # have not agreed are freed and the table waits for players again.

    async def _on_rematch(self, principal: Principal) -> dict[str, Any]:
        seat = self.seat_of(principal)
        if seat is None:
            raise Refused("not_seated", "only a player seated at this table can ask for a rematch")
        if self.status != "finished":
            raise Refused("match_running" if self.status == "playing" else "no_match", "no finished match to rematch")
        if self.rematch is None or seat.seat not in self.rematch.agreed:
            self._agree_to_rematch(seat)
            await self._changed([{"type": "rematch", "seat": seat.seat}])
            await self._start_rematch_if_agreed()
        return {"type": "ack", "version": self.version}

    def _agree_to_rematch(self, seat: Seat) -> None:
        if self.rematch is None:
            self.rematch = RematchProposal(deadline=self.clock() + REMATCH_WINDOW_S)
        self.rematch.agreed.add(seat.seat)

    def _rematch_agreed(self) -> list[int]:
        """The seats that agreed to the proposed rematch, bots included."""
        agreed = self.rematch.agreed if self.rematch is not None else set()
        return [s.seat for s in self.seats if s.kind == "bot" or (s.kind == "human" and s.seat in agreed)]

    async def _start_rematch_if_agreed(self) -> None:
        if self.rematch is None or self.status != "finished" or len(self._rematch_agreed()) < len(self.seats):
            return
        self.status = "waiting"
        self.rematch = None
        self.rules = self.spec.rules.with_changes(seats=len(self.seats))
        try:
            await self._start_match()  # the stakes go into escrow here, and only here
        except Refused:
            await self._changed([])  # e.g. a player cannot cover the stake: the table waits for players
            raise

    async def _on_rematch_expired(self) -> None:
        """Nobody plays a match he did not agree to: free the seats of those who did not agree in
        time; the others keep theirs and the table waits for players again."""
        proposal, self.rematch = self.rematch, None
        if proposal is None or self.status != "finished":
            return
        freed: list[tuple[Seat, Principal, bool]] = []
        for seat in self.seats:
            if seat.kind == "human" and seat.principal is not None and seat.seat not in proposal.agreed:
                principal = seat.principal
                freed.append((seat, principal, self._vacate(seat)))
        self.status = "waiting"
        self.rules = self.spec.rules.with_changes(seats=len(self.seats))
        await self._changed([{"type": "seat", "seat": seat.seat, "name": None, "kind": "empty"} for seat, *_ in freed])
        for _, principal, had_connections in freed:
            if had_connections:
                await self._tell_watching(principal)

    # ------------------------------------------------------------------ play

    async def _on_play(self, principal: Principal, message: dict[str, Any]) -> dict[str, Any]:
        if self.status != "playing" or self.game is None:
            raise Refused("match_not_running", "there is no match running at this table")
        seat = self.seat_of(principal)
        if seat is None:
            raise Refused("not_seated", "spectators cannot play; join a seat first")
        data = {k: v for k, v in message.items() if k not in ("op", "principal", "conn", "id", "version", "reply")}
        data["type"] = message["op"]
        data["seat"] = seat.seat
        try:
            action = action_from_json(data)
        except ActionParseError as exc:
            raise Refused("bad_message", str(exc)) from exc
        try:
            await self._apply_engine(action, f"{principal.key}|{message.get('id')}")
        except IllegalAction as exc:
            client_version = message.get("version")
            if isinstance(client_version, int) and client_version < self.version:
                raise Refused(
                    "stale_version",
                    f"the table moved on (version {self.version}, you saw {client_version}): {exc}",
                ) from exc
            raise Refused(exc.code, str(exc)) from exc
        return {"type": "ack", "id": message.get("id"), "version": self.version}

    @property
    def actions(self) -> list[dict[str, Any]]:
        return [entry["a"] for entry in self.log]

    async def _apply_engine(self, action: Any, key: str | None = None) -> None:
        """Apply, persist, then push. If the store cannot take the move, nothing happened."""
        assert self.game is not None
        before, deadline, since = self.game, self.deadline, self.decision_since
        self.game, events = apply(self.game, action)
        entry = {"a": action_to_json(action), "k": key}
        self.log.append(entry)
        try:
            await self._changed(events, entry=entry)
        except (BrokerError, Refused) as exc:  # the store is down, or a newer owner fenced us out
            self.game, self.deadline, self.decision_since = before, deadline, since
            self.log.pop()
            self.version -= 1
            if isinstance(exc, Refused):
                raise
            raise Refused(
                "unavailable", "the table cannot save moves right now (storage unreachable); try again shortly"
            ) from exc
        if self.game.outcome is not None:
            await self._finish_match()

    async def _finish_match(self, bump: bool = True) -> None:
        assert self.game is not None and self.game.outcome is not None and self.match_id is not None
        outcome = self.game.outcome
        self.status = "finished"
        self.deadline = self.decision_since = None
        self.gone_since.clear()
        n = len(self.seats)
        paid = payout(outcome, self.rules.stake, n, dealer=self.game.dealer)
        changes = {i: paid[i] - self.rules.stake for i in range(n)}
        payouts: dict[int, int] = {}
        for seat in self.seats:
            if seat.principal is not None and seat.principal.account_id is not None and self.rules.stake > 0:
                payouts[seat.principal.account_id] = paid[seat.seat]
        keys = {seat.seat: self._series_key(seat) for seat in self.seats}
        by_seat = series_update({}, outcome)
        for seat_no, (wins, losses) in by_seat.items():
            old = self.series.get(keys[seat_no], (0, 0))
            self.series[keys[seat_no]] = (old[0] + wins, old[1] + losses)
        self.next_dealer = outcome.durak
        self.results = {"outcome": outcome.to_json(), "coin_changes": changes, "match_id": self.match_id}
        record = FinishedMatch(
            match_id=self.match_id,
            table_code=self.code,
            rules=self.rules.to_json(),
            seed=str(self.game.seed),
            dealer=self.game.dealer,
            seats=[self._seat_record(seat) for seat in self.seats],
            actions=self.actions,
            outcome=outcome.to_json(),
            stake=self.rules.stake,
            payouts=payouts,
            coin_changes=changes,
            hands=[[str(c) for c in hand] for hand in self.game.hands],
            private=self.spec.private,
        )
        self._settle_task = asyncio.create_task(self._settle(record))
        await self._changed([{"type": "results", **self.results}], bump=bump)

    async def _settle(self, record: FinishedMatch) -> None:
        delay = 0.2
        for _ in range(12):
            try:
                await self.hooks.match_finished(record)
                return
            except Exception:
                log.exception("table %s: settling match %s failed; retrying", self.code[:8], record.match_id)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)

    def _series_key(self, seat: Seat) -> str:
        return seat.principal.key if seat.principal else f"bot:{seat.seat}"

    def _seat_record(self, seat: Seat) -> dict[str, Any]:
        principal = seat.principal
        return {
            "seat": seat.seat,
            "account_id": principal.account_id if principal else None,
            "guest_name": principal.name if principal and principal.account_id is None else None,
            "bot_level": seat.level if seat.kind == "bot" else None,
            "display_name": seat.name or f"Seat {seat.seat + 1}",
        }

    # ------------------------------------------------------------------ timers

    def _next_deadline(self) -> float | None:
        """The earliest moment something must happen without a command: the move timer, a seat's
        idle limit or disconnect grace, the end of a rematch proposal."""
        dues = [when for when, _ in self._decision_limits().values()]
        if self.deadline is not None:
            dues.append(self.deadline)
        if self.rematch is not None:
            dues.append(self.rematch.deadline)
        return min(dues, default=None)

    def _deciding_seats(self) -> list[int]:
        """The seats the running match waits for (computed once per game state)."""
        game = self.game
        if game is None or self.status != "playing":
            return []
        if self._deciding_of is not game:
            self._deciding_of, self._deciding = game, decision(game)["seats"]
        return self._deciding

    def _decision_limits(self) -> dict[int, tuple[float, str]]:
        """For each player the match waits for: when he runs out of time for this decision besides
        the move timer, and why (§8). Connected: the idle limit after the decision came ("idle").
        Not connected (never, or gone): the disconnect grace from when the decision came or when he
        went, whichever is later ("grace"), and never past the idle limit."""
        since = self.decision_since
        if since is None:
            return {}
        limits: dict[int, tuple[float, str]] = {}
        for seat_no in self._deciding_seats():
            seat = self.seats[seat_no]
            if seat.kind != "human":
                continue  # bots answer by themselves
            idle_at = since + self.limits.idle_limit_s
            when, why = idle_at, "idle"
            if not seat.connections:
                grace_at = max(since, self.gone_since.get(seat_no, since)) + self.limits.disconnect_grace_s
                if grace_at < idle_at:
                    when, why = grace_at, "grace"
            if self._limits_retry_at is not None and when < self._limits_retry_at:
                when = self._limits_retry_at
            limits[seat_no] = (when, why)
        return limits

    def _seat_deadlines(self) -> dict[int, tuple[float, str]]:
        """When each seat the match waits for must have decided, whichever comes first of the move
        timer ("timer") and its own limit ("idle" / "grace"): what the players are shown."""
        shown = self._decision_limits()
        if self.deadline is not None:
            for seat_no in self._deciding_seats():
                limit = shown.get(seat_no)
                if limit is None or self.deadline <= limit[0]:
                    shown[seat_no] = (self.deadline, "timer")
        return shown

    async def _on_deadline(self) -> None:
        now = self.clock()
        if self.rematch is not None and self.rematch.deadline <= now:
            await self._on_rematch_expired()
            return
        if self.game is None or self.status != "playing":
            self.deadline = None
            return
        limits = self._decision_limits().items()
        overdue = sorted((when, seat_no, why) for seat_no, (when, why) in limits if when <= now)
        if overdue:
            _, seat_no, why = overdue[0]
            await self._decision_ran_out(seat_no, "disconnected" if why == "grace" else "timeout", now)
            return
        if self.deadline is not None and self.deadline <= now:
            self.deadline = None
            for action in timeout_actions(self.game):
                if self.status != "playing" or self.game is None:
                    break
                if action in legal_actions(self.game, action.seat) or isinstance(action, Forfeit):
                    try:
                        await self._apply_engine(action)
                    except Refused:
                        self.deadline = now + RETRY_S
                        return

    async def _decision_ran_out(self, seat_no: int, reason: str, now: float) -> None:
        """A seat's idle limit or grace is over: he forfeits a lead or a defence, and passes on a
        throw-in (§8), as when the move timer runs out."""
        assert self.game is not None
        action = next((a for a in timeout_actions(self.game) if a.seat == seat_no), None)
        if isinstance(action, Forfeit):
            action = Forfeit(seat_no, reason)
        elif action is None or action not in legal_actions(self.game, seat_no):
            self._limits_retry_at = now + RETRY_S  # cannot happen: the seat is one the match waits for
            return
        try:
            await self._apply_engine(action)
        except (Refused, IllegalAction) as exc:  # the store is down (or a bug): try again shortly
            log.warning("table %s: %s of seat %d not applied: %s", self.code[:8], action.kind, seat_no, exc)
            self._limits_retry_at = now + RETRY_S

    def _reset_timer(self) -> None:
        """After every change: the decision that came with it gets its full time."""
        self._limits_retry_at = None
        if self.status == "playing" and self.game is not None and self.game.phase == "challenge":
            # The challenge window (§9) runs from its opening, with or without a move timer; passes on
            # it do not extend it. When it closes, ``timeout_actions`` passes for everyone left. It
            # never forfeits anyone, so no idle limit or grace runs during it (no ``decision_since``).
            if self.window_closes is None:
                self.window_closes = self.clock() + self.limits.challenge_window_s
            self.deadline = self.window_closes
            self.decision_since = None
            return
        self.window_closes = None
        if self.status == "playing" and self.game is not None and self.game.outcome is None:
            now = self.clock()
            self.decision_since = now
            self.deadline = now + self.rules.timer if self.rules.timer > 0 else None
        else:
            self.deadline = self.decision_since = None

    # ------------------------------------------------------------------ bots

    def _schedule_bots(self) -> None:
        if self.status != "playing" or self.game is None:
            return
        idle_bots = [seat for seat in self.seats if seat.kind == "bot" and seat.seat not in self._bot_tasks]
        if not idle_bots:
            return  # the common case on every change at a table of people: nothing to compute
        waiting = set(decision(self.game)["seats"])
        for seat in idle_bots:
            legal = legal_actions(self.game, seat.seat)
            if not legal:
                continue
            must = seat.seat in waiting
            if not must and self._bot_asked.get(seat.seat) == self.version:
                continue
            self._bot_asked[seat.seat] = self.version
            v = view(self.game, seat.seat)
            delay = self.spec.bot_delay_ms / 1000 if must else 0.0
            self._bot_tasks[seat.seat] = asyncio.create_task(self._bot_think(seat.seat, self.version, v, delay))

    async def _bot_think(self, seat: int, version: int, seat_view: dict[str, Any], delay: float) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            choice = await self.bots.choose(self.code, seat, seat_view, seat_view["legal"])
        except Exception:
            log.exception("table %s: bot in seat %d failed", self.code[:8], seat)
            choice = None
        self.post({"op": "bot", "seat": seat, "version": version, "action": choice})

    async def _on_bot(self, message: dict[str, Any]) -> None:
        seat = int(message["seat"])
        self._bot_tasks.pop(seat, None)
        choice = message.get("action")
        if self.game is None or self.status != "playing":
            return
        if choice is not None and message.get("version") == self.version:
            try:
                action = action_from_json({**choice, "seat": seat})
                await self._apply_engine(action)
                return
            except (ActionParseError, IllegalAction) as exc:
                log.warning("table %s: bot %d chose an illegal action: %s", self.code[:8], seat, exc)
            except Refused:
                self._bot_asked.pop(seat, None)
                asyncio.get_running_loop().call_later(RETRY_S, self.post, {"op": "wake"})
                return
        if seat in decision(self.game)["seats"] or message.get("version") != self.version:
            self._bot_asked.pop(seat, None)
        self._schedule_bots()

    # ------------------------------------------------------------------ persistence

    async def _persist(self, entry: dict[str, Any] | None) -> None:
        if self.fenced:
            raise Refused("moved", "this table is now served by another server; reconnect")
        if isinstance(self.store, MemoryStore) and self.store.private and entry is not None:
            return  # one process, nobody to take over: the log lives in memory; seats etc. still saved
        try:
            if entry is None or self._dirty:
                # The stored log is rewritten only when it may differ from ours (a new match, after a
                # failed append); otherwise the record alone is written (e.g. a match's results).
                same_log = self._log_stored == len(self.log) and not self._dirty
                self._log_stored = None
                await self.store.save(self.code, self.token, self.record(), None if same_log else self.log)
                self._dirty = False
            else:
                live = {"version": self.version, "deadline": self._deadline_epoch()}
                self._log_stored = None  # unknown until the store answers
                try:
                    await self.store.append(self.code, self.token, live, entry, len(self.log) - 1)
                except LogGap:
                    await self.store.save(self.code, self.token, self.record(), self.log)
            self._log_stored = len(self.log)
        except Fenced:
            self.fenced = True
            log.warning("table %s: fenced out by a newer owner; stopping here", self.code[:8])
            asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(self.stop()))
            raise Refused("moved", "this table is now served by another server; reconnect") from None

    async def save_now(self) -> None:
        """Write the whole record and log (a new table, or after the store lost data)."""
        await self._persist(None)

    def _deadline_epoch(self) -> float | None:
        if self.deadline is None:
            return None
        return time.time() + (self.deadline - self.clock())

    def record(self) -> dict[str, Any]:
        deadline = self._deadline_epoch()
        return {
            "spec": self.spec.to_json(),
            "seats": [
                {
                    "seat": s.seat,
                    "kind": s.kind,
                    "level": s.level,
                    "principal": s.principal.to_json() if s.principal else None,
                    "rating": s.rating,
                }
                for s in self.seats
            ],
            "status": self.status,
            "rules": self.rules.to_json(),
            "version": self.version,
            "match_id": self.match_id,
            "seed": str(self.game.seed) if self.game is not None else None,
            "dealer": self.game.dealer if self.game is not None else None,
            "deadline": deadline,
            "series": {key: list(score) for key, score in self.series.items()},
            "next_dealer": self.next_dealer,
            "results": self.results,
            "created": self.created,
            "info": self.info(),
        }

    @classmethod
    def restore(
        cls,
        record: dict[str, Any],
        entries: list[dict[str, Any]],
        broker: Broker,
        hooks: MatchHooks,
        bots: BotRunner,
        *,
        store: TableStore,
        token: int,
        on_change: Callable[[TableActor], None] | None = None,
        limits: DecisionLimits = DecisionLimits(),
    ) -> TableActor:
        """Rebuild a table from its record and action log: the same match at the same version."""
        spec = TableSpec.from_json(record["spec"])
        actor = cls(spec, broker, hooks, bots, on_change=on_change, store=store, token=token, limits=limits)
        actor.rules = Rules.from_json(record["rules"])
        actor.seats = [
            Seat(
                s["seat"],
                s["kind"],
                Principal.from_json(s["principal"]) if s["principal"] else None,
                s["level"],
                rating=s.get("rating"),
            )
            for s in record["seats"]
        ]
        actor.status = record["status"]
        actor.match_id = record["match_id"]
        actor.series = {key: (score[0], score[1]) for key, score in record["series"].items()}
        actor.next_dealer = record["next_dealer"]
        actor.results = record["results"]
        actor.created = record["created"]
        if record["seed"] is not None and actor.status in ("playing", "finished"):
            game = new_match(actor.rules, int(record["seed"]), record["dealer"])
            for entry in entries:
                game, _ = apply(game, action_from_json(entry["a"]))
                if entry.get("k"):
                    actor._done[tuple(entry["k"].split("|", 1))] = {
                        "type": "ack",
                        "id": entry["k"].split("|", 1)[1],
                        "version": record["version"],
                    }
            actor.game = game
            actor.log = list(entries)
        actor.version = record["version"]
        if actor.status == "playing":
            actor.decision_since = actor.clock()  # idle limits and graces start again with the new owner
        if record["deadline"] is not None and actor.status == "playing":
            remaining = max(0.0, record["deadline"] - time.time())
            actor.deadline = actor.clock() + remaining + TAKEOVER_GRACE_S
            if actor.game is not None and actor.game.phase == "challenge":
                actor.window_closes = actor.deadline
        return actor

    async def resume(self) -> None:
        """After a takeover: ask every connection (on any process) to say hello again, finish
        anything left undone (settlement is idempotent), and let bots think again."""
        rehello = channels.frame({"type": "_rehello"})
        people = {seat.principal.key for seat in self.seats if seat.principal is not None}
        await self._deliver(  # through the broker: the connections may be anywhere
            [(channels.watch(self.code), rehello), *((channels.person(self.code, key), rehello) for key in people)],
            everywhere=True,
        )
        if self.status == "finished" and self.game is not None and self.game.outcome is not None:
            self.status = "playing"
            await self._finish_match(bump=False)
        self._schedule_bots()

    # ------------------------------------------------------------------ pushing state

    def _ms_until(self, when: float) -> int:
        return max(0, int((when - self.clock()) * 1000))

    def info(self, principal: Principal | None = None) -> dict[str, Any]:
        """Public facts about the table (seats, status, series, spectators, deadlines, rematch).

        Each seat the match waits for carries ``deadline_ms`` (time left for its decision) and
        ``deadline_kind`` ("timer": the move timer, "idle": the idle limit, "grace": the time to
        come back); ``deadline_ms`` of the table is the earliest of them."""
        seats = [seat.public() for seat in self.seats]
        deadlines = self._seat_deadlines()
        for row in seats:
            when, kind = deadlines.get(row["seat"], (None, None))
            row["deadline_ms"] = None if when is None else self._ms_until(when)
            row["deadline_kind"] = kind
        earliest = min((when for when, _ in deadlines.values()), default=self.deadline)
        rematch = None
        if self.rematch is not None:
            rematch = {"agreed": self._rematch_agreed(), "deadline_ms": self._ms_until(self.rematch.deadline)}
        return {
            "code": self.code,
            "name": self.spec.name,
            "private": self.spec.private,
            "chat": self.spec.chat,
            "status": self.status,
            "rules": self.rules.to_json(),
            "creator": self.spec.creator.key,
            "seats": seats,
            "spectators": len(self.spectators),
            "series": {seat.seat: self.series.get(self._series_key(seat), (0, 0)) for seat in self.seats},
            "deadline_ms": None if earliest is None else self._ms_until(earliest),
            "grace_s": self.limits.disconnect_grace_s,
            "rematch": rematch,
            "match_id": self.match_id,
            "results": self.results,
            "version": self.version,
            "you": principal.key if principal else None,
        }

    def _snapshot(self, seat: int | None, principal: Principal | None) -> dict[str, Any]:
        table = self.info(principal)
        if principal is not None and principal.key.startswith("anon:"):
            table["code"] = None  # watchers without a session may hold only the spectator link
        return {
            "version": self.version,
            "seat": seat,
            "view": view(self.game, seat) if self.game is not None else None,
            "table": table,
        }

    def _recent_events(self, seat: int | None) -> list[dict[str, Any]]:
        """The current (or last) match's events still in the history, redacted for ``seat``: a
        fresh page fills its log with them."""
        out: list[dict[str, Any]] = []
        for version, events in self.history:
            for event in events:
                if event.get("type") == "match_start":
                    out = []
                out.append({**event_to_json(public_cards(event, seat)), "version": version})
        return out

    def _events_since(self, last_version: int, seat: int | None) -> list[dict[str, Any]] | None:
        """The events after ``last_version``, or None when they cannot be replayed: too old, or a
        version this table never had (the client then takes the snapshot alone)."""
        if last_version > self.version or last_version < 0:
            return None
        if last_version == self.version:
            return []
        if not self.history or self.history[0][0] > last_version + 1:
            return None
        out: list[dict[str, Any]] = []
        for version, events in self.history:
            if version > last_version:
                out.extend({**event_to_json(public_cards(e, seat)), "version": version} for e in events)
        return out

    async def _changed(
        self, events: list[dict[str, Any]], bump: bool = True, entry: dict[str, Any] | None = None
    ) -> None:
        if bump:
            self.version += 1
            self._reset_timer()
            try:
                await self._persist(entry)
            except BrokerError:
                if entry is not None:
                    raise  # a move that cannot be saved is not applied
                self._dirty = True  # seat changes: saved whole once the store is back
            self.history.append((self.version, events))
        await self._push(events if bump else [])
        if self.on_change is not None:
            self.on_change(self)
        self._schedule_bots()

    async def _push(self, events: list[dict[str, Any]]) -> None:
        """Push the change to every connected seat and to the spectators. The parts every recipient
        shares (the public view, the table facts) are encoded once and spliced into each message."""
        base = self.info()
        base.pop("you", None)
        table_json = dumps(base)
        public = public_view(self.game) if self.game is not None else None
        public_json = dumps(public)[:-1] if public is not None else ""
        version = self.version
        outbox: list[tuple[str, str]] = []

        def events_for(recipient: int | None) -> str:
            return dumps([{**event_to_json(public_cards(e, recipient)), "version": version} for e in events])

        # Only drawn cards differ between recipients; without a draw everybody gets the same events.
        shared_events = None if any(event.get("type") == "draw" for event in events) else events_for(None)
        for seat in self.seats:
            if seat.kind == "bot":
                self.bots.observe(self.code, seat.seat, [event_to_json(public_cards(e, seat.seat)) for e in events])
                continue
            if seat.principal is None or not seat.connections:
                continue
            assert self.game is None or public is not None
            if self.game is not None:
                private = dumps({"seat": seat.seat, **seat_view(self.game, seat.seat)})
                view_json = public_json + "," + private[1:]
            else:
                view_json = "null"
            events_json = shared_events or events_for(seat.seat)
            you = dumps(seat.principal.key)
            text = (
                f'{{"type":"update","version":{version},"seat":{seat.seat},"events":{events_json},'
                f'"view":{view_json},"table":{table_json[:-1]},"you":{you}}}}}'
            )
            outbox.append(
                (
                    channels.person(self.code, seat.principal.key),
                    channels.frame_text("update", text, version=version, seat=seat.seat),
                )
            )
        if self.spectators:
            view_json = public_json + ',"seat":null}' if public is not None else "null"
            events_json = shared_events or events_for(None)
            watch_table = dumps({**base, "code": None})  # a spectator link never reveals the invite code
            text = (
                f'{{"type":"update","version":{version},"seat":null,"events":{events_json},'
                f'"view":{view_json},"table":{watch_table}}}'
            )
            outbox.append((channels.watch(self.code), channels.frame_text("update", text, version=version)))
        await self._send(outbox)

    async def _send(self, outbox: list[tuple[str, str]]) -> None:
        """Publish now, or, while the actor handles a command, with everything else it publishes
        (the updates, then the ack: one round trip to a remote broker)."""
        if self._outbox is not None:
            self._outbox.extend(outbox)
            return
        await self._deliver(outbox)

    async def _deliver(self, outbox: list[tuple[str, str]], *, everywhere: bool = False) -> None:
        """Frames on channels no other process has used go to this process's subscribers at once;
        the rest (and replies to REST calls, which may come from anywhere) through the broker."""
        remote = self._remote_channels
        prefix = self._channel_prefix
        here: list[tuple[str, str]] = []
        there: list[tuple[str, str]] = []
        for item in outbox:
            channel = item[0]
            if everywhere or channel in remote or not channel.startswith(prefix):
                there.append(item)
            else:
                here.append(item)
        try:
            if here:
                self.broker.deliver_here(here)
            if there:
                await self.broker.publish_many(there)
        except Exception as exc:  # broker down: clients resync when it returns
            log.warning("table %s: publish failed (%d messages): %s", self.code[:8], len(outbox), exc)

    async def _flush(self) -> None:
        outbox, self._outbox = self._outbox, None
        if outbox:
            await self._send(outbox)
