"""Core-to-core cache-line transfer latency, by the core's LLVM name (a platform's ``core``).

The typical latency over all pairs of cores of a socket: what one round of a spin barrier pays per thread
(:mod:`roofline.calc.barriers`). A platform file's ``core_to_core_ns`` overrides it (a chip whose dies differ
from the family's server parts). A core the table does not know takes :data:`DEFAULT_LINE_TRANSFER_NS`.
"""

from __future__ import annotations

from roofline.spec.sourced import Sourced, SourceKind


def _ns(value: float, source: str, kind: SourceKind = "measured") -> Sourced:
    return Sourced(value=value, kind=kind, source=source)


NV = "https://github.com/nviennot/core-to-core-latency/blob/96a943ac384b78bf54252068f25e2f891bfadc60/README.md"
KC = "https://github.com/KCORES/core-to-core-latency-plus/blob/264ea0a1f68afb3295bd825056bf5959865b56e9/README.md"
KC_CSV = "https://github.com/KCORES/core-to-core-latency-plus/blob/456cc116cca7ca2fe1d9dd99a38102e8f033f0fe/results"
_HOW = ("one-way latency of a compare-exchange ping-pong between two pinned cores (core-to-core-latency: 'latency="
        "round-trip-time/2')")

#: nanoseconds per cache-line transfer between two cores, typical over all pairs of a socket
LINE_TRANSFER_NS: dict[str, Sourced] = {
    "broadwell": _ns(44, f"{NV} line 41: 'Intel Xeon E5-2695 v4, 2.10GHz, 18 Cores, Broadwell ... | 44ns' (median "
                     f"over the socket's pairs; {_HOW})"),
    "haswell": _ns(44, "as Broadwell: the same ring of cores (no Haswell server figure found)", "assumed"),
    "skylake-avx512": _ns(48, f"as Cascade Lake: the same core and mesh ({NV} line 29, Xeon Gold 6242: 48 ns)",
                          "assumed"),
    "cascadelake": _ns(48, f"{NV} line 29: 'Intel Xeon Gold 6242, 16 Cores, Cascade Lake, 2019-Q2 | 48ns' and line 40: "
                       f"'Intel Xeon Platinum 8275CL ... | 47ns' (medians; {_HOW})"),
    "icelake-server": _ns(51, f"{NV} line 39: 'Intel Xeon Platinum 8375C, 2.90GHz, 32 Cores, Ice Lake ... | 51ns' "
                          f"(median; {_HOW})"),
    "sapphirerapids": _ns(55, f"{KC} line 108: 'Intel Xeon W9-3475X 2.2GHz 36Cores 2023-Q2 | 36.3929 | 55.3493 | "
                          "72.3715' (min, median, max of the one-die part); no figure found for the four-tile XCC "
                          "parts (8480+, 8488C), whose tile crossings can only add: assumed the same", "assumed"),
    "emeraldrapids": _ns(55, "as Sapphire Rapids (the same core and mesh, two tiles); no figure found", "assumed"),
    "graniterapids": _ns(60, "no figure found: Sapphire Rapids' 55 ns and a larger mesh (up to 128 cores on three "
                         "compute dies)", "assumed"),
    "znver2": _ns(103, f"{KC} line 132: 'AMD Ryzen Threadripper 3990X 64-Core Processor | 19.1909 | 102.9295 | "
                  "112.4265' (min, median, max over eight CCDs)"),
    "znver3": _ns(107, f"{NV} line 42: 'AMD EPYC 7R13, 48 Cores, Milan, 3rd gen, 2021-Q1 | 23ns, 107ns' (same CCD, "
                  "across CCDs: of 48 cores in 6 CCDs, 85% of the pairs cross); line 28: 'AMD EPYC 7773X, 64 Cores, "
                  f"Milan-X | 115ns' ({_HOW})"),
    "znver4": _ns(87, f"{KC_CSV}/Dual AMD EPYC 9654 96-Core Processor by-leavelet.csv: same-CCD cells 24-34 ns (line 2 "
                  "field 1: 24.20), cross-CCD ones 86-101 ns (line 9 field 1: 87.04; line 25 field 1: 94.23); over "
                  "12 CCDs of 8 cores 336 of 4,560 pairs share a CCD: 0.074 x 27 + 0.926 x 92 = 87 ns", "derived"),
    "znver5": _ns(87, "no EPYC Turin figure found: as Genoa (the same Infinity Fabric between CCDs; the Ryzen 9 9950X's "
                  f"cross-CCD cells are 75 ns with AGESA 1.2.0.2, {KC_CSV}/AMD Ryzen 9 9950X 16-Core Processor "
                  "by-KeithMyers.csv line 9 field 1)", "assumed"),
}

#: nanoseconds per cache-line transfer between two cores of a two-socket machine, typical over all its pairs (half
#: of them across the sockets): what a barrier round of one process spanning both sockets pays per thread
LINE_TRANSFER_2S_NS: dict[str, Sourced] = {
    "broadwell": _ns(107.2, f"{KC} line 136: 'IntelR XeonR CPU E5-2695 v4 @ 2.10GHz ... | 7.4887 | 107.2264 | 126.9100' "
                     f"(min, median, max of a two-socket CSV; {_HOW})"),
    "haswell": _ns(107.2, "as Broadwell: the same ring and QPI (no two-socket Haswell figure found)", "assumed"),
    "cascadelake": _ns(135.2, f"{KC} line 147: 'Dual IntelR Xeon Gold 6242 @ 2.8GHz ... | 7.2657 | 135.1955 | 146.1889' "
                       f"(min, median, max; {_HOW})"),
    "skylake-avx512": _ns(135.2, "as Cascade Lake: the same core, mesh and UPI", "assumed"),
    "icelake-server": _ns(98.9, f"{KC} line 130: 'Dual Intel Xeon Platinum 8358 CPU 2.60GHz | 41.0048 | 98.9467 | "
                          f"124.8291' (min, median, max; {_HOW})"),
    "znver3": _ns(289.5, f"{KC} line 167: 'Dual AMD EPYC 7763 64-Core Processor | 10.1847 | 289.4902 | 337.3357' "
                  f"(min, median, max; {_HOW})"),
    "znver4": _ns(184.6, f"{KC} line 155: 'Dual AMD EPYC 9654 96-Core Processor | 24.1957 | 184.6257 | 200.9054' "
                  f"(min, median, max; {_HOW})"),
    "znver5": _ns(184.6, "no two-socket EPYC Turin figure found: as Genoa (the same Infinity Fabric between sockets)",
                  "assumed"),
}

DEFAULT_LINE_TRANSFER_NS = _ns(100.0, "a core the table does not know: 100 ns, between a ring's or mesh's "
                               "(about 50-80 ns) and a chiplet part's cross-die transfers (about 100-200 ns)",
                               "assumed")


def line_transfer_ns(core: str, spanning: bool = False) -> tuple[Sourced, str]:
    """``(nanoseconds, key)`` of a core's line transfer: its table entry (the two-socket one for a process spanning
    both sockets), else the assumed default (twice it across two sockets)."""
    table, key = (LINE_TRANSFER_2S_NS, "core_latency_2s") if spanning else (LINE_TRANSFER_NS, "core_latency")
    found = table.get(core)
    if found is not None:
        return found, f"{key}.{core}"
    if spanning:
        return (_ns(2 * DEFAULT_LINE_TRANSFER_NS.known_value, "a core the table does not know, over two sockets: twice "
                    "the one-socket default (the two-socket medians found are 2 to 2.8 times the one-socket ones)",
                    "assumed"), f"{key}.default")
    return DEFAULT_LINE_TRANSFER_NS, f"{key}.default"
