"""The probe's GEMM peaks: candidate kernels per dtype, each sized from one short trial call, and the
peak chosen as the path a real model runs.

- **Sizing.** A candidate is first called on a small ``TRIAL_SIZE``-cubed GEMM (after one warm-up
  call that builds its primitive); the cube law predicts its call at the probe's size, and a path
  too slow for its share of the time budget is measured on the largest shape that fits (a multiple
  of 64 or 128). The result says so: on a Zen 1 guest BF16 ``aten.mm`` runs emulated at 0.7 Gops/s,
  24 s per 2048^3 call, where the probe once spent 22 minutes.
- **What is a peak.** Outputs are checked against an exact (INT8) or float64 (FP32, BF16) reference:
  a kernel that saturates is not a peak. An emulated kernel (``aten._int_mm`` without VNNI or AMX;
  every BF16 kernel without AVX512_BF16 or AMX) is not the peak while a native candidate of its
  dtype gave a correct answer. INT8 is measured where quantized models run it: oneDNN's
  ``qlinear_pointwise`` on u8 activations (what PT2E's X86InductorQuantizer emits) and on s8 ones
  (what torchao's linears dispatch to under Inductor freezing). Without VNNI or AMX the activations
  are 7-bit (``reduce_range``: u8 in [0, 127], s8 in [-64, 63]), as real quantized models on such
  parts are calibrated, since AVX2's ``vpmaddubsw`` saturates full-range u8 x s8 pairs.

The selection and the sizing are plain Python over :class:`Candidate` objects (tests drive them
with fake kernels and a fake clock); :func:`torch_candidates` builds the real ones.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass

from roofline.validation.budget import TIMED_CALLS, Clock, timed
from roofline.validation.host import HostInfo

from roofline.spec.platform import INT8_DOT_FLAGS

#: the trial call's M = N = K: a few ms on a fast path, a tenth of a second at 0.7 Gops/s
TRIAL_SIZE = 256
#: a candidate never gets more than this per call, however much budget is left
MAX_CALL_S = 1.5
#: a candidate whose trial call runs at under this share of the rate already measured for its dtype cannot be that
#: dtype's peak: it is timed at the trial's size (on a Zen 5 guest oneDNN's s8 x s8 linear ran at 0.2 Gops/s beside
#: the u8 one's 1,938: sized up, it took 7 s of the probe for a figure that could not be chosen)
OUTPACED = 0.1


@dataclass
class Trial:
    """One candidate kernel at one size: ``call()`` runs it, ``error(y)`` is the output's relative error."""

    call: Callable[[], object]
    error: Callable[[object], float]
    activations: object = None
    """the input tensor, where its range matters (INT8)"""


@dataclass(frozen=True)
class Candidate:
    name: str
    dtype: str
    build: Callable[[int], Trial]
    """a ``size``-cubed GEMM of this kernel"""
    tolerance: float
    """a relative error at or above this is a wrong (saturating) kernel"""
    emulated: bool = False
    """no instructions for the dtype on this host: the kernel converts or loops in software"""
    inputs: str = ""
    """how the inputs were drawn when that matters (7-bit activations)"""


@dataclass(frozen=True)
class Measured:
    """One candidate as the probe measured it."""

    name: str
    dtype: str
    size: int
    target_size: int
    ops_per_s: float
    rel_error: float
    tolerance: float
    emulated: bool
    trial_s: float
    """one call at ``TRIAL_SIZE`` cubed"""
    inputs: str = ""
    outpaced: bool = False
    """timed at the trial's size: its trial ran below :data:`OUTPACED` of its dtype's fastest so far"""

    @property
    def correct(self) -> bool:
        return self.rel_error < self.tolerance

    @property
    def reduced(self) -> bool:
        return self.size < self.target_size

    def describe(self) -> str:
        """'aten.mm (bf16) 0.7 Gops/s at 640^3 (emulated; a trial call predicted 24.5 s at 2048^3: sized down)'"""
        remarks = []
        if self.emulated:
            remarks.append("emulated")
        if not self.correct:
            remarks.append(f"wrong: rel. error {self.rel_error:.1e}")
        if self.inputs:
            remarks.append(self.inputs)
        if self.outpaced:
            remarks.append(f"its trial ran below {OUTPACED:.0%} of the dtype's fastest: timed at the trial's size")
        elif self.reduced:
            predicted = self.trial_s * (self.target_size / TRIAL_SIZE) ** 3
            remarks.append(f"a trial call predicted {predicted:.3g} s at {self.target_size}^3: measured on a "
                           "smaller shape")
        return (f"{self.name} {self.ops_per_s / 1e9:.1f} Gops/s at {self.size}^3"
                + (f" ({'; '.join(remarks)})" if remarks else ""))


def flops(size: int) -> float:
    return 2.0 * size**3


def sized(target: int, trial_s: float, per_call_s: float, trial_size: int = TRIAL_SIZE) -> int:
    """The size a candidate is measured at: ``target`` when the cube law from its trial call
    (``trial_s`` at ``trial_size`` cubed) predicts a call within ``per_call_s``; else the largest
    multiple of 128 (64 below 256) that does, never below ``trial_size``."""
    if trial_s <= 0 or trial_s * (target / trial_size) ** 3 <= per_call_s:
        return target
    fits = trial_size * (per_call_s / trial_s) ** (1 / 3)
    step = 128 if fits >= 256 else 64
    return max(trial_size, min(target, int(fits // step) * step))


def measure(c: Candidate, target: int, per_call_s: float, *, clock: Clock = time.perf_counter,
            min_time: float = 0.3, fastest: float = 0.0) -> Measured:
    """``c`` sized from one trial call, then timed (:func:`~roofline.validation.budget.timed`) and checked; at the
    trial's size where that call ran below :data:`OUTPACED` of ``fastest`` (ops/s, its dtype's best so far)."""
    trial_size = min(TRIAL_SIZE, target)
    t = c.build(trial_size)
    t.call()  # builds the kernel's primitive, which the timed call must not pay for
    t0 = clock()
    t.call()
    trial_s = clock() - t0
    outpaced = trial_s > 0 and flops(trial_size) / trial_s < OUTPACED * fastest
    size = trial_size if outpaced else sized(target, trial_s, min(per_call_s, MAX_CALL_S), trial_size)
    if size != trial_size:
        t = c.build(size)
    seconds = timed(t.call, clock=clock, min_time=min_time)
    return Measured(c.name, c.dtype, size, target, flops(size) / seconds, t.error(t.call()), c.tolerance, c.emulated,
                    trial_s, c.inputs, outpaced)


def pick(measured: list[Measured]) -> Measured:
    """The peak of one dtype: the fastest correct native candidate; without one, the fastest correct
    emulated one; when none is correct, the fastest (its error says so)."""
    for pool in ([m for m in measured if m.correct and not m.emulated], [m for m in measured if m.correct], measured):
        if pool:
            return max(pool, key=lambda m: m.ops_per_s)
    raise ValueError("no candidate measured")


def per_call_budget(seconds_left: float, candidates_left: int) -> float:
    """Seconds one call of the next candidate may take: its even share of what is left, over the calls
    :func:`~roofline.validation.budget.timed` makes of a slow kernel."""
    return max(seconds_left, 0.0) / max(candidates_left, 1) / TIMED_CALLS


def int8_native(host: HostInfo) -> bool:
    """VNNI or AMX: INT8 dot products that do not saturate (without them AVX2 multiplies byte pairs into
    16 bits, which full-range u8 x s8 inputs overflow)."""
    return any(host.flags.get(flag) for flag in INT8_DOT_FLAGS)


def bf16_native(host: HostInfo) -> bool:
    f = host.flags
    return bool(f.get("avx512_bf16") or f.get("amx_bf16"))


def torch_candidates(torch, host: HostInfo) -> list[Candidate]:
    """FP32 and BF16: ``aten.mm``, ``aten.linear``, ``aten.addmm``; INT8: oneDNN's quantized linear on u8
    and on s8 activations (where this torch build has it) and ``aten._int_mm`` (s8 x s8)."""

    @functools.lru_cache(maxsize=2)
    def floats(size: int):
        g = torch.Generator().manual_seed(size)
        a, b = torch.randn(size, size, generator=g), torch.randn(size, size, generator=g)
        return a, b, a.double() @ b.double()

    def rel(y, ref) -> float:
        y, ref = y.double(), ref.double()
        return float((y - ref).norm() / ref.norm())

    def float_trial(dtype, kind: str) -> Callable[[int], Trial]:
        def build(size: int) -> Trial:
            a, b, ref = floats(size)
            x, w = (a, b) if dtype is torch.float32 else (a.to(dtype), b.to(dtype))
            wt, bias = w.t().contiguous(), torch.zeros(size, dtype=x.dtype)
            call = {"mm": lambda: x @ w, "linear": lambda: torch.nn.functional.linear(x, wt),
                    "addmm": lambda: torch.addmm(bias, x, w)}[kind]
            return Trial(call, lambda y: rel(y, ref))
        return build

    native8 = int8_native(host)
    lo_u8, hi_u8, zp_u8 = (0, 256, 128) if native8 else (0, 128, 64)
    lo_s8, hi_s8 = (-127, 128) if native8 else (-64, 64)

    @functools.lru_cache(maxsize=2)
    def ints(size: int):
        g = torch.Generator().manual_seed(size)
        w = torch.randint(-127, 128, (size, size), dtype=torch.int8, generator=g)
        xu = torch.randint(lo_u8, hi_u8, (size, size), dtype=torch.int16, generator=g).to(torch.uint8)
        xs = torch.randint(lo_s8, hi_s8, (size, size), dtype=torch.int8, generator=g)
        return w, xu, xs

    @functools.lru_cache(maxsize=4)
    def exact(size: int, signed: bool):
        w, xu, xs = ints(size)
        return (xs.double() @ w.double().t()) if signed else ((xu.double() - zp_u8) @ w.double().t())

    def qlinear(signed: bool) -> Callable[[int], Trial]:
        def build(size: int) -> Trial:
            w, xu, xs = ints(size)
            x, zp = (xs, 0) if signed else (xu, zp_u8)
            ref = exact(size, signed)
            packed = torch.ops.onednn.qlinear_prepack(w, [size, size])
            ws, wz = torch.ones(size), torch.zeros(size, dtype=torch.int64)

            def call():
                return torch.ops.onednn.qlinear_pointwise(x, 1.0, zp, packed, ws, wz, None, 1.0, 0, torch.float32,
                                                          "none", [], "")
            return Trial(call, lambda y: rel(y, ref), x)
        return build

    def int_mm(size: int) -> Trial:
        w, _, xs = ints(size)
        wt, ref = w.t(), exact(size, True)
        return Trial(lambda: torch._int_mm(xs, wt), lambda y: rel(y, ref), xs)

    emulated16 = not bf16_native(host)
    out = [Candidate(f"aten.{k} (fp32)", "fp32", float_trial(torch.float32, k), 5e-2) for k in ("mm", "linear", "addmm")]
    out += [Candidate(f"aten.{k} (bf16)", "bf16", float_trial(torch.bfloat16, k), 5e-2, emulated=emulated16)
            for k in ("mm", "linear", "addmm")]
    seven = "" if native8 else "7-bit activations (reduce_range)"
    if hasattr(torch.ops.onednn, "qlinear_pointwise"):
        out += [Candidate("onednn.qlinear_pointwise (u8 x s8)", "int8", qlinear(False), 1e-3, inputs=seven),
                Candidate("onednn.qlinear_pointwise (s8 x s8)", "int8", qlinear(True), 1e-3, inputs=seven)]
    out.append(Candidate("aten._int_mm (s8 x s8)", "int8", int_mm, 1e-3, emulated=not native8))
    return out
