"""``roofline sweep``: a grid of models x CPUs x precisions x batch x sequence, row per point.

For each (model, CPU, precision) the whole (batch x sequence) plane is one calculator call:
GEMM rows ``M`` become a ``(points, shapes)`` array and the non-GEMM work an ``(ops, points)``
array, so a million points take seconds.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from roofline.calc.gemm_roofline import gemm_roofline
from roofline.calc.llc import llc_resident
from roofline.calc.non_gemm import decode_non_gemm, op_roofline, transformer_non_gemm
from roofline.estimate.grid import cell_inputs, lm_head_recipe
from roofline.estimate.paths import choose_path, non_gemm_peaks
from roofline.estimate.workload import make_workload
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.precision import get_recipe
from roofline.units import DTYPE_BYTES

COLUMNS = ("model", "cpu", "precision", "phase", "batch", "seq_len", "context", "m", "gemm_time_s", "step_time_s",
           "throughput_per_s", "aggregate_ops_per_s", "bound", "weight_bytes", "llc_resident")


@dataclass(frozen=True)
class Plane:
    """One (model, CPU, precision): every column an array over the (batch x sequence) points."""

    model: str
    cpu: str
    precision: str
    phase: str
    batch: np.ndarray
    seq_len: np.ndarray
    context: int | None
    m: np.ndarray
    gemm_time_s: np.ndarray
    step_time_s: np.ndarray
    aggregate_ops_per_s: np.ndarray
    bound: np.ndarray
    weight_bytes: float
    llc_resident: bool

    def __len__(self) -> int:
        return len(self.batch)

    def rows(self) -> Iterator[dict]:
        throughput = self.batch / self.step_time_s
        for i in range(len(self)):
            yield {
                "model": self.model, "cpu": self.cpu, "precision": self.precision, "phase": self.phase,
                "batch": int(self.batch[i]), "seq_len": int(self.seq_len[i]), "context": self.context,
                "m": int(self.m[i]), "gemm_time_s": float(self.gemm_time_s[i]), "step_time_s": float(self.step_time_s[i]),
                "throughput_per_s": float(throughput[i]), "aggregate_ops_per_s": float(self.aggregate_ops_per_s[i]),
                "bound": str(self.bound[i]), "weight_bytes": self.weight_bytes, "llc_resident": self.llc_resident,
            }


def plane(platform: Platform, model: ModelSpec, precision: str, batches: list[int], seq_lens: list[int], *,
          phase: str | None = None, context: int | None = None, bandwidth: str = "measured") -> Plane:
    # checks every combination's limits once, on the largest
    work = make_workload(model, phase, max(batches), max(seq_lens), context)
    recipe = get_recipe(precision)
    b, s = (a.ravel().astype(float) for a in np.meshgrid(batches, seq_lens, indexing="ij"))
    decode = work.phase == "decode"
    tokens = b if decode else b * s
    gemms, lm = work.gemms()
    m = np.where(lm, b[:, None], tokens[:, None])  # (points, shapes)
    cells = [lm_head_recipe(recipe, False) if is_lm else recipe for is_lm in lm]
    sockets = int(platform.sockets.value)
    ci = cell_inputs(platform, cells, m, gemms.n, gemms.k, sockets)
    weight_bytes = float((gemms.count * (ci.e_w[0] * gemms.n * gemms.k + ci.w_meta[0])).sum())
    b_mem = platform.dram_bytes_per_s(sockets, bandwidth)
    b_llc = platform.llc_bytes_per_s(sockets)
    resident = bool(llc_resident(weight_bytes, platform.llc_domain_bytes)) and b_llc is not None
    vector = choose_path(platform, "fp32", sockets).peak
    g = gemm_roofline(m, gemms.n, gemms.k, ci.e_x, ci.e_w, ci.e_y, ci.peak, b_mem,
                      b_llc if b_llc is not None else b_mem, resident, x_meta=ci.x_meta, w_meta=ci.w_meta,
                      extra_ops=ci.extra, extra_peak=vector)
    times = gemms.count * g.time
    gemm_time = times.sum(axis=1)
    flops = (gemms.count * g.flops).sum(axis=1)
    mt = model
    common = dict(hidden=mt.hidden_size, intermediate=mt.intermediate_size, layers=mt.num_hidden_layers,
                  heads=mt.num_attention_heads, kv_heads=mt.kv_heads, head_dim=mt.head_size, gated_mlp=mt.gated_mlp)
    ops = (decode_non_gemm(batch=b, context=work.context, **common) if decode else
           transformer_non_gemm(batch=b, seq_len=s, causal=work.phase == "prefill", **common))
    act, matmul_peak, _ = non_gemm_peaks(platform, recipe.non_gemm_mode, sockets)
    t_c, t_m = op_roofline(ops, matmul_peak, vector, DTYPE_BYTES[act], DTYPE_BYTES[act], b_mem)
    non = np.maximum(t_c, t_m)
    compute = (times * g.compute_bound).sum(axis=1) + (non * (t_c >= t_m)).sum(axis=0)
    step = gemm_time + non.sum(axis=0)
    memory_label = "LLC" if resident else "DRAM"
    bound = np.where(compute >= step - compute, "compute", memory_label)
    return Plane(model.name, platform.name, precision, work.phase, b.astype(int), s.astype(int),
                 work.context if decode else None, tokens.astype(int), gemm_time, step, flops / gemm_time, bound,
                 weight_bytes, resident)


def sweep(platforms: list[Platform], models: list[ModelSpec], precisions: list[str], batches: list[int],
          seq_lens: list[int], **kw) -> Iterator[Plane]:
    for model, platform, precision in itertools.product(models, platforms, precisions):
        yield plane(platform, model, precision, batches, seq_lens, **kw)
