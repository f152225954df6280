"""llama.cpp's importance-matrix types IQ1_S to IQ3_S as GGUF precisions: their layouts against the ``gguf`` package
and by hand from ``ggml-common.h``'s structs, the weight bytes an estimate streams, the decode ceiling's order by
bytes, and a GGUF file holding them read and priced."""

from __future__ import annotations

import pytest

from roofline import api
from roofline.catalog import load_model_file
from roofline.spec.gguf_mix import cell_recipes, unpriced_types
from roofline.spec.gguf_types import BLOCKS, RECIPE_TYPES, VEC_DOT_TYPE
from roofline.spec.model import ModelSpec
from roofline.spec.precision import get_recipe

gguf = pytest.importorskip("gguf")

IQ = ("iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s")
QK_K = 256
HALF = 2  # ggml_half

#: each struct's fields in bytes (llama.cpp ggml/src/ggml-common.h, QK_K = 256): (all bytes, the quantized values'
#: bytes: grid indices, their high bits and the sign bits; not d, the scales or iq1's delta signs)
BY_HAND = {
    # {ggml_half d; uint8_t qs[QK_K/8]; uint16_t qh[QK_K/32]}: qh holds 4 x 3 index bits, a 3-bit scale and the delta
    # sign per 32 weights
    "iq1_s": (HALF + QK_K // 8 + 2 * QK_K // 32, QK_K // 8 + QK_K // 32 * 12 // 8),
    # {uint8_t qs[QK_K/8]; uint8_t qh[QK_K/16]; uint8_t scales[QK_K/32]}: qh 3 index bits and a delta sign per 8
    "iq1_m": (QK_K // 8 + QK_K // 16 + QK_K // 32, QK_K // 8 + QK_K // 8 * 3 // 8),
    # {ggml_half d; uint16_t qs[QK_K/8]}: per 32 weights 4 8-bit indices, 4 x 7 sign bits and a 4-bit scale
    "iq2_xxs": (HALF + 2 * QK_K // 8, QK_K // 32 * (4 * 8 + 4 * 7) // 8),
    # {ggml_half d; uint16_t qs[QK_K/8]; uint8_t scales[QK_K/32]}: each qs a 9-bit index and 7 sign bits
    "iq2_xs": (HALF + 2 * QK_K // 8 + QK_K // 32, 2 * QK_K // 8),
    # {ggml_half d; uint8_t qs[QK_K/4]; uint8_t qh[QK_K/32]; uint8_t scales[QK_K/32]}: qs indices then signs
    "iq2_s": (HALF + QK_K // 4 + QK_K // 32 + QK_K // 32, QK_K // 4 + QK_K // 32),
    # {ggml_half d; uint8_t qs[3*QK_K/8]}: 64 8-bit indices, then per 32 weights 4 x 7 sign bits and a 4-bit scale
    "iq3_xxs": (HALF + 3 * QK_K // 8, QK_K // 4 + QK_K // 32 * 28 // 8),
    # {ggml_half d; uint8_t qs[QK_K/4]; uint8_t qh[QK_K/32]; uint8_t signs[QK_K/8]; uint8_t scales[QK_K/64]}
    "iq3_s": (HALF + QK_K // 4 + QK_K // 32 + QK_K // 8 + QK_K // 64, QK_K // 4 + QK_K // 32 + QK_K // 8),
}
#: bits per weight as llama.cpp's comments and llama_model_ftype_name state them (ggml-common.h, llama-model-loader.cpp)
BITS = {"iq1_s": 1.5625, "iq1_m": 1.75, "iq2_xxs": 2.0625, "iq2_xs": 2.3125, "iq2_s": 2.5625, "iq3_xxs": 3.0625,
        "iq3_s": 3.4375}
#: gguf-py's GGMLQuantizationType values (gguf/constants.py)
TYPE_IDS = {"iq2_xxs": 16, "iq2_xs": 17, "iq3_xxs": 18, "iq1_s": 19, "iq3_s": 21, "iq2_s": 22, "iq1_m": 29}


@pytest.mark.parametrize("name", IQ)
def test_layout_is_the_gguf_packages_and_the_structs(name):
    b = BLOCKS[name]
    t = gguf.GGMLQuantizationType(b.ggml_type)
    assert b.ggml_type == TYPE_IDS[name] and t.name.lower() == name
    assert gguf.GGML_QUANT_SIZES[t] == (b.weights_per_block, b.bytes_per_block) == (QK_K, BY_HAND[name][0])
    assert b.quant_bytes_per_block == BY_HAND[name][1]
    assert b.bits_per_weight == BITS[name] == 8 * BY_HAND[name][0] / QK_K


@pytest.mark.parametrize("name", IQ)
def test_precision_is_an_int8_dot_product_on_q8_k_activations(name):
    r = get_recipe(name)
    assert RECIPE_TYPES[name] == name and VEC_DOT_TYPE[name] == "q8_K"
    assert r.block is BLOCKS[name] and r.x_block is BLOCKS["q8_K"] and r.compute_dtype == "int8"
    assert r.e_x == 292 / 256  # block_q8_K: fp32 d, 256 int8, 16 int16 sums
    # the grid's formula (e_w N K + per-group metadata) gives the struct's bytes exactly
    from roofline.calc.gemm import weight_meta_bytes

    n, k = 4096, 14336
    meta = float(weight_meta_bytes(n, k, r.w_scale, r.w_group_size, r.scale_bytes, r.w_zero_point))
    assert r.e_w * n * k + meta == pytest.approx(n * k * BY_HAND[name][0] / QK_K)


def test_unpacking_counts():
    """The AVX2 kernels' instructions per 32 weights (gguf_types' readings), 0.5 op each: a grid entry set of 4 costs
    3 (2 vpinsrq, vinserti128), of 8 costs 7; a sign pattern table set 3 more and its vpsignb 1 (iq2_xxs);
    iq1_s has no signs of its own, but mul_add_epi8's 2 vpsignb."""
    ops = {n: BLOCKS[n].dequant_ops_per_weight for n in IQ}
    assert ops["iq2_xxs"] == 0.5 * (3 + 3 + 1)
    assert ops["iq3_xxs"] == 0.5 * (7 + 3 + 1)
    assert ops["iq1_s"] == 0.5 * (3 + 2)
    assert ops["iq2_xs"] == 0.5 * 41 / 4 and ops["iq3_s"] == 0.5 * 38 / 2
    # every i-quant unpacks at more cost than q4_K's nibbles, and the sources are cited with their lines
    assert min(ops.values()) > BLOCKS["q4_K"].dequant_ops_per_weight
    assert all("AVX2 (lines " in BLOCKS[n].dequant_source for n in IQ)


@pytest.mark.parametrize("name", IQ)
def test_an_estimate_streams_the_layouts_weight_bytes(name):
    """llama-3.2-1b's ffn_up row at decode: gate and up, 2 x 8192 rows of K = 2048 (its config.json), 16 layers;
    every matrix in the type (the lm_head too): the weight bytes are the parameters times bits / 8."""
    r = api.estimate(model="llama-3.2-1b", cpu="genoa", phase="decode", precision=name, quantize_lm_head=True)
    p = r.precisions[name]
    up = next(g for g in p.gemms if g.name == "ffn_up")
    assert (up.n, up.k, up.count) == (2 * 8192, 2048, 16)
    assert up.w_bytes == 2 * 8192 * 2048 * BITS[name] / 8
    params = sum(g.n * g.k * g.count for g in p.gemms)
    assert p.weight_bytes == pytest.approx(params * BITS[name] / 8)


def test_decode_ceiling_orders_by_bytes_on_a_dram_bound_cpu():
    """At one token on Genoa every type streams its weights from DRAM: fewer bytes, a ceiling no slower."""
    names = sorted(IQ, key=lambda n: BITS[n])
    r = api.estimate(model="llama-3.2-1b", cpu="genoa", phase="decode", precision=list(names), quantize_lm_head=True)
    ps = [r.precisions[n] for n in names]
    assert {p.bound for p in ps} == {"DRAM"}
    times = [p.step_time_s for p in ps]
    assert times == sorted(times) and len(set(times)) == len(times)
    bounds = [p.bound_step_time_s for p in ps]
    assert bounds == sorted(bounds)


def test_the_llama_cpp_profile_prices_them_from_their_counted_cycles_or_the_ceiling_and_says_which(monkeypatch):
    """Genoa's core (znver4) has llvm-mca cycles for the i-quants' vec_dot and tiled matmul (validation/kernel_mca/):
    the estimate lists them among its inputs, and a prefill's calls run the tiled kernel; Skylake-SP's rows have the
    tiled unpacking but not its microtile (as for the k-quants there): said among the assumed inputs, and the calls
    named as what prices them (vec_dot calls). Zen 5's are timed on the guest (measured). A core whose rows lack a
    type (the table read without Zen 5's iq2_xs, as it was before those runs): the estimate names the type among its
    assumed inputs, priced from the ceiling."""
    import dataclasses

    import roofline.catalog.kernels as kernels

    r = api.estimate(model="llama-3.2-1b", cpu="genoa", phase="decode", precision="iq2_xs")
    assert r.stack == "llama.cpp"
    (row,) = [i for i in r.inputs if i.what == "llama.cpp.kernels.znver4.iq2_xs"]
    assert row.kind == "derived" and "llvm-mca" in row.source
    assert row.value.startswith("vec_dot 10.519, tiled 1.402, tiled_unpack 27.307")  # the table's znver4 row
    assert not [i for i in r.inputs if "no cycles" in i.value]
    pre = api.estimate(model="llama-3.2-1b", cpu="genoa", phase="prefill", precision="iq2_xs")
    assert any("tiled kernel's" in o.how for s in pre.speedups for o in s.overheads)
    skx = api.estimate(model="llama-3.2-1b", cpu="xeon-6138", phase="decode", precision="iq2_xs")
    (untiled,) = [i for i in skx.inputs if "no cycles" in i.value and "iq2_xs" in i.what]
    assert untiled.what == "llama.cpp.kernels.skylake-avx512.iq2_xs.tiled" and untiled.kind == "assumed"
    assert "as that many vec_dot calls" in untiled.source
    timed = api.estimate(model="llama-3.2-1b", cpu="zen5-2vcpu-r3", phase="decode", precision="iq2_xs")
    (row,) = [i for i in timed.inputs if i.what == "llama.cpp.kernels.znver5.iq2_xs"]
    assert row.kind == "measured" and row.value.startswith("vec_dot 6.8605, tiled 0.607, ")
    assert not [i for i in timed.inputs if "no cycles" in i.value]
    timed_pre = api.estimate(model="llama-3.2-1b", cpu="zen5-2vcpu-r3", phase="prefill", precision="iq2_xs")
    assert any("tiled kernel's" in o.how for s in timed_pre.speedups for o in s.overheads)
    real = kernels.load_kernel_table

    def without(name):
        table = real(name)
        z5 = table.cycles["znver5"]
        z5 = dataclasses.replace(z5, types={t: e for t, e in z5.types.items() if t != "iq2_xs"})
        return dataclasses.replace(table, cycles={**table.cycles, "znver5": z5})

    monkeypatch.setattr(kernels, "load_kernel_table", without)
    z = api.estimate(model="llama-3.2-1b", cpu="zen5-2vcpu-r3", phase="decode", precision="iq2_xs")
    (row,) = [i for i in z.inputs if i.what == "llama.cpp.kernels.iq2_xs"]
    assert row.kind == "assumed" and "no cycles" in row.value and "ceiling" in row.source
    p = z.precisions["iq2_xs"]
    assert p.realistic_step_time_s > p.step_time_s
    # a type the table counts on that core gets no such row
    q = api.estimate(model="llama-3.2-1b", cpu="zen5-2vcpu-r3", phase="decode", precision="q4_k")
    assert not [i for i in q.inputs if "no cycles" in i.value]


def test_builds_before_the_tiled_matmul_unpack_them_per_activation_row():
    """llama.cpp ran ggml_vec_dot_<type>_q8_K per activation row for the i-quants until its tiled matmul took them:
    the profile's rule holds for records dated before the kernel table's tiled dispatch, not for today's build."""
    from roofline.catalog.kernels import load_kernel_table
    from roofline.catalog.stacks import load_stack
    from roofline.spec.kernels import Kernel

    stack, table = load_stack("llama.cpp"), load_kernel_table("llama.cpp")
    for name in IQ:
        tiled = table.rule(name, Kernel.TILED, ("avx2", "avx512f"), None)
        assert tiled is not None and table.rule(name, Kernel.TILED, ("avx2",), "2024-12-24") is None
        rule = stack.unpack_rule("AMD", "int8", name, "2024-12-24")
        assert rule is not None and rule.rows_per_unpack == 1 and rule.before == tiled.since
        assert stack.unpack_rule("AMD", "int8", name, None) is None
        assert stack.unpack_rule("AMD", "int8", name, tiled.since) is None
    assert stack.unpack_rule("AMD", "int8", "q4_K", "2024-12-24") is None  # the kernel table's types: its cycles


@pytest.mark.parametrize("name", ["iq2_xxs", "iq3_s", "iq1_m"])
def test_a_gguf_file_of_the_type_is_read_and_priced(tmp_path, monkeypatch, name):
    """A file whose matrices are all of the type (gguf's writer, the type ids above): read with each tensor's type and
    bytes, and ``--precision gguf`` prices its rows at the layout's bytes, nothing of its unpacking left out."""
    import roofline.validation.gguf_writer as writer
    from roofline.validation.gguf_writer import write_random_gguf

    monkeypatch.setitem(writer._SCALES, name, ((0, 1e-3),))  # a small fp16 at the block's start: values never matter
    tiny = ModelSpec(name="tiny", source="test", family="decoder", hidden_size=256, intermediate_size=512,
                     num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, vocab_size=512,
                     max_position_embeddings=512, hidden_act="silu", gated_mlp=True, tie_word_embeddings=False,
                     attention_bias=False, mlp_bias=False)
    path = tmp_path / f"{name}.gguf"
    write_random_gguf(path, tiny, name)
    back = load_model_file(path.resolve())
    matrices = [t for t in back.gguf_tensors if not t.name.endswith("_norm.weight")]
    assert {t.type for t in matrices} == {name}
    assert all(t.nbytes == t.elements * BY_HAND[name][0] / QK_K for t in matrices)
    assert unpriced_types(back) == {}
    names = ["qkv", "attn_out", "ffn_up", "ffn_down", "lm_head"]
    assert {r.block.name for r in cell_recipes("gguf", names, model=back)} == {name}
    r = api.estimate(model=str(path), cpu="genoa", phase="decode", context=256, precision="gguf")
    up = next(g for g in r.precisions["gguf"].gemms if g.name == "ffn_up")
    assert (up.n, up.k) == (2 * 512, 256) and up.w_bytes == 2 * 512 * 256 * BITS[name] / 8
    assert not [x for x in r.left_out if "unpacking" in x.what]
