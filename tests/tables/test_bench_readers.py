"""The load clients of bench.load and bench.capacity read updates from their bytes without parsing
them (version, whether the seat has a legal action, whether the match waits for it, its view):
those readers agree with the parsed JSON on the frames a real match produces, so a change of the
update's layout cannot make the benchmarks play wrong without a test failing."""

from __future__ import annotations

import asyncio
import random

import orjson

from app.engine import Rules, apply, legal_actions, new_match
from app.tables.fanout import Change
from app.transport import channels
from app.transport.frames import update_frames
from bench.capacity import _FINISHED, _NO_LEGAL, _TABLE, _UPDATE, Scheduler, _deciding, _view_of


def _frames_of_a_match(rules: Rules, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    state = new_match(rules, seed)
    players = tuple((seat, f"guest:p{seat}") for seat in range(rules.seats))
    table = {"code": "T", "status": "playing", "seats": [{"seat": s, "name": f"p{s}"} for s in range(rules.seats)]}
    texts: list[bytes] = []
    version = 0
    while True:
        version += 1
        status = "finished" if state.outcome is not None else "playing"
        change = Change("T", version, [], {**table, "status": status}, state, players, True)
        for _, frame in update_frames(change):
            texts.append(channels.parse_frame(frame.encode()).body)
        if state.outcome is not None:
            return texts
        actions = [a for seat in range(rules.seats) for a in legal_actions(state, seat)]
        state, _ = apply(state, rng.choice(actions))


def test_the_byte_readers_agree_with_the_json() -> None:
    seen_deciding = seen_waiting = seen_no_legal = 0
    for rules, seed in ((Rules(deck=36, seats=4), 1), (Rules(deck=36, seats=3, transfer=True), 2)):
        for raw in _frames_of_a_match(rules, seed):
            message = orjson.loads(raw)
            assert raw.startswith(_UPDATE)
            assert int(raw[27 : raw.index(b",", 27)]) == message["version"]
            assert (_FINISHED in raw) == (message["table"]["status"] == "finished")
            view = message["view"]
            if message["seat"] is None:
                continue  # the spectators' frame
            end = raw.rfind(_TABLE)
            assert raw.endswith(_NO_LEGAL, 0, end) == (not view["legal"])
            assert _view_of(raw) == view
            deciding = message["seat"] in view["decision"]["seats"]
            assert _deciding(raw, message["seat"]) == deciding
            seen_deciding += deciding
            seen_waiting += not deciding
            seen_no_legal += not view["legal"]
    assert seen_deciding and seen_waiting and seen_no_legal  # every case was met


async def test_the_scheduler_runs_every_entry_at_its_time_in_order() -> None:
    loop = asyncio.get_running_loop()
    scheduler = Scheduler(loop)
    ran: list[tuple[str, float]] = []
    start = loop.time()
    for name, delay in (("c", 0.06), ("a", 0.02), ("b", 0.04), ("a2", 0.02)):
        scheduler.at(start + delay, lambda who: ran.append((who, loop.time())), name)
    await asyncio.sleep(0.12)
    assert [name for name, _ in ran] == ["a", "a2", "b", "c"]
    wanted = {"a": 0.02, "a2": 0.02, "b": 0.04, "c": 0.06}
    assert all(at - start >= wanted[name] - 0.002 for name, at in ran)  # never early (the clock is coarse)
    assert scheduler.handle is None and not scheduler.heap  # nothing left armed
