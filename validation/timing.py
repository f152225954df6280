"""Timing and profiling compiled callables.

- Variants being compared are timed interleaved (every round runs each once, in rotated order),
  so a slow spell of a noisy machine hits all of them; the figure is the median over rounds of
  ``torch.utils.benchmark`` ``blocked_autorange`` medians, with the spread (max - min) / median.
- A slow spell that lasts the whole measurement slows every round alike, which the spread cannot
  see: with a :class:`~roofline.validation.canary.Canary`, every round is followed by a canary
  sample, a contended round is run again (up to a bound), and timings that had to keep contended
  rounds carry a ``contention: ...`` flag.
- Inputs are cloned on every call (a fused residual add writes into its input), and the clone's
  own time, measured the same way, is subtracted.
- The profiler splits self time into linear-block GEMMs, attention, and everything else; each
  variant is profiled several times, interleaved, and each category's median kept.
"""

from __future__ import annotations

import contextlib
import os
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.utils.benchmark as tb
from roofline.validation.budget import NO_DEADLINE, Deadline
from roofline.validation.canary import Canary, CanarySample, contention_flag
from roofline.validation.compiled import PROFILER_ATTENTION, PROFILER_GEMM


@dataclass
class Timing:
    seconds: float
    """median per call, clone time subtracted"""
    spread: float
    """(max - min) / median over rounds"""
    rounds: list[float] = field(default_factory=list)
    contention: str | None = None
    """a ``contention: ...`` flag when contended rounds had to be kept (None: clean, or no canary)"""


def time_interleaved(fns: dict[str, Callable], make_input: Callable, *, rounds: int, min_run_time: float,
                     threads: int, canary: Canary | None = None, max_reruns: int | None = None,
                     deadline: Deadline = NO_DEADLINE) -> dict[str, Timing]:
    """Median per call of each of ``fns`` over ``rounds`` interleaved rounds.

    With a ``canary``, a round after which the canary says the host was contended is run again, up to
    ``max_reruns`` extra rounds in all (default: as many as ``rounds``) and while the run's ``deadline``
    allows one more round (as long as the slowest so far). If clean rounds are still short, the least
    contended of the others fill in and every timing gets the same contention flag."""
    names = list(fns)
    max_reruns = rounds if max_reruns is None else max_reruns
    identity = lambda x: x  # noqa: E731
    clean: list[tuple[dict, CanarySample | None]] = []
    dirty: list[tuple[dict, CanarySample]] = []
    attempt = 0
    longest = 0.0
    while len(clean) < rounds and attempt < rounds + max_reruns:
        if attempt >= rounds and not deadline.allows(longest):
            break  # a re-take would run past the deadline: keep what there is
        started = deadline.clock()
        mark = canary.mark() if canary else None
        order = names[attempt % len(names):] + names[: attempt % len(names)] if names else []
        measured: dict[str | None, float] = {}
        for n in [*order, None]:
            f = fns[n] if n else identity
            t = tb.Timer(stmt="f(mk())", globals={"f": f, "mk": make_input}, num_threads=threads)
            measured[n] = t.blocked_autorange(min_run_time=min_run_time).median
        sample = canary.sample(mark) if canary else None
        longest = max(longest, deadline.clock() - started)
        if sample is not None and sample.contended:
            dirty.append((measured, sample))
        else:
            clean.append((measured, sample))
        attempt += 1
    kept_dirty = sorted(dirty, key=lambda r: r[1].ratio)[: max(rounds - len(clean), 0)]
    kept = clean + kept_dirty
    flag = None
    if canary is not None:
        canary.reruns += max(attempt - rounds, 0)
        if kept_dirty:
            canary.unresolved += 1
            flag = contention_flag([s for _, s in kept if s is not None], len(kept), max(attempt - rounds, 0))
    c = statistics.median(m[None] for m, _ in kept) if kept else 0.0
    out = {}
    for n in names:
        v = [m[n] for m, _ in kept]
        med = statistics.median(v)
        out[n] = Timing(max(med - c, 1e-9), (max(v) - min(v)) / med, [x - c for x in v], flag)
    return out


@dataclass
class Breakdown:
    """Profiler self time per call, split the way the reference paper splits it."""

    linear_s: float
    attention_s: float
    other_s: float
    gemm_ops: dict[str, float]
    """linear-block ops by name: seconds per call"""

    @property
    def total_s(self) -> float:
        return self.linear_s + self.attention_s + self.other_s

    @property
    def dominant_gemm(self) -> str:
        return max(self.gemm_ops, key=lambda k: self.gemm_ops[k]) if self.gemm_ops else "none"


def profile_breakdown(call: Callable, make_input: Callable, iters: int = 10) -> Breakdown:
    """Self CPU time per call, by category (inputs are prepared before profiling starts).

    Linear block: the GEMM ops (with their fused epilogues); attention: the SDPA kernel;
    other: everything else, including Inductor's C++ kernels (quantize, layer norm, GeLU) and
    dispatch. Wrapper events count only through their own self time."""

    call(make_input())
    inputs = [make_input() for _ in range(iters)]
    with _quiet_stderr(), torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for x in inputs:
            call(x)
    gemm: Counter[str] = Counter()
    attention = other = 0.0
    for e in prof.key_averages():
        t = e.self_cpu_time_total / 1e6 / iters
        if PROFILER_GEMM.search(e.key):
            gemm[e.key] += t
        elif PROFILER_ATTENTION.search(e.key):
            attention += t
        else:
            other += t
    return Breakdown(sum(gemm.values()), attention, other, dict(gemm))


def median_breakdown(profiles: list[Breakdown]) -> Breakdown:
    """Per category, the median over repeated profiles (a slow spell in one of them is outvoted)."""
    med = statistics.median
    keys = dict.fromkeys(k for p in profiles for k in p.gemm_ops)
    return Breakdown(med(p.linear_s for p in profiles), med(p.attention_s for p in profiles),
                     med(p.other_s for p in profiles), {k: med(p.gemm_ops.get(k, 0.0) for p in profiles) for k in keys})


def profile_interleaved(fns: dict[str, Callable], make_input: Callable, *, iters: int, repeats: int) -> dict[str, Breakdown]:
    """:func:`profile_breakdown` of every variant ``repeats`` times, interleaved like the timing, and
    the per-category median of each variant's profiles."""
    runs: dict[str, list[Breakdown]] = {n: [] for n in fns}
    for _ in range(repeats):
        for n, f in fns.items():
            runs[n].append(profile_breakdown(f, make_input, iters=iters))
    return {n: median_breakdown(v) for n, v in runs.items()}


@contextlib.contextmanager
def _quiet_stderr():
    """Silence file descriptor 2: torch 2.13's profiler prints 'USDT ... profiler_start/stop' lines from C++."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


class Chain(torch.nn.Module):
    """``n`` tiny linears in a row: a compiled graph of ``n`` extern GEMM calls."""

    def __init__(self, n: int):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(16, 16) for _ in range(n))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def measure_dispatch(threads: int, rounds: int = 5, canary: Canary | None = None,
                     deadline: Deadline = NO_DEADLINE) -> dict[str, float]:
    """Fixed costs of running compiled code on this host: one call of a compiled graph holding one
    tiny linear (``call_s``), and each further extern op inside a graph (``per_op_s``: a graph of 17
    tiny linears against one of 1)."""

    from roofline.validation.compiled import compile_module

    x = torch.randn(4, 16)
    fns = {n: compile_module(Chain(n).eval(), x)[0] for n in (1, 17)}
    t = time_interleaved(fns, lambda: x.clone(), rounds=rounds, min_run_time=0.1, threads=threads, canary=canary,
                         deadline=deadline)
    return {"call_s": t[1].seconds, "per_op_s": max((t[17].seconds - t[1].seconds) / 16, 0.0)}
