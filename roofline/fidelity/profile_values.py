"""Every value of a stack profile beside the range its fit may give it: which sit on a bound, so the figures did not
pin them down (``roofline stacks show NAME``)."""

from __future__ import annotations

import dataclasses

from roofline.fidelity.fit import CALL_S, PER_OP_S, PLATFORM_RANGE, TIME_HALF_MAX, WORK_HALF_MAX
from roofline.fidelity.forms import CALL_GRID
from roofline.results.stacks import ProfileValue, StackSummary, StackValues
from roofline.spec.sourced import Sourced
from roofline.spec.stack import KERNEL_MAX, StackProfile, is_kernel_class

#: efficiencies: the fit's range (``fidelity/fit.py``); a kernel class's may exceed 1 up to :data:`KERNEL_MAX`
EFFICIENCY = (1e-3, 1.0)
#: how close to a bound, relative (log scale for the ranges spanning decades), a value counts as on it
NEAR = 0.01


def at_bound(value: float, lo: float, hi: float) -> str | None:
    """``"lower"`` or ``"upper"`` when ``value`` is within :data:`NEAR` of that end of ``[lo, hi]`` (relative to
    the end; an end of 0 only when the value is 0), else None."""
    if lo > 0 and value <= lo * (1 + NEAR):
        return "lower"
    if lo == 0 and value <= 0:
        return "lower"
    if value >= hi * (1 - NEAR):
        return "upper"
    return None


def _row(table: str, name: str, s: Sourced, lo: float, hi: float, unit: str = "", figures: int | None = None,
         platforms: int | None = None) -> ProfileValue:
    v = float(s.value)
    return ProfileValue(table=table, name=name, value=v, unit=unit, kind=s.kind, lower=lo, upper=hi,
                        at_bound=at_bound(v, lo, hi) if s.kind in ("derived", "measured") else None,
                        figures=figures, platforms=platforms, source=s.source)


def _call_top(profile: StackProfile) -> float:
    """The top of the per-call cost's range: :data:`CALL_S`'s, or :data:`CALL_GRID`'s where the fit held it on that
    grid (a stack scored on Server runs: its value is above the continuous range)."""
    v = float(profile.call_s.value) if profile.call_s is not None else 0.0
    return CALL_GRID[-1] if v > CALL_S[1] * (1 + NEAR) else CALL_S[1]


def stack_values(profile: StackProfile, path: str) -> StackValues:
    """The profile's values with their fit ranges, the figures and CPUs behind each class, and its accuracy."""
    a = profile.accuracy
    classes = a.classes if a is not None else {}
    rows: list[ProfileValue] = []
    for table, values in (("gemm_efficiency", profile.gemm_efficiency), ("kernel_efficiency", profile.kernel_efficiency),
                          ("non_gemm_efficiency", profile.non_gemm_efficiency)):
        for name, s in values.items():
            own = classes.get(name)
            hi = KERNEL_MAX if is_kernel_class(name) else EFFICIENCY[1]
            rows.append(_row(table, name, s, EFFICIENCY[0], hi, "", own.figures if own else None,
                             own.platforms if own else None))
    for name, s, lo, hi, unit in (("work_half", profile.work_half, 0.0, WORK_HALF_MAX, "MAC/core"),
                                  ("time_half_s", profile.time_half_s, 0.0, TIME_HALF_MAX, "s"),
                                  ("memory_efficiency", profile.memory_efficiency, *EFFICIENCY, ""),
                                  ("pass_memory_efficiency", profile.pass_memory_efficiency, *EFFICIENCY, ""),
                                  ("quantization_efficiency", profile.quantization_efficiency, *EFFICIENCY, ""),
                                  ("call_s", profile.call_s, CALL_S[0], _call_top(profile), "s"),
                                  ("per_op_s", profile.per_op_s, *PER_OP_S, "s")):
        if s is not None:
            rows.append(_row("", name, s, lo, hi, unit))
    for name, s in profile.platform_factors.items():
        rows.append(_row("platform_factors", name, s, *PLATFORM_RANGE))
    return StackValues(name=profile.name, file=path, kernels=profile.kernels or None, records=len(profile.records),
                       accuracy=a, values=rows, at_bound=[r.label for r in rows if r.at_bound],
                       form=profile.forms.chosen.label if profile.forms else None,
                       folds={p: f.label for p, f in profile.forms.folds.items() if f != profile.forms.chosen}
                       if profile.forms else None)


def summarize(values: StackValues) -> StackSummary:
    a = values.accuracy
    return StackSummary(name=values.name, file=values.file, records=values.records,
                        figures=a.figures if a else None, platforms=a.platforms if a else None,
                        median_abs_error=a.median_abs_error if a else None,
                        fitted=sum(r.kind == "derived" for r in values.values), at_bound=len(values.at_bound))



def mark_bounds(profile: StackProfile) -> StackProfile:
    """The profile with each fitted value on a bound of its range saying so in its source (what
    :func:`stack_values` finds), so the file itself shows which values the figures did not pin down."""
    said = {r.label: r for r in stack_values(profile, "").values if r.at_bound}

    def mark(label: str, s: Sourced) -> Sourced:
        r = said.get(label)
        if r is None or "the figures did not pin it down" in s.source:
            return s
        note = f"; on the {r.at_bound} end of the fit's range ({r.lower:g} to {r.upper:g}): the figures did not pin it down"
        return dataclasses.replace(s, source=s.source + note)

    tables = {t: {k: mark(f"{t}.{k}", v) for k, v in getattr(profile, t).items()}
              for t in ("gemm_efficiency", "kernel_efficiency", "non_gemm_efficiency", "platform_factors")}
    top = {n: mark(n, getattr(profile, n)) for n in ("work_half", "time_half_s", "memory_efficiency",
                                                       "pass_memory_efficiency", "quantization_efficiency", "call_s",
                                                       "per_op_s") if getattr(profile, n) is not None}
    return dataclasses.replace(profile, **tables, **top)
