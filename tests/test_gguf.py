"""GGUF: block-format recipes against the gguf package's constants, llama.cpp's Q4_K_M rule, per-row
cell recipes, a GGUF file written by the suite and read back (--model FILE.gguf, --precision gguf),
and a tiny functional llama.cpp run when llama-cpp-python is installed."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
from clitools import REPO, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.catalog import load_model, load_model_file, load_platform
from roofline.catalog.stacks import load_stack
from roofline.errors import UserError
from roofline.model.footprint import footprint
from roofline.model.workload import make_workload
from roofline.spec.gguf_mix import cell_recipes, q2_k_s_type, q4_k_m_type, q4_k_s_type, tensor_types, use_more_bits
from roofline.spec.gguf_types import BLOCKS, VEC_DOT_TYPE
from roofline.spec.model import ModelSpec
from roofline.spec.precision import RECIPES, get_recipe
from roofline.spec.stack import PathRule

gguf = pytest.importorskip("gguf")


def test_block_layouts_match_the_gguf_package():
    for b in BLOCKS.values():
        if b.engine != "llama.cpp":  # ik_llama.cpp's own types: tests/test_ik_types.py
            continue
        t = gguf.GGMLQuantizationType(b.ggml_type)
        assert t.name.lower() == b.name.lower()
        assert gguf.GGML_QUANT_SIZES[t] == (b.weights_per_block, b.bytes_per_block), b.name


@pytest.mark.parametrize("name,bits,x_bytes", [("q8_0", 8.5, 34 / 32), ("q4_0", 4.5, 34 / 32), ("q5_0", 5.5, 34 / 32),
                                               ("q4_1", 5.0, 34 / 32), ("iq4_nl", 4.5, 34 / 32),
                                               ("q2_k", 2.625, 292 / 256), ("q3_k", 3.4375, 292 / 256),
                                               ("iq4_xs", 4.25, 292 / 256),
                                               ("q4_k", 4.5, 292 / 256), ("q5_k", 5.5, 292 / 256),
                                               ("q6_k", 6.5625, 292 / 256), ("iq1_s", 1.5625, 292 / 256),
                                               ("iq1_m", 1.75, 292 / 256), ("iq2_xxs", 2.0625, 292 / 256),
                                               ("iq2_xs", 2.3125, 292 / 256), ("iq2_s", 2.5625, 292 / 256),
                                               ("iq3_xxs", 3.0625, 292 / 256), ("iq3_s", 3.4375, 292 / 256)])
def test_gguf_recipes_bytes_per_weight(name, bits, x_bytes):
    r = get_recipe(name)
    assert r.bytes_per_weight * 8 == pytest.approx(bits)
    assert r.e_x == pytest.approx(x_bytes) and r.compute_dtype == "int8" and r.quantized
    # the grid's formula (e_w N K + per-group metadata) gives the layout's bytes exactly
    from roofline.calc.gemm import weight_meta_bytes

    n, k = 4096, 14336
    total = r.e_w * n * k + float(weight_meta_bytes(n, k, r.w_scale, r.w_group_size, r.scale_bytes, r.w_zero_point))
    assert total == pytest.approx(n * k * bits / 8)


def test_existing_recipes_unchanged():
    assert (RECIPES["int8-dynamic"].e_w, RECIPES["int8-dynamic"].e_x, RECIPES["int8-dynamic"].scale_bytes) == (1, 1, 4)
    r = RECIPES["int4-weight-only"]
    assert (r.e_w, r.e_x, r.scale_bytes, r.w_group_size) == (0.5, 2, 2, 128)
    assert get_recipe("int4-weight-only", 32).w_group_size == 32


def test_block_recipes_refuse_a_group_size_and_mixes_are_not_one_recipe():
    with pytest.raises(UserError, match="block format"):
        get_recipe("q4_k", 64)
    with pytest.raises(UserError, match="per-tensor mix"):
        get_recipe("q4_k_m")
    # the estimate gives each GEMM row of a mix its own recipe: Q4_K_M's ffn_down mixes Q6_K layers in
    data = json.loads(run_cli("estimate", "--model", "llama-3.2-1b", "--cpu", "genoa", "--phase", "decode",
                              "--precision", "q4_k,q4_k_m,q6_k", "--baseline", "bf16", "--json").stdout)
    rows = {p: {g["name"]: g for g in data["precisions"][p]["gemms"]} for p in ("q4_k", "q4_k_m", "q6_k")}
    down = {p: r["ffn_down"]["w_bytes"] for p, r in rows.items()}
    assert rows["q4_k_m"]["ffn_down"]["recipe"] == "q4_k_m:ffn_down"
    assert down["q4_k"] < down["q4_k_m"] < down["q6_k"]


def test_dequantization_work_orders_the_types():
    """Q8_0 only signs its bytes; nibbles cost more; Q5's fifth bit more still (AVX2 instruction counts)."""
    ops = {n: b.dequant_ops_per_weight for n, b in BLOCKS.items()}
    assert ops["q4_K"] < ops["q8_0"] < ops["q4_0"] < ops["q5_0"]
    assert VEC_DOT_TYPE["q4_K"] == "q8_K" and VEC_DOT_TYPE["q4_0"] == "q8_0"
    # the same nibbles unsigned (q4_1: the min through q8_1's sum) skip q4_0's -8 offset and its two vpsignb; a
    # table lookup (iq4) takes two vpshufb for the offset and splits the halves with two ands, not one; q2_K's four
    # 2-bit fields per byte take a shift and an and each but the first, q3_K's third bit three more per 32 weights
    # (gguf_types' counts: 0.5 op per instruction per 32 weights)
    assert ops["q4_1"] == ops["q4_0"] - 0.5 * 3 == 1.5
    assert ops["iq4_nl"] == ops["iq4_xs"] == ops["q4_0"] + 0.5 * 2 == 4.0
    assert ops["q2_K"] == 0.5 * 7 / 4 and ops["q3_K"] == 0.5 * (7 + 12) / 4
    assert ops["q2_K"] < ops["q3_K"] < ops["q4_0"] < ops["iq4_xs"]
    assert {VEC_DOT_TYPE[t] for t in ("q2_K", "q3_K", "iq4_xs")} == {"q8_K"}
    assert {VEC_DOT_TYPE[t] for t in ("q4_1", "iq4_nl")} == {"q8_0"}


# ------------------------------------------------------------------ Q4_K_M


def test_use_more_bits_matches_llama_cpp():
    # 32 layers: the first 4, the last 4, and every third from layer 6
    more = [i for i in range(32) if use_more_bits(i, 32)]
    assert more == [0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31]


def test_q4_k_m_rule():
    llama = load_model("llama-3.1-8b")
    assert q4_k_m_type("output", None, 4096, llama) == "q6_K"
    assert q4_k_m_type("token_embd", None, 4096, llama) == "q4_K"
    assert q4_k_m_type("attn_v", 0, 4096, llama) == "q6_K" and q4_k_m_type("attn_v", 4, 4096, llama) == "q4_K"
    assert q4_k_m_type("ffn_down", 6, 14336, llama) == "q6_K" and q4_k_m_type("attn_q", 0, 4096, llama) == "q4_K"
    tied = load_model("qwen3-0.6b")
    assert q4_k_m_type("token_embd", None, 1024, tied) == "q6_K"
    mixtral = load_model("mixtral-8x7b")  # 8 experts: attn_v and attn_k in Q8_0, attn_output in Q5_K
    assert {q4_k_m_type(r, 5, 4096, mixtral) for r in ("attn_v", "attn_k")} == {"q8_0"}
    assert q4_k_m_type("attn_output", 5, 4096, mixtral) == "q5_K"
    assert q4_k_m_type("ffn_gate_inp", 5, 4096, mixtral) == "f32"
    qwen_moe = load_model("qwen1.5-moe-a2.7b")  # experts of 1408: not a multiple of 256, fall back
    assert q4_k_m_type("ffn_down_exps", 0, 1408, qwen_moe) == "q8_0"
    assert q4_k_m_type("ffn_down_exps", 4, 1408, qwen_moe) == "q5_0"


def test_q4_k_s_and_q2_k_s_rules():
    """llama-quant.cpp's Q4_K_S: Q5_K in the first 4 attn_v and the first eighth of ffn_down; Q2_K_S: Q4_K attn_v
    (4 or more query heads per KV head) and the first eighth of ffn_down; both a Q6_K output."""
    llama = load_model("llama-3.1-8b")  # 32 layers, 32 query heads over 8 KV heads
    assert [q4_k_s_type("attn_v", i, 4096, llama) for i in (0, 3, 4, 31)] == ["q5_K", "q5_K", "q4_K", "q4_K"]
    assert [q4_k_s_type("ffn_down", i, 14336, llama) for i in (0, 3, 4)] == ["q5_K", "q5_K", "q4_K"]
    assert [q2_k_s_type("ffn_down", i, 14336, llama) for i in (0, 3, 4)] == ["q4_K", "q4_K", "q2_K"]
    assert q2_k_s_type("attn_v", 17, 4096, llama) == "q4_K" and q2_k_s_type("attn_q", 0, 4096, llama) == "q2_K"
    assert q4_k_s_type("output", None, 4096, llama) == q2_k_s_type("output", None, 4096, llama) == "q6_K"
    big = load_model("llama-3.1-70b")  # llama.cpp's 70B type: every attn_v Q5_K
    assert {q4_k_s_type("attn_v", i, 8192, big) for i in range(80)} == {q2_k_s_type("attn_v", 9, 8192, big)} == {"q5_K"}
    mixtral = load_model("mixtral-8x7b")  # 8 experts: attn_v and attn_k Q8_0; Q4_K_S's attn_output Q5_K, Q2_K_S's not
    assert {f(r, 5, 4096, mixtral) for f in (q4_k_s_type, q2_k_s_type) for r in ("attn_v", "attn_k")} == {"q8_0"}
    assert (q4_k_s_type("attn_output", 5, 4096, mixtral), q2_k_s_type("attn_output", 5, 4096, mixtral)) == ("q5_K", "q2_K")
    qwen_moe = load_model("qwen1.5-moe-a2.7b")  # experts of 1408 (not a multiple of 256): Q2_K falls back to Q4_0
    assert q2_k_s_type("ffn_up_exps", 4, 2048, qwen_moe) == "q2_K" and q2_k_s_type("ffn_down_exps", 9, 1408, qwen_moe) == "q4_0"


@pytest.mark.parametrize("precision,gib", [("q4_k_s", 4.36), ("q2_k_s", 2.78), ("iq4_xs", None)])
def test_mix_sizes_of_llama_3_1_8b_are_the_files(precision, gib):
    """Every tensor of Llama-3.1-8B under each mix's rule weighs what llama-bench states for the file of that
    name (ik_llama.cpp discussion 164's table, llama.cpp build 4384: 4.36 and 2.78 GiB); IQ4_XS priced as one
    type is lighter than that table's IQ4_XS file (4.13 GiB), whose mix raises some tensors."""
    total = sum(t.bytes for t in tensor_types(precision, load_model("llama-3.1-8b"))) / 2**30
    if gib is None:
        assert 3.9 < total < 4.13
    else:
        assert round(total, 2) == gib


def test_q4_k_m_footprint_of_llama_3_1_8b():
    r = footprint(load_model("llama-3.1-8b"), "q4_k_m")
    assert r.params == 8_030_261_248
    # about 4.9 bits per weight overall (Q4_K with Q6_K for output, half the ffn_down and attn_v)
    assert 4.8 < 8 * r.total_bytes / r.params < 5.0
    lm = next(g for g in r.groups if g.name == "lm_head")
    assert lm.bytes == pytest.approx(lm.params * 210 / 256)


@pytest.mark.parametrize("name", ["llama-3.1-8b", "mixtral-8x7b", "qwen1.5-moe-a2.7b", "qwen3-0.6b"])
def test_cell_recipes_give_exact_weight_bytes_per_row(name):
    """Summed over the GEMM rows (all layers, prefill: every expert), the row recipes' bytes equal the
    tensors' own: the average per row is exact for the memory time."""
    m = load_model(name)
    gemms, _ = make_workload(m, "prefill", 1, 4096 if m.max_position_embeddings >= 4096 else 512, None).gemms()
    cells = cell_recipes("q4_k_m", gemms.names, model=m)
    row_bytes = sum(float(c) * r.bytes_per_weight * n * k for c, r, n, k in zip(gemms.count, cells, gemms.n, gemms.k))
    tensors = [t for t in tensor_types("q4_k_m", m) if t.role != "token_embd" or m.tie_word_embeddings]
    assert row_bytes == pytest.approx(sum(t.bytes for t in tensors), rel=1e-3)
    assert cell_recipes("q4_k", gemms.names, model=m) is None


def test_cell_recipes_lm_head_flag():
    m = load_model("llama-3.2-1b")
    names = make_workload(m, "decode", 1, 1, 16).gemms()[0].names
    q = cell_recipes("q4_k_m", names, model=m)
    f = cell_recipes("q4_k_m", names, model=m, quantize_lm_head=False)
    assert q[-1].bytes_per_weight == pytest.approx(210 / 256) and f[-1].e_w == 2 and f[-1].name == "q4_k_m:lm_head"


def test_an_estimate_of_a_mix_streams_the_lm_head_its_quantizer_writes():
    """llama-quantize writes a Q4_K_M file's output.weight in Q6_K: an estimate in q4_k_m streams it so without
    --quantize-lm-head (128,256 x 4,096 weights at 210 bytes per 256, by hand), as the records of such files are
    priced, and says nothing of an lm_head kept in a float type."""
    import roofline

    r = roofline.estimate("llama-3.1-8b", "genoa", precision="q4_k_m", phase="decode", batch=1)
    p = r.precisions["q4_k_m"]
    lm = next(g for g in p.gemms if g.name == "lm_head")
    assert lm.w_bytes == pytest.approx(128256 * 4096 * 210 / 256)
    assert not any("lm_head kept" in n for n in p.notes)
    flagged = roofline.estimate("llama-3.1-8b", "genoa", precision="q4_k_m", phase="decode", batch=1,
                                quantize_lm_head=True).precisions["q4_k_m"]
    assert flagged.step_time_s == pytest.approx(p.step_time_s)


# ------------------------------------------------------------------ a GGUF file written and read back


def _tiny(**kw) -> ModelSpec:
    base = dict(name="tiny", source="test", family="decoder", hidden_size=256, intermediate_size=512,
                num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2, vocab_size=512,
                max_position_embeddings=512, hidden_act="silu", gated_mlp=True, tie_word_embeddings=False,
                attention_bias=False, mlp_bias=False)
    base.update(kw)
    return ModelSpec(**base)


@pytest.mark.parametrize("precision", [*(n for n, r in RECIPES.items() if r.block is not None
                                         and r.block.engine == "llama.cpp"), "q4_k_m"])
def test_written_gguf_reads_back_with_its_types_and_bytes(tmp_path, precision):
    """Every single-type precision `validate --engine llama.cpp` takes (each recipe with a block), and a mix."""
    from roofline.validation.gguf_writer import write_random_gguf

    m = _tiny()
    w = write_random_gguf(tmp_path / "m.gguf", m, precision)
    back = load_model_file((tmp_path / "m.gguf").resolve())
    for f in ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "kv_heads", "head_size",
              "vocab_size", "tie_word_embeddings", "qk_norm", "attention_bias", "gated_mlp"):
        assert getattr(back, f) == getattr(m, f), f
    stored = {t.name: t for t in back.gguf_tensors}
    for t in w.tensors:
        s = stored[t.name]
        assert s.type == t.type and s.elements == t.elements
        assert s.nbytes == t.bytes == t.elements * BLOCKS[t.type].bytes_per_weight
    # norms are F32 and the file holds nothing but the listed tensors plus the norms
    assert {t.type for t in back.gguf_tensors if t.name.endswith("_norm.weight")} == {"f32"}
    assert len(back.gguf_tensors) == len(w.tensors) + 2 * m.num_hidden_layers + 1
    # the file's own types are its precision: the footprint is the file's tensor bytes
    fp = footprint(back, "gguf")
    assert fp.total_bytes == sum(t.nbytes for t in back.gguf_tensors)
    assert fp.total_bytes < w.nbytes < fp.total_bytes + 64 * 1024  # plus the header and alignment
    # and the per-row recipes reproduce the same rule's
    names = make_workload(back, "decode", 1, 1, 16).gemms()[0].names
    from_file = cell_recipes("gguf", names, model=back)
    if precision == "q4_k_m":
        by_rule = cell_recipes("q4_k_m", names, model=m)
        assert [r.bytes_per_weight for r in from_file] == pytest.approx([r.bytes_per_weight for r in by_rule])
    else:
        assert {r.bytes_per_weight for r in from_file} == {get_recipe(precision).bytes_per_weight}


def test_written_moe_gguf_reads_back(tmp_path):
    from roofline.validation.gguf_writer import write_random_gguf

    m = _tiny(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=256)
    write_random_gguf(tmp_path / "moe.gguf", m, "q8_0")
    back = load_model_file((tmp_path / "moe.gguf").resolve())
    assert (back.num_experts, back.num_experts_per_tok, back.expert_intermediate) == (4, 2, 256)
    exps = next(t for t in back.gguf_tensors if t.name == "blk.0.ffn_down_exps.weight")
    assert exps.shape == (256, 256, 4) and exps.type == "q8_0"
    assert next(t for t in back.gguf_tensors if t.name == "blk.0.ffn_gate_inp.weight").type == "f32"


def test_writer_refuses_what_llama_arch_cannot_hold():
    from roofline.validation.gguf_writer import check_writable

    with pytest.raises(UserError, match="q/k norms"):
        check_writable(load_model("qwen3-0.6b"))


def test_gguf_model_on_the_cli(tmp_path):
    from roofline.validation.gguf_writer import write_random_gguf

    path = tmp_path / "tiny.gguf"
    write_random_gguf(path, _tiny(), "q4_k_m")
    proc = run_cli("estimate", "--model", str(path), "--cpu", "genoa", "--phase", "decode", "--context", "256",
                   "--precision", "q4_k", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["workload"]["layers"] == 4
    fp = json.loads(run_cli("footprint", "--model", str(path), "--precision", "gguf", "--json").stdout)
    assert "as stored in the file" in fp["policy"] and "q6_K" in fp["policy"]
    bad = run_cli("footprint", "--model", "llama-3.2-1b", "--precision", "gguf")
    assert bad.returncode == 2 and "FILE.gguf" in bad.stderr
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a gguf file at all")
    proc = run_cli("footprint", "--model", str(junk), "--precision", "gguf")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "GGUF" in proc.stderr


def test_core_never_imports_llama_cpp():
    import ast

    for path in (REPO / "roofline").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            assert not any(n.split(".")[0] == "llama_cpp" for n in names), path


# ------------------------------------------------------------------ llama.cpp itself (the llamacpp extra)


def test_tiny_llama_cpp_run_produces_rates_and_fractions(tmp_path):
    pytest.importorskip("llama_cpp")
    from roofline.validation.llamacpp import LlamaCppOptions, run_llamacpp

    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(dict(model_type="llama", hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, vocab_size=512,
                                   max_position_embeddings=256, tie_word_embeddings=True)))
    probe = str(REPO / "validation" / "results" / "zen4-2vcpu-probe.toml")
    r = run_llamacpp(LlamaCppOptions(model=str(cfg), cpu=probe, precisions=["q8_0", "q4_k"], threads=1, pp=16, tg=4,
                                     reps=1, gguf_dir=str(tmp_path)))
    assert [x.precision for x in r.runs] == ["q8_0", "q4_k"] and not list(tmp_path.glob("*.gguf"))
    for run in r.runs:
        for rate in (run.pp, run.tg):
            assert rate.tokens_per_s > 0 and rate.ceiling_tokens_per_s > 0
            assert np.isfinite(rate.achieved_fraction) and rate.achieved_fraction > 0
        # tied embeddings: token_embd (read by the lm_head too) and 7 matrices per layer, all in the one type
        assert run.ggml_types == {run.precision.replace("_k", "_K"): 1 + 2 * 7}
    assert r.comparisons[0].baseline == "q8_0" and r.comparisons[0].bytes_ratio == pytest.approx(8.5 / 4.5, rel=0.05)
    from roofline.cli.emit import json_text

    data = json.loads(json_text(r))
    import jsonschema

    from roofline.schema import schema_path

    jsonschema.validate(data, json.loads(schema_path("validate-llamacpp").read_text()))


def test_llama_cpp_runs_the_i_quant_files_the_writer_makes(tmp_path):
    """Random i-quant blocks are valid ones (any grid index, sign and block scale is), their fp16 scales set as each
    type stores them (iq1_m's spread over the top nibbles of its scales): llama.cpp loads and runs them, at finite
    rates, and the fp16 scale of an iq1_m block reads back as written."""
    pytest.importorskip("llama_cpp")
    from roofline.validation.gguf_writer import write_random_gguf
    from roofline.validation.llamacpp import LlamaCppOptions, run_llamacpp

    w = write_random_gguf(tmp_path / "m.gguf", _tiny(), "iq1_m")
    reader = gguf.GGUFReader(str(tmp_path / "m.gguf"))
    t = next(x for x in reader.tensors if x.name == "blk.0.attn_q.weight")
    sc = np.asarray(t.data).reshape(-1, 56)[:, 48:56].copy().view("<u2")
    bits = (sc[:, 0] >> 12) | ((sc[:, 1] >> 8) & 0x00F0) | ((sc[:, 2] >> 4) & 0x0F00) | (sc[:, 3] & 0xF000)
    assert np.all(bits.astype(np.uint16).view(np.float16) == np.float16(1 / 6 / np.sqrt(256)))
    assert w.nbytes > 0
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(dict(model_type="llama", hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, vocab_size=512,
                                   max_position_embeddings=256, tie_word_embeddings=True)))
    probe = str(REPO / "validation" / "results" / "zen4-2vcpu-probe.toml")
    r = run_llamacpp(LlamaCppOptions(model=str(cfg), cpu=probe, precisions=["iq1_m", "iq2_xxs", "iq3_s"], threads=1,
                                     pp=16, tg=4, reps=1, gguf_dir=str(tmp_path / "runs")))
    for run in r.runs:
        for rate in (run.pp, run.tg):
            assert np.isfinite(rate.tokens_per_s) and rate.tokens_per_s > 0, run.precision


def test_llama_cpp_engine_flags_are_checked():
    proc = run_cli("validate", "--model", "llama-3.2-1b", "--pp", "8")
    assert proc.returncode == 2 and "--engine llama.cpp" in proc.stderr
    proc = run_cli("validate", "--engine", "llama.cpp", "--model", "qwen3-0.6b", "--precision", "int8-dynamic",
                   "--cpu", str(REPO / "validation" / "results" / "zen4-2vcpu-probe.toml"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1


# ------------------------------------------------------------------ hostile headers


from gguf_files import write_gguf  # noqa: E402

pytestmark = pytest.mark.slow  # the file takes seconds: out of the fast stage (pytest -m "not slow")


@pytest.mark.parametrize("metadata,fragment", [
    ({"llama.embedding_length": "4096"}, "llama.embedding_length: must be a whole number, got '4096'"),
    ({"llama.block_count": 10 ** 9}, "llama.block_count: 1,000,000,000 layers is outside the possible range"),
    ({"llama.expert_count": 10 ** 12, "llama.expert_used_count": 2}, "llama.expert_count: 1,000,000,000,000 experts"),
    ({"llama.feed_forward_length": 1.5}, "llama.feed_forward_length: must be a whole number"),
    ({"llama.attention.head_count_kv": True}, "llama.attention.head_count_kv: must be a whole number"),
    ({"llama.context_length": -5}, "llama.context_length: must be a positive whole number"),
    ({"llama.attention.head_count": [4]}, "1 per-layer values for 2 layers"),
])
def test_header_values_are_typed_and_bounded(tmp_path, metadata, fragment):
    path = write_gguf(tmp_path / "m.gguf", metadata=metadata)
    proc = run_cli("models", "show", str(path), timeout=30)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and fragment in proc.stderr, proc.stderr


@pytest.mark.parametrize("metadata,fragment", [
    ({"llama.block_count": 3}, "llama.block_count: 3, but the file stores tensors of 2 blocks"),
    ({"llama.embedding_length": 128}, "llama.embedding_length: 128, but the file's token_embd.weight stores 64 rows"),
    ({"llama.feed_forward_length": 256}, "blk.0.ffn_up.weight stores 128 MLP rows"),
    ({"llama.attention.head_count": 8}, "llama.attention.head_count"),
])
def test_header_fields_must_agree_with_the_stored_tensors(tmp_path, metadata, fragment):
    """The tensors are the weights: a header that says otherwise is refused, naming the key and the tensor."""
    path = write_gguf(tmp_path / "m.gguf", metadata=metadata)
    proc = run_cli("estimate", "--model", str(path), "--cpu", "icx", "--phase", "decode", timeout=30)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and fragment in proc.stderr, proc.stderr


def test_a_truncated_or_foreign_file_is_one_line(tmp_path):
    good = write_gguf(tmp_path / "m.gguf")
    raw = good.read_bytes()
    for name, data in (("cut.gguf", raw[:200]), ("data-cut.gguf", raw[:-64]), ("magic.gguf", b"GGUX" + raw[4:]),
                       ("version.gguf", raw[:4] + (9).to_bytes(4, "little") + raw[8:])):
        (tmp_path / name).write_bytes(data)
        proc = run_cli("models", "show", str(tmp_path / name), timeout=30)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, (name, proc.stderr)


def test_a_large_vocabulary_is_counted_fast_and_the_header_is_cached(tmp_path, monkeypatch):
    """A 262,144-token vocabulary (Gemma 3's size): gguf's GGUFReader decodes every string (seconds, hundreds
    of MB); this reader steps over them, and a second read comes from the spec cache without opening the file."""
    import time

    from roofline.catalog import gguf_file

    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ROOFLINE_NO_CACHE", raising=False)
    path = write_gguf(tmp_path / "big.gguf", tokens=262_144)
    start = time.perf_counter()
    m = gguf_file.load_gguf_model(path.resolve())
    assert time.perf_counter() - start < 5
    assert m.vocab_size == 262_144
    monkeypatch.setattr(gguf_file, "read_gguf_fields", lambda p: pytest.fail("read again"))
    assert gguf_file.load_gguf_model(path.resolve()) == m
    path.touch()  # a changed file (its modification time) is read again
    with pytest.raises(pytest.fail.Exception):
        gguf_file.load_gguf_model(path.resolve())


def test_a_gguf_of_the_k_and_i_quants_is_priced_and_an_unknown_type_said_left_out(tmp_path, monkeypatch):
    """Files of q3_K, iq4_xs and q5_K are priced as stored: their rows' weight bytes are the block layouts'
    (110, 136 and 176 bytes per 256 weights), and the llama.cpp profile uses its own value for a type its
    records ran and says which value it used for one they did not. A type whose layout the tool does not know
    is priced at its stored bytes, and the estimate says that its unpacking is left out."""
    import dataclasses

    import roofline.validation.gguf_writer as writer
    from roofline.validation.gguf_writer import write_random_gguf

    for precision, block in (("q3_k", "q3_K"), ("iq4_xs", "iq4_xs"), ("q5_k", "q5_K")):
        path = tmp_path / f"{precision}.gguf"
        write_random_gguf(path, _tiny(), precision)
        for cpu, core in (("genoa", "znver4"), ("milan", "znver3")):
            proc = run_cli("estimate", "--model", str(path), "--cpu", cpu, "--phase", "decode", "--context", "256",
                           "--precision", "gguf", "--stack", "llama.cpp", "--json")
            assert proc.returncode == 0, proc.stderr
            data = json.loads(proc.stdout)
            rows = {g["name"]: g for g in data["precisions"]["gguf"]["gemms"]}
            b = BLOCKS[block]
            up = rows["ffn_up"]
            assert up["w_bytes"] == pytest.approx(up["n"] * up["k"] * b.bytes_per_block / b.weights_per_block)
            # its rows are priced by the kernel table's cycles for the CPU's core, which the inputs list
            (row,) = [i for i in data["inputs"] if i["what"] == f"llama.cpp.kernels.{core}.{block}"]
            assert row["kind"] == "derived" and "llvm-mca" in row["source"] and row["value"].startswith("vec_dot ")
            text = run_cli("estimate", "--model", str(path), "--cpu", cpu, "--phase", "decode", "--context", "256",
                           "--precision", "gguf", "--stack", "llama.cpp").stdout
            assert f"gguf on {block}" not in text  # its band is the kernel class's, which records ran
    # the writer taught a layout the tool does not price (TQ2_0, llama.cpp's ternary type: 256 weights in 66 bytes)
    # writes a valid file
    fake = dataclasses.replace(BLOCKS["q4_K"], name="tq2_0", ggml_type=35, bytes_per_block=66,
                               quant_bytes_per_block=64)
    monkeypatch.setitem(writer.BLOCKS, "tq2_0", fake)
    monkeypatch.setitem(writer._SCALES, "tq2_0", ((0, 1e-3),))
    real = writer.tensor_types
    monkeypatch.setattr(writer, "tensor_types", lambda precision, model: [
        dataclasses.replace(t, type="tq2_0") for t in real(precision, model)])
    path = tmp_path / "tq2.gguf"
    write_random_gguf(path, _tiny(), "q4_k")
    proc = run_cli("estimate", "--model", str(path), "--cpu", "genoa", "--phase", "decode", "--context", "256",
                   "--precision", "gguf", "--json", process=True)  # a process: this one's writer tables are patched
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    (unknown,) = [x for x in data["left_out"] if "tq2_0" in x["what"]]
    assert "unpacking" in unknown["what"] and "lower bound" in unknown["why"]
    up = {g["name"]: g for g in data["precisions"]["gguf"]["gemms"]}["ffn_up"]
    assert up["w_bytes"] == pytest.approx(up["n"] * up["k"] * 66 / 256)  # its bytes as stored
    # the same file at a precision the tool prices leaves nothing of the kind out
    proc = run_cli("estimate", "--model", str(path), "--cpu", "genoa", "--phase", "decode", "--context", "256",
                   "--precision", "q4_k", "--json")
    assert not [x for x in json.loads(proc.stdout)["left_out"] if "tq2_0" in x["what"]]



TYPE_RULES = REPO / "tests" / "fixtures" / "stacks" / "llama.cpp-type-rules.toml"
"""a profile that prices llama.cpp's GGUF kernels with type rules rather than a kernel table (the file says)"""


def _type_rules():
    return load_stack(str(TYPE_RULES))


@functools.lru_cache(maxsize=None)
def _q41_prefill():
    """llama-3.2-1b's 512-token prefill in q4_1 and q4_0 on the Zen 5 guest, at the ceiling (no profile)."""
    from estimates import evaluate

    from roofline.catalog import load_platform

    return evaluate(load_platform("zen5-2vcpu"), load_model("llama-3.2-1b"), precisions=["q4_1", "q4_0"],
                    phase="prefill", seq_len=512)


def test_a_dot_product_that_adds_each_block_into_one_register_runs_at_its_chains_rate():
    """llama.cpp's q4_1 dot product adds each 32-weight block into one accumulator: one block per FMA latency,
    2 x 32 ops per 4 cycles = 16 ops per cycle per core (the profile's path rule naming q4_1). On the Zen 5 guest
    (int8-vnni, 256 ops per cycle at 3.455 GHz, 2 cores) its multiply-accumulates reach at most 16/256 of the path's
    peak whatever their efficiency. By hand, at every efficiency 1, each q4_1 row of a 512-token prefill takes
    ``max(t_compute, 2 M N K / (2 x 3.455e9 x 16), t_memory)``; q4_0 (repacked: no such rule) is not limited,
    and neither is q4_1 under a profile without the rule."""
    import dataclasses

    from roofline.model.efficiency import chain_limit
    from roofline.model.realistic import Efficiency, realistic_times

    llama = _type_rules()
    (rule,) = [r for r in llama.path_rules if "q4_1" in r.types and r.chain_ops_per_cycle]
    assert rule.chain_ops_per_cycle == 2 * 32 / 4 and "q5_1" in rule.types
    without = dataclasses.replace(llama, path_rules=tuple(r for r in llama.path_rules if not r.types))
    ev = _q41_prefill()
    by_name = {e.name: e for e in ev.evaluated}
    q41, q40 = by_name["q4_1"], by_name["q4_0"]
    zen5 = ev.res.platform
    assert zen5.compute[ev.res.path("int8").name].ops_per_cycle.value == 256
    assert zen5.frequency_ghz["avx512"].value == 3.455 and ev.res.layout.active_cores == 2
    limit, how = chain_limit(ev.res, q41.recipe, llama)
    assert limit == 16 / 256 and "16 ops per cycle" in how
    assert chain_limit(ev.res, q40.recipe, llama) == (1.0, "") == chain_limit(ev.res, q41.recipe, without)
    parts, g = q41.parts, q41.step.gemms
    flops = np.broadcast_to(g.flops, parts.t_compute.shape).reshape(-1)
    by_hand = parts.count * np.maximum.reduce([parts.t_compute, flops / (2 * 3.455e9 * 16), parts.t_memory])
    limited = realistic_times(parts, Efficiency(limit=16 / 256).rows(parts))
    assert float(limited.gemm_s[0]) == pytest.approx(float(by_hand.sum()), rel=1e-9)
    free = realistic_times(parts, Efficiency().rows(parts))
    assert float(free.gemm_s[0]) == pytest.approx(float((parts.count * np.maximum(parts.t_compute,
                                                                                  parts.t_memory)).sum()))
    assert float(limited.gemm_s[0]) > 10 * float(free.gemm_s[0])  # the prefill's GEMMs run at the chain's rate


def test_a_kernel_that_unpacks_per_row_repeats_the_unpacking_for_each_activation_row():
    """Before llama.cpp's tiled matmul no GEMM kernel took q6_K: a prefill ran ggml_vec_dot_q6_K_q8_K per activation
    row, unpacking every block again for each (the profile's rule dated 2026-09-11). A record dated before it gets
    M = 512 unpackings per row, one after it or an estimate (today's build) one. By hand, at every efficiency 1,
    each row of the Ryzen 7950X's 512-token Llama-3.1-8B prefill takes ``max(t_compute + 511 d N K / P_int,
    t_memory)``, with q6_K's d = 4.25 / 2 ops per weight and the integer vector pipes' peak P_int (a profile of
    type rules: today's llama.cpp profile prices kernels from its kernel table instead)."""
    from estimates import evaluate

    from roofline.catalog import load_platform
    from roofline.model.efficiency import unpack_rows
    from roofline.model.realistic import Efficiency, realistic_times

    llama = _type_rules()
    (rule,) = [r for r in llama.path_rules if "q6_K" in r.types]
    assert rule.unpack_per_row and rule.before == "2026-09-11" and {"q3_K", "q5_K", "iq4_xs"} <= set(rule.types)
    ev = evaluate(load_platform("ryzen-7950x"), load_model("llama-3.1-8b"), precisions=["q6_k", "q4_0"],
                  phase="prefill", seq_len=512)
    by_name = {e.name: e for e in ev.evaluated}
    q6, q40 = by_name["q6_k"], by_name["q4_0"]
    m = np.asarray(ev.gemms.m, dtype=float)
    assert set(m[:-1]) == {512.0}
    assert np.array_equal(unpack_rows(ev.res, q6.recipe, llama, m, "2024-12-24")[0], np.maximum(m, 1))
    for date in (None, "2026-12-02"):
        assert np.array_equal(unpack_rows(ev.res, q6.recipe, llama, m, date)[0], np.ones_like(m))
    assert np.array_equal(unpack_rows(ev.res, q40.recipe, llama, m, "2024-12-24")[0], np.ones_like(m))
    z = _q41_prefill()  # q4_1's only x86 kernel is its vec_dot: an undated rule, an estimate's too
    q41 = {e.name: e for e in z.evaluated}["q4_1"]
    zm = np.asarray(z.gemms.m, dtype=float)
    assert np.array_equal(unpack_rows(z.res, q41.recipe, llama, zm, None)[0], np.maximum(zm, 1))
    parts = q6.parts
    d = BLOCKS["q6_K"].dequant_ops_per_weight
    assert d == 4.25 / 2
    per_weight = np.array([c.dequant_ops_per_weight for c in q6.cells])  # the lm_head in q6_K too (llama-quantize's)
    assert list(per_weight) == [d] * 5
    # a block's unpacking runs on the integer vector pipes, beside the multiply-accumulates (P_int)
    assert parts.t_unpack == pytest.approx(per_weight * ev.gemms.n * ev.gemms.k / float(ev.res.int_alu_peak), rel=1e-12)
    by_hand = parts.count * np.maximum(parts.t_compute + (m - 1) * parts.t_unpack, parts.t_memory)
    again = realistic_times(parts, Efficiency(unpack=np.maximum(m, 1)).rows(parts))
    assert float(again.gemm_s[0]) == pytest.approx(float(by_hand.sum()), rel=1e-9)
    once = realistic_times(parts, Efficiency().rows(parts))
    assert float(again.gemm_s[0]) > 3 * float(once.gemm_s[0])  # q6_K's unpacking outweighs its INT8 MACs


def test_the_records_build_decides_whether_a_type_is_unpacked_per_row():
    """The fit's figures take the rule from the record's date: the Ryzen 7950X's 2024 q6_K prefill unpacks per
    row, the Zen 5 guest's of 2026-12-02 (the tiled matmul) once; neither's decode (one row) repeats anything."""
    from roofline.catalog.records import load_records
    from roofline.fidelity.figures import figures

    rules = _type_rules().path_rules
    corpus = REPO / "validation" / "records"
    old, new = load_records([str(corpus / "corpus" / "llamacpp-d164-r7950x-llama31-8b-q6k-t16.toml"),
                             str(corpus / "zen5-2vcpu-llamacpp-llama-3.2-1b-types2-2026-12-02.toml")])
    (pp_old,) = figures(old, rules)
    assert pp_old.phase.value == "prefill" and set(pp_old.steps[0].unpack[:-1]) == {512.0}
    by_name = {(f.precision, f.phase.value): f for f in figures(new, rules)}
    assert set(by_name["q6_k", "prefill"].steps[0].unpack) == {1.0}
    assert set(by_name["q6_k", "decode"].steps[0].unpack) == {1.0}


@settings(max_examples=60, deadline=None)
@given(limit=st.floats(1e-3, 1.0), eta=st.floats(1e-3, 1.0), memory=st.floats(1e-2, 1.0))
def test_a_rate_limit_never_makes_a_step_faster(limit, eta, memory):
    """Whatever the efficiencies, a row's rate limit adds time or none: the realistic GEMM time with a limit is at
    least the one without, and at least every row's multiply-accumulates over the limit."""
    from roofline.model.realistic import Efficiency, realistic_times

    parts = {e.name: e for e in _q41_prefill().evaluated}["q4_1"].parts
    t_mac = parts.t_compute - parts.t_extra
    base = Efficiency(gemm=eta, memory=memory)
    with_limit = float(realistic_times(parts, Efficiency(gemm=eta, memory=memory, limit=limit).rows(parts)).gemm_s[0])
    assert with_limit >= float(realistic_times(parts, base.rows(parts)).gemm_s[0]) * (1 - 1e-12)
    assert with_limit >= float((parts.count * t_mac).sum()) / limit * (1 - 1e-12)


@pytest.mark.parametrize("fields, fragment", [
    ({"types": ["q4_1"], "isa_class": "avx2"}, "caps their rate"),
    ({"types": ["q4_1"], "max_ops_per_cycle": 64.0}, "caps their rate"),
    ({"types": ["q4_1"], "chain_ops_per_cycle": -16.0}, "chain_ops_per_cycle"),
    ({"types": ["q4_1"], "chain_ops_per_cycle": float("nan")}, "chain_ops_per_cycle"),
    ({"max_ops_per_cycle": 1e300}, "max_ops_per_cycle"),
    ({"unpack_per_row": True}, "unpack_per_row"),
    ({"types": ["q6_K"], "unpack_per_row": True, "before": "2026/09/11"}, "before"),
])
def test_a_path_rule_naming_types_is_checked(tmp_path, fields, fragment):
    """A profile file whose rule mixes a type's rate limit with a path, or gives a rate that is not a positive
    finite number, is refused in one line naming the file and the field (exit 2)."""
    text = (REPO / "platforms" / "stacks" / "llama.cpp.toml").read_text()
    head, tail = text.split("[[path_rules]]", 1)[0], "[accuracy]" + text.split("[accuracy]", 1)[1]
    value = lambda v: "nan" if v != v else json.dumps(v)  # noqa: E731  (TOML spells NaN nan)
    rule = "\n".join(f"{k} = {value(v)}" for k, v in {"vendor": "", "dtype": "int8", **fields}.items())
    bad = tmp_path / "bad.toml"
    bad.write_text(f"{head}[[path_rules]]\n{rule}\n\n{tail}")
    proc = run_cli("estimate", "--model", "llama-3.2-1b", "--cpu", "zen5-2vcpu", "--precision", "q4_1",
                   "--stack", str(bad))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "bad.toml" in proc.stderr and fragment in proc.stderr


@pytest.mark.parametrize("phase, kw", [("decode", {"context": 64}), ("prefill", {"seq_len": 8}),
                                       ("prefill", {"seq_len": 512})])
def test_a_one_row_call_adds_its_weight_stream_and_its_compute(phase, kw):
    """With a one-row serial share s (a stack's path rule: its GEMVs do not overlap their weight stream and their
    compute) a call of M rows takes ``max(C, t_m, max(C1, t_w) + s min(C1, t_w))``, by hand: C its compute and
    t_m its memory time at their efficiencies, t_w the weights' part of t_m, C1 the same call's arithmetic with one
    row at the ceiling's rates (its multiply-accumulates and per-output work over M, its unpacking once: the ALU
    work no load hides, whatever the kernel's efficiency). At one row, where the weights' stream outweighs it, that
    is t_w + C1; s = 0 is the larger alone; the time never shrinks as M grows."""
    from estimates import evaluate

    from roofline.model.realistic import Efficiency, realistic_times

    ev = evaluate(load_platform("zen3-2vcpu"), load_model("llama-3.2-1b"), precisions=["q8_0"], phase=phase, **kw)
    parts = ev.evaluated[0].parts
    eta, mem = 0.5, 0.7
    t_c, t_m, t_w = parts.t_compute / eta, parts.t_memory / mem, parts.t_weights / mem
    m = np.maximum(parts.rows, 1.0)
    t_c1 = (parts.t_compute - parts.t_unpack) / m + parts.t_unpack  # at the ceiling's rates
    for s in (0.0, 0.5, 1.0):
        got = realistic_times(parts, Efficiency(gemm=eta, memory=mem, serial=s).rows(parts))
        rows = parts.count * np.maximum(np.maximum(t_c, t_m), np.maximum(t_c1, t_w) + s * np.minimum(t_c1, t_w))
        assert float(got.gemm_s[0]) == pytest.approx(float(rows.sum()), rel=1e-12)
        assert float(np.sum(got.stream_s)) == pytest.approx(float((rows - parts.count * np.maximum(t_c, t_m)).sum()),
                                                            rel=1e-9, abs=1e-15)
    if phase == "decode":  # one row, memory-bound on this guest: the stream and the arithmetic add
        assert set(parts.rows) == {1.0} and np.all(t_w > t_c)
        assert float(realistic_times(parts, Efficiency(gemm=eta, memory=mem, serial=1.0).rows(parts)).gemm_s[0]) \
            == pytest.approx(float((parts.count * np.maximum(parts.t_compute + t_w, t_m)).sum()), rel=1e-12)


@pytest.mark.parametrize("fields, fragment", [
    ({"one_row_serial": 1.5}, "one_row_serial"), ({"one_row_serial": float("nan")}, "one_row_serial"),
    ({"one_row_serial": 1.0, "types": ("q4_0",)}, "a rule of its own"),
    ({"one_row_serial": 1.0, "max_ops_per_cycle": 8.0}, "a rule of its own"),
])
def test_a_one_row_serial_rule_is_checked(fields, fragment):
    with pytest.raises(ValueError, match=fragment):
        PathRule(vendor="", dtype="", evidence="-", **fields)


def test_a_serial_rule_is_no_dtypes_path_rule():
    """A rule for every dtype (empty) that gives the one-row serial share is found by ``serial_rule`` for any dtype
    and never taken as a dtype's path rule."""
    profile = _type_rules()
    assert profile.serial_rule("AuthenticAMD", "int8").one_row_serial == 1.0
    assert profile.serial_rule("GenuineIntel", "bf16").one_row_serial == 1.0
    assert profile.path_rule("GenuineIntel", "bf16") is None or profile.path_rule("GenuineIntel", "bf16").dtype == "bf16"
    assert load_stack("torch-inductor").serial_rule("AuthenticAMD", "int8") is None


def test_the_path_rules_an_estimate_applies_are_among_its_inputs():
    """The stack profile's rules that priced the estimate's GEMMs are listed in ``inputs`` with their evidence: on
    the Zen 5 guest q4_1 under llama.cpp meets the 128-ops-per-cycle issue cap, its chain's 16 and its per-row
    unpacking (all ``derived``), q4_0 the cap alone, and so does q6_K: its per-row rule is dated, about builds before
    the tiled matmul, and an estimate prices today's; on Sapphire Rapids llama.cpp's int8 GEMMs take the AVX-512
    path instead of AMX (``assumed``), and q4_1's chain holds there too; torch-inductor's rule for AMD's FP32 path
    holds for the FP32 attention's matmuls of any precision, on AMD only; no profile, no rules."""
    def rules(cpu, precision, stack="llama.cpp"):
        proc = run_cli("estimate", "--model", "llama-3.2-1b", "--cpu", cpu, "--precision", precision,
                       "--stack", str(TYPE_RULES) if stack == "llama.cpp" else stack, "--json")
        assert proc.returncode == 0, proc.stderr
        return {i["what"]: i for i in json.loads(proc.stdout)["inputs"] if ".path_rules[" in i["what"]}

    serial = ("every dtype: one-row calls: weight stream and compute not overlapped (share 1)", "derived")
    zen5 = rules("zen5-2vcpu", "q4_1")
    assert [(i["value"], i["kind"]) for i in zen5.values()] == [
        ("int8: <= 128 ops/cycle/core", "derived"), ("q4_1, q5_1: <= 16 ops/cycle/core, a chain", "derived"),
        ("q4_1, q5_1: unpacked again per activation row", "derived"), serial]
    assert "FMA latency" in list(zen5.values())[1]["source"]
    assert "quants.c" in list(zen5.values())[3]["source"]
    assert [i["value"] for i in rules("zen5-2vcpu", "q4_0").values()] == ["int8: <= 128 ops/cycle/core", serial[0]]
    assert [i["value"] for i in rules("zen5-2vcpu", "q6_k").values()] == ["int8: <= 128 ops/cycle/core", serial[0]]
    assert [(i["value"], i["kind"]) for i in rules("spr", "q4_1").values()] == [
        ("int8: avx512 path", "assumed"), ("q4_1, q5_1: <= 16 ops/cycle/core, a chain", "derived"),
        ("q4_1, q5_1: unpacked again per activation row", "derived"), serial]
    # torch-inductor has no rule for these GEMMs; its AMD FP32 rule holds for the FP32 attention's matmuls
    assert [i["value"] for i in rules("zen5-2vcpu", "q4_0", "torch-inductor").values()] == [
        "fp32: avx2 path; attention's matmuls too"]
    assert [i["value"] for i in rules("spr", "q4_0", "torch-inductor").values()] == []
    assert rules("zen5-2vcpu", "q4_1", "none") == {}


def test_a_one_row_call_has_its_own_class():
    """llama.cpp runs a call of one activation row (decode at batch 1, a prefill's last-token lm_head) through its
    GEMV kernels (ggml_vec_dot_*, a repacked GEMV), not the GEMM kernels of several rows: a GGUF type's one-row
    calls take the ``<type>-gemv-<isa>`` class, fitted on their own figures; a float recipe keeps its class."""
    from estimates import evaluate

    from roofline.catalog import load_platform
    from roofline.model.efficiency import from_stack, path_class, rows_under_rules

    llama = _type_rules()
    for phase, layers in (("prefill", "q4_0-avx512"), ("decode", "q4_0-gemv-avx512")):
        kw = dict(seq_len=512) if phase == "prefill" else dict(context=256)
        ev = evaluate(load_platform("zen5-2vcpu"), load_model("llama-3.2-1b"), precisions=["q4_0"], phase=phase,
                      quantize_lm_head=True, stack=str(TYPE_RULES), **kw)
        q40 = {e.name: e for e in ev.evaluated}["q4_0"]
        m = np.asarray(ev.gemms.m, dtype=float)
        rules = rows_under_rules(ev.res, q40.cells, llama, m)
        assert [r.one if mj <= 1 else r.many for r, mj in zip(rules, m)][0] == layers
        assert m[-1] == 1 and rules[-1].one == "q4_0-gemv-avx512"  # the lm_head: the last token's row only
        eff = from_stack(llama, ev.res, q40.cells, ev.gemms, q40.mode)
        assert layers in eff.source and "q4_0-gemv-avx512" in eff.source
    assert path_class(ev.res, RECIPES["bf16"], llama, True)[0] == path_class(ev.res, RECIPES["bf16"], llama)[0]
    assert {"q4_0-avx512", "q4_0-gemv-avx512"} <= set(llama.gemm_efficiency)


def test_a_row_whose_tensors_mix_types_runs_the_kernels_of_most_of_its_weights():
    """Llama-3.2-1B in llama.cpp's Q4_K_M keeps q4_K in attn_q/attn_k and q6_K in half the layers' attn_v and
    ffn_down: those rows' element-weighted recipe is priced on the class of the type that holds most of its
    weights (q4_K), not on a generic INT8 class no llama.cpp record fits; a row of one type keeps its own."""
    from estimates import evaluate

    from roofline.catalog import load_platform
    from roofline.model.efficiency import gguf_type, rows_under_rules

    ev = evaluate(load_platform("zen5-2vcpu"), load_model("llama-3.2-1b"), precisions=["q4_k_m"], phase="decode",
                  context=64, quantize_lm_head=True)
    cells = {e.name: e for e in ev.evaluated}["q4_k_m"].cells
    by_row = dict(zip(ev.gemms.names, cells))
    assert by_row["qkv"].block.name.startswith("q4_K ") and "q6_K" in by_row["qkv"].block.name
    assert gguf_type(by_row["qkv"]) == "q4_K" and gguf_type(by_row["ffn_up"]) == "q4_K"
    assert gguf_type(by_row["lm_head"]) == "q6_K" and gguf_type(RECIPES["bf16"]) is None
    rules = dict(zip(ev.gemms.names, rows_under_rules(ev.res, cells, _type_rules(), None)))
    assert rules["qkv"].many == "q4_K-avx512" and rules["qkv"].one == "q4_K-gemv-avx512"


def test_a_tiled_kernel_unpacks_a_block_once_per_tile_of_activation_rows():
    """llamafile's tinyBLAS_Q0_AVX (sgemm.cpp's gemm4xN at 0c1e570) reuses each unpacked weight block for the up to
    4 activation rows of its tile: q5_0 (no repacked kernel at 0c1e570) unpacks M / 4 times in today's build,
    M times in a build before 2024-07-24 (ggml_vec_dot_q5_0_q8_0 per row), and q4_0 M / 4 times before its online
    repacking (2024-12-07), once after."""
    from estimates import evaluate

    from roofline.catalog import load_platform
    from roofline.model.efficiency import unpack_rows
    from roofline.spec.stack import PathRule

    llama = _type_rules()
    ev = evaluate(load_platform("ryzen-7950x"), load_model("llama-3.1-8b"), precisions=["q5_0", "q4_0"],
                  phase="prefill", seq_len=512)
    by_name = {e.name: e.recipe for e in ev.evaluated}
    m = np.asarray(ev.gemms.m, dtype=float)
    assert set(m[:-1]) == {512.0} and m[-1] == 1
    again, said = unpack_rows(ev.res, by_name["q5_0"], llama, m, None)
    assert list(again) == [128.0] * 4 + [1.0] and said == "unpacked again for each 4 activation rows"
    assert list(unpack_rows(ev.res, by_name["q5_0"], llama, m, "2024-07-01")[0]) == [512.0] * 4 + [1.0]
    assert list(unpack_rows(ev.res, by_name["q4_0"], llama, m, "2024-07-23")[0]) == [128.0] * 4 + [1.0]
    for date in ("2024-12-24", None):
        assert list(unpack_rows(ev.res, by_name["q4_0"], llama, m, date)[0]) == [1.0] * 5
    with pytest.raises(ValueError, match="rows_per_unpack"):
        PathRule(vendor="", dtype="int8", evidence="-", types=("q5_0",), rows_per_unpack=4)
    with pytest.raises(ValueError, match="rows_per_unpack"):
        PathRule(vendor="", dtype="int8", evidence="-", types=("q5_0",), unpack_per_row=True, rows_per_unpack=0)


def test_a_call_of_two_rows_costs_at_most_two_one_row_calls_by_hand():
    """A call of M rows is priced at most M one-row calls where such a call is bound by its weight stream:
    ``min(max(C, t_m, T1), M max(t_m1, T1))`` per call, by hand, with ``C`` its arithmetic at the shaped efficiency,
    ``t_m1`` one row's memory time (the weights and one row's activations) at the memory efficiency. Llama-3.1-8B in
    BF16 at batch 2 on one 96-core Genoa socket, a shape term of 0.001 (a fixed cost per call a thousand times its
    arithmetic): capped at two GEMVs' time, so the GEMMs of batch 2 cost at most twice batch 1's; without the shape
    term nothing is capped."""
    from estimates import evaluate

    from roofline.model.realistic import Efficiency, realistic_times

    def parts_at(batch):
        ev = evaluate(load_platform("genoa"), load_model("llama-3.1-8b"), precisions=["bf16"], phase="decode",
                      batch=batch, context=64, sockets=1, instance_cores=96)
        return ev.evaluated[0].parts

    two, one = parts_at(2), parts_at(1)
    assert set(two.rows) == {2.0} and set(one.rows) == {1.0}
    eta, mem, shape = 0.5, 0.7, 1e-3
    tiny = Efficiency(gemm=eta * shape, shape=shape, memory=mem, gemm_one=eta)
    t_mac = two.t_compute - two.t_extra
    t_c, t_m = t_mac / (eta * shape), two.t_memory / mem
    one_row = np.maximum((two.t_compute - two.t_unpack) / 2 + two.t_unpack, two.t_weights / mem)
    gemv_c, gemv_m = t_mac / 2 / eta, (two.t_weights + (two.t_memory - two.t_weights) / 2) / mem
    assert np.all(gemv_m >= gemv_c)  # every one-row call of this step streams longer than it computes
    want = np.minimum(two.count * np.maximum(np.maximum(t_c, t_m), one_row), two.count * 2 * np.maximum(gemv_m, one_row))
    got = float(realistic_times(two, tiny.rows(two)).gemm_s[0])
    assert got == pytest.approx(float(want.sum()), rel=1e-12)
    assert got < float((two.count * np.maximum(t_c, t_m)).sum())  # the cap binds
    single = float(realistic_times(one, Efficiency(gemm=eta, memory=mem).rows(one)).gemm_s[0])
    assert got <= 2 * single * (1 + 1e-12)
    plain = Efficiency(gemm=eta, memory=mem, gemm_one=eta)
    assert float(realistic_times(two, plain.rows(two)).gemm_s[0]) == pytest.approx(
        float((two.count * np.maximum(np.maximum(t_mac / eta, t_m), one_row)).sum()), rel=1e-12)


@pytest.mark.parametrize("precision", ["f16", "bf16"])
def test_written_float_gguf_reads_back_with_finite_weights(tmp_path, precision):
    """A file of every weight matrix in F16 or BF16 (as llama.cpp's convert writes them): 2 bytes a weight, the
    file type F16 or BF16, and N(0, 1/K) values that decode finite (F16 as numpy stores it, BF16 the top half of
    each F32)."""
    import gguf
    import numpy as np
    from roofline.validation.gguf_writer import write_random_gguf

    m = _tiny()
    w = write_random_gguf(tmp_path / "m.gguf", m, precision)
    back = load_model_file((tmp_path / "m.gguf").resolve())
    stored = {t.name: t for t in back.gguf_tensors}
    for t in w.tensors:
        assert stored[t.name].type == precision and stored[t.name].nbytes == t.elements * 2
    reader = gguf.GGUFReader(str(tmp_path / "m.gguf"))
    q = next(t for t in reader.tensors if t.name == "blk.0.attn_q.weight")
    raw = np.asarray(q.data).view(np.uint16).ravel()
    x = raw.view(np.float16).astype(np.float32) if precision == "f16" else (raw.astype(np.uint32) << 16).view(np.float32)
    assert np.all(np.isfinite(x)) and 0.5 < float(np.std(x)) * np.sqrt(m.hidden_size) < 2.0
    ftype = next(f for f in reader.fields.values() if f.name == "general.file_type")
    assert int(ftype.parts[ftype.data[0]][0]) == int(getattr(gguf.LlamaFileType, f"MOSTLY_{precision.upper()}"))
