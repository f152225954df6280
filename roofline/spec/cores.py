"""Per-core issue widths of the vector integer units, by the core's LLVM name (a platform's ``core``).

Unpacking quantized weights (shifts, ands, shuffles, sign tricks) runs on the vector integer ALU pipes, not
on the FMA pipes. :data:`INT_ALU_BITS` is how many bits of such instructions one core issues per cycle:
``pipes x width``. The ceiling prices unpacking at this rate (one 256-bit instruction over 32 weights is
16 ops, the FP32 path's unit), and takes the larger of it and the multiply-accumulates' time: both are
lower bounds on a call's compute time, their sum is not.
"""

from __future__ import annotations

from roofline.spec.sourced import Sourced, SourceKind

LLVM = "https://github.com/llvm/llvm-project/blob"
ZN3 = f"{LLVM}/0567844be70f2b3eb7943c45c1a70e3fc2d49564/llvm/lib/Target/X86/X86ScheduleZnver3.td"
ZN4 = f"{LLVM}/02d554c5256b11776b18eef663e3acd1ccb203e8/llvm/lib/Target/X86/X86ScheduleZnver4.td"
SKX = f"{LLVM}/02cec0a4ec2edb30a6e92730ca17378b35de9596/llvm/lib/Target/X86/X86SchedSkylakeServer.td"
HSW = f"{LLVM}/llvmorg-19.1.7/llvm/lib/Target/X86/X86SchedHaswell.td"
SPR = f"{LLVM}/0f792420e664d85439fac99ee5dadcd9761178be/llvm/lib/Target/X86/X86SchedSapphireRapids.td"


def _bits(value: float, source: str, kind: SourceKind = "derived") -> Sourced:
    return Sourced(value=value, kind=kind, source=source)


_ZEN = ("four vector pipes FP0-FP3 each take integer logic and adds ('Integer Adds, Subtracts, and Compares' and "
        "'Moves and Logical operations on Packed Integer Data Types' -> FP0-FP3")
_INTEL_512 = ("ports 0, 1 and 5 take 256-bit integer logic (WriteVecLogicY, [SKXPort015]); 512-bit ones ports 0 and "
              "5 (WriteVecLogicZ, [SKXPort05]: ports 0 and 1 joined): max(3 x 256, 2 x 512) bits")

#: vector integer ALU bits issued per cycle per core (:mod:`roofline.spec.cores`)
INT_ALU_BITS: dict[str, Sourced] = {
    "znver1": _bits(512, "4 x 128: Zen 1's four FP pipes are 128-bit, 'the peak throughput is four SSE/AVX-128 "
                    "instructions or two AVX-256 instructions per cycle' (WikiChip, Zen 2 page: "
                    "https://en.wikichip.org/wiki/amd/microarchitectures/zen_2)"),
    "znver2": _bits(1024, "4 x 256: 'Zen 2 doubles the width of the physical registers, execution units, and data "
                    "paths to 256 bits' (WikiChip, Zen 2 page); four FP pipes as Zen 1"),
    "znver3": _bits(1024, f"4 x 256: {_ZEN} (LLVM's Zen 3 model, {ZN3}, from AMD's Software Optimization Guide "
                    "for family 19h)"),
    "znver4": _bits(1024, f"4 x 256: {_ZEN}; a 512-bit instruction holds a 256-bit pipe two cycles "
                    f"(WriteVecLogicZ, [Zn4FPVMisc0123], 1, [2]) (LLVM's Zen 4 model, {ZN4})"),
    "znver5": _bits(2048, "4 x 512: 'a fully native implementation with expanded datapaths and execution units "
                    "capable of 4 x 512-bit execution throughput' (A. J. Yee, Zen5's AVX512 Teardown, "
                    "http://numberworld.org/blogs/2024_8_7_zen5_avx512_teardown); LLVM's Zen 5 model still halves "
                    "512-bit instructions (the larger figure keeps the ceiling a bound)", "assumed"),
    "haswell": _bits(768, f"3 x 256: 256-bit integer logic on ports 0, 1 and 5 (LLVM's Haswell model, {HSW})"),
    "broadwell": _bits(768, "3 x 256: as Haswell (ports 0, 1, 5; LLVM's Broadwell model, "
                       f"{LLVM}/llvmorg-19.1.7/llvm/lib/Target/X86/X86SchedBroadwell.td)"),
    "skylake": _bits(768, f"3 x 256: ports 0, 1 and 5 (LLVM's Skylake client model, "
                     f"{LLVM}/llvmorg-19.1.7/llvm/lib/Target/X86/X86SchedSkylakeClient.td); no AVX-512"),
    "skylake-avx512": _bits(1024, f"{_INTEL_512} (LLVM's Skylake server model, {SKX})"),
    "cascadelake": _bits(1024, f"{_INTEL_512} (LLVM's Skylake server model, which it uses, {SKX})"),
    "icelake-server": _bits(1024, f"{_INTEL_512} (LLVM's Ice Lake model, {LLVM}/05c7a784e3c664b364cb738caccd050cd60c990c"
                            "/llvm/lib/Target/X86/X86SchedIceLake.td)"),
    "sapphirerapids": _bits(1024, f"as Ice Lake: vector classes on ports 0, 1 and 5 ({SPR})"),
    "emeraldrapids": _bits(1024, f"as Sapphire Rapids, the same Golden/Raptor Cove vector ports ({SPR}; LLVM gives "
                           "Emerald Rapids no model of its own)"),
    "graniterapids": _bits(1024, f"as Sapphire Rapids: LLVM's Granite Rapids model is Sapphire Rapids' ({SPR})"),
}

#: the FP32 ops one 256-bit integer instruction over 32 weights counts as (the unit of
#: :attr:`~roofline.spec.gguf_types.BlockFormat.dequant_ops_per_weight`)
OPS_PER_256_BIT = 16.0


def int_alu_ops_per_cycle(core: str) -> tuple[float, Sourced] | None:
    """``(ops per cycle per core, its source)`` of the vector integer ALU in the FP32 path's unit (a 256-bit
    instruction is 16 ops), or None for a core the table does not know."""
    bits = INT_ALU_BITS.get(core)
    if bits is None or bits.value is None:
        return None
    return bits.value / 256.0 * OPS_PER_256_BIT, bits
