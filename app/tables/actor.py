"""One asyncio actor per live table: the only writer of its match.

Every command reaches the actor as a typed :class:`~app.tables.commands.Command`: on its queue from a
connection in this process, or through the broker channel ``t:<code>:in``, decoded once. Commands
and deadlines are applied one at a time to the engine; every change bumps ``version`` and becomes a
:class:`~app.tables.fanout.Change`, which ``app/tables/fanout.py`` turns into redacted frames for each
connected seat (``t:<code>:p:<principal>``) and the spectators (``t:<code>:watch``);
``app/tables/record.py`` saves it. Nothing here assumes that the connection and the actor live in
the same process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from typing import Any

from app.broker import Broker, BrokerError, Gap
from app.db.matches import table_ref
from app.engine import (
    Action,
    Forfeit,
    IllegalAction,
    Rules,
    RulesError,
    State,
    action_to_json,
    apply,
    decision,
    event_to_json,
    legal_actions,
    new_match,
    public_cards,
    timeout_actions,
    view,
)
from app.tables import channels, deadlines
from app.tables.bot_runner import BotRunner
from app.tables.bot_turns import BotTurns
from app.tables.commands import PLAY_COMMANDS, BadCommand, Command, Refused, command_from_json
from app.tables.deadlines import REMATCH_WINDOW_S, RETRY_S
from app.tables.fair import FairDeals
from app.tables.fanout import Change, Delivery, events_since, presence_frames, recent_events, reply_frame, update_frames
from app.tables.hooks import CannotStart, FinishedMatch, MatchHooks
from app.tables.inbox import Inbox
from app.tables.record import Recorder, TableRecord, read_record, record_json, takeover_deadline
from app.tables.results import match_end, series_key
from app.tables.spec import BOT_LEVELS, DecisionLimits, Principal, RematchProposal, Seat, TableSpec
from app.tables.store import TableStore

__all__ = ["PLAY_COMMANDS", "Refused", "TableActor"]

log = logging.getLogger("durak.table")

HISTORY = 64  # versions kept for resuming clients; older gaps get a snapshot
DEDUPE = 512  # command ids remembered per table


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
        self.recorder = Recorder(spec.code, store, token, on_fenced=self._stop_soon)
        self.delivery = Delivery(spec.code, broker)
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
        self.fair = FairDeals(table_ref(spec.code))  # provably fair deals (docs/fairness.md)
        self.created = time.time()
        self._done: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()
        self.inbox = Inbox(lambda: self.clock())  # tests may swap the clock
        self._task: asyncio.Task[None] | None = None
        self._pump: asyncio.Task[None] | None = None
        self.bot_turns = BotTurns(spec.code, bots, self.post)
        self._settle_task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    # ------------------------------------------------------------------ lifetime

    @property
    def code(self) -> str:
        return self.spec.code

    @property
    def store(self) -> TableStore:
        return self.recorder.store

    @property
    def token(self) -> int:
        return self.recorder.token

    @property
    def fenced(self) -> bool:
        return self.recorder.fenced

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"table-{self.code[:8]}")
        await self._ready.wait()

    def _stop_soon(self) -> None:
        asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(self.stop()))

    async def stop(self) -> None:
        self.inbox.close()
        for task in (*self.bot_turns.thinking.values(), self._pump, self._task):
            if task is not None:
                task.cancel()
        for task in (*self.bot_turns.thinking.values(), self._pump, self._task):
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
                command = await self.inbox.next(self._next_deadline)
                self.delivery.hold()  # what one command (or timer) publishes goes out together, in order
                try:
                    await (self._on_deadline() if command is None else self._handle(command))
                except Exception:  # one bad command must never kill the table
                    what = "timer" if command is None else repr(command.type)
                    log.exception("table %s: %s handling failed", self.code[:8], what)
                await self.delivery.flush()

    async def _pump_from(self, sub: Any) -> None:
        async for item in sub:
            if isinstance(item, Gap):
                continue  # commands lost in a gap are answered by the clients' own timeouts
            try:
                self.post(command_from_json(item.data))
            except BadCommand as exc:
                log.warning("table %s: dropped a command from the broker: %s", self.code[:8], exc)

    def post(self, command: Command) -> None:
        """Queue a command for the actor: commands of a connection in this process, bot decisions."""
        self.inbox.post(command)

    # ------------------------------------------------------------------ dispatch

    async def _handle(self, command: Command) -> None:
        kind, principal, cmd_id = command.type, command.principal, command.id
        if command.remote and command.conn and principal is not None:  # its connection is elsewhere
            self.delivery.heard_from_afar(principal.key)
        internal = _INTERNAL.get(kind)
        if internal is not None:
            await internal(self, command)
            return
        if principal is None:
            return
        is_play = kind in PLAY_COMMANDS
        key = (principal.key, str(cmd_id)) if cmd_id is not None and is_play else None
        if key is not None and key in self._done:
            await self._reply(command, principal, {**self._done[key], "duplicate": True})
            return
        if kind == "hello":
            await self._on_hello(command, principal)
            return
        handler = _ON_PLAY if is_play else _HANDLERS.get(kind)
        try:
            if handler is None:
                raise Refused("unknown_type", f"unknown command {kind!r}")
            reply = await handler(self, principal, command)
        except Refused as refused:
            reply = {"type": "error", "id": cmd_id, "code": refused.code, "message": refused.message}
        if cmd_id is not None:
            reply.setdefault("id", cmd_id)
        if key is not None:
            self._done[key] = reply
            while len(self._done) > DEDUPE:
                self._done.popitem(last=False)
        await self._reply(command, principal, reply)

    async def _reply(self, command: Command, principal: Principal, reply: dict[str, Any]) -> None:
        if command.reply:
            await self.delivery.send([reply_frame(command.reply, reply)])
        elif command.conn:
            await self._publish(channels.person(self.code, principal.key), reply, conn=command.conn)

    async def _publish(self, channel: str, payload: dict[str, Any], conn: str | None = None) -> None:
        await self.delivery.send([reply_frame(channel, payload, conn)])

    async def _on_info(self, principal: Principal, command: Command) -> dict[str, Any]:
        return {"type": "info", "table": self.info(principal), "watch_code": self.spec.watch_code}

    # ------------------------------------------------------------------ seats and connections

    def seat_of(self, principal: Principal) -> Seat | None:
        for seat in self.seats:
            if seat.principal is not None and seat.principal.key == principal.key:
                return seat
        return None

    async def _on_hello(self, command: Command, principal: Principal) -> None:
        """Answer with the welcome; then, when the connection is new here, tell everybody who is
        connected now (``presence``), so that a connection's first message is always its welcome."""
        conn = command.conn
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
        last_version = command.last_version
        if isinstance(last_version, int) and not isinstance(last_version, bool):
            missed = events_since(self.history, self.version, last_version, seat.seat if seat else None)
            if missed is not None:
                reply["events"] = missed
                reply["resumed_from"] = last_version
        if "resumed_from" not in reply:
            reply["recent"] = recent_events(self.history, seat.seat if seat else None)
        await self._reply(command, principal, reply)
        if arrived:
            await self._presence_changed()

    async def _on_bye(self, command: Command) -> None:
        conn = command.conn
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
        await self.delivery.send(presence_frames(self._change([])))
        if self.on_change is not None:
            self.on_change(self)

    async def _on_join(self, principal: Principal, command: Command) -> dict[str, Any]:
        if self.seat_of(principal) is not None:
            raise Refused("already_seated", "you already have a seat at this table")
        if self.status == "playing":
            raise Refused("match_running", "the match is running; join after it ends or watch")
        if self.rules.stake > 0 and principal.is_guest:
            raise Refused("guests_free_tables_only", "guests can sit only at free tables; sign up to play for coins")
        seed = self.fair.checked_client_seed(command.client_seed, command.commitment) if command.client_seed else None
        seat = self._free_seat(command.seat)
        others = [s.principal.account_id for s in self.seats if s.principal and s.principal.account_id is not None]
        if refusal := await self.hooks.may_sit(account_id=principal.account_id, others=others, stake=self.rules.stake):
            raise Refused(*refusal)  # docs/integrity.md: frozen, related accounts, the pair's coin cap
        if seed is not None:
            self.fair.client_seeds[principal.key] = seed  # sitting down with a seed: before the match can start
        seat.kind, seat.principal, seat.level = "human", principal, None
        rating = command.rating
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

    async def _on_leave(self, principal: Principal, command: Command) -> dict[str, Any]:
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
        if seat.principal is not None:
            self.fair.forget(seat.principal.key)
        seat.kind, seat.principal, seat.connections, seat.rating = "empty", None, set(), None
        if self.rematch is not None:
            self.rematch.agreed.discard(seat.seat)
        return bool(moved)

    async def _tell_watching(self, principal: Principal) -> None:
        """Tell a player's connections they watch now (seated ones listen on one channel)."""
        snapshot = {"type": "welcome", **self._snapshot(None, principal)}
        await self._publish(channels.person(self.code, principal.key), snapshot)

    async def _on_client_seed(self, principal: Principal, command: Command) -> dict[str, Any]:
        """A seated player's own randomness for the next deal: accepted only between matches and only
        as an answer to the table's current commitment (the server is bound to its seed first)."""
        seat = self.seat_of(principal)
        if seat is None:
            raise Refused("not_seated", "only a player seated at this table contributes a client seed")
        if self.status == "playing":
            raise Refused("match_running", "the deal of this match is fixed; send a client seed for the next one")
        self.fair.client_seeds[principal.key] = self.fair.checked_client_seed(command.client_seed, command.commitment)
        await self._changed([{"type": "client_seed", "seat": seat.seat}])
        return {"type": "ack", "version": self.version}

    def _require_creator(self, principal: Principal) -> None:
        if principal.key != self.spec.creator.key:
            raise Refused("not_creator", "only the table's creator can do that")

    async def _on_add_bot(self, principal: Principal, command: Command) -> dict[str, Any]:
        self._require_creator(principal)
        if self.status == "playing":
            raise Refused("match_running", "bots can be seated only between matches")
        level = command.level
        if level not in BOT_LEVELS:
            raise Refused("bad_level", f"bot level must be one of {', '.join(BOT_LEVELS)}")
        if self.rules.stake > 0:
            raise Refused("bots_free_tables_only", "bots hold no coins: they sit only at free tables")
        seat = self._free_seat(command.seat)
        seat.kind, seat.principal, seat.level = "bot", None, str(level)
        await self._changed([{"type": "seat", "seat": seat.seat, "name": seat.name, "kind": "bot"}])
        await self._maybe_autostart()
        return {"type": "ack", "seat": seat.seat, "version": self.version}

    async def _on_remove_bot(self, principal: Principal, command: Command) -> dict[str, Any]:
        self._require_creator(principal)
        if self.status == "playing":
            raise Refused("match_running", "bots can be removed only between matches")
        wanted = command.seat
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

    async def _on_start(self, principal: Principal, command: Command) -> dict[str, Any]:
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
        deal = self.fair.start(self.rules, self.seats)
        dealer = self.next_dealer if self.next_dealer is not None and self.next_dealer < len(self.seats) else None
        if dealer is None:
            dealer = deal.dealer_draw  # left to chance by the rules: drawn from the same committed stream
        self.game = new_match(self.rules, 0, dealer, deal.deck)
        self.match_id = match_id
        self.log = []
        self.results = None
        self.status = "playing"
        self.rematch = None
        self.gone_since.clear()
        self.bot_turns.reset()
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

    async def _on_rematch(self, principal: Principal, command: Command) -> dict[str, Any]:
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

    async def _on_play(self, principal: Principal, command: Command) -> dict[str, Any]:
        if self.status != "playing" or self.game is None:
            raise Refused("match_not_running", "there is no match running at this table")
        seat = self.seat_of(principal)
        if seat is None:
            raise Refused("not_seated", "spectators cannot play; join a seat first")
        try:
            await self._apply_engine(command.seated_action(seat.seat), f"{principal.key}|{command.id}")
        except IllegalAction as exc:
            client_version = command.version
            if client_version is not None and client_version < self.version:
                raise Refused(
                    "stale_version",
                    f"the table moved on (version {self.version}, you saw {client_version}): {exc}",
                ) from exc
            raise Refused(exc.code, str(exc)) from exc
        return {"type": "ack", "id": command.id, "version": self.version}

    @property
    def actions(self) -> list[dict[str, Any]]:
        return [entry["a"] for entry in self.log]

    async def _apply_engine(self, action: Action, key: str | None = None) -> None:
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
        self.status = "finished"
        self.deadline = self.decision_since = None
        self.gone_since.clear()
        end = match_end(
            self.game,
            self.rules,
            self.seats,
            self.series,
            code=self.code,
            match_id=self.match_id,
            private=self.spec.private,
            actions=self.actions,
            fairness=self.fair.revealed(),
        )
        self.series, self.next_dealer, self.results = end.series, end.next_dealer, end.results
        self._settle_task = asyncio.create_task(self._settle(end.record))
        renewed = self.fair.next_commitment()  # the next match's seed, committed to before any client seed
        fair = self.fair
        await self._changed(
            [
                {"type": "results", **end.results},
                *([{"type": "commitment", "match_number": fair.number, "commitment": fair.commitment}] * renewed),
            ],
            bump=bump,
        )

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

    # ------------------------------------------------------------------ bots

    def _schedule_bots(self) -> None:
        if self.status == "playing" and self.game is not None:
            self.bot_turns.schedule(self.game, self.seats, self.version, self.spec.bot_delay_ms / 1000)

    async def _on_bot(self, command: Command) -> None:
        seat = int(command.seat)
        self.bot_turns.answered(seat)
        if self.game is None or self.status != "playing":
            return
        if command.action is not None and command.version == self.version:
            try:
                await self._apply_engine(command.action)
                return
            except IllegalAction as exc:
                log.warning("table %s: bot %d chose an illegal action: %s", self.code[:8], seat, exc)
            except Refused:
                self.bot_turns.ask_again(seat)
                asyncio.get_running_loop().call_later(RETRY_S, self.post, Command("wake"))
                return
        if seat in decision(self.game)["seats"] or command.version != self.version:
            self.bot_turns.ask_again(seat)
        self._schedule_bots()

    async def _on_wake(self, command: Command) -> None:
        self._schedule_bots()

    # ------------------------------------------------------------------ timers (app/tables/deadlines.py)

    def _deciding_seats(self) -> list[int]:
        """The seats the running match waits for (computed once per game state)."""
        game = self.game
        if game is None or self.status != "playing":
            return []
        if self._deciding_of is not game:
            self._deciding_of, self._deciding = game, decision(game)["seats"]
        return self._deciding

    def _decision_limits(self) -> dict[int, tuple[float, str]]:
        if self.decision_since is None:
            return {}
        return deadlines.decision_limits(
            self.seats, self._deciding_seats(), self.decision_since, self.gone_since, self.limits, self._limits_retry_at
        )

    def _seat_deadlines(self) -> dict[int, tuple[float, str]]:
        return deadlines.shown_deadlines(self._decision_limits(), self._deciding_seats(), self.deadline)

    def _next_deadline(self) -> float | None:
        rematch_at = self.rematch.deadline if self.rematch is not None else None
        return deadlines.next_deadline(self._decision_limits(), self.deadline, rematch_at)

    def _reset_timer(self) -> None:
        """After every change: the decision that came with it gets its full time."""
        self._limits_retry_at = None
        timers = deadlines.timers_after_change(
            self.game, self.status, self.rules.timer, self.limits, self.window_closes, self.clock()
        )
        self.deadline, self.decision_since, self.window_closes = timers.deadline, timers.since, timers.window_closes

    async def _on_deadline(self) -> None:
        now = self.clock()
        if self.rematch is not None and self.rematch.deadline <= now:
            await self._on_rematch_expired()
            return
        if self.game is None or self.status != "playing":
            self.deadline = None
            return
        overdue = deadlines.first_overdue(self._decision_limits(), now)
        if overdue is not None:
            await self._decision_ran_out(*overdue, now)
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

    # ------------------------------------------------------------------ saving (app/tables/record.py)

    async def save_now(self) -> None:
        """Write the whole record and log (a new table, or after the store lost data)."""
        await self.recorder.save(self.record, self.log, None, self._live)

    def _deadline_epoch(self) -> float | None:
        if self.deadline is None:
            return None
        return time.time() + (self.deadline - self.clock())

    def _live(self) -> dict[str, Any]:
        return {"version": self.version, "deadline": self._deadline_epoch()}

    def record(self) -> dict[str, Any]:
        table = TableRecord(
            spec=self.spec,
            rules=self.rules,
            seats=self.seats,
            status=self.status,
            version=self.version,
            match_id=self.match_id,
            series=self.series,
            next_dealer=self.next_dealer,
            results=self.results,
            created=self.created,
            deadline=self._deadline_epoch(),
            fair=self.fair.to_json(),
            game=self.game,
        )
        return record_json(table, self.info())

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
        table = read_record(record, entries)
        actor = cls(table.spec, broker, hooks, bots, on_change=on_change, store=store, token=token, limits=limits)
        actor.rules, actor.seats, actor.status, actor.version = table.rules, table.seats, table.status, table.version
        actor.match_id, actor.series, actor.next_dealer = table.match_id, table.series, table.next_dealer
        actor.results, actor.created, actor.game, actor.log = table.results, table.created, table.game, table.log
        actor._done.update(table.done)
        if table.fair is not None:
            actor.fair = FairDeals.from_json(actor.fair.table, table.fair)
        if actor.status == "playing":
            actor.decision_since = actor.clock()  # idle limits and graces start again with the new owner
            actor.deadline = takeover_deadline(table.deadline, actor.clock())
            if actor.deadline is not None and actor.game is not None and actor.game.phase == "challenge":
                actor.window_closes = actor.deadline
        return actor

    async def resume(self) -> None:
        """After a takeover: ask every connection (on any process) to say hello again, finish
        anything left undone (settlement is idempotent), and let bots think again."""
        rehello = channels.frame({"type": "_rehello"})
        people = {seat.principal.key for seat in self.seats if seat.principal is not None}
        await self.delivery.deliver(  # through the broker: the connections may be anywhere
            [(channels.watch(self.code), rehello), *((channels.person(self.code, key), rehello) for key in people)],
            everywhere=True,
        )
        if self.status == "finished" and self.game is not None and self.game.outcome is not None:
            self.status = "playing"
            await self._finish_match(bump=False)
        self._schedule_bots()

    # ------------------------------------------------------------------ what the players see

    def _ms_until(self, when: float) -> int:
        return max(0, int((when - self.clock()) * 1000))

    def info(self, principal: Principal | None = None) -> dict[str, Any]:
        """Public facts about the table (seats, status, series, spectators, deadlines, rematch).

        Each seat the match waits for carries ``deadline_ms`` (time left for its decision) and
        ``deadline_kind`` ("timer": the move timer, "idle": the idle limit, "grace": the time to
        come back); ``deadline_ms`` of the table is the earliest of them."""
        seats = [seat.public() for seat in self.seats]
        shown = self._seat_deadlines()
        for row in seats:
            when, kind = shown.get(row["seat"], (None, None))
            row["deadline_ms"] = None if when is None else self._ms_until(when)
            row["deadline_kind"] = kind
        earliest = min((when for when, _ in shown.values()), default=self.deadline)
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
            "series": {seat.seat: self.series.get(series_key(seat), (0, 0)) for seat in self.seats},
            "deadline_ms": None if earliest is None else self._ms_until(earliest),
            "grace_s": self.limits.disconnect_grace_s,
            "rematch": rematch,
            "fairness": self.fair.info(self.seats),
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

    def _change(self, events: list[dict[str, Any]]) -> Change:
        """The table as it is now, for the fan-out: who hears it and what happened."""
        table = self.info()
        del table["you"]
        players = tuple(
            (seat.seat, seat.principal.key)
            for seat in self.seats
            if seat.kind == "human" and seat.principal is not None and seat.connections
        )
        return Change(self.code, self.version, events, table, self.game, players, bool(self.spectators))

    async def _changed(
        self, events: list[dict[str, Any]], bump: bool = True, entry: dict[str, Any] | None = None
    ) -> None:
        """A change of the table: a new version, saved (a move that cannot be saved raises), then
        told to the bots and pushed to everybody connected."""
        if bump:
            self.version += 1
            self._reset_timer()
            await self.recorder.save_change(self.record, self.log, entry, self._live)
            self.history.append((self.version, events))
        if not bump:
            events = []
        for seat in self.seats:
            if seat.kind == "bot":
                self.bots.observe(self.code, seat.seat, [event_to_json(public_cards(e, seat.seat)) for e in events])
        await self.delivery.send(update_frames(self._change(events)))
        if self.on_change is not None:
            self.on_change(self)
        self._schedule_bots()


_HANDLERS: dict[str, Callable[[TableActor, Principal, Command], Awaitable[dict[str, Any]]]] = {
    "join": TableActor._on_join,
    "leave": TableActor._on_leave,
    "add_bot": TableActor._on_add_bot,
    "remove_bot": TableActor._on_remove_bot,
    "start": TableActor._on_start,
    "rematch": TableActor._on_rematch,
    "client_seed": TableActor._on_client_seed,
    "info": TableActor._on_info,
}
_ON_PLAY = TableActor._on_play  # every type in PLAY_COMMANDS
_INTERNAL: dict[str, Callable[[TableActor, Command], Awaitable[None]]] = {
    "bot": TableActor._on_bot,
    "bye": TableActor._on_bye,
    "wake": TableActor._on_wake,
}
