"""What the benchmarks read about a process from /proc (bench/_server.py)."""

from __future__ import annotations

import os
import time

from bench._server import proc_switches


def test_the_switches_count_each_time_the_main_thread_goes_to_sleep() -> None:
    before = proc_switches(os.getpid())
    for _ in range(5):
        time.sleep(0.002)  # each sleep switches this thread out once, at least
    assert proc_switches(os.getpid()) >= before + 5
    assert proc_switches(2**22 + 12345) == 0  # no such process: nothing to read
