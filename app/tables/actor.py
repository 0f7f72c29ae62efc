"""One asyncio actor per live table: the only writer of its match.

Every command reaches the actor as a typed :class:`~app.tables.commands.Command` through its inbox
(``inbox.py``): straight from a connection in this process, or decoded once from the broker channel
``t:<code>:in``. Commands and due deadlines are applied one at a time, each by the handler for its
type (the tables at the end of this file), and a play command is answered once (``Answers``).
Every change bumps ``version``, is saved (``record.py``) and becomes a
:class:`~app.tables.fanout.Change`, which ``fanout.py`` turns into redacted frames for each
connected player and the spectators, wherever their connections live.

The actor holds the state and the order of things; the rules of each piece are parts on plain
values that never import the actor: seats, connections, series and the rematch proposal
(``seating.py``), the timers (``deadlines.py``), what the table shows (``facts.py``), the deal
(``fair.py``), a finished match (``results.py``) and when bots think (``bot_turns.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from app.broker import Broker, BrokerError
from app.db.matches import table_ref
from app.engine import Action, Forfeit, IllegalAction, action_to_json, apply, timeout_actions
from app.tables import channels, deadlines, facts, fanout
from app.tables.bot_runner import BotRunner
from app.tables.bot_turns import BotTurns
from app.tables.commands import PLAY_COMMANDS, Answers, Command, Refused, refused_move
from app.tables.deadlines import REMATCH_WINDOW_S, RETRY_S
from app.tables.fair import FairDeals
from app.tables.hooks import CannotStart, MatchHooks
from app.tables.inbox import Inbox
from app.tables.record import Recorder, TableRecord, record_json, takeover_deadline
from app.tables.results import match_end, settle
from app.tables.seating import Seating, require_creator
from app.tables.spec import DecisionLimits, Principal, Seat, TableSpec
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
        restored: TableRecord | None = None,
    ) -> None:
        """A new table of ``spec``, or the one ``restored`` from its record and log (``read_record``:
        the same match at the same version, on the process that took the table over)."""
        self.spec, self.broker, self.hooks, self.bots = spec, broker, hooks, bots
        self.limits, self.on_change, self.clock = limits, on_change, clock
        self.recorder = Recorder(spec.code, store, token, on_fenced=self._stop_soon)
        self.delivery = fanout.Delivery(spec.code, broker)
        table = restored or TableRecord.new(spec)
        self.status = table.status  # waiting | playing | finished
        self.rules, self.version, self.created = table.rules, table.version, table.created
        self.seating = Seating(table.seats, series=table.series)
        self.game, self.match_id, self.log = table.game, table.match_id, table.log  # log: {"a": action, "k": cmd key}
        self.next_dealer, self.results = table.next_dealer, table.results
        ref = table_ref(spec.code)  # provably fair deals (docs/fairness.md), naming the table by this
        self.fair = FairDeals.from_json(ref, table.fair) if table.fair is not None else FairDeals(ref)
        self.answers = Answers(DEDUPE, table.done)
        self.history: deque[tuple[int, list[dict[str, Any]]]] = deque(maxlen=HISTORY)
        self.timers = deadlines.TableTimers()
        if restored is not None and self.status == "playing":  # idle limits and graces start again here
            self.timers.taken_over(self.game, takeover_deadline(table.deadline, clock()), clock())
        self.inbox = Inbox(lambda: self.clock())  # tests may swap the clock
        self.bot_turns = BotTurns(spec.code, bots, self.post)
        self._task: asyncio.Task[None] | None = None
        self._pump: asyncio.Task[None] | None = None
        self._settle_task: asyncio.Task[bool] | None = None
        self._ready = asyncio.Event()

    @property
    def code(self) -> str:
        return self.spec.code

    @property
    def token(self) -> int:
        """The fencing token of this owner's lease: every write to the store carries it."""
        return self.recorder.token

    @property
    def fenced(self) -> bool:
        """A newer owner has taken the table over: this actor accepts nothing any more."""
        return self.recorder.fenced

    @property
    def seats(self) -> list[Seat]:
        return self.seating.seats

    @property
    def actions(self) -> list[dict[str, Any]]:
        return [entry["a"] for entry in self.log]

    # ------------------------------------------------------------------ lifetime

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"table-{self.code[:8]}")
        await self._ready.wait()

    def _stop_soon(self) -> None:
        asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(self.stop()))

    async def stop(self) -> None:
        self.inbox.close()
        tasks = [task for task in (*self.bot_turns.thinking.values(), self._pump, self._task) if task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._settle_task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._settle_task), 5)

    async def _run(self) -> None:
        async with self.broker.subscribe(channels.inbox(self.code)) as sub:
            self._pump = asyncio.create_task(self.inbox.pump(sub, self.code))
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

    def post(self, command: Command) -> None:
        """Queue a command for the actor: commands of a connection in this process, bot decisions."""
        self.inbox.post(command)

    # ------------------------------------------------------------------ dispatch

    async def _handle(self, command: Command) -> None:
        kind, principal = command.type, command.principal
        if command.remote and command.conn and principal is not None:  # its connection is elsewhere
            self.delivery.heard_from_afar(principal.key)
        if kind in _INTERNAL:
            return await _INTERNAL[kind](self, command)
        if principal is None:
            return
        handler = _ON_PLAY if kind in PLAY_COMMANDS else _HANDLERS.get(kind)
        run = None if handler is None else lambda: handler(self, principal, command)
        answer = await self.answers.answer(command, principal, run)
        await self.delivery.send(fanout.answer_frames(self.code, command, principal.key, answer))

    async def _on_info(self, principal: Principal, command: Command) -> dict[str, Any]:
        return {"type": "info", "table": self.info(principal), "watch_code": self.spec.watch_code}

    # ------------------------------------------------------------------ connections and seats (seating.py)

    async def _on_hello(self, command: Command) -> None:
        """Answer with the welcome; then, when the connection is new here, tell everybody who is
        connected now (``presence``), so that a connection's first message is always its welcome."""
        if command.principal is None:
            return
        seat, arrived = self.seating.connect(command.conn, command.principal)
        seat_no = seat.seat if seat else None
        table = facts.snapshot(self.info(command.principal), self.version, seat_no, self.game, command.principal)
        reply = facts.welcome(table, self.history, command.last_version, seat_no)
        await self.delivery.send(fanout.answer_frames(self.code, command, command.principal.key, reply))
        if arrived:
            await self._presence_changed()

    async def _on_bye(self, command: Command) -> None:
        if command.conn:
            self.seating.disconnect(command.conn, self.status == "playing", self.clock())
            await self._presence_changed()

    async def _presence_changed(self) -> None:
        """A connection came or went: the table's state did not change (no new version), only who
        is here. Every connection gets the table facts again as a ``presence`` message."""
        await self.delivery.send(fanout.presence_frames(self._change([])))
        if self.on_change is not None:
            self.on_change(self)

    async def _on_join(self, principal: Principal, command: Command) -> dict[str, Any]:
        """A player takes a seat: the one he asked for, or the first free one."""
        self.seating.may_sit(principal, self.status, self.rules.stake)
        seed = self.fair.checked_client_seed(command.client_seed, command.commitment) if command.client_seed else None
        self.seating.free_seat(command.seat)  # no such seat, taken, full: refused before asking the database
        others = [s.principal.account_id for s in self.seats if s.principal and s.principal.account_id is not None]
        if refusal := await self.hooks.may_sit(account_id=principal.account_id, others=others, stake=self.rules.stake):
            raise Refused(*refusal)  # docs/integrity.md: frozen, related accounts, the pair's coin cap
        seat = self.seating.sit(principal, command.seat, command.rating)
        if seed is not None:
            self.fair.client_seeds[principal.key] = seed  # sitting down with a seed: before the match can start
        if self.status == "finished":  # sitting down after a match is asking for the next one
            self.seating.agree(seat.seat, self.clock(), REMATCH_WINDOW_S)
        await self._changed([{"type": "seat", "seat": seat.seat, "name": principal.name, "kind": "human"}])
        with contextlib.suppress(Refused):
            await self._start_when_ready()
        return {"type": "ack", "seat": seat.seat, "version": self.version}

    async def _on_leave(self, principal: Principal, command: Command) -> dict[str, Any]:
        seat = self.seating.seated(principal, "you have no seat at this table")
        if self.status == "playing" and self.game is not None and seat.seat not in self.game.out:
            await self._apply_engine(Forfeit(seat.seat, "left"))
            return {"type": "ack", "version": self.version}
        if self.status == "playing":
            raise Refused("match_running", "you are already out; you can leave when the match ends")
        self.fair.forget(principal.key)  # his seed does not count for the next deal
        had_connections = self.seating.vacate(seat)
        await self._changed([{"type": "seat", "seat": seat.seat, "name": None, "kind": "empty"}])
        if had_connections:
            await self._tell_watching(principal)
        return {"type": "ack", "version": self.version}

    async def _tell_watching(self, principal: Principal) -> None:
        """Tell a player's connections they watch now (seated ones listen on one channel)."""
        watching = {"type": "welcome", **facts.snapshot(self.info(principal), self.version, None, self.game, principal)}
        await self.delivery.send([fanout.reply_frame(channels.person(self.code, principal.key), watching)])

    async def _on_client_seed(self, principal: Principal, command: Command) -> dict[str, Any]:
        """A seated player's own randomness for the next deal: accepted only between matches and only
        as an answer to the table's current commitment (the server is bound to its seed first)."""
        seat = self.seating.seated(principal, "only a player seated at this table contributes a client seed")
        if self.status == "playing":
            raise Refused("match_running", "the deal of this match is fixed; send a client seed for the next one")
        self.fair.client_seeds[principal.key] = self.fair.checked_client_seed(command.client_seed, command.commitment)
        await self._changed([{"type": "client_seed", "seat": seat.seat}])
        return {"type": "ack", "version": self.version}

    async def _on_add_bot(self, principal: Principal, command: Command) -> dict[str, Any]:
        require_creator(self.spec, principal)
        seat = self.seating.seat_bot(command.level, command.seat, self.status, self.rules.stake)
        await self._changed([{"type": "seat", "seat": seat.seat, "name": seat.name, "kind": "bot"}])
        with contextlib.suppress(Refused):
            await self._start_when_ready()
        return {"type": "ack", "seat": seat.seat, "version": self.version}

    async def _on_remove_bot(self, principal: Principal, command: Command) -> dict[str, Any]:
        require_creator(self.spec, principal)
        seat_no = self.seating.unseat_bot(command.seat, self.status)
        await self._changed([{"type": "seat", "seat": seat_no, "name": None, "kind": "empty"}])
        return {"type": "ack", "version": self.version}

    # ------------------------------------------------------------------ a match starts and ends

    async def _start_when_ready(self) -> None:
        """A waiting table starts when its last seat fills; after a match, only a rematch that every
        player has agreed to starts (§8). Raises ``Refused`` when it cannot start."""
        if self.status == "finished" and self.seating.all_agreed():
            self.status, self.seating.rematch = "waiting", None
            self.rules = self.spec.rules.with_changes(seats=len(self.seats))
            try:
                await self._start_match()
            except Refused:
                await self._changed([])  # e.g. a player cannot cover the stake: the table waits for players
                raise
        elif self.status == "waiting" and all(seat.kind != "empty" for seat in self.seats):
            await self._start_match()

    async def _on_start(self, principal: Principal, command: Command) -> dict[str, Any]:
        require_creator(self.spec, principal)
        if self.status == "playing":
            raise Refused("match_running", "the match is already running")
        if self.status == "finished":
            raise Refused("match_over", "the match is over: a rematch starts when every player has asked for it")
        await self._start_match()
        return {"type": "ack", "version": self.version, "match_id": self.match_id}

    async def _start_match(self) -> None:
        self.rules = self.seating.for_match(self.rules)
        match_id = uuid.uuid4().hex
        if self.rules.stake > 0:  # the stakes go into escrow here, and only here
            accounts = self.seating.stake_accounts()
            try:
                await self.hooks.match_started(match_id=match_id, stake=self.rules.stake, account_ids=accounts)
            except CannotStart as exc:
                raise Refused(exc.code, exc.message) from exc
        self.game = game = self.fair.new_match(self.rules, self.seats, self.next_dealer)
        self.match_id, self.log, self.results, self.status = match_id, [], None, "playing"
        self.seating.match_started()
        self.bot_turns.new_match(self.seats)
        start = {"match_id": match_id, "dealer": game.dealer, "attacker": game.attacker, "defender": game.defender}
        await self._changed([{"type": "match_start", **start}])

    async def _on_rematch(self, principal: Principal, command: Command) -> dict[str, Any]:
        """Proposing or agreeing to a rematch (§8, seating.py); it starts once every seat agreed."""
        seat = self.seating.seated(principal, "only a player seated at this table can ask for a rematch")
        if self.status != "finished":
            raise Refused("match_running" if self.status == "playing" else "no_match", "no finished match to rematch")
        if self.seating.rematch is None or seat.seat not in self.seating.rematch.agreed:
            self.seating.agree(seat.seat, self.clock(), REMATCH_WINDOW_S)
            await self._changed([{"type": "rematch", "seat": seat.seat}])
            await self._start_when_ready()
        return {"type": "ack", "version": self.version}

    async def _on_rematch_expired(self) -> None:
        """Nobody plays a match he did not agree to: free the seats of those who did not agree in
        time; the others keep theirs and the table waits for players again."""
        freed = self.seating.expire_rematch(finished=self.status == "finished")
        if freed is None:
            return
        for _, principal, _ in freed:
            self.fair.forget(principal.key)
        self.status = "waiting"
        self.rules = self.spec.rules.with_changes(seats=len(self.seats))
        await self._changed([{"type": "seat", "seat": seat_no, "name": None, "kind": "empty"} for seat_no, *_ in freed])
        for _, principal, had_connections in freed:
            if had_connections:
                await self._tell_watching(principal)

    async def _finish_match(self, bump: bool = True) -> None:
        game, match_id, fair = self.game, self.match_id, self.fair
        assert game is not None and game.outcome is not None and match_id is not None
        self.status = "finished"
        self.timers.deadline = self.timers.decision_since = None
        self.seating.gone_since.clear()
        end = match_end(
            game, self.rules, self.seats, self.seating.series, self.spec, match_id, self.actions, fair.revealed()
        )
        self.seating.series, self.next_dealer, self.results = end.series, end.next_dealer, end.results
        self._settle_task = asyncio.create_task(settle(self.hooks, end.record))
        renewed = fair.next_commitment()  # the next match's seed, committed to before any client seed
        await self._changed(
            [
                {"type": "results", **end.results},
                *([{"type": "commitment", "match_number": fair.number, "commitment": fair.commitment}] * renewed),
            ],
            bump=bump,
        )

    # ------------------------------------------------------------------ play

    async def _on_play(self, principal: Principal, command: Command) -> dict[str, Any]:
        if self.status != "playing" or self.game is None:
            raise Refused("match_not_running", "there is no match running at this table")
        seat = self.seating.seated(principal, "spectators cannot play; join a seat first")
        try:
            await self._apply_engine(command.seated_action(seat.seat), f"{principal.key}|{command.id}")
        except IllegalAction as exc:
            raise refused_move(exc, command.version, self.version) from exc
        return {"type": "ack", "id": command.id, "version": self.version}

    async def _apply_engine(self, action: Action, key: str | None = None) -> None:
        """Apply, persist, then push. If the store cannot take the move, nothing happened."""
        assert self.game is not None
        timers = self.timers
        before, deadline, since = self.game, timers.deadline, timers.decision_since
        self.game, events = apply(self.game, action)
        entry = {"a": action_to_json(action), "k": key}
        self.log.append(entry)
        try:
            await self._changed(events, entry=entry)
        except (BrokerError, Refused) as exc:  # the store is down, or a newer owner fenced us out
            self.game, timers.deadline, timers.decision_since = before, deadline, since
            self.log.pop()
            self.version -= 1
            if isinstance(exc, Refused):
                raise
            raise Refused(
                "unavailable", "the table cannot save moves right now (storage unreachable); try again shortly"
            ) from exc
        if self.game.outcome is not None:
            await self._finish_match()

    def _schedule_bots(self) -> None:
        if self.status == "playing" and self.game is not None:
            self.bot_turns.schedule(self.game, self.seats, self.version, self.spec.bot_delay_ms / 1000)

    async def _on_bot(self, command: Command) -> None:
        """A bot's decision (bot_turns.py), applied only if the table has not moved on meanwhile."""
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
        self.bot_turns.not_applied(self.game, seat, stale=command.version != self.version)
        self._schedule_bots()

    async def _on_wake(self, command: Command) -> None:
        self._schedule_bots()

    # ------------------------------------------------------------------ timers (deadlines.py)

    def _own_limits(self) -> dict[int, tuple[float, str]]:
        """Each waited-for player's idle limit or disconnect grace."""
        running = self.game if self.status == "playing" else None
        return self.timers.own_limits(running, self.seats, self.seating.gone_since, self.limits)

    def _next_deadline(self) -> float | None:
        rematch = self.seating.rematch
        return self.timers.next(self._own_limits(), rematch.deadline if rematch is not None else None)

    async def _on_deadline(self) -> None:
        """A deadline came: a rematch proposal's end, a seat's idle limit or grace (it forfeits a lead
        or a defence and passes on a throw-in, §8), or the move timer."""
        now, timers, game = self.clock(), self.timers, self.game
        if self.seating.rematch is not None and self.seating.rematch.deadline <= now:
            await self._on_rematch_expired()
        elif game is None or self.status != "playing":
            timers.deadline = None
        elif (overdue := deadlines.first_overdue(self._own_limits(), now)) is not None:
            seat_no, reason = overdue
            action = deadlines.ran_out_action(game, seat_no, reason)
            if action is None:  # cannot happen: the seat is one the match waits for
                timers.retry_at = now + RETRY_S
                return
            try:
                await self._apply_engine(action)
            except (Refused, IllegalAction) as exc:  # the store is down (or a bug): try again shortly
                log.warning("table %s: %s of seat %d not applied: %s", self.code[:8], action.kind, seat_no, exc)
                timers.retry_at = now + RETRY_S
        elif timers.deadline is not None and timers.deadline <= now:
            timers.deadline = None
            for action in timeout_actions(game):
                if self.status == "playing" and self.game is not None and deadlines.still_applies(self.game, action):
                    try:
                        await self._apply_engine(action)
                    except Refused:
                        timers.deadline = now + RETRY_S
                        return

    # ------------------------------------------------------------------ saving (record.py)

    async def save_now(self) -> None:
        """Write the whole record and log (a new table, or after the store lost data)."""
        await self.recorder.save(self.record, self.log, None, self._live)

    def _deadline_epoch(self) -> float | None:
        deadline = self.timers.deadline
        return None if deadline is None else time.time() + (deadline - self.clock())

    def _live(self) -> dict[str, Any]:
        return {"version": self.version, "deadline": self._deadline_epoch()}

    def record(self) -> dict[str, Any]:
        table = TableRecord(
            self.spec, self.rules, self.seats, self.status, self.version, self.match_id, self.seating.series,
            self.next_dealer, self.results, self.created, self._deadline_epoch(), self.game, fair=self.fair.to_json(),
        )  # fmt: skip
        return record_json(table, self.info())

    async def resume(self) -> None:
        """After a takeover: ask every connection (on any process) to say hello again, finish
        anything left undone (settlement is idempotent), and let bots think again."""
        await self.delivery.deliver(
            fanout.rehello_frames(self.code, self.seats), everywhere=True
        )  # they may be anywhere
        if self.status == "finished" and self.game is not None and self.game.outcome is not None:
            self.status = "playing"
            await self._finish_match(bump=False)
        self._schedule_bots()

    # ------------------------------------------------------------------ what the players see (facts.py)

    def info(self, principal: Principal | None = None) -> dict[str, Any]:
        """The table facts; ``you`` is the asker's key."""
        running, now = (self.game if self.status == "playing" else None), self.clock()
        return facts.table_facts(
            self.spec, self.seating, status=self.status, rules=self.rules, match_id=self.match_id,
            results=self.results, version=self.version, fairness=self.fair.info(self.seats),
            shown=self.timers.shown(self._own_limits(), running), deadline=self.timers.deadline, now=now,
            grace_s=self.limits.disconnect_grace_s, you=principal.key if principal else None,
        )  # fmt: skip

    def _change(self, events: list[dict[str, Any]]) -> fanout.Change:
        """The table as it is now, for the fan-out: who hears it and what happened."""
        table = self.info()
        del table["you"]
        players, watched = self.seating.players(), bool(self.seating.spectators)
        return fanout.Change(self.code, self.version, events, table, self.game, players, watched)

    async def _changed(
        self, events: list[dict[str, Any]], bump: bool = True, entry: dict[str, Any] | None = None
    ) -> None:
        """A change of the table: a new version, saved (a move that cannot be saved raises), then
        told to the bots and pushed to everybody connected."""
        if bump:
            self.version += 1
            self.timers.reset(self.game, self.status, self.rules.timer, self.limits, self.clock())
            await self.recorder.save_change(self.record, self.log, entry, self._live)
            self.history.append((self.version, events))
        else:
            events = []
        self.bot_turns.observe(self.seats, events)
        await self.delivery.send(fanout.update_frames(self._change(events)))
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
_INTERNAL: dict[str, Callable[[TableActor, Command], Awaitable[None]]] = {  # connections' own and the table's
    "hello": TableActor._on_hello,
    "bye": TableActor._on_bye,
    "bot": TableActor._on_bot,
    "wake": TableActor._on_wake,
}
