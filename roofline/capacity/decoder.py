"""The plan of a decoder served with continuous batching: tokens per second per server, TTFT and TPOT.

Per CPU and layout (:mod:`roofline.capacity.service_times`, realistic and at the ceiling):

- **prefill**: one instance's time to prefill ``T`` prompt tokens, a table over ``T`` (prompts of the
  mean length packed together), up to ``max(max_batch_tokens, longest prompt)``: a prefill step takes
  the oldest waiting prompts while they fit ``max_batch_tokens`` (one always goes);
- **decode**: one step of ``b`` running sequences, ``step(b, C) = base[b] + per_token[b] C`` with ``C``
  their total context, the secant between the shortest and longest context a sequence reaches
  (:meth:`~roofline.serving.continuous_batching.DecodeStep.from_callable`), on a grid of batches;
- **the KV cap**: each socket's DRAM (``--memory-gb`` per server, else the platform file's
  ``dram.capacity_gb``) less one copy of the weights (:func:`~roofline.model.footprint.footprint`),
  shared by the socket's instances, holds ``K`` sequences of ``P + O`` tokens each
  (:func:`~roofline.calc.kv_capacity.max_concurrent_sequences`; ``P`` the mean prompt, a sequence's KV
  cache when it finishes: on average a running sequence holds less, so the rare long prompt fits the
  slack; nothing is kept back for the runtime); the running batch is ``min(K, --max-sequences)``.

Then :func:`~roofline.serving.continuous_batching.decoder_offline` (offline) or
:func:`~roofline.serving.continuous_batching.decoder_max_rate` (server: the highest Poisson rate
whose simulated TTFT p99 and TPOT p99 meet their SLOs), every (CPU, layout, realistic or ceiling)
in one call, and each CPU's best layout simulated at loads up to 95% of its capacity
(:func:`~roofline.serving.continuous_batching.simulate_decoder`). In the server scenario with a stack
profile's error band ``b`` each CPU's best layout is simulated again with every realistic step ``(1 + b)``
times longer and shorter: the rate at the band's two ends.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from roofline.calc.kv_capacity import max_concurrent_sequences
from roofline.calc.linear_attention import STATE_ELEMENT_BYTES
from roofline.capacity.fleet import (
    band_factors,
    choose,
    cost_per_million,
    curve_loads,
    interval,
    layout_fields,
    num,
    servers_needed,
    with_band,
)
from roofline.capacity.options import PlanOptions
from roofline.capacity.service_times import (
    StepPoint,
    StepTimes,
    batch_sizes,
    by_batch,
    layouts,
    step_times,
    token_grid,
)
from roofline.errors import UserError
from roofline.model.build import kv_dtype as step_kv_dtype
from roofline.model.footprint import footprint
from roofline.model.recipes import precision_recipe
from roofline.results.estimate import ErrorBand
from roofline.results.plan import CeilingPlan, CpuPlan, CurvePoint, Memory, PlanLayout, UsersPoint
from roofline.serving.continuous_batching import (
    DecoderMaxRate,
    DecoderOffline,
    DecoderStats,
    DecoderUsers,
    DecodeStep,
    decoder_max_rate,
    decoder_offline,
    decoder_users,
    simulate_decoder,
)
from roofline.serving.dynamic_batching import TokenTable
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.vocab import Phase, Scenario
from roofline.units import DTYPE_BYTES, GIGA

#: the KV cache's element type when none is given: the activation dtype of the precision's non-GEMM work
KV_DTYPE = {"fp32": "fp32", "amp-bf16": "bf16", "int8": "int8"}


def dram_per_socket(platform: Platform, memory_gb: float | None) -> tuple[float, str]:
    """Bytes of DRAM per socket and where the figure comes from."""
    sockets = int(platform.sockets.value)
    if memory_gb is not None:
        return memory_gb * GIGA / sockets, f"--memory-gb {memory_gb:g} per server, over {sockets} socket(s)"
    cap = platform.dram.capacity_gb
    if not cap.known:
        raise UserError(f"{platform.name}: its platform file gives no dram.capacity_gb, which caps a decoder's KV "
                        "cache; give --memory-gb (DRAM per server)")
    return cap.value * GIGA, f"dram.capacity_gb {cap.value:g} per socket ({cap.kind}: {cap.source})"


class _Decoder:
    """Every scenario's step tables: rows ``(cpu, layout, realistic|ceiling)`` of the layouts whose KV cache
    holds at least one sequence."""

    def __init__(self, platforms: list[Platform], model: ModelSpec, precision: str, o: PlanOptions) -> None:
        prompts, out, cap = o.lengths, int(o.output_len), o.max_batch_tokens
        recipe = precision_recipe(precision, model)
        kv_dtype = step_kv_dtype(recipe, o.kv_dtype) or KV_DTYPE[recipe.non_gemm_mode]
        self.weights = footprint(model, precision).total_bytes
        self.per_sequence = prompts.mean + out
        # per token of a sequence of per_sequence tokens: a windowed layer holds at most its window
        # a linear-attention layer's fixed state (F32) is spread over the sequence's tokens the same way
        self.kv_per_token = (float(model.kv_tokens(self.per_sequence)) / self.per_sequence * model.kv_width
                             * DTYPE_BYTES[kv_dtype]
                             + model.linear_state_elements * STATE_ELEMENT_BYTES / self.per_sequence)
        self.memory, self.kv_cap, self.k = [], [], []
        for p in platforms:
            d, source = dram_per_socket(p, o.memory_gb)
            self.memory.append(Memory(dram_bytes_per_socket=d, source=source, weight_bytes=self.weights,
                                      kv_bytes_per_token=self.kv_per_token, tokens_per_sequence=self.per_sequence))
        for p, mem in zip(platforms, self.memory):
            cores = int(o.cores or p.cores_per_socket.value)
            if o.tensor_parallel > 1:  # one instance over every socket: each holds its share of the weights and KV
                s = float(p.sockets.known_value)
                cap_k = np.atleast_1d(max_concurrent_sequences(mem.dram_bytes_per_socket, self.weights / s,
                                                               self.kv_per_token / s, self.per_sequence, 1))
            else:
                per_socket = np.floor(cores / np.array(layouts(cores, o.instance_cores), dtype=float))
                cap_k = max_concurrent_sequences(mem.dram_bytes_per_socket, self.weights, self.kv_per_token,
                                                 self.per_sequence, per_socket)
            self.kv_cap.append(cap_k)
            self.k.append(np.minimum(cap_k, int(o.max_sequences)))
        self.k_max = max(1, max(int(k.max()) for k in self.k))
        kw = dict(cores=o.cores, ceiling=o.ceiling, source=o.source, kv_dtype=kv_dtype, instance_cores=o.instance_cores,
                  tensor_parallel=o.tensor_parallel)
        # up to a prefill of every running sequence's prompt at once: the offline cycle's
        top = max(cap, prompts.max, round(self.k_max * prompts.mean))
        if prompts.is_fixed:  # a prefill step holds whole prompts: multiples of the one length
            steps = [(int(b), prompts.min) for b in batch_sizes(max(1, top // prompts.min))]
        else:
            steps = token_grid(prompts.min, top, prompts.mean, prompts.max)
        self.prefill_tokens = np.array([b * s for b, s in steps], dtype=float)
        ref = max(1, round(prompts.mean))
        self.prefill_alone = next(i for i, (b, s) in enumerate(steps) if b == 1 and s == ref)
        self.prefill = [step_times(p, model, precision, Phase.PREFILL, [StepPoint(b, s) for b, s in steps], **kw)
                        for p in platforms]
        self.grid = batch_sizes(self.k_max)
        hi = prompts.max + out - 1  # the longest context a decode step sees; the shortest, P_min + 1, a little below
        self.ctx = (min(prompts.min + 1, hi - 1), hi)
        self.decode = None
        if out > 1:  # one output token is the first: no decode step ever runs
            points = [StepPoint(int(b), 1, c) for c in self.ctx for b in self.grid]
            self.decode = [step_times(p, model, precision, Phase.DECODE, points, **kw) for p in platforms]
        rows_pre, rows_lo, rows_hi, inst, kk, self.index = [], [], [], [], [], []
        g = len(self.grid)
        for c, t in enumerate(self.prefill):
            for kind in ("realistic", "ceiling"):
                pre = t.realistic_s if kind == "realistic" else t.ceiling_s
                if self.decode is not None:
                    dec = self.decode[c].realistic_s if kind == "realistic" else self.decode[c].ceiling_s
                    lo, hi = by_batch(dec[:, :g], self.grid, self.k_max), by_batch(dec[:, g:], self.grid, self.k_max)
                for i in range(len(t.instance_cores)):
                    if self.k[c][i] < 1:
                        continue
                    self.index.append((c, kind, i))
                    rows_pre.append(pre[i])
                    if self.decode is not None:
                        rows_lo.append(lo[i])
                        rows_hi.append(hi[i])
                    inst.append(t.instances_per_server[i])
                    kk.append(self.k[c][i])
        self.instances = np.array(inst, dtype=np.int64)
        self.max_sequences = np.array(kk, dtype=np.int64)
        self.pre_rows = np.array(rows_pre) if rows_pre else np.zeros((0, len(steps)))
        if self.decode is not None and rows_lo:
            self.lo_rows, self.hi_rows = np.array(rows_lo), np.array(rows_hi)
        else:  # never used (a single output token), but a DecodeStep needs positive times
            self.lo_rows = self.hi_rows = np.ones((len(self.index), self.k_max))

    def band(self, cpu: int) -> ErrorBand | None:
        """CPU ``cpu``'s realistic step times' error band: the wider of its prefill's and its decode's (its decode
        steps' on a tie or where no prefill band is wider; None: no profile's accuracy)"""
        pre = self.prefill[cpu].error_band
        dec = self.decode[cpu].error_band if self.decode else None
        if dec is None or dec.realistic_error is None or (
                pre is not None and pre.realistic_error is not None and pre.realistic_error > dec.realistic_error):
            return pre
        return dec

    def row(self, cpu: int, kind: str, layout: int) -> int | None:
        try:
            return self.index.index((cpu, kind, layout))
        except ValueError:
            return None

    def prefill_time(self, rows: np.ndarray | None = None, scale: np.ndarray | float = 1.0):
        """The prefill times of ``rows`` (default all), each row's times times its ``scale``."""
        t = self.pre_rows if rows is None else self.pre_rows[rows]
        table = TokenTable(self.prefill_tokens, t * np.reshape(scale, (-1, 1)))
        return lambda scenario, tokens: table(scenario, tokens, tokens)

    def decode_step(self, rows: np.ndarray | None = None, scale: np.ndarray | float = 1.0) -> DecodeStep:
        """The decode steps of ``rows`` (default all), each row's times times its ``scale``."""
        k = np.reshape(scale, (-1, 1))
        lo_t = (self.lo_rows if rows is None else self.lo_rows[rows]) * k
        hi_t = (self.hi_rows if rows is None else self.hi_rows[rows]) * k
        c_lo, c_hi = self.ctx

        def step_time(s, b, total_context):  # linear in the context between the two tabulated ones
            t_lo, t_hi = lo_t[s, b - 1], hi_t[s, b - 1]
            return t_lo + (total_context / b - c_lo) / (c_hi - c_lo) * (t_hi - t_lo)

        return DecodeStep.from_callable(step_time, lo_t.shape[0], self.k_max, self.ctx)


#: the user counts a concurrency plan searches for the most users a server holds within its SLOs: every count up to
#: 64, then about 5% apart
def users_grid(most: int) -> np.ndarray:
    """Whole user counts from 1 to ``most``: each up to 64, then a geometric grid about 5% apart."""
    small = np.arange(1, min(most, 64) + 1)
    if most <= 64:
        return small.astype(float)
    big = np.unique(np.round(np.geomspace(64, most, max(2, int(np.log(most / 64) / np.log(1.05)) + 2))))
    return np.unique(np.concatenate([small, big])).astype(float)


def _users(dec: _Decoder, o: PlanOptions, c: int, t) -> tuple[list[UsersPoint], UsersPoint | None]:
    """CPU ``c``'s answer to a fixed number of users: each count asked on its best layout (the most tokens per second
    among those meeting the SLOs, else the shortest TPOT), and the most users within the SLOs."""
    rows = [(i, r) for i in range(len(t.instance_cores)) if (r := dec.row(c, "realistic", i)) is not None]
    if not rows:
        return [], None
    idx = np.array([r for _, r in rows])
    asked = np.asarray(o.users or (), dtype=float)
    most = int(max(dec.instances[idx] * dec.max_sequences[idx])) * 4  # beyond the slots the users only wait
    grid = np.unique(np.concatenate([asked, users_grid(most)]))
    out = int(o.output_len)

    def answer(scale: float = 1.0):
        return decoder_users(dec.instances[idx], dec.prefill_time(idx, scale), dec.decode_step(idx, scale),
                             o.lengths, out, dec.max_sequences[idx], grid)

    u = answer()
    slo = o.ttft_s is not None or o.tpot_s is not None
    meets = np.ones(u.ttft_s.shape, dtype=bool)
    if o.ttft_s is not None:
        meets &= u.ttft_s <= o.ttft_s
    if o.tpot_s is not None:
        meets &= u.tpot_s <= o.tpot_s
    band = dec.band(c)
    ends = [answer(f) for f in band_factors(band.realistic_error)] if band is not None and band.realistic_error else []

    def point(g: int) -> UsersPoint:
        score = np.where(meets[:, g], u.tokens_per_s[:, g], -u.tpot_s[:, g])  # none meets: the shortest TPOT
        j = int(np.argmax(score))
        i = rows[j][0]
        return UsersPoint(users=int(grid[g]), instance_cores=int(t.instance_cores[i]),
                          instances_per_socket=int(t.instances_per_socket[i]), running=int(u.running[j, g]),
                          ttft_s=float(u.ttft_s[j, g]), tpot_s=float(u.tpot_s[j, g]),
                          user_tokens_per_s=float(u.user_tokens_per_s[j, g]),
                          tokens_per_s_per_server=float(u.tokens_per_s[j, g]), meets=bool(meets[j, g]) if slo else None,
                          ttft_s_band=[float(e.ttft_s[j, g]) for e in ends] or None,
                          tpot_s_band=[float(e.tpot_s[j, g]) for e in ends] or None)

    points = [point(int(np.searchsorted(grid, n))) for n in asked]
    held = np.flatnonzero(meets.any(axis=0)) if slo else np.array([], dtype=int)
    return points, point(int(held.max())) if held.size else None


def plan_continuous_batching(platforms: list[Platform], model: ModelSpec, precision: str,
                             o: PlanOptions) -> list[CpuPlan]:
    out = int(o.output_len)
    server = o.scenario is Scenario.SERVER
    dec = _Decoder(platforms, model, precision, o)
    n_rows = len(dec.index)
    sim = _simulate(dec, o) if n_rows else None
    slos = " and ".join(x for x in (f"TTFT p99 {o.ttft_s * 1e3:g} ms" if o.ttft_s else "",
                                    f"TPOT p99 {o.tpot_s * 1e3:g} ms" if o.tpot_s else "") if x)
    plans, best_rows = [], []
    error_bands = [dec.band(c) for c in range(len(platforms))]
    for c, (p, t) in enumerate(zip(platforms, dec.prefill)):
        n = len(t.instance_cores)
        real = [dec.row(c, "realistic", i) for i in range(n)]
        ceil = [dec.row(c, "ceiling", i) for i in range(n)]
        results = [_layout(o, dec, c, i, real[i], ceil[i], t, sim, out) for i in range(n)]
        fits = np.array([r is not None for r in real])
        rates = np.array([x.rps_per_server for x in results])
        usable = fits & (np.array([bool(x.meets_latency) for x in results]) if server else fits)
        alone = np.array([x.service_time_s if x.service_time_s > 0 else np.inf for x in results])
        pick = choose(rates, t.instance_cores, usable, alone, slos)
        rates_c = np.array([x.rps_per_server_ceiling for x in results])
        usable_c = fits & (np.array([ceil[i] is not None and bool(sim.mr.meets[ceil[i]]) for i in range(n)])
                           if server and sim is not None else fits)
        pick_c = choose(rates_c, t.instance_cores, usable_c, alone, slos)
        best = results[pick.index]
        if not fits.any():
            reason = (f"no layout fits a sequence of {dec.per_sequence:,.0f} tokens in the KV cache: the weights take "
                      f"{dec.weights / 1e9:.3g} GB of the {dec.memory[c].dram_bytes_per_socket / 1e9:.3g} GB per "
                      "socket")
        elif not pick.meets:
            split = f" split over {o.tensor_parallel} ranks" if o.tensor_parallel > 1 else ""
            reason = (f"no layout meets {slos}: the fastest, {best.instances_per_socket} x {best.instance_cores} "
                      f"cores per socket{split}, takes TTFT {_ms(best.prefill_time_s)} ms and TPOT "
                      f"{_ms(best.decode_step_s)} ms for a lone request")
        else:
            reason = pick.reason
        price = o.prices[c] if o.prices else None
        cb = results[pick_c.index]
        ok = bool(pick.meets and fits.any())
        plans.append(CpuPlan(
            cpu=p.name, description=p.description, sockets=t.sockets,
            cores_per_socket=int(o.cores or p.cores_per_socket.value), weights_llc_resident=t.weights_llc_resident,
            layouts=results, best=best, best_reason=reason, meets=ok,
            servers_needed=servers_needed(o.target_rps, best.rps_per_server, o.utilization) if ok else None,
            price_per_hour=price,
            cost_per_million_requests=cost_per_million(price, best.rps_per_server, o.utilization) if ok else None,
            cost_per_million_tokens=cost_per_million(price, best.tokens_per_s_per_server or 0.0, o.utilization)
            if ok else None,
            ceiling=CeilingPlan(instance_cores=cb.instance_cores, instances_per_socket=cb.instances_per_socket,
                                rps_per_server=cb.rps_per_server_ceiling,
                                servers_needed=servers_needed(o.target_rps, cb.rps_per_server_ceiling, o.utilization)
                                if pick_c.meets and fits.any() else None,
                                tokens_per_s_per_server=cb.tokens_per_s_per_server_ceiling),
            curve=[], memory=dec.memory[c], notes=([] if ok else [reason]) + _split_notes(o, p, t),
            path_class=error_bands[c].path_class if error_bands[c] else None, tensor_parallel=o.tensor_parallel,
        ))
        best_rows.append(real[pick.index])
        if o.scenario is Scenario.CONCURRENCY:
            asked, most = _users(dec, o, c, t)
            plans[-1] = replace(plans[-1], users=asked, max_users=most)
    if sim is None:
        return plans
    # the realistic step times' error band on each CPU (the wider of its prefill's and its decode's): the rate at
    # its two ends
    bands = [e.realistic_error if server and e else None for e in error_bands]
    banded = [k for k, (c, r) in enumerate(zip(plans, best_rows)) if bands[k] and c.meets and r is not None]
    if banded:
        ends = _band_rates(dec, [best_rows[k] for k in banded], np.array([bands[k] for k in banded]), o)
        for k, e in zip(banded, ends):
            plans[k] = with_band(plans[k], e, o, bands[k])
    return _with_curves(plans, dec, best_rows, sim.off.rps, sim.rate, o)


def _band_rates(dec: _Decoder, rows: list[int], bands: np.ndarray, o: PlanOptions) -> np.ndarray:
    """``(len(rows), 2)``: each realistic row's server rate with its prefill and decode steps ``1 + band`` times
    longer, then shorter (``bands``: one per row), all in one simulation."""
    r, n = np.array(rows * 2), len(rows)
    scale = np.concatenate(band_factors(np.broadcast_to(np.asarray(bands, dtype=float), (n,))))
    mr = decoder_max_rate(o.ttft_s, o.tpot_s, dec.instances[r], dec.prefill_time(r, scale), dec.decode_step(r, scale),
                          o.lengths, int(o.output_len), dec.max_sequences[r], max_prefill_tokens=o.max_batch_tokens,
                          sampling=o.sampling)
    return np.stack([mr.rate_rps[:n], mr.rate_rps[n:]], axis=1)


@dataclass(frozen=True)
class _Sim:
    """The simulations' answers per row."""

    off: DecoderOffline
    mr: DecoderMaxRate | None
    rate: np.ndarray
    tokens: np.ndarray
    alone_pre: np.ndarray
    """one prompt of the mean length alone"""
    alone_step: np.ndarray
    """one decode step of a lone sequence at its mean context"""


def _split_notes(o: PlanOptions, p: Platform, t: StepTimes) -> list[str]:
    """What a tensor-parallel plan assumed (none without a split)."""
    if o.tensor_parallel <= 1:
        return []
    per = o.tensor_parallel // t.sockets
    out = [f"{p.name}: one instance of all {t.sockets * int(t.instance_cores[0])} cores split over {o.tensor_parallel} "
           f"tensor-parallel ranks ({per} per socket, each reading its share of the weights and KV cache from its own "
           "socket's memory), two all-reduces per layer priced as sgl-kernel's shm_allreduce"]
    stack = o.source.stack
    if stack is not None and stack.kernels:
        out.append(f"{p.name}: {stack.name} splits no model over CPU ranks (its --split-mode splits over GPUs): the "
                   f"{o.tensor_parallel}-rank split is priced with its kernels as if it did")
    return out


def _simulate(dec: _Decoder, o: PlanOptions) -> _Sim:
    prompts, out, n = o.lengths, int(o.output_len), len(dec.index)
    prefill, step = dec.prefill_time(), dec.decode_step()
    off = decoder_offline(dec.instances, prefill, step, prompts, out, dec.max_sequences)
    mr = (decoder_max_rate(o.ttft_s, o.tpot_s, dec.instances, prefill, step, prompts, out, dec.max_sequences,
                           max_prefill_tokens=o.max_batch_tokens, sampling=o.sampling)
          if o.scenario is Scenario.SERVER else None)
    ref = float(max(1, round(prompts.mean)))
    rows = np.arange(n)
    return _Sim(off=off, mr=mr, rate=mr.rate_rps if mr is not None else off.rps,
                tokens=mr.tokens_per_s if mr is not None else off.tokens_per_s,
                alone_pre=prefill(rows, np.full(n, ref)),
                alone_step=step(rows, np.ones(n, dtype=np.int64), np.full(n, ref + out / 2.0)))


def _ms(s: float | None) -> str:
    return "-" if s is None else f"{s * 1e3:.3g}"


def _layout(o: PlanOptions, dec: _Decoder, c: int, i: int, r: int | None, rc: int | None, t, sim: _Sim | None,
            out: int) -> PlanLayout:
    """One layout's result (a layout whose KV cache holds no sequence gets zeros)."""
    server = o.scenario is Scenario.SERVER
    if dec.decode is not None:  # the ceiling's decode step at the running batch cap, longest context
        g_k = min(int(np.searchsorted(dec.grid, max(1, int(dec.k[c][i])))), len(dec.grid) - 1)
        split = dec.decode[c].time_split[i, len(dec.grid) + g_k]
    else:
        split = t.time_split[i, dec.prefill_alone]
    base = dict(**layout_fields(o.scenario, t.instance_cores[i], t.instances_per_socket[i], t.instances_per_server[i],
                                split),
                max_concurrent_sequences=int(dec.k[c][i]), kv_capacity_sequences=int(dec.kv_cap[c][i]),
                p50_s=None, p99_s=None, p99_ci_s=None, bare_p99_s=None)
    if r is None:
        return PlanLayout(**base, rps_per_server=0.0, rps_per_server_ceiling=0.0, server_rps=0.0,
                            offline_rps_per_server=0.0, offline_rps_per_server_ceiling=0.0, service_time_s=0.0,
                            service_time_ceiling_s=0.0, utilization=None, batch_tokens=None, batch_requests=None,
                            meets_latency=False if server else None, tokens_per_s_per_server=0.0,
                            tokens_per_s_per_server_ceiling=0.0,
                            note="the KV cache holds no sequence: the DRAM left after the weights, shared by "
                                 f"{int(t.instances_per_socket[i])} instances per socket, is too small")
    off, mr, rate, tokens = sim.off, sim.mr, sim.rate, sim.tokens
    pre, stp = float(sim.alone_pre[r]), float(sim.alone_step[r])
    pre_c, stp_c = float(sim.alone_pre[rc]), float(sim.alone_step[rc])
    mean_batch = num(mr.stats.mean_batch[r, 0]) if server else float(off.batch[r])
    return PlanLayout(
        **base, rps_per_server=float(rate[r]), rps_per_server_ceiling=float(rate[rc]), server_rps=float(rate[r]),
        offline_rps_per_server=float(off.rps[r]), offline_rps_per_server_ceiling=float(off.rps[rc]),
        service_time_s=pre + (out - 1) * stp, service_time_ceiling_s=pre_c + (out - 1) * stp_c,
        utilization=float(rate[r] / off.rps[r]), batch_tokens=mean_batch, batch_requests=mean_batch,
        meets_latency=bool(mr.meets[r]) if server else None,
        tokens_per_s_per_server=num(tokens[r]) or 0.0, tokens_per_s_per_server_ceiling=num(tokens[rc]) or 0.0,
        ttft_p99_s=num(mr.stats.ttft_p99_s[r, 0]) if server else None,
        ttft_p99_ci_s=interval(mr.stats.ttft_p99_ci_s[r, 0]) if server else None,
        tpot_p99_s=num(mr.stats.tpot_p99_s[r, 0]) if server else None,
        tpot_p99_ci_s=interval(mr.stats.tpot_p99_ci_s[r, 0]) if server else None,
        prefill_time_s=pre, decode_step_s=stp if out > 1 else None,
    )


def _with_curves(plans: list[CpuPlan], dec: _Decoder, rows: list[int | None], capacity: np.ndarray,
                 rate: np.ndarray, o: PlanOptions) -> list[CpuPlan]:
    """Each CPU's best layout simulated at loads up to 95% of its offline capacity, one call for all."""
    live = [k for k, r in enumerate(rows) if r is not None and plans[k].best.offline_rps_per_server > 0]
    if not live:
        return plans
    rows_a = np.array([rows[k] for k in live])
    loads = [curve_loads(rate[r] / capacity[r] if o.scenario is Scenario.SERVER else 0.0) for r in rows_a]
    width = max(len(x) for x in loads)
    grid = np.array([np.pad(x, (0, width - len(x)), mode="edge") for x in loads]) * capacity[rows_a, None]
    st = simulate_decoder(grid, dec.instances[rows_a], dec.prefill_time(rows_a), dec.decode_step(rows_a), o.lengths,
                          int(o.output_len), dec.max_sequences[rows_a], max_prefill_tokens=o.max_batch_tokens,
                          sampling=o.sampling)
    out = list(plans)
    for s, k in enumerate(live):
        cap = capacity[rows_a[s]]
        out[k] = replace(plans[k], curve=[
            CurvePoint(offered_rps=float(st.rate_rps[s, g]), utilization=float(st.rate_rps[s, g] / cap),
                       ttft_p50_s=num(st.ttft_p50_s[s, g]), ttft_p99_s=num(st.ttft_p99_s[s, g]),
                       tpot_p50_s=num(st.tpot_p50_s[s, g]), tpot_p99_s=num(st.tpot_p99_s[s, g]),
                       tokens_per_s=num(st.tokens_per_s[s, g]), mean_batch=num(st.mean_batch[s, g]))
            for g in range(len(loads[s]))])
    return out


def _one_layout(platform: Platform, model: ModelSpec, precision: str, o: PlanOptions, what: str,
                kinds: tuple[str, ...]) -> tuple[_Decoder, list[np.ndarray]]:
    """The step tables of ``o``'s one layout (``o.instance_cores``) and its rows of each of ``kinds`` (realistic,
    ceiling); ``what``: the caller, named in a refusal."""
    if o.instance_cores is None:
        raise UserError(f"{what}: give the layout's instance_cores")
    dec = _Decoder([platform], model, precision, o)
    rows = [dec.row(0, kind, 0) for kind in kinds]
    if any(r is None for r in rows):
        raise UserError(f"{platform.name}: no sequence of {dec.per_sequence:,.0f} tokens fits the KV cache of an "
                        f"instance of {o.instance_cores} cores")
    return dec, [np.array([r]) for r in rows]


def decoder_stats_at(platform: Platform, model: ModelSpec, precision: str, o: PlanOptions,
                     rates_rps: tuple[float, ...]) -> DecoderStats:
    """The realistic plan of ``o``'s one layout (``o.instance_cores``) simulated at each of ``rates_rps`` Poisson
    arrivals per server: its TTFT and TPOT at those loads (Server runs' scheduled rates), as
    :func:`plan_continuous_batching` simulates its curve; arrays ``(1, len(rates_rps))``. ``o`` as
    :func:`roofline.capacity.options.resolve` leaves it."""
    if o.sampling is None:
        raise UserError("decoder_stats_at: the options as resolve() leaves them (their sampling set)")
    dec, (rows,) = _one_layout(platform, model, precision, o, "decoder_stats_at", ("realistic",))
    return simulate_decoder(np.array([list(map(float, rates_rps))]), dec.instances[rows], dec.prefill_time(rows),
                            dec.decode_step(rows), o.lengths, int(o.output_len), dec.max_sequences[rows],
                            max_prefill_tokens=o.max_batch_tokens, sampling=o.sampling)


def decoder_users_at(platform: Platform, model: ModelSpec, precision: str, o: PlanOptions,
                     users: int) -> tuple[DecoderUsers, DecoderUsers, int]:
    """``users`` clients, each with a request in flight, on ``o``'s one layout (``o.instance_cores``): what the
    concurrency scenario answers for them, at the realistic and at the ceiling's step times (arrays ``(1, 1)``), and
    the layout's instances per server. ``o`` as :func:`roofline.capacity.options.resolve` leaves it."""
    dec, both = _one_layout(platform, model, precision, o, "decoder_users_at", ("realistic", "ceiling"))
    real, ceil = (decoder_users(dec.instances[rows], dec.prefill_time(rows), dec.decode_step(rows), o.lengths,
                                int(o.output_len), dec.max_sequences[rows], np.array([float(users)])) for rows in both)
    return real, ceil, int(dec.instances[both[0]][0])
