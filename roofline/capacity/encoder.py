"""The plan of whole requests batched dynamically: encoders (and a decoder's prompts alone, ``--phase prefill``).

Per CPU and layout, one instance's service time of a batch (:mod:`roofline.capacity.service_times`:
``b = 1..B`` requests of the fixed length, ``B = max(1, max_batch_tokens // length)``; for unequal
lengths a table over the batch's tokens), realistic and at the ceiling. Every (CPU, layout,
realistic or ceiling) is one scenario of the serving simulations, all in one call:

- offline: :func:`~roofline.serving.dynamic_batching.offline_throughput`, every instance always busy on
  the best batch;
- server: :func:`~roofline.serving.dynamic_batching.max_rate`, the highest Poisson rate whose
  simulated p99 (queueing, the batching wait, the service) meets the SLO; with a stack profile's error
  band ``b`` each CPU's best layout also at the realistic service times ``(1 + b)`` times longer and
  shorter (one more simulation of two scenarios per CPU): under a p99 bound the rate moves much more
  than the service time where the p99 barely rises with the load, and the plan gives that range;

then each CPU's best layout (:mod:`roofline.capacity.fleet`) and its latency-vs-load curve
(:func:`~roofline.serving.dynamic_batching.simulate_server` at loads up to 95% of its capacity).

A server of more than :data:`MAX_QUEUE_INSTANCES` instances (beyond any catalog platform: 2 x 128
one-core instances is 256) is simulated as ``k = ceil(c / 256)`` groups of ``round(c / k)``
instances, each with its share of the arrivals (a load balancer per group, as a NUMA-aware deployment
runs one per socket): the simulation's cost grows with the instances one queue feeds, and one queue
for all would wait a little less (pooling), so the grouped answer errs low.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

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
from roofline.capacity.options import PlanOptions, resolve
from roofline.capacity.service_times import StepPoint, StepTimes, batch_sizes, by_batch, step_times, token_grid
from roofline.errors import UserError
from roofline.results.plan import CeilingPlan, CpuPlan, CurvePoint, PlanLayout
from roofline.serving.dynamic_batching import (
    BatchTable,
    TokenTable,
    bare_latency_p99,
    max_rate,
    offline_throughput,
    simulate_server,
)
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.vocab import Scenario

#: the most instances one simulated queue feeds; larger servers are split into groups (module docstring)
MAX_QUEUE_INSTANCES = 256


class _Tables:
    """The service tables of every scenario: rows ``(cpu, layout, realistic|ceiling)``."""

    def __init__(self, platforms: list[Platform], model: ModelSpec, precision: str, o: PlanOptions) -> None:
        lengths, cap = o.lengths, o.max_batch_tokens
        self.fixed = lengths.is_fixed
        grid, top = None, 0
        if self.fixed:
            top = max(1, cap // lengths.min)
            grid = batch_sizes(top)
            points = [StepPoint(int(b), lengths.min) for b in grid]
            self.alone_point = 0
        else:
            steps = token_grid(lengths.min, max(cap, lengths.max), lengths.mean, lengths.max)
            points = [StepPoint(b, s) for b, s in steps]
            self.tokens = np.array([b * s for b, s in steps], dtype=float)
            ref = max(1, round(lengths.mean))
            self.alone_point = next(i for i, (b, s) in enumerate(steps) if b == 1 and s == ref)
        self.times: list[StepTimes] = [
            step_times(p, model, precision, o.phase, points, cores=o.cores, ceiling=o.ceiling, source=o.source,
                       instance_cores=o.instance_cores)
            for p in platforms]
        rows, inst, self.index = [], [], []
        for k, t in enumerate(self.times):
            for kind, table in (("realistic", t.realistic_s), ("ceiling", t.ceiling_s)):
                rows.append(by_batch(table, grid, top) if self.fixed else table)
                inst.append(t.instances_per_server)
                self.index += [(k, kind, i) for i in range(len(t.instance_cores))]
        self.rows = np.concatenate(rows)
        self.instances = np.concatenate(inst).astype(np.int64)
        groups = -(-self.instances // MAX_QUEUE_INSTANCES)
        self.queue = np.maximum(np.round(self.instances / groups), 1).astype(np.int64)
        """instances one simulated queue feeds"""
        self.scale = self.instances / self.queue
        """the server's rate over the simulated queue's"""

    def row(self, cpu: int, kind: str, layout: int) -> int:
        return self.index.index((cpu, kind, layout))

    def service(self, rows: np.ndarray | None = None):
        t = self.rows if rows is None else self.rows[rows]
        return self.table(t)

    def table(self, t: np.ndarray):
        """Service times ``t`` (one row per scenario) as the simulations take them."""
        return BatchTable(t) if self.fixed else TokenTable(self.tokens, t)

    def alone_s(self, row: int) -> float:
        """One request of the (mean) length alone: the batch-of-one column, or the reference step."""
        return float(self.rows[row, 0]) if self.fixed else float(self.rows[row, self.alone_point])


def plan_dynamic_batching(platforms: list[Platform], model: ModelSpec, precision: str,
                          o: PlanOptions) -> list[CpuPlan]:
    lengths, cap, mw, size = o.lengths, o.max_batch_tokens, o.max_wait_s, o.sampling
    wm = o.batch_watermark_tokens
    server = o.scenario is Scenario.SERVER
    tab = _Tables(platforms, model, precision, o)
    service = tab.service()
    off = offline_throughput(tab.instances, service, lengths, max_batch_tokens=cap, watermark_tokens=wm, seed=size.seed)
    mr = (max_rate(o.p99_s, tab.queue, service, lengths, max_batch_tokens=cap, watermark_tokens=wm, max_wait_s=mw,
                   sampling=size)
          if server else None)
    rate = mr.rate_rps * tab.scale if server else off.rps
    bare = mr.bare_p99_s if server else bare_latency_p99(service, lengths, tab.rows.shape[0], max_batch_tokens=cap,
                                                         watermark_tokens=wm, max_wait_s=mw)
    what = f"p99 {o.p99_s * 1e3:g} ms" if server else ""
    plans, best_rows = [], []
    for k, (p, t) in enumerate(zip(platforms, tab.times)):
        n = len(t.instance_cores)
        real = [tab.row(k, "realistic", i) for i in range(n)]
        ceil = [tab.row(k, "ceiling", i) for i in range(n)]
        usable = mr.meets[real] if server else np.ones(n, dtype=bool)
        pick = choose(rate[real], t.instance_cores, usable, bare[real], what)
        pick_c = choose(rate[ceil], t.instance_cores, mr.meets[ceil] if server else np.ones(n, dtype=bool),
                        bare[ceil], what)
        layouts = [_layout(o, tab, t, i, real[i], ceil[i], off, mr, rate, bare) for i in range(n)]
        best = layouts[pick.index]
        reason = pick.reason if pick.meets else (
            f"no layout meets p99 {o.p99_s * 1e3:g} ms: the fastest, {best.instances_per_socket} x "
            f"{best.instance_cores} cores per socket, takes {best.bare_p99_s * 1e3:.3g} ms for a lone request")
        price = o.prices[k] if o.prices else None
        cb = layouts[pick_c.index]
        ceiling = CeilingPlan(instance_cores=cb.instance_cores, instances_per_socket=cb.instances_per_socket,
                              rps_per_server=cb.rps_per_server_ceiling,
                              servers_needed=servers_needed(o.target_rps, cb.rps_per_server_ceiling, o.utilization)
                              if pick_c.meets else None)
        notes = [] if pick.meets else [reason]
        if np.any(tab.queue[real] < tab.instances[real]):
            notes.append(f"layouts of more than {MAX_QUEUE_INSTANCES} instances per server are simulated as groups of "
                         f"at most {MAX_QUEUE_INSTANCES}, each with its share of the arrivals")
        plans.append(CpuPlan(
            cpu=p.name, description=p.description, sockets=t.sockets,
            cores_per_socket=int(o.cores or p.cores_per_socket.value), weights_llc_resident=t.weights_llc_resident,
            layouts=layouts, best=best, best_reason=reason, meets=pick.meets,
            servers_needed=servers_needed(o.target_rps, best.rps_per_server, o.utilization) if pick.meets else None,
            price_per_hour=price,
            cost_per_million_requests=(cost_per_million(price, best.rps_per_server, o.utilization) if pick.meets
                                       else None),
            ceiling=ceiling, curve=[], notes=notes, path_class=t.error_band.path_class if t.error_band else None,
        ))
        best_rows.append(real[pick.index])
    # the realistic service times' error band on each CPU: the rate at its two ends
    bands = [t.error_band.realistic_error if t.error_band else None for t in tab.times] if server else []
    if bands and all(b is not None for b in bands):
        r = np.asarray(best_rows)
        ends = _band_rates(tab.table, tab.rows[r], tab.queue[r], tab.scale[r], np.array(bands), o.p99_s, o)
        plans = [with_band(c, e, o, b) for c, e, b in zip(plans, ends, bands)]
    return _with_curves(plans, tab, best_rows, off.rps, rate, o)


def _band_rates(table, times: np.ndarray, queue: np.ndarray, scale: np.ndarray, bands: np.ndarray, p99_s,
                o: PlanOptions) -> np.ndarray:
    """``(S, 2)``: the server rate of each scenario's realistic service times ``times`` ``(S, G)`` made ``1 + band``
    times longer, then shorter (``table``: how the simulations take service times; ``queue``, ``scale``: the
    scenarios' simulated queue and the server's rate over it; ``p99_s``: the SLO, one or per scenario), in one
    simulation (common random numbers: no other scenario's answer moves with it)."""
    longer, shorter = band_factors(np.asarray(bands, dtype=float))
    mr = max_rate(np.tile(np.broadcast_to(p99_s, len(times)), 2), np.tile(queue, 2),
                  table(np.concatenate([times * longer[:, None], times * shorter[:, None]])), o.lengths,
                  max_batch_tokens=o.max_batch_tokens, watermark_tokens=o.batch_watermark_tokens,
                  max_wait_s=o.max_wait_s, sampling=o.sampling)
    return (mr.rate_rps * np.tile(scale, 2)).reshape(2, -1).T


@dataclass(frozen=True)
class ServerCheck:
    """One layout's server-scenario answers as the plan computes them, without the plan's other layouts and
    curves: what an MLPerf Server run is checked against (:mod:`roofline.fidelity.plans`)."""

    rps: float
    """the highest Poisson rate per server meeting the p99 SLO (realistic service times)"""
    offline_rps: float
    """the offline capacity per server of the ``offline_cores`` layout (NaN when none was asked)"""
    latencies_s: list[tuple[float | None, float | None]]
    """p50 and p99 at each rate asked for (None where the simulation measured no request)"""
    rps_band: tuple[float, float] | None = None
    """``rps`` with the realistic service times ``1 + band`` times longer, then shorter (None: no band asked)"""


@dataclass(frozen=True)
class ServerCase:
    """One layout to check in the server scenario: ``options.instance_cores`` of ``platform`` under
    ``options.p99_s``, its latency at each of ``rates_rps`` (per server), and the offline capacity of the
    ``offline_cores`` layout (None: not wanted)."""

    platform: Platform
    model: ModelSpec
    precision: str
    options: PlanOptions
    offline_cores: int | None = None
    rates_rps: tuple[float, ...] = ()
    band: float | None = None
    """also the rate with the realistic service times ``1 + band`` times longer and shorter"""


def server_check(platform: Platform, model: ModelSpec, precision: str, options: PlanOptions, offline_cores: int,
                 rates_rps: Sequence[float] = ()) -> ServerCheck:
    """One :class:`ServerCase`: see :func:`server_checks`."""
    return server_checks([ServerCase(platform, model, precision, options, offline_cores, tuple(rates_rps))])[0]


def server_checks(cases: Sequence[ServerCase]) -> list[ServerCheck]:
    """Each case's layout in the server scenario (its rate under its p99 SLO, and its p50 and p99 at each rate
    asked for) and the offline capacity of its offline layout: the same tables and simulations as
    :func:`plan_dynamic_batching`'s, without the plan's other layouts and curves. Cases that share their request
    lengths (the same object), batch cap, watermark, wait and sampling are simulated together, one row each
    (common random numbers make a row's answer the same whatever is simulated beside it)."""
    resolved = []
    for c in cases:
        o = resolve(c.model, c.options, 1)
        if o.instance_cores is None or o.scenario is not Scenario.SERVER:
            raise UserError("server_check: give the server scenario's layout (PlanOptions.instance_cores, p99_s)")
        resolved.append(o)
    groups: dict[tuple, list[int]] = {}
    for i, o in enumerate(resolved):
        groups.setdefault((id(o.lengths), o.max_batch_tokens, o.batch_watermark_tokens, o.max_wait_s, o.sampling),
                          []).append(i)
    out: list[ServerCheck | None] = [None] * len(cases)
    for members in groups.values():
        for i, check in zip(members, _server_group([cases[i] for i in members], [resolved[i] for i in members])):
            out[i] = check
    return [c for c in out if c is not None]


def _server_group(cases: list[ServerCase], opts: list[PlanOptions]) -> list[ServerCheck]:
    o0 = opts[0]
    cap, mw, size, lengths = o0.max_batch_tokens, o0.max_wait_s, o0.sampling, o0.lengths
    wm = o0.batch_watermark_tokens
    tabs = [_Tables([c.platform], c.model, c.precision, o) for c, o in zip(cases, opts)]
    first = tabs[0]

    def service(rows: list[np.ndarray]):
        t = np.concatenate(rows)
        return BatchTable(t) if first.fixed else TokenTable(first.tokens, t)

    row = [t.row(0, "realistic", 0) for t in tabs]
    queue = np.array([t.queue[r] for t, r in zip(tabs, row)])
    scale = np.array([t.scale[r] for t, r in zip(tabs, row)])
    srv = service([t.rows[r][None, :] for t, r in zip(tabs, row)])
    slo = np.array([o.p99_s for o in opts])
    mr = max_rate(slo, queue, srv, lengths, max_batch_tokens=cap, watermark_tokens=wm, max_wait_s=mw, sampling=size)
    rps = mr.rate_rps * scale
    bands: list[tuple[float, float] | None] = [None] * len(cases)
    banded = [i for i, c in enumerate(cases) if c.band]
    if banded:  # the cases that ask: their rate at the band's two ends
        b = np.array(banded)
        ends = _band_rates(lambda t: service([t]), np.concatenate([tabs[i].rows[row[i]][None, :] for i in banded]),
                           queue[b], scale[b], np.array([cases[i].band for i in banded]), slo[b], o0)
        for i, (slower, faster) in zip(banded, ends):
            bands[i] = (float(slower), float(faster))
    wanted = [i for i, c in enumerate(cases) if c.offline_cores is not None]
    offline = np.full(len(cases), np.nan)
    if wanted:
        off_tabs = [tabs[i] if cases[i].offline_cores == opts[i].instance_cores else
                    _Tables([cases[i].platform], cases[i].model, cases[i].precision,
                            replace(opts[i], instance_cores=cases[i].offline_cores)) for i in wanted]
        off_rows = [t.row(0, "realistic", 0) for t in off_tabs]
        off = offline_throughput(np.array([t.instances[r] for t, r in zip(off_tabs, off_rows)]),
                                 service([t.rows[r][None, :] for t, r in zip(off_tabs, off_rows)]), lengths,
                                 max_batch_tokens=cap, watermark_tokens=wm, seed=size.seed)
        offline[wanted] = off.rps
    latencies: list[list[tuple[float | None, float | None]]] = [[] for _ in cases]
    asked = [i for i, c in enumerate(cases) if c.rates_rps]
    if asked:
        width = max(len(cases[i].rates_rps) for i in asked)
        rates = np.array([list(cases[i].rates_rps) + [cases[i].rates_rps[-1]] * (width - len(cases[i].rates_rps))
                          for i in asked]) / scale[asked, None]
        st = simulate_server(rates, queue[asked], service([tabs[i].rows[row[i]][None, :] for i in asked]), lengths,
                             max_batch_tokens=cap, watermark_tokens=wm, max_wait_s=mw, sampling=size)
        for k, i in enumerate(asked):
            latencies[i] = [(num(st.p50_s[k, g]), num(st.p99_s[k, g])) for g in range(len(cases[i].rates_rps))]
    return [ServerCheck(float(rps[i]), float(offline[i]), latencies[i], bands[i]) for i in range(len(cases))]


def _layout(o: PlanOptions, tab: _Tables, t: StepTimes, i: int, r: int, rc: int, off, mr, rate: np.ndarray,
            bare: np.ndarray) -> PlanLayout:
    """Layout ``i`` of a CPU from its realistic row ``r`` and ceiling row ``rc`` (``mr``: the server
    scenario's search, None offline)."""
    fields = layout_fields(o.scenario, t.instance_cores[i], t.instances_per_socket[i], tab.instances[r],
                           t.time_split[i, tab.alone_point])
    rates = dict(rps_per_server=float(rate[r]), rps_per_server_ceiling=float(rate[rc]), server_rps=float(rate[r]),
                 offline_rps_per_server=float(off.rps[r]), offline_rps_per_server_ceiling=float(off.rps[rc]),
                 service_time_s=tab.alone_s(r), service_time_ceiling_s=tab.alone_s(rc), bare_p99_s=float(bare[r]))
    if mr is None:  # offline: every instance always busy on the best batch
        return PlanLayout(**fields, **rates, p50_s=None, p99_s=None, p99_ci_s=None, utilization=1.0,
                            batch_tokens=float(off.batch_tokens[r]), batch_requests=float(off.batch_requests[r]),
                            meets_latency=None)
    st = mr.stats
    return PlanLayout(**fields, **rates, p50_s=num(st.p50_s[r, 0]), p99_s=num(st.p99_s[r, 0]),
                        p99_ci_s=interval(st.p99_ci_s[r, 0]), utilization=num(st.utilization[r, 0]),
                        batch_tokens=num(st.batch_tokens[r, 0]), batch_requests=num(st.batch_requests[r, 0]),
                        meets_latency=bool(mr.meets[r]))


def _with_curves(plans: list[CpuPlan], tab: _Tables, rows: list[int], capacity: np.ndarray, rate: np.ndarray,
                 o: PlanOptions) -> list[CpuPlan]:
    """Each CPU's best layout simulated at loads up to 95% of its offline capacity, one call for all."""
    rows_a = np.array(rows)
    loads = [curve_loads(rate[r] / capacity[r] if o.scenario is Scenario.SERVER else 0.0) for r in rows]
    width = max(len(x) for x in loads)
    scale = tab.scale[rows_a, None]
    grid = np.array([np.pad(x, (0, width - len(x)), mode="edge") for x in loads]) * capacity[rows_a, None]
    st = simulate_server(grid / scale, tab.queue[rows_a], tab.service(rows_a), o.lengths,
                         max_batch_tokens=o.max_batch_tokens, watermark_tokens=o.batch_watermark_tokens,
                         max_wait_s=o.max_wait_s, sampling=o.sampling)
    out = []
    for s, (plan, x) in enumerate(zip(plans, loads)):
        k = float(scale[s, 0])
        curve = [CurvePoint(offered_rps=float(st.rate_rps[s, g] * k), utilization=float(st.utilization[s, g]),
                            p50_s=num(st.p50_s[s, g]), p99_s=num(st.p99_s[s, g]),
                            p99_ci_s=interval(st.p99_ci_s[s, g]),
                            throughput_rps=num(st.throughput_rps[s, g] * k))
                 for g in range(len(x))]
        out.append(replace(plan, curve=curve))
    return out
