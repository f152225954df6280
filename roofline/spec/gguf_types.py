"""llama.cpp's GGUF block formats: their byte layouts and what their CPU dot products cost.

A block format stores ``weights_per_block`` values in ``bytes_per_block`` bytes: the quantized
values (``quant_bytes_per_block``, all their bits) and the block's scales and mins. Layouts are
the structs of llama.cpp's ``ggml/src/ggml-common.h`` (QK4_0 = QK8_0 = 32, QK_K = 256,
K_SCALE_SIZE = 12); the sizes equal the ``gguf`` package's ``GGML_QUANT_SIZES`` (a test checks).

Bits per weight ``= 8 bytes_per_block / weights_per_block``:

==========  ======  =====  ==================================================  =====
type        values  bytes  layout                                              bits
==========  ======  =====  ==================================================  =====
q8_0        32      34     fp16 d, int8 qs[32]                                 8.5
q4_0        32      18     fp16 d, 4-bit qs[16]                                4.5
q4_1        32      20     fp16 d, fp16 m, 4-bit qs[16]                        5.0
q5_0        32      22     fp16 d, qh[4] (5th bits), qs[16]                    5.5
q5_1        32      24     fp16 d, fp16 m, qh[4], qs[16]                       6.0
iq4_nl      32      18     fp16 d, 4-bit indices qs[16] into a 16-value table  4.5
mxfp4       32      17     E8M0 e, 4-bit E2M1 values qs[16]                    4.25
q2_K        256     84     4-bit scales+mins[16], 2-bit qs[64], fp16 d, dmin   2.625
q3_K        256     110    hmask[32] (3rd bits), qs[64], scales[12], fp16 d    3.4375
q4_K        256     144    fp16 d, fp16 dmin, 6-bit scales+mins[12], qs[128]   4.5
iq4_xs      256     136    fp16 d, scales_h, scales_l[4], 4-bit indices[128]   4.25
q5_K        256     176    fp16 d, fp16 dmin, scales[12], qh[32], qs[128]      5.5
q6_K        256     210    ql[128], qh[64], int8 scales[16], fp16 d            6.5625
q8_K        256     292    fp32 d, int8 qs[256], int16 bsums[16] (activations) 9.125
iq1_s       256     50     fp16 d, qs[32], qh[8] (3 index bits x 4, 3-bit      1.5625
                           scale, delta sign per 32)
iq1_m       256     56     qs[32], qh[16] (3 index bits, delta sign per 8),    1.75
                           scales[8] (3-bit per 16; fp16 d in their top bits)
iq2_xxs     256     66     fp16 d, qs[32] (uint16: 8-bit grid indices x 4,     2.0625
                           7-bit signs x 4, 4-bit scale per 32)
iq2_xs      256     74     fp16 d, qs[32] (uint16: 9-bit index, 7-bit signs    2.3125
                           per 8), 4-bit scales[8] (2 per byte)
iq2_s       256     82     fp16 d, qs[64] (indices, signs), qh[8], scales[8]   2.5625
iq3_xxs     256     98     fp16 d, qs[96] (8-bit indices per 4, signs and      3.0625
                           4-bit scale per 32)
iq3_s       256     110    fp16 d, qs[64], qh[8] (9th index bits), signs[32],  3.4375
                           4-bit scales[4] (2 per byte)
==========  ======  =====  ==================================================  =====

The i-quants (``iq1_s`` to ``iq3_s``) store indices into fixed grids of 4 or 8 values (``iq2xxs_grid``,
``iq2xs_grid``, ``iq2s_grid``, ``iq3xxs_grid``, ``iq3s_grid``, ``iq1s_grid`` in ``ggml-common.h``) and, but for the
iq1 types, a sign bit per weight (7 stored per 8 in the xxs and xs types, the 8th their parity). Their quantized
bytes count the indices and signs; scales, iq1's delta signs and ``d`` are the metadata.

On x86, llama.cpp's CPU backend (``ggml/src/ggml-cpu``) never widens weights to float: it
quantizes each activation row to the weight type's ``vec_dot_type`` (``q8_0`` for the 32-blocks,
``q8_K`` for the k-quants; ``type_traits_cpu`` in ``ggml-cpu.c``) and takes integer dot products
(``vpmaddubsw``/``vpmaddwd`` under AVX2, ``vpdpbusd`` under VNNI) block by block, then scales each
block's integer sum (``ggml_vec_dot_<w>_<a>`` in ``ggml-cpu/arch/x86/quants.c``). So a GGUF recipe
computes in INT8 and reads activations of ``q8_0``/``q8_K`` bytes per element.

``dequant_ops_per_weight`` comes from the vector instructions per 32 weights that the AVX2 branch
of each ``ggml_vec_dot_*`` spends turning stored bits into INT8 operands, besides loads and the
multiply-add pair itself (counted in the source, each count's reading beside it). The ops are
priced on the FP32 vector path's peak, which counts an 8-lane FMA instruction as 16 ops; one
256-bit instruction over 32 byte lanes issues at the same rate, so it counts 16 ops over 32
weights: ``ops per weight = 0.5 x instructions per 32 weights`` (integer ops often issue on more
ports: still an upper bound on speed). At one token (decode) the count is per weight read; the
ceiling amortizes it over a call's rows, as a kernel that unpacks each block once would (llama.cpp's
``vec_dot`` redoes it per activation row; its REPACK GEMMs, which on x86 take q4_0, q4_K and iq4_nl, and
q2_K where AVX-512 is present (``ggml-cpu/repack.cpp``), share it over 4 or 8; in the llama.cpp that
llama-cpp-python 0.3.36 vendors (0c1e570) a tiled matmul (``ggml-cpu/tiled``) unpacks 256 x 256 tiles of the
other k-quants, of iq4_xs and of the i-quants iq1_s to iq3_s once for batches of 8 rows or more).
The per-block scale (an FP32 FMA per block, or the sub-block scale's ``vpmaddwd`` and accumulate
in k-quants) is the recipe's per-group rescale, ``2 M N K / g`` ops. A constant correction's second
multiply (q6_K's ``-32`` offset, q3_K's third bit, each a ``vpmaddubsw`` and a subtraction) is not
counted either: fewer ops counted keep the ceiling an upper bound. The counts of q4_1, q2_K, q3_K,
iq4_nl and iq4_xs were read in the llama.cpp that llama-cpp-python 0.3.36 vendors (commit 0c1e570; their
AVX2 branches are the same at e4868d1, 2025-07-24). MXFP4's (``block_mxfp4``, GGML type 39, the type llama.cpp
stores gpt-oss's experts in) was read in the AVX2 branch of ``ggml_vec_dot_mxfp4_q8_0`` of the same file.

The i-quants' kernels (``ggml_vec_dot_iq*_q8_K``, read at 0c1e570, the line numbers beside each count) build
each 256-bit operand from 4 grid entries of 8 bytes (``_mm256_set_epi64x``) or 8 of 4 bytes
(``_mm256_set_epi32``): compiled (the vendored build's ``quants.c.o``, disassembled) as ``vmovq`` loads, 2
``vpinsrq`` and a ``vinserti128`` (3 counted), or ``vmovd`` loads, 4 ``vpinsrd``, 2 ``vpunpcklqdq`` and a
``vinserti128`` (7 counted); the plain loads are not counted, nor the scalar index arithmetic (shifts, masks,
``pdep``), nor the compiler's moves of indices from vector registers (``vpextrw``/``vpextrd``, which the source
writes as a store to a union), nor the sub-block scales' broadcast and shuffles (the per-group rescale): fewer
ops counted keep the ceiling an upper bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from roofline.spec import PYDANTIC_CONFIG

GGML_COMMON = "llama.cpp ggml/src/ggml-common.h"
X86_QUANTS = "llama.cpp ggml/src/ggml-cpu/arch/x86/quants.c"
#: the fork whose own types (``IQ2_K`` ... ``IQ4_KT``, the row-interleaved ``_R4``/``_R8``) are priced here, read at
IK_COMMIT = "8337e4cd3"
IK_COMMON = f"ik_llama.cpp {IK_COMMIT} ggml/src/ggml-common.h"
IK_GEMM = f"ik_llama.cpp {IK_COMMIT} ggml/src/iqk/"
#: the engines whose ggml defines a type: llama.cpp's, or only ik_llama.cpp's (which also runs llama.cpp's)
LLAMA_CPP, IK_LLAMA_CPP = "llama.cpp", "ik_llama.cpp"


@dataclass(frozen=True)
class BlockFormat:
    """A block-quantized storage format (a GGML type)."""

    __pydantic_config__ = PYDANTIC_CONFIG

    name: str
    """GGML type name, e.g. q4_K"""
    ggml_type: int
    """GGMLQuantizationType value in GGUF files"""
    weights_per_block: int
    bytes_per_block: float
    """all bytes of one block: quantized values, scales, mins"""
    quant_bytes_per_block: float
    """the quantized values alone (all their bits, low and high)"""
    scale_group: int
    """weights per (sub-)block scale"""
    layout: str
    source: str
    dequant_ops_per_weight: float = 0.0
    """FP32-peak ops per weight to turn the stored bits into INT8 dot-product operands (from the AVX2 kernel's
    instructions per 32 weights, x 0.5)"""
    dequant_source: str = ""
    quantize_ops_per_element: float = 0.0
    """activation formats: FP32 vector ops per element to quantize an FP32 activation into this format
    (quantize_row_q8_0/q8_K, AVX2: abs, max, multiply, round, convert; q8_K also the 16-sums)"""
    engine: str = LLAMA_CPP
    """the engine whose ggml defines the type (:data:`IK_LLAMA_CPP`: ik_llama.cpp's own, which llama.cpp cannot
    load); its stack prices the type when the user names none"""

    def __post_init__(self) -> None:
        if not 0 < self.quant_bytes_per_block <= self.bytes_per_block:
            raise ValueError(f"{self.name}: quant bytes {self.quant_bytes_per_block} must be in (0, "
                             f"{self.bytes_per_block}]")
        if self.weights_per_block % self.scale_group:
            raise ValueError(f"{self.name}: scale group {self.scale_group} must divide the block")

    @property
    def bits_per_weight(self) -> float:
        return 8.0 * self.bytes_per_block / self.weights_per_block

    @property
    def bytes_per_weight(self) -> float:
        return self.bytes_per_block / self.weights_per_block

    @property
    def quant_bytes_per_weight(self) -> float:
        return self.quant_bytes_per_block / self.weights_per_block

    @property
    def meta_bytes_per_group(self) -> float:
        """Scale and min bytes per group of ``scale_group`` weights (a super-block's share included)."""
        return (self.bytes_per_block - self.quant_bytes_per_block) * self.scale_group / self.weights_per_block


#: FP32-peak ops per weight of one 256-bit instruction per 32 weights (module docstring)
OPS_PER_INSTRUCTION_PER_32 = 0.5


def _fmt(name: str, ggml_type: int, weights: int, nbytes: float, quant: float, group: int, layout: str,
         instructions: float = 0.0, ops_source: str = "", quantize_ops: float = 0.0) -> BlockFormat:
    """``instructions``: vector instructions per 32 weights in the AVX2 dot product."""
    return BlockFormat(name=name, ggml_type=ggml_type, weights_per_block=weights, bytes_per_block=nbytes,
                       quant_bytes_per_block=quant, scale_group=group, layout=layout,
                       source=f"{GGML_COMMON}: {layout}",
                       dequant_ops_per_weight=OPS_PER_INSTRUCTION_PER_32 * instructions,
                       dequant_source=f"{X86_QUANTS}: {ops_source}" if ops_source else "",
                       quantize_ops_per_element=quantize_ops)


def _ik(name: str, ggml_type: int, nbytes: float, quant: float, group: int, layout: str, instructions: float,
        ops_source: str) -> BlockFormat:
    """One of ik_llama.cpp's own types (its 256-weight blocks): ``instructions`` per 32 weights in the AVX2 kernel a
    one-row call runs (the values' unpacking and the sign trick, as :func:`_fmt`'s; the scales' handling, loads and
    the multiply-add pair not counted), read at :data:`IK_COMMIT`. A row scale some types keep besides their blocks
    (2 or 4 bytes a row) is left out of the bytes: under 0.2% of a row of 2,048 weights, and fewer bytes keep the
    ceiling an upper bound."""
    return BlockFormat(name=name, ggml_type=ggml_type, weights_per_block=256, bytes_per_block=nbytes,
                       quant_bytes_per_block=quant, scale_group=group, layout=layout,
                       source=f"{IK_COMMON}: {layout}",
                       dequant_ops_per_weight=OPS_PER_INSTRUCTION_PER_32 * instructions,
                       dequant_source=f"{IK_GEMM}{ops_source}", engine=IK_LLAMA_CPP)


#: The block formats this tool prices, by GGML type name.
BLOCKS: dict[str, BlockFormat] = {b.name: b for b in (
    _fmt("q8_0", 8, 32, 34, 32, 32, "block_q8_0 {ggml_half d; int8_t qs[QK8_0]}", 2.0,
         "ggml_vec_dot_q8_0_q8_0, AVX2: mul_sum_i8_pairs_float signs both operands (2 x vpsignb) for the "
         "u8 x s8 multiply", quantize_ops=5.0),
    _fmt("q4_0", 2, 32, 18, 16, 32, "block_q4_0 {ggml_half d; uint8_t qs[QK4_0/2]}", 6.0,
         "ggml_vec_dot_q4_0_q8_0, AVX2: bytes_from_nibbles_32 (shift, insert, and), the -8 offset "
         "(vpsubb), 2 x vpsignb"),
    _fmt("q4_1", 3, 32, 20, 16, 32, "block_q4_1 {ggml_half d; ggml_half m; uint8_t qs[QK4_1/2]}", 3.0,
         "ggml_vec_dot_q4_1_q8_1, AVX2: bytes_from_nibbles_32 (shift, insert, and); unsigned values, the min "
         "through q8_1's sum: no vpsignb"),
    _fmt("iq4_nl", 20, 32, 18, 16, 32, "block_iq4_nl {ggml_half d; uint8_t qs[QK4_NL/2]}", 8.0,
         "ggml_vec_dot_iq4_nl_q8_0, AVX2: the nibbles split (shift, 2 x and), looked up in kvalues_iq4nl "
         "(2 x vpshufb), joined (insert); signed values: mul_add_epi8's 2 x vpsignb"),
    _fmt("mxfp4", 39, 32, 17, 16, 32, "block_mxfp4 {uint8_t e; uint8_t qs[QK_MXFP4/2]} (QK_MXFP4 = 32; e an E8M0 "
         "power-of-two scale, qs 4-bit E2M1 values: OCP microscaling FP4)", 8.0,
         "ggml_vec_dot_mxfp4_q8_0, AVX2: as iq4_nl, the nibbles split (shift, 2 x and), looked up in kvalues_mxfp4 "
         "(the E2M1 values doubled, 2 x vpshufb), joined (insert); signed values: mul_add_epi8's 2 x vpsignb; the "
         "E8M0 scale converted in scalar code once per block (GGML_E8M0_TO_FP32_HALF)"),
    _fmt("q5_0", 6, 32, 22, 20, 32, "block_q5_0 {ggml_half d; uint8_t qh[4]; uint8_t qs[QK5_0/2]}", 11.0,
         "ggml_vec_dot_q5_0_q8_0, AVX2: bytes_from_nibbles_32 (3), bytes_from_bits_32 (broadcast, shuffle, "
         "or, compare: 4), andnot and or of the 5th bit (2), 2 x vpsignb"),
    _fmt("q5_1", 7, 32, 24, 20, 32, "block_q5_1 {ggml_half d; ggml_half m; uint8_t qh[4]; uint8_t qs[QK5_1/2]}",
         9.0, "ggml_vec_dot_q5_1_q8_1, AVX2: nibbles (3), 5th bits (4), and-or (2); unsigned: no vpsignb"),
    _fmt("q2_K", 10, 256, 84, 64, 16,
         "block_q2_K {uint8_t scales[QK_K/16]; uint8_t qs[QK_K/4]; ggml_half d; ggml_half dmin}", 1.75,
         "ggml_vec_dot_q2_K_q8_K, AVX2: per 128 weights 7 (an and, then shift and and for each of the other "
         "three 2-bit fields); unsigned values, the mins through q8_K's bsums"),
    _fmt("q3_K", 11, 256, 110, 96, 16,
         "block_q3_K {uint8_t hmask[QK_K/8]; uint8_t qs[QK_K/4]; uint8_t scales[12]; ggml_half d}", 4.75,
         "ggml_vec_dot_q3_K_q8_K, AVX2: per 128 weights 19 (low bits: an and, then shift and and three times; "
         "each 32 weights' third bit: andnot with the shifted mask, shift, shift; the mask itself a constant "
         "per position); its second vpmaddubsw and subtraction not counted"),
    _fmt("q4_K", 12, 256, 144, 128, 32,
         "block_q4_K {ggml_half d; ggml_half dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qs[QK_K/2]}", 1.5,
         "ggml_vec_dot_q4_K_q8_K, AVX2: per 64 weights and, shift, and (3) to split the nibbles; unsigned "
         "values, the mins through q8_K's bsums"),
    _fmt("iq4_xs", 23, 256, 136, 128, 32,
         "block_iq4_xs {ggml_half d; uint16_t scales_h; uint8_t scales_l[QK_K/64]; uint8_t qs[QK_K/2]}", 8.0,
         "ggml_vec_dot_iq4_xs_q8_K, AVX2: per 32 weights iq4_nl's 8 (split, 2 x vpshufb, insert, 2 x vpsignb); "
         "the 6-bit scales unpacked in scalar code, once per 32 weights"),
    _fmt("q5_K", 13, 256, 176, 160, 32,
         "block_q5_K {ggml_half d; ggml_half dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qh[QK_K/8]; "
         "uint8_t qs[QK_K/2]}", 6.5,
         "ggml_vec_dot_q5_K_q8_K, AVX2: per 64 weights 13 (nibbles: and, shift-and; high bits: and, shift, "
         "shift, add twice; the mask shifted twice)"),
    _fmt("q6_K", 14, 256, 210, 192, 16,
         "block_q6_K {uint8_t ql[QK_K/2]; uint8_t qh[QK_K/4]; int8_t scales[QK_K/16]; ggml_half d}", 4.25,
         "ggml_vec_dot_q6_K_q8_K, AVX2: per 128 weights 17 (high bits: 4 ands, 3 shifts; low nibbles: "
         "4 ands, 2 shifts; 4 ors)"),
    _fmt("iq1_s", 19, 256, 50, 44, 32,
         "block_iq1_s {ggml_half d; uint8_t qs[QK_K/8]; uint16_t qh[QK_K/32]}", 5.0,
         "ggml_vec_dot_iq1_s_q8_K, AVX2 (lines 3607-3657): 4 iq1s_grid entries per 32 weights (2 x vpinsrq, "
         "vinserti128: 3); signed values: mul_add_epi8's 2 x vpsignb; the delta (IQ1S_DELTA) through q8_K's bsums "
         "in scalar code"),
    _fmt("iq1_m", 29, 256, 56, 44, 16,
         "block_iq1_m {uint8_t qs[QK_K/8]; uint8_t qh[QK_K/16]; uint8_t scales[QK_K/32]}", 8.0,
         "ggml_vec_dot_iq1_m_q8_K, AVX2 (lines 3728-3825, the BMI2 path): 4 iq1s_grid entries per 32 weights (3); "
         "the delta signs as bytes (vpbroadcastd, vpmovsxbq, vpor: 3); mul_add_epi8's 2 x vpsignb; the delta's own "
         "vpsignb and second vpmaddubsw (a constant correction's second multiply) not counted"),
    _fmt("iq2_xxs", 16, 256, 66, 60, 32,
         "block_iq2_xxs {ggml_half d; uint16_t qs[QK_K/8]}", 7.0,
         "ggml_vec_dot_iq2_xxs_q8_K, AVX2 (lines 2673-2715): per 32 weights 4 iq2xxs_grid entries (3), 4 sign "
         "patterns from keven_signs_q2xs (3), a vpsignb on the activations (1)"),
    _fmt("iq2_xs", 17, 256, 74, 64, 16,
         "block_iq2_xs {ggml_half d; uint16_t qs[QK_K/8]; uint8_t scales[QK_K/32]}", 10.25,
         "ggml_vec_dot_iq2_xs_q8_K, AVX2 (lines 2791-2909): per 128 weights 41 (the 9-bit indices masked and the "
         "sign bits with their parity: and, 2 shifts, xor, vpshufb, or: 6; 16 iq2xs_grid entries: 12; the signs "
         "split over the lanes: vextracti128, 2 x vinserti128: 3; per 32 weights vpshufb, and, vpcmpeqb, or, "
         "vpsignb: 20)"),
    _fmt("iq2_s", 22, 256, 82, 72, 16,
         "block_iq2_s {ggml_half d; uint8_t qs[QK_K/4]; uint8_t qh[QK_K/32]; uint8_t scales[QK_K/32]}", 9.0,
         "ggml_vec_dot_iq2_s_q8_K, AVX2 (lines 3088-3160): per 32 weights 4 iq2s_grid entries (3); the 32 sign "
         "bits to bytes (vpbroadcastd, vpshufb, and, vpcmpeqb: 4) and applied to the activations (xor, sub: 2)"),
    _fmt("iq3_xxs", 18, 256, 98, 92, 32,
         "block_iq3_xxs {ggml_half d; uint8_t qs[3*QK_K/8]}", 11.0,
         "ggml_vec_dot_iq3_xxs_q8_K, AVX2 (lines 3273-3319): per 32 weights 8 iq3xxs_grid entries "
         "(_mm256_set_epi32: 4 x vpinsrd, 2 x vpunpcklqdq, vinserti128: 7), 4 sign patterns from keven_signs_q2xs "
         "(3), a vpsignb (1)"),
    _fmt("iq3_s", 21, 256, 110, 104, 32,
         "block_iq3_s {ggml_half d; uint8_t qs[QK_K/4]; uint8_t qh[QK_K/32]; uint8_t signs[QK_K/8]; "
         "uint8_t scales[IQ3S_N_SCALE]}", 19.0,
         "ggml_vec_dot_iq3_s_q8_K, AVX2 (lines 3397-3480): per 64 weights 38 (the 9-bit indices: vpmovzxbw, 2 x "
         "vpbroadcastd, 2 x vpsllvd, 2 x and, 2 x vpmovsxwd, vextracti128, 2 x or: 12; 16 iq3s_grid entries: "
         "14; per 32 weights the sign bits to bytes and applied as iq2_s's: 12)"),
    _fmt("q8_K", 15, 256, 292, 256, 256,
         "block_q8_K {float d; int8_t qs[QK_K]; int16_t bsums[QK_K/16]}", 0.0, "", quantize_ops=6.0),
    *(_ik(*t) for t in (
        ("iq2_k", 137, 76, 64, 16, "block_iq2_k {ggml_half d; uint16_t extra; uint8_t scales[QK_K/32]; "
         "uint8_t qs[QK_K/4]} (lines 635-641)", 2.75,
         "iqk_gemm_iqk_quants.cpp lines 1064-1094 (DequantizerIQ2K) and iqk_common.h 512-522: the 2-bit values "
         "split (shift, and), the extra bit's table chosen per 16 and looked up (vpshufb)"),
        ("iq3_k", 138, 110, 96, 16, "block_iq3_k {ggml_half d; uint16_t extra; uint16_t scales_h; "
         "uint8_t scales_l[QK_K/32]; uint8_t qs[QK_K/4]; uint8_t qh[QK_K/32]} (lines 691-699)", 5.625,
         "iqk_gemm_iqk_quants.cpp lines 1096-1139 (DequantizerIQ3K): low bits split, the third bit merged "
         "(shift, and, or), looked up (vpshufb)"),
        ("iq4_k", 139, 144, 128, 16, "block_iq4_k {ggml_half d; uint16_t extra; uint8_t scales_h[QK_K/64]; "
         "uint8_t scales_l[QK_K/32]; uint8_t qs[QK_K/2]} (lines 719-726)", 6.0,
         "iqk_gemm_iqk_quants.cpp lines 1252-1293 (DequantizerIQ4K) and iqk_common.h 541-551: per 32 weights the "
         "nibbles split (shift, insert, and: 3), looked up in one of 4 tables the extra bits pick (vpshufb: 1); "
         "signed values: 2 x vpsignb"),
        ("iq5_k", 140, 176, 160, 16, "block_iq5_k {ggml_half d; uint16_t extra; uint8_t scales_h[QK_K/64]; "
         "uint8_t scales_l[QK_K/32]; uint8_t qs[QK_K/2]; uint8_t qh[QK_K/8]} (lines 737-745)", 11.625,
         "iqk_gemm_iqk_quants.cpp lines 1342-1384 (DequantizerIQ5K): nibbles (3), the fifth bit as a mask "
         "selecting between two lookups (about 6.6), 2 x vpsignb"),
        ("iq6_k", 141, 212, 192, 16, "block_iq6_k {ggml_half d; uint16_t extra; int8_t scales[QK_K/16]; "
         "uint8_t qs[QK_K/2]; uint8_t qh[QK_K/4]} (lines 757-764)", 24.25,
         "iqk_gemm_iqk_quants.cpp lines 1386-1428 (DequantizerIQ6K): nibbles and 2 high bits, four lookups blended "
         "by the high bits (22.25, the lower of two readings), 2 x vpsignb"),
        ("iq4_ks", 144, 136, 128, 32, "block_iq4_ks {uint8_t scales[QK_K/32]; uint8_t qs[QK_K/2]} (lines 618-622; "
         "a float row scale besides, 4 bytes a row)", 6.0,
         "iqk_gemm_iqk_quants.cpp lines 1223-1250 (DequantizerIQ4KS): as iq4_k, the table chosen by the scale's "
         "low bit in scalar code"),
        ("iq2_ks", 145, 70, 64, 32, "block_iq2_ks {uint16_t extra; uint8_t scales[QK_K/64]; uint8_t qs[QK_K/4]} "
         "(lines 659-664; an fp16 row scale besides, 2 bytes a row)", 2.75,
         "iqk_gemm_iqk_quants.cpp lines 959-1000 (DequantizerIQ2KS): as iq2_k"),
        ("iq4_kss", 146, 128, 128, 32, "block_iq4_kss {uint32_t qs[QK_K/8]} (lines 630-633: the scales and the "
         "table bits in the values' own bits; a float row scale besides, 4 bytes a row)", 6.0,
         "iqk_gemm_iqk_quants.cpp lines 1175-1221 (DequantizerIQ4KSS): the values freed of the scale bits, split "
         "and looked up; the scale bits' extraction (about 4 more) not counted"),
        ("iq5_ks", 152, 168, 160, 32, "block_iq5_ks {uint8_t scales[QK_K/32]; uint8_t qs[QK_K/2]; "
         "uint8_t qh[QK_K/8]} (lines 766-771; a float row scale besides, 4 bytes a row)", 9.625,
         "iqk_gemm_iqk_quants.cpp lines 1295-1340 (DequantizerIQ5KS): as iq5_k's values"),
        ("iq3_ks", 156, 102, 96, 32, "block_iq3_ks {uint16_t extra; uint8_t scales[QK_K/64]; uint8_t qs[QK_K/4]; "
         "uint8_t qh[QK_K/32]} (lines 701-707; an fp16 row scale besides, 2 bytes a row)", 8.625,
         "iqk_gemm_iqk_quants.cpp lines 1141-1173 (DequantizerIQ3KS): as iq3_k's values (6.625), 2 x vpsignb; the "
         "shifts' broadcasts (up to 2 more) not counted"),
        ("iq2_kl", 157, 86, 80, 32, "block_iq2_kl {uint16_t scales_h; uint8_t scales_l[QK_K/64]; "
         "uint8_t qs[QK_K/4]; uint8_t qh[QK_K/16]} (lines 643-649; an fp16 row scale besides, 2 bytes a row)", 11.0,
         "iqk_gemm_iqk_quants.cpp lines 1002-1062 (DequantizerIQ2KL): 5-bit indices of pairs of values, looked up "
         "(4 x vpshufb per 64) and the pairs interleaved (the lower of two readings)"),
        ("iq1_kt", 158, 56, 48, 32, "block_iq1_kt {uint8_t sh[QK_K/32]; uint8_t ql[QK_K/8]; uint8_t qh[QK_K/16]} "
         "(lines 666-671; a float row scale besides, 4 bytes a row)", 33.5,
         "iqk_gemm_ktquants.cpp lines 568-656 and 215-264: the trellis generator per 8 weights from a 13-bit index "
         "(multiply, add, xor, mask, byte sums: 31.5, vpmulld counted once), 2 x vpsignb"),
        ("iq2_kt", 153, 68, 64, 32, "block_iq2_kt {uint8_t scales[QK_K/64]; uint8_t ql[QK_K/4]} (lines 673-677; a "
         "float row scale besides, 4 bytes a row)", 32.0,
         "iqk_gemm_ktquants.cpp lines 658-737 and 265-305: the trellis generator per 8 weights from a 16-bit index "
         "(30), 2 x vpsignb"),
        ("iq3_kt", 154, 100, 96, 32, "block_iq3_kt {uint8_t scales[QK_K/64]; uint8_t ql[QK_K/4]; "
         "uint8_t qh[QK_K/8]} (lines 679-684; a float row scale besides, 4 bytes a row)", 36.0,
         "iqk_gemm_ktquants.cpp lines 803-886 and 265-305: the generator (30) and the sign bits applied (5), a "
         "vpsignb on the activations"),
        ("iq4_kt", 155, 128, 128, 32, "block_iq4_kt {uint32_t qs[QK_K/8]} (lines 686-689: scales and index bits "
         "in the words; a float row scale besides, 4 bytes a row)", 30.09,
         "iqk_gemm_ktquants.cpp lines 1102-1198 and 173-213: the generator per 4 weights (28.09), 2 x vpsignb; "
         "the indices' scalar assembly (about 55-60 scalar ops per 32 weights) not counted"),
        ("q4_k_r4", 212, 144, 128, 32, "block_q4_k_r4 {ggml_half d[8]; uint8_t scales_h[QK_K/16]; "
         "uint8_t scales_l[QK_K/8]; uint8_t qs[QK_K*2]} (lines 355-361): q4_K's blocks of 4 rows interleaved, 576 "
         "bytes a 4-row block, 144 a row's (type_size sizeof(block_q4_K), ggml.c line 983)", 1.5,
         "iqk_gemm_kquants.cpp lines 1536-1602: q4_K's nibble split, each unpacked register serving 4 weight rows"),
        ("iq3_k_r4", 338, 110, 96, 16, "block_iq3_k_r4 (lines 709-717): 4 x block_iq3_k interleaved", 8.25,
         "iqk_gemm_iqk_quants.cpp lines 1732-1820"),
        ("iq4_k_r4", 339, 144, 128, 16, "block_iq4_k_r4 (lines 728-735): 4 x block_iq4_k interleaved", 7.5,
         "iqk_gemm_iqk_quants.cpp lines 1822-1912: 4.5, and 3 vpsignb"),
        ("iq5_k_r4", 340, 176, 160, 16, "block_iq5_k_r4 (lines 747-755): 4 x block_iq5_k interleaved", 12.0,
         "iqk_gemm_iqk_quants.cpp lines 1924-2046: 9, and 3 vpsignb"),
        ("q8_k_r8", 399, 258, 256, 256, "block_q8_k_r8 {ggml_half d[8]; int8_t qs[8*QK_K]} (lines 424-428): 8 rows' "
         "int8 values interleaved, 2,064 bytes a block of 8 rows, 258 a row's (type_size sizeof/8, ggml.c line 1057)",
         3.0, "iqk_gemm_kquants.cpp lines 1836-1889: no unpacking, the sign trick (3 vpsignb)"),
    )),
)}

#: GGML type id -> name, for the types above and the float ones.
FLOAT_TYPES: dict[int, str] = {0: "f32", 1: "f16", 30: "bf16"}
FLOAT_BYTES: dict[str, float] = {"f32": 4.0, "f16": 2.0, "bf16": 2.0}

#: Activation format of each weight type's dot product (``vec_dot_type`` in ggml-cpu.c's
#: ``type_traits_cpu``: lines 337-379 at 0c1e570 for the i-quants, all q8_K; q5_1 and q4_1 use q8_1, which has the
#: same bytes as q8_0 plus a sum:
#: 36 bytes per 32, priced here as q8_0's 34).
VEC_DOT_TYPE: dict[str, str] = {"q8_0": "q8_0", "q4_0": "q8_0", "q4_1": "q8_0", "q5_0": "q8_0", "q5_1": "q8_0",
                                "iq4_nl": "q8_0", "mxfp4": "q8_0", "q2_K": "q8_K", "q3_K": "q8_K", "q4_K": "q8_K", "iq4_xs": "q8_K",
                                "q5_K": "q8_K", "q6_K": "q8_K", **{t: "q8_K" for t in (
                                    "iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s")}}
#: ik_llama.cpp's types: q8_K's bytes for every one (assumed: on AVX2 the trellis types take Q8_2_X4, 36 bytes a 32,
#: and q4_k_r4 Q8_K32; a one-row call's activations are a small part of its bytes either way)
VEC_DOT_TYPE.update({t: "q8_K" for t, b in BLOCKS.items() if b.engine == IK_LLAMA_CPP})

#: The precisions named after a GGML type (``--precision q4_k``), lower case.
RECIPE_TYPES: dict[str, str] = {"q8_0": "q8_0", "q4_0": "q4_0", "q4_1": "q4_1", "q5_0": "q5_0", "q5_1": "q5_1",
                                "iq4_nl": "iq4_nl",
                                "q2_k": "q2_K", "q3_k": "q3_K", "q4_k": "q4_K", "iq4_xs": "iq4_xs", "q5_k": "q5_K",
                                "q6_k": "q6_K", "iq1_s": "iq1_s", "iq1_m": "iq1_m", "iq2_xxs": "iq2_xxs",
                                "iq2_xs": "iq2_xs", "iq2_s": "iq2_s", "iq3_xxs": "iq3_xxs", "iq3_s": "iq3_s",
                                **{t: t for t in VEC_DOT_TYPE if BLOCKS[t].engine == IK_LLAMA_CPP}}

_W_DTYPE = {"q8_0": "int8", "q4_0": "int4", "q4_1": "int4", "q5_0": "int8", "q5_1": "int8", "iq4_nl": "int4",
            "mxfp4": "int4",
            "q2_K": "int4", "q3_K": "int4", "q4_K": "int4", "iq4_xs": "int4", "q5_K": "int8",
            "q6_K": "int8", "iq1_s": "int4", "iq1_m": "int4", "iq2_xxs": "int4", "iq2_xs": "int4", "iq2_s": "int4",
            "iq3_xxs": "int4", "iq3_s": "int4",
            **{t: "int4" if b.bits_per_weight <= 4.5 else "int8" for t, b in BLOCKS.items() if b.engine == IK_LLAMA_CPP}}


def block_recipe_fields(precision: str, block: BlockFormat, x_block: BlockFormat, description: str) -> dict[str, Any]:
    """The PrecisionRecipe fields of a block format on llama.cpp's x86 CPU path: INT8 dot products
    on activations quantized to ``x_block``, FP32 output, FP32 non-GEMM work (ggml's activations are
    FP32). ``w_dtype`` is nominal (the storage class); the bytes come from the block."""
    return dict(
        name=precision, description=description, compute_dtype="int8", x_dtype="int8",
        w_dtype=_W_DTYPE.get(block.name, "int8"), y_dtype="fp32", non_gemm_mode="fp32", x_scale="none",
        w_scale="per-group", w_group_size=block.scale_group, scale_dtype="fp16",
        block=block, x_block=x_block,
    )


def gguf_recipe_fields() -> list[dict[str, Any]]:
    """Fields of the recipes named after GGML types (registered in :mod:`roofline.spec.precision`)."""
    out = []
    for precision, t in RECIPE_TYPES.items():
        b = BLOCKS[t]
        a = BLOCKS[VEC_DOT_TYPE[t]]
        out.append(block_recipe_fields(
            precision, b, a,
            f"{b.engine} {t} (GGUF): {b.weights_per_block}-weight blocks of {b.bytes_per_block:g} bytes, "
            f"{b.bits_per_weight:g} bits per weight; activations quantized to {a.name} "
            f"({a.bits_per_weight:g} bits), INT8 dot products (VNNI/AVX2), FP32 output",
        ))
    return out
