"""When a lapsed table lease may be taken over: not while nobody could have renewed it.

A lease lapses when its owner died, but also when the broker stalled (Redis paused by SIGSTOP, a
long fork, a slow disk, a restart): its keys expire on Redis's clock while no renewal gets through,
and once Redis answers again, every lease renewed more than the TTL before the stall began has
lapsed, the living owners' too. A process that took those over would race each living owner for
its leases and win some: the tables would change owner for nothing, and whoever was connected
through the old owner would be cut off from them until he said hello again.

So the supervisor (``TableLeases.adopt_orphans``, app/tables/leases.py) takes a lapsed lease over only when the broker
has answered it promptly since long enough for a living owner to have renewed it: a look at the
leases whose broker calls took longer than ``STALL_S``, or failed, starts a hold of ``HOLD_S``
from the first prompt answer after it. A living owner renews every third of the lease's TTL
(``LeaseSettings``) and, when a renewal finds its lease gone, takes it again at once
(``TableLeases.renew``): within the hold. A dead owner's tables are taken over as soon as the
hold ends; without a stall, at once.

Which stalls are seen: a lease lapses in a stall only when the stall outlasts the TTL less the
time since its last renewal (at least 2 s of 3 s), and the supervisor looks every ``takeover_sweep_s``
(1 s), so one of its looks is held up by the stall for about the stall less 1 s: a stall of over 2 s
holds takeovers (a look waited 2.2 and 2.7 s in the soak's 3 s pause). ``STALL_S`` is 1 s
so that a busy process's own slowness (its loop late by a few hundred ms while a peer's players
reconnect to it) does not hold back the takeover of a dead peer's tables. A shorter stall that
still lapses a lease leaves a race with its living owner; a table lost in it is served by the
winner, and the loser's connections follow it there (``TableLeases.lost``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

log = logging.getLogger("durak.registry")

STALL_S = 1.0  # a look at the leases that took longer: the broker (or this process) stalled meanwhile
HOLD_S = 1.0  # after a stall, how long the broker must answer promptly before a lapsed lease is taken
SLOW_RUN_S = 5.0  # looks slow for this long in a row: how the broker (or this busy process) answers now


class TakeoverHold:
    """Whether the supervisor may take lapsed leases over now (see the module's docstring).

    Looks that are all slow for ``SLOW_RUN_S`` in a row are no stall any more but how things are
    (a loaded process, a slow broker), and hold takeovers no longer: a dead owner's tables must
    not wait for a prompt answer that may never come. (A frozen Redis answers nothing: a look
    meets the command timeout and fails.)"""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.stalled = False  # a stall was seen and the broker has not answered promptly since
        self.until: float | None = None  # takeovers wait until then (the hold after a stall)
        self.slow_since: float | None = None  # when the current run of slow looks began

    def failed(self) -> None:
        """A look at the leases failed (the broker is unreachable): every lease may lapse meanwhile."""
        self.stalled = True

    def looked(self, started: float) -> bool:
        """A look at the leases that began at ``started`` (this clock) has just been answered: whether
        the lapsed leases it found may be taken over now."""
        now = self.clock()
        if now - started > STALL_S:
            if self.slow_since is None:
                self.slow_since = started
            if now - self.slow_since < SLOW_RUN_S:
                if not self.stalled:
                    log.info("leases: a look took %.1f s (a stall?): no takeover until %.1f s after a prompt one",
                             now - started, HOLD_S)  # fmt: skip
                self.stalled, self.until = True, now + HOLD_S
                return False
        else:
            self.slow_since = None
            if self.stalled:  # the first prompt answer after a stall: the hold runs from here
                self.stalled, self.until = False, now + HOLD_S
                return False
        return self.until is None or now >= self.until
