"""ik_llama.cpp's own GGUF types (IQ2_K ... IQ6_K, the KS, KL and trellis KT types, the row-interleaved _R4/_R8):
their byte layouts by hand from ik_llama.cpp's structs, their type ids, the stack that prices them, a file of one
read back, and their records bounded by the ceiling."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from roofline.model.efficiency import GGUF_STACK, gguf_stack
from roofline.spec.gguf_types import BLOCKS, IK_LLAMA_CPP, RECIPE_TYPES, VEC_DOT_TYPE
from roofline.spec.precision import RECIPES

#: bytes per 256-weight block, summed by hand from the struct fields in ik_llama.cpp's ggml/src/ggml-common.h
#: (fp16 = 2 bytes; the _R4/_R8 types per row: the 4- or 8-row block over its rows), and the type ids of its
#: ggml/include/ggml.h
BY_HAND = {
    "iq2_k": (137, 2 + 2 + 8 + 64),  # d, extra, scales[8], qs[64]
    "iq3_k": (138, 2 + 2 + 2 + 8 + 64 + 32),  # d, extra, scales_h, scales_l[8], qs[64], qh[32]
    "iq4_k": (139, 2 + 2 + 4 + 8 + 128),  # d, extra, scales_h[4], scales_l[8], qs[128]
    "iq5_k": (140, 2 + 2 + 4 + 8 + 128 + 32),
    "iq6_k": (141, 2 + 2 + 16 + 128 + 64),  # d, extra, scales[16], qs[128], qh[64]
    "iq4_ks": (144, 8 + 128),  # scales[8], qs[128]
    "iq2_ks": (145, 2 + 4 + 64),  # extra, scales[4], qs[64]
    "iq4_kss": (146, 4 * 32),  # qs[32] words
    "iq5_ks": (152, 8 + 128 + 32),
    "iq3_ks": (156, 2 + 4 + 64 + 32),
    "iq2_kl": (157, 2 + 4 + 64 + 16),  # scales_h, scales_l[4], qs[64], qh[16]
    "iq1_kt": (158, 8 + 32 + 16),  # sh[8], ql[32], qh[16]
    "iq2_kt": (153, 4 + 64),
    "iq3_kt": (154, 4 + 64 + 32),
    "iq4_kt": (155, 4 * 32),
    "q4_k_r4": (212, (8 * 2 + 16 + 32 + 512) / 4),  # d[8], scales_h[16], scales_l[32], qs[512] over 4 rows
    "iq3_k_r4": (338, 110),
    "iq4_k_r4": (339, 144),
    "iq5_k_r4": (340, 176),
    "q8_k_r8": (399, (8 * 2 + 8 * 256) / 8),  # d[8], qs[2048] over 8 rows
}


def test_the_types_are_ik_llama_cpps_structs():
    ik = {n: b for n, b in BLOCKS.items() if b.engine == IK_LLAMA_CPP}
    assert set(ik) == set(BY_HAND)
    for name, (type_id, nbytes) in BY_HAND.items():
        b = ik[name]
        assert (b.ggml_type, b.weights_per_block, b.bytes_per_block) == (type_id, 256, nbytes), name
        assert 0 < b.quant_bytes_per_block <= b.bytes_per_block and "ik_llama.cpp" in b.source
        assert b.dequant_ops_per_weight > 0 and "iqk/" in b.dequant_source
        assert RECIPE_TYPES[name] == name and VEC_DOT_TYPE[name] == "q8_K"
    # an interleaved type stores what its base type stores, row by row
    for r, base in (("iq3_k_r4", "iq3_k"), ("iq4_k_r4", "iq4_k"), ("iq5_k_r4", "iq5_k")):
        assert ik[r].bits_per_weight == ik[base].bits_per_weight
    assert ik["q4_k_r4"].bits_per_weight == BLOCKS["q4_K"].bits_per_weight == 4.5
    # a type's id is not one of llama.cpp's
    assert not {b.ggml_type for b in ik.values()} & {b.ggml_type for b in BLOCKS.values() if b.engine != IK_LLAMA_CPP}


def test_the_trellis_types_unpack_at_the_highest_cost():
    """The trellis (KT) types compute each value from its index (multiplies, adds, masks: about 30 instructions a 32
    weights); the IQ*_K types look them up (3 to 24)."""
    kt = [BLOCKS[t].dequant_ops_per_weight for t in ("iq1_kt", "iq2_kt", "iq3_kt", "iq4_kt")]
    k = [BLOCKS[t].dequant_ops_per_weight for t in ("iq2_k", "iq3_k", "iq4_k", "iq5_k", "iq6_k")]
    assert min(kt) > max(k)


def test_ik_types_are_priced_by_ik_llama_cpp():
    """A GGUF type only ik_llama.cpp runs is priced by its profile when the user names no stack; llama.cpp's types
    stay llama.cpp's."""
    assert gguf_stack(RECIPES["iq4_k"]) == gguf_stack(RECIPES["q8_k_r8"]) == IK_LLAMA_CPP
    assert gguf_stack(RECIPES["q4_k"]) == gguf_stack(RECIPES["iq4_xs"]) == GGUF_STACK
    from clitools import run_cli

    proc = run_cli("estimate", "--model", "llama-3.1-8b", "--cpu", "genoa", "--phase", "decode",
                   "--precision", "iq4_kt,q4_k", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    stacks = {name: p["stack"] for name, p in data["precisions"].items()}
    assert stacks["iq4_kt"] == IK_LLAMA_CPP and stacks["q4_k"] == GGUF_STACK


def _retype(path: Path, names: list[str], type_id: int) -> None:
    """Set the stored GGML type of the named tensors in a GGUF file's header (tensor info: name, n_dims, the dims,
    then the type as a u32)."""
    data = bytearray(path.read_bytes())
    for name in names:
        raw = name.encode()
        at = data.index(struct.pack("<Q", len(raw)) + raw) + 8 + len(raw)
        (dims,) = struct.unpack_from("<I", data, at)
        struct.pack_into("<I", data, at + 4 + 8 * dims, type_id)
    path.write_bytes(bytes(data))


def test_a_file_of_an_ik_type_reads_back_at_its_bytes(tmp_path):
    """A GGUF whose matrices are stored as IQ4_K (id 139, which the gguf package does not know) reads back with
    that type and its 144 bytes a 256 weights."""
    pytest.importorskip("gguf")
    from gguf_files import tiny_tensors, write_gguf

    from roofline.catalog.gguf_file import read_gguf_fields

    path = write_gguf(tmp_path / "iq4k.gguf", hidden=256, heads=4, kv=2, ffn=512)
    matrices = [n for n, shape in tiny_tensors(256, 2, 4, 2, 512).items() if len(shape) == 2]
    _retype(path, matrices, 139)
    stored = {t["name"]: t for t in read_gguf_fields(path)["gguf_tensors"]}
    up = stored["blk.0.ffn_up.weight"]
    assert up["type"] == "iq4_k" and up["nbytes"] == 512 * 256 // 256 * 144
    _retype(path, matrices, 999)  # a type neither knows: one line naming the tensor
    from roofline.errors import SpecError

    with pytest.raises(SpecError, match="GGML type 999 is not a type"):
        read_gguf_fields(path)


def test_every_ik_record_is_under_its_bound(corpus_accuracy):
    """The records of ik_llama.cpp's own types that the corpus scores: none measured above the bound."""
    ik = [r for r in corpus_accuracy.rows if r.stack == IK_LLAMA_CPP and RECIPES.get(r.precision) is not None
          and RECIPES[r.precision].block is not None and RECIPES[r.precision].block.engine == IK_LLAMA_CPP]
    assert len({r.record for r in ik}) >= 16 and {r.precision for r in ik} >= {"iq3_k", "iq3_kt", "q4_k_r4"}
    assert not [r for r in ik if r.violation]
