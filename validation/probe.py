"""``roofline probe``: measure this host and write it as a platform spec.

Measured with ``threads`` threads:

- the core clock with every probe thread busy: a dependent multiply chain (3 cycles each on every
  Intel core since Nehalem and every Zen), so cycles / seconds is the clock the cores really ran at (turbo included), which
  ``/proc/cpuinfo`` does not show in a VM;
- L2, LLC and DRAM bandwidth the way STREAM measures it: compiled read, copy and triad loops, every
  thread on its own part of the arrays, the best of repeated runs, on working sets that fit each
  level (half of each thread's L2; the LLC minus the L2s; eight times the LLC); the fastest kernel is
  the level's bandwidth (what the hardware delivered); one thread alone gives the per-core figures
  of the LLC and DRAM. Without a C compiler: torch sums and copies (said in the file);
- GEMM peaks, on the path a real model runs for each dtype (:mod:`roofline.validation.gemm_peaks`):
  FP32 and BF16 the fastest of ``aten.mm``, ``aten.linear`` and ``aten.addmm`` (without AVX512_BF16
  they differ by 50x, and BF16 is marked emulated: measured, never priced); INT8 the fastest native
  kernel of oneDNN's quantized linear on u8 and on s8 activations (7-bit, ``reduce_range``, where
  VNNI and AMX are absent) and ``aten._int_mm`` (emulated without VNNI or AMX). Outputs are checked
  against an exact or float64 reference; a kernel that saturates is not a peak. Each candidate is
  sized from one short trial call so that a slow path is measured on a smaller shape (said in the
  file) instead of for minutes, and at the trial's own size where that call ran below a tenth of its dtype's
  fastest so far (it cannot be the peak).

The probe runs within a budget (:data:`~roofline.validation.budget.PROBE_BUDGET_S`, less with
``--quick``): the GEMM candidates share what the clock and the bandwidths left. Every figure is
guarded by the contention canary (:mod:`roofline.validation.canary`): a measurement taken while
something else loaded the host is re-taken, up to twice and while the budget allows, and the file
says when it could not get a clean one (a probe read DRAM at 29.9 GB/s on a busy Zen 5 guest and at
52.7 GB/s when quiet). The canary's reference and the clock are kept beside the cached probe file,
where ``validate`` checks its own canary against them. ``ops_per_cycle`` is the measured peak over
(cores x the measured clock), so that cores x clock x ops_per_cycle gives back the measured peak
exactly; a value above the ISA's datasheet rate is named in the notes (the clock reading or the
kernel's op count is then off).
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from roofline.validation.budget import NO_DEADLINE, PROBE_BUDGET_S, QUICK_PROBE_BUDGET_S, Clock, Deadline, timed
from roofline.validation.canary import ProbeCanary
from roofline.validation.gemm_peaks import (
    Candidate,
    Measured,
    bf16_native,
    measure,
    per_call_budget,
    pick,
    torch_candidates,
)
from roofline.validation.host import HostInfo, catalog_match, detect_host
from roofline.validation.torch_env import require_torch, versions

from roofline.spec.platform import L2, REQUIRED_DTYPES, ComputePath, Dram, Llc, Platform
from roofline.spec.sourced import Sourced

TOOL = "roofline probe"


def _timed(fn: Callable[[], object], min_time: float = 0.3, trials: int = 3) -> float:
    """Best of ``trials`` medians, each over at least ``min_time`` seconds of calls (seconds per call)."""
    return timed(fn, min_time=min_time, trials=trials)


@dataclass
class GemmPeak:
    dtype: str
    kernel: str
    shape: tuple[int, int, int]
    ops_per_s: float
    rel_error: float
    candidates: dict[str, float] = field(default_factory=dict)
    measured: list[Measured] = field(default_factory=list)
    """every candidate as measured: its size, error, whether it is emulated"""

    @property
    def emulated(self) -> bool:
        return any(m.name == self.kernel and m.emulated for m in self.measured)


@dataclass
class Level:
    """One memory level's bandwidth as the probe measured it (bytes/s)."""

    working_set_bytes: int
    threads: int
    read: float
    copy: float
    triad: float | None = None
    method: str = "native"

    @property
    def best(self) -> float:
        return max(x for x in (self.read, self.copy, self.triad) if x is not None)

    def describe(self) -> str:
        triad = f", triad {self.triad / 1e9:.1f}" if self.triad is not None else ""
        how = "STREAM-style compiled loops" if self.method == "native" else "torch sum and copy"
        return (f"{how}: read {self.read / 1e9:.1f}, copy {self.copy / 1e9:.1f}{triad} GB/s over "
                f"{self.working_set_bytes / 2**20:g} MiB with {self.threads} thread(s)")


@dataclass
class ProbeResult:
    host: HostInfo
    threads: int
    date: str
    clock_hz: float
    clock_source: str
    dram: Level
    llc: Level | None
    l2: Level | None
    dram_one_core: Level | None
    llc_one_core: Level | None
    gemm: dict[str, GemmPeak]
    versions: dict[str, str]
    notes: list[str] = field(default_factory=list)
    canary: ProbeCanary | None = None
    """the probe's contention canary (its reference and the clock), stored beside the probe file"""
    seconds: float | None = None
    """how long the probe took"""


def _torch_level(torch, nbytes: int, threads: int) -> Level:
    """The fallback without a C compiler: a torch sum (read) and copy over ``nbytes``."""
    x = torch.rand(nbytes // 8)
    y = torch.empty_like(x)
    read = (nbytes // 2) / _timed(lambda: x.sum())
    copy = nbytes / _timed(lambda: y.copy_(x))
    return Level(nbytes, threads, read, copy, None, method="torch")


def gemm_peaks(candidates: list[Candidate], size: int, deadline: Deadline, *, canary=None,
               notes: list[str] | None = None, progress: Callable[[str], None] = lambda s: None,
               clock: Clock = time.perf_counter, reserve_s: float = 2.0, min_time: float = 0.3) -> dict[str, GemmPeak]:
    """Each candidate sized from one trial call (:func:`~roofline.validation.gemm_peaks.measure`) so that
    all of them fit what ``deadline`` leaves (less ``reserve_s``), then the peak of each dtype
    (:func:`~roofline.validation.gemm_peaks.pick`). A candidate that fails to run is left out with a note."""
    notes = [] if notes is None else notes
    by_dtype: dict[str, list[Measured]] = {}
    for i, c in enumerate(candidates):
        per_call = per_call_budget(deadline.left() - reserve_s, len(candidates) - i)
        progress(f"GEMM peaks: {c.name}")
        try:
            fastest = max((x.ops_per_s for x in by_dtype.get(c.dtype, []) if x.correct and (c.emulated or not x.emulated)),
                          default=0.0)
            m = _guarded(lambda c=c, per_call=per_call, fastest=fastest: measure(
                c, size, per_call, clock=clock, min_time=min_time, fastest=fastest),
                canary, f"GEMM {c.name}", notes, deadline=deadline)
        except (RuntimeError, AttributeError, NotImplementedError) as e:
            notes.append(f"{c.name}: not measured ({type(e).__name__}: {(str(e).splitlines() or [''])[0][:120]})")
            continue
        if m.reduced:
            progress(f"GEMM peaks: {c.name}: a slow path, measured at {m.size}^3"
                     + (" (below a tenth of its dtype's fastest)" if m.outpaced else ""))
        by_dtype.setdefault(c.dtype, []).append(m)
    out = {}
    for dtype, ms in by_dtype.items():
        best = pick(ms)
        out[dtype] = GemmPeak(dtype, best.name, (best.size,) * 3, best.ops_per_s, best.rel_error,
                              {m.name: m.ops_per_s for m in ms}, ms)
    return out


def _guarded(measure: Callable[[], object], canary, what: str, notes: list[str], attempts: int = 3,
             deadline: Deadline = NO_DEADLINE):
    """``measure()``, re-taken while the canary says the host was busy (up to ``attempts``, and while the
    ``deadline`` leaves time for one more as long as the last); the result kept is the last clean one, or
    the last with a note when none was clean. Frequency throttling is not contention: never re-taken."""
    results = []
    for _ in range(attempts):
        mark = canary.mark() if canary is not None else None
        t0 = deadline.clock()
        r = measure()
        sample = canary.sample(mark) if canary is not None else None
        clean = sample is None or not sample.contended
        results.append((clean, r))
        if clean or not deadline.allows(deadline.clock() - t0):
            break
    clean = [r for ok, r in results if ok]
    if not clean and canary is not None:
        notes.append(f"{what}: the host was busy in all {len(results)} attempt(s) ({canary.history[-1].reason}); "
                     "the figure may be low")
    return (clean or [r for _, r in results])[-1]


def run_probe(threads: int | None = None, host: HostInfo | None = None, quick: bool = False,
              progress: Callable[[str], None] = lambda s: None, budget_s: float | None = None) -> ProbeResult:
    """Measure this host within ``budget_s`` (default: :data:`PROBE_BUDGET_S`, or
    :data:`QUICK_PROBE_BUDGET_S` with ``quick``): the clock and the bandwidths first, then the GEMM
    candidates sized to fit what is left."""
    torch = require_torch()
    from roofline.validation import native
    from roofline.validation.canary import Canary

    from roofline.catalog.cache import cache_dir

    deadline = Deadline(budget_s or (QUICK_PROBE_BUDGET_S if quick else PROBE_BUDGET_S))
    host = host or detect_host()
    threads = threads or host.cores
    torch.set_num_threads(threads)
    notes: list[str] = []
    try:
        so = native.load(cache_dir())
    except native.NativeUnavailable as e:
        so = None
        notes.append(f"bandwidths from torch sums and copies, not compiled STREAM loops: {e}")
    progress("contention canary")
    canary = Canary(threads, clock_reader=native.ClockReader(so, threads) if so is not None else None)
    llc_cache = host.llc
    llc_bytes = (llc_cache.size_bytes * host.sockets) if llc_cache else 32 * 2**20
    l2_cache = next((c for c in host.caches if c.level == 2 and c.type == "Unified"), None)
    dram_bytes = max(8 * llc_bytes, (128 if quick else 256) * 2**20)

    progress("core clock")
    if so is not None:
        clock = _guarded(lambda: native.core_clock_hz(so, threads), canary, "core clock", notes, deadline=deadline)
        clock_source = f"a dependent multiply chain on each of {threads} threads at once (3 cycles a multiply)"
        canary.probe_clock_hz = clock
    else:
        clock = (host.mhz or 1000.0) * 1e6
        clock_source = "/proc/cpuinfo 'cpu MHz' (nominal; turbo not visible)"

    def level(nbytes: int, n_threads: int, what: str) -> Level:
        if so is None:
            return _guarded(lambda: _torch_level(torch, nbytes, n_threads), canary, what, notes, deadline=deadline)
        b = _guarded(lambda: native.bandwidth(so, nbytes, n_threads), canary, what, notes, deadline=deadline)
        torch.set_num_threads(threads)  # the STREAM loops set OpenMP's thread count, which torch shares
        return Level(b.working_set_bytes, b.threads, b.read, b.copy, b.triad)

    progress("DRAM bandwidth")
    dram = level(dram_bytes, threads, "DRAM bandwidth")
    dram_one = level(dram_bytes, 1, "DRAM bandwidth of one core") if threads > 1 else None
    l2 = llc = llc_one = None
    if l2_cache is not None:
        progress("L2 bandwidth")
        l2 = level(l2_cache.size_bytes // 2 * threads, threads, "L2 bandwidth")
    if llc_cache is not None:
        progress("LLC bandwidth")
        own_l2 = (l2_cache.size_bytes * threads) if l2_cache else 0
        ws = max(llc_bytes // 2, min(int(llc_bytes * 0.75), 2 * own_l2))
        llc = level(ws, threads, "LLC bandwidth")
        llc_one = level(max(llc_bytes // 2, 2 * (l2_cache.size_bytes if l2_cache else 0)), 1,
                        "LLC bandwidth of one core") if threads > 1 else None
    size = 1024 if quick else (2048 if threads <= 8 else 4096)
    torch.set_num_threads(threads)  # whatever the kernels above did to the process's thread settings
    gemm = gemm_peaks(torch_candidates(torch, host), size, deadline, canary=canary, notes=notes, progress=progress)
    return ProbeResult(
        host=host, threads=threads, date=_dt.date.today().isoformat(), clock_hz=clock, clock_source=clock_source,
        dram=dram, llc=llc, l2=l2, dram_one_core=dram_one, llc_one_core=llc_one, gemm=gemm, versions=versions(),
        notes=notes, canary=canary.probe_record(), seconds=deadline.elapsed(),
    )


def probe_platform(r: ProbeResult, name: str = "host") -> Platform:
    """The measured host as a :class:`Platform` in the catalog's schema."""
    h = r.host
    sockets = h.sockets if r.threads > h.cores_per_socket else 1
    cores_per_socket = max(r.threads // sockets, 1)
    ghz = r.clock_hz / 1e9

    def measured(value: float, source: str, threads: int | None = None) -> Sourced:
        value = float(f"{value:.4g}") if isinstance(value, float) else value
        return Sourced(value=value, kind="measured", source=source, date=r.date, threads=threads or r.threads,
                       tool=TOOL)

    compute = {}
    notes = list(r.notes)
    sheet = _datasheet_rates(h)
    for dtype, g in r.gemm.items():
        native = _native(h, dtype)
        # a required dtype's only path is priced as it runs, whatever its kernel (the spec refuses an emulated one)
        emulated = (not native or g.emulated) and dtype not in REQUIRED_DTYPES
        path = f"{dtype}-measured"
        ops = g.ops_per_s / (r.threads * ghz * 1e9)
        src = (f"{g.kernel}, {g.shape[0]}x{g.shape[1]}x{g.shape[2]}: {g.ops_per_s / 1e9:.1f} Gops/s with "
               f"{r.threads} threads, over {ghz:.4g} GHz x {r.threads} cores; rel. error {g.rel_error:.1e}")
        note = ""
        if emulated:
            note = (f"no native {dtype.upper()} instructions on this host: emulated, measured as is; not priced "
                    f"(the estimate runs {dtype.upper()} as autocast to FP32)")
        elif g.emulated:
            notes.append(f"{dtype.upper()}: no native kernel measured a correct result; the peak is the emulated "
                         f"{g.kernel}'s")
        compute[path] = ComputePath(dtype=dtype, isa_class="measured", ops_per_cycle=measured(ops, src),
                                    requires=(), note=note, emulated=emulated)
        if dtype in sheet and ops > 1.05 * sheet[dtype][0]:
            notes.append(f"{dtype.upper()}: {ops:.4g} ops/cycle/core measured, above the {sheet[dtype][0]:g} of the "
                         f"datasheet's {sheet[dtype][1]}: the clock reading ({ghz:.4g} GHz) is low, or the kernel "
                         "does fewer ops than counted")
    per_socket = lambda lv: lv.best / 1e9 / sockets  # noqa: E731
    llc = h.llc
    llc_size = measured(llc.size_bytes / 2**20, "sysfs cache/index3 size") if llc else Sourced(unknown="no LLC in sysfs")
    llc_bw = Sourced(unknown="no LLC found in sysfs")
    llc_core = Sourced(unknown="not measured (one probe thread)")
    dram_bw = per_socket(r.dram)
    if r.llc is not None:
        if per_socket(r.llc) >= dram_bw:
            llc_bw = measured(per_socket(r.llc), f"{r.llc.describe()}, per socket; the fastest kernel")
        else:
            llc_bw = Sourced(unknown=f"measured {per_socket(r.llc):.1f} GB/s, below DRAM: the LLC measurement was not clean")
    if r.llc_one_core is not None and llc_bw.known:
        llc_core = measured(r.llc_one_core.best / 1e9, f"{r.llc_one_core.describe()}; the fastest kernel", 1)
    dram_core = Sourced(unknown="not measured (one probe thread)")
    if r.dram_one_core is not None:
        dram_core = measured(r.dram_one_core.best / 1e9, f"{r.dram_one_core.describe()}; the fastest kernel", 1)
        if llc_core.known and llc_core.value < dram_core.value:
            llc_core = Sourced(unknown="measured below DRAM's per-core figure: not clean")
    l2 = None
    l2_cache = next((c for c in h.caches if c.level == 2 and c.type == "Unified"), None)
    if l2_cache is not None:
        l2_bw = (measured(per_socket(r.l2), f"{r.l2.describe()}, per socket; the fastest kernel")
                 if r.l2 is not None and (not llc_bw.known or per_socket(r.l2) >= llc_bw.value)
                 else Sourced(unknown="not measured, or below the LLC's: not clean"))
        l2 = L2(size_kib=measured(l2_cache.size_bytes / 1024, "sysfs cache/index2 size (per core)"), read_gb_per_s=l2_bw)
    isa = tuple(f for f, on in h.flags.items() if on)
    return Platform(
        name=name,
        description=f"{h.cpu_model} ({h.microarchitecture}), measured with {r.threads} threads",
        vendor=h.vendor, microarchitecture=h.microarchitecture, isa=isa,
        sockets=measured(sockets, "/proc/cpuinfo physical ids (sockets the threads span)"),
        cores_per_socket=measured(cores_per_socket, f"{r.threads} threads over {sockets} socket(s)"),
        frequency_ghz={"measured": measured(ghz, r.clock_source)},
        compute=compute,
        dram=Dram(measured_gb_per_s=measured(dram_bw, f"{r.dram.describe()}, per socket; the fastest kernel"),
                  read_gb_per_s_per_core=dram_core, capacity_gb=_capacity(h, r.date)),
        llc=Llc(size_mib=llc_size, read_gb_per_s=llc_bw, read_gb_per_s_per_core=llc_core),
        l2=l2,
        shared_host="the 'hypervisor' flag in /proc/cpuinfo: a guest of a host others may share" if h.hypervisor else "",
        notes=tuple(
            [f"host: {h.cpu_model}, {h.sockets} socket(s), {h.cores} cores, {h.threads} threads, "
             f"{h.numa_nodes} NUMA node(s), hypervisor: {h.hypervisor}"]
            + [f"{d.upper()} candidates: " + _candidates(r.gemm[d]) for d in ("fp32", "bf16", "int8") if d in r.gemm]
            + notes + [f"torch {r.versions.get('torch')}, torchao {r.versions.get('torchao')}"]
        ),
    )


def _candidates(g: GemmPeak) -> str:
    """Every candidate of one dtype, the peak first named: its rate, its shape, and why another is not the peak."""
    if not g.measured:
        return ", ".join(f"{k} {v / 1e9:.1f} Gops/s" for k, v in g.candidates.items())
    return ", ".join(m.describe() + (" <- the peak" if m.name == g.kernel else "") for m in g.measured)


def _capacity(h: HostInfo, date: str) -> Sourced:
    """DRAM per socket (GB = 1e9 bytes) from /proc/meminfo's MemTotal: what the OS can hand out (a plan's
    KV-cache cap), a little under the DIMMs' size."""
    if not h.memory_kib:
        return Sourced(unknown="/proc/meminfo not readable")
    per = h.memory_kib * 1024 / 1e9 / max(h.sockets, 1)
    return Sourced(value=float(f"{per:.4g}"), kind="measured", date=date, tool="/proc/meminfo",
                   source=f"/proc/meminfo MemTotal {h.memory_kib:,} kB over {max(h.sockets, 1)} socket(s)")


def _datasheet_rates(h: HostInfo) -> dict[str, tuple[float, str]]:
    """The highest datasheet ops/cycle per dtype of the catalog entry the host is an instance of."""
    name = catalog_match(h)
    if name is None:
        return {}
    from roofline.catalog import load_platform

    try:
        p = load_platform(name)
    except Exception:  # noqa: BLE001 - a broken catalog entry must not stop a probe
        return {}
    out: dict[str, tuple[float, str]] = {}
    for pname, c in p.compute.items():
        if c.dtype not in out or c.ops_per_cycle.value > out[c.dtype][0]:
            out[c.dtype] = (c.ops_per_cycle.value, f"{name} {pname}")
    return out


def _native(h: HostInfo, dtype: str) -> bool:
    return bf16_native(h) if dtype == "bf16" else True
