"""Decoder serving with continuous batching: TTFT, TPOT and tokens/s, by vectorised simulation.

**The system.** A server runs ``c`` identical instances; each keeps a running batch of at most
``K = max_concurrent_sequences`` sequences (the KV-cache capacity the caller computes from the
DRAM left after the weights: :func:`roofline.calc.kv_capacity.max_concurrent_sequences`). Requests arrive as a Poisson process at ``lam`` per second, each
with a prompt of ``P`` tokens (a :class:`~roofline.serving.request_lengths.RequestLengths`) and a
fixed number ``O`` of output tokens. The load balancer sends each request to an instance chosen
at random, so each instance sees a Poisson stream at ``lam / c`` and the instances are
independent (a balancer that joins the least-loaded instance does better: this is the
pessimistic side of the usual choices).

**The policy** (iteration-level scheduling as in Orca and vLLM, without chunked prefill). At
every step boundary an instance:

1. if requests are waiting and a slot is free, runs a *prefill step* for the oldest waiting
   requests, as many as there are free slots (and, with ``max_prefill_tokens``, as fit in it, at
   least one): it takes ``prefill_time(scenario, sum of their prompt tokens)`` seconds, the running
   sequences make no progress meanwhile, and at its end each admitted request has its first
   token (TTFT = that time - arrival) and joins the running batch with context ``P + 1``;
2. otherwise, if sequences are running, runs a *decode step*: each running sequence generates one
   token in ``step(b, C) = base[b] + per_token[b] x C`` seconds (:class:`DecodeStep`; ``b`` the
   running sequences, ``C`` their total context at the start of the step); a sequence that has
   generated ``O`` tokens leaves at the end of that step and frees its slot;
3. otherwise waits for the next arrival.

TPOT of a request = (its last token's time - its first token's time) / (O - 1): the time per
output token at the running batch, prefill stalls included.

**Why it is fast.** With a fixed ``O`` sequences leave in the order they were admitted, in
groups admitted by one prefill: an instance's running batch is a FIFO queue of groups, so the
next departure is the head group's. Between events (an admission, a departure) the batch is
constant and a run of ``k`` decode steps takes, in closed form,
``T(k) = k base[b] + per_token[b] (k C + b k (k - 1) / 2)`` (``C`` grows by ``b`` each step);
the simulation jumps from event to event, stopping at the first step boundary after an arrival
that can be admitted (the smallest ``k`` with ``T(k) >= a - t``, from the quadratic). One pass of
the loop runs, for every row, the prefill that is due and then the decode run to the next event,
so it makes about two passes per request (one ending at an arrival, one at a departure), not one
per token, vectorised across every (scenario, rate, replication) like
:mod:`roofline.serving.dynamic_batching`. A plan's search (36 scenarios, 3 rounds of 4 loads x 8
replications) takes about 3 s on one core of a shared 2-core machine
(``tests/benchmarks/bench_queueing.py``). ``O`` is therefore one number per run; prompt lengths
may vary. The step must be affine in the context: :meth:`DecodeStep.from_callable` takes the
secant of any step function over the contexts the run can reach.

**Capacity.** The offline scenario is an instance cycling one full group: a prefill of ``m``
prompts (mean length) then ``O - 1`` decode steps at batch ``m``, ``m`` requests per cycle; the
best ``m <= K`` (usually ``K``). The server scenario's answer stays below it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from roofline.errors import UserError
from roofline.serving.checks import positive, whole
from roofline.serving.rate_search import SEARCH_GRID, check_grid, scan
from roofline.serving.replication import COMPACT, flat_streams, p99_interval, pooled, row_layout
from roofline.serving.request_lengths import RequestLengths
from roofline.serving.sampling import Sampling, quantiles, streams

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: ``prefill_time(scenario, prompt_tokens) -> seconds`` for one prefill step of that many tokens
PrefillTime = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True, eq=False)
class DecodeStep:
    """One decode step of ``b`` running sequences with total context ``C`` tokens:
    ``step(b, C) = base_s[scenario, b - 1] + per_token_s[scenario, b - 1] x C`` seconds
    (``b = 1..K``; a 1-D table serves every scenario). ``base_s``: the weights and the
    activations; ``per_token_s``: reading one token of KV cache (and its attention flops)."""

    base_s: np.ndarray
    per_token_s: np.ndarray

    def __post_init__(self) -> None:
        a = np.atleast_2d(np.asarray(self.base_s, dtype=float))
        b = np.atleast_2d(np.asarray(self.per_token_s, dtype=float))
        if a.ndim != 2 or a.shape != b.shape or a.shape[1] == 0:
            raise UserError("decode step table: base_s and per_token_s need one value per batch size 1..K")
        if not (np.all(np.isfinite(a)) and np.all(a > 0) and np.all(np.isfinite(b)) and np.all(b >= 0)):
            raise UserError("decode step table: base_s must be positive and per_token_s 0 or more, finite")
        object.__setattr__(self, "base_s", a)
        object.__setattr__(self, "per_token_s", b)

    @property
    def max_batch(self) -> int:
        return self.base_s.shape[1]

    def __call__(self, scenario: np.ndarray, batch: np.ndarray, context: np.ndarray) -> np.ndarray:
        s = scenario if self.base_s.shape[0] > 1 else 0
        return self.base_s[s, batch - 1] + self.per_token_s[s, batch - 1] * context

    @classmethod
    def from_callable(cls, step_time: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray], n_scenarios: int,
                      max_batch: int, context_per_sequence: tuple[float, float]) -> DecodeStep:
        """The secant of ``step_time(scenario, batch, total_context)`` between ``b x lo`` and
        ``b x hi`` context tokens (``context_per_sequence = (lo, hi)``: the shortest and longest
        context a sequence reaches, ``P_min + 1`` and ``P_max + O - 1``). Exact for an affine step;
        for ``max(compute, memory)`` it overestimates between the two points.

        Where the secant would not have a positive intercept (the time jumps between the two points,
        e.g. the KV cache outgrowing a cache level), the line from ``(0, 1e-9 t_hi)`` to ``(b hi, t_hi)``
        is taken instead: it lies above the secant on ``[lo, hi]`` (it overestimates there too) and
        is exact at ``hi``. A step time falling with the context (``t_hi < t_lo``) keeps a flat line at
        ``t_lo``."""
        lo, hi = (float(v) for v in context_per_sequence)
        if not (0 <= lo < hi and math.isfinite(hi)):
            raise UserError(f"context_per_sequence={context_per_sequence}: need 0 <= lo < hi")
        ss, bb = np.meshgrid(np.arange(n_scenarios), np.arange(1, int(max_batch) + 1), indexing="ij")
        t_lo = np.asarray(step_time(ss, bb, bb * lo), dtype=float)
        t_hi = np.maximum(np.asarray(step_time(ss, bb, bb * hi), dtype=float), t_lo)
        slope = (t_hi - t_lo) / (bb * (hi - lo))
        base = t_lo - slope * bb * lo
        steep = ~(base > 0)
        floor = 1e-9 * t_hi
        slope = np.where(steep, (t_hi - floor) / (bb * hi), slope)
        return cls(np.where(steep, floor, base), slope)


@dataclass(frozen=True, eq=False)
class DecoderStats:
    """Per (scenario, offered rate): arrays of shape ``(S, G)`` (``(S, G, 2)`` for intervals)."""

    rate_rps: np.ndarray
    """offered Poisson rate per server"""
    ttft_p50_s: np.ndarray
    ttft_p99_s: np.ndarray
    ttft_p99_ci_s: np.ndarray
    tpot_p50_s: np.ndarray
    tpot_p99_s: np.ndarray
    tpot_p99_ci_s: np.ndarray
    tokens_per_s: np.ndarray
    """output tokens per second per server: ``c O x`` each instance's completion rate (at most its offered rate)"""
    mean_batch: np.ndarray
    """mean running sequences per decode step"""
    mean_ttft_s: np.ndarray
    mean_tpot_s: np.ndarray

    def points(self, scenario: int = 0) -> list[dict]:
        """``{offered_rps, ttft_p50_s, ttft_p99_s, tpot_p50_s, tpot_p99_s, tokens_per_s, mean_batch}`` per rate."""
        keys = ("ttft_p50_s", "ttft_p99_s", "tpot_p50_s", "tpot_p99_s", "tokens_per_s", "mean_batch")
        return [{"offered_rps": float(self.rate_rps[scenario, g]),
                 **{k: float(getattr(self, k)[scenario, g]) for k in keys}}
                for g in range(self.rate_rps.shape[1])]


@dataclass(frozen=True, eq=False)
class DecoderOffline:
    """Per scenario, shape ``(S,)``: the best synchronised cycle of ``batch`` sequences."""

    rps: np.ndarray
    tokens_per_s: np.ndarray
    batch: np.ndarray
    cycle_s: np.ndarray
    """one cycle: the prefill of ``batch`` prompts and ``O - 1`` decode steps"""


@dataclass(frozen=True, eq=False)
class DecoderMaxRate:
    """The server scenario's answer per scenario, shape ``(S,)``."""

    rate_rps: np.ndarray
    """the highest simulated Poisson rate per server meeting both SLOs (0 when none does)"""
    rate_fail_rps: np.ndarray
    meets: np.ndarray
    """False where a lone request on an idle instance already misses an SLO"""
    bare_ttft_p99_s: np.ndarray
    bare_tpot_p99_s: np.ndarray
    offline_rps: np.ndarray
    offline_tokens_per_s: np.ndarray
    stats: DecoderStats
    """the simulation at ``rate_rps``, arrays ``(S, 1)`` (NaN where ``rate_rps`` is 0)"""

    @property
    def tokens_per_s(self) -> np.ndarray:
        return self.stats.tokens_per_s[:, 0]


# --------------------------------------------------------------------------- checks


def _check(instances, prompt_lengths, output_len, max_concurrent, step: DecodeStep, prefill_time,
           max_prefill_tokens):
    c = whole("instances", instances).ravel()
    if not isinstance(prompt_lengths, RequestLengths):
        raise UserError("prompt_lengths: must be a RequestLengths (fixed_lengths, lognormal_lengths or "
                        "histogram_lengths)")
    o = int(whole("output_len", output_len))
    k = np.broadcast_to(whole("max_concurrent_sequences", max_concurrent), c.shape).astype(np.int64)
    if not isinstance(step, DecodeStep):
        raise UserError("decode_step: must be a DecodeStep")
    if step.max_batch < k.max():
        raise UserError(f"decode step table: has batches up to {step.max_batch}, but max_concurrent_sequences="
                        f"{int(k.max())}")
    if step.base_s.shape[0] not in (1, c.size):
        raise UserError(f"decode step table: {step.base_s.shape[0]} rows for {c.size} scenarios")
    if not callable(prefill_time):
        raise UserError("prefill_time: must be a function (scenario, prompt_tokens) -> seconds")
    cap = None if max_prefill_tokens is None else int(whole("max_prefill_tokens", max_prefill_tokens))
    return c, o, k, cap


def _seconds(name: str, v) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    if not (np.all(v > 0) and np.all(v < np.inf)):
        raise UserError(f"{name}: returned a time that is not positive and finite")
    return v


# --------------------------------------------------------------------------- the engine


@dataclass(frozen=True, eq=False)
class _Runs:
    offsets: np.ndarray
    first_heads: np.ndarray  # request numbers (offsets-based) heading an admission group
    first_t: np.ndarray  # that group's first-token time
    done_heads: np.ndarray  # request numbers heading a departing group
    done_t: np.ndarray
    frame: float
    batch_steps: np.ndarray  # (rows,) sum of b k over measured decode runs
    steps: np.ndarray  # (rows,) sum of k




def _run_time(k, alpha, beta, b, ctx):
    """``T(k) = k alpha + beta (k C + b k (k - 1) / 2)``: ``k`` decode steps of ``b`` sequences from context ``C``."""
    return k * alpha + beta * (k * ctx + b * k * (k - 1) / 2.0)


def _steps_to_reach(delta, alpha, beta, b, ctx):
    """The smallest ``k >= 1`` with ``T(k) >= delta`` (``delta > 0``; ``alpha > 0``, ``beta >= 0``,
    ``C >= b``): the positive root of ``(beta b / 2) k^2 + (alpha + beta (C - b / 2)) k = delta``
    in its cancellation-free form, rounded up, and one more step if rounding left ``T(k) < delta``.
    (An arrival within rounding of a step boundary may be taken at that boundary or the next.)"""
    qa = beta * b / 2.0
    qb = alpha + beta * ctx - qa  # > 0
    k = np.maximum(np.ceil(2.0 * delta / (qb + np.sqrt(qb * qb + 4.0 * qa * delta))), 1.0)
    return np.where(_run_time(k, alpha, beta, b, ctx) < delta, k + 1, k)


@dataclass
class _Rows:
    """Every row's state in the loop, compacted as rows finish: the next request not yet admitted
    (``w``, a flat stream index) and the row's last, the clock ``t``, decode steps done ``n`` (float:
    exact for integers below 2^53), running sequences ``b`` and their context ``ctx``; per row a ring
    of ``g`` groups (flattened rows x g): the step at which each departs (``gf``), its first request,
    its size and its context when it departs, the ring's head ``gh`` and size ``gs``."""

    w: np.ndarray
    last: np.ndarray
    slot_off: np.ndarray
    """a request's flat stream index plus this: its slot in the outputs"""
    t: np.ndarray
    n: np.ndarray
    b: np.ndarray
    ctx: np.ndarray
    gh: np.ndarray
    gs: np.ndarray
    scen: np.ndarray
    scale: np.ndarray
    kk: np.ndarray
    t0: np.ndarray
    t1: np.ndarray
    """decode steps that start in ``[t0, t1)`` count in the mean batch"""
    rid: np.ndarray
    """the row's index before any compaction"""
    gf: np.ndarray
    g_first: np.ndarray
    g_cnt: np.ndarray
    g_ctx: np.ndarray
    g: int
    gar: np.ndarray
    """each row's first ring entry"""

    PER_ROW = ("w", "last", "slot_off", "t", "n", "b", "ctx", "gh", "gs", "scen", "scale", "kk", "t0", "t1", "rid")
    RINGS = ("gf", "g_first", "g_cnt", "g_ctx")

    def keep(self, keep: np.ndarray) -> None:
        rows = self.w.size
        for name in self.PER_ROW:
            setattr(self, name, getattr(self, name)[keep])
        for name in self.RINGS:
            setattr(self, name, getattr(self, name).reshape(rows, self.g)[keep].ravel())
        self.gar = np.arange(keep.size) * self.g


@dataclass(frozen=True)
class _Tape:
    """What the loop writes: each request's first and last token time (a slot per request of every row), and
    per original row the decode steps and sequence-steps counted for the mean batch."""

    first_t: np.ndarray
    is_first: np.ndarray
    done_t: np.ndarray
    is_done: np.ndarray
    bsteps: np.ndarray
    nsteps: np.ndarray


def _admit(r: _Rows, uf, cumf, cap_fit, o: int, prefill_time, tape: _Tape) -> tuple[np.ndarray, np.ndarray]:
    """1. A prefill where requests wait and a slot is free (an idle instance first waits for one): the
    oldest arrived requests, as many as there are free slots and fit the prefill cap, join the running
    batch as one group. Returns, after it, whether each row has a request waiting and that request's
    arrival."""
    has_w = r.w <= r.last
    wc = np.minimum(r.w, r.last)
    aw = uf[wc]
    r.t = np.where((r.b == 0) & has_w, np.maximum(r.t, aw), r.t)
    ip = np.flatnonzero(has_w & (aw <= r.t) & (r.b < r.kk))
    if not ip.size:
        return has_w, aw
    wp, tp, bp = wc[ip], r.t[ip], r.b[ip]
    e = np.searchsorted(uf, tp, side="right") - 1  # the last arrived request
    e = np.minimum(np.minimum(e, r.last[ip]), cap_fit[wp])
    mp = np.minimum(e - wp + 1, r.kk[ip] - bp)
    ptok = (cumf[wp + mp] - cumf[wp]).astype(float)
    dt = np.asarray(prefill_time(r.scen[ip], ptok), dtype=float)
    if not (dt.min() > 0 and dt.max() < np.inf):
        raise UserError("prefill_time: returned a time that is not positive and finite")
    tp = tp + dt * r.scale[ip]
    r.t[ip] = tp
    slot = r.slot_off[ip] + wp
    tape.first_t[slot] = tp
    tape.is_first[slot] = True
    if o == 1:  # the first token is the last
        tape.done_t[slot] = tp
        tape.is_done[slot] = True
    else:
        _join(r, ip, wp, mp, r.n[ip] + (o - 1), ptok + mp * o)
        r.b[ip] = bp + mp
        r.ctx[ip] += ptok + mp
    r.w[ip] = wp + mp
    has_w[ip] = r.w[ip] <= r.last[ip]
    wc[ip] = np.minimum(r.w[ip], r.last[ip])
    aw[ip] = uf[wc[ip]]
    return has_w, aw


def _join(r: _Rows, ip, wp, mp, fin, gc) -> None:
    """The ``mp`` requests from ``wp`` admitted on rows ``ip`` join the ring as a group departing at step
    ``fin`` with context ``gc``; admitted at the same step as the ring's tail, they depart with it."""
    g = r.g
    gi = r.gar[ip]
    tail = gi + (r.gh[ip] + r.gs[ip] - 1) % g
    merge = (r.gs[ip] > 0) & (r.gf[tail] == fin)  # admitted at the same step: they depart together
    tm = tail[merge]
    r.g_cnt[tm] += mp[merge]
    r.g_ctx[tm] += gc[merge]
    new = ~merge
    inew = ip[new]
    pos = gi[new] + (r.gh[inew] + r.gs[inew]) % g
    r.gf[pos] = fin[new]
    r.g_first[pos] = wp[new]
    r.g_cnt[pos] = mp[new]
    r.g_ctx[pos] = gc[new]
    r.gs[inew] += 1


def _decode(r: _Rows, has_w, aw, alpha_t, beta_t, width: int, one_table: bool, tape: _Tape) -> None:
    """2. Decode where sequences run and no prefill is due: to the next departure, or to the first step
    boundary after an arrival that a free slot can take; the head group departs when its step is reached."""
    room = has_w & (r.b < r.kk)
    idn = np.flatnonzero((r.b > 0) & ~(room & (aw <= r.t)))
    if not idn.size:
        return
    bd, cd, td = r.b[idn], r.ctx[idn], r.t[idn]
    scale = r.scale[idn]
    ti = (bd - 1) if one_table else r.scen[idn] * width + bd - 1
    alpha = alpha_t[ti] * scale
    beta = beta_t[ti] * scale
    head = r.gar[idn] + r.gh[idn]
    k = r.gf[head] - r.n[idn]
    il = np.flatnonzero(room[idn])
    if il.size:
        ka = _steps_to_reach(aw[idn[il]] - td[il], alpha[il], beta[il], bd[il], cd[il])
        k[il] = np.minimum(k[il], ka)
    dt = _run_time(k, alpha, beta, bd, cd)
    if il.size:  # stopping for an arrival: T(k) >= a - t exactly, whatever the rounding
        dt[il] = np.where(k[il] == ka, np.maximum(dt[il], aw[idn[il]] - td[il]), dt[il])
    counted = (td >= r.t0[idn]) & (td < r.t1[idn])
    rd = r.rid[idn]
    tape.bsteps[rd] += counted * (bd * k)
    tape.nsteps[rd] += counted * k
    td = td + dt
    r.t[idn] = td
    nd = r.n[idn] + k
    r.n[idn] = nd
    r.ctx[idn] = cd + bd * k
    gone = nd == r.gf[head]  # the head group departs (groups depart at distinct steps)
    if gone.any():
        ig, hg = idn[gone], head[gone]
        slot = r.slot_off[ig] + r.g_first[hg]
        tape.done_t[slot] = td[gone]
        tape.is_done[slot] = True
        r.b[ig] -= r.g_cnt[hg]
        r.ctx[ig] -= r.g_ctx[hg]
        r.gh[ig] = (r.gh[ig] + 1) % r.g
        r.gs[ig] -= 1


def _run(u, p, row_rep, row_total, row_scen, row_scale, row_k, out_len, prefill_time, step: DecodeStep,
         prefill_cap, measure_from, measure_to) -> _Runs:
    """Continuous batching for every row at once (see the module docstring). ``u``, ``p`` (R, N):
    unit-rate arrival times and prompt lengths per replication; row ``i`` runs the first
    ``row_total[i]`` requests of replication ``row_rep[i]`` in the unit ``1 / row_scale[i]``.
    Decode steps that start between the arrivals of requests ``measure_from[i]`` and
    ``measure_to[i]`` count in the mean batch. Each pass of the loop runs, on every row still going,
    the prefill that is due (:func:`_admit`) and then the decode run to the next event (:func:`_decode`)."""
    reps, total = u.shape
    rows = row_rep.size
    off_u, uf, rep_last = flat_streams(u)
    cumf = np.concatenate([[0], np.cumsum(p.ravel())])
    if prefill_cap is None:
        cap_fit = rep_last
    else:
        own = np.arange(reps * total)
        cap_fit = np.searchsorted(cumf, cumf[:-1] + prefill_cap, side="right") - 2  # last j: sum p[i..j] <= cap
        cap_fit = np.minimum(np.maximum(cap_fit, own), rep_last)
    offsets = np.concatenate([[0], np.cumsum(row_total)])
    slots = int(offsets[-1])
    tape = _Tape(np.empty(slots), np.zeros(slots, dtype=bool), np.empty(slots), np.zeros(slots, dtype=bool),
                 np.zeros(rows), np.zeros(rows))
    base = row_rep * total
    g = int(row_k.max())  # groups in flight <= running sequences <= K
    r = _Rows(w=base.copy(), last=base + row_total - 1, slot_off=offsets[:-1] - base, t=off_u * row_rep.astype(float),
              n=np.zeros(rows), b=np.zeros(rows, dtype=np.int64), ctx=np.zeros(rows),
              gh=np.zeros(rows, dtype=np.int64), gs=np.zeros(rows, dtype=np.int64), scen=row_scen, scale=row_scale,
              kk=row_k, t0=uf[base + measure_from], t1=uf[base + measure_to], rid=np.arange(rows),
              gf=np.zeros(rows * g), g_first=np.zeros(rows * g, dtype=np.int64), g_cnt=np.zeros(rows * g, dtype=np.int64),
              g_ctx=np.zeros(rows * g), g=g, gar=np.arange(rows) * g)
    alpha_t, beta_t = step.base_s.ravel(), step.per_token_s.ravel()
    width, one_table = step.base_s.shape[1], step.base_s.shape[0] == 1
    o = int(out_len)
    while True:
        has_w, aw = _admit(r, uf, cumf, cap_fit, o, prefill_time, tape)
        _decode(r, has_w, aw, alpha_t, beta_t, width, one_table, tape)
        act = (r.w <= r.last) | (r.b > 0)
        na = int(np.count_nonzero(act))
        if na == 0:
            break
        if na < COMPACT * r.w.size:
            r.keep(np.flatnonzero(act))
    fh = np.flatnonzero(tape.is_first)
    dh = np.flatnonzero(tape.is_done)
    return _Runs(offsets, fh, tape.first_t[fh], dh, tape.done_t[dh], off_u, tape.bsteps, tape.nsteps)


def decoder_offline(instances: ArrayLike, prefill_time: PrefillTime, decode_step: DecodeStep,
                    prompt_lengths: RequestLengths, output_len: int, max_concurrent_sequences: ArrayLike
                    ) -> DecoderOffline:
    """The offline scenario per scenario: an instance cycling one group of ``m`` sequences, a
    prefill of ``m`` prompts of the mean length ``Pbar`` then ``O - 1`` decode steps,
    ``cycle(m) = prefill(m Pbar) + (O - 1) base[m] + per_token[m] m (O - 1) (Pbar + 1 + (O - 2) / 2)``;
    ``rps = c max_{m <= K} m / cycle(m)``, ``tokens_per_s = O rps``.
    """
    c, o, k, _ = _check(instances, prompt_lengths, output_len, max_concurrent_sequences, decode_step,
                        prefill_time, None)
    scen = np.arange(c.size)
    mm = np.arange(1, int(k.max()) + 1)
    ss, bb = np.meshgrid(scen, mm, indexing="ij")
    pbar = prompt_lengths.mean
    pre = _seconds("prefill_time", prefill_time(ss, np.maximum(np.round(bb * pbar), 1.0)))
    mean_ctx = bb * (pbar + 1 + (o - 2) / 2.0)
    cycle = pre + (o - 1) * decode_step(ss, bb, mean_ctx)
    per = np.where(bb <= k[:, None], bb / cycle, -np.inf)
    best = per.argmax(axis=1)
    rps = c * per[scen, best]
    return DecoderOffline(rps=rps, tokens_per_s=o * rps, batch=mm[best].astype(float), cycle_s=cycle[scen, best])


@dataclass(frozen=True, eq=False)
class DecoderUsers:
    """Per scenario and user count, shape ``(S, U)``: a closed loop of ``users`` clients per server
    (:func:`decoder_users`)."""

    users: np.ndarray
    """clients per server, each with one request in flight"""
    running: np.ndarray
    """sequences an instance decodes together (its share of the users, at most its cap)"""
    ttft_s: np.ndarray
    """a request's time to first token: its wait for a slot and its group's prefill"""
    tpot_s: np.ndarray
    """a request's time per output token after the first: its group's mean decode step"""
    tokens_per_s: np.ndarray
    """output tokens per second per server"""

    @property
    def user_tokens_per_s(self) -> np.ndarray:
        """one user's generation speed once its first token is out: ``1 / TPOT``"""
        return 1.0 / self.tpot_s


def decoder_users(instances: ArrayLike, prefill_time: PrefillTime, decode_step: DecodeStep,
                  prompt_lengths: RequestLengths, output_len: int, max_concurrent_sequences: ArrayLike,
                  users: ArrayLike) -> DecoderUsers:
    """A closed loop of ``N`` users per server, each sending its next request when the last one ends (a benchmark
    at a fixed concurrency, a llama-server with ``N`` slots): the users spread over the ``c`` instances, the
    busiest holding ``u = ceil(N / c)``. With one prompt length and one output length the users of an instance
    run in step: a cycle of ``m = min(u, K)`` sequences is one prefill of ``m`` prompts and ``O - 1`` decode steps
    at batch ``m`` (:func:`decoder_offline`'s ``cycle(m)``), and a user beyond the ``K`` slots waits for others'
    cycles, so a request takes ``u / m`` cycles:

    ``TTFT = (u / m - 1) cycle(m) + prefill(m Pbar)``, ``TPOT = (cycle(m) - prefill(m Pbar)) / (O - 1)``,
    ``tokens/s = sum over instances of u_i O / (u_i / m_i cycle(m_i))``."""
    c, o, k, _ = _check(instances, prompt_lengths, output_len, max_concurrent_sequences, decode_step,
                        prefill_time, None)
    n = np.asarray(users, dtype=float).ravel()
    if not (np.all(np.isfinite(n)) and np.all(n >= 1) and np.all(n == np.round(n))):
        raise UserError("users: whole numbers, 1 or more")
    scen = np.arange(c.size)
    ss, nn = np.meshgrid(scen, n, indexing="ij")
    cc, kk = c[ss], k[ss]
    pbar = prompt_lengths.mean

    def cycle(m):
        m = np.maximum(m, 1.0)
        pre = _seconds("prefill_time", prefill_time(ss, np.maximum(np.round(m * pbar), 1.0)))
        dec = (o - 1) * decode_step(ss, m.astype(np.int64), m * (pbar + 1 + (o - 2) / 2.0)) if o > 1 else 0.0 * m
        return pre, pre + dec

    hi = np.ceil(nn / cc)  # the busiest instance's users, and the others'
    lo = np.floor(nn / cc)
    n_hi = nn - lo * cc  # instances with one more user
    m_hi, m_lo = np.minimum(hi, kk), np.minimum(np.maximum(lo, 1.0), kk)
    pre, cyc = cycle(m_hi)
    _, cyc_lo = cycle(m_lo)
    rate_hi = m_hi * o / cyc  # an instance's output tokens per second
    rate_lo = np.where(lo > 0, m_lo * o / cyc_lo, 0.0)
    tokens = np.where(n_hi > 0, n_hi * rate_hi + (cc - n_hi) * rate_lo, cc * rate_hi)
    ttft = (hi / m_hi - 1.0) * cyc + pre
    tpot = (cyc - pre) / max(o - 1, 1) if o > 1 else np.zeros_like(cyc)
    return DecoderUsers(users=nn, running=m_hi, ttft_s=ttft, tpot_s=tpot, tokens_per_s=tokens)


def bare_latencies_p99(prefill_time: PrefillTime, decode_step: DecodeStep, prompt_lengths: RequestLengths,
                       output_len: int, n_scenarios: int) -> tuple[np.ndarray, np.ndarray]:
    """(TTFT, TPOT) p99 at vanishing load, per scenario, over the prompt-length distribution:
    ``prefill(P)`` and the mean batch-1 step over the contexts ``P + 1 .. P + O - 1``,
    ``base[1] + per_token[1] (P + O / 2)`` (0 when ``O = 1``)."""
    o = int(output_len)
    ss, pp = np.meshgrid(np.arange(n_scenarios), prompt_lengths.support, indexing="ij")
    ttft = _seconds("prefill_time", prefill_time(ss, pp.astype(float)))
    tpot = decode_step(ss, np.ones_like(pp), pp + o / 2.0) if o > 1 else np.zeros(pp.shape)

    def p99(v):
        order = np.argsort(v, axis=1)
        cdf = np.cumsum(prompt_lengths.prob[order], axis=1)
        pos = (cdf < 0.99 - 1e-12).sum(axis=1).clip(0, v.shape[1] - 1)
        return np.take_along_axis(v, order, axis=1)[np.arange(n_scenarios), pos]

    return p99(ttft), p99(tpot)


def _simulate(rates, scen_ids, c, o, k, prefill_time, step, lengths, cap, cycle_s, size: Sampling):
    n_s, n_g = rates.shape
    reps = size.replications
    s_i, g_i, r_i = row_layout(n_s, n_g, reps)
    lam = rates[s_i, g_i] / c[s_i]  # per instance: random dispatch splits the Poisson stream
    meas, warm, tail = size.rows(lam * cycle_s[s_i], int(k.max()))  # the tail keeps the load on the last ones
    total = warm + meas + tail
    u, p = streams(lengths, reps, int(total.max()), size.seed)
    runs = _run(u, p, r_i, total, scen_ids[s_i], lam, k[s_i], o, prefill_time, step, cap, warm, warm + meas - 1)
    n_rows = r_i.size
    uo = u + runs.frame * np.arange(reps)[:, None]
    off = runs.offsets
    fb = np.searchsorted(runs.first_heads, off)
    db = np.searchsorted(runs.done_heads, off)
    shape3 = (n_s, n_g, reps)
    ttft_rows, tpot_rows = [], []
    p99s = np.empty((2, n_rows))
    rate_done = np.empty(n_rows)
    for i in range(n_rows):
        w0, w1 = warm[i], warm[i] + meas[i]
        fh, ft = runs.first_heads[fb[i]:fb[i + 1]], runs.first_t[fb[i]:fb[i + 1]]
        dh, dt = runs.done_heads[db[i]:db[i + 1]], runs.done_t[db[i]:db[i + 1]]
        first = np.repeat(ft, np.diff(np.append(fh, off[i + 1])))[w0:w1]
        done = np.repeat(dt, np.diff(np.append(dh, off[i + 1])))[w0:w1]
        arr = uo[r_i[i], w0:w1]
        ttft = (first - arr) / lam[i]
        tpot = (done - first) / ((o - 1) * lam[i]) if o > 1 else np.zeros(w1 - w0)
        ttft_rows.append(ttft)
        tpot_rows.append(tpot)
        p99s[0, i] = quantiles(ttft, (0.99,))[0]
        p99s[1, i] = quantiles(tpot, (0.99,))[0]
        span = (done[-1] - done[0]) / lam[i]
        rate_done[i] = (meas[i] - 1) / span if span > 0 else lam[i]
    out = {}
    for i, (name, rows_) in enumerate((("ttft", ttft_rows), ("tpot", tpot_rows))):
        p50, p99, mean, _ = pooled(rows_, n_s * n_g, reps)
        p99 = p99.reshape(n_s, n_g)
        out[name] = (p50.reshape(n_s, n_g), p99, p99_interval(p99, p99s[i].reshape(shape3)), mean.reshape(n_s, n_g))
    per_inst = np.minimum(lam, rate_done).reshape(shape3).mean(axis=-1)
    with np.errstate(invalid="ignore"):
        mean_batch = (runs.batch_steps.reshape(shape3).sum(-1) / runs.steps.reshape(shape3).sum(-1))
    return DecoderStats(
        rate_rps=rates.copy(),
        ttft_p50_s=out["ttft"][0], ttft_p99_s=out["ttft"][1], ttft_p99_ci_s=out["ttft"][2],
        tpot_p50_s=out["tpot"][0], tpot_p99_s=out["tpot"][1], tpot_p99_ci_s=out["tpot"][2],
        tokens_per_s=o * c[:, None] * per_inst,
        mean_batch=mean_batch,
        mean_ttft_s=out["ttft"][3], mean_tpot_s=out["tpot"][3],
    )


def _rates(rate_rps, n):
    rates = positive("rate_rps", rate_rps)
    if rates.ndim > 2 or (rates.ndim == 2 and rates.shape[0] not in (1, n)):
        raise UserError(f"rate_rps: shape {rates.shape}; give a scalar, (G,) rates for every scenario, or (S, G)")
    if rates.ndim < 2:
        rates = rates.reshape(1, -1)
    return np.broadcast_to(rates, (n, rates.shape[1])).astype(float)


def simulate_decoder(rate_rps: ArrayLike, instances: ArrayLike, prefill_time: PrefillTime, decode_step: DecodeStep,
                     prompt_lengths: RequestLengths, output_len: int, max_concurrent_sequences: ArrayLike, *,
                     max_prefill_tokens: int | None = None, sampling: Sampling = Sampling()) -> DecoderStats:
    """Simulate continuous batching for every scenario and offered rate (per server) at once.

    ``instances``, ``max_concurrent_sequences`` (per instance): (S,) or scalars; ``rate_rps`` a
    scalar, (G,) or (S, G); ``prefill_time(scenario, prompt_tokens)`` and ``decode_step`` give the
    step times (see the module docstring). :class:`~roofline.serving.dynamic_batching.Sampling` sizes the
    runs; its "full-batch time" is here the offline cycle (a prefill and ``O - 1`` decode steps).
    Returns :class:`DecoderStats` with arrays (S, G).
    """
    c, o, k, cap = _check(instances, prompt_lengths, output_len, max_concurrent_sequences, decode_step,
                          prefill_time, max_prefill_tokens)
    rates = _rates(rate_rps, c.size)
    if not isinstance(sampling, Sampling):
        raise UserError("sampling: must be a Sampling")
    off = decoder_offline(c, prefill_time, decode_step, prompt_lengths, o, k)
    return _simulate(rates, np.arange(c.size), c, o, k, prefill_time, decode_step, prompt_lengths, cap, off.cycle_s,
                     sampling)


def decoder_max_rate(ttft_slo_s: ArrayLike | None, tpot_slo_s: ArrayLike | None, instances: ArrayLike,
                     prefill_time: PrefillTime, decode_step: DecodeStep, prompt_lengths: RequestLengths,
                     output_len: int, max_concurrent_sequences: ArrayLike, *, max_prefill_tokens: int | None = None,
                     rounds: int = 3, grid: tuple[float, ...] = SEARCH_GRID, conservative: bool = False,
                     sampling: Sampling = Sampling()) -> DecoderMaxRate:
    """The highest Poisson rate per server whose simulated TTFT p99 and TPOT p99 meet their SLOs
    (``None``: no bound on that one), by :func:`roofline.serving.rate_search.scan` over fractions of
    the offline rate; like :func:`roofline.serving.dynamic_batching.max_rate`, the SLOs must hold at every
    load up to the answer, so a scenario whose lone request already misses one
    (:func:`bare_latencies_p99`) gets rate 0 and ``meets`` False. ``conservative`` compares the
    upper ends of the 95% intervals instead of the point estimates.
    """
    c, o, k, cap = _check(instances, prompt_lengths, output_len, max_concurrent_sequences, decode_step,
                          prefill_time, max_prefill_tokens)
    if ttft_slo_s is None and tpot_slo_s is None:
        raise UserError("decoder_max_rate: give ttft_slo_s, tpot_slo_s or both")
    ttft_slo = np.broadcast_to(np.inf if ttft_slo_s is None else positive("ttft_slo_s", ttft_slo_s), c.shape)
    tpot_slo = np.broadcast_to(np.inf if tpot_slo_s is None else positive("tpot_slo_s", tpot_slo_s), c.shape)
    rounds = int(whole("rounds", rounds))
    check_grid(grid)
    if not isinstance(sampling, Sampling):
        raise UserError("sampling: must be a Sampling")
    off = decoder_offline(c, prefill_time, decode_step, prompt_lengths, o, k)
    bare_ttft, bare_tpot = bare_latencies_p99(prefill_time, decode_step, prompt_lengths, o, c.size)
    meets = (bare_ttft <= ttft_slo) & (bare_tpot <= tpot_slo)

    def simulate(live, x):
        st = _simulate(x * off.rps[live, None], live, c[live], o, k[live], prefill_time, decode_step, prompt_lengths,
                       cap, off.cycle_s[live], sampling)
        a = st.ttft_p99_ci_s[..., 1] if conservative else st.ttft_p99_s
        b = st.tpot_p99_ci_s[..., 1] if conservative else st.tpot_p99_s
        return (a <= ttft_slo[live, None]) & (b <= tpot_slo[live, None]), st

    lo, hi, best = scan(simulate, c.size, meets, grid=grid, rounds=rounds)
    if best is None:
        nan, nan2 = np.full((c.size, 1), np.nan), np.full((c.size, 1, 2), np.nan)
        best = DecoderStats(nan, nan, nan, nan2, nan, nan, nan2, nan, nan, nan, nan)
    return DecoderMaxRate(rate_rps=lo * off.rps, rate_fail_rps=hi * off.rps, meets=meets, bare_ttft_p99_s=bare_ttft,
                          bare_tpot_p99_s=bare_tpot, offline_rps=off.rps, offline_tokens_per_s=off.tokens_per_s,
                          stats=best)


def decode_path(arrival_s: ArrayLike, prompt_lengths: ArrayLike, output_len: int, max_concurrent_sequences: int,
                prefill_time: PrefillTime, decode_step: DecodeStep, *, max_prefill_tokens: int | None = None,
                scenario: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """One instance's sample path for given arrival times (seconds, non-decreasing) and prompt
    lengths: ``(first_token_s, last_token_s)`` per request. For tests and for replaying a trace;
    the simulation runs the same code."""
    a = np.asarray(arrival_s, dtype=float).ravel()
    pl = whole("prompt_lengths", prompt_lengths).ravel()
    if a.size != pl.size or a.size == 0:
        raise UserError("arrival_s and prompt_lengths: one prompt length per arrival")
    if not (np.all(np.isfinite(a)) and np.all(np.diff(a) >= 0)):
        raise UserError("arrival_s: must be finite and non-decreasing")
    k = int(whole("max_concurrent_sequences", max_concurrent_sequences))
    o = int(whole("output_len", output_len))
    cap = None if max_prefill_tokens is None else int(whole("max_prefill_tokens", max_prefill_tokens))
    if decode_step.max_batch < k:
        raise UserError(f"decode step table: has batches up to {decode_step.max_batch}, but "
                        f"max_concurrent_sequences={k}")
    one = np.zeros(1, dtype=np.int64)
    runs = _run(a[None, :], pl[None, :], one, one + a.size, one + scenario, np.ones(1), one + k, o, prefill_time,
                decode_step, cap, one, one + a.size - 1)
    first = np.repeat(runs.first_t, np.diff(np.append(runs.first_heads, a.size)))
    done = np.repeat(runs.done_t, np.diff(np.append(runs.done_heads, a.size)))
    return first, done
