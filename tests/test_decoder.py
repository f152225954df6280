"""Decoder LLMs: GQA, prefill and decode, weight-only INT8/INT4, W4A8, footprints."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from clitools import run_cli, run_json
from estimates import estimate
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.calc.gemm import arithmetic_intensity, gemm_flops, kernel_extra_ops, operand_bytes, weight_meta_bytes
from roofline.catalog import load_model, load_platform
from roofline.errors import UserError
from roofline.model.footprint import footprint
from roofline.spec.model import ModelSpec

DECODERS = ["qwen3-0.6b", "llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b", "qwen2.5-7b"]


def decode(model, cpu="spr", **kw):
    kw.setdefault("precisions", ["bf16", "int8-weight-only", "int4-weight-only", "int8-dynamic"])
    return estimate(load_platform(cpu), load_model(model), phase="decode", **kw)


def test_int4_weight_intensity_by_hand():
    """A 4096x4096 INT4 weight, group-128 BF16 scales and zero points, 2-byte activations, M = 1."""
    f = gemm_flops(1, 4096, 4096)
    meta = weight_meta_bytes(4096, 4096, "per-group", 128, 2, True)
    assert meta == 4096 * 32 * (2 + 2) == 524_288
    d = sum(operand_bytes(1, 4096, 4096, 2, 0.5, 2, w_meta=meta))
    assert d == 2 * 4096 + 4096 * 4096 / 2 + 524_288 + 2 * 4096 == 8_929_280
    assert arithmetic_intensity(f, d) == pytest.approx(33_554_432 / 8_929_280)  # 3.76 ops/B: deeply memory-bound
    # the dequantize-to-float kernel adds 4 ops per weight: half again the MACs' 2 per weight at M = 1
    assert kernel_extra_ops(1, 4096, 4096, 4.0, False, 128, False) == 4 * 4096 * 4096
    # W4A8: unpack 2/weight + the activation row sum (M K) + per-group rescale 2 M N K/g
    assert kernel_extra_ops(1, 4096, 4096, 2.0, True, 128, True) == 2 * 4096 * 4096 + 4096 + 2 * 4096 * 32


def test_gqa_kv_cache_bytes():
    # Llama-3.1-8B: 32 layers, 8 KV heads of 128; 1024 cached tokens; BF16 -> 2 x 32 x 8 x 128 x 1024 x 2 B
    r = decode("llama-3.1-8b", context=1024, precisions=["bf16"])
    assert r.precisions["bf16"].decode.kv_cache_bytes == 2 * 32 * 8 * 128 * 1024 * 2 == 134_217_728
    r4 = decode("llama-3.1-8b", context=1024, batch=4, precisions=["bf16"], kv_dtype="int8")
    assert r4.precisions["bf16"].decode.kv_cache_bytes == 134_217_728 * 4 / 2
    # the projections use the KV heads: k and v have N = 8 x 128
    qkv = next(g for g in r.precisions["bf16"].gemms if g.name == "qkv")
    assert (qkv.m, qkv.n, qkv.k) == (1, (32 + 2 * 8) * 128, 4096)


def test_published_parameter_counts():
    # Qwen3-0.6B: 0.6B in all, 0.44B without the (tied) embedding; Llama-3.1-8B: 8.03B
    q = footprint(load_model("qwen3-0.6b"), "bf16")
    emb = next(g for g in q.groups if g.name == "embeddings")
    assert (q.params, q.params - emb.params) == (596_049_920, 440_467_456)
    assert footprint(load_model("llama-3.1-8b"), "bf16").params == 8_030_261_248
    assert footprint(load_model("llama-3.2-1b"), "bf16").params == 1_235_814_400


def test_footprint_by_hand_llama_3_2_1b_int4():
    """Projections per layer: q, o 2048x2048; k, v 512x2048; gate, up 8192x2048; down 2048x8192."""
    tensors = [(2048, 2048, 2), (512, 2048, 2), (8192, 2048, 2), (2048, 8192, 1)]  # (rows, cols, per layer)
    params = 16 * sum(r * c * n for r, c, n in tensors)
    meta = 16 * sum(r * math.ceil(c / 128) * (2 + 2) * n for r, c, n in tensors)
    f = footprint(load_model("llama-3.2-1b"), "int4-weight-only", base_dtype="bf16")
    assert f.quantized_bytes_base == params * 2
    assert f.quantized_bytes == params / 2 + meta
    emb = 128256 * 2048 * 2  # tied: counted once, in BF16
    norms = (2 * 16 + 1) * 2048 * 2
    assert f.total_bytes == params / 2 + meta + emb + norms
    assert f.quantized_ratio == pytest.approx(params * 2 / (params / 2 + meta))
    assert f.total_ratio < f.quantized_ratio  # nobody should quote the first as the second
    untied = footprint(load_model("llama-3.2-1b"), "int4-weight-only", count_tied_lm_head_copy=True)
    assert untied.total_bytes == f.total_bytes + emb


def test_int4_beats_int8_in_memory_bound_decode_only():
    r = decode("llama-3.2-3b", context=1024)
    tps = {n: p.decode.tokens_per_s for n, p in r.precisions.items()}
    assert tps["int4-weight-only"] > tps["int8-weight-only"] > tps["bf16"]
    assert all(p.decode.bound == "memory" for p in r.precisions.values())
    # compute-bound prefill: INT4 weights buy nothing over INT8 compute, and dequantizing costs
    pre = estimate(load_platform("spr"), load_model("llama-3.2-3b"), phase="prefill", seq_len=1024,
                   precisions=["bf16", "int4-weight-only", "int8-dynamic"])
    t = {n: p.gemm_time_s for n, p in pre.precisions.items()}
    assert t["int8-dynamic"] < t["int4-weight-only"]
    assert t["int4-weight-only"] >= t["bf16"]  # BF16 compute plus the dequantize work
    # the dequantize work makes INT4 decode turn compute-bound at a smaller batch than INT8 weight-only
    cb = {n: p.decode.compute_bound_batch for n, p in r.precisions.items()}
    assert cb["int4-weight-only"] < cb["int8-weight-only"]


def test_compute_bound_batch_is_where_the_gemms_turn():
    """The reported batch is the first at which one decode step's GEMMs spend at least as long computing
    as streaming, each batch evaluated as its own step."""
    from roofline.model.layout import make_layout
    from roofline.model.recipes import cell_recipes
    from roofline.model.resources import Resources
    from roofline.model.step import evaluate_step
    from roofline.model.workload import make_workload
    from roofline.spec.precision import get_recipe

    plat, model = load_platform("spr"), load_model("llama-3.2-1b")
    r = decode("llama-3.2-1b", precisions=["bf16"])
    b = r.precisions["bf16"].decode.compute_bound_batch
    assert b and b > 1
    res = Resources(plat, make_layout(plat))

    def turned(batch):
        gemms, lm = make_workload(model, "decode", batch, 1, 0).gemms()
        g = evaluate_step(res, cell_recipes(get_recipe("bf16"), gemms, lm), gemms).gemm
        return (gemms.count * g.t_compute).sum() >= (gemms.count * g.t_memory).sum()

    assert turned(b) and not turned(b - 1)


def test_lm_head_stays_unquantized_by_default():
    r = decode("llama-3.1-8b", precisions=["int4-weight-only"], baseline="int4-weight-only")
    lm = next(g for g in r.precisions["int4-weight-only"].gemms if g.name == "lm_head")
    assert lm.recipe == "bf16" and (lm.m, lm.n, lm.k) == (1, 128256, 4096)
    q = decode("llama-3.1-8b", precisions=["int4-weight-only"], baseline="int4-weight-only", quantize_lm_head=True)
    lm_q = next(g for g in q.precisions["int4-weight-only"].gemms if g.name == "lm_head")
    assert lm_q.recipe == "int4-weight-only" and lm_q.w_bytes < lm.w_bytes / 3


def test_decode_json_contract_and_cli():
    data = run_json("estimate", "--model", "llama-3.2-3b", "--cpu", "spr", "--phase", "decode", "--batch", "1",
                    "--context", "1024")
    assert data["workload"]["phase"] == "decode" and data["workload"]["context"] == 1024
    for p in data["precisions"].values():
        d = p["decode"]
        assert {"token_latency_s", "tokens_per_s", "bound", "weight_bytes", "kv_cache_bytes",
                "compute_bound_batch"} <= set(d)
        assert d["tokens_per_s"] == pytest.approx(1 / d["token_latency_s"])
    text = run_cli("estimate", "--model", "llama-3.2-3b", "--cpu", "spr", "--phase", "decode").stdout
    assert "Decode step" in text and "tokens/s" in text


@pytest.mark.parametrize("args, fragment", [
    (["--model", "bert-base", "--phase", "decode"], "is an encoder"),
    (["--model", "llama-3.2-1b", "--phase", "forward"], "is a decoder"),
    (["--model", "bert-base", "--context", "100"], "--context applies to a decoder's decode or prefill"),
    (["--model", "qwen3-0.6b", "--phase", "prefill", "--seq-len", "512", "--context", "40600"],
     "--context + --seq-len 41112"),
    (["--model", "qwen3-0.6b", "--phase", "decode", "--context", "50000"], "max_position_embeddings"),
    (["--model", "llama-3.2-1b", "--phase", "decode", "--kv-dtype", "int3"], "--kv-dtype"),
])
def test_decoder_bad_input(args, fragment):
    proc = run_cli("estimate", "--cpu", "spr", *args)
    assert proc.returncode == 2 and fragment in proc.stderr and "Traceback" not in proc.stderr


def test_footprint_cli_json_contract():
    data = run_json("footprint", "--model", "qwen3-0.6b", "--precision", "int8-weight-only", "--base-dtype", "fp32")
    assert {"total_bytes", "total_bytes_base", "quantized_bytes", "quantized_bytes_base"} <= set(data)
    for g in data["groups"]:
        assert {"name", "count", "params", "bytes_base", "bytes"} <= set(g)
    assert data["total_bytes"] == pytest.approx(sum(g["bytes"] for g in data["groups"]))
    text = run_cli("footprint", "--model", "qwen3-0.6b", "--precision", "int8-weight-only", "--mib").stdout
    assert "MiB" in text and "whole model" in text


def test_hf_decoder_config_matches_catalog(tmp_path):
    cfg = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1024,
           "intermediate_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8,
           "head_dim": 128, "vocab_size": 151936, "max_position_embeddings": 40960, "tie_word_embeddings": True,
           "hidden_act": "silu", "attention_bias": False}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    a = estimate(load_platform("spr"), load_model(str(path)), phase="decode")
    b = estimate(load_platform("spr"), load_model("qwen3-0.6b"), phase="decode")
    assert [dataclasses.replace(g) for g in a.precisions["bf16"].gemms] == b.precisions["bf16"].gemms
    assert footprint(load_model(str(path)), "bf16").params == 596_049_920


def test_every_decoder_in_every_phase():
    for name in DECODERS:
        for phase in ("prefill", "decode"):
            r = estimate(load_platform("gnr"), load_model(name), phase=phase, seq_len=128)
            assert all(s.end_to_end_ceiling > 0 for s in r.speedups)


decoder_configs = st.builds(
    lambda kv, group, hd, layers, inter, vocab, tie: ModelSpec(
        name="random", source="hypothesis", family="decoder", hidden_size=kv * group * hd,
        intermediate_size=inter, num_hidden_layers=layers, num_attention_heads=kv * group, num_key_value_heads=kv,
        head_dim=hd, vocab_size=vocab, max_position_embeddings=1 << 20, gated_mlp=True, tie_word_embeddings=tie,
        attention_bias=False, mlp_bias=False),
    st.integers(1, 8), st.integers(1, 8), st.sampled_from([32, 64, 128]), st.integers(1, 8),
    st.integers(64, 8192), st.integers(100, 200_000), st.booleans(),
)


@settings(max_examples=25, deadline=None)
@given(model=decoder_configs, context=st.integers(0, 8192), batch=st.integers(1, 64))
def test_decode_properties(model, context, batch):
    plat = load_platform("spr")
    r = estimate(plat, model, phase="decode", context=context, batch=batch,
                 precisions=["bf16", "int8-weight-only", "int4-weight-only"], baseline="bf16")
    more = estimate(plat, model, phase="decode", context=context + 512, batch=batch, precisions=["bf16"])
    d = {n: p.decode for n, p in r.precisions.items()}
    # longer context: more KV cache bytes, never a faster token
    assert more.precisions["bf16"].decode.kv_cache_bytes > d["bf16"].kv_cache_bytes
    assert more.precisions["bf16"].decode.token_latency_s >= d["bf16"].token_latency_s
    # KV cache: 2 x layers x batch x kv_heads x head_dim x context x 2 bytes
    assert d["bf16"].kv_cache_bytes == 2 * model.num_hidden_layers * batch * model.kv_heads * model.head_dim * context * 2
    assert d["int4-weight-only"].weight_bytes < d["int8-weight-only"].weight_bytes < d["bf16"].weight_bytes
    for x in d.values():
        assert x.token_latency_s > 0 and math.isfinite(x.tokens_per_s)


@settings(max_examples=25, deadline=None)
@given(model=decoder_configs, base=st.sampled_from(["fp32", "bf16"]),
       precision=st.sampled_from(["int8-weight-only", "int4-weight-only", "w4a8", "int8-dynamic"]))
def test_footprint_properties(model, base, precision):
    f = footprint(model, precision, base_dtype=base)
    assert f.total_bytes == pytest.approx(sum(g.bytes for g in f.groups))
    assert f.total_bytes_base == pytest.approx(sum(g.bytes_base for g in f.groups))
    assert f.quantized_bytes < f.quantized_bytes_base
    assert 1 < f.total_ratio <= f.quantized_ratio  # the unquantized tensors dilute the whole-model ratio


def test_unknown_group_size_is_refused():
    with pytest.raises(UserError):
        from roofline.spec.precision import get_recipe

        get_recipe("int4-weight-only", 0)
