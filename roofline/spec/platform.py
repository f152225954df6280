"""Platform spec: one CPU server, as a TOML file in ``platforms/``.

All per-socket numbers are per socket; the estimate multiplies by the sockets
it uses. Units are the ones in the field names (GHz, GB/s with GB = 1e9 bytes,
MiB for cache sizes); the accessors return SI units.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from roofline.spec import PYDANTIC_CONFIG
from roofline.spec.limits import check, check_schema_version, check_sourced
from roofline.spec.power import Power
from roofline.spec.sourced import UNMEASURED, Sourced
from roofline.spec.vocab import TierUse, coerce
from roofline.units import GIGA, MIB

ComputeDtype = Literal["fp32", "bf16", "fp16", "int8"]

#: dtypes every platform must have a compute path for (bf16 and fp16 may be absent:
#: the estimate then says the precision runs on the FP32 path).
REQUIRED_DTYPES: tuple[str, ...] = ("fp32", "int8")

#: the newest platform file layout this version reads
SCHEMA_VERSION = 1
#: the ISA flags of an INT8 dot product that does not saturate: VNNI's u8 x s8 at full range, AMX's (without them,
#: AVX2 multiplies byte pairs into 16 bits, which full-range u8 x s8 inputs overflow)
INT8_DOT_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8"})


@dataclass(frozen=True)
class ComputePath:
    """One way the cores execute a GEMM of one dtype (e.g. INT8 on AMX tiles)."""

    __pydantic_config__ = PYDANTIC_CONFIG

    dtype: ComputeDtype
    """the dtype the multiply-accumulate runs in"""
    isa_class: str
    """key of `frequency_ghz`: the all-core frequency this path runs at"""
    ops_per_cycle: Sourced
    """ops per cycle per core (a multiply-accumulate counts 2)"""
    requires: tuple[str, ...] = ()
    """ISA flags the path needs, as /proc/cpuinfo spells them"""
    note: str = ""
    emulated: bool = False
    """the host has no instructions for this dtype and the kernel converts or loops in software (BF16
    without AVX512_BF16 or AMX): measured, but not a path the estimate prices a precision on"""


@dataclass(frozen=True)
class Dram:
    __pydantic_config__ = PYDANTIC_CONFIG

    theoretical_gb_per_s: Sourced = Sourced(unknown="not given")
    """per socket: channels x MT/s x 8 bytes"""
    measured_gb_per_s: Sourced = UNMEASURED
    """per socket, sustained read with all cores"""
    read_gb_per_s_per_core: Sourced = Sourced(unknown="not given")
    """what one core alone can read from DRAM; caps a few-core layout's share (cores x this)"""
    capacity_gb: Sourced = Sourced(unknown="not given")
    """per socket, GB (1e9 bytes) of DRAM: what the weights and a decoder's KV cache share (``roofline plan``)"""
    channels_per_socket: Sourced = Sourced(unknown="not given")
    """memory channels per socket the file's bandwidths are for (a run on fewer populated channels scales them)"""
    speed_mt_per_s: Sourced = Sourced(unknown="not given")
    """the DIMMs' transfer rate, MT/s (theoretical = channels x MT/s x 8 bytes)"""


@dataclass(frozen=True)
class MemoryTier:
    """A second memory tier beside DRAM, per socket (:mod:`roofline.calc.tiers`): on-package HBM, CXL memory."""

    __pydantic_config__ = PYDANTIC_CONFIG

    name: str
    """what it is (``hbm2e``, ``cxl``)"""
    use: TierUse
    """how it holds the pages: before DRAM, after DRAM, or as DRAM's cache"""
    capacity_gb: Sourced
    """per socket, GB (1e9 bytes)"""
    theoretical_gb_per_s: Sourced = Sourced(unknown="not given")
    """per socket, the datasheet's (the bound's; required)"""
    measured_gb_per_s: Sourced = UNMEASURED
    """per socket, sustained read with all cores (the attainable ceiling's; without it, the theoretical one at the
    STREAM fraction, as DRAM's)"""
    interleave_share: float | None = None
    """``use = "interleave"``: the share of the pages on the tier (``w_tier / sum of the weights``; 0.5 for
    ``numactl --interleave`` over DRAM and the tier)"""

    def __post_init__(self) -> None:
        coerce(self, use=TierUse)
        if not self.name.strip():
            raise ValueError("name: say what the tier is (hbm2e, cxl)")
        _positive("capacity_gb", self.capacity_gb)
        check_sourced("platform.memory_tiers.capacity_gb", self.capacity_gb, "capacity_gb")
        if (self.use is TierUse.INTERLEAVE) != (self.interleave_share is not None) or (
                self.interleave_share is not None and not 0.0 < self.interleave_share < 1.0):
            raise ValueError("interleave_share: the share of the pages on the tier, between 0 and 1, given "
                             "with use = \"interleave\" and only then")
        if not self.theoretical_gb_per_s.known:
            raise ValueError("theoretical_gb_per_s: give the tier's datasheet bandwidth per socket (HBM: "
                             "stacks x GB/s a stack; CXL: the devices' links), the bound's figure")
        for k in ("theoretical_gb_per_s", "measured_gb_per_s"):
            v = getattr(self, k)
            if v.known:
                _positive(k, v)
                check_sourced(f"platform.memory_tiers.{k}", v, k)


@dataclass(frozen=True)
class L2:
    """The per-core (private) L2 cache."""

    __pydantic_config__ = PYDANTIC_CONFIG

    size_kib: Sourced
    """per core, KiB"""
    read_bytes_per_cycle: Sourced = Sourced(unknown="not given")
    """per core: the L2-to-L1 read width, bytes per cycle (times the core clock gives the datasheet bandwidth)"""
    read_gb_per_s: Sourced = UNMEASURED
    """per socket, every core reading its own working set that fits its L2 (measured)"""


@dataclass(frozen=True)
class Llc:
    __pydantic_config__ = PYDANTIC_CONFIG

    size_mib: Sourced
    """last-level cache per socket, MiB"""
    domains_per_socket: int = 1
    """LLC slices per socket that cores cannot share (AMD: one per CCD); weights shared by all
    cores stay resident only if they fit one slice"""
    read_gb_per_s: Sourced = UNMEASURED
    """per socket, all cores reading a working set that fits the LLC"""
    read_gb_per_s_per_core: Sourced = Sourced(unknown="not given")
    """what one core alone can read from the LLC; caps a few-core layout's share (cores x this)"""

    def __post_init__(self) -> None:
        check("platform.llc.domains_per_socket", self.domains_per_socket, "domains_per_socket")


@dataclass(frozen=True)
class Platform:
    """A CPU server: sockets, cores, compute paths with their per-cycle rates, DRAM and LLC."""

    __pydantic_config__ = PYDANTIC_CONFIG

    name: str
    """catalog name, used with --cpu"""
    description: str
    vendor: str
    microarchitecture: str
    isa: tuple[str, ...]
    """ISA flags as /proc/cpuinfo spells them"""
    sockets: Sourced
    cores_per_socket: Sourced
    frequency_ghz: dict[str, Sourced]
    """nominal all-core frequency per ISA class (e.g. avx2, avx512, amx): the reference paper's input,
    used by ``--memory-model paper``"""
    compute: dict[str, ComputePath]
    """compute paths by name (e.g. fp32-avx512, int8-amx)"""
    dram: Dram
    llc: Llc
    l2: L2 | None = None
    """the private L2 cache; without it activations are priced at the LLC or DRAM"""
    all_core_turbo_ghz: dict[str, Sourced] = field(default_factory=dict)
    """per ISA class: the highest clock the datasheet allows with every core of a socket busy"""
    max_turbo_ghz: dict[str, Sourced] = field(default_factory=dict)
    """per ISA class: the highest clock the datasheet allows with few cores busy (single-core boost)"""
    schema_version: int = 1
    aliases: tuple[str, ...] = ()
    """other names --cpu accepts"""
    notes: tuple[str, ...] = ()
    core: str = ""
    """the core's microarchitecture as LLVM names it (``-mcpu``: ``znver4``, ``sapphirerapids``, ...): the key of the
    kernel cycle tables; empty: none known, kernels priced at the ceiling's rates"""
    shared_host: str = ""
    """why the cores' host is shared, if it is (a KVM or cloud guest: "lscpu: Hypervisor vendor KVM"); empty: a
    whole machine. A guest's idle vCPUs say nothing of the host's other cores, which other guests keep busy, so
    the attainable ceiling gives a few busy cores no more than the all-core clock (``frequency_ghz``); the bound
    still allows the boost"""
    power: Power | None = None
    """per socket: TDP, idle and measured package power (the energy figures of estimate, plan and sweep); null:
    no power figure"""
    core_to_core_ns: Sourced = Sourced(unknown="not given")
    """the latency of one cache line's transfer between two cores of the socket, typical over all pairs (a spin
    barrier's cost per thread, :mod:`roofline.calc.barriers`); not given: the core's value in
    :data:`roofline.spec.core_latency.LINE_TRANSFER_NS`"""
    memory_tiers: tuple[MemoryTier, ...] = ()
    """a second memory tier per socket beside DRAM (HBM, CXL: :mod:`roofline.calc.tiers`); at most one"""
    socket_link_gb_per_s: Sourced = Sourced(unknown="not given")
    """what the links between two sockets carry each way, all links together (UPI: links x GT/s x 2 bytes; AMD's
    xGMI: links x lanes x Gbps / 8): the cap on a process spanning both sockets, which reads half its pages from
    the other socket's memory (:mod:`roofline.model.layout`); not given: such a process is refused"""

    def __post_init__(self) -> None:
        check_schema_version(self.schema_version, SCHEMA_VERSION)
        if len(self.memory_tiers) > 1:
            raise ValueError(f"memory_tiers: one tier beside DRAM is priced, got {len(self.memory_tiers)}")
        _positive("sockets", self.sockets, integer=True)
        _positive("cores_per_socket", self.cores_per_socket, integer=True)
        check_sourced("platform.sockets", self.sockets)
        check_sourced("platform.cores_per_socket", self.cores_per_socket)
        for table in ("frequency_ghz", "all_core_turbo_ghz", "max_turbo_ghz"):
            for isa_class, f in getattr(self, table).items():
                _positive(f"{table}.{isa_class}", f)
                check_sourced("platform.frequency_ghz.*", f, f"{table}.{isa_class}")
                if isa_class not in self.frequency_ghz:
                    raise ValueError(f"{table}.{isa_class}: no frequency_ghz.{isa_class} beside it")
        for name, path in self.compute.items():
            _positive(f"compute.{name}.ops_per_cycle", path.ops_per_cycle)
            check_sourced("platform.compute.*.ops_per_cycle", path.ops_per_cycle, f"compute.{name}.ops_per_cycle")
            if path.isa_class not in self.frequency_ghz:
                raise ValueError(
                    f"compute.{name}.isa_class: '{path.isa_class}' has no frequency_ghz entry "
                    f"(have: {', '.join(sorted(self.frequency_ghz)) or 'none'})"
                )
        for dtype in REQUIRED_DTYPES:
            if not any(p.dtype == dtype for p in self.compute.values()):
                raise ValueError(f"compute: no {dtype} path; add a [compute.<name>] table with dtype = '{dtype}'")
            if not self.paths_for(dtype):
                name = next(n for n, p in self.compute.items() if p.dtype == dtype)
                raise ValueError(f"compute.{name}.emulated: every {dtype} path is emulated; {dtype} needs a native "
                                 "path (the one the estimate prices it on): set emulated = false on the path that runs")
        if self.core_to_core_ns.known:
            _positive("core_to_core_ns", self.core_to_core_ns)
            check_sourced("platform.core_to_core_ns", self.core_to_core_ns)
        if self.socket_link_gb_per_s.known:
            _positive("socket_link_gb_per_s", self.socket_link_gb_per_s)
            check_sourced("platform.socket_link_gb_per_s", self.socket_link_gb_per_s)
        theoretical, measured = self.dram.theoretical_gb_per_s, self.dram.measured_gb_per_s
        if not (theoretical.known or measured.known):
            raise ValueError("dram: give theoretical_gb_per_s or measured_gb_per_s (or both)")
        if theoretical.known:
            _positive("dram.theoretical_gb_per_s", theoretical)
            check_sourced("platform.dram.theoretical_gb_per_s", theoretical)
        if measured.known:
            _positive("dram.measured_gb_per_s", measured)
            check_sourced("platform.dram.measured_gb_per_s", measured)
            if theoretical.known and measured.known_value > 1.05 * theoretical.known_value:
                raise ValueError(
                    f"dram.measured_gb_per_s: {measured.value:g} exceeds the theoretical "
                    f"{self.dram.theoretical_gb_per_s.value:g} GB/s"
                )
        if self.dram.capacity_gb.known:
            _positive("dram.capacity_gb", self.dram.capacity_gb)
            check_sourced("platform.dram.capacity_gb", self.dram.capacity_gb)
        for name in ("channels_per_socket", "speed_mt_per_s"):
            v = getattr(self.dram, name)
            if v.known:
                _positive(f"dram.{name}", v, integer=name == "channels_per_socket")
                check_sourced(f"platform.dram.{name}", v, f"dram.{name}")
        _positive("llc.size_mib", self.llc.size_mib)
        check_sourced("platform.llc.size_mib", self.llc.size_mib)
        for name, v in (("dram.read_gb_per_s_per_core", self.dram.read_gb_per_s_per_core),
                        ("llc.read_gb_per_s_per_core", self.llc.read_gb_per_s_per_core)):
            if v.known:
                _positive(name, v)
                check_sourced(f"platform.{name}", v, name)
        if self.l2 is not None:
            _positive("l2.size_kib", self.l2.size_kib)
            check_sourced("platform.l2.size_kib", self.l2.size_kib, "l2.size_kib")
            for name in ("read_bytes_per_cycle", "read_gb_per_s"):
                if getattr(self.l2, name).known:
                    _positive(f"l2.{name}", getattr(self.l2, name))
                    check_sourced(f"platform.l2.{name}", getattr(self.l2, name), f"l2.{name}")
        d_core, l_core = self.dram.read_gb_per_s_per_core, self.llc.read_gb_per_s_per_core
        if d_core.known and l_core.known and l_core.known_value < d_core.known_value:
            raise ValueError(f"llc.read_gb_per_s_per_core: {l_core.value:g} GB/s is below DRAM's per-core "
                             f"{d_core.value:g} GB/s; an LLC slower than memory is not physical")
        if self.llc.read_gb_per_s.known:
            _positive("llc.read_gb_per_s", self.llc.read_gb_per_s)
            check_sourced("platform.llc.read_gb_per_s", self.llc.read_gb_per_s)
            dram = self.dram_gb_per_s("measured")
            if self.llc.read_gb_per_s.known_value < dram:
                raise ValueError(
                    f"llc.read_gb_per_s: {self.llc.read_gb_per_s.value:g} GB/s is below the DRAM bandwidth "
                    f"{dram:g} GB/s; an LLC slower than memory is not physical"
                )

    # --- plain accessors (SI units); the roofline arithmetic lives in roofline.calc ---

    @property
    def all_names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    def dram_kind(self, prefer: str = "measured") -> Literal["measured", "theoretical"]:
        """Which DRAM figure the estimate uses: the preferred one when known, else the other."""
        measured, theoretical = self.dram.measured_gb_per_s.known, self.dram.theoretical_gb_per_s.known
        if (prefer == "measured" and measured) or not theoretical:
            return "measured"
        return "theoretical"

    def dram_gb_per_s(self, prefer: str = "measured") -> float:
        kind = self.dram_kind(prefer)
        return (self.dram.measured_gb_per_s if kind == "measured" else self.dram.theoretical_gb_per_s).known_value

    def dram_bytes_per_s(self, sockets: int, prefer: str = "measured") -> float:
        return self.dram_gb_per_s(prefer) * GIGA * sockets

    def llc_bytes_per_s(self, sockets: int) -> float | None:
        s = self.llc.read_gb_per_s
        return s.known_value * GIGA * sockets if s.known else None

    @property
    def llc_domain_bytes(self) -> float:
        """Bytes of LLC one shared copy of the weights can live in."""
        return self.llc.size_mib.known_value * MIB / self.llc.domains_per_socket

    def frequency_hz(self, path: str) -> float:
        return self.frequency_ghz[self.compute[path].isa_class].known_value * GIGA

    def nominal_peak(self, path: str, sockets: int | None = None) -> float:
        """A path's datasheet peak at the nominal clock, every core of ``sockets`` sockets (default: all):
        ``sockets x cores x f_nominal x ops per cycle`` (:func:`~roofline.calc.roofline.compute_peak`)."""
        from roofline.calc.roofline import compute_peak

        n = self.sockets.known_value if sockets is None else sockets
        c = self.compute[path]
        return float(compute_peak(n, self.cores_per_socket.known_value, self.frequency_hz(path),
                                  c.ops_per_cycle.known_value))

    def paths_for(self, dtype: str) -> list[str]:
        """The native paths of ``dtype`` (an emulated one is never priced: BF16 without native BF16 is
        autocast to FP32, as PyTorch runs it)."""
        return [name for name, p in self.compute.items() if p.dtype == dtype and not p.emulated]

    def emulated_paths(self, dtype: str) -> list[str]:
        return [name for name, p in self.compute.items() if p.dtype == dtype and p.emulated]


def platform_fingerprint(p: Platform) -> str:
    """A platform's measured identity: the SHA-256 of every number and source it holds, its name, aliases,
    description and notes left out (every probe is named ``host``; the same probe copied and renamed is the
    same host), its power figures (datasheet figures a file may add later), its core's name (a label of the
    microarchitecture, which a file may add later) and its core-to-core latency (a published figure, likewise)."""
    import dataclasses
    import hashlib
    import json

    data = dataclasses.asdict(p)
    for k in ("name", "aliases", "description", "notes", "core", "power", "core_to_core_ns", "socket_link_gb_per_s"):
        data.pop(k, None)
    if not data.get("memory_tiers"):  # a platform without a second tier hashes as before there were tiers
        data.pop("memory_tiers", None)
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def _positive(field_name: str, s: Sourced, integer: bool = False) -> None:
    if not s.known:
        raise ValueError(f"{field_name}: must be known ({s.unknown})")
    if s.known_value <= 0:
        raise ValueError(f"{field_name}: must be positive, got {s.value:g}")
    if integer and s.known_value != int(s.known_value):
        raise ValueError(f"{field_name}: must be a whole number, got {s.value:g}")




def with_sockets(platform: Platform, sockets: int) -> Platform:
    """``platform`` as a server of ``sockets`` of its sockets (1 to the file's): every per-socket figure stays, the
    whole-server ones (DRAM capacity, bandwidth x sockets) follow the count."""
    import dataclasses

    have = int(platform.sockets.known_value)
    if not 1 <= sockets <= have:
        raise ValueError(f"sockets: {platform.name} has {have} socket(s); give 1 to {have}")
    if sockets == have:
        return platform
    return dataclasses.replace(platform, sockets=Sourced(
        value=sockets, kind="derived", source=f"--sockets {sockets}: {sockets} of the platform file's {have} "
        f"({platform.sockets.source})"))


def with_memory_channels(platform: Platform, channels: int) -> Platform:
    """``platform`` with ``channels`` memory channels populated per socket instead of the file's
    ``dram.channels_per_socket``: its DRAM bandwidths (theoretical, measured, per core) scale by the
    ratio (bandwidth is channels x MT/s x 8 bytes; the per-core figure is capped by the socket's)."""
    import dataclasses

    have = platform.dram.channels_per_socket
    if not have.known:
        raise ValueError(f"memory channels: {platform.name} does not state dram.channels_per_socket, so its "
                         "bandwidths cannot be scaled; write a variant platform file with the bandwidths of that "
                         "configuration")
    if not 1 <= channels <= have.known_value:
        raise ValueError(f"memory channels: {channels} on {platform.name}, whose sockets have "
                         f"{int(have.known_value)} channels; give 1 to {int(have.known_value)}")
    if channels == have.value:
        return platform
    ratio = channels / have.known_value
    why = f"x {channels}/{int(have.known_value)}: {channels} of {int(have.known_value)} memory channels populated"

    def scaled(s: Sourced, cap: float | None = None) -> Sourced:
        if not s.known:
            return s
        v = s.known_value * ratio if cap is None else min(s.known_value, cap)
        return dataclasses.replace(s, value=v, kind="derived", source=f"{s.source} {why}")

    d = platform.dram
    theoretical, measured = scaled(d.theoretical_gb_per_s), scaled(d.measured_gb_per_s)
    socket = measured.value if measured.known else theoretical.value
    dram = dataclasses.replace(
        d, theoretical_gb_per_s=theoretical, measured_gb_per_s=measured,
        read_gb_per_s_per_core=scaled(d.read_gb_per_s_per_core, cap=socket),
        channels_per_socket=Sourced(value=channels, kind="assumed", source=f"the run's configuration ({why})"))
    return dataclasses.replace(platform, dram=dram,
                               description=f"{platform.description}, {channels} memory channels per socket")
