"""One asyncio actor per live table: the only writer of its match.

Every command reaches the actor as a typed :class:`~app.tables.commands.Command` through its inbox
(``inbox.py``): straight from a connection in this process, or decoded once from what the table's
transport hears (``listen``: from other processes and request/reply calls). Commands and due
deadlines are applied one at a time, each by the handler for its type (the tables at the end of this
file), and a play command is answered once (``Answers``).
Every change bumps ``version``, is saved (``record.py``) and becomes a
:class:`~app.tables.fanout.Change`, which the table's transport (the port ``TableTransport``,
``ports.py``) sends to each connected player and the spectators, each getting it redacted for
himself (``fanout.py``), wherever their connections live; answers go to one recipient (``send``).

The actor holds the state and the order of things; the rules of each piece are parts on plain
values that never import the actor: seats, connections, series and the rematch proposal
(``seating.py``), the timers (``deadlines.py``), what the table shows (``facts.py``), the deal
(``fair.py``), a finished match (``results.py``), the steps of a match's start and end
(``match_flow.py``) and when bots think (``bot_turns.py``); the seat
commands change the seats in ``seat_commands.py`` and hand the actor a ``SeatChange``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

from app.broker.base import BrokerError
from app.engine import Action, Forfeit, IllegalAction, apply
from app.tables import answers, deadlines, facts, fanout, match_flow
from app.tables.answers import Answer, Answers, WelcomeMessage
from app.tables.bot_runner import BotRunner
from app.tables.bot_turns import BotTurns
from app.tables.commands import (
    MOVES,
    PLAY_COMMANDS,
    SEAT_BODIES,
    BotMove,
    Bye,
    Command,
    Handover,
    Hello,
    Info,
    Leave,
    Rated,
    Refused,
    Start,
    Wake,
    refused_move,
    unavailable,
)
from app.tables.fair import FairDeals
from app.tables.hooks import MatchHooks
from app.tables.inbox import Inbox
from app.tables.ports import Person, TableTransport, answer_to
from app.tables.record import (
    LiveJson,
    Recorder,
    StoredTable,
    TableRecord,
    log_entry,
    record_json,
    rematch_from_json,
    rematch_json,
    takeover_deadline,
)
from app.tables.seat_commands import (
    SEAT_COMMANDS,
    SeatChange,
    SeatTable,
    away_expired,
    may_start,
    ready_expired,
    rematch_expired,
)
from app.tables.seating import Seating
from app.tables.spec import DeadlineKind, DecisionLimits, Principal, Seat, TableSpec, TableStatus, table_ref
from app.tables.store import TableStore
from app.tables.table_events import AnyEvent
from app.tables.table_facts import TableFacts

__all__ = ["PLAY_COMMANDS", "Refused", "TableActor"]

log = logging.getLogger("durak.table")

HISTORY = 64  # versions kept for resuming clients; older gaps get a snapshot
DEDUPE = 512  # command ids remembered per table


class TableActor:
    def __init__(
        self,
        spec: TableSpec,
        transport: TableTransport,
        hooks: MatchHooks,
        bots: BotRunner,
        *,
        on_change: Callable[[TableActor, bool], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        store: TableStore | None = None,
        token: int = 1,
        relock: Callable[[], Awaitable[int | None]] | None = None,
        limits: DecisionLimits = DecisionLimits(),
        restored: TableRecord | None = None,
    ) -> None:
        """A new table of ``spec``, or the one ``restored`` from its record and log (``read_record``:
        the same match at the same version, on the process that took the table over). ``transport``:
        where its commands come from and its messages go (the registry's, app/transport)."""
        self.spec, self.code, self.hooks, self.bots = spec, spec.code, hooks, bots
        self.limits, self.on_change, self.clock = limits, on_change, clock
        # It saves the table under this owner's lease (``token``; ``relock`` takes the lease again
        # when the store lost the table); ``fenced``: a newer owner took it over.
        self.recorder = Recorder(spec.code, store, token, on_fenced=self._stop_soon, relock=relock)
        self.delivery = transport  # what it sends to whom goes out through it
        table = restored or TableRecord.new(spec)
        self.status: TableStatus = table.status
        self.rules, self.version, self.created = table.rules, table.version, table.created
        self.seating = Seating(table.seats, series=table.series)
        self.game, self.match_id, self.log = table.game, table.match_id, table.log  # log_entry() of each move
        self.next_dealer, self.results = table.next_dealer, table.results
        self.started = table.started  # when the current (or last) match was dealt, epoch seconds
        ref = table_ref(spec.code)  # provably fair deals (docs/fairness.md), naming the table by this
        self.fair = FairDeals.from_json(ref, table.fair) if table.fair is not None else FairDeals(ref)
        self.answers = Answers(DEDUPE, table.done)
        self.history = fanout.History(HISTORY)
        self.timers = deadlines.TableTimers()
        if restored is not None:  # the move timer and a rematch proposal go on; idle limits and graces start again
            self.seating.rematch = rematch_from_json(table.rematch, clock(), table.saved_at)
            if self.status == TableStatus.PLAYING:
                self.timers.taken_over(self.game, takeover_deadline(table.deadline, clock(), table.saved_at), clock())
        self.inbox = Inbox(lambda: self.clock(), spec.code)  # tests may swap the clock
        self.bot_turns = BotTurns(spec.code, bots, self.post)
        self._task: asyncio.Task[None] | None = None
        self._settle_task: asyncio.Task[bool] | None = None
        self._ready = asyncio.Event()
        self.handed_over = False  # its process is stopping: later commands are refused ``moved``

    @property
    def seats(self) -> list[Seat]:
        return self.seating.seats

    # ------------------------------------------------------------------ lifetime

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"table-{self.code[:8]}")
        await self._ready.wait()

    def _stop_soon(self) -> None:
        asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(self.stop()))

    async def stop(self) -> None:
        self.inbox.close()
        tasks = [task for task in (*self.bot_turns.thinking.values(), self._task) if task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._settle_task is not None:
            # asyncio.wait: it neither cancels the task nor raises when it fails or takes too long
            # (and, unlike 3.11's wait_for, never swallows a cancel of the caller).
            await asyncio.wait({self._settle_task}, timeout=5)

    async def _run(self) -> None:
        async with self.delivery.listen(self.inbox.heard):
            self._ready.set()
            while True:
                command = await self.inbox.next(self._next_deadline)
                self.delivery.hold()  # what one command (or timer) publishes goes out together, in order
                try:
                    await (self._on_deadline() if command is None else self._handle(command))
                except Exception:  # one bad command must never kill the table
                    what = "timer" if command is None else repr(command.kind)
                    log.exception("table %s: %s handling failed", self.code[:8], what)
                self.delivery.flush()
                if self.handed_over:
                    break
        for command in self.inbox.take_all():  # queued behind the handover (or while unsubscribing)
            self._refuse_moved(command)

    def post(self, command: Command) -> None:
        """Queue a command for the actor: commands of a connection in this process, bot decisions."""
        if self.handed_over:
            self._refuse_moved(command)
            return
        self.inbox.post(command)

    async def hand_over(self, timeout_s: float = 5.0) -> None:
        """Its process is stopping (a drain, docs/operations.md): the commands queued until now are
        handled (answered as usual), every later one is refused ``moved`` (retryable: its sender
        sends it again, same id, and it reaches the table's next owner), then the actor stops. The
        caller saves the table and releases its lease for a peer to take it over at once."""
        self.inbox.post(Command(Handover()))
        task = self._task
        if task is not None and not task.done():
            await asyncio.wait({task}, timeout=timeout_s)  # see stop(): no cancel, nothing raised
        self.handed_over = True
        await self.stop()

    async def _on_handover(self, command: Command) -> None:
        self.handed_over = True

    def _refuse_moved(self, command: Command) -> None:
        """Answer a command this table no longer takes (it is being handed over) with ``moved``."""
        principal = command.principal
        if principal is None or type(command.body) in _INTERNAL or not (command.conn or command.reply):
            return  # a hello is sent again when the next owner asks (``_rehello``); bots think again there
        answer = answers.error(command.id, "moved", "this table is moving to another server: send it again (same id)")
        to = answer_to(command, principal.key)
        if to is not None:
            self.delivery.send_now(to, answer)

    # ------------------------------------------------------------------ dispatch

    async def _handle(self, command: Command) -> None:
        body, principal = command.body, command.principal
        if command.conn and principal is not None:  # a connection's messages go where it is
            self.delivery.connected(command)
        internal = _INTERNAL.get(type(body))
        if internal is not None:
            return await internal(self, command)
        if principal is None:
            return
        handler = _HANDLERS.get(type(body))
        run = None if handler is None else lambda: handler(self, principal, command)
        answer = await self.answers.answer(command, principal, run)
        self._answer(command, principal, answer)

    def _answer(self, command: Command, principal: Principal, answer: Answer | WelcomeMessage) -> None:
        to = answer_to(command, principal.key)
        if to is not None:
            self.delivery.send(to, answer)

    async def _on_info(self, principal: Principal, command: Command) -> Answer:
        return answers.info_reply(self.info(principal), self.spec.watch_code)

    # ------------------------------------------------------------------ connections and seats (seating.py)

    async def _on_hello(self, command: Command) -> None:
        """Answer with the welcome; then, when the connection is new here, tell everybody who is
        connected now (``presence``), so that a connection's first message is always its welcome."""
        if command.principal is None:
            return
        principal = command.principal
        seat, arrived = self.seating.connect(command.conn, principal)
        if self.status == TableStatus.WAITING:
            self.seating.sync_away(self.clock())
        seat_no = seat.seat if seat else None
        table = facts.snapshot(self.info(principal), self.version, seat_no, self.game, principal)
        assert isinstance(command.body, Hello)
        reply = facts.welcome(table, self.history.versions(), command.body.last_version, seat_no)
        self._answer(command, principal, reply)
        if arrived:
            await self._presence_changed()

    async def _on_bye(self, command: Command) -> None:
        if command.conn:
            self.seating.disconnect(command.conn, self.status == TableStatus.PLAYING, self.clock())
            if self.status == TableStatus.WAITING:
                self.seating.sync_away(self.clock())
            await self._presence_changed()
            self.delivery.gone(command.conn)

    async def _presence_changed(self) -> None:
        """A connection came or went: the table's state did not change (no new version), only who
        is here. Every connection gets the table facts again as a ``presence`` message."""
        self.delivery.send_all(self._change([], "presence"))
        if self.on_change is not None:
            self.on_change(self, True)

    async def _on_seat_command(self, principal: Principal, command: Command) -> Answer:
        """join, leave between matches, add or remove a bot, a client seed, a rematch, ready: the
        change is made on the seats (seat_commands.py); here it is saved, told, and may start the
        match."""
        body = command.body
        assert isinstance(body, SEAT_BODIES)
        change = await SEAT_COMMANDS[type(body)](self._seat_table(), principal, body)
        await self._seats_changed(change)
        return answers.seat_ack(command.id, self.version, change.seat)

    async def _on_leave(self, principal: Principal, command: Command) -> Answer:
        """Leaving a running match is a forfeit (§8); between matches it frees the seat."""
        seat = self.seating.seated(principal, "you have no seat at this table")
        if self.status == TableStatus.PLAYING and self.game is not None and seat.seat not in self.game.out:
            key = f"{principal.key}|{command.id}" if command.id is not None else None  # deduped after a takeover too
            await self._apply_engine(Forfeit(seat.seat, "left"), key)
            return answers.seat_ack(command.id, self.version)
        return await self._on_seat_command(principal, command)

    def _seat_table(self) -> SeatTable:
        return SeatTable(self.spec, self.seating, self.fair, self.hooks, self.status, self.rules.stake, self.clock())

    async def _seats_changed(self, change: SeatChange) -> None:
        if change.waiting:
            self.status, self.rules = TableStatus.WAITING, self.spec.rules.with_changes(seats=len(self.seats))
        if self.status == TableStatus.WAITING:
            self.seating.sync_away(self.clock())
        if change.events or change.waiting:
            await self._changed(change.events)
        for principal in change.watching:  # tell a player's connections they watch now
            table = facts.snapshot(self.info(principal), self.version, None, self.game, principal)
            self.delivery.send(Person(principal.key), answers.welcome(table))
        full = all(seat.kind != "empty" for seat in self.seats)
        checking = self.seating.ready is not None  # a ready check the creator opened early
        ready = full and self.fair.seeded(self.seats) if self.spec.deal_on_seed else full
        # After a match: all agreed.
        if change.start != "no" and self.status == TableStatus.WAITING and (ready or checking):
            try:
                await self._try_start(change.ready)
            except Refused:  # a player cannot cover the stake, ...: the table waits for players
                if change.start == "if_ready_or_refuse":
                    raise

    # ------------------------------------------------------------------ a match starts and ends (match_flow.py)

    async def _on_start(self, principal: Principal, command: Command) -> Answer:
        """The creator starts the match with the players seated so far; at a staked table that opens
        the ready check (the answer's ``match_id`` is then null)."""
        may_start(self._seat_table(), principal)
        mine = self.seating.seat_of(principal)
        await self._try_start([mine.seat] if mine is not None else [])
        started = self.status == TableStatus.PLAYING
        return answers.start_ack(command.id, self.version, self.match_id if started else None)

    async def _try_start(self, ready: list[int]) -> None:
        """Start the match now -- at a staked table only once every human seated is connected and
        has confirmed (the ready check, §8). Until then the check is open: opened here with the
        confirmations of ``ready`` (those connected), or, open already, joined by them."""
        if self.rules.stake > 0:
            seating = self.seating
            seating.enough_players()
            if seating.ready is None:
                check = seating.open_ready_check(self.clock(), self.limits.ready_check_s, ready)
                if not seating.everyone_ready():
                    await self._changed([{"type": "ready_check", "ready": sorted(check.ready)}])
                    return
            else:
                confirmed = seating.confirm(ready)
                if not seating.everyone_ready():
                    if confirmed:
                        await self._changed([{"type": "ready", "seat": seat} for seat in confirmed])
                    return
        try:
            await self._start_match()
        except Refused as refused:
            self.seating.ready = None  # the table waits, everyone seated; a new start opens a new check
            if refused.code == "unavailable":  # the deal was not kept: dealt again once storage answers
                self.timers.start_again_at = self.clock() + deadlines.START_AGAIN_S
            raise
        self.timers.start_again_at = None

    async def _start_again(self) -> None:
        """A full table whose deal could not be kept (storage unreachable) is dealt again, every
        ``START_AGAIN_S`` until it is: nobody has to ask again, and a table of bots does not stand
        still for ever. At a staked table the seated humans still connected count as confirmed (they
        all had, or the deal would not have been tried)."""
        if self.status != TableStatus.WAITING or any(seat.kind == "empty" for seat in self.seats):
            return
        humans = [seat.seat for seat in self.seats if seat.kind == "human"]
        try:
            await self._try_start(humans)
        except Refused as refused:
            log.info("table %s: the deal was tried again and not made: %s", self.code[:8], refused.message)

    async def _start_match(self) -> None:
        await match_flow.start_match(self)

    async def _finish_match(self, bump: bool = True) -> None:
        await match_flow.finish_match(self, bump)

    async def abort(self, reason: str) -> None:
        """The table closes in the middle of a match (call it once the actor has stopped): the match
        is recorded as aborted (``match_flow.abort_match``)."""
        match_flow.abort_match(self, reason)

    # ------------------------------------------------------------------ play

    async def _on_play(self, principal: Principal, command: Command) -> Answer:
        if self.status != TableStatus.PLAYING or self.game is None:
            raise Refused("match_not_running", "there is no match running at this table")
        seat = self.seating.seated(principal, "spectators cannot play; join a seat first")
        try:
            move = command.body
            assert isinstance(move, MOVES)
            await self._apply_engine(move.action(seat.seat), f"{principal.key}|{command.id}")
        except IllegalAction as exc:
            raise refused_move(exc, command.version, self.version) from exc
        return answers.ack(command.id, self.version)

    async def _apply_engine(self, action: Action, key: str | None = None) -> None:
        """Apply, persist, then push. If the store cannot take the move, nothing happened."""
        assert self.game is not None
        timers = self.timers
        before, deadline, since = self.game, timers.deadline, timers.decision_since
        self.game, events = apply(self.game, action)
        entry = log_entry(action, key)
        self.log.append(entry)
        try:
            await self._changed(events, entry=entry, lobby=False)  # the match's end is _finish_match's
        except (BrokerError, Refused) as exc:  # the store is down, or a newer owner fenced us out
            self.game, timers.deadline, timers.decision_since = before, deadline, since
            self.log.pop()
            self.version -= 1
            if isinstance(exc, Refused):
                raise
            raise unavailable() from exc
        if self.game.outcome is not None:
            await self._finish_match()

    def _schedule_bots(self) -> None:
        if self.status == TableStatus.PLAYING and self.game is not None:
            self.bot_turns.schedule(self.game, self.seats, self.version, self.spec.bot_delay_ms / 1000)

    async def _on_bot(self, command: Command) -> None:
        """A bot's decision (bot_turns.py), applied only if the table has not moved on meanwhile."""
        bot = command.body
        assert isinstance(bot, BotMove)
        seat = bot.seat
        self.bot_turns.answered(seat)
        if self.game is None or self.status != TableStatus.PLAYING:
            return
        if bot.action is not None and bot.at_version == self.version:
            try:
                await self._apply_engine(bot.action)
                return
            except IllegalAction as exc:
                log.warning("table %s: bot %d chose an illegal action: %s", self.code[:8], seat, exc)
            except Refused:  # the store is down: ask it again shortly
                self.bot_turns.retry_later(seat)
                return
        self.bot_turns.not_applied(self.game, seat, stale=bot.at_version != self.version)
        self._schedule_bots()

    async def _on_wake(self, command: Command) -> None:
        self._schedule_bots()

    # ------------------------------------------------------------------ timers (deadlines.py)

    def _own_limits(self) -> dict[int, tuple[float, DeadlineKind]]:
        """Each waited-for player's idle limit or disconnect grace."""
        running = self.game if self.status == TableStatus.PLAYING else None
        return self.timers.own_limits(running, self.seats, self.seating.gone_since, self.limits)

    def _next_deadline(self) -> float | None:
        return self.timers.next(self._own_limits(), self.seating.due(self.limits.waiting_seat_away_s))

    async def _on_deadline(self) -> None:
        """A deadline came: a rematch proposal's or a ready check's end, a player away from a waiting
        table too long, a seat's idle limit or grace (it forfeits a lead or a defence and passes on a
        throw-in, §8), or the move timer."""
        now, timers, game, seating = self.clock(), self.timers, self.game, self.seating
        if timers.start_again_at is not None and timers.start_again_at <= now:
            timers.start_again_at = None
            await self._start_again()
            return
        if seating.rematch is not None and seating.rematch.deadline <= now:
            if (change := rematch_expired(self._seat_table())) is not None:
                await self._seats_changed(change)
            return
        if seating.ready is not None and seating.ready.deadline <= now:
            if (change := ready_expired(self._seat_table())) is not None:
                await self._seats_changed(change)
            return
        away = self.status == TableStatus.WAITING and seating.away_since
        if away and (change := away_expired(self._seat_table(), self.limits.waiting_seat_away_s)) is not None:
            await self._seats_changed(change)
            return
        if game is None or self.status != TableStatus.PLAYING:
            timers.deadline = None
            return
        actions, by_timer = timers.due_actions(game, self._own_limits(), now)
        for action in actions:
            game = self.game
            if self.status != TableStatus.PLAYING or game is None or not deadlines.still_applies(game, action):
                continue
            try:
                await self._apply_engine(action)
            except (Refused, IllegalAction) as exc:  # the store is down (or a bug): try again shortly
                log.warning("table %s: %s of seat %d not applied: %s", self.code[:8], action.kind, action.seat, exc)
                timers.retry_later(now, by_timer)
                return

    # ------------------------------------------------------------------ saving (record.py)

    async def save_now(self) -> None:
        """Write the whole record and log (a new table, or after the store lost data)."""
        await self.recorder.save(self.record, self.log, None, self._live)

    def _live(self) -> LiveJson:
        return {"version": self.version, "deadline": self.timers.deadline_epoch(self.clock()), "saved_at": time.time()}

    def record(self) -> StoredTable:
        now = self.clock()
        epoch, rematch = self.timers.deadline_epoch(now), rematch_json(self.seating.rematch, now)
        table = TableRecord(
            self.spec, self.rules, self.seats, self.status, self.version, self.match_id, self.seating.series,
            self.next_dealer, self.results, self.created, epoch, self.game, fair=self.fair.to_json(), rematch=rematch,
            started=self.started,
        )  # fmt: skip
        return record_json(table, self.info())

    async def resume(self) -> None:
        """After a takeover: ask every connection (on any process) to say hello again, finish
        anything left undone (settlement is idempotent), and let bots think again."""
        self.delivery.rehello(self.seats)
        # Nobody is connected here yet: those who do not come back lose their seats.
        if self.status == TableStatus.WAITING:
            self.seating.sync_away(self.clock())
            await self._reopen_ready_check()
        over = self.game is not None and self.game.outcome is not None
        if over and self.status in (TableStatus.PLAYING, TableStatus.FINISHED):
            # The match is over: settle it again (idempotent). A record still "playing" lost its owner
            # between the last move and the match's end: the end (results, series) is made now.
            counted = self.status == TableStatus.FINISHED
            self.status = TableStatus.PLAYING
            await self._finish_match(bump=not counted)
        self._schedule_bots()

    async def _reopen_ready_check(self) -> None:
        """A full staked table taken over before its match started: the stored record has no ready
        check, so a new one opens (nobody confirmed yet: nobody is connected here); else every seat
        is taken and nothing would ever start the match."""
        full = all(seat.kind != "empty" for seat in self.seats)
        ready = full and self.fair.seeded(self.seats) if self.spec.deal_on_seed else full
        if self.rules.stake > 0 and ready and self.seating.ready is None:
            with contextlib.suppress(Refused):
                await self._try_start([])

    # ------------------------------------------------------------------ what the players see (facts.py)

    def info(self, principal: Principal | None = None) -> TableFacts:
        """The table facts; ``you`` is the asker's key."""
        running, now = (self.game if self.status == TableStatus.PLAYING else None), self.clock()
        return facts.table_facts(
            self.spec, self.seating, status=self.status, rules=self.rules, match_id=self.match_id,
            results=self.results, version=self.version, fairness=self.fair.info(self.seats),
            shown=self.timers.shown(self._own_limits(), running), deadline=self.timers.deadline, now=now,
            grace_s=self.limits.disconnect_grace_s, you=principal.key if principal else None,
        )  # fmt: skip

    def _change(self, events: Sequence[AnyEvent], kind: Literal["update", "presence"] = "update") -> fanout.Change:
        """The table as it is now, for the fan-out: who hears it and what happened."""
        table = self.info()
        del table["you"]
        players, watched = self.seating.players(), bool(self.seating.spectators)
        return fanout.Change(self.code, self.version, events, table, self.game, players, watched, kind)

    async def _changed(
        self,
        events: Sequence[AnyEvent],
        bump: bool = True,
        entry: str | None = None,
        *,
        lobby: bool = True,
    ) -> None:
        """A change of the table: a new version, saved (a move that cannot be saved raises), then
        told to the bots and pushed to everybody connected. ``lobby=False``: a move within the match,
        which changes nothing the lobby shows (``on_change`` is told so)."""
        if bump:
            self.version += 1
            self.timers.reset(self.game, self.status, self.rules.timer, self.limits, self.clock())
            await self.recorder.save_change(self.record, self.log, entry, self._live)
            self.history.append(self.version, events)
        else:
            events = []
        self.bot_turns.observe(self.seats, events)
        self.delivery.send_all(self._change(events))
        if self.on_change is not None:
            self.on_change(self, lobby)
        self._schedule_bots()


# The handler of each command, by the type of its body: a player's requests, answered (``Answers``) ...
_HANDLERS: dict[type, Callable[[TableActor, Principal, Command], Awaitable[Answer]]] = {
    **dict.fromkeys(SEAT_COMMANDS, TableActor._on_seat_command),
    Leave: TableActor._on_leave,  # a forfeit while the match runs
    Start: TableActor._on_start,
    Info: TableActor._on_info,
    **dict.fromkeys(MOVES, TableActor._on_play),
}
# ... and the connections' own and the table's, answered by nobody.
_INTERNAL: dict[type, Callable[[TableActor, Command], Awaitable[None]]] = {
    Hello: TableActor._on_hello,
    Bye: TableActor._on_bye,
    BotMove: TableActor._on_bot,
    Wake: TableActor._on_wake,
    Rated: match_flow.ratings_came,
    Handover: TableActor._on_handover,
}
