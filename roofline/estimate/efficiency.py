"""Where a realistic estimate's efficiencies come from: a host calibration (``roofline calibrate``),
resolved for one precision and non-GEMM mode into the typed :class:`Efficiency`."""

from __future__ import annotations

from roofline.estimate.realistic import UNFITTED, Efficiency
from roofline.spec.calibration import Calibration


def from_calibration(c: Calibration, precision: str, mode: str, name: str = "") -> Efficiency:
    """The calibration's values for ``precision`` with the non-GEMM work in ``mode``; what it does not
    give stays at 1 (0 s for dispatch). An isolated linear's efficiencies fall back to the in-model ones."""
    values: dict[str, float] = {}
    if precision in c.gemm_efficiency:
        values["gemm"] = c.gemm_efficiency[precision].value
    if precision in c.kernel_efficiency:
        values["kernel"] = c.kernel_efficiency[precision].value
    elif "gemm" in values:
        values["kernel"] = values["gemm"]
    for part in ("attention", "other"):
        key = f"{part}-{mode}"
        if key in c.non_gemm_efficiency:
            values[part] = c.non_gemm_efficiency[key].value
    if c.quantization_efficiency is not None:
        values["quantization"] = c.quantization_efficiency.value
    if precision in c.kernel_quantization_efficiency:
        values["kernel_quantization"] = c.kernel_quantization_efficiency[precision].value
    if c.call_s is not None:
        values["call_s"] = c.call_s.value
        values["per_op_s"] = c.per_op_s.value if c.per_op_s is not None else 0.0
    return Efficiency(**values, source=f"calibration {name or c.platform}", fitted=frozenset(values))


def efficiency_for(calibration: Calibration | None, precision: str, mode: str, name: str = "") -> Efficiency:
    """The efficiencies a realistic estimate of ``precision`` uses: the calibration's, else none."""
    if calibration is None:
        return UNFITTED
    return from_calibration(calibration, precision, mode, name)
