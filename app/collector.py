"""When a server process's garbage collector runs (docs/performance.md, "The collector's schedule").

CPython's cycle collector stops the event loop while it walks the objects of the generations it
collects, so its schedule decides the longest stalls a table sees. A server holds a large, stable
set of long-lived objects (every connection's coroutines, every table) and makes a steady stream of
short-lived ones (frames, commands). The schedule, measured with ``python -m bench.capacity
--loopstats``:

* At start-up everything alive (modules, the application, its routes) is frozen: no collection
  ever walks it again.
* Young collections come after 1,000 net allocations of tracked objects (CPython: 700; we had
  10,000). The count is net (allocations minus deallocations), so at a steady load it wanders and
  reaches a high threshold only now and then: the young generation then held every object made
  in the last several seconds that was still alive (a connection's latest parser state and
  keep-alive timer, each table's latest state) and a young collection took 23-53 ms at 2,500-
  4,000 players. At 1,000 it runs about 1.5 times a second and takes at most 9-15 ms.
* The middle generation is collected after every second young collection (CPython: tenth; we had
  20), so it holds at most two young collections' survivors: 18-21 ms at most at 2,500-4,000
  players, against 135-240 ms when twenty collections' worth of newly arrived connections waited
  in it.
* No automatic full collection. CPython runs one whenever the old generation has grown by a
  quarter: with thousands of players arriving, that was a pause of 0.5 s at 2,500 players and
  1.3 s at 6,000, every few minutes. Cycles that reach the old generation and then become garbage
  are rare here (a full collection after a 6,000-player run found 490-637 objects), so a full
  collection runs on a timer instead (``DURAK_GC_FULL_INTERVAL_S``, an hour by default), and says
  how long it took and what it found.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Awaitable, Callable

log = logging.getLogger("durak.collector")

YOUNG_THRESHOLD = 1_000  # net allocations of tracked objects between young collections
MIDDLE_EVERY = 2  # young collections per collection of the middle generation
NEVER = 1 << 30  # middle collections per full collection: never reached, so full ones only on the timer


def settle() -> None:
    """Freeze what start-up made and set the schedule (call once the application is up)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_EVERY, NEVER)


def collect_old_garbage() -> int:
    """One full collection, logged with its pause; returns the number of unreachable objects."""
    started = time.perf_counter()
    found = gc.collect()
    log.info(
        "full garbage collection: %d unreachable objects in %.0f ms, %d objects tracked",
        found,
        1000 * (time.perf_counter() - started),
        len(gc.get_objects()),
    )
    return found


async def collect_old_garbage_forever(
    interval_s: float, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
) -> None:
    """A full collection every ``interval_s`` seconds (waited with ``sleep``: tests pass a fake
    clock's), for as long as the task runs."""
    while True:
        await sleep(interval_s)
        collect_old_garbage()
