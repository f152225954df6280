"""The contention canary: is this machine still giving us the CPU it gave at the start, and if not, who
took it?

A measurement taken while other processes load the host (a noisy neighbour on a cloud VM, a build
on a laptop) can come out 5-50x slow with a small spread, because every round is equally slow. The
spread cannot see it; the canary can. It is a fixed small FP32 GEMM (``torch.mm``, 256 x 256 x 256 for
up to 2 threads, a little larger for more so that every thread has work), timed in loops of about
``window_s`` (25 ms) of calls whose *mean* is kept (a scheduler that gives the cores to another
process preempts for milliseconds, which a per-call median would not see):

- at the start of a run, the **reference**: the *median* of a few loops (a single fast moment must
  not set the bar). It is checked against the same host's probe, which stores its own canary
  reference and clock beside the probe file (:func:`save_probe_canary`): the rounds are compared
  with the slower of the two, unless the start itself was contended (other processes or steal
  during it), when the probe's is the one that was clean;
- again after every timing round, with what the kernel says happened during the round: other
  processes' CPU time (``/proc/[pid]/stat``, the busiest named by their command), the hypervisor's
  steal (``/proc/stat``), and the clock the cores ran at (a short dependent multiply chain, as the probe
  measures it; :func:`roofline.validation.native.ClockReader`).

A round is told apart (:func:`diagnose`) as

- **local**: other processes on this machine took more CPU than the run leaves free (name them,
  stop them);
- **neighbours**: the hypervisor stole more than ``max_steal`` (10%), or the canary ran more than
  ``slow`` (25%) slower, or its threads got under ``cpu_share_drop`` (75%) of the reference's CPU
  share, with nothing else running here and the clock as probed: other guests of the host;
- **throttling**: the canary ran slow but the clock dropped as much, with nothing else running and
  no steal: power or thermal limits, not contention by others. Noted, never flagged or re-run.

:func:`roofline.validation.timing.time_interleaved` re-runs contended (local, neighbours) rounds, up
to a bound and a deadline, and marks what it could not get clean::

    canary = Canary(threads)                 # takes the reference
    canary.anchor(load_probe_canary(path))   # checked against this host's probe
    mark = canary.mark()                     # before a round
    ...                                      # the round
    sample = canary.sample(mark)             # after it; sample.contended, sample.cause, sample.reason
    canary.summary(flagged_rows=...)         # a ContentionResult for a report
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
from roofline.validation.procstat import PROC, CpuTimes, Others, Snapshot, others_since

from roofline.results.validate import ContentionResult, ProcessShare
from roofline.spec.vocab import ContentionCause

__all__ = ["Canary", "CanarySample", "CpuTimes", "Mark", "ProbeCanary", "contention_flag", "diagnose"]

#: a round whose canary runs more than this much slower than the reference (beyond what the clock explains)
SLOW = 1.25
#: below this fraction of the reference's CPU share, the process is sharing its cores
CPU_SHARE_DROP = 0.75
#: above this share of CPU time stolen by the hypervisor, the VM is sharing its host
MAX_STEAL = 0.10
#: other processes needing more than the CPUs the run leaves free, by this share of its threads
MAX_OTHERS = 0.10
#: the cores' clock below this fraction of the probe's: throttled
CLOCK_DROP = 0.90
#: loops timed at the start; their median is the reference
START_TRIES = 5

#: (calls) -> (mean seconds per canary GEMM over the calls, the process's CPU share meanwhile)
Timer = Callable[[int], "tuple[float, float | None]"]


@dataclass(frozen=True)
class Mark:
    """Where a round started: the machine's and every process's CPU time."""

    snapshot: Snapshot
    wall: float

    @property
    def cpu(self) -> CpuTimes | None:
        return self.snapshot.cpu


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
    cause: ContentionCause | None = None
    """local, neighbours (contended) or throttling (clean, noted); None: nothing seen"""
    others: Others | None = None
    """other processes' CPU time over the round"""
    clock_hz: float | None = None
    """the cores' clock right after the round (None: not measured)"""
    clock_ratio: float | None = None
    """that clock over the probe's"""

    @property
    def contended(self) -> bool:
        return self.reason is not None


@dataclass(frozen=True)
class Thresholds:
    slow: float = SLOW
    cpu_share_drop: float = CPU_SHARE_DROP
    max_steal: float = MAX_STEAL
    max_others: float = MAX_OTHERS
    clock_drop: float = CLOCK_DROP


def _names(others: Others) -> str:
    return ", ".join(f"{comm} (pid {pid}) {cpus:.0%} of a CPU" for comm, pid, cpus in others.top) or "many small ones"


def diagnose(ratio: float, cpu_share: float | None, best_cpu_share: float, steal: float | None,
             others: Others | None, clock_ratio: float | None, threads: int,
             t: Thresholds = Thresholds()) -> tuple[ContentionCause | None, str | None]:
    """(cause, reason) of one round; ``reason`` is None unless the round was contended (throttling is a
    cause without a reason: noted, not flagged)."""
    if steal is not None and steal > t.max_steal:
        return ContentionCause.NEIGHBOURS, (f"the hypervisor stole {steal:.0%} of the CPU time: other guests of "
                                            "this host ran on its cores")
    if others is not None:
        free = max(others.cpus - threads, 0)
        if others.cpus_used - free > t.max_others * threads:
            return ContentionCause.LOCAL, (f"other processes on this machine took {others.cpus_used:.2f} CPUs of "
                                           f"its {others.cpus}: {_names(others)}")
    slow = ratio > t.slow
    starved = cpu_share is not None and best_cpu_share > 0 and cpu_share < t.cpu_share_drop * best_cpu_share
    throttled = clock_ratio is not None and clock_ratio < t.clock_drop
    explained = throttled and ratio * clock_ratio <= t.slow  # the clock accounts for the slowdown
    if (slow and not explained) or starved:
        clock = (f", the clock {clock_ratio:.0%} of the probe's" if clock_ratio is not None
                 else ", the clock not measured")
        what = (f"the canary GEMM ran {ratio:.1f}x slower than its reference" if slow and not explained else
                f"this process got {cpu_share:.0%} of the CPU its {threads} threads asked for (reference "
                f"{best_cpu_share:.0%})")
        stolen = f", steal {steal:.0%}" if steal is not None else ", steal not reported"
        return ContentionCause.NEIGHBOURS, (f"{what} with nothing else running here{clock}{stolen}: the "
                                            "hypervisor's other guests")
    if throttled:
        return ContentionCause.THROTTLING, None
    return None, None


@dataclass(frozen=True)
class ProbeCanary:
    """What the probe's canary measured on this host, kept beside the probe file."""

    key: str
    reference_s: float
    best_cpu_share: float
    clock_hz: float | None = None


def probe_canary_path(probe_file: Path) -> Path:
    """``host-2t.toml`` -> ``host-2t.canary.json``."""
    probe_file = Path(probe_file)
    return probe_file.with_name(f"{probe_file.stem}.canary.json")


def load_probe_canary(probe_file: Path | None) -> ProbeCanary | None:
    """The probe's canary beside ``probe_file``; None when there is none or it is unreadable."""
    if probe_file is None:
        return None
    try:
        data = json.loads(probe_canary_path(probe_file).read_text(encoding="utf-8"))
        clock = data.get("clock_hz")
        c = ProbeCanary(str(data["key"]), float(data["reference_s"]), float(data["best_cpu_share"]),
                        float(clock) if clock else None)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return c if c.reference_s > 0 and 0 < c.best_cpu_share <= 2 else None


def save_probe_canary(probe_file: Path, c: ProbeCanary) -> None:
    """Write ``c`` beside ``probe_file`` (only a cache: a failure is ignored)."""
    from roofline.errors import UserError
    from roofline.files.writing import write_text

    data = {"key": c.key, "reference_s": c.reference_s, "best_cpu_share": c.best_cpu_share, "clock_hz": c.clock_hz}
    try:
        write_text(probe_canary_path(probe_file), json.dumps(data) + "\n")
    except (OSError, UserError):
        pass


class TorchGemm:
    """The canary's loop: ``torch.mm`` of a fixed ``size``-cubed FP32 GEMM with ``threads`` threads."""

    def __init__(self, threads: int, size: int):
        self.threads, self.size = threads, size
        g = torch.Generator().manual_seed(0)
        self.a = torch.randn(size, size, generator=g)
        self.b = torch.randn(size, size, generator=g)
        self.cores = min(threads, _usable_cpus())
        self.label = f"torch {torch.__version__}; mm {size}^3"

    def __call__(self, calls: int) -> tuple[float, float | None]:
        saved = torch.get_num_threads()
        torch.set_num_threads(self.threads)
        try:
            a, b = self.a, self.b
            torch.mm(a, b)
            cpu0, wall0 = time.process_time(), time.perf_counter()
            for _ in range(calls):
                torch.mm(a, b)
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        finally:
            torch.set_num_threads(saved)
        share = cpu / (wall * self.cores) if wall > 0 and self.cores else None
        return wall / calls, share


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
    max_others: float = MAX_OTHERS
    clock_drop: float = CLOCK_DROP
    timer: Timer | None = None
    """the canary loop (default: :class:`TorchGemm`); tests pass a fake"""
    clock_reader: Callable[[], float | None] | None = None
    """the cores' clock now, in Hz (None: not measured)"""
    probe_clock_hz: float | None = None
    """the probe's clock of this host, which the achieved clock is compared with"""
    proc: Path = PROC
    own_pid: int = field(default_factory=os.getpid)
    reference_s: float = field(init=False, default=0.0)
    best_cpu_share: float = field(init=False, default=0.0)
    start_reference_s: float = field(init=False, default=0.0)
    start_cpu_share: float = field(init=False, default=0.0)
    probe_reference_s: float | None = field(init=False, default=None)
    reference_source: str = field(init=False, default="this run's start (median of its tries)")
    start: CanarySample | None = field(init=False, default=None)
    """what the kernel said about the start's tries (its cause: whether the start was contended)"""
    calls: int = field(init=False, default=1)
    history: list[CanarySample] = field(init=False, default_factory=list)
    reruns: int = field(init=False, default=0)
    unresolved: int = field(init=False, default=0)
    """timings (rows, the dispatch overhead) that had to keep contended rounds"""

    def __post_init__(self) -> None:
        if not self.size:
            self.size = 256 if self.threads <= 2 else 64 * round(4 * (self.threads / 2) ** (1 / 3))
        if self.timer is None:
            self.timer = TorchGemm(self.threads, self.size)
        one = min(self.timer(3)[0] for _ in range(3))
        self.calls = max(5, min(5000, round(self.window_s / max(one, 1e-7))))
        mark = self.mark()
        tries = [self.timer(self.calls) for _ in range(START_TRIES)]
        self.start_reference_s = self.reference_s = statistics.median(t for t, _ in tries)
        shares = [c for _, c in tries if c is not None]
        self.start_cpu_share = self.best_cpu_share = statistics.median(shares) if shares else 0.0
        self.start = self._judge(self.start_reference_s, shares[-1] if shares else None, mark)

    @property
    def key(self) -> str:
        label = getattr(self.timer, "label", "custom timer")
        return f"{_cpu_model(self.proc)}; {label}; {self.threads} threads"

    def thresholds(self) -> Thresholds:
        return Thresholds(self.slow, self.cpu_share_drop, self.max_steal, self.max_others, self.clock_drop)

    def anchor(self, probe: ProbeCanary | None) -> None:
        """Check the reference against this host's probe: the slower of this run's start and the probe's
        (one fast moment must not set the bar), unless the start itself was contended, when the probe's."""
        if probe is None or probe.key != self.key:
            return
        self.probe_reference_s = probe.reference_s
        if probe.clock_hz and not self.probe_clock_hz:
            self.probe_clock_hz = probe.clock_hz
        start_busy = self.start is not None and self.start.contended and self.start.cause is not None
        if start_busy and probe.reference_s < self.start_reference_s:
            self.reference_s, self.best_cpu_share = probe.reference_s, probe.best_cpu_share
            self.reference_source = f"the probe's: this run's start was contended ({self.start.reason})"
        elif probe.reference_s > self.start_reference_s:
            self.reference_s = probe.reference_s
            self.best_cpu_share = min(self.start_cpu_share, probe.best_cpu_share)
            self.reference_source = "the probe's (slower than this run's start)"
        else:
            self.best_cpu_share = min(self.start_cpu_share, probe.best_cpu_share)
            self.reference_source = "this run's start (slower than the probe's)"

    def probe_record(self) -> ProbeCanary:
        """This canary as a probe stores it beside its file."""
        return ProbeCanary(self.key, self.start_reference_s, self.start_cpu_share, self.probe_clock_hz)

    def describe(self) -> str:
        return (f"torch.mm fp32 {self.size}x{self.size}x{self.size}, mean of {self.calls} calls "
                f"(~{self.window_s * 1e3:g} ms), {self.threads} threads")

    def mark(self) -> Mark:
        return Mark(Snapshot.take(self.proc), time.perf_counter())

    def _judge(self, seconds: float, share: float | None, since: Mark | None) -> CanarySample:
        clock = self.clock_reader() if self.clock_reader is not None else None
        now = Snapshot.take(self.proc)
        steal = now.cpu.steal_share_since(since.cpu) if (now.cpu is not None and since is not None) else None
        others = others_since(since.snapshot, now, self.own_pid) if since is not None else None
        ratio = seconds / self.reference_s if self.reference_s > 0 else 1.0
        clock_ratio = clock / self.probe_clock_hz if clock and self.probe_clock_hz else None
        cause, reason = diagnose(ratio, share, self.best_cpu_share, steal, others, clock_ratio, self.threads,
                                 self.thresholds())
        return CanarySample(seconds, ratio, share, steal, reason, cause, others, clock, clock_ratio)

    def sample(self, since: Mark | None = None) -> CanarySample:
        """Time the canary now; with ``since`` (a :meth:`mark` taken before a round) the steal and the
        other processes' time cover the whole round. Every sample is kept in :attr:`history`."""
        seconds, share = self.timer(self.calls)
        s = self._judge(seconds, share, since)
        self.history.append(s)
        return s

    def summary(self, flagged_rows: int = 0, dispatch_contended: bool = False) -> ContentionResult:
        """Plain numbers for a report; ``flagged_rows``: how many of its rows carry a contention flag."""
        h = self.history
        shares = [s.cpu_share for s in h if s.cpu_share is not None]
        steals = [s.steal for s in h if s.steal is not None]
        others = [s.others for s in h if s.others is not None]
        clocks = [s.clock_hz for s in h if s.clock_hz]
        stat = CpuTimes.read(self.proc / "stat")
        causes = Counter(s.cause for s in h if s.contended and s.cause is not None)
        cause = max(causes, key=lambda c: (causes[c], c is ContentionCause.LOCAL)) if causes else None
        top = _top_processes(others)
        throttled = sum(s.cause is ContentionCause.THROTTLING for s in h)
        lowest = min(clocks) if clocks else None
        return ContentionResult(
            canary=self.describe(), reference_s=self.reference_s, slow_threshold=self.slow,
            cpu_share_drop=self.cpu_share_drop, best_cpu_share=self.best_cpu_share or None,
            max_steal=self.max_steal, samples=len(h),
            contended_samples=sum(s.contended for s in h), worst_ratio=max((s.ratio for s in h), default=1.0),
            lowest_cpu_share=min(shares) if shares else None, worst_steal=max(steals) if steals else None,
            steal_reported=stat is not None and stat.steal is not None,
            reruns=self.reruns, unresolved=flagged_rows, flagged_rows=flagged_rows,
            cause=cause.value if cause is not None and flagged_rows else None,
            advice=advice(cause if flagged_rows else None, top, max(steals, default=None), throttled, lowest,
                          self.probe_clock_hz),
            top_processes=top, worst_other_cpus=max((o.cpus_used for o in others), default=None),
            probe_clock_hz=self.probe_clock_hz, lowest_clock_hz=lowest, throttled_samples=throttled,
            start_reference_s=self.start_reference_s or None, probe_reference_s=self.probe_reference_s,
            reference_source=self.reference_source, dispatch_contended=dispatch_contended,
        )


def _top_processes(others: list[Others], top: int = 3) -> list[ProcessShare]:
    """The busiest other processes over all sampled rounds: their ticks over all the rounds' ticks."""
    ticks: Counter[tuple[str, int]] = Counter()
    total = 0
    cpus = 1
    for o in others:
        ticks.update(o.ticks)
        total += o.total_ticks
        cpus = o.cpus
    if not total:
        return []
    return [ProcessShare(comm, pid, t * cpus / total) for (comm, pid), t in ticks.most_common(top)
            if t * cpus / total >= 0.01]


def advice(cause: ContentionCause | None, top: list[ProcessShare], worst_steal: float | None, throttled: int,
           lowest_clock_hz: float | None, probe_clock_hz: float | None) -> str:
    """What a user can do about what the canary saw."""
    if cause is ContentionCause.LOCAL:
        names = ", ".join(f"{p.comm} (pid {p.pid}, {p.cpus:.0%} of a CPU)" for p in top) or "other processes"
        return (f"something on this machine: {names}; stop it or wait for it to finish, then rerun "
                "(or leave it cores: --threads fewer than the cores)")
    if cause is ContentionCause.NEIGHBOURS:
        steal = f" (steal up to {worst_steal:.0%})" if worst_steal else ""
        return (f"the hypervisor's neighbours{steal}: nothing on this machine to stop; rerun at a quieter hour, or "
                "on dedicated vCPUs (an instance type without CPU sharing)")
    if throttled and lowest_clock_hz and probe_clock_hz:
        return (f"frequency throttling in {throttled} round(s): the cores ran down to {lowest_clock_hz / 1e9:.2f} GHz "
                f"against the probe's {probe_clock_hz / 1e9:.2f} GHz with nothing else running and no steal (power "
                "or thermal limits): not contention, the timings stand at that clock; `--reprobe` if it persists")
    return ""


def _cpu_model(proc: Path = PROC) -> str:
    try:
        with open(proc / "cpuinfo", encoding="utf-8", errors="replace") as f:
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
