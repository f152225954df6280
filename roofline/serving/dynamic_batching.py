"""Queueing with dynamic batching on one server: a vectorised discrete-event simulation.

**The system.** One server runs ``c`` identical instances fed from one FCFS queue. Requests arrive
as a Poisson process at ``lam`` per second; request lengths (tokens) are i.i.d. from a
:class:`~roofline.serving.request_lengths.RequestLengths`. The service time of a batch is the
caller's function of the batch, ``service_time(scenario, batch_requests, batch_tokens) -> s``
(vectorised; :class:`BatchTable` and :class:`TokenTable` build it from tabulated step times).

**The batching policy** (dynamic batching with a maximum wait, as in Triton's dynamic batcher).
Batches are formed in arrival order from the head of the queue. A batch holds the requests that
have arrived by its dispatch time, in order, while their tokens sum to at most
``max_batch_tokens`` (it stops at the first request that does not fit, never skips one; a single
request longer than the cap goes alone). With a watermark ``W`` (``watermark_tokens``, at most the
cap; default: the cap, which changes nothing) the batch also closes at the first request that
brings its tokens to ``W`` or more, as Intel's MLPerf BERT harness does (``-w 1300 -u 1560``: a
batch takes waiting samples until it holds 1,300 tokens, never more than 1,560; that harness skips
a sample that would pass the upper mark and looks further down the queue, which this never does).
With ``h`` the oldest waiting request and ``f`` the time the earliest-free instance is free, the
batch is dispatched at

    ``t = max(f, min(a_h + max_wait_s, t_full))``

where ``t_full`` is the arrival of the request that makes the batch full, judged without
knowing future lengths: the first request after which no request of the shortest possible length
would still fit, or the first that does not fit, or the first that reaches the watermark. So a
free instance dispatches as soon as the batch is full or its oldest request has waited
``max_wait_s``; an instance that frees up after that deadline takes at once whatever is waiting
(up to the cap). ``max_wait_s = 0`` dispatches
whatever is waiting as soon as an instance is free. The dispatch times are non-decreasing, so
the service is FCFS across batches.

**Why a loop over batches, vectorised over rows.** The recursion is sequential in the batch
index, so it cannot be vectorised along time; it is vectorised across independent *rows*
instead: every (scenario, offered rate, replication) is a row, and one pass of the loop forms the
next batch of every row with a fixed number of numpy operations on arrays of rows (an ``argmin``
over the rows x ``c`` free-time matrix, one ``searchsorted`` on the flattened arrival streams,
gathers from tables of "last request that fits" and "time the batch is full" computed before
the loop, one call of the service function). The loop runs once per batch of the row with the
most batches, whatever the number of rows; finished rows are dropped as they go. A plan's
search (3 CPUs x 12 layouts x 4 loads x 8 replications = 1,152 rows per round, three rounds,
13 million simulated requests) takes about 1.3 s on one core of a shared 2-core machine, about
0.1 us per request; a tight per-request ``heapq`` loop of the same policy in CPython takes
0.4-1.1 us per request (5-14 s for the same plan) before computing any statistic. A compiled
kernel (numba, a C extension) would be faster still but adds a dependency or a build step to a
tool whose core is numpy only. ``tests/benchmarks/bench_queueing.py`` prints the figures.

**Common random numbers.** Replication ``r`` draws one unit-rate arrival stream ``U`` and one
length stream, shared by every scenario and rate: the arrival times at rate ``lam`` are
``U / lam``. Rows are simulated in their own time unit ``1 / lam`` (service times are scaled by
``lam``), which makes comparisons across rates and layouts far less noisy, makes the FCFS
multi-server queue's latencies pathwise monotone in the rate and in ``c`` when batches are single
requests, and makes a scenario's result independent of the others simulated beside it.

**Outputs** (:class:`ServerStats`): latency = waiting (queueing and the batching wait) plus the
batch's service time; p50 and p99 pooled over all replications' measured requests; a 95%
interval on p99 and on the mean wait from the spread across independent replications
(:mod:`roofline.serving.sampling`); the instance-seconds per request ``w`` (the measured batches'
service times over their requests), hence utilization ``min(1, lam w / c)`` and throughput
``min(lam, c / w)`` (the offered rate when stable; when overloaded, the rate at which full
instances complete requests); mean requests, tokens and service time per batch. Each
replication discards a warm-up (the system starts empty) and simulates a tail past the measured
requests so that the batches of the last of them can fill (:class:`~roofline.serving.sampling.Sampling`).
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
from roofline.serving.sampling import Sampling, quantiles, replication_half_width, streams

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: ``service_time(scenario, batch_requests, batch_tokens) -> seconds``, all arrays of one shape
ServiceTime = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]



# --------------------------------------------------------------------------- service-time tables


class BatchTable:
    """Service time by batch size, for fixed-length requests: ``times_s[scenario, b - 1]`` seconds
    for a batch of ``b`` requests (``b = 1..B``). A 1-D table serves every scenario."""

    def __init__(self, times_s: ArrayLike) -> None:
        t = np.asarray(times_s, dtype=float)
        t = t[None, :] if t.ndim == 1 else t
        if t.ndim != 2 or t.shape[1] == 0 or not np.all(np.isfinite(t)) or not np.all(t > 0):
            raise UserError("service time table: must be positive finite seconds, one row per scenario")
        self.times_s = t
        self.max_requests = t.shape[1]
        self.n_scenarios = t.shape[0]

    def __call__(self, scenario: np.ndarray, requests: np.ndarray, tokens: np.ndarray) -> np.ndarray:
        s = scenario if self.n_scenarios > 1 else 0
        return self.times_s[s, requests - 1]


class TokenTable:
    """Service time by batch tokens, linearly interpolated: ``times_s[scenario, i]`` seconds for a
    batch of ``tokens[i]`` tokens (packed: the GEMMs see ``M = `` the batch's tokens). The grid must
    span every batch the simulation can form (checked). A 1-D table serves every scenario.

    Attention's cost grows with the sum of squared lengths, not with the tokens; a table over
    tokens prices a packed batch as if its attention were that of the table's batch: state the
    lengths the table was computed at."""

    def __init__(self, tokens: ArrayLike, times_s: ArrayLike) -> None:
        g = np.asarray(tokens, dtype=float).ravel()
        t = np.asarray(times_s, dtype=float)
        t = t[None, :] if t.ndim == 1 else t
        if g.size == 0 or t.ndim != 2 or t.shape[1] != g.size:
            raise UserError("service time table: one time per token count, one row per scenario")
        if not (np.all(np.isfinite(g)) and g[0] >= 1 and np.all(np.diff(g) > 0)):
            raise UserError("service time table: token counts must be increasing and >= 1")
        if not np.all(np.isfinite(t)) or not np.all(t > 0):
            raise UserError("service time table: times must be positive finite seconds")
        self.tokens, self.times_s = g, t
        self.min_tokens, self.max_tokens = int(math.ceil(g[0])), int(g[-1])
        self.n_scenarios = t.shape[0]

    def __call__(self, scenario: np.ndarray, requests: np.ndarray, tokens: np.ndarray) -> np.ndarray:
        s = scenario if self.n_scenarios > 1 else 0
        g = self.tokens
        if g.size == 1:
            return self.times_s[s, np.zeros(np.shape(tokens), dtype=np.intp)]
        i = np.searchsorted(g, tokens, side="left").clip(1, g.size - 1)
        w = (tokens - g[i - 1]) / (g[i] - g[i - 1])
        return self.times_s[s, i - 1] * (1.0 - w) + self.times_s[s, i] * w


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, eq=False)
class ServerStats:
    """Per (scenario, offered rate): arrays of shape ``(S, G)``; seconds and requests per second."""

    rate_rps: np.ndarray
    """offered Poisson rate per server"""
    p50_s: np.ndarray
    p99_s: np.ndarray
    p99_ci_s: np.ndarray
    """(S, G, 2): the 95% interval on p99 (pooled p99 +- the replications' half-width)"""
    mean_latency_s: np.ndarray
    mean_wait_s: np.ndarray
    """mean time from arrival to dispatch (queueing plus the batching wait)"""
    mean_wait_ci_s: np.ndarray
    """(S, G, 2): the 95% interval on the mean wait"""
    utilization: np.ndarray
    """``min(1, lam w / c)``, ``w`` the instance-seconds per request of the measured batches"""
    throughput_rps: np.ndarray
    """``min(lam, c / w)``: completed requests per second per server"""
    batch_requests: np.ndarray
    """mean requests per batch"""
    batch_tokens: np.ndarray
    """mean tokens per batch (per instance call)"""
    service_s: np.ndarray
    """mean service time of a batch"""
    latency_samples_s: np.ndarray | None = None
    """when asked for: an (S, G) object array of 1-D arrays, the measured latencies of all replications"""

    def points(self, scenario: int = 0) -> list[dict]:
        """The latency-vs-load curve of one scenario: ``{offered_rps, p50_s, p99_s, utilization}``
        plus the p99 interval and the throughput, one dict per offered rate."""
        return [
            {"offered_rps": float(self.rate_rps[scenario, g]), "p50_s": float(self.p50_s[scenario, g]),
             "p99_s": float(self.p99_s[scenario, g]), "utilization": float(self.utilization[scenario, g]),
             "p99_ci_s": [float(x) for x in self.p99_ci_s[scenario, g]],
             "throughput_rps": float(self.throughput_rps[scenario, g])}
            for g in range(self.rate_rps.shape[1])
        ]


@dataclass(frozen=True, eq=False)
class OfflineStats:
    """The offline scenario per scenario: arrays of shape ``(S,)``."""

    rps: np.ndarray
    """requests per second per server with every instance always busy on the chosen batches"""
    batch_requests: np.ndarray
    batch_tokens: np.ndarray
    batch_time_s: np.ndarray
    """mean service time of one of those batches"""


@dataclass(frozen=True, eq=False)
class MaxRate:
    """The server scenario's answer per scenario: arrays of shape ``(S,)``."""

    rate_rps: np.ndarray
    """the highest simulated Poisson rate per server whose p99 meets the SLO (0 when none does)"""
    rate_fail_rps: np.ndarray
    """the lowest simulated rate above it that failed (the offline capacity if none failed): the
    true answer lies in ``[rate_rps, rate_fail_rps)`` up to the simulation's noise"""
    meets: np.ndarray
    """False where even a lone request on an idle server misses the SLO"""
    bare_p99_s: np.ndarray
    """p99 of the latency at vanishing load: the service time of a lone request (plus the batching
    wait when one request cannot fill a batch), over the length distribution"""
    offline_rps: np.ndarray
    stats: ServerStats
    """the simulation at ``rate_rps`` (arrays ``(S, 1)``; NaN where ``rate_rps`` is 0)"""


# --------------------------------------------------------------------------- input checks


def _check_service(service: ServiceTime, lengths: RequestLengths, cap: np.ndarray) -> None:
    if not callable(service):
        raise UserError("service_time: must be a function (scenario, batch_requests, batch_tokens) -> seconds")
    most_requests = int(np.max(np.maximum(cap // lengths.min, 1)))
    mr = getattr(service, "max_requests", None)
    if mr is not None and mr < most_requests:
        raise UserError(f"service time table: has batches up to {mr} requests, but max_batch_tokens="
                        f"{int(cap.max())} lets {most_requests} requests of {lengths.min} tokens into one")
    lo, hi = getattr(service, "min_tokens", None), getattr(service, "max_tokens", None)
    most_tokens = int(max(int(cap.max()), lengths.max))
    if lo is not None and (lo > lengths.min or hi < most_tokens):
        raise UserError(f"service time table: spans {lo}-{hi} tokens, but batches can hold "
                        f"{lengths.min}-{most_tokens}")


def _check_common(instances, lengths, max_batch_tokens, max_wait_s, watermark_tokens=None):
    c = whole("instances", instances).ravel()
    if not isinstance(lengths, RequestLengths):
        raise UserError("lengths: must be a RequestLengths (fixed_lengths, lognormal_lengths or histogram_lengths)")
    cap = np.broadcast_to(whole("max_batch_tokens", max_batch_tokens), c.shape).astype(np.int64)
    mw = np.broadcast_to(positive("max_wait_s", max_wait_s, allow_zero=True), c.shape).astype(float)
    return c, cap, mw, _watermark(watermark_tokens, cap)


def _watermark(watermark_tokens, cap: np.ndarray) -> np.ndarray:
    """The tokens at which a batch closes, per scenario (None: the cap, where it closes anyway)."""
    if watermark_tokens is None:
        return cap
    wm = np.broadcast_to(whole("watermark_tokens", watermark_tokens), cap.shape).astype(np.int64)
    if np.any(wm > cap):
        raise UserError(f"watermark_tokens {int(wm.max())}: at most max_batch_tokens ({int(cap.min())}); a batch "
                        "closes at the watermark or at the cap, whichever it reaches first")
    return wm


# --------------------------------------------------------------------------- the engine




def _run(u: np.ndarray, ln: np.ndarray, row_rep: np.ndarray, row_total: np.ndarray, row_scen: np.ndarray,
         row_scale: np.ndarray, row_c: np.ndarray, row_cap: np.ndarray, row_wait: np.ndarray, lmin: int,
         service: ServiceTime, row_wm: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """The batching recursion for every row at once.

    ``u`` (R, N): arrival times per replication; row ``i`` simulates the first ``row_total[i]``
    requests of replication ``row_rep[i]`` with the times as given (its unit); ``row_scale[i]``
    converts seconds of service into that unit. Returns ``(offsets, heads, dispatch, end, frame)``:
    row ``i``'s requests are numbered ``offsets[i]:offsets[i + 1]``; ``heads`` (increasing) are the
    numbers of the requests that head a batch, ``dispatch`` and ``end`` that batch's times, as
    times plus ``frame x`` the row's replication.

    What a batch can hold depends only on its first request, the cap and the watermark (``row_wm``;
    the cap where there is none), so the last request that fits and the time the batch becomes full are computed
    once per (cap, watermark, request) before the loop
    (requests past a row's last may make its last batches full: they are the tail of the stream).
    The loop drops the finished rows once they are 30% of its arrays.
    """
    reps, total = u.shape
    rows = row_rep.size
    off_u, uf, rep_last = flat_streams(u)
    cum = np.cumsum(ln, axis=1)
    off_t = int(cum[:, -1].max()) + 1
    tf = (cum + off_t * np.arange(reps, dtype=np.int64)[:, None]).ravel()
    tb = tf - ln.ravel()  # tokens before each request
    pairs, cap_id = np.unique(np.stack([row_cap, row_wm], axis=1), axis=0, return_inverse=True)
    cap_id = cap_id.ravel()
    n_flat = reps * total
    fit_tab = np.empty(pairs.shape[0] * n_flat, dtype=np.int64)
    full_tab = np.empty(pairs.shape[0] * n_flat)
    own = np.arange(n_flat)
    for k, (cap, wm) in enumerate(pairs):
        fit = np.searchsorted(tf, tb + cap, side="right") - 1  # the last request that fits
        full = np.searchsorted(tf, tb + (cap - lmin), side="right")  # the arrival after which none fits
        if wm < cap:
            reach = np.searchsorted(tf, tb + wm, side="left")  # the request that brings it to the watermark
            fit, full = np.minimum(fit, reach), np.minimum(full, reach)
        fit_tab[k * n_flat:(k + 1) * n_flat] = np.minimum(np.maximum(fit, own), rep_last)
        full = np.maximum(full, own)  # the arrival making it full
        full_tab[k * n_flat:(k + 1) * n_flat] = np.where(full <= rep_last, uf[np.minimum(full, rep_last)], np.inf)

    offsets = np.concatenate([[0], np.cumsum(row_total)])
    dummy = int(offsets[-1])
    head_dispatch = np.empty(dummy + 1)  # the last element takes finished rows' writes
    head_end = np.empty(dummy + 1)
    is_head = np.zeros(dummy + 1, dtype=bool)

    base = row_rep * total
    h = base.copy()  # flat stream index of each row's oldest waiting request
    last = base + row_total - 1
    slot_off = offsets[:-1] - base
    coff = cap_id.astype(np.int64) * n_flat
    scen, scale, wait_u, cs = row_scen, row_scale, row_wait * row_scale, row_c
    cm = int(cs.max())
    free = np.where(np.arange(cm)[None, :] < cs[:, None], (off_u * row_rep)[:, None], np.inf)
    k = rows
    ar = np.arange(k) * cm
    while True:
        ia = free.argmin(axis=1)
        at = ar + ia
        flat = free.reshape(-1)
        ch = coff + h
        t = np.maximum(flat[at], np.minimum(uf[h] + wait_u, full_tab[ch]))
        e = np.searchsorted(uf, t, side="right") - 1
        e = np.minimum(np.minimum(np.maximum(e, h), fit_tab[ch]), last)
        s = np.asarray(service(scen, e - h + 1, tf[e] - tb[h]), dtype=float)
        if not (s.min() > 0 and s.max() < np.inf):
            raise UserError("service_time: returned a time that is not positive and finite")
        end = t + s * scale
        flat[at] = end
        slot = np.where(h <= last, slot_off + h, dummy)
        head_dispatch[slot] = t
        head_end[slot] = end
        is_head[slot] = True
        h = e + 1
        act = h <= last
        n = int(np.count_nonzero(act))
        if n == 0:
            break
        if n < COMPACT * k:
            keep = np.flatnonzero(act)
            h, last, slot_off, coff, scen, scale, wait_u, cs = (
                x[keep] for x in (h, last, slot_off, coff, scen, scale, wait_u, cs))
            cm = int(cs.max())
            free = np.ascontiguousarray(free[keep, :cm])
            k = keep.size
            ar = np.arange(k) * cm
        else:
            h = np.minimum(h, last)  # finished rows re-run their last request; its writes go to `dummy`
    heads = np.flatnonzero(is_head[:-1])
    return offsets, heads, head_dispatch[heads], head_end[heads], off_u


def _simulate(rates: np.ndarray, scen_ids: np.ndarray, c: np.ndarray, cap: np.ndarray, mw: np.ndarray,
              batch_time: np.ndarray, service: ServiceTime, lengths: RequestLengths, size: Sampling,
              keep_samples: bool, wm: np.ndarray) -> ServerStats:
    """``rates`` (S', G) for the scenarios ``scen_ids`` (S',) (indices the service function sees);
    ``c``, ``cap``, ``mw``, ``batch_time`` (a full batch's service time, for the sizing), ``wm``
    indexed by position in ``scen_ids``."""
    n_s, n_g = rates.shape
    reps = size.replications
    s_i, g_i, r_i = row_layout(n_s, n_g, reps)
    lam = rates[s_i, g_i]
    most = int(np.max(np.maximum(cap // lengths.min, 1)))
    meas, warm, tail = size.rows(lam * batch_time[s_i], most)
    total = warm + meas + tail
    u, ln = streams(lengths, reps, int(total.max()), size.seed)
    offsets, heads, disp_b, end_b, frame = _run(u, ln, r_i, total, scen_ids[s_i], lam, c[s_i], cap[s_i], mw[s_i],
                                                lengths.min, service, wm[s_i])
    n_rows = r_i.size
    size_b = np.diff(np.append(heads, offsets[-1]))  # every row's first request heads a batch
    row_b = np.searchsorted(offsets, heads, side="right") - 1
    local_b = heads - offsets[row_b]
    stream_b = r_i[row_b] * (u.shape[1] + 1) + local_b
    cum = np.concatenate([np.zeros((reps, 1), dtype=np.int64), np.cumsum(ln, axis=1)], axis=1).ravel()
    tok_b = cum[stream_b + size_b] - cum[stream_b]
    mb = (local_b >= warm[row_b]) & (local_b < (warm + meas)[row_b])  # batches whose first request is measured
    w0, w1 = warm[row_b], (warm + meas)[row_b]
    overlap = np.maximum(0, np.minimum(local_b + size_b, w1) - np.maximum(local_b, w0))
    # a row whose measured requests all ride in batches headed before the window (a wait far longer than the
    # window's span): its batches are the ones holding measured requests, else its batch figures are 0 / 0
    headless = np.bincount(row_b[mb], minlength=n_rows) == 0
    mb |= headless[row_b] & (overlap > 0)
    rows_h = row_b[mb]
    nb = np.bincount(rows_h, minlength=n_rows).astype(float)
    sreq = np.bincount(rows_h, weights=size_b[mb], minlength=n_rows)
    stok = np.bincount(rows_h, weights=tok_b[mb], minlength=n_rows)
    busy = np.bincount(rows_h, weights=(end_b - disp_b)[mb], minlength=n_rows)  # the row's unit

    # per measured request: its batch's end (and dispatch) less its arrival
    first_b = np.searchsorted(row_b, np.arange(n_rows + 1))
    uo = u + frame * np.arange(reps)[:, None]
    shape3 = (n_s, n_g, reps)
    lat_rows, p99_r, wait_r, lat_mean = [], np.empty(n_rows), np.empty(n_rows), np.empty(n_rows)
    for i in range(n_rows):
        sl = slice(first_b[i], first_b[i + 1])
        arr = uo[r_i[i], warm[i]:warm[i] + meas[i]]
        lat = (np.repeat(end_b[sl], overlap[sl]) - arr) / lam[i]
        lat_rows.append(lat)
        p99_r[i] = quantiles(lat, (0.99,))[0]
        lat_mean[i] = lat.mean()
        wait_r[i] = lat_mean[i] - (overlap[sl] @ (end_b[sl] - disp_b[sl])) / (meas[i] * lam[i])
    p99_r = p99_r.reshape(shape3)
    wait_r = wait_r.reshape(shape3)
    n_meas = meas.reshape(shape3)
    lat_mean = (lat_mean.reshape(shape3) * n_meas).sum(axis=-1) / n_meas.sum(axis=-1)
    p50, p99, _, samples = pooled(lat_rows, n_s * n_g, reps, keep_samples)
    p50, p99 = p50.reshape(n_s, n_g), p99.reshape(n_s, n_g)
    samples = samples.reshape(n_s, n_g) if keep_samples else None
    mean_wait = wait_r.mean(axis=-1)
    hw_w = replication_half_width(wait_r)
    busy_g = busy.reshape(shape3).sum(axis=-1) / rates  # seconds
    nb_g = nb.reshape(shape3).sum(axis=-1)
    req_g = sreq.reshape(shape3).sum(axis=-1)
    per_request = busy_g / req_g  # instance-seconds per request
    c2 = c[:, None].astype(float)
    return ServerStats(
        rate_rps=rates.copy(),
        p50_s=p50, p99_s=p99, p99_ci_s=p99_interval(p99, p99_r),
        mean_latency_s=lat_mean,
        mean_wait_s=mean_wait, mean_wait_ci_s=np.stack([mean_wait - hw_w, mean_wait + hw_w], axis=-1),
        utilization=np.minimum(1.0, rates * per_request / c2),
        throughput_rps=np.minimum(rates, c2 / per_request),
        batch_requests=req_g / nb_g,
        batch_tokens=stok.reshape(shape3).sum(axis=-1) / nb_g,
        service_s=busy_g / nb_g,
        latency_samples_s=samples,
    )


# --------------------------------------------------------------------------- public functions


def simulate_server(rate_rps: ArrayLike, instances: ArrayLike, service_time: ServiceTime, lengths: RequestLengths,
                    *, max_batch_tokens: ArrayLike, max_wait_s: ArrayLike = 0.0, sampling: Sampling = Sampling(),
                    keep_samples: bool = False, watermark_tokens: ArrayLike | None = None) -> ServerStats:
    """Simulate the server scenario for every scenario and offered rate at once.

    ``instances`` (S,): instances per server, one per scenario (the service function is called
    with the scenario index ``0..S-1``); ``rate_rps``: offered Poisson rates per server, a scalar,
    (G,) (the same rates for every scenario) or (S, G); ``max_batch_tokens``, ``max_wait_s``,
    ``watermark_tokens``: scalars or (S,). Returns :class:`ServerStats` with arrays (S, G); with ``keep_samples`` the
    measured latencies and waits of each (scenario, rate), all replications pooled.
    """
    c, cap, mw, wm = _check_common(instances, lengths, max_batch_tokens, max_wait_s, watermark_tokens)
    rates = positive("rate_rps", rate_rps)
    if rates.ndim > 2 or (rates.ndim == 2 and rates.shape[0] not in (1, c.size)):
        raise UserError(f"rate_rps: shape {rates.shape}; give a scalar, (G,) rates for every scenario, or (S, G)")
    rates = np.broadcast_to(rates.reshape((1, -1) if rates.ndim < 2 else rates.shape), (c.size, max(rates.size, 1)
                            if rates.ndim < 2 else rates.shape[1])).astype(float)
    if not isinstance(sampling, Sampling):
        raise UserError("sampling: must be a Sampling")
    _check_service(service_time, lengths, cap)
    off = offline_throughput(c, service_time, lengths, max_batch_tokens=cap, seed=sampling.seed, watermark_tokens=wm)
    return _simulate(rates, np.arange(c.size), c, cap, mw, off.batch_time_s, service_time, lengths, sampling,
                     keep_samples, wm)


def batch_queue_path(arrival_s: ArrayLike, lengths: ArrayLike, instances: int, service_time: ServiceTime, *,
                     max_batch_tokens: int, max_wait_s: float = 0.0, shortest: int | None = None,
                     scenario: int = 0, watermark_tokens: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One sample path of the batching queue for given arrival times (seconds, non-decreasing) and
    lengths: ``(dispatch_s, end_s)`` per request. ``shortest`` is the shortest length the batcher
    assumes possible when judging a batch full (default: the shortest in ``lengths``).
    For tests and for replaying a trace; the simulation runs the same code.
    """
    a = np.asarray(arrival_s, dtype=float).ravel()
    ln = whole("lengths", lengths).ravel()
    if a.size != ln.size or a.size == 0:
        raise UserError("arrival_s and lengths: one length per arrival")
    if not (np.all(np.isfinite(a)) and np.all(np.diff(a) >= 0)):
        raise UserError("arrival_s: must be finite and non-decreasing")
    c = int(whole("instances", instances))
    cap = int(whole("max_batch_tokens", max_batch_tokens))
    mw = float(positive("max_wait_s", max_wait_s, allow_zero=True))
    wm = _watermark(watermark_tokens, np.full(1, cap, dtype=np.int64))
    lmin = int(ln.min()) if shortest is None else int(whole("shortest", shortest))
    one = np.zeros(1, dtype=np.int64)
    _, heads, disp, end, _ = _run(a[None, :], ln[None, :], one, one + a.size, one + scenario, np.ones(1), one + c,
                                  one + cap, np.full(1, mw), lmin, service_time, wm)
    size = np.diff(np.append(heads, a.size))
    return np.repeat(disp, size), np.repeat(end, size)


def offline_throughput(instances: ArrayLike, service_time: ServiceTime, lengths: RequestLengths, *,
                       max_batch_tokens: ArrayLike, requests: int = 20000, seed: int = 0,
                       watermark_tokens: ArrayLike | None = None) -> OfflineStats:
    """The offline scenario: every instance always busy, batching and packing free up to the cap.

    Fixed lengths ``L``: ``rps = c max_{b <= B} b / s(b)``, ``B = max(1, min(floor(cap / L),
    ceil(W / L)))`` with ``W`` the watermark (default the cap) (the best batch size, usually ``B``
    because the service time grows sub-linearly). Other lengths: a sample of ``requests`` lengths
    packed greedily in order into batches of at most ``cap`` tokens, each closed at the first request
    that brings it to ``W`` (a longer request alone), ``rps = c n / sum s(batch)``; smaller caps are
    not searched.
    """
    c, cap, _, wm = _check_common(instances, lengths, max_batch_tokens, 0.0, watermark_tokens)
    n = int(whole("requests", requests, 1))
    _check_service(service_time, lengths, cap)
    scen = np.arange(c.size)
    if lengths.is_fixed:
        ln = lengths.min
        top = np.maximum(np.minimum(cap // ln, -(-wm // ln)), 1)
        b = np.arange(1, int(top.max()) + 1)
        ss, bb = np.meshgrid(scen, b, indexing="ij")
        st = np.asarray(service_time(ss, bb, bb * ln), dtype=float)
        if not np.all((st > 0) & (st < np.inf)):
            raise UserError("service_time: returned a time that is not positive and finite")
        per_s = np.where(bb <= top[:, None], bb / st, -np.inf)
        k = per_s.argmax(axis=1)
        best_b = b[k].astype(float)
        t = st[scen, k]
        return OfflineStats(rps=c * best_b / t, batch_requests=best_b, batch_tokens=best_b * ln, batch_time_s=t)
    ln = lengths.sample(np.random.default_rng(np.random.SeedSequence(seed)), n)
    cum = np.concatenate([[0], np.cumsum(ln)])
    start = np.zeros(c.size, dtype=np.int64)
    busy = np.zeros(c.size)
    nb = np.zeros(c.size)
    while True:
        live = start < n
        if not live.any():
            break
        first = cum[np.minimum(start, n - 1)]
        e = np.searchsorted(cum, first + cap, side="right") - 1  # batch = start..e-1
        e = np.minimum(e, np.searchsorted(cum, first + wm, side="left"))  # closed once it reaches the watermark
        e = np.minimum(np.maximum(e, start + 1), n)
        st = np.asarray(service_time(scen, e - start, cum[e] - first), dtype=float)
        if not np.all((st[live] > 0) & (st[live] < np.inf)):
            raise UserError("service_time: returned a time that is not positive and finite")
        busy += np.where(live, st, 0.0)
        nb += live
        start = np.where(live, e, start)
    return OfflineStats(rps=c * n / busy, batch_requests=n / nb, batch_tokens=float(cum[-1]) / nb,
                        batch_time_s=busy / nb)


def bare_latency_p99(service_time: ServiceTime, lengths: RequestLengths, n_scenarios: int, *,
                     max_batch_tokens: ArrayLike, max_wait_s: ArrayLike = 0.0,
                     watermark_tokens: ArrayLike | None = None) -> np.ndarray:
    """p99 of the latency at vanishing load, per scenario: a lone request of length ``L`` waits
    ``max_wait_s`` when another request of the shortest length could still join it
    (``L + L_min <= cap`` and ``L < W``, the watermark), then is served alone:
    ``s(1, L) + max_wait_s [L + L_min <= cap and L < W]``.
    The p99 is taken over the length distribution (the smallest value with ``P(latency <= v) >= 0.99``)."""
    cap = np.broadcast_to(whole("max_batch_tokens", max_batch_tokens), (n_scenarios,))
    mw = np.broadcast_to(positive("max_wait_s", max_wait_s, allow_zero=True), (n_scenarios,))
    wm = _watermark(watermark_tokens, cap)
    k = lengths.support
    ss, kk = np.meshgrid(np.arange(n_scenarios), k, indexing="ij")
    v = np.asarray(service_time(ss, np.ones_like(kk), kk), dtype=float)
    v = v + np.where((kk + lengths.min <= cap[:, None]) & (kk < wm[:, None]), mw[:, None], 0.0)
    order = np.argsort(v, axis=1)
    cdf = np.cumsum(lengths.prob[order], axis=1)
    pos = (cdf < 0.99 - 1e-12).sum(axis=1).clip(0, k.size - 1)
    return np.take_along_axis(v, order, axis=1)[np.arange(n_scenarios), pos]


def max_rate(p99_slo_s: ArrayLike, instances: ArrayLike, service_time: ServiceTime, lengths: RequestLengths, *,
             max_batch_tokens: ArrayLike, max_wait_s: ArrayLike = 0.0, rounds: int = 3,
             grid: tuple[float, ...] = SEARCH_GRID, conservative: bool = False,
             sampling: Sampling = Sampling(), watermark_tokens: ArrayLike | None = None) -> MaxRate:
    """The highest Poisson rate per server whose simulated p99 latency is at or under ``p99_slo_s``.

    The SLO must hold at every load up to the answer (a server must meet it when traffic is light
    too; with a long ``max_wait_s`` the p99 can fall as the load rises and batches fill sooner).
    So scenarios whose p99 at vanishing load already misses it (:func:`bare_latency_p99`) get rate
    0 and ``meets`` False without being simulated; the others are scanned from below by
    :func:`roofline.serving.rate_search.scan` (loads are fractions of the offline capacity; with the
    default three rounds of 4 loads the answer is within 1% of the capacity below the first
    simulated miss), every scenario in one simulation per round. "Meets" is the pooled p99 point
    estimate <= SLO, or with ``conservative`` the upper end of its 95% interval <= SLO. The
    answer stays below the offline capacity, where the queue is stable.
    """
    c, cap, mw, wm = _check_common(instances, lengths, max_batch_tokens, max_wait_s, watermark_tokens)
    if not isinstance(sampling, Sampling):
        raise UserError("sampling: must be a Sampling")
    slo = np.broadcast_to(positive("p99_slo_s", p99_slo_s), c.shape)
    rounds = int(whole("rounds", rounds))
    check_grid(grid)
    _check_service(service_time, lengths, cap)
    off = offline_throughput(c, service_time, lengths, max_batch_tokens=cap, seed=sampling.seed, watermark_tokens=wm)
    bare = bare_latency_p99(service_time, lengths, c.size, max_batch_tokens=cap, max_wait_s=mw, watermark_tokens=wm)
    meets = bare <= slo

    def simulate(live: np.ndarray, x: np.ndarray):
        st = _simulate(x * off.rps[live, None], live, c[live], cap[live], mw[live], off.batch_time_s[live],
                       service_time, lengths, sampling, False, wm[live])
        crit = st.p99_ci_s[..., 1] if conservative else st.p99_s
        return crit <= slo[live, None], st

    lo, hi, best = scan(simulate, c.size, meets, grid=grid, rounds=rounds)
    return MaxRate(rate_rps=lo * off.rps, rate_fail_rps=hi * off.rps, meets=meets, bare_p99_s=bare,
                   offline_rps=off.rps, stats=best if best is not None else _blank_stats(c.size))


def _blank_stats(n: int) -> ServerStats:
    nan, nan2 = np.full((n, 1), np.nan), np.full((n, 1, 2), np.nan)
    return ServerStats(nan, nan, nan, nan2, nan, nan, nan2, nan, nan, nan, nan, nan)


def latency_curve(rates_rps: ArrayLike, instances: ArrayLike, service_time: ServiceTime, lengths: RequestLengths,
                  **kw) -> list[list[dict]]:
    """The latency-vs-load curve per scenario: for each offered rate
    ``{offered_rps, p50_s, p99_s, utilization, p99_ci_s, throughput_rps}`` (see :func:`simulate_server`)."""
    st = simulate_server(rates_rps, instances, service_time, lengths, **kw)
    return [st.points(s) for s in range(st.rate_rps.shape[0])]
