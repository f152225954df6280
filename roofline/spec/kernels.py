"""An engine's CPU kernels for GGUF block types, as data (``platforms/kernels/<engine>.toml``): which kernel runs a
call of ``M`` activation rows of each type in a build of a given date, and how many cycles each kernel takes per 32
weights of one weight row per activation row on each core (LLVM's name of it, a platform's ``core``).

Kernel families (llama.cpp's x86 CPU backend, ``ggml/src/ggml-cpu``):

==========  =================================================================================================
vec_dot     ``ggml_vec_dot_<type>_q8_*`` per (weight row, activation row): every block unpacked again per row
repack      weights interleaved 8 rows at load: a GEMV per row below 4 rows, a GEMM over 16- and 4-row groups
            (the rows left over by the GEMV)
sgemm       llamafile's tinyBLAS over tiles of up to 4 activation rows (2 rows or more)
tiled       a 256 x 256 weight tile unpacked once, then multiplied with every activation row (8 rows or more)
==========  =================================================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field

from roofline.spec import PYDANTIC_CONFIG
from roofline.spec.vocab import Vocab

SCHEMA_VERSION = 1


class Kernel(Vocab):
    """A kernel family (module docstring)."""

    VEC_DOT = "vec_dot"
    REPACK = "repack"
    SGEMM = "sgemm"
    TILED = "tiled"


#: the cycle entries each family reads: per 32 weights of one weight row, per activation row (``tiled_unpack``:
#: per 32 weights, once per call)
CYCLE_KEYS = ("vec_dot", "gemv", "gemm4", "gemm16", "sgemm1", "sgemm2", "sgemm3", "sgemm4", "tiled", "tiled_unpack")


@dataclass(frozen=True)
class Dispatch:
    """The types a kernel family takes, from which activation rows, in builds from ``since`` on."""

    __pydantic_config__ = PYDANTIC_CONFIG

    types: tuple[str, ...]
    kernel: Kernel
    evidence: str
    since: str = ""
    """the first build date with it (ISO, as a record's ``date``); empty: every build the tables price"""
    requires: tuple[str, ...] = ()
    """ISA flags the kernel needs (``avx512f``)"""

    def __post_init__(self) -> None:
        if self.kernel is Kernel.VEC_DOT:
            raise ValueError("kernel: vec_dot is what runs when no rule applies; a rule names repack, sgemm or tiled")
        if self.since and len(self.since) != 10:
            raise ValueError(f"since: an ISO date (2024-12-07), got {self.since!r}")


def _check_serial(shares: dict[str, float], evidence: str) -> None:
    from roofline.calc.kernel_cycles import GEMM, GEMV, SGEMM, TILED, VEC_DOT

    known = (VEC_DOT, GEMV, GEMM, SGEMM, TILED)
    for k, v in shares.items():
        if k not in known:
            raise ValueError(f"serial_stream: {k!r} is not a kernel; one of {', '.join(known)}")
        if not (v == v and 0.0 <= v <= 1.0):
            raise ValueError(f"serial_stream.{k}: a share from 0 to 1, got {v}")
    if shares and not evidence.strip():
        raise ValueError("serial_evidence: say what shows that these kernels do not overlap their stream")


@dataclass(frozen=True)
class CoreCycles:
    """One core's cycles per 32 weights of one weight row per activation row, per type and kernel entry."""

    __pydantic_config__ = PYDANTIC_CONFIG

    source: str
    types: dict[str, dict[str, float]] = field(default_factory=dict)
    """type -> entry (:data:`CYCLE_KEYS`) -> cycles"""
    timed: bool = False
    """the cycles are the engine's own kernels timed on the core (``source`` says how), not counted on a model of
    it: what counting leaves out (cache misses, the front end, the threads' split of the work) is in them already,
    so they are priced as they stand (efficiency 1), not over the counted cycles' fitted efficiency"""
    serial_stream: dict[str, float] = field(default_factory=dict)
    """this core's own shares, where a measurement on it gives them (:attr:`KernelTable.serial_stream`; a kernel not
    listed here takes the table's)"""
    serial_evidence: str = ""
    """what measured them on this core (required with ``serial_stream``)"""

    def __post_init__(self) -> None:
        _check_serial(self.serial_stream, self.serial_evidence)
        for t, entries in self.types.items():
            for k, v in entries.items():
                if k not in CYCLE_KEYS:
                    raise ValueError(f"types.{t}.{k}: one of {', '.join(CYCLE_KEYS)}")
                if not (v == v and 0 < v < 1e4):
                    raise ValueError(f"types.{t}.{k}: cycles per 32 weights, above 0 and below 10,000, got {v}")
            if "vec_dot" not in entries:
                raise ValueError(f"types.{t}: give vec_dot, the kernel every type has")


@dataclass(frozen=True)
class KernelTable:
    """An engine's kernels (module docstring)."""

    __pydantic_config__ = PYDANTIC_CONFIG

    engine: str
    build: str
    """the source the cycles were counted in"""
    method: str
    dispatch: tuple[Dispatch, ...]
    cycles: dict[str, CoreCycles]
    """core (LLVM's name) -> its cycles"""
    aliases: dict[str, str] = field(default_factory=dict)
    """a core without cycles of its own -> the core whose it takes (and why, in ``method``)"""
    serial_stream: dict[str, float] = field(default_factory=dict)
    """kernel (:mod:`roofline.calc.kernel_cycles`' labels: vec_dot, gemv, gemm, sgemm, tiled) -> the share of its
    weights' stream at the cores' own bandwidth that adds to its arithmetic on each core, 0 to 1 (1: it streams
    between its arithmetic, not beside it; a kernel not listed: 0,
    :func:`~roofline.calc.core_stream.serial_kernel_seconds`)"""
    serial_evidence: str = ""
    """what shows it (required with ``serial_stream``)"""
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        _check_serial(self.serial_stream, self.serial_evidence)

    def core_cycles(self, core: str) -> CoreCycles | None:
        return self.cycles.get(core) or self.cycles.get(self.aliases.get(core, ""))

    def serial_shares(self, cycles: CoreCycles | None) -> dict[str, float]:
        """Each kernel's serial share on a core: the core's own where it has them, else the table's."""
        return {**self.serial_stream, **(cycles.serial_stream if cycles is not None else {})}

    def rule(self, ggml_type: str, kernel: Kernel, isa: tuple[str, ...], date: str | None) -> Dispatch | None:
        """The rule giving ``ggml_type`` the kernel family in a build of ``date`` (None: today's) on a CPU with
        ``isa``, or None."""
        for d in self.dispatch:
            if (d.kernel is kernel and ggml_type in d.types and (not d.since or date is None or date >= d.since)
                    and all(f in isa for f in d.requires)):
                return d
        return None
