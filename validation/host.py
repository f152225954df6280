"""What this machine is: CPU model, topology, caches and ISA flags, from /proc and sysfs.

Pure Python (no torch): ``roofline probe`` records it, ``roofline validate`` reports it,
and :func:`catalog_match` picks the datasheet platform the host is an instance of.
"""

from __future__ import annotations

import os
import platform as _platform
import re
from dataclasses import dataclass, field
from pathlib import Path

#: ISA flags that decide which GEMM paths exist, as /proc/cpuinfo spells them.
ISA_FLAGS = ("avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx_vnni", "avx512_bf16",
             "avx512_fp16", "amx_tile", "amx_int8", "amx_bf16", "amx_fp16")

# (vendor, family, model) -> microarchitecture; and the catalog entry with its per-core rates
_UARCH = {
    ("GenuineIntel", 6, 106): ("Ice Lake-SP", "icx"),
    ("GenuineIntel", 6, 108): ("Ice Lake-D", "icx"),
    ("GenuineIntel", 6, 143): ("Sapphire Rapids", "spr"),
    ("GenuineIntel", 6, 207): ("Emerald Rapids", "emr"),
    ("GenuineIntel", 6, 173): ("Granite Rapids", "gnr"),
    ("AuthenticAMD", 23, 1): ("Zen (Naples)", None),
    ("AuthenticAMD", 23, 49): ("Zen 2 (Rome)", None),
    ("AuthenticAMD", 25, 1): ("Zen 3 (Milan)", "milan"),
    ("AuthenticAMD", 25, 17): ("Zen 4 (Genoa)", "genoa"),
    ("AuthenticAMD", 25, 160): ("Zen 4c (Bergamo)", "genoa"),
    ("AuthenticAMD", 26, 2): ("Zen 5 (Turin)", "turin"),
    ("AuthenticAMD", 26, 17): ("Zen 5 (Turin)", "turin"),
}


@dataclass(frozen=True)
class Cache:
    level: int
    type: str
    size_bytes: int
    shared_by_cpus: int


@dataclass(frozen=True)
class HostInfo:
    cpu_model: str
    vendor: str
    family: int
    model: int
    microarchitecture: str
    sockets: int
    cores: int
    """physical cores, all sockets"""
    threads: int
    """logical CPUs online"""
    numa_nodes: int
    mhz: float | None
    """as /proc/cpuinfo reports it (nominal on most VMs)"""
    flags: dict[str, bool]
    caches: list[Cache] = field(default_factory=list)
    hypervisor: bool = False
    kernel: str = ""
    memory_kib: int | None = None
    """/proc/meminfo MemTotal (kB as the kernel prints them: KiB), all sockets"""

    @property
    def llc(self) -> Cache | None:
        unified = [c for c in self.caches if c.type == "Unified"]
        return max(unified, key=lambda c: c.level) if unified else None

    @property
    def cores_per_socket(self) -> int:
        return max(self.cores // max(self.sockets, 1), 1)


def _cpuinfo(text: str) -> list[dict[str, str]]:
    blocks, cur = [], {}
    for line in text.splitlines():
        if not line.strip():
            if cur:
                blocks.append(cur)
            cur = {}
            continue
        if ":" in line:
            k, v = line.split(":", 1)
            cur[k.strip()] = v.strip()
    if cur:
        blocks.append(cur)
    return blocks


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _size(text: str) -> int:
    units = {"K": 1024, "M": 1024**2, "G": 1024**3}
    text = text.strip()
    return int(text[:-1]) * units[text[-1]] if text and text[-1] in units else int(text)


def _cpu_count(listing: str) -> int:
    n = 0
    for part in listing.split(","):
        if "-" in part:
            a, b = part.split("-")
            n += int(b) - int(a) + 1
        elif part.strip():
            n += 1
    return n


def detect_host(proc: Path = Path("/proc"), sys_cpu: Path = Path("/sys/devices/system/cpu"),
                sys_node: Path = Path("/sys/devices/system/node")) -> HostInfo:
    """Read the host from /proc/cpuinfo and sysfs (paths are parameters so tests can feed fixtures)."""
    blocks = _cpuinfo(_read(proc / "cpuinfo") or "")
    first = blocks[0] if blocks else {}
    flags = set(first.get("flags", "").split())
    packages = {(b.get("physical id", "0")) for b in blocks} or {"0"}
    cores = {(b.get("physical id", "0"), b.get("core id", str(i))) for i, b in enumerate(blocks)}
    vendor = first.get("vendor_id", "unknown")
    family, model = int(first.get("cpu family", 0) or 0), int(first.get("model", 0) or 0)
    uarch = _UARCH.get((vendor, family, model), (f"{vendor} family {family} model {model}", None))[0]
    caches: list[Cache] = []
    for idx in sorted((sys_cpu / "cpu0" / "cache").glob("index*")):
        level, ctype, size = (_read(idx / n) for n in ("level", "type", "size"))
        shared = _read(idx / "shared_cpu_list") or "0"
        if level and ctype and size:
            caches.append(Cache(int(level), ctype, _size(size), _cpu_count(shared)))
    nodes = len(list(sys_node.glob("node[0-9]*"))) or 1
    mhz = first.get("cpu MHz")
    mem = re.search(r"^MemTotal:\s+(\d+)\s+kB", _read(proc / "meminfo") or "", re.M)
    return HostInfo(
        cpu_model=first.get("model name", _platform.processor() or "unknown"),
        vendor=vendor, family=family, model=model, microarchitecture=uarch,
        sockets=len(packages), cores=len(cores), threads=len(blocks) or (os.cpu_count() or 1),
        numa_nodes=nodes, mhz=float(mhz) if mhz else None,
        flags={f: f in flags for f in ISA_FLAGS}, caches=caches, hypervisor="hypervisor" in flags,
        kernel=_platform.release(), memory_kib=int(mem.group(1)) if mem else None,
    )


def catalog_match(host: HostInfo) -> str | None:
    """The catalog platform whose per-core datasheet rates apply to this host, if any.

    A 16-vCPU Emerald Rapids guest with a 300 MiB L3 is ``emr-16vcpu`` (measured in this project);
    other hosts match their microarchitecture's catalog entry.
    """
    entry = _UARCH.get((host.vendor, host.family, host.model), (None, None))[1]
    llc = host.llc
    if entry == "emr" and host.threads == 16 and llc and llc.size_bytes == 300 * 2**20:
        return "emr-16vcpu"
    return entry
