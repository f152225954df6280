"""Calibration of a platform: how close its real kernels come to the roofline, fitted from
`validate` reports and stored beside the platform file (``platforms/calibration/<name>.toml``),
never over its datasheet numbers. Every value says which report it was fitted from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from roofline.spec import PYDANTIC_CONFIG
from roofline.spec.limits import check_schema_version, check_sourced
from roofline.spec.sourced import Sourced

#: the newest calibration file layout this version reads
SCHEMA_VERSION = 1


#: an efficiency above this (measured far faster than the roofline) means wrong ceiling inputs, not a fit
MAX_EFFICIENCY = 1.5


@dataclass(frozen=True)
class Calibration:
    __pydantic_config__ = PYDANTIC_CONFIG

    platform: str
    """the platform (name or file) the fit applies to: the measured host of the reports"""
    gemm_efficiency: dict[str, Sourced]
    """per precision: the GEMMs' time at the roofline ceiling over their measured time inside a compiled
    model (the encoder's linear block), what a deployment sees"""
    kernel_efficiency: dict[str, Sourced] = field(default_factory=dict)
    """per precision: the same for one GEMM compiled and called on its own (the per-shape runs)"""
    non_gemm_efficiency: dict[str, Sourced] = field(default_factory=dict)
    """per part and non-GEMM mode (attention-fp32, other-fp32, attention-amp-bf16, other-amp-bf16): the
    modelled roofline time over the measured time"""
    quantization_efficiency: Sourced | None = None
    """the quantization kernels' modelled roofline time over their measured time, in a compiled model"""
    kernel_quantization_efficiency: dict[str, Sourced] = field(default_factory=dict)
    """per INT8 precision: the same for one linear called on its own (a standalone quantize kernel)"""
    call_s: Sourced | None = None
    """one call of a compiled graph"""
    per_op_s: Sourced | None = None
    """each extern op (GEMM) inside a compiled graph"""
    schema_version: int = 1
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_schema_version(self.schema_version, SCHEMA_VERSION)
        for group in ("gemm_efficiency", "kernel_efficiency", "non_gemm_efficiency", "kernel_quantization_efficiency"):
            values = getattr(self, group)
            for k, v in values.items():
                if not v.known or not 0 < v.value <= MAX_EFFICIENCY:
                    raise ValueError(f"{group}.{k}: an efficiency in (0, 1.5], got {v.value}")
        if self.quantization_efficiency is not None and not 0 < (self.quantization_efficiency.value or 0) <= MAX_EFFICIENCY:
            raise ValueError(f"quantization_efficiency: an efficiency in (0, 1.5], got {self.quantization_efficiency.value}")
        for name in ("call_s", "per_op_s"):
            v = getattr(self, name)
            if v is not None and not (v.known and v.value >= 0):
                raise ValueError(f"{name}: seconds, 0 or more")
            check_sourced(f"calibration.{name}", v, name)

    def gemm(self, precision: str) -> float:
        """GEMM efficiency inside a compiled model; 1 when not calibrated."""
        s = self.gemm_efficiency.get(precision)
        return s.value if s is not None else 1.0

    def kernel(self, precision: str) -> float:
        """Efficiency of one GEMM called on its own; the in-model one when not calibrated apart."""
        s = self.kernel_efficiency.get(precision)
        return s.value if s is not None else self.gemm(precision)

    def quantization(self, precision: str, graph: bool = True) -> float:
        """Quantization efficiency in a compiled model, or (``graph=False``) of one linear called on
        its own; 1 when not calibrated."""
        s = self.quantization_efficiency if graph else self.kernel_quantization_efficiency.get(precision)
        return s.value if s is not None and s.value else 1.0

    def non_gemm(self, key: str) -> float:
        """Efficiency of a non-GEMM part in a mode, e.g. ``attention-fp32``; 1 when not calibrated."""
        s = self.non_gemm_efficiency.get(key)
        return s.value if s is not None else 1.0
