"""``roofline probe``: measure this host and write it as a platform spec.

Measured with ``threads`` threads (torch intra-op threads):

- DRAM read bandwidth: ``sum`` over an FP32 array well beyond the LLC (8x the LLC, at least 256 MiB);
  copy bandwidth likewise (bytes read + written), reported in the notes;
- LLC read bandwidth: ``sum`` over a working set half the LLC's size, repeated;
- GEMM peaks, on the fastest real path for each dtype: FP32 and BF16 the fastest of ``aten.mm``,
  ``aten.linear`` and ``aten.addmm`` (without AVX512_BF16 they differ by 50x), INT8 the faster of
  ``onednn.qlinear_pointwise`` (u8 x s8, prepacked weights) and ``aten._int_mm`` (s8 x s8). Outputs
  are checked against a float64 reference; a kernel that saturates is not a peak.

Each figure is the best of 3 trials, each the median over at least 0.3 s of repeats (STREAM
reports the best; noise on shared machines only ever slows a run down). The platform file says
``measured`` on every number, with the date, the threads and the tool. ``ops_per_cycle`` is the
measured peak over (cores x the clock /proc/cpuinfo reports), so that cores x clock x
ops_per_cycle gives back the measured peak exactly.
"""

from __future__ import annotations

import datetime as _dt
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from roofline.spec.platform import ComputePath, Dram, Llc, Platform
from roofline.spec.sourced import Sourced
from roofline.validation.host import HostInfo, detect_host
from roofline.validation.torch_env import require_torch, versions

TOOL = "roofline probe"


def _timed(fn: Callable[[], object], min_time: float = 0.3, trials: int = 3) -> float:
    """Best of ``trials`` medians, each over at least ``min_time`` seconds of calls (seconds per call)."""
    fn()
    fn()
    best = float("inf")
    for _ in range(trials):
        times = []
        end = time.perf_counter() + min_time
        while time.perf_counter() < end or len(times) < 3:
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        best = min(best, statistics.median(times))
    return best


@dataclass
class GemmPeak:
    dtype: str
    kernel: str
    shape: tuple[int, int, int]
    ops_per_s: float
    rel_error: float
    candidates: dict[str, float] = field(default_factory=dict)


@dataclass
class ProbeResult:
    host: HostInfo
    threads: int
    date: str
    dram_read_bytes_per_s: float
    dram_copy_bytes_per_s: float
    dram_array_bytes: int
    llc_read_bytes_per_s: float | None
    llc_working_set_bytes: int | None
    gemm: dict[str, GemmPeak]
    versions: dict[str, str]


def _read_bw(torch, nbytes: int) -> float:
    x = torch.rand(nbytes // 4)
    return nbytes / _timed(lambda: x.sum())


def _copy_bw(torch, nbytes: int) -> float:
    x = torch.rand(nbytes // 4)
    y = torch.empty_like(x)
    return 2 * nbytes / _timed(lambda: y.copy_(x))


def _rel(y, ref) -> float:
    y, ref = y.double(), ref.double()
    return float((y - ref).norm() / ref.norm())


def gemm_peaks(torch, size: int) -> dict[str, GemmPeak]:
    """FP32, BF16 and INT8 peaks on a ``size``-cubed GEMM (compute-bound for every dtype)."""
    m = n = k = size
    flops = 2.0 * m * n * k
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(m, k, generator=g), torch.randn(k, n, generator=g)
    ref = a.double() @ b.double()
    out: dict[str, GemmPeak] = {}
    for dtype, x, w in (("fp32", a, b), ("bf16", a.bfloat16(), b.bfloat16())):
        wt = w.t().contiguous()  # (N, K), as a linear layer stores it
        bias = torch.zeros(n, dtype=x.dtype)
        paths = {
            f"aten.mm ({dtype})": lambda x=x, w=w: x @ w,
            f"aten.linear ({dtype})": lambda x=x, wt=wt: torch.nn.functional.linear(x, wt),
            f"aten.addmm ({dtype})": lambda x=x, w=w, bias=bias: torch.addmm(bias, x, w),
        }
        cands = {name: (flops / _timed(f), _rel(f(), ref)) for name, f in paths.items()}
        ok = {name: v for name, v in cands.items() if v[1] < 5e-2} or cands
        best = max(ok, key=lambda name: ok[name][0])
        out[dtype] = GemmPeak(dtype, best, (m, n, k), ok[best][0], ok[best][1], {nm: v[0] for nm, v in cands.items()})
    # INT8: integer operands, so the exact answer is known
    w = torch.randint(-127, 128, (n, k), dtype=torch.int8, generator=g)
    xs = torch.randint(-127, 128, (m, k), dtype=torch.int8, generator=g)
    exact = xs.double() @ w.double().t()
    cands: dict[str, tuple[float, float]] = {}
    t = _timed(lambda: torch._int_mm(xs, w.t()))
    cands["aten._int_mm (s8 x s8)"] = (flops / t, _rel(torch._int_mm(xs, w.t()), exact))
    try:
        xu = (xs.to(torch.int16) + 128).to(torch.uint8)
        packed = torch.ops.onednn.qlinear_prepack(w, [m, k])
        ws, wz = torch.ones(n), torch.zeros(n, dtype=torch.int64)

        def q():
            return torch.ops.onednn.qlinear_pointwise(xu, 1.0, 128, packed, ws, wz, None, 1.0, 0, torch.float32,
                                                      "none", [], "")
        t = _timed(q)
        cands["onednn.qlinear_pointwise (u8 x s8)"] = (flops / t, _rel(q(), exact))
    except (RuntimeError, AttributeError):
        pass  # oneDNN quantized ops missing from this torch build
    ok = {name: v for name, v in cands.items() if v[1] < 1e-3} or cands  # a saturating kernel is not a peak
    best = max(ok, key=lambda name: ok[name][0])
    out["int8"] = GemmPeak("int8", best, (m, n, k), ok[best][0], ok[best][1],
                           {name: v[0] for name, v in cands.items()})
    return out


def run_probe(threads: int | None = None, host: HostInfo | None = None, quick: bool = False,
              progress: Callable[[str], None] = lambda s: None) -> ProbeResult:
    torch = require_torch()
    host = host or detect_host()
    threads = threads or host.cores
    torch.set_num_threads(threads)
    llc = host.llc
    llc_bytes = (llc.size_bytes * host.sockets) if llc else 32 * 2**20
    dram_bytes = max(8 * llc_bytes, (128 if quick else 256) * 2**20)
    progress("DRAM bandwidth")
    read = _read_bw(torch, dram_bytes)
    copy = _copy_bw(torch, dram_bytes)
    progress("LLC bandwidth")
    llc_ws = llc_bytes // 2 if llc else None
    llc_read = _read_bw(torch, llc_ws) if llc_ws else None
    progress("GEMM peaks")
    size = 1024 if quick else (2048 if threads <= 8 else 4096)
    gemm = gemm_peaks(torch, size)
    return ProbeResult(
        host=host, threads=threads, date=_dt.date.today().isoformat(),
        dram_read_bytes_per_s=read, dram_copy_bytes_per_s=copy, dram_array_bytes=dram_bytes,
        llc_read_bytes_per_s=llc_read, llc_working_set_bytes=llc_ws, gemm=gemm, versions=versions(),
    )


def probe_platform(r: ProbeResult, name: str = "host") -> Platform:
    """The measured host as a :class:`Platform` in the catalog's schema."""
    h = r.host
    sockets = h.sockets if r.threads > h.cores_per_socket else 1
    cores_per_socket = max(r.threads // sockets, 1)
    ghz = (h.mhz or 1000.0) / 1000.0

    def measured(value: float, source: str) -> Sourced:
        value = float(f"{value:.4g}") if isinstance(value, float) else value
        return Sourced(value=value, kind="measured", source=source, date=r.date, threads=r.threads, tool=TOOL)

    compute = {}
    for dtype, g in r.gemm.items():
        native = _native(h, dtype)
        path = f"{dtype}-measured"
        ops = g.ops_per_s / (r.threads * ghz * 1e9)
        src = (f"{g.kernel}, {g.shape[0]}x{g.shape[1]}x{g.shape[2]}: {g.ops_per_s / 1e9:.1f} Gops/s with "
               f"{r.threads} threads, over {ghz:g} GHz x {r.threads} cores; rel. error {g.rel_error:.1e}")
        note = "" if native else f"no native {dtype.upper()} instructions on this host: emulated, measured as is"
        compute[path] = ComputePath(dtype=dtype, isa_class="measured", ops_per_cycle=measured(ops, src),
                                    requires=(), note=note)
    llc = h.llc
    llc_size = measured(llc.size_bytes / 2**20, "sysfs cache/index3 size") if llc else Sourced(unknown="no LLC in sysfs")
    llc_bw = Sourced(unknown="no LLC found in sysfs")
    if r.llc_read_bytes_per_s:
        bw = r.llc_read_bytes_per_s / 1e9 / sockets
        if bw >= r.dram_read_bytes_per_s / 1e9 / sockets:
            llc_bw = measured(bw, f"torch sum over {r.llc_working_set_bytes / 2**20:g} MiB (half the LLC), per socket")
        else:
            llc_bw = Sourced(unknown=f"measured {bw:.1f} GB/s, below DRAM: the LLC measurement was not clean")
    isa = tuple(f for f, on in h.flags.items() if on)
    return Platform(
        name=name,
        description=f"{h.cpu_model} ({h.microarchitecture}), measured with {r.threads} threads",
        vendor=h.vendor, microarchitecture=h.microarchitecture, isa=isa,
        sockets=measured(sockets, "/proc/cpuinfo physical ids (sockets the threads span)"),
        cores_per_socket=measured(cores_per_socket, f"{r.threads} threads over {sockets} socket(s)"),
        frequency_ghz={"measured": measured(ghz, "/proc/cpuinfo 'cpu MHz' (nominal; turbo not visible)")},
        compute=compute,
        dram=Dram(measured_gb_per_s=measured(
            r.dram_read_bytes_per_s / 1e9 / sockets,
            f"torch sum over {r.dram_array_bytes / 2**20:g} MiB, per socket; copy (read + write) "
            f"{r.dram_copy_bytes_per_s / 1e9 / sockets:.1f} GB/s")),
        llc=Llc(size_mib=llc_size, read_gb_per_s=llc_bw),
        notes=tuple(
            [f"host: {h.cpu_model}, {h.sockets} socket(s), {h.cores} cores, {h.threads} threads, "
             f"{h.numa_nodes} NUMA node(s), hypervisor: {h.hypervisor}"]
            + [f"{d.upper()} candidates: " + ", ".join(f"{k} {v / 1e9:.1f} Gops/s" for k, v in r.gemm[d].candidates.items())
               for d in ("fp32", "bf16", "int8")]
            + [f"torch {r.versions.get('torch')}, torchao {r.versions.get('torchao')}"]
        ),
    )


def _native(h: HostInfo, dtype: str) -> bool:
    f = h.flags
    if dtype == "bf16":
        return f.get("avx512_bf16", False) or f.get("amx_bf16", False)
    return True
