"""Time budgets of ``probe`` and ``validate``: an overall deadline, and timing loops bounded by it.

``probe`` must finish in minutes on any host, including one where a path runs emulated at a few
Gops/s (BF16 ``aten.mm`` without AVX512_BF16 took 24 s per 2048^3 call on a Zen 1 guest). Every loop
here takes its clock as a parameter, so tests drive it with a fake clock and a slow fake kernel.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

Clock = Callable[[], float]

#: the whole of ``roofline probe`` (seconds); ``--quick`` and the probe ``validate --quick`` takes
PROBE_BUDGET_S = 150.0
QUICK_PROBE_BUDGET_S = 60.0
#: ``validate --quick``: canary re-takes stop when this much of the run has gone (compiles are not bounded)
QUICK_VALIDATE_BUDGET_S = 240.0
#: a full ``validate``: re-takes stop after this long
VALIDATE_BUDGET_S = 1800.0


@dataclass(frozen=True)
class Deadline:
    """An overall time limit from the moment it is made (``seconds=None``: none)."""

    seconds: float | None
    clock: Clock = time.monotonic
    start: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "start", self.clock())

    def elapsed(self) -> float:
        return self.clock() - self.start

    def left(self) -> float:
        return math.inf if self.seconds is None else self.seconds - self.elapsed()

    def allows(self, seconds: float, reserve: float = 0.0) -> bool:
        """Whether ``seconds`` more work fits, keeping ``reserve`` for what comes after it."""
        return self.left() - reserve >= seconds

    @property
    def expired(self) -> bool:
        return self.left() <= 0


NO_DEADLINE = Deadline(None)

#: calls :func:`timed` makes of a kernel slower than ``min_time``: its warm-ups and ``trials x min_calls``;
#: what a kernel's per-call time is sized by
TIMED_CALLS = 2 + 3 * 1


def timed(fn: Callable[[], object], *, clock: Clock = time.perf_counter, min_time: float = 0.3, trials: int = 3,
          min_calls: int = 1, warmup: int = 2) -> float:
    """Seconds per call: the best of ``trials`` medians, each over at least ``min_time`` seconds and
    ``min_calls`` calls, after ``warmup`` calls. A call that takes ``min_time`` or more is a trial of its own
    (a slow path at 1.5 s a call is timed in 5 calls, not 11: nothing in a call that long is noise a median
    of three removes that the best of three does not)."""
    for _ in range(warmup):
        fn()
    best = math.inf
    for _ in range(trials):
        times: list[float] = []
        end = clock() + min_time
        while clock() < end or len(times) < min_calls:
            t0 = clock()
            fn()
            times.append(clock() - t0)
        best = min(best, statistics.median(times))
    return best
