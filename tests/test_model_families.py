"""The model families CPU users run now (issue 47): multi-head latent attention and DeepSeekMoE (DeepSeek-V2/V3/R1,
Kimi-K2), gpt-oss and MXFP4, Gemma 3, Llama 4. Parameter counts against the published totals, KV-cache bytes by
hand, and each attention form's work and bytes by hand derivation on a small config."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from clitools import run_json
from model_helpers import assert_same_model, groups

from roofline.calc.mla import mla_attention_absorbed, mla_attention_naive, mla_gemms
from roofline.catalog import load_model, load_model_file, load_platform
from roofline.errors import UserError
from roofline.model.footprint import MTP_GROUP, active_params
from roofline.model.workload import make_workload
from roofline.spec.hf_config import ConfigError, hf_config_to_fields
from roofline.spec.mla import DEFAULT_MLA, MlaForm, mla_rule
from roofline.spec.model import ModelSpec
from roofline.spec.vocab import Phase

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "hf_configs"


def config_model(folder: str) -> ModelSpec:
    return load_model_file((CONFIGS / folder / "config.json").resolve())


# ------------------------------------------------------------------ multi-head latent attention: parameter counts


def test_deepseek_v3_main_model_is_671b_and_37b_active():
    """DeepSeek-V3 (README_WEIGHTS.md of deepseek-ai/DeepSeek-V3): the main model 671B, 36.6B activated *including
    the 0.9B output head* and so without the input embedding; the MTP module 11.5B unique (beside the shared
    embedding and head). Tolerance 0.1% on the total (published to 3 digits), and on the activated count half its
    last digit (36.55B to 36.65B); the MTP module within 1.5% (its "11.5B" is truncated: the layer shapes give
    11.61B, a 0.9% gap that 3 digits cannot tell)."""
    m = load_model("deepseek-v3")
    g = groups(m)
    mtp = g[MTP_GROUP]
    total = sum(g.values())
    assert abs((total - mtp) / 671e9 - 1) < 1e-3
    activated_without_embedding = active_params(m) - g["embeddings"]
    assert 36.55e9 <= activated_without_embedding < 36.65e9
    assert abs(mtp / 11.5e9 - 1) < 0.015
    # 685B on the Hub: the checkpoint holds the MTP module's own copies of the embedding and the head too
    assert abs((total + g["embeddings"] + g["lm_head"]) / 685e9 - 1) < 0.005


def test_deepseek_v3_toml_is_the_published_config():
    """The catalog entry and the published config.json (R1's, the same architecture) give the same model."""
    toml, cfg = load_model("deepseek-v3"), config_model("deepseek-r1")
    assert_same_model(toml, cfg)


def test_deepseek_v2_lite_15_7b_and_2_4b_active():
    """DeepSeek-V2-Lite: 15.7B in total, 2.4B activated (the model card; DeepSeek counts the activated parameters
    without the input embedding, as for V3). Total within half its last digit; activated truncated to "2.4B"
    (2.4B to 2.5B), as V3's 36.63B is published as "37B" rounded and 36.6B truncated."""
    m = config_model("deepseek-v2-lite")
    assert m.q_lora_rank is None and tuple(m.dense_layers) == (0,) and m.shared_expert_intermediate_size == 2 * 1408
    g = groups(m)
    assert MTP_GROUP not in g
    assert 15.65e9 <= sum(g.values()) < 15.75e9
    assert 2.4e9 <= active_params(m) - g["embeddings"] < 2.5e9


def test_kimi_k2_1t_and_32b_active():
    """Kimi-K2: 1T in total, 32B activated (the model card, to one and two digits): the layer shapes give 1.026T
    (within 5% of "1T", what its one digit allows upward) and 31.7B activated without the input embedding (as
    DeepSeek counts), which rounds to 32B."""
    m = load_model("kimi-k2")
    g = groups(m)
    assert MTP_GROUP not in g and m.nextn_predict_layers == 0
    assert 1.0e12 <= sum(g.values()) < 1.05e12
    assert 31.5e9 <= active_params(m) - g["embeddings"] < 32.5e9


@pytest.mark.parametrize("name, folder", [("deepseek-v2-lite", "deepseek-v2-lite")])
def test_catalog_entries_are_their_configs(name, folder):
    toml, cfg = load_model(name), config_model(folder)
    assert_same_model(toml, cfg)


@pytest.mark.parametrize("name", ["deepseek-v3", "deepseek-v2-lite", "kimi-k2"])
def test_estimate_runs_for_the_mla_models(name):
    out = run_json("estimate", "--model", name, "--cpu", "genoa", "--phase", "decode", "--precision", "q4_k_m")
    q = out["precisions"]["q4_k_m"]
    assert q["decode"]["tokens_per_s"] > 0 and q["decode"]["kv_cache_bytes"] > 0


def test_mla_projections_by_hand():
    """Per layer: q_a 7168 x 1536, q_b 1536 x 128 (128 + 64), kv_a 7168 x (512 + 64), kv_b 512 x 128 (128 + 128),
    o 128 x 128 x 7168; and the two latent norms (512 + 1536)."""
    m = load_model("deepseek-v3")
    per_layer = 7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256 + 128 * 128 * 7168
    assert groups(m)["attention projections"] == 61 * per_layer
    lite = config_model("deepseek-v2-lite")  # no q latent: one q_proj 2048 x 16 x 192
    assert groups(lite)["attention projections"] == 27 * (2048 * 16 * 192 + 2048 * 576 + 512 * 16 * 256
                                                          + 16 * 128 * 2048)


# ------------------------------------------------------------------ the KV cache


def test_kv_cache_is_the_latent_and_the_rotary_key():
    """DeepSeek-V3 caches 512 + 64 elements per token per layer: 61 x 576 = 35,136 per token (70,272 bytes in
    F16), against 61 x 128 x (192 + 128) = 2,498,560 if K (128 + 64) and V (128) were cached per head."""
    m = load_model("deepseek-v3")
    assert m.kv_width == 576
    work = make_workload(m, Phase.DECODE, 3, 1, 1000)
    assert work.kv_cache_elements() == 3 * 1000 * 61 * 576
    out = run_json("estimate", "--model", "deepseek-v3", "--cpu", "genoa", "--phase", "decode", "--batch", "3",
                   "--context", "1000", "--precision", "q4_k_m")
    assert out["precisions"]["q4_k_m"]["decode"]["kv_cache_bytes"] == 3 * 1000 * 61 * 576 * 2  # llama.cpp: F16
    assert any("absorbed form" in n and "12801" in n for n in out["notes"])


# ------------------------------------------------------------------ the two forms, by hand on a small config

SMALL = dict(heads=2, qk_nope=4, qk_rope=2, v_head=3, kv_lora=8)


def _small_model(**kw) -> ModelSpec:
    return ModelSpec(name="tiny-mla", source="test", family="decoder", hidden_size=16, intermediate_size=32,
                     num_hidden_layers=1, num_attention_heads=2, vocab_size=64, max_position_embeddings=4096,
                     gated_mlp=True, attention_bias=False, mlp_bias=False, kv_lora_rank=8, q_lora_rank=None,
                     qk_nope_head_dim=4, qk_rope_head_dim=2, v_head_dim=3, **kw)


def test_naive_form_by_hand():
    """Decode, one sequence, context 10, h 2, n 4, r 2, v 3, one layer: 20 query-key pairs; flops
    2 x 20 x (4 + 2 + 3) = 360; softmax 20 scores; activations: q and context 1 x 2 x 9 = 18, the decompressed
    K_nope and V 10 x 2 x (4 + 3) = 140; cache: the rotary keys 10 x 2 = 20."""
    o = mla_attention_naive(batch=1, q_len=1, k_len=10, heads=2, qk_nope=4, qk_rope=2, v_head=3, layers=1,
                            causal=False, cached=True, softmax_ops=11.0)
    assert float(o.flops) == 360 and float(o.vector_flops) == 11 * 20
    assert float(o.act_elements) == 18 + 140 and float(o.kv_elements) == 20


def test_absorbed_form_by_hand():
    """The same step absorbed: every head scores the 10 latent rows of 8 + 2 and sums 8-wide values: flops
    2 x 20 x (10 + 8) = 720; activations: the absorbed queries 2 x 10 and the latent context 2 x 8 = 36; the cache
    read once for both heads, 10 x 10 = 100."""
    o = mla_attention_absorbed(batch=1, q_len=1, k_len=10, heads=2, kv_lora_rank=8, qk_rope=2, layers=1,
                               causal=False, cached=True, softmax_ops=11.0)
    assert float(o.flops) == 720 and float(o.vector_flops) == 11 * 20
    assert float(o.act_elements) == 36 and float(o.kv_elements) == 100


def test_forms_gemm_rows_by_hand():
    """Naive: kv_b decompresses the 10 cached tokens and the new one, M 11, N 2 x (4 + 3), K 8: 2 x 11 x 14 x 8 =
    2,464 flops. Absorbed: q_nope W_UK (1 x 8 x 4) and ctx W_UV^T (1 x 3 x 8) per head, each one batched launch over
    the 2 heads (N 2 x 8 and 2 x 3): 2 x 2 x (32 + 24) = 224 flops, from the same 112 weights."""
    common = dict(batch=1.0, q_len=1.0, k_len=11.0, hidden=16, layers=1, heads=2, q_lora_rank=None, kv_lora_rank=8,
                  qk_nope=4, qk_rope=2, v_head=3)
    naive = {r[0]: r[1:] for r in mla_gemms(**common, absorbed=False)}
    absorbed = {r[0]: r[1:] for r in mla_gemms(**common, absorbed=True)}
    assert naive["kv_b"] == (11.0, 14, 8, 1)
    assert "kv_b" not in absorbed and absorbed["k_absorb"] == (1.0, 16, 4, 1) and absorbed["v_absorb"] == (1.0, 6, 8, 1)
    flops = lambda rows, names: sum(2 * rows[n][0] * rows[n][1] * rows[n][2] * rows[n][3] for n in names)  # noqa
    assert flops(naive, ["kv_b"]) == 2464 and flops(absorbed, ["k_absorb", "v_absorb"]) == 224
    weights = lambda rows, names: sum(rows[n][1] * rows[n][2] * rows[n][3] for n in names)  # noqa
    assert weights(naive, ["kv_b"]) == weights(absorbed, ["k_absorb", "v_absorb"]) == 112
    for rows in (naive, absorbed):
        assert rows["q"] == (1.0, 12, 16, 1) and rows["kv_a"] == (1.0, 10, 16, 1) and rows["attn_out"] == (1.0, 16, 6, 1)


def test_workload_takes_the_form():
    """The workload prices the form it is given: at a long context the naive form decompresses the whole cache each
    step (its GEMM M grows with the context), the absorbed one does not."""
    m = _small_model()
    naive = dataclasses.replace(make_workload(m, Phase.DECODE, 1, 1, 3000), mla_form=MlaForm.NAIVE)
    absorbed = make_workload(m, Phase.DECODE, 1, 1, 3000)
    assert absorbed.mla_form is MlaForm.ABSORBED
    g_naive, _ = naive.gemms()
    assert dict(zip(g_naive.names, g_naive.m))["kv_b"] == 3001
    g_abs, _ = absorbed.gemms()
    assert "kv_b" not in g_abs.names and "qkv" not in g_abs.names
    assert naive.ops()[0].kv_elements == 3000 * 2 and absorbed.ops()[0].kv_elements == 3000 * 10


# ------------------------------------------------------------------ which form a stack runs


def test_llama_cpp_profile_states_the_absorbed_form_with_its_source():
    from roofline.catalog.stacks import load_stack

    rule = mla_rule(load_stack("llama.cpp"))
    assert rule.form is MlaForm.ABSORBED and rule.kind == "documented"
    assert "llama.cpp/pull/12801" in rule.source
    assert mla_rule(None) is DEFAULT_MLA and DEFAULT_MLA.kind == "assumed"
    assert mla_rule(load_stack("torch-inductor")) is DEFAULT_MLA


# ------------------------------------------------------------------ refusals


def test_latent_without_its_dimensions_is_refused_by_name():
    cfg = json.loads((CONFIGS / "deepseek-v2-lite" / "config.json").read_text())
    del cfg["qk_rope_head_dim"]
    with pytest.raises(ConfigError, match="qk_rope_head_dim: multi-head latent attention"):
        hf_config_to_fields(cfg, "x", "test")
    with pytest.raises(ValueError, match="attention_bias"):
        _small_model().__class__(**{**dataclasses.asdict(_small_model()), "attention_bias": True})


# ------------------------------------------------------------------ gpt-oss and MXFP4


@pytest.mark.parametrize("name, total, active", [("gpt-oss-20b", 20.91e9, 3.61e9), ("gpt-oss-120b", 116.83e9, 5.13e9)])
def test_gpt_oss_counts_match_the_model_card(name, total, active):
    """The gpt-oss model card (arXiv:2508.10925, table 1) gives the totals and the active counts to two decimals of
    a billion (20.91B / 3.61B, 116.83B / 5.13B; its active count takes the unembedding, not the embedding): within
    half the last digit, 0.005e9. The 21B / 3.6B and 117B / 5.1B of the model pages are these, rounded."""
    m = load_model(name)
    g = groups(m)
    assert abs(sum(g.values()) - total) < 0.005e9
    assert abs(active_params(m) - g["embeddings"] - active) < 0.005e9


def test_gpt_oss_biases_and_sinks_by_hand():
    """gpt-oss-20b per layer: attention biases q 4096 + k 512 + v 512 + o 2880 = 8,000; 32 experts' biases
    32 x (2 x 2880 + 2880) = 276,480; the router's 32; the sinks, one per head, 64: 284,576, times 24 layers."""
    g = groups(load_model("gpt-oss-20b"))
    assert g["biases"] == 24 * (8000 + 276_480 + 32 + 64)


def test_gpt_oss_config_as_shipped():
    """config.json as shipped: num_experts_per_tok and experts_per_token both 4 (no duplicate-key refusal), the
    alternating layer_types read as a 128-token window on the even layers, and the catalog entry equal to it."""
    m = config_model("gpt-oss-20b")
    assert m.num_experts == 32 and m.num_experts_per_tok == 4 and m.expert_bias and m.attention_sinks
    assert m.sliding_window == 128 and tuple(m.sliding_window_layers) == tuple(range(0, 24, 2))
    toml = load_model("gpt-oss-20b")
    assert_same_model(toml, m)
    cfg = json.loads((CONFIGS / "gpt-oss-20b" / "config.json").read_text())
    only_alias = {k: v for k, v in cfg.items() if k != "num_experts_per_tok"}
    assert hf_config_to_fields(only_alias, "x", "t")["num_experts_per_tok"] == 4
    with pytest.raises(ConfigError, match="experts_per_token: 2 differs from num_experts_per_tok 4"):
        hf_config_to_fields({**cfg, "experts_per_token": 2}, "x", "t")


def test_gpt_oss_kv_cache_by_hand():
    """gpt-oss-120b at context 4,096: 18 windowed layers hold 128 tokens, 18 full ones 4,096; 2 x 8 x 64 = 1,024
    elements per token per layer: 1,024 x (18 x 128 + 18 x 4,096) = 77,856,768 per sequence."""
    work = make_workload(load_model("gpt-oss-120b"), Phase.DECODE, 1, 1, 4096)
    assert work.kv_cache_elements() == 1024 * (18 * 128 + 18 * 4096)


def test_mxfp4_block_layout():
    """block_mxfp4 (ggml-common.h): one E8M0 byte and 16 bytes of 4-bit E2M1 values per 32 weights: 17 bytes, 4.25
    bits per weight; GGML type 39; activations quantized to q8_0 (ggml_vec_dot_mxfp4_q8_0)."""
    from roofline.spec.gguf_types import BLOCKS, VEC_DOT_TYPE

    b = BLOCKS["mxfp4"]
    assert (b.ggml_type, b.weights_per_block, b.bytes_per_block, b.quant_bytes_per_block) == (39, 32, 17, 16)
    assert b.bits_per_weight == 4.25 and b.meta_bytes_per_group == 1.0 and VEC_DOT_TYPE["mxfp4"] == "q8_0"


def test_mxfp4_mix_is_the_experts_only():
    """--precision mxfp4: the routed experts at 17 bytes per 32 weights, everything else BF16. gpt-oss-20b's
    expert matrices, 24 x 32 x 3 x 2880 x 2880 = 19,110,297,600 weights, take 19,110,297,600 x 17 / 32 bytes."""
    from roofline.spec.gguf_mix import tensor_types

    m = load_model("gpt-oss-20b")
    ts = tensor_types("mxfp4", m)
    experts = [t for t in ts if t.role.endswith("_exps")]
    assert {t.type for t in experts} == {"mxfp4"} and {t.type for t in ts if t not in experts} == {"bf16"}
    assert sum(t.elements for t in experts) == 19_110_297_600
    assert sum(t.bytes for t in experts) == 19_110_297_600 * 17 / 32
    with pytest.raises(UserError, match="no experts"):
        tensor_types("mxfp4", load_model("llama-3.1-8b"))


@pytest.mark.parametrize("precision", ["q4_k_m", "mxfp4"])
def test_estimate_runs_for_gpt_oss(precision):
    out = run_json("estimate", "--model", "gpt-oss-20b", "--cpu", "genoa", "--phase", "decode", "--precision", precision)
    d = out["precisions"][precision]["decode"]
    # one sequence at the default context 1,024, F16 cache: 12 windowed layers x 128 + 12 full x 1,024 tokens
    assert d["kv_cache_bytes"] == 1024 * (12 * 128 + 12 * 1024) * 2


# ------------------------------------------------------------------ Gemma 3


def test_gemma3_27b_matches_the_technical_report():
    """Gemma 3 technical report (arXiv:2503.19786, table 1), 27B: 25,600M non-embedding parameters and 1,416M
    embedding parameters, to the million. The layer shapes give 25,599.7M non-embedding (within 0.05%: the table's
    four digits) and a 262,208 x 5,376 table of 1,409.6M, which with the image projector the table counts among the
    embedding parameters (mm_input_projection 1,152 x 5,376 and its 1,152-wide norm) is 1,415.8M. The 417M vision
    encoder is not counted."""
    m = config_model("gemma-3-27b-it")
    g = groups(m)
    non_embedding = sum(g.values()) - g["embeddings"]
    assert abs(non_embedding / 25_600e6 - 1) < 5e-4
    assert g["embeddings"] == 262_208 * 5376
    assert abs((g["embeddings"] + 1152 * 5376 + 1152) / 1_416e6 - 1) < 5e-4
    assert "lm_head" not in g  # tied


def test_gemma3_text_config_and_its_defaults():
    """The multimodal config nests the text model in text_config; the keys it leaves out take transformers'
    Gemma3TextConfig defaults (vocab 262,208, 131,072 positions, a global layer every 6th); 62 layers give 10 global
    (5, 11, ..., 59) and 52 with the 1,024-token window."""
    m = config_model("gemma-3-27b-it")
    assert m.vocab_size == 262_208 and m.max_position_embeddings == 131_072 and m.tie_word_embeddings
    assert m.norms_per_layer == 4 and m.qk_norm and m.head_size == 128
    assert set(range(62)) - set(m.sliding_window_layers) == set(range(5, 62, 6)) and m.sliding_window == 1024
    assert "vision tower not counted" in m.description
    toml = load_model("gemma-3-27b")
    assert_same_model(toml, m)
    text = json.loads((CONFIGS / "gemma-3-27b-it" / "config.json").read_text())["text_config"]
    alone = hf_config_to_fields(text, "x", "t")  # a gemma3_text checkpoint reads the same
    assert alone["sliding_window_layers"] == tuple(i for i in range(62) if (i + 1) % 6)


def test_gemma3_kv_cache_by_hand():
    """Gemma-3-27B at context 32,768: 52 windowed layers hold 1,024 tokens, 10 global ones 32,768; 2 x 16 x 128 =
    4,096 elements per token per layer: 4,096 x (52 x 1,024 + 10 x 32,768) per sequence."""
    work = make_workload(load_model("gemma-3-27b"), Phase.DECODE, 1, 1, 32768)
    assert work.kv_cache_elements() == 4096 * (52 * 1024 + 10 * 32768)


def test_gemma3_12b_is_keras_hubs_count_to_the_parameter():
    """keras-hub's gemma3_12b_text preset: 11,765,788,416 parameters, with MaxText's 262,144-token table. The catalog
    entry's 262,208-token table (transformers' default, as for 27B) adds 64 x 3,840; the rest is exact: 48 layers of
    4,096 + 2 x 2,048 + 4,096 attention columns and a 3 x 15,360 GeGLU on 3,840, four norms of 3,840 and two q/k norms
    of 256 each, one final norm. 40 layers hold a 1,024-token window, 8 (5, 11, ..., 47) are global."""
    m = load_model("gemma-3-12b")
    total = sum(groups(m).values())
    per_layer = 3840 * (4096 + 2 * 2048) + 4096 * 3840 + 3 * 3840 * 15360 + 4 * 3840 + 2 * 256
    assert total == 48 * per_layer + 262_208 * 3840 + 3840
    assert total - 64 * 3840 == 11_765_788_416
    assert set(range(48)) - set(m.sliding_window_layers) == set(range(5, 48, 6)) and m.sliding_window == 1024


def test_gemma2_9b_is_keras_hubs_count_to_the_parameter():
    """keras-hub's gemma2_9b_en preset: 9,241,705,984 parameters, exactly the layer shapes: 42 layers of 4,096 + 2 x 2,048
    + 4,096 attention columns and a 3 x 14,336 GeGLU on 3,584 with four norms, the 256,000 x 3,584 table (tied), one
    final norm. The even layers hold the 4,096-token window."""
    m = load_model("gemma-2-9b")
    per_layer = 3584 * (4096 + 2 * 2048) + 4096 * 3584 + 3 * 3584 * 14336 + 4 * 3584
    assert sum(groups(m).values()) == 42 * per_layer + 256_000 * 3584 + 3584 == 9_241_705_984
    assert m.sliding_window_layers == tuple(range(0, 42, 2)) and m.sliding_window == 4096


def test_gemma3_wrapper_without_text_config_is_refused():
    with pytest.raises(ConfigError, match="text_config"):
        hf_config_to_fields({"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"]}, "x", "t")


# ------------------------------------------------------------------ Llama 4


def test_llama4_scout_by_hand_and_published():
    """Llama-4-Scout's text model, per layer: attention 2 x 40 x 128 x 5,120 + 2 x 8 x 128 x 5,120 = 62,914,560;
    16 experts and a shared one of 3 x 5,120 x 8,192 = 125,829,120 each; a router of 16 x 5,120; 48 layers, the
    202,048 x 5,120 embedding and lm_head, 97 norms of 5,120. Published: 109B in total (the vision encoder, about
    0.9B, counted there, not here: the text model's 107.77B is within 1.5% below it) and 17B active (17.17B)."""
    m = config_model("llama-4-scout-17b-16e-instruct")
    per_layer = 62_914_560 + 17 * 125_829_120 + 16 * 5120
    total = 48 * per_layer + 2 * 202_048 * 5120 + 97 * 5120
    g = groups(m)
    assert sum(g.values()) == total
    assert 109e9 * 0.985 <= total < 109e9
    assert 17e9 <= active_params(m) < 17.5e9


def test_llama4_maverick_400b_17b_active():
    """Maverick: 128 experts on every second layer (24 MoE, 24 dense of 3 x 5,120 x 16,384), published 400B total
    and 17B active; the text model gives 400.7B (the vision encoder is not counted, so the gap is under 0.2%) and
    17.18B."""
    m = load_model("llama-4-maverick")
    assert m.moe_layers == 24 and m.dense_mlp_layers == 24
    assert abs(sum(groups(m).values()) / 400e9 - 1) < 2e-3
    assert 17e9 <= active_params(m) < 17.5e9


def test_llama4_config_reading():
    """text_config nesting, the dense/expert widths (intermediate_size_mlp / intermediate_size), the shared expert,
    chunked attention on the RoPE layers (no_rope_layers 1) and global attention on the NoPE ones; the catalog
    entry equal to the published config."""
    m = config_model("llama-4-scout-17b-16e-instruct")
    assert m.intermediate_size == 16384 and m.expert_intermediate == 8192 and m.shared_expert_intermediate_size == 8192
    assert m.chunked_attention and m.sliding_window == 8192
    assert set(range(48)) - set(m.sliding_window_layers) == set(range(3, 48, 4))
    assert not m.tie_word_embeddings and tuple(m.dense_layers) == ()
    toml = load_model("llama-4-scout")
    assert_same_model(toml, m)
    text = json.loads((CONFIGS / "llama-4-scout-17b-16e-instruct" / "config.json").read_text())["text_config"]
    text = {k: v for k, v in text.items() if k not in ("moe_layers", "no_rope_layers")}
    step2 = hf_config_to_fields({**text, "interleave_moe_layer_step": 2}, "x", "t")
    assert step2["dense_layers"] == tuple(range(0, 48, 2))  # transformers: moe_layers = range(step - 1, L, step)
    defaults = hf_config_to_fields(text, "x", "t")  # no no_rope_layers: every 4th layer without RoPE
    assert defaults["sliding_window_layers"] == tuple(i for i in range(48) if (i + 1) % 4)


def test_chunked_attention_is_full_below_the_chunk_and_a_window_above():
    """Decode at a context shorter than the chunk reads every cached token in every layer; longer, the 36 chunked
    layers read 8,192 and the 12 global ones the whole context: 2 x 8 x 128 = 2,048 elements per token per layer."""
    m = load_model("llama-4-scout")
    short = make_workload(m, Phase.DECODE, 1, 1, 4096)
    long = make_workload(m, Phase.DECODE, 1, 1, 100_000)
    assert short.kv_cache_elements() == 2048 * 48 * 4096
    assert long.kv_cache_elements() == 2048 * (36 * 8192 + 12 * 100_000)


def test_chunked_layer_types_outside_llama4_are_refused():
    cfg = json.loads((CONFIGS / "gpt-oss-20b" / "config.json").read_text())
    cfg["layer_types"] = ["chunked_attention", "full_attention"] * 12
    with pytest.raises(ConfigError, match="layer_types: 'chunked_attention'"):
        hf_config_to_fields(cfg, "x", "t")


@pytest.mark.parametrize("name", ["gemma-3-27b", "llama-4-scout", "llama-4-maverick", "gpt-oss-120b"])
def test_estimate_runs_for_the_families(name):
    out = run_json("estimate", "--model", name, "--cpu", "genoa", "--phase", "decode", "--precision", "q4_k_m")
    assert out["precisions"]["q4_k_m"]["decode"]["tokens_per_s"] > 0


def test_the_stack_rule_decides_the_form_an_estimate_prices():
    """A stack whose profile states the naive form gets the decompression GEMM (M: the context and the new token,
    per sequence) and the naive attention; llama.cpp's profile, the absorbed ones; the estimate's notes name the
    rule and its source."""
    from roofline.catalog.stacks import load_stack
    from roofline.model.efficiency import EfficiencySource
    from roofline.model.estimate import EstimateQuery, evaluate
    from roofline.model.workload import WorkloadSpec
    from roofline.spec.mla import MlaRule

    genoa, m = load_platform("genoa"), load_model("deepseek-v2-lite")
    llama = load_stack("llama.cpp")
    naive = dataclasses.replace(llama, mla=MlaRule(form="naive", source="a test stack that decompresses"))
    work = WorkloadSpec(phase=Phase.DECODE, batch=2, context=500)
    results = {}
    for stack in (llama, naive):
        ev = evaluate(genoa, m, EstimateQuery(precisions=["q4_k_m"], workload=work, source=EfficiencySource(stack=stack)))
        results[stack.mla.form] = ev
    absorbed, decompressing = results[MlaForm.ABSORBED], results[MlaForm.NAIVE]
    assert decompressing.work.mla_form is MlaForm.NAIVE and absorbed.work.mla_form is MlaForm.ABSORBED
    rows = dict(zip(decompressing.gemms.names, decompressing.gemms.m))
    assert rows["kv_b"] == 2 * 501 and "k_absorb" not in rows
    assert {"k_absorb", "v_absorb"} <= set(absorbed.gemms.names) and "kv_b" not in absorbed.gemms.names
    assert any("naive form" in n and "decompresses" in n for n in decompressing.source_notes)
    assert any("absorbed form" in n and "12801" in n for n in absorbed.source_notes)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_dims = st.integers(1, 512)


@given(heads=st.integers(1, 128), n=_dims, r=_dims, v=_dims, c=_dims, batch=st.integers(1, 64),
       context=st.integers(1, 100_000))
@settings(max_examples=60, deadline=None)
def test_both_forms_hold_the_same_weights_and_score_the_same_pairs(heads, n, r, v, c, batch, context):
    """Whatever the shapes: the absorbed form's two batched GEMMs hold exactly kv_b's weights, h (n + v) c; both
    forms score the same query-key pairs (equal softmax work); the naive form reads only the rotary keys from the
    cache, the absorbed one the whole latent row; and the absorbed attention's flops are the naive's times
    (2c + r) / (n + r + v)."""
    common = dict(batch=float(batch), q_len=1.0, k_len=float(context + 1), hidden=64, layers=1, heads=heads,
                  q_lora_rank=None, kv_lora_rank=c, qk_nope=n, qk_rope=r, v_head=v)
    weights = lambda rows, names: sum(N * K * cnt for name, _, N, K, cnt in rows if name in names)  # noqa: E731
    assert weights(mla_gemms(**common, absorbed=False), {"kv_b"}) == heads * (n + v) * c
    assert weights(mla_gemms(**common, absorbed=True), {"k_absorb", "v_absorb"}) == heads * (n + v) * c
    kw = dict(batch=batch, q_len=1, k_len=context, heads=heads, qk_rope=r, layers=1, causal=False, cached=True,
              softmax_ops=11.0)
    naive = mla_attention_naive(qk_nope=n, v_head=v, **kw)
    absorbed = mla_attention_absorbed(kv_lora_rank=c, **kw)
    assert float(naive.vector_flops) == float(absorbed.vector_flops)
    assert float(naive.kv_elements) == batch * context * r and float(absorbed.kv_elements) == batch * context * (c + r)
    assert float(absorbed.flops) * (n + r + v) == pytest.approx(float(naive.flops) * (2 * c + r), rel=1e-12)
