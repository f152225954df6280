"""Calibration of a platform: how close its real kernels come to the roofline, fitted from
`validate` reports and stored beside the platform file (``platforms/calibration/<name>.toml``),
never over its datasheet numbers. Every value says which report it was fitted from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from roofline.spec import PYDANTIC_CONFIG
from roofline.spec.limits import LIMITS, check, check_schema_version, check_sourced
from roofline.spec.platform import Platform, platform_fingerprint
from roofline.spec.sourced import Sourced

__all__ = ["Calibration", "MeasuredHost", "platform_fingerprint"]

#: the newest calibration file layout this version reads
SCHEMA_VERSION = 1


#: an efficiency above this (measured far faster than the roofline) means wrong ceiling inputs, not a fit
MAX_EFFICIENCY = LIMITS["calibration.efficiency"].high
#: an efficiency below this (a kernel a thousand times slower than its ceiling) is a broken measurement
MIN_EFFICIENCY = LIMITS["calibration.efficiency"].low


def _micro(name: str) -> str:
    return " ".join(name.lower().replace("(", " ").replace(")", " ").split())


@dataclass(frozen=True)
class MeasuredHost:
    """The host a calibration was measured on, by what it is, not by its file's name (every probe is named
    ``host``): a platform with the same probe, or the same cores, ISA and microarchitecture, is that host."""

    __pydantic_config__ = PYDANTIC_CONFIG

    cpu_model: str
    """as the reports' host section gives it (``/proc/cpuinfo`` model name)"""
    microarchitecture: str
    sockets: int
    cores_per_socket: int
    isa: tuple[str, ...]
    """the ISA flags of the platform the reports were fitted over (as /proc/cpuinfo spells them)"""
    probe_sha256: str = ""
    """:func:`platform_fingerprint` of that platform (its probe)"""

    def __post_init__(self) -> None:
        check("platform.sockets", self.sockets, "sockets")
        check("platform.cores_per_socket", self.cores_per_socket, "cores_per_socket")

    @classmethod
    def of(cls, p: Platform, cpu_model: str) -> MeasuredHost:
        return cls(cpu_model=cpu_model, microarchitecture=p.microarchitecture, sockets=int(p.sockets.known_value),
                   cores_per_socket=int(p.cores_per_socket.known_value), isa=tuple(p.isa),
                   probe_sha256=platform_fingerprint(p))

    def differences(self, p: Platform) -> list[str]:
        """What differs between this host and platform ``p`` (nothing: ``p`` is this host)."""
        if self.probe_sha256 and self.probe_sha256 == platform_fingerprint(p):
            return []
        out = []
        cores = (int(p.sockets.known_value), int(p.cores_per_socket.known_value))
        if cores != (self.sockets, self.cores_per_socket):
            out.append(f"{cores[0]} x {cores[1]} cores, not {self.sockets} x {self.cores_per_socket}")
        mine, theirs = _micro(self.microarchitecture), _micro(p.microarchitecture)
        if not (mine.startswith(theirs) or theirs.startswith(mine)):
            out.append(f"microarchitecture {p.microarchitecture}, not {self.microarchitecture}")
        if set(p.isa) != set(self.isa):
            extra, missing = sorted(set(p.isa) - set(self.isa)), sorted(set(self.isa) - set(p.isa))
            out.append("ISA " + "; ".join(x for x in (f"with {', '.join(extra)}" if extra else "",
                                                      f"without {', '.join(missing)}" if missing else "") if x))
        return out

    def describe(self) -> str:
        return f"{self.cpu_model} ({self.microarchitecture}), {self.sockets} x {self.cores_per_socket} cores"


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
    host: MeasuredHost | None = None
    """the measured host: what the calibration applies to (a file without it matches by platform name)"""
    schema_version: int = 1
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_schema_version(self.schema_version, SCHEMA_VERSION)
        for group in ("gemm_efficiency", "kernel_efficiency", "non_gemm_efficiency", "kernel_quantization_efficiency"):
            for k, v in getattr(self, group).items():
                _efficiency(f"{group}.{k}", v)
        if self.quantization_efficiency is not None:
            _efficiency("quantization_efficiency", self.quantization_efficiency)
        for name in ("call_s", "per_op_s"):
            v = getattr(self, name)
            if v is not None and not (v.known and v.value >= 0):
                raise ValueError(f"{name}: seconds, 0 or more")
            check_sourced(f"calibration.{name}", v, name)

    def gemm(self, precision: str) -> float:
        """GEMM efficiency inside a compiled model; 1 when not calibrated."""
        s = self.gemm_efficiency.get(precision)
        return s.known_value if s is not None else 1.0

    def kernel(self, precision: str) -> float:
        """Efficiency of one GEMM called on its own; the in-model one when not calibrated apart."""
        s = self.kernel_efficiency.get(precision)
        return s.known_value if s is not None else self.gemm(precision)

    def quantization(self, precision: str, graph: bool = True) -> float:
        """Quantization efficiency in a compiled model, or (``graph=False``) of one linear called on
        its own; 1 when not calibrated."""
        s = self.quantization_efficiency if graph else self.kernel_quantization_efficiency.get(precision)
        return s.value if s is not None and s.value else 1.0

    def non_gemm(self, key: str) -> float:
        """Efficiency of a non-GEMM part in a mode, e.g. ``attention-fp32``; 1 when not calibrated."""
        s = self.non_gemm_efficiency.get(key)
        return s.known_value if s is not None else 1.0


def _efficiency(name: str, v: Sourced) -> None:
    if not v.known:
        raise ValueError(f"{name}: an efficiency must be known ({v.unknown})")
    check("calibration.efficiency", v.value, name)
