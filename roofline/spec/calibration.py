"""Calibration of a platform: how close its real kernels come to the roofline, fitted from
`validate` reports and stored beside the platform file (``platforms/calibration/<name>.toml``),
never over its datasheet numbers. Every value says which report it was fitted from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from roofline.spec import PYDANTIC_CONFIG
from roofline.spec.sourced import Sourced


@dataclass(frozen=True)
class Calibration:
    __pydantic_config__ = PYDANTIC_CONFIG

    platform: str
    """the platform (name or file) the fit applies to: the measured host of the reports"""
    gemm_efficiency: dict[str, Sourced]
    """per precision: the GEMM kernel's time at the roofline ceiling over its measured time (0, 1]"""
    non_gemm_efficiency: dict[str, Sourced] = field(default_factory=dict)
    """per part and non-GEMM mode (attention-fp32, other-fp32, attention-amp-bf16, other-amp-bf16): the
    modelled roofline time over the measured time"""
    quantization_efficiency: Sourced | None = None
    """the quantization kernels' modelled roofline time over their measured time"""
    call_s: Sourced | None = None
    """one call of a compiled graph"""
    per_op_s: Sourced | None = None
    """each extern op (GEMM) inside a compiled graph"""
    schema_version: int = 1
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for group, values in (("gemm_efficiency", self.gemm_efficiency), ("non_gemm_efficiency", self.non_gemm_efficiency)):
            for k, v in values.items():
                if not v.known or not 0 < v.value <= 1.5:
                    raise ValueError(f"{group}.{k}: an efficiency in (0, 1.5], got {v.value}")
        if self.quantization_efficiency is not None and not 0 < (self.quantization_efficiency.value or 0) <= 1.5:
            raise ValueError(f"quantization_efficiency: an efficiency in (0, 1.5], got {self.quantization_efficiency.value}")
        for name in ("call_s", "per_op_s"):
            v = getattr(self, name)
            if v is not None and not (v.known and v.value >= 0):
                raise ValueError(f"{name}: seconds, 0 or more")

    def gemm(self, precision: str) -> float:
        s = self.gemm_efficiency.get(precision)
        return s.value if s is not None else 1.0

    def non_gemm(self, key: str) -> float:
        """Efficiency of a non-GEMM part in a mode, e.g. ``attention-fp32``; 1 when not calibrated."""
        s = self.non_gemm_efficiency.get(key)
        return s.value if s is not None else 1.0
