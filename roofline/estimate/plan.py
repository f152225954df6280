"""``roofline plan``: instance layouts, throughput per server, servers needed, cost.

The paper's deployment: on each socket, N instances of C cores each (C = 1, 2, 4, 8, ... up to
the socket), pinned to disjoint cores, sharing one copy of the weights per socket. For a layout:

- an instance's peak is its cores' share: ``P_inst = P_socket x C / cores``;
- bandwidth is the socket's, shared by the instances running together: ``B_inst = B_socket / N``
  (DRAM, and the LLC when the shared weight set fits it);
- latency = roofline time of the GEMMs + the modelled non-GEMM work on one instance (no queueing);
- throughput: ``N x batch / latency`` per socket, times the sockets per server.

The best layout is the one with the most throughput per server among those meeting the latency
target. Servers needed: ``ceil(target / (server throughput x utilization))``.
"""

from __future__ import annotations

import math

import numpy as np

from roofline.errors import UserError
from roofline.estimate.cells import cell_recipes, precision_recipe
from roofline.estimate.resources import Resources, make_layout
from roofline.estimate.step import BOUNDS, evaluate_step
from roofline.estimate.workload import make_workload
from roofline.results.plan import CpuPlan, LayoutResult, PlanResult
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform


#: layouts whose throughput is within this fraction of the best count as a tie
TIE = 0.01


def layouts(cores: int) -> list[int]:
    """Cores per instance: powers of two up to the socket, and the whole socket."""
    out = [c for c in (2**i for i in range(16)) if c <= cores]
    return out + ([cores] if out[-1] != cores else [])


def plan_cpu(platform: Platform, model: ModelSpec, precision: str, *, batch: int = 1, seq_len: int = 256,
             phase: str | None = None, context: int | None = None, bandwidth: str = "measured",
             memory_model: str = "levels", cores: int | None = None, target_rps: float | None = None,
             latency_s: float | None = None, utilization: float = 0.7, price_per_hour: float | None = None) -> CpuPlan:
    work = make_workload(model, phase, batch, seq_len, context)
    recipe = precision_recipe(precision, model)
    cores = int(platform.cores_per_socket.value) if cores is None else cores
    sockets = int(platform.sockets.value)
    layout = make_layout(platform, cores=cores, instance_cores=np.array(layouts(cores), dtype=float),
                         socket_busy=True)
    res = Resources(platform, layout, memory_model, bandwidth)
    gemms, lm = work.gemms()
    step = evaluate_step(res, cell_recipes(recipe, gemms, lm, model=model), gemms, ops=work.ops(),
                         non_gemm_mode=recipe.non_gemm_mode, set_count=work.weight_set_counts(gemms))
    # one instance's latency: the amortised step time times the instances sharing the platform
    latency = step.step_time * layout.total_instances
    split = step.time_by_bound() * layout.total_instances[:, None]
    results = []
    for i in range(len(layout.instance_cores)):
        parts = {BOUNDS[b]: float(split[i, b]) for b in range(len(BOUNDS)) if split[i, b] > 0}
        inst = batch / float(latency[i])
        n_i = float(layout.instances[i])
        results.append(LayoutResult(
            cores_per_instance=int(layout.instance_cores[i]), instances_per_socket=int(n_i),
            latency_s=float(latency[i]), instance_rps=inst, socket_rps=inst * n_i, server_rps=inst * n_i * sockets,
            bound=BOUNDS[int(step.bound[i])], time_split=parts,
            meets_latency=None if latency_s is None else bool(latency[i] <= latency_s),
        ))
    resident = bool(step.fits_llc) and res.b_llc is not None
    meeting = [r for r in results if r.meets_latency is not False]
    notes = []
    if meeting:
        top = max(r.server_rps for r in meeting)
        tied = [r for r in meeting if r.server_rps >= (1 - TIE) * top]
        best = min(tied, key=lambda r: r.cores_per_instance)
        reason = "most throughput per server" + (" among the layouts meeting the latency target" if latency_s else "")
        if len(tied) > 1:
            reason += (f"; {len(tied)} layouts tie within {TIE:.0%} (the roofline has no parallel-efficiency term): "
                       "the smallest instance, which scales best in practice")
    else:
        best = min(results, key=lambda r: r.latency_s)
        reason = "no layout meets the latency target: the lowest-latency one"
        notes.append(f"no layout meets {latency_s * 1e3:g} ms: the fastest takes {best.latency_s * 1e3:.3g} ms")
    servers = math.ceil(target_rps / (best.server_rps * utilization)) if target_rps else None
    cost = (price_per_hour / (best.server_rps * utilization * 3600) * 1e6) if price_per_hour is not None else None
    return CpuPlan(
        cpu=platform.name, description=platform.description, sockets=sockets, cores_per_socket=cores,
        weights_llc_resident=resident, layouts=results, best=best, best_reason=reason, servers_needed=servers,
        price_per_hour=price_per_hour, cost_per_million_requests=cost, notes=notes,
    )


def plan(platforms: list[Platform], model: ModelSpec, precision: str, *, prices: list[float] | None = None,
         target_rps: float | None = None, latency_s: float | None = None, utilization: float = 0.7,
         **kw) -> PlanResult:
    if prices is not None and len(prices) != len(platforms):
        raise UserError(f"--price-per-hour: {len(prices)} price(s) for {len(platforms)} CPU(s); give one per CPU")
    if not 0 < utilization <= 1:
        raise UserError(f"--utilization {utilization}: a fraction in (0, 1]")
    if target_rps is not None and not target_rps > 0:
        raise UserError(f"--target-rps {target_rps}: must be positive")
    if latency_s is not None and not latency_s > 0:
        raise UserError(f"--p99-ms {latency_s * 1e3:g}: must be positive")
    if prices and any(not p >= 0 for p in prices):
        raise UserError("--price-per-hour: prices must be 0 or more")
    cpus = [plan_cpu(p, model, precision, target_rps=target_rps, latency_s=latency_s, utilization=utilization,
                     price_per_hour=prices[i] if prices else None, **kw) for i, p in enumerate(platforms)]
    notes = ["latency is the roofline time of one request batch on an idle instance (no queueing): a lower bound "
             "on the p99; utilization leaves the headroom queueing needs"]
    return PlanResult(model=model.name, precision=precision, batch=kw.get("batch", 1), seq_len=kw.get("seq_len", 256),
                      target_rps=target_rps, latency_target_s=latency_s, utilization=utilization, cpus=cpus,
                      notes=notes)
