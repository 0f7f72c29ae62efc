"""What the benchmarks read about a process from /proc (bench/_server.py)."""

from __future__ import annotations

import os
import random
import time

from app.engine import Rules
from bench._server import proc_switches
from bench.capacity import Step, _growth_estimate_s
from bench.engine import play
from bench.reference import SpeedProbe, work


def test_the_switches_count_each_time_the_main_thread_goes_to_sleep() -> None:
    before = proc_switches(os.getpid())
    for _ in range(5):
        time.sleep(0.002)  # each sleep switches this thread out once, at least
    assert proc_switches(os.getpid()) >= before + 5
    assert proc_switches(2**22 + 12345) == 0  # no such process: nothing to read


def test_the_speed_probe_times_the_same_work_in_its_own_thread_on_the_cpu_it_is_given() -> None:
    cpu = min(os.sched_getaffinity(0))
    with SpeedProbe(cpu, every_s=0.05, matches=1) as probe:
        time.sleep(0.6)
    assert len(probe.samples) >= 3
    assert probe.ms_per_match is not None and probe.ms_per_match > 0
    assert os.sched_getaffinity(0) != {cpu} or len(os.sched_getaffinity(0)) == 1  # this thread was not pinned
    assert SpeedProbe(None).ms_per_match is None  # no window, no figure


def test_the_reference_work_is_the_same_matches_every_time() -> None:
    rules = Rules(deck=36, seats=4, transfer=True)
    first = [play(rules, seed, random.Random(seed)) for seed in (1, 2, 3)]
    assert [play(rules, seed, random.Random(seed)) for seed in (1, 2, 3)] == first
    assert work(2) > 0


def _step(players: int, cpu_pct: float, grow_s: float) -> Step:
    return Step(players, {}, cpu_pct, 0, 0.0, {"seconds": grow_s})


def test_a_step_is_expected_to_grow_slower_the_less_of_the_core_the_players_already_there_leave() -> None:
    # per player as fast as the last growth while the server is as busy as it was then
    assert _growth_estimate_s([_step(1000, 50, 10.0), _step(2000, 50, 12.0)], 4000) == 24.0
    # the same growth with half as much of the core left free takes twice as long
    assert _growth_estimate_s([_step(1000, 50, 10.0), _step(2000, 75, 12.0)], 4000) == 48.0
    # the first step's growth had the whole core
    assert _growth_estimate_s([_step(1000, 50, 10.0)], 2000) == 20.0
