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

from roofline.calc.gemm_roofline import gemm_roofline
from roofline.calc.llc import llc_resident
from roofline.calc.non_gemm import op_roofline
from roofline.errors import UserError
from roofline.estimate.grid import cell_inputs, lm_head_recipe
from roofline.estimate.paths import choose_path, non_gemm_peaks
from roofline.estimate.workload import make_workload
from roofline.results.plan import CpuPlan, LayoutResult, PlanResult
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.precision import get_recipe
from roofline.units import DTYPE_BYTES


#: layouts whose throughput is within this fraction of the best count as a tie
TIE = 0.01


def layouts(cores: int) -> list[int]:
    """Cores per instance: powers of two up to the socket, and the whole socket."""
    out = [c for c in (2**i for i in range(16)) if c <= cores]
    return out + ([cores] if out[-1] != cores else [])


def plan_cpu(platform: Platform, model: ModelSpec, precision: str, *, batch: int = 1, seq_len: int = 256,
             phase: str | None = None, context: int | None = None, bandwidth: str = "measured",
             target_rps: float | None = None, latency_s: float | None = None, utilization: float = 0.7,
             price_per_hour: float | None = None) -> CpuPlan:
    work = make_workload(model, phase, batch, seq_len, context)
    recipe = get_recipe(precision)
    cores = int(platform.cores_per_socket.value)
    sockets = int(platform.sockets.value)
    c = np.array(layouts(cores), dtype=float)
    n = np.floor(cores / c)
    share = (c / cores)[:, None]  # (L, 1)

    gemms, lm = work.gemms()
    cells = [lm_head_recipe(recipe, False) if is_lm else recipe for is_lm in lm]
    ci = cell_inputs(platform, cells, gemms.m, gemms.n, gemms.k, 1)
    weight_bytes = float((gemms.count * (ci.e_w * gemms.n * gemms.k + ci.w_meta)).sum())
    b_mem = platform.dram_bytes_per_s(1, bandwidth) / n[:, None]
    b_llc_socket = platform.llc_bytes_per_s(1)
    resident = bool(llc_resident(weight_bytes, platform.llc_domain_bytes)) and b_llc_socket is not None
    b_llc = (b_llc_socket / n[:, None]) if b_llc_socket is not None else b_mem
    vector = choose_path(platform, "fp32", 1).peak * share
    g = gemm_roofline(gemms.m, gemms.n, gemms.k, ci.e_x, ci.e_w, ci.e_y, ci.peak * share, b_mem, b_llc, resident,
                      x_meta=ci.x_meta, w_meta=ci.w_meta, extra_ops=ci.extra, extra_peak=vector)
    gemm_t = gemms.count * g.time  # (L, S)
    ops = work.non_gemm()
    act, matmul_peak, _ = non_gemm_peaks(platform, recipe.non_gemm_mode, 1)
    t_c, t_m = op_roofline(ops, matmul_peak * share, vector, DTYPE_BYTES[act], DTYPE_BYTES[act], b_mem)
    non_t = np.maximum(t_c, t_m)  # (L, ops)
    latency = gemm_t.sum(axis=1) + non_t.sum(axis=1)

    mem_kind = "LLC" if resident else "DRAM"
    split = {
        "compute": (gemm_t * g.compute_bound).sum(axis=1) + (non_t * (t_c >= t_m)).sum(axis=1),
        mem_kind: (gemm_t * ~g.compute_bound).sum(axis=1),
    }
    split["DRAM"] = split.get("DRAM", 0) + (non_t * (t_c < t_m)).sum(axis=1)
    results = []
    for i in range(len(c)):
        parts = {k: float(v[i]) for k, v in split.items()}
        inst = batch / float(latency[i])
        results.append(LayoutResult(
            cores_per_instance=int(c[i]), instances_per_socket=int(n[i]), latency_s=float(latency[i]),
            instance_rps=inst, socket_rps=inst * n[i], server_rps=inst * n[i] * sockets,
            bound=max(parts, key=parts.get), time_split=parts,
            meets_latency=None if latency_s is None else bool(latency[i] <= latency_s),
        ))
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
