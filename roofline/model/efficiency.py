"""Where a realistic estimate's efficiencies come from (:class:`EfficiencySource`), resolved into the
typed :class:`~roofline.model.realistic.Efficiency`:

- a host calibration (``roofline calibrate REPORT``): measured on this very machine, one value per
  precision; it wins when given, and applies to the platform it was fitted on only (another one is
  refused unless ``any_platform``, and then the result says so);
- a software-stack profile (``platforms/stacks/<stack>.toml``, fitted from the measurement records):
  one value per compute path class (``<dtype>-<isa class>``), scaled by the shape term
  ``W / (W + work_half)`` (``W = M x N x K / instance cores``: a GEMM's multiply-accumulates per core) and by the path rules (a stack whose kernels run a slower path than the
  ceiling's: the ratio of the two peaks). A class the profile has no value for takes the geometric
  mean of the profile's classes on the same ISA class, else its cross-stack value (a profile fitted on too
  few platforms), else the mean of its classes of the same dtype, else of all its classes (said in
  ``source``: :func:`lookup`), an emulated path's class (``<dtype>-emulated``, a software kernel at the rate the
  platform file states as measured) 1; a probed host's ``<dtype>-measured`` paths (peaks of the stack's own
  kernels measured there) take the shape term alone;
- neither: every efficiency 1, no dispatch (the realistic estimate is the ceiling plus the priced terms).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from roofline.calc.aggregate import geometric_mean
from roofline.calc.shapes import GemmList
from roofline.errors import UserError
from roofline.model.paths import PathChoice, path_peak
from roofline.model.realistic import UNFITTED, Efficiency
from roofline.model.resources import Resources, Used
from roofline.results.estimate import ErrorBand
from roofline.spec.gguf_types import BLOCKS
from roofline.spec.kernels import CoreCycles, Kernel, KernelTable
from roofline.spec.platform import ComputePath, Platform
from roofline.spec.precision import GGUF_FLOATS, PrecisionRecipe
from roofline.spec.sourced import bare_values
from roofline.spec.stack import KERNEL_CLASS, TIMED_CLASS, Accuracy, PathRule, StackProfile, typical_factor
from roofline.spec.vocab import AttentionForm, NonGemmMode, Phase, ShapeForm

if TYPE_CHECKING:
    from roofline.spec.calibration import Calibration
    from roofline.spec.model import ModelSpec

#: the stacks that price a precision when the user names none: the engine that runs GGUF files, and the one that
#: ``roofline validate`` runs (torch recipes)
GGUF_STACK, TORCH_STACK = "llama.cpp", "torch-inductor"


def is_gguf(recipe: PrecisionRecipe) -> bool:
    """a GGUF type: a block format, or a float type only GGUF files carry (:data:`GGUF_FLOATS`)"""
    return recipe.block is not None or recipe.name in GGUF_FLOATS


def gguf_stack(recipe: PrecisionRecipe) -> str:
    """the stack that prices a GGUF type when the user names none: the engine whose ggml defines it (ik_llama.cpp's
    own types), else llama.cpp's (:data:`GGUF_STACK`)"""
    return recipe.block.engine if recipe.block is not None else GGUF_STACK


#: the ISA class of a probed host's compute paths (``roofline probe``): peaks measured on the stack's own kernels
MEASURED = "measured"


@dataclass(frozen=True)
class EfficiencySource:
    """Where the realistic estimate's efficiencies come from: a host calibration (it wins), else a stack
    profile, else none (the ceiling plus the priced terms)."""

    stack: StackProfile | None = None
    calibration: Calibration | None = None
    calibration_name: str | None = None
    """how the user named the calibration (for messages)"""
    any_platform: bool = False
    """apply the calibration to a platform other than the one it was fitted on (the result says so)"""
    per_engine: bool = False
    """the user named no stack: a GGUF type is priced by the profile of the engine that runs it (:func:`gguf_stack`),
    any other precision by this source's (:meth:`for_recipe`)"""

    def for_recipe(self, recipe: PrecisionRecipe) -> EfficiencySource:
        """The source a precision is priced from: this one, or with :attr:`per_engine` for a GGUF type the profile
        of the engine that runs GGUF files (a float precision beside GGUF types only, the GGUF engine's too: this
        source's stack was chosen so)."""
        if not self.per_engine or self.calibration is not None or not is_gguf(recipe):
            return self
        want = gguf_stack(recipe)
        if self.stack is not None and self.stack.name == want:
            return self
        from roofline.catalog.stacks import load_stack

        return replace(self, stack=load_stack(want))

    @property
    def profile(self) -> StackProfile | None:
        """the stack profile the estimate uses: none when a calibration is given"""
        return self.stack if self.calibration is None else None

    @property
    def stack_name(self) -> str | None:
        return self.profile.name if self.profile is not None else None

    @property
    def accuracy(self) -> Accuracy | None:
        """the profile's measured accuracy, when it is what the realistic estimate uses (an accuracy over no scored
        figure is none: its median of 0% is no band)"""
        a = self.profile.accuracy if self.profile is not None else None
        return a if a is not None and a.figures > 0 else None

    @property
    def band(self) -> float | None:
        a = self.accuracy
        return a.band if a else None

    def error_band(self, res: Resources, recipe: PrecisionRecipe, one_row: bool = False) -> ErrorBand | None:
        """The error band a realistic estimate of ``recipe`` quotes (:meth:`Accuracy.class_band`), with the
        compute path class its GEMMs run on under the profile (``one_row``: its calls of one activation row) and
        that class's figures; None without a profile's accuracy."""
        a = self.accuracy
        if a is None:
            return None
        cls = kernel_class(res, recipe, self.profile) or path_class(res, recipe, self.profile, one_row=one_row)[0]
        band, own = a.class_band(cls)
        return ErrorBand(cls, band, own.figures if own else 0, own.platforms if own else 0)

    def notes(self, platform: Platform) -> list[str]:
        """A calibration applies to the platform it was fitted on: another platform is refused, unless
        ``any_platform``, and then the returned notes say so. A stack profile with platform factors: the factor its
        efficiencies take on ``platform``, and where it comes from."""
        c = self.calibration
        if c is None:
            return self._factor_notes(platform)
        if c.host is not None:  # the measured host's identity decides, never a name (every probe is 'host')
            differs = c.host.differences(platform)
            if not differs:
                return []
            why = f"the measured host was {c.host.describe()}; '{platform.name}' has {'; '.join(differs)}"
        elif c.platform.lower() != "host" and c.platform.lower() in {n.lower() for n in platform.all_names}:
            return []
        else:
            why = ("the file names no measured host (written by an older roofline), and a name alone does not say "
                   "which machine: every probe is named 'host'")
        label = f"--calibration {self.calibration_name}" if self.calibration_name else "the calibration"
        if not self.any_platform:
            raise UserError(f"{label}: fitted on platform '{c.platform}', not on '{platform.name}': {why}; calibrate "
                            f"this platform (roofline validate, then roofline calibrate), or give "
                            "--calibration-any-platform to apply it anyway")
        return [f"{label} was fitted on '{c.platform}' and is applied to '{platform.name}' "
                "(--calibration-any-platform): its kernel efficiencies and dispatch costs are another platform's"]

    def _factor_notes(self, platform: Platform) -> list[str]:
        p = self.profile
        if p is None or not p.platform_factors:
            return []
        phi, known = platform_factor(p, platform)
        if known:
            return [f"{p.name}'s efficiencies x {phi:.3g} on {platform.name}: its factor, fitted on its own records"]
        return [f"{p.name}'s efficiencies x {phi:.3g} on {platform.name}: the factors' mean over its "
                f"{len(p.platform_factors)} record CPUs"]

    def efficiency(self, res: Resources, precision: str, mode: NonGemmMode, cells: Sequence[PrecisionRecipe],
                   gemms: GemmList, m: np.ndarray | None = None) -> Efficiency:
        """The efficiencies a realistic estimate of ``precision`` uses: the calibration's, else the stack
        profile's (per GEMM row: its class and its M), else none."""
        if self.calibration is not None:
            return from_calibration(self.calibration, precision, mode, self.calibration_name or "")
        if self.stack is not None:
            return from_stack(self.stack, res, cells, gemms, mode, m)
        return UNFITTED


NO_EFFICIENCIES = EfficiencySource()


def from_calibration(c: Calibration, precision: str, mode: NonGemmMode, name: str = "") -> Efficiency:
    """The calibration's values for ``precision`` with the non-GEMM work in ``mode``; what it does not
    give stays at 1 (0 s for dispatch). An isolated linear's efficiencies fall back to the in-model ones."""
    values: dict[str, Any] = {}
    if precision in c.gemm_efficiency:
        values["gemm"] = c.gemm_efficiency[precision].known_value
    if precision in c.kernel_efficiency:
        values["kernel"] = c.kernel_efficiency[precision].known_value
    elif "gemm" in values:
        values["kernel"] = values["gemm"]
    for part in ("attention", "other"):
        key = f"{part}-{mode}"
        if key in c.non_gemm_efficiency:
            values[part] = c.non_gemm_efficiency[key].known_value
    if c.quantization_efficiency is not None:
        values["quantization"] = c.quantization_efficiency.known_value
    if precision in c.kernel_quantization_efficiency:
        values["kernel_quantization"] = c.kernel_quantization_efficiency[precision].known_value
    if c.call_s is not None:
        values["call_s"] = c.call_s.known_value
        values["per_op_s"] = c.per_op_s.known_value if c.per_op_s is not None else 0.0
    return Efficiency(**values, source=f"calibration {name or c.platform}",
                      fitted=frozenset(values) - {"shape", "limit", "unpack"})


ONE_ROW = "gemv"
"""the mark of a one-row call's path class (``<type>-gemv-<isa class>``)"""
EMULATED = "emulated"
"""the ISA part of an emulated path's class (``<dtype>-emulated``): a software kernel, whose rate the platform file
states as measured, not the vector units' datasheet rate"""
TIMED = TIMED_CLASS
"""the ISA part of the class of a GGUF row a kernel table prices with cycles timed on the core (``gguf-timed``,
:attr:`~roofline.spec.kernels.CoreCycles.timed`): the kernel's own rate there, at efficiency 1"""


CROSS = "the cross-stack value, cross_stack_gemm_efficiency"
"""how :func:`lookup` says it took a class's value from a profile's cross-stack values"""


class Found(Enum):
    """Where :func:`lookup` found a class's value."""

    FITTED = "fitted"
    TYPE_MANY_ROWS = "the type's many-row class"
    EMULATED = "the emulated kernel's measured rate"
    TIMED = "the kernel's rate timed on the core"
    SAME_ISA = "the mean of the same ISA class's"
    CROSS_STACK = "the cross-stack value"
    SAME_DTYPE = "the mean of the same dtype's"
    ALL = "the mean of every class"
    NONE = "none"


def lookup(table: dict[str, float], cls: str, cross: dict[str, float] | None = None) -> tuple[float | None, str]:
    """A profile's value for a path class (``<dtype>-<isa class>``), or the fallback (and how it was
    found): for an emulated path 1 (its rate is the platform's measurement of that kernel), else the geometric
    mean of its classes on the same ISA class (the same execution units, e.g. bf16-avx512 from fp32-avx512 and
    int8-avx512), else the class's ``cross`` value (a stack fitted on too few platforms: the well-founded stacks'
    mean, :func:`roofline.fidelity.accuracy.cross_stack`), else the mean of its classes of the same dtype, else
    of all its classes; None for an empty table."""
    value, how, _ = found_value(table, cls, cross)
    return value, how


def found_value(table: dict[str, float], cls: str, cross: dict[str, float] | None = None
                ) -> tuple[float | None, str, Found]:
    """:func:`lookup`'s answer, and which of its fallbacks gave it."""
    if cls in table:
        return table[cls], cls, Found.FITTED
    many = cls.replace(f"-{ONE_ROW}-", "-", 1)
    if many != cls and many in table:  # a type's one-row kernel: its unpacking is the type's many-row kernel's
        return table[many], f"{cls} (not fitted: the type's {many})", Found.TYPE_MANY_ROWS
    dtype, isa = (cls.split("-", 1) + [""])[:2]
    if isa == EMULATED:  # its rate is the kernel's own, measured: no other class's efficiency applies to it
        return 1.0, f"{cls} (not fitted: 1, the platform's measured rate of the emulated kernel)", Found.EMULATED
    if isa == TIMED:  # the kernel timed on the core: what the counted cycles' efficiency stands for is in it
        return 1.0, f"{cls} (not fitted: 1, the kernel's cycles as timed on the core)", Found.TIMED
    table = {k: v for k, v in table.items() if k.split("-", 1)[-1] != EMULATED}  # a software kernel's says nothing of the units'
    same_isa = [v for k, v in table.items() if k.split("-", 1)[-1] == isa]
    if same_isa:
        return geometric_mean(same_isa), f"{cls} (not fitted: the mean of the {isa} classes)", Found.SAME_ISA
    if cross and cls in cross:
        return cross[cls], f"{cls} (not fitted: {CROSS})", Found.CROSS_STACK
    for what, same, found in ((f"{dtype} classes", [v for k, v in table.items() if k.split("-", 1)[0] == dtype],
                               Found.SAME_DTYPE), ("classes", list(table.values()), Found.ALL)):
        if same:
            return geometric_mean(same), f"{cls} (not fitted: the mean of the {what})", found
    return None, f"{cls} (not fitted)", Found.NONE


def takes_cross(table: dict[str, float], cls: str, cross: dict[str, float]) -> bool:
    """Whether :func:`lookup` answers ``cls`` with its cross-stack value (the profile's own classes do not)."""
    return found_value(table, cls, cross)[2] is Found.CROSS_STACK


def gemm_eta(gemm: dict[str, float], kernel: dict[str, float], cls: str, graph: bool,
             cross: dict[str, float] | None = None) -> tuple[float, str]:
    """The compute efficiency of a path class: in a compiled model (``graph``) from the GEMM table; one
    linear alone from the kernel table, else the GEMM table; 1 when neither has anything (``cross``: the
    cross-stack values of the classes the profile never fitted, in a model and alone alike)."""
    table = gemm if graph or not kernel else kernel
    v, how = lookup(table, cls, cross)
    return (1.0 if v is None else v), how


def mode_value(table: dict[str, float], mode: str) -> float | None:
    """A non-GEMM part's efficiency in a mode, else the mean over the modes it has; None when empty."""
    if mode in table:
        return table[mode]
    return geometric_mean(list(table.values())) if table else None


def shaped(eta: np.ndarray, m: np.ndarray, work_half: float | np.ndarray, scale: np.ndarray | float = 1.0
           ) -> tuple[np.ndarray, np.ndarray]:
    """``(min(eta x scale x W / (W + work_half), 1), W / (W + work_half))``: a class efficiency on GEMMs of ``W``
    multiply-accumulates per core (the shape term; none when ``work_half`` is 0), times a platform's and a path
    rule's factors (``scale``). The stack profile's estimate and its fit both go through here; the fit's Jacobian
    gives ``work_half`` as ``(B,)``, one per parameter vector, and ``eta`` as ``(B, R)``."""
    m = np.asarray(m, dtype=float)
    half = np.asarray(work_half, dtype=float)
    if half.ndim:
        shape = np.where(half[:, None] > 0, m / (m + half[:, None]), 1.0)
    else:
        shape = m / (m + half) if half > 0 else np.ones_like(m)
    return np.minimum(np.asarray(eta, dtype=float) * scale * shape, 1.0), shape


def gguf_type(recipe: PrecisionRecipe) -> str | None:
    """The GGUF block type whose kernels a recipe's GEMMs run: its block's, or for a row whose tensors mix types
    (:func:`~roofline.spec.gguf_mix.average_recipe`) the type of most of its weights; None for other recipes."""
    if recipe.block is None:
        return None
    name = recipe.block.name.split(" ", 1)[0]
    return name if name in BLOCKS else None


Rules = tuple[PathRule | None, PathRule | None, PathRule | None, PathRule | None]
"""a recipe's rules under a stack (:func:`applied_rules`): its path rule, chain rule, unpack-per-row rule and one-row
serial rule"""


def applied_rules(res: Resources, recipe: PrecisionRecipe, stack: StackProfile | None, date: str | None = None
                  ) -> Rules:
    """The stack's rules a recipe's GEMMs meet on ``res``'s platform in a build of ``date`` (None: today's): its
    dtype's path rule, its GGUF type's chain rule, its unpack-per-row rule and its one-row serial rule (each None
    when the stack has none)."""
    if stack is None:
        return None, None, None, None
    vendor, dtype = res.platform.vendor, res.platform.compute[res.path(recipe.compute_dtype).name].dtype
    serial = stack.serial_rule(vendor, dtype)
    if emulated_path(res, recipe, stack) is not None:
        return stack.emulated_rule(vendor, recipe.compute_dtype), None, None, serial
    block = gguf_type(recipe)
    chain = stack.chain_rule(vendor, dtype, block) if block else None
    unpack = stack.unpack_rule(vendor, dtype, block, date) if block else None
    return stack.path_rule(vendor, dtype), chain, unpack, serial


def emulated_path(res: Resources, recipe: PrecisionRecipe, stack: StackProfile | None) -> str | None:
    """The platform's emulated path a stack runs the recipe's GEMMs on (a rule with ``emulated``), where the
    platform has no native path for the recipe's dtype and states an emulated one; None otherwise."""
    want = recipe.compute_dtype
    if stack is None or res.path(want).native:
        return None
    paths = res.platform.emulated_paths(want)
    if not paths or stack.emulated_rule(res.platform.vendor, want) is None:
        return None
    return paths[0]


def path_class(res: Resources, recipe: PrecisionRecipe, stack: StackProfile | None = None,
               one_row: bool = False) -> tuple[str, float]:
    """The compute path class a recipe's GEMMs run on under a stack (``<dtype>-<isa class>``; a GGUF block
    format's GEMMs ``<type>-<isa class>``: each type has its own unpacking kernel, and its calls of one activation
    row (``one_row``) ``<type>-gemv-<isa class>``: llama.cpp runs them through ``ggml_vec_dot_*`` or a repacked
    GEMV, not the kernels of several rows), and the ratio of the rate the stack gets to the ceiling's path peak
    (1 unless a path rule sends the stack to a slower path, or caps its ops per cycle)."""
    many, one, factor = path_classes(res, recipe, stack)
    return (one if one_row else many), factor


def path_classes(res: Resources, recipe: PrecisionRecipe, stack: StackProfile | None = None,
                 rules: Rules | None = None) -> tuple[str, str, float]:
    """:func:`path_class`'s classes for calls of several rows and of one row (the same but for a GGUF type), and
    its peak ratio, found once (``rules``: the recipe's :func:`applied_rules`, when the caller has them)."""
    choice = res.path(recipe.compute_dtype)
    p = res.platform.compute[choice.name]
    rule = (applied_rules(res, recipe, stack) if rules is None else rules)[0]
    if rule is not None and rule.emulated:  # the stack's own software path: its measured rate over the ceiling's
        emulated = res.platform.emulated_paths(recipe.compute_dtype)[0]  # FP32 path (applied_rules checked it)
        e = res.platform.compute[emulated]
        res.used[f"ops.{emulated}"] = Used(f"compute.{emulated}.ops_per_cycle", e.ops_per_cycle.known_value,
                                           e.ops_per_cycle)
        cls = f"{e.dtype}-{EMULATED}"
        return cls, cls, min(peak_ratio(res, emulated, choice), 1.0)
    block = gguf_type(recipe)
    kind, one_kind = (block, f"{block}-{ONE_ROW}") if block else (p.dtype, p.dtype)
    if not block and stack is not None and stack.kernels:
        # a float row under an engine with a kernel table (llama.cpp): one activation row runs its vec_dot (a GEMV),
        # more run llamafile's tinyBLAS ('if (n < 2) return false', sgemm.cpp, the table's sgemm evidence): two
        # kernels, two classes, so that a decode figure says nothing of a prefill's efficiency
        one_kind = f"{p.dtype}-{ONE_ROW}"
    if rule is None:
        return f"{kind}-{p.isa_class}", f"{one_kind}-{p.isa_class}", 1.0
    used, factor = rule_path(res, choice, rule)
    return f"{kind}-{used.isa_class}", f"{one_kind}-{used.isa_class}", factor


def peak_ratio(res: Resources, name: str, choice: PathChoice) -> float:
    """The platform's compute path ``name``'s peak on the layout's active cores at ``res``'s clock over the ceiling's
    path ``choice`` (the largest over the layouts)."""
    lay = res.layout
    return float(np.max(path_peak(res.platform, name, lay.sockets, lay.active_cores, res.clock)
                        / np.asarray(choice.peak)))


def rule_path(res: Resources, choice: PathChoice, rule: PathRule) -> tuple[ComputePath, float]:
    """The compute path a dtype's path rule sends the stack's work to instead of the ceiling's ``choice`` (a slower
    one of the rule's ISA class where the platform has it), and the ratio of the rate it gets (capped at the
    rule's ``max_ops_per_cycle``) to the ceiling's path peak, at most 1."""
    p = res.platform.compute[choice.name]
    used, factor = p, 1.0
    slower = [n for n, c in res.platform.compute.items() if c.dtype == p.dtype and c.isa_class == rule.isa_class]
    if rule.isa_class and rule.isa_class != p.isa_class and slower:
        used, factor = res.platform.compute[slower[0]], peak_ratio(res, slower[0], choice)
    if rule.max_ops_per_cycle is not None:
        factor *= min(1.0, rule.max_ops_per_cycle / used.ops_per_cycle.known_value)
    return used, min(factor, 1.0)


def attention_rule(res: Resources, mode: NonGemmMode, stack: StackProfile | None) -> PathRule | None:
    """The stack's path rule its attention matmuls run under in a non-GEMM mode (the rule of the path the ceiling
    runs the mode's activation dtype on, where it says ``attention``); None: they run the ceiling's path."""
    if stack is None:
        return None
    p = res.platform.compute[res.path(NonGemmMode(mode).activation_dtype).name]
    rule = stack.path_rule(res.platform.vendor, p.dtype)
    return rule if rule is not None and rule.attention else None


def attention_path(res: Resources, mode: NonGemmMode, stack: StackProfile | None) -> tuple[float, str]:
    """The rate of a stack's attention matmuls over the ceiling's matmul path peak in a non-GEMM mode (whose
    activation dtype they run in), and how it was found: the dtype's path rule's (:func:`rule_path`) where the
    rule says the attention runs its path too (``attention``); ``(1, "")`` otherwise."""
    rule = attention_rule(res, mode, stack)
    if rule is None:
        return 1.0, ""
    used, factor = rule_path(res, res.path(NonGemmMode(mode).activation_dtype), rule)
    return factor, f"on {used.dtype}-{used.isa_class}, {factor:.3g} x the ceiling's path"


def attention_kernel_factors(stack: StackProfile | None, model: ModelSpec | None, phase: Phase | None,
                             queries: ArrayLike, form: AttentionForm, date: str | None = None) -> tuple[np.ndarray, str]:
    """Per step, the time a stack's measured attention kernel takes per score over the ceiling's
    (:class:`~roofline.spec.stack.AttentionKernel`), and the kernels' names; NaN where none is stated: no profile or
    no ``attention_kernels``, attention unfused (scores through memory: the ``attention-<mode>`` efficiency prices
    it), a model with latent attention (its scores' two head sizes differ from the kernels measured), an encoder.
    ``queries``: each step's queries per sequence (a decode step's 1, a prefill's prompt length); ``date``: a record's
    build (None: today's)."""
    from roofline.spec.stack import attention_kernel

    q = np.asarray(1.0 if phase is Phase.DECODE else queries, dtype=float)
    out = np.full(np.shape(q), np.nan)
    if (stack is None or not stack.attention_kernels or AttentionForm(form) is AttentionForm.UNFUSED or model is None
            or model.is_mla or model.family == "encoder" or phase not in (Phase.DECODE, Phase.PREFILL)):
        return out, ""
    names = []
    for value in np.unique(q):
        k = attention_kernel(stack.attention_kernels, float(value), date)
        if k is not None:
            out = np.where(q == value, k.factor, out)
            names.append(k.name)
    return out, ", ".join(dict.fromkeys(names))


def chain_limit(res: Resources, recipe: PrecisionRecipe, stack: StackProfile | None,
                rules: Rules | None = None) -> tuple[float, str]:
    """The most a GGUF type's multiply-accumulates reach of the ceiling's path peak under a stack whose kernel for
    the type is latency-bound (a path rule naming the type: ``chain_ops_per_cycle`` over the path's ops per cycle,
    at the path's clock and one thread per core), and how it was found; ``(1, "")`` when no rule names the type.
    A rate limit on the whole kernel, its unpacking inside the chain's cycles: the row's compute time is at least
    its multiply-accumulates at the ceiling over the limit (:func:`~roofline.model.realistic.realistic_times`)."""
    rule = (applied_rules(res, recipe, stack) if rules is None else rules)[1]  # a chain rule always states its rate
    if rule is None:
        return 1.0, ""
    p = res.platform.compute[res.path(recipe.compute_dtype).name]
    assert rule.chain_ops_per_cycle is not None  # a chain rule is one with a rate (StackProfile.chain_rule)
    limit = min(1.0, rule.chain_ops_per_cycle / p.ops_per_cycle.known_value)
    return limit, f"at most {rule.chain_ops_per_cycle:g} ops per cycle per core: one FMA chain per block"


def unpack_rows(res: Resources, recipe: PrecisionRecipe, stack: StackProfile | None, m: np.ndarray,
                date: str | None = None, rules: Rules | None = None) -> tuple[np.ndarray, str]:
    """The activation rows a GGUF type's unpacking is repeated for under a stack whose kernel for the type, in a
    build of ``date`` (a record's; None: an estimate, today's build), unpacks every block again per row (a path
    rule with ``unpack_per_row``): the calls' ``m`` rows, and how it was found; ``(1, "")`` otherwise (the kernel
    unpacks each block once, as the ceiling's does)."""
    rule = (applied_rules(res, recipe, stack, date) if rules is None else rules)[2]
    if rule is None:
        return np.ones_like(np.asarray(m, dtype=float)), ""
    if rule.rows_per_unpack == 1:
        return np.maximum(np.asarray(m, dtype=float), 1.0), "unpacked again for each activation row"
    return (np.maximum(np.asarray(m, dtype=float) / rule.rows_per_unpack, 1.0),
            f"unpacked again for each {rule.rows_per_unpack} activation rows")


@dataclass(frozen=True)
class KernelRow:
    """A GGUF row under a stack whose kernel table has cycles for the platform's core (:func:`kernel_row`)."""

    seconds: np.ndarray
    """one call's time at the table's cycles, at each of the row's activation rows ``M``"""
    label: np.ndarray
    """the kernel that runs a call of that many rows (:mod:`roofline.calc.kernel_cycles`)"""

    cls: str = f"gguf-{KERNEL_CLASS}"
    """the row's class: one efficiency for every kernel a table counts the cycles of (what counting leaves out, alike
    for each); ``gguf-timed`` for cycles timed on the core (:data:`TIMED`)"""
    serial: np.ndarray | float = 0.0
    """the share of that kernel's stream at the cores' own bandwidth that adds to its arithmetic (the table's
    ``serial_stream``; 0: it overlaps the two)"""


def _kernel_entries(res: Resources, recipe: PrecisionRecipe, stack: StackProfile | None
                    ) -> tuple[KernelTable, str, CoreCycles, str] | None:
    """``stack``'s kernel table, the recipe's GGUF type, this CPU's core's cycles (which hold the type's) and their
    row class (:attr:`KernelRow.cls`); None where the stack has no table, the recipe no GGUF type or the table no
    cycles for the core and type."""
    from roofline.catalog.kernels import load_kernel_table

    block = gguf_type(recipe)
    if stack is None or not stack.kernels or block is None:
        return None
    table = load_kernel_table(stack.kernels)
    cycles = table.core_cycles(res.platform.core)
    if cycles is None or block not in cycles.types:
        return None
    return table, block, cycles, f"gguf-{TIMED}" if cycles.timed else KernelRow.cls


def kernel_class(res: Resources, recipe: PrecisionRecipe, stack: StackProfile | None) -> str | None:
    """The row class of the recipe's GEMMs under ``stack``'s kernel table on this CPU (:attr:`KernelRow.cls`); None
    where :func:`kernel_priced` is false."""
    found = _kernel_entries(res, recipe, stack)
    return None if found is None else found[3]


def kernel_priced(res: Resources, recipe: PrecisionRecipe, stack: StackProfile | None) -> bool:
    """Whether ``stack``'s kernel table prices the recipe's GEMMs on this CPU (its core has cycles for the type)."""
    return _kernel_entries(res, recipe, stack) is not None


def kernel_row(res: Resources, recipe: PrecisionRecipe, stack: StackProfile | None, m: np.ndarray, n: float,
               k: float, date: str | None = None) -> KernelRow | None:
    """The row's kernel time under ``stack``'s kernel table: the kernel a build of ``date`` (None: today's) runs
    for ``m`` activation rows of the recipe's GGUF type on this CPU (a repacked GEMV/GEMM, a tiled or llamafile
    GEMM, else the per-row ``vec_dot``), its cycles (:func:`~roofline.calc.kernel_cycles.call_cycles`) on the
    instance's cores at the clock of the INT8 path, over the instances (the whole platform's time, as the
    ceiling's); None where :func:`kernel_priced` is false."""
    from roofline.calc.kernel_cycles import call_cycles, call_seconds

    found = _kernel_entries(res, recipe, stack)
    if found is None:
        return None
    table, block, cycles, cls = found
    isa = tuple(res.platform.isa)
    kernel = next((kind for kind in (Kernel.REPACK, Kernel.TILED, Kernel.SGEMM)
                   if table.rule(block, kind, isa, date) is not None), Kernel.VEC_DOT)
    c, label = call_cycles(kernel, cycles.types[block], m)
    path = res.platform.compute[res.path("int8").name]
    hz = res.clock(path.isa_class)
    # the whole platform's time, as the ceiling's: one instance's call on its cores over the instances running beside
    # it, i.e. the call on all the active cores
    lay = res.layout
    cores = np.asarray(lay.instance_cores * lay.total_instances, dtype=float)
    seconds = call_seconds(c, n, k, cores if np.ndim(cores) == 0 or np.ndim(c) == 0 else cores[..., None], hz)
    label = np.asarray(label)
    serial = np.zeros(label.shape)
    for name, share in table.serial_shares(cycles).items():
        serial[label == name] = share
    return KernelRow(np.asarray(seconds, dtype=float), label, cls, serial)


@dataclass(frozen=True)
class RowRules:
    """What a stack's path rules make of one GEMM row (:func:`rows_under_rules`)."""

    many: str
    """its path class for calls of several activation rows (:func:`path_classes`)"""
    one: str
    """its path class for calls of one row (``many`` unless the recipe's type has a one-row kernel)"""
    factor: float
    """its path-rule peak ratio"""
    limit: float
    """its rate limit over the ceiling's path peak (:func:`chain_limit`)"""
    unpack: np.ndarray
    """the activation rows its unpacking is repeated for (:func:`unpack_rows`)"""
    serial: float
    """the share of a one-row call's smaller time (its arithmetic at the ceiling's rates, or its weight stream) that
    adds to the larger (:func:`one_row_serial`; 0: they overlap)"""
    said: str
    """what the limit and the unpacking rules said"""
    kernel: KernelRow | None = None
    """its kernel time under the stack's kernel table (:func:`kernel_row`), where it has one"""


def rows_under_rules(res: Resources, cells: Sequence[PrecisionRecipe], stack: StackProfile | None,
                     m: np.ndarray | None, date: str | None = None, gemms: GemmList | None = None) -> list[RowRules]:
    """What the stack's path rules make of each GEMM row ``j`` (recipe ``cells[j]``, ``m[..., j]`` activation rows,
    in a build of ``date``; ``m`` None: rows of many activation rows each, none unpacked again). The realistic
    estimate and its fit both take their rows from here, so they price them alike."""
    out = []
    for j, c in enumerate(cells):
        rules = applied_rules(res, c, stack, date)  # once per row: the helpers below read their rule from it
        many, one, factor = path_classes(res, c, stack, rules)
        cap, chain = chain_limit(res, c, stack, rules)
        again, said = (np.ones(1), "") if m is None else unpack_rows(res, c, stack, m[..., j], date, rules)
        kernel = None if m is None or gemms is None else kernel_row(res, c, stack, m[..., j], float(gemms.n[j]),
                                                                     float(gemms.k[j]), date)
        out.append(RowRules(many, one, factor, cap, again, one_row_serial(res, c, stack, rules),
                            ", ".join(w for w in (chain, said) if w), kernel))
    return out


def one_row_serial(res: Resources, recipe: PrecisionRecipe, stack: StackProfile | None,
                   rules: Rules | None = None) -> float:
    """The share of the smaller of a one-row call's arithmetic (at the ceiling's rates) and weight-stream times that
    adds to the larger under a stack whose path rule says its GEMVs do not overlap the two (``one_row_serial``); 0
    otherwise."""
    rule = (applied_rules(res, recipe, stack) if rules is None else rules)[3]
    if rule is None:
        return 0.0
    assert rule.one_row_serial is not None  # a serial rule is one with a share (StackProfile.serial_rule)
    return float(rule.one_row_serial)


def one_row_floor(eta_many: np.ndarray, eta_one: np.ndarray, rows: np.ndarray, work: np.ndarray,
                  work_half: float | np.ndarray, scale: np.ndarray | float = 1.0
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A row's efficiency, its shape term, its extra vector work's efficiency and a one-row call's efficiency (the
    bound of :func:`~roofline.model.realistic.realistic_times`: ``t(M) <= M t(1)``), from its two classes' values
    (:func:`shaped`): a call of ``M <= 1`` activation rows runs at the one-row class's, without the shape term (its
    shape is 1: a GEMV splits the weight rows over the threads, with no output tiles for the work per core to
    fill); a call of more at the many-row class's, but its multiply-accumulates at most at ``M x eta_one(W / M)``
    and its extra work (dequantization, the same weights whatever M) at most at the one-row call's, so that its
    compute time is
    never less than one row's (``t(M) >= t(1)``: more rows never take less time, whichever kernel they go to).
    ``work`` is ``W``, the call's work per core (the shape term's measure); ``eta_one`` NaN: no one-row value
    (the many-row one, no floor)."""
    rows = np.maximum(np.asarray(rows, dtype=float), 1.0)
    own = ~np.isnan(eta_one)
    eta_one = np.where(own, eta_one, eta_many)
    many, shape = shaped(eta_many, work, work_half, scale)
    x_many, x_one = np.minimum(eta_many * scale, 1.0), np.minimum(eta_one * scale, 1.0)  # x_one: a one-row call's
    few = np.isfinite(rows)  # inf: many rows, the floor far below
    alone = np.where(own, x_one, shaped(eta_one, np.asarray(work, dtype=float) / np.where(few, rows, 1.0),
                                        work_half, scale)[0])
    single = rows <= 1
    return (np.where(single, x_one, np.minimum(many, np.where(few, rows * alone, np.inf))),
            np.where(single, 1.0, shape), np.where(single, x_one, np.where(few, np.minimum(x_many, x_one), x_many)),
            np.asarray(x_one, dtype=float))


def platform_factor(stack: StackProfile, platform: Platform) -> tuple[float, bool]:
    """The profile's factor for ``platform`` and whether the records had it (else the factors' geometric mean)."""
    known = next((v for k, v in stack.platform_factors.items() if k in platform.all_names), None)
    if known is not None:
        return known.known_value, True
    return typical_factor(bare_values(stack.platform_factors)), False


def from_stack(stack: StackProfile, res: Resources, cells: Sequence[PrecisionRecipe], gemms: GemmList,
               mode: NonGemmMode, m: np.ndarray | None = None) -> Efficiency:
    """The profile's efficiencies for each GEMM row (its path class, its M) and for ``mode``'s non-GEMM work."""
    from roofline.model.realistic import mac_seconds, work_per_core

    rows = np.asarray(gemms.m if m is None else m, dtype=float)
    form, half = stack.shape
    m = work_per_core(rows, gemms, res)
    if form is ShapeForm.TIME:  # the shape term's measure in time: at each row's path peak
        peaks = np.broadcast_arrays(*(res.path(c.compute_dtype).peak for c in cells))
        m = mac_seconds(m, np.stack(peaks, axis=-1), res)
    phi, known = platform_factor(stack, res.platform)
    g_table = bare_values(stack.gemm_efficiency)
    k_table = bare_values(stack.kernel_efficiency)
    cross = bare_values(stack.cross_stack_gemm_efficiency)
    gemm, kernel, how, scale, limit, unpack, serial = [], [], [], [], [], [], []
    kernel_s: list[np.ndarray] = []
    kernel_serial: list[np.ndarray] = []
    for j, rr in enumerate(rows_under_rules(res, cells, stack, rows, gemms=gemms)):
        limit.append(rr.limit)
        unpack.append(rr.unpack)
        if rr.kernel is not None:  # the kernel table's cycles over the class's efficiency, no shape term or cap
            eta, found = gemm_eta(g_table, k_table, rr.kernel.cls, True, cross)
            kernel_s.append(rr.kernel.seconds / (eta * phi))
            kernel_serial.append(np.broadcast_to(rr.kernel.serial, np.shape(rr.kernel.seconds)))
            serial.append(0.0)
            gemm.append((1.0, 1.0))
            kernel.append((1.0, 1.0))
            scale.append(1.0)
            how.append(f"{found}, the {', '.join(dict.fromkeys(np.ravel(rr.kernel.label).astype(str)))} kernel's "
                       "counted cycles")
            continue
        kernel_s.append(np.full(np.shape(rows[..., j]), np.nan))
        kernel_serial.append(np.zeros(np.shape(rows[..., j])))
        serial.append(rr.serial)
        if rr.many.endswith("-" + MEASURED):
            # a probed host's peak is the stack's own kernel as measured there: the kernel's efficiency and the
            # host's real clock are in it already (validate's calibrations put in-model GEMMs at 0.84-1.02 of it)
            gemm.append((1.0, 1.0))
            kernel.append((1.0, 1.0))
            scale.append(1.0)
            how.append(f"{rr.many} (a measured peak: efficiency 1, the shape term only)")
            continue
        g, found = gemm_eta(g_table, k_table, rr.many, True, cross)
        k, _ = gemm_eta(g_table, k_table, rr.many, False, cross)
        g1, found1 = gemm_eta(g_table, k_table, rr.one, True, cross) if rr.one != rr.many else (g, found)
        k1, _ = gemm_eta(g_table, k_table, rr.one, False, cross) if rr.one != rr.many else (k, found)
        gemm.append((g, g1))
        kernel.append((k, k1))
        scale.append(rr.factor * phi)
        r = rows[..., j]
        used = [w for w, on in ((found, np.any(r > 1)), (found1, rr.one != rr.many and np.any(r <= 1))) if on]
        found = ", ".join(used or [found])
        how.append(f"{found}, {rr.said}" if rr.said else found)
    g_pairs, k_pairs = np.asarray(gemm).T, np.asarray(kernel).T
    eta_g, shape, x_g, one_g = one_row_floor(g_pairs[0], g_pairs[1], rows, m, half, np.asarray(scale))
    eta_k, _, x_k, one_k = one_row_floor(k_pairs[0], k_pairs[1], rows, m, half, np.asarray(scale))
    values: dict[str, Any] = {"gemm": eta_g, "kernel": eta_k, "shape": shape, "gemm_one": one_g, "kernel_one": one_k}
    if any(np.any(np.isfinite(t)) for t in kernel_s):
        values["kernel_s"] = np.stack(np.broadcast_arrays(*kernel_s), axis=-1)
        values["kernel_serial"] = np.stack(np.broadcast_arrays(*kernel_serial), axis=-1)
    # a one-row class of its own: its floor on the extra work
    if np.any(g_pairs[0] != g_pairs[1]) or np.any(k_pairs[0] != k_pairs[1]):
        values["gemm_extra"], values["kernel_extra"] = x_g, x_k
    if any(v < 1.0 for v in limit):
        values["limit"] = np.asarray(limit)
    if any(v > 0.0 for v in serial):
        values["serial"] = np.asarray(serial)
    if any(np.any(u > 1.0) for u in unpack):
        values["unpack"] = np.stack(unpack, axis=-1)
    if stack.memory_efficiency is not None:
        values["memory"] = stack.memory_efficiency.value
    if stack.pass_memory_efficiency is not None:
        values["pass_memory"] = stack.pass_memory_efficiency.value
    for part in ("attention", "other"):
        v = mode_value({k.split("-", 1)[1]: x.known_value for k, x in stack.non_gemm_efficiency.items()
                        if k.startswith(part + "-")}, mode)
        if v is not None:
            values[part] = min(v * phi, 1.0)
    quant = stack.quantization_efficiency.value if stack.quantization_efficiency else values.get("other")
    if quant is not None:  # without its own value: the quantization passes run like the other vector passes
        values["quantization"] = values["kernel_quantization"] = quant
    if stack.call_s is not None:
        values["call_s"] = stack.call_s.value
        values["per_op_s"] = stack.per_op_s.value if stack.per_op_s is not None else 0.0
    if stack.barriers is not None:
        values["barrier_rounds"] = stack.barriers.rounds_per_layer
    att, said = attention_path(res, mode, stack)
    if said:
        values["attention_path"] = att
    classes = ", ".join(dict.fromkeys(how))
    where = f"; {res.platform.name} x {phi:.3g}" if known else (
        f"; an unseen CPU x {phi:.3g} (the records' platforms' geometric mean)" if stack.platform_factors else "")
    return Efficiency(**values, source=f"stack {stack.name}: {classes}{where}",
                      fitted=frozenset(values) - {"shape", "limit", "unpack", "gemm_extra", "kernel_extra", "serial",
                                                  "attention_path", "kernel_s", "kernel_serial", "barrier_rounds", "gemm_one",
                                                  "kernel_one"})
