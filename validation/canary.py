"""The contention canary: is this machine still giving us the CPU it gave at the start?

A measurement taken while other processes load the host (a noisy neighbour on a cloud VM, a build
on a laptop) can come out 5-50x slow with a small spread, because every round is equally slow. The
spread cannot see it; the canary can. It is a fixed small FP32 GEMM (``torch.mm``, 256 x 256 x 256 for
up to 2 threads, a little larger for more so that every thread has work), timed

- once at the start of a run, the **reference** (the best of a few tries: noise only slows things down;
  a later sample that runs faster lowers it, so a reference taken during a slow spell heals), each
  try a loop of about ``window_s`` (25 ms) of calls whose *mean* is kept: a scheduler that gives the
  cores to another process preempts for milliseconds, which a per-call median would not see. With a
  ``history_file`` the fastest canary of earlier runs on this host (same threads, size, torch and
  CPU) is the reference too, so a run that is contended from its first second is still caught;
- again after every timing round: the round is **contended** when the canary runs more than
  ``slow`` (25%) slower than the reference, when the process got less than ``cpu_share_drop`` (75%)
  of the best CPU share seen (process CPU time over wall time x threads while the canary runs: other
  processes on the same cores take it away), or when the hypervisor stole more than ``max_steal``
  (10%) of the CPU time over the round (``/proc/stat``, where the kernel reports steal time).

:func:`roofline.validation.timing.time_interleaved` re-runs contended rounds, up to a bound, and
marks what it could not get clean. The API is generic so any measurement loop can use it::

    canary = Canary(threads, history_file=p) # takes the reference (p: optional, e.g. in the probe cache)
    mark = canary.mark()                     # before a round
    ...                                      # the round
    sample = canary.sample(mark)             # after it; sample.reason is None when clean
    canary.summary(flagged_rows=...)         # a ContentionResult for a report
    canary.save()                            # the fastest reference and best CPU share, for later runs

No roofline core module imports this one (it needs torch).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from roofline.results.validate import ContentionResult

#: a round whose canary runs more than this much slower than the reference is contended
SLOW = 1.25
#: below this fraction of the best CPU share seen, the process is sharing its cores
CPU_SHARE_DROP = 0.75
#: above this share of CPU time stolen by the hypervisor, the VM is sharing its host
MAX_STEAL = 0.10


@dataclass(frozen=True)
class CpuTimes:
    """The aggregate ``cpu`` line of ``/proc/stat`` (jiffies): total and stolen, if reported."""

    total: int
    steal: int | None

    @staticmethod
    def read(path: Path = Path("/proc/stat")) -> CpuTimes | None:
        try:
            with open(path, encoding="ascii") as f:
                first = f.readline().split()
        except OSError:
            return None
        if not first or first[0] != "cpu":
            return None
        values = [int(v) for v in first[1:]]
        # user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in user
        steal = values[7] if len(values) > 7 else None
        return CpuTimes(total=sum(values[:8]), steal=steal)

    def steal_share_since(self, earlier: CpuTimes | None) -> float | None:
        """Share of all CPU time stolen by the hypervisor between ``earlier`` and this reading."""
        if earlier is None or self.steal is None or earlier.steal is None:
            return None
        total = self.total - earlier.total
        return (self.steal - earlier.steal) / total if total > 0 else None


@dataclass(frozen=True)
class Mark:
    """Where a round started (for the steal share over the round)."""

    cpu: CpuTimes | None
    wall: float


@dataclass(frozen=True)
class CanarySample:
    seconds: float
    """mean wall time of one canary GEMM over the loop"""
    ratio: float
    """seconds over the reference"""
    cpu_share: float | None
    """process CPU time over wall time x threads while the canary ran (1: every thread ran all the time)"""
    steal: float | None
    """share of the host's CPU time stolen by the hypervisor over the round (None: not reported)"""
    reason: str | None
    """why the round counts as contended; None when it is clean"""

    @property
    def contended(self) -> bool:
        return self.reason is not None


@dataclass
class Canary:
    """A fixed small GEMM timed at the start (the reference) and after every round (see the module docstring)."""

    threads: int
    size: int = 0
    """the GEMM's M = N = K; 0: 256 up to 2 threads, growing with the cube root of the threads beyond"""
    window_s: float = 0.025
    """how long one canary loop runs at the reference speed"""
    slow: float = SLOW
    cpu_share_drop: float = CPU_SHARE_DROP
    max_steal: float = MAX_STEAL
    history_file: Path | None = None
    """where the fastest reference and the best CPU share of earlier runs on this host are kept"""
    reference_s: float = field(init=False, default=0.0)
    best_cpu_share: float = field(init=False, default=0.0)
    calls: int = field(init=False, default=1)
    history: list[CanarySample] = field(init=False, default_factory=list)
    reruns: int = field(init=False, default=0)
    unresolved: int = field(init=False, default=0)

    def __post_init__(self) -> None:

        if not self.size:
            self.size = 256 if self.threads <= 2 else 64 * round(4 * (self.threads / 2) ** (1 / 3))
        g = torch.Generator().manual_seed(0)
        self._a = torch.randn(self.size, self.size, generator=g)
        self._b = torch.randn(self.size, self.size, generator=g)
        self._cores = min(self.threads, _usable_cpus())
        one = min(self._time(3)[0] for _ in range(3))
        self.calls = max(5, min(5000, round(self.window_s / max(one, 1e-7))))
        tries = [self._time(self.calls) for _ in range(3)]
        self.reference_s = min(t for t, _ in tries)
        self.best_cpu_share = max((c for _, c in tries if c is not None), default=0.0)
        stored = self._stored()
        if stored:
            self.reference_s = min(self.reference_s, stored["reference_s"])
            self.best_cpu_share = max(self.best_cpu_share, stored["best_cpu_share"])

    def _key(self) -> str:

        return f"{_cpu_model()}; torch {torch.__version__}; {self.threads} threads; mm {self.size}^3"

    def _stored(self) -> dict | None:
        """The earlier runs' figures for this very canary, or None (no file, another key, unreadable)."""
        if self.history_file is None:
            return None
        try:
            data = json.loads(Path(self.history_file).read_text(encoding="utf-8"))
            if data.get("key") == self._key() and data["reference_s"] > 0 and 0 < data["best_cpu_share"] <= 2:
                return {"reference_s": float(data["reference_s"]), "best_cpu_share": float(data["best_cpu_share"])}
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            pass
        return None

    def save(self) -> None:
        """Keep the fastest reference and the best CPU share seen (never a slower one) for later runs."""
        if self.history_file is None or self.reference_s <= 0 or self.best_cpu_share <= 0:
            return
        from roofline.errors import UserError
        from roofline.files.writing import write_text

        data = {"key": self._key(), "reference_s": self.reference_s, "best_cpu_share": self.best_cpu_share}
        try:
            Path(self.history_file).parent.mkdir(parents=True, exist_ok=True)
            write_text(self.history_file, json.dumps(data) + "\n")
        except (OSError, UserError):
            pass  # only a cache

    def describe(self) -> str:
        return (f"torch.mm fp32 {self.size}x{self.size}x{self.size}, mean of {self.calls} calls "
                f"(~{self.window_s * 1e3:g} ms), {self.threads} threads"
                + (", reference kept across runs" if self.history_file is not None else ""))

    def _time(self, calls: int) -> tuple[float, float | None]:
        """(mean seconds per GEMM over ``calls`` back-to-back calls, the process's CPU share meanwhile)
        with this run's thread count."""

        saved = torch.get_num_threads()
        torch.set_num_threads(self.threads)
        try:
            a, b = self._a, self._b
            torch.mm(a, b)
            cpu0, wall0 = time.process_time(), time.perf_counter()
            for _ in range(calls):
                torch.mm(a, b)
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        finally:
            torch.set_num_threads(saved)
        share = cpu / (wall * self._cores) if wall > 0 and self._cores else None
        return wall / calls, share

    def mark(self) -> Mark:
        return Mark(CpuTimes.read(), time.perf_counter())

    def sample(self, since: Mark | None = None) -> CanarySample:
        """Time the canary now; with ``since`` (a :meth:`mark` taken before a round) the steal share
        covers the whole round. Every sample is kept in :attr:`history`."""
        seconds, share = self._time(self.calls)
        now = CpuTimes.read()
        steal = now.steal_share_since(since.cpu) if (now is not None and since is not None) else None
        ratio = seconds / self.reference_s if self.reference_s > 0 else 1.0
        reason = None
        if ratio > self.slow:
            reason = f"the canary GEMM ran {ratio:.1f}x slower than its reference"
        elif share is not None and share < self.cpu_share_drop * self.best_cpu_share:
            reason = (f"this process got {share:.0%} of the CPU its {self.threads} threads asked for "
                      f"(at best {self.best_cpu_share:.0%})")
        elif steal is not None and steal > self.max_steal:
            reason = f"the hypervisor stole {steal:.0%} of the CPU time"
        s = CanarySample(seconds, ratio, share, steal, reason)
        self.history.append(s)
        # contention only slows and takes CPU away: the fastest time and the best share are the truth
        self.reference_s = min(self.reference_s, seconds)
        self.best_cpu_share = max(self.best_cpu_share, share or 0.0)
        return s

    def summary(self, flagged_rows: int = 0) -> ContentionResult:
        """Plain numbers for a report; ``flagged_rows``: how many of its rows carry a contention flag."""
        h = self.history
        shares = [s.cpu_share for s in h if s.cpu_share is not None]
        steals = [s.steal for s in h if s.steal is not None]
        stat = CpuTimes.read()
        return ContentionResult(
            canary=self.describe(), reference_s=self.reference_s, slow_threshold=self.slow,
            cpu_share_drop=self.cpu_share_drop, best_cpu_share=self.best_cpu_share or None,
            max_steal=self.max_steal, samples=len(h),
            contended_samples=sum(s.contended for s in h), worst_ratio=max((s.ratio for s in h), default=1.0),
            lowest_cpu_share=min(shares) if shares else None, worst_steal=max(steals) if steals else None,
            steal_reported=stat is not None and stat.steal is not None,
            reruns=self.reruns, unresolved=self.unresolved, flagged_rows=flagged_rows,
        )


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def contention_flag(samples: list[CanarySample], rounds: int, reruns: int) -> str:
    """The flag string put on a row whose timing kept contended rounds."""
    bad = [s for s in samples if s.contended]
    worst = max(bad, key=lambda s: s.ratio)
    return (f"contention: {len(bad)} of {rounds} timing rounds kept after {reruns} re-run(s) were contended "
            f"({worst.reason}): the host was busy, this timing is not a clean measurement")
