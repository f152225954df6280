"""The step evaluator: the roofline of one step (a forward pass, a prefill, a decode step) of one
precision on a platform under a layout, GEMMs and non-GEMM work together. Estimate, sweep, plan,
decode, the per-shape ceilings of `validate`, calibrate and check all call it.

For each GEMM ``Y[M,N] = X[M,K] . W[N,K]^T`` with per-call flops ``F``, bytes ``D_X, D_W, D_Y``
(scales included) and extra vector work ``E`` (dequantization, compensation, group rescaling):

- ``t_compute = F / P + E / P_vector``; for a GGUF block, whose unpacking runs on the vector integer pipes
  beside the multiply-accumulates, ``max(F / P, E / P_int)`` (:mod:`roofline.spec.cores`)
- ``t_memory = D_W / B(level_W) + (D_X + D_Y) / B(level_XY)``: the weights' level is decided by the
  whole weight set (one copy per LLC domain: it must survive a pass over every other weight), X and
  Y's by one call's ``D_X + D_Y`` against one instance's L2 and LLC share (:mod:`roofline.calc.levels`)
- ``t = max(t_compute, t_memory)``; the GEMM is bound by compute, or by the level that moves most of
  its memory time. In the paper model this is ``min(P, AI x B_eff)`` exactly.

Each non-GEMM operation (:mod:`roofline.calc.ops`) likewise: its flops on the matmul or vector
path, its activation bytes at the level of one call's working set, its KV-cache bytes at the level
of the whole cache, an unfused attention's scores at the level of one call's scores of one layer. A mode that
fuses the MLP activation into the up-projection's epilogue
(:attr:`~roofline.spec.vocab.NonGemmMode.fuses_mlp_activation`: INT8 pipelines) keeps its ops and
moves no bytes for it.

Arrays broadcast over a leading axis (sweep points, plan layouts, a batch sweep): GEMM arrays are
``(..., S)`` and operation arrays ``(..., O)``. Times are for one step on the whole platform (all
instances together, i.e. amortised); an instance's latency is that times the instances.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from roofline.calc.aggregate import aggregate_throughput
from roofline.calc.gemm import (
    activation_meta_bytes,
    gemm_flops,
    gemm_times,
    kernel_extra_ops,
    operand_bytes,
    unpack_ops,
    weight_meta_bytes,
)
from roofline.calc.levels import DRAM, L2, LEVELS, LLC, level_bandwidth, level_of, llc_resident
from roofline.calc.ops import Op
from roofline.calc.shapes import GemmList
from roofline.model.resources import Resources
from roofline.spec.precision import PrecisionRecipe
from roofline.spec.vocab import Bound, MemoryModel, NonGemmMode
from roofline.units import DTYPE_BYTES

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: what bounds a GEMM, an operation or a step, by the index the evaluator stores: 0 is compute, 1 + a level index
BOUNDS: tuple[Bound, ...] = tuple(Bound)
assert BOUNDS[1:] == tuple(Bound(level) for level in LEVELS)
COMPUTE = 0


@dataclass(frozen=True)
class GemmEval:
    """Per GEMM row (``(..., S)``), one call each; ``count`` calls per step."""

    count: np.ndarray
    flops: np.ndarray
    d_x: np.ndarray
    d_w: np.ndarray
    d_y: np.ndarray
    t_compute: np.ndarray
    t_memory: np.ndarray
    xy_level: np.ndarray
    """level of X and Y (index into LEVELS)"""
    bound: np.ndarray
    """index into BOUNDS"""
    peak: np.ndarray
    """the matmul path's peak of each row"""
    t_extra: np.ndarray
    """the part of ``t_compute`` beyond the multiply-accumulates' ``F / P``: extra vector work ``E / P_vector``
    (dequantization, compensation, group rescaling), or for a GGUF block ``max(0, E / P_int - F / P)``; it does not
    shrink with M as the multiply-accumulates' share does"""
    t_unpack: np.ndarray
    """the weights' unpacking, ``d N K / P_vector``, part of ``t_extra``; for a GGUF block ``d N K / P_int`` on the
    integer pipes, beside the multiply-accumulates (so ``t_extra`` holds only what it adds to them). Once per call:
    what a kernel that unpacks each block again for every activation row repeats M times"""
    t_weights: np.ndarray
    """the part of ``t_memory`` that streams the weights, ``D_W / B(level_W)`` (the same whatever M)"""
    t_core_weights: np.ndarray
    """the same stream at what the busy cores pull from ``level_W`` on their own, ``D_W / B_c(level_W)``
    (:meth:`~roofline.model.resources.Resources.core_stream_bandwidths`; NaN: the platform gives no per-core figure)"""

    @property
    def nbytes(self) -> np.ndarray:
        return self.d_x + self.d_w + self.d_y

    @property
    def time(self) -> np.ndarray:
        """one call"""
        return np.maximum(self.t_compute, self.t_memory)

    @property
    def attainable(self) -> np.ndarray:
        """``P_i = F / t``"""
        return self.flops / self.time

    @property
    def bandwidth(self) -> np.ndarray:
        """the bandwidth the call sees over all its bytes: ``D / t_memory`` (``B_eff`` in the paper model)"""
        return self.nbytes / self.t_memory

    @property
    def compute_bound(self) -> np.ndarray:
        return self.t_compute >= self.t_memory


@dataclass(frozen=True)
class OpsEval:
    """Per non-GEMM operation (``(..., O)``), all its calls in one step."""

    names: tuple[str, ...]
    t_compute: np.ndarray
    t_memory: np.ndarray
    act_level: np.ndarray
    kv_level: np.ndarray
    bound: np.ndarray
    matmul: np.ndarray
    """(O,): attention-like operations on the matmul path"""
    reads_kv: np.ndarray
    """(O,): operations that read the KV cache"""

    @property
    def time(self) -> np.ndarray:
        return np.maximum(self.t_compute, self.t_memory)


@dataclass(frozen=True)
class StepEval:
    """One step of one precision (whole platform, all instances together)."""

    gemm: GemmEval
    ops: OpsEval
    weight_bytes: np.ndarray
    """the weight set: every GEMM weight and its scales, one copy (every expert of a mixture of experts)"""
    weight_read_bytes: np.ndarray
    """the weights and scales one step reads (a mixture of experts: the experts its tokens chose)"""
    weight_level: np.ndarray
    """index into LEVELS"""
    fits_llc: np.ndarray
    """the weight set fits one LLC domain (resident when the platform gives an LLC bandwidth)"""
    memory_model: MemoryModel
    l2_capacity: np.ndarray
    """bytes one instance's L2 holds (0: not modelled)"""
    llc_capacity: np.ndarray
    """bytes of LLC one instance's activations can use (0: not modelled)"""

    points: np.ndarray | None = None
    """a sweep's points as indices into the GEMMs' leading axis (the distinct row sets the GEMMs were
    evaluated on); None: the GEMMs are per point already"""
    tier_share: np.ndarray | None = None
    """the share of the resident bytes read from the platform's second memory tier (:mod:`roofline.calc.tiers`);
    None: no tier"""
    resident_bytes: np.ndarray | None = None
    """the bytes kept resident per socket that share was found for; None: no tier"""

    def _per_point(self, per_gemm_point: np.ndarray) -> np.ndarray:
        return per_gemm_point if self.points is None else per_gemm_point[self.points]

    @property
    def gemms(self) -> GemmEval:
        """the GEMM rows of every point (gathered from the distinct row sets when there are any)"""
        if self.points is None:
            return self.gemm
        return GemmEval(*(np.asarray(getattr(self.gemm, f.name))[self.points] for f in dataclasses.fields(GemmEval)))

    @functools.cached_property
    def gemm_time(self) -> np.ndarray:
        return self._per_point((self.gemm.count * self.gemm.time).sum(axis=-1))

    @functools.cached_property
    def non_gemm_time(self) -> np.ndarray:
        return self.ops.time.sum(axis=-1)

    @property
    def attention_time(self) -> np.ndarray:
        return (self.ops.time * self.ops.matmul).sum(axis=-1)

    @property
    def step_time(self) -> np.ndarray:
        return self.gemm_time + self.non_gemm_time

    @property
    def gemm_flops(self) -> np.ndarray:
        return self._per_point((self.gemm.count * self.gemm.flops).sum(axis=-1))

    @property
    def aggregate(self) -> np.ndarray:
        """``P_agg = sum c_i F_i / sum c_i t_i`` (:func:`~roofline.calc.aggregate.aggregate_throughput`)"""
        return self._per_point(aggregate_throughput(self.gemm.count, self.gemm.flops, self.gemm.attainable))

    def time_by_bound(self) -> np.ndarray:
        """``(..., 4)``: the step's seconds in operations bound by compute, L2, LLC and DRAM."""
        g = self.gemm.count * self.gemm.time
        o = self.ops.time
        gemm = np.stack([(g * (self.gemm.bound == b)).sum(axis=-1) for b in range(len(BOUNDS))], axis=-1)
        return self._per_point(gemm) + np.stack([(o * (self.ops.bound == b)).sum(axis=-1)
                                                 for b in range(len(BOUNDS))], axis=-1)

    @property
    def bound(self) -> np.ndarray:
        """index into BOUNDS: what most of the step's time is bound by"""
        return np.argmax(self.time_by_bound(), axis=-1)

    def at(self, index: int | tuple[int, ...]) -> StepEval:
        """The step of one point of the leading axes (a plan layout, a sweep point): every array
        field indexed there, so that the scalar consumers (the realistic model) can take it."""
        g = self.gemms
        lead = g.flops.shape[:-1]

        def pick(v: np.ndarray) -> np.ndarray:  # a per-point figure, broadcast to the leading axes first
            return np.broadcast_to(v, lead)[index]

        gemm = GemmEval(*(np.asarray(getattr(g, f.name))[index] for f in dataclasses.fields(GemmEval)))
        ops = dataclasses.replace(self.ops, **{k: getattr(self.ops, k)[index] for k in
                                               ("t_compute", "t_memory", "act_level", "kv_level", "bound")})
        picked: dict[str, Any] = {k: pick(getattr(self, k)) for k in (
            "weight_bytes", "weight_read_bytes", "weight_level", "fits_llc", "l2_capacity", "llc_capacity")}
        return dataclasses.replace(self, gemm=gemm, ops=ops, points=None, **picked)

    @property
    def memory_levels(self) -> dict[str, str]:
        """The level each tensor class was priced at (the most common one over GEMMs and operations)."""
        def common(levels: np.ndarray) -> str:
            flat = np.asarray(levels).ravel()
            return LEVELS[int(np.bincount(flat, minlength=3).argmax())] if flat.size else "none"

        act = np.concatenate([np.ravel(self.gemm.xy_level), np.ravel(self.ops.act_level[..., ~self.ops.matmul])])
        return {"weights": common(self.weight_level), "activations": common(act),
                "non_gemm": common(self.ops.act_level),
                "kv_cache": common(self.ops.kv_level[..., self.ops.reads_kv]) if self.ops.reads_kv.any() else "none"}


def resident_per_socket(res: Resources, weight_set: np.ndarray, ops: Sequence[Op], mode: NonGemmMode,
                        kv_dtype: str | None) -> np.ndarray:
    """Bytes a step keeps resident per socket: one copy of the weight set per socket (an instance over several
    sockets spreads its copy over them) and each instance's KV cache and recurrent state."""
    act = NonGemmMode(mode).activation_dtype
    e_kv = DTYPE_BYTES[kv_dtype or act]
    kv = sum((np.asarray(o.kv_working_set, dtype=float) * e_kv + np.asarray(o.state_working_set, dtype=float)
              for o in ops), np.zeros(()))
    per_socket = np.asarray(res.layout.instances, dtype=float)  # instances per socket (a share where one spans)
    return np.asarray(weight_set, dtype=float) * np.minimum(per_socket, 1.0) + kv * per_socket


def evaluate_step(res: Resources, cells: Sequence[PrecisionRecipe], gemms: GemmList, *, m: np.ndarray | None = None,
                  ops: Sequence[Op] = (), non_gemm_mode: NonGemmMode = NonGemmMode.FP32, kv_dtype: str | None = None,
                  set_count: np.ndarray | None = None, count: np.ndarray | None = None,
                  rows: np.ndarray | None = None, ops_eval: OpsEval | None = None) -> StepEval:
    """The roofline of one step: ``cells[j]`` is the recipe of GEMM row ``j``; ``m`` replaces the rows'
    M with an array ``(..., S)`` (a sweep); ``ops`` are the non-GEMM operations, priced in
    ``non_gemm_mode`` with the KV cache in ``kv_dtype`` (default: the activation dtype);
    ``set_count``: the distinct weight matrices of each row in the whole model (default: its count),
    e.g. every expert of a mixture of experts, whose steps read only some of them; ``count`` replaces the
    rows' calls per step with an array ``(..., S)`` (a mixture of experts' sweep: the distinct experts a
    step runs grow with its tokens); ``rows``: the GEMMs' ``m`` and ``count`` are a sweep's distinct row
    sets ``(U, S)`` and point ``p`` is row set ``rows[p]`` (its operations come per point); ``ops_eval``:
    the operations already evaluated in this mode on these resources (another precision's step)."""
    m = np.asarray(gemms.m if m is None else m, dtype=float)
    lead = np.broadcast_shapes(m.shape[:-1], np.shape(res.layout.instance_cores))
    m = np.broadcast_to(m, (*lead, m.shape[-1]))  # a layout axis (plan) and a sweep axis are the same leading axis
    n, k = gemms.n.astype(float), gemms.k.astype(float)
    count = np.asarray(gemms.count if count is None else count, dtype=float)
    vector = res.vector_peak
    paths = {r.compute_dtype: res.path(r.compute_dtype) for r in cells}

    groups: dict[int, list[int]] = {}
    for j, r in enumerate(cells):
        groups.setdefault(id(r), []).append(j)

    def per_recipe(f: Callable[[PrecisionRecipe, np.ndarray, np.ndarray], ArrayLike]) -> np.ndarray:
        """``f(recipe, columns, m of those columns)`` for each distinct recipe's GEMM rows, as one ``(..., S)`` array."""
        out = np.empty(m.shape)
        for cols in groups.values():
            idx = np.asarray(cols)
            out[..., idx] = f(cells[cols[0]], idx, m[..., idx])
        return out

    peak = per_recipe(lambda r, j, mj: paths[r.compute_dtype].peak if np.ndim(paths[r.compute_dtype].peak) == 0
                      else np.expand_dims(paths[r.compute_dtype].peak, -1))
    flops = gemm_flops(m, n, k)
    e_x, e_w, e_y = (np.array([getattr(r, e) for r in cells], dtype=float) for e in ("e_x", "e_w", "e_y"))
    x_meta = per_recipe(lambda r, j, mj: activation_meta_bytes(mj, r.x_scale, r.scale_bytes))
    w_meta = np.array([float(weight_meta_bytes(n[j], k[j], r.w_scale, r.w_group_size, r.scale_bytes, r.w_zero_point))
                       for j, r in enumerate(cells)])  # (S,): the weights do not depend on M
    d_x, d_w, d_y = operand_bytes(m, n, k, e_x, e_w, e_y, x_meta, w_meta)
    extra = per_recipe(lambda r, j, mj: kernel_extra_ops(mj, n[j], k[j], r.dequant_ops_per_weight, r.activation_sum,
                                                         r.w_group_size, r.compute_dtype == "int8"))
    # a GGUF block's unpacking runs on the vector integer ALU pipes, beside the multiply-accumulates: at that rate,
    # and the larger of the two times (each a lower bound on the call's compute time); other recipes' extra work on
    # the FP32 vector path, after their multiply-accumulates
    blocks = np.array([r.block is not None for r in cells], dtype=bool)
    int_alu = res.int_alu_peak if blocks.any() else None

    w_set = ((count if set_count is None else np.asarray(set_count, dtype=float)) * d_w).sum(axis=-1)
    resident_set = None
    if res.platform.memory_tiers:  # DRAM's bandwidth blended with the second tier's for what this step keeps resident
        resident_set = resident_per_socket(res, w_set, ops, non_gemm_mode, kv_dtype)
        res = res.tiered(resident_set)
        ops_eval = None  # the non-GEMM work priced again at that bandwidth
    fits = llc_resident(w_set, res.llc_domain)
    resident = fits & (res.b_llc is not None)
    w_level = np.where(resident, LLC, DRAM)
    if res.levels:
        w_level = np.where((w_set <= res.l2_capacity) & (res.l2_capacity > 0), L2, w_level)
    b_l2, b_llc, b_dram = res.bandwidths()
    llc_cap = res.llc_capacity()
    xy_level = level_of(d_x + d_y, np.expand_dims(res.l2_capacity, -1), np.expand_dims(llc_cap, -1))
    def bw(level: ArrayLike) -> np.ndarray:
        return level_bandwidth(level, *(np.expand_dims(b, -1) for b in (b_l2, b_llc, b_dram)))
    w_lv = np.expand_dims(w_level, -1)
    vec = np.expand_dims(vector, -1)
    t_compute, t_memory, t_w, t_xy = gemm_times(flops, d_x, d_w, d_y, peak, bw(w_lv), bw(xy_level), extra, vec)
    c_l2, c_llc, c_dram = res.core_stream_bandwidths()
    t_core_w = d_w / level_bandwidth(w_lv, *(np.expand_dims(b, -1) for b in (c_l2, c_llc, c_dram)))
    unpack_ops_ = unpack_ops(n, k, [r.dequant_ops_per_weight for r in cells])
    t_extra = np.broadcast_to(extra / vec, flops.shape)
    t_unpack = np.broadcast_to(unpack_ops_ / vec, flops.shape)
    if int_alu is not None:
        alu = np.expand_dims(int_alu, -1)
        t_block = np.maximum(flops / peak, extra / alu)
        t_compute = np.where(blocks, t_block, t_compute)
        t_extra = np.where(blocks, t_block - flops / peak, t_extra)
        t_unpack = np.where(blocks, unpack_ops_ / alu, t_unpack)
    mem_bound = 1 + np.where(t_w >= t_xy, w_lv, xy_level)
    gemm = GemmEval(
        count=np.broadcast_to(count, flops.shape), flops=flops, d_x=d_x, d_w=np.broadcast_to(d_w, flops.shape),
        d_y=d_y, t_compute=t_compute,
        t_memory=t_memory, xy_level=np.broadcast_to(xy_level, flops.shape),
        bound=np.where(t_compute >= t_memory, COMPUTE, mem_bound), peak=peak,
        t_extra=np.broadcast_to(t_extra, flops.shape), t_unpack=np.broadcast_to(t_unpack, flops.shape),
        t_weights=np.broadcast_to(t_w, flops.shape), t_core_weights=np.broadcast_to(t_core_w, flops.shape),
    )
    weight_read = (count * d_w).sum(axis=-1)
    points = None if rows is None else np.asarray(rows)
    if points is not None:  # the distinct row sets' figures, per point
        weight_read = np.broadcast_to(weight_read, flops.shape[:-1])[points]
    lead = flops.shape[:-1] if points is None else points.shape
    if ops_eval is None:
        ops_eval = evaluate_ops(res, ops, non_gemm_mode, kv_dtype, llc_cap, lead)
    return StepEval(gemm=gemm, ops=ops_eval, points=points,
                    weight_bytes=w_set, weight_read_bytes=weight_read, weight_level=w_level, fits_llc=fits, memory_model=res.memory_model,
                    l2_capacity=np.asarray(res.l2_capacity, dtype=float), llc_capacity=np.asarray(llc_cap, dtype=float),
                    tier_share=res.tier_share, resident_bytes=resident_set)


def evaluate_ops(res: Resources, ops: Sequence[Op], mode: NonGemmMode, kv_dtype: str | None, llc_cap: np.ndarray,
                 lead: tuple[int, ...]) -> OpsEval:
    """Each non-GEMM operation's compute and memory time in ``mode`` (module docstring)."""
    matmul = np.array([o.matmul for o in ops], dtype=bool)
    reads_kv = np.array([bool(np.any(np.asarray(o.kv_elements) > 0)) for o in ops], dtype=bool)
    if not ops:
        empty = np.zeros((*lead, 0))
        return OpsEval((), empty, empty, empty.astype(np.int8), empty.astype(np.int8), empty.astype(int), matmul,
                       reads_kv)
    act, matmul_peak, vector_peak = res.non_gemm_peaks(mode)
    e_act, e_kv = DTYPE_BYTES[act], DTYPE_BYTES[kv_dtype or act]
    b_l2, b_llc, b_dram = res.bandwidths()
    tc, tm, la, lk, bd = [], [], [], [], []
    for o in ops:
        t_c = (np.asarray(o.flops, dtype=float) / (matmul_peak if o.matmul else vector_peak)
               + np.asarray(o.vector_flops, dtype=float) / vector_peak)
        if o.name == "mlp_activation" and mode.fuses_mlp_activation:  # in the GEMM's epilogue: no pass of its own
            o = dataclasses.replace(o, act_elements=0.0 * np.asarray(o.act_elements), act_working_set=np.asarray(0.0))
        a_level = level_of(np.asarray(o.act_working_set) * e_act, res.l2_capacity, llc_cap)
        k_level = level_of(np.asarray(o.kv_working_set) * e_kv, res.l2_capacity, llc_cap)
        t_a = np.asarray(o.act_elements, dtype=float) * e_act / level_bandwidth(a_level, b_l2, b_llc, b_dram)
        t_k = np.asarray(o.kv_elements, dtype=float) * e_kv / level_bandwidth(k_level, b_l2, b_llc, b_dram)
        if np.any(np.asarray(o.state_bytes) > 0):  # a recurrent state, in its own type (linear attention)
            k_level = level_of(np.asarray(o.state_working_set, dtype=float), res.l2_capacity, llc_cap)
            t_k = t_k + np.asarray(o.state_bytes, dtype=float) / level_bandwidth(k_level, b_l2, b_llc, b_dram)
        if np.any(np.asarray(o.comm_bytes) > 0):  # a tensor-parallel split's all-reduce buffers, in their own type
            c_level = level_of(np.asarray(o.comm_working_set, dtype=float), res.l2_capacity, llc_cap)
            t_c_mem = np.asarray(o.comm_bytes, dtype=float) / level_bandwidth(c_level, b_l2, b_llc, b_dram)
            a_level = np.where(t_c_mem > t_a, c_level, a_level)
            t_a = t_a + t_c_mem
        if np.any(np.asarray(o.score_bytes) > 0):  # unfused attention's scores, f32 through memory
            s_level = level_of(np.asarray(o.score_working_set, dtype=float), res.l2_capacity, llc_cap)
            t_s = np.asarray(o.score_bytes, dtype=float) / level_bandwidth(s_level, b_l2, b_llc, b_dram)
            a_level = np.where(t_s > t_a, s_level, a_level)
            t_a = t_a + t_s
        t_m = t_a + t_k
        tc.append(t_c)
        tm.append(t_m)
        la.append(a_level)
        lk.append(k_level)
        bd.append(np.where(t_c >= t_m, COMPUTE, 1 + np.where(t_a >= t_k, a_level, k_level)))
    shape = np.broadcast_shapes(lead, *(np.shape(x) for x in tc + tm + la + lk))

    def stack(xs: list[np.ndarray]) -> np.ndarray:
        return np.stack([np.broadcast_to(x, shape) for x in xs], axis=-1)

    return OpsEval(tuple(o.name for o in ops), stack(tc), stack(tm), stack(la), stack(lk), stack(bd), matmul, reads_kv)
