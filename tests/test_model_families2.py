"""The model families of issue 47, second part: GLM-4.5 and GLM-4.5-Air (``glm4_moe``), Falcon, ChatGLM3 and
Qwen3-Next's linear-attention hybrid. Parameter counts against the published totals (each tolerance says why),
KV-cache (or recurrent state) bytes by hand, and the refusal of a key that would change a shape but is not priced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clitools import run_json
from model_helpers import assert_same_model, groups

from roofline.catalog import load_model, load_model_file
from roofline.model.footprint import MTP_GROUP, active_params
from roofline.model.workload import make_workload
from roofline.spec.hf_config import ConfigError, hf_config_to_fields
from roofline.spec.model import ModelSpec
from roofline.spec.vocab import Phase

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "hf_configs"


def config_model(folder: str) -> ModelSpec:
    return load_model_file((CONFIGS / folder / "config.json").resolve())


def config(folder: str) -> dict:
    return json.loads((CONFIGS / folder / "config.json").read_text())


# ------------------------------------------------------------------ GLM-4.5 (glm4_moe)


@pytest.mark.parametrize("name, folder", [("glm-4.5", "glm-4.5"), ("glm-4.5-air", "glm-4.5-air")])
def test_glm_catalog_entries_are_their_configs(name, folder):
    assert_same_model(load_model(name), config_model(folder))


def test_glm45_config_reading():
    """glm4_moe: q/k/v biases from attention_bias and none on o_proj (transformers' Glm4MoeAttention), q/k norms only
    where use_qk_norm (GLM-4.5 yes, Air no), n_shared_experts x moe_intermediate_size, first_k_dense_replace dense
    layers, one MTP layer."""
    big, air = config_model("glm-4.5"), config_model("glm-4.5-air")
    assert (big.attention_bias, big.o_proj_bias, big.qk_norm) == (True, False, True)
    assert (air.attention_bias, air.o_proj_bias, air.qk_norm) == (True, False, False)
    assert tuple(big.dense_layers) == (0, 1, 2) and tuple(air.dense_layers) == (0,)
    assert big.shared_expert_intermediate_size == 1536 and big.nextn_predict_layers == 1
    assert (big.num_experts, big.num_experts_per_tok, air.num_experts) == (160, 8, 128)


def _glm_by_hand(h, layers, dense, inter, experts, e_inter, vocab, qk_norm):
    """(main-model parameters, MTP layer parameters, active without embedding and lm_head) from the layer shapes:
    attention q 96x128 and o (each 12288 x h), k and v 8x128 each; q/k/v biases 12288 + 2 x 1024; SwiGLU MLPs of
    3 h i; a router of experts x h; RMSNorms of h (2 per layer and a final one) and q/k norms of 128."""
    attn = 2 * 12288 * h + 2 * 1024 * h
    bias = 12288 + 2048
    moe = experts * 3 * h * e_inter + 3 * h * e_inter + experts * h
    norms = (2 * layers + 1) * h + (2 * layers * 128 if qk_norm else 0)
    main = layers * (attn + bias) + dense * 3 * h * inter + (layers - dense) * moe + 2 * vocab * h + norms
    mtp = h * 2 * h + attn + moe + 5 * h  # eh_proj, a decoder layer with the MoE MLP, its five norms
    active = layers * (attn + bias) + dense * 3 * h * inter + (layers - dense) * (9 * 3 * h * e_inter + experts * h)
    return main, mtp, active + norms


@pytest.mark.parametrize("name, shape, total, active", [
    ("glm-4.5", (5120, 92, 3, 12288, 160, 1536, 151552, True), 355e9, 32e9),
    ("glm-4.5-air", (4096, 46, 1, 10944, 128, 1408, 151552, False), 106e9, 12e9)])
def test_glm45_counts_by_hand_and_published(name, shape, total, active):
    """The counts equal the layer shapes by hand. Published (zai-org/GLM-4.5 README): 355B / 32B active and 106B /
    12B. GLM counts the active parameters without the embedding and the lm_head: 32.08B and 12.18B, inside what
    their two digits round from (31.5-32.5, 11.5-12.5). The totals are given to three digits but do not say whether
    the MTP layer is in: 352.8B without it and 356.8B with it bracket 355B; each is within 1% of it (and Air's
    106.85B without it within 1% of 106B; 109.2B with it is not)."""
    m = load_model(name)
    g = groups(m)
    main, mtp, act = _glm_by_hand(*shape)
    assert sum(g.values()) - g[MTP_GROUP] == main
    assert g[MTP_GROUP] == mtp
    assert active_params(m) - g["embeddings"] - g["lm_head"] == act
    assert active - 0.5e9 <= act < active + 0.5e9
    assert abs(main / total - 1) < 0.01
    if name == "glm-4.5":
        assert abs((main + mtp) / total - 1) < 0.01


def test_glm45_kv_cache_by_hand():
    """GLM-4.5 caches 2 x 8 x 128 = 2,048 elements per token per layer, 92 layers (the MTP layer's cache is not a
    step's): at context 4,096, 2,048 x 92 x 4,096 per sequence; 376,832 bytes per token in F16."""
    m = load_model("glm-4.5")
    assert m.kv_width * m.num_hidden_layers * 2 == 376_832
    work = make_workload(m, Phase.DECODE, 2, 1, 4096)
    assert work.kv_cache_elements() == 2 * 2048 * 92 * 4096


def test_glm45_refusals_by_name():
    """A partial_rotary_factor outside (0, 1] and an expert key glm4_moe does not define are refused naming the key."""
    cfg = config("glm-4.5-air")
    with pytest.raises(ConfigError, match="partial_rotary_factor"):
        hf_config_to_fields({**cfg, "partial_rotary_factor": 1.5}, "x", "t")
    with pytest.raises(ConfigError, match="partial_rotary_factor: must be a number"):
        hf_config_to_fields({**cfg, "partial_rotary_factor": "half"}, "x", "t")
    with pytest.raises(ConfigError, match="n_expert_groups_dense"):
        hf_config_to_fields({**cfg, "n_expert_groups_dense": 2}, "x", "t")


@pytest.mark.parametrize("name", ["glm-4.5", "glm-4.5-air"])
def test_estimate_runs_for_glm(name):
    out = run_json("estimate", "--model", name, "--cpu", "genoa", "--phase", "decode", "--precision", "q4_k_m")
    d = out["precisions"]["q4_k_m"]["decode"]
    layers = 92 if name == "glm-4.5" else 46
    assert d["tokens_per_s"] > 0 and d["kv_cache_bytes"] == 1024 * layers * 2048 * 2


# ------------------------------------------------------------------ Falcon


@pytest.mark.parametrize("name, folder", [("falcon-40b", "falcon-40b"), ("falcon-7b", "falcon-7b"),
                                          ("chatglm3-6b", "chatglm3-6b"), ("glm-4-9b-chat", "glm-4-9b-chat")])
def test_renamed_catalog_entries_are_their_configs(name, folder):
    assert_same_model(load_model(name), config_model(folder))


def _falcon_by_hand(h, layers, heads, kv, norms):
    """One fused query_key_value of (heads + 2 kv) x 64 outputs, dense h x h, a plain MLP of 4h (two matrices),
    ``norms`` LayerNorms per block (weight and bias) and the final ln_f; the embedding tied to the lm_head."""
    return layers * (h * (heads + 2 * kv) * 64 + h * h + 2 * h * 4 * h + norms * 2 * h) + 2 * h + 65024 * h


@pytest.mark.parametrize("name, shape, published", [("falcon-40b", (8192, 60, 128, 8, 2), 40e9),
                                                    ("falcon-7b", (4544, 32, 71, 1, 1), 7e9)])
def test_falcon_counts_by_hand_and_published(name, shape, published):
    """The count is the layer shapes by hand: Falcon-40B 41.30B, Falcon-7B 6.92B. The model cards give "40B" and "7B",
    a name to one or two digits rather than a count: within 5% (the 40B name sits 3.2% under the count)."""
    m = load_model(name)
    count = sum(groups(m).values())
    assert count == _falcon_by_hand(*shape)
    assert abs(count / published - 1) < 0.05
    assert active_params(m) == count  # dense


def test_falcon_config_reading():
    """Falcon-40B: num_kv_heads 8 under new_decoder_architecture, two LayerNorms; Falcon-7B: multi_query gives one
    key-value head, one LayerNorm (parallel_attn); without parallel_attn a block has two. The MLP is plain of 4 x
    hidden and nothing has a bias (bias false)."""
    big, small = config_model("falcon-40b"), config_model("falcon-7b")
    assert (big.kv_heads, big.norms_per_layer, big.intermediate_size, big.gated_mlp) == (8, 2, 32768, False)
    assert (small.kv_heads, small.norms_per_layer, small.head_size) == (1, 1, 64)
    assert not (big.attention_bias or big.mlp_bias) and big.layer_norm and big.tie_word_embeddings
    sequential = hf_config_to_fields({**config("falcon-7b"), "parallel_attn": False}, "x", "t")
    assert sequential["norms_per_layer"] == 2
    mha = hf_config_to_fields({**config("falcon-7b"), "multi_query": False}, "x", "t")
    assert mha["num_key_value_heads"] == 71
    biased = hf_config_to_fields({**config("falcon-40b"), "bias": True, "ffn_hidden_size": 1000}, "x", "t")
    assert (biased["attention_bias"], biased["mlp_bias"], biased["intermediate_size"]) == (True, True, 1000)


def test_falcon_kv_cache_by_hand():
    """Falcon-7B caches one key-value head of 64: 2 x 64 x 32 layers = 4,096 elements, 8,192 bytes per token in F16;
    Falcon-40B 2 x 8 x 64 x 60 = 61,440 elements."""
    assert make_workload(load_model("falcon-7b"), Phase.DECODE, 1, 1, 1000).kv_cache_elements() == 4096 * 1000
    assert make_workload(load_model("falcon-40b"), Phase.DECODE, 3, 1, 100).kv_cache_elements() == 3 * 61_440 * 100


@pytest.mark.parametrize("change, key", [({"alibi": True}, "alibi: ALiBi"),
                                         ({"num_ln_in_parallel_attn": 3}, "num_ln_in_parallel_attn: 3"),
                                         ({"multi_query": "yes"}, "multi_query: must be true or false"),
                                         ({"num_kv_heads": 0}, "num_kv_heads: must be a positive")])
def test_falcon_refusals_by_name(change, key):
    """ALiBi adds a bias to every score, which is not priced; a LayerNorm count Falcon does not have; wrong types."""
    with pytest.raises(ConfigError, match=key):
        hf_config_to_fields({**config("falcon-40b"), **change}, "x", "t")


# ------------------------------------------------------------------ ChatGLM3


def test_chatglm3_count_by_hand_and_published():
    """Per layer: query_key_value 4096 x (32 + 2 x 2) x 128 with its bias (4,608), dense 4096 x 4096, SwiGLU 3 x 4096
    x 13696, two RMSNorms; a final norm; embedding and output_layer of 65,024 rows: 6,243,584,000. Published "6.2B"
    (two digits: 6.15B to 6.25B)."""
    m = load_model("chatglm3-6b")
    layer = 4096 * 36 * 128 + 4608 + 4096 * 4096 + 3 * 4096 * 13696 + 2 * 4096
    count = sum(groups(m).values())
    assert count == 28 * layer + 4096 + 2 * 65024 * 4096 == 6_243_584_000
    assert 6.15e9 <= count < 6.25e9


def test_glm4_9b_chat_count_by_hand():
    """ChatGLM's layer at GLM-4-9B's sizes: query_key_value 4096 x (32 + 2 x 2) x 128 with its bias, dense 4096 x 4096,
    SwiGLU 3 x 4096 x 13696, two RMSNorms, over 40 layers; a final norm; embedding and output_layer of 151,552 rows:
    9,399,951,360 (the card's name: 9B). Its KV cache: 2 groups x 128 x 2 x 40 layers = 20,480 elements a token."""
    m = load_model("glm-4-9b-chat")
    layer = 4096 * 36 * 128 + 4608 + 4096 * 4096 + 3 * 4096 * 13696 + 2 * 4096
    count = sum(groups(m).values())
    assert count == 40 * layer + 4096 + 2 * 151552 * 4096 == 9_399_951_360
    assert active_params(m) == count  # dense
    assert make_workload(m, Phase.DECODE, 1, 1, 1000).kv_cache_elements() == 20_480 * 1000
    assert load_model("THUDM/glm-4-9b-chat").name == "glm-4-9b-chat"


def test_chatglm_config_reading():
    """ChatGLM's own names: num_layers, padded_vocab_size, ffn_hidden_size, kv_channels, multi_query_group_num,
    seq_length; add_qkv_bias gives q/k/v biases, add_bias_linear every bias; rmsnorm false a LayerNorm. GLM-4-9B's
    config writes num_hidden_layers beside num_layers: equal, read; different, refused."""
    m = config_model("chatglm3-6b")
    assert (m.num_hidden_layers, m.vocab_size, m.intermediate_size, m.head_size, m.kv_heads) == (28, 65024, 13696, 128, 2)
    assert (m.max_position_embeddings, m.attention_bias, m.o_proj_bias, m.mlp_bias, m.gated_mlp) == (
        8192, True, False, False, True)
    cfg = config("chatglm3-6b")
    biased = hf_config_to_fields({**cfg, "add_bias_linear": True, "rmsnorm": False}, "x", "t")
    assert (biased["o_proj_bias"], biased["mlp_bias"], biased["norm"]) == (True, True, "layer")
    mha = hf_config_to_fields({**cfg, "multi_query_attention": False}, "x", "t")
    assert mha["num_key_value_heads"] == 32
    assert hf_config_to_fields({**cfg, "num_hidden_layers": 28}, "x", "t")["num_hidden_layers"] == 28
    with pytest.raises(ConfigError, match="num_layers: 28 differs from num_hidden_layers 40"):
        hf_config_to_fields({**cfg, "num_hidden_layers": 40}, "x", "t")


def test_chatglm3_kv_cache_by_hand():
    """2 groups x 128 x 2 (K and V) x 28 layers = 14,336 elements, 28,672 bytes per token in F16."""
    m = load_model("chatglm3-6b")
    assert m.kv_width * m.num_hidden_layers * 2 == 28_672
    assert make_workload(m, Phase.DECODE, 1, 1, 8000).kv_cache_elements() == 14_336 * 8000


@pytest.mark.parametrize("change, key", [({"pre_seq_len": 128}, "pre_seq_len: a prefix encoder"),
                                         ({"post_layer_norm": False}, "post_layer_norm: false"),
                                         ({"position_encoding_2d": True}, "position_encoding_2d"),
                                         ({"kv_channels": "128"}, "kv_channels: must be a whole number"),
                                         ({"num_layers": 10**9}, "num_layers")])
def test_chatglm_refusals_by_name(change, key):
    """A prefix encoder, a missing final norm and ChatGLM-6B's 2-D positions change shapes this tool does not price;
    wrong types and absurd sizes are one line naming ChatGLM's own key."""
    with pytest.raises(ConfigError, match=key):
        hf_config_to_fields({**config("chatglm3-6b"), **change}, "x", "t")


@pytest.mark.parametrize("name", ["falcon-40b", "falcon-7b", "chatglm3-6b"])
def test_estimate_runs_for_falcon_and_chatglm(name):
    out = run_json("estimate", "--model", name, "--cpu", "genoa", "--phase", "decode", "--precision", "q4_k_m")
    d = out["precisions"]["q4_k_m"]["decode"]
    per_token = {"falcon-40b": 61_440, "falcon-7b": 4096, "chatglm3-6b": 14_336}[name]
    assert d["tokens_per_s"] > 0 and d["kv_cache_bytes"] == 1024 * per_token * 2


# ------------------------------------------------------------------ Qwen3-Next: Gated DeltaNet and full attention


def test_qwen3_next_catalog_entry_is_its_config():
    m = config_model("qwen3-next-80b-a3b")
    assert_same_model(load_model("qwen3-next-80b-a3b"), m)
    # full_attention_interval 4: layer i is full attention when (i + 1) % 4 == 0 (transformers' Qwen3NextConfig)
    assert m.attention_layers == 12 and 3 not in m.linear_attention_layers and 0 in m.linear_attention_layers
    assert m.attention_output_gate and m.qk_norm and m.shared_expert_gate


def test_qwen3_next_counts_by_hand_and_published():
    """By hand per full-attention layer: q_proj 2 x 16 x 256 (queries and the output gate), k and v 2 x 256, o_proj,
    q/k norms of 256; per linear layer: in_proj_qkvz (2 x 16 x 128 + 2 x 32 x 128), in_proj_ba (2 x 32), out_proj
    (32 x 128), the convolution's 8,192 x 4 weights, dt_bias and A_log (32 each), the gated norm (128); per layer 512
    experts and a shared one of 3 x 2048 x 512, the router and the shared expert's gate (513 x 2048), two norms.
    Published (model card): 80B total, 79B non-embedding, 3B activated, each to its last digit (79.67B, 79.36B;
    3.25B active without the embedding and lm_head, as Qwen3-30B-A3B's 3.3B is its "A3B")."""
    m = load_model("qwen3-next-80b-a3b")
    h = 2048
    full = 2 * 4096 * h + 2 * 512 * h + h * 4096 + 2 * 256
    linear = 12288 * h + 64 * h + h * 4096 + 8192 * 4 + 2 * 32 + 128
    expert = 3 * h * 512
    moe = 512 * expert + expert + 513 * h
    total = 12 * full + 36 * linear + 48 * (moe + 2 * h) + h + 2 * 151936 * h
    g = groups(m)
    assert sum(g.values()) == total
    assert 79.5e9 <= total < 80.5e9
    assert 78.5e9 <= total - g["embeddings"] < 79.5e9
    active = active_params(m) - g["embeddings"] - g["lm_head"]
    assert active == total - 2 * 151936 * h - 48 * (512 - 10) * expert
    assert 2.5e9 <= active < 3.5e9


def test_qwen3_next_state_and_kv_by_hand():
    """The KV cache: 12 full-attention layers x 2 x 2 heads x 256 = 12,288 elements per token. The state: 36 linear
    layers x (32 heads x 128 x 128 + 8,192 channels x 3 past inputs) = 19,759,104 elements per sequence, F32 (as
    llama.cpp keeps recurrent states): 79,036,416 bytes, the same at any context."""
    m = load_model("qwen3-next-80b-a3b")
    assert m.linear_state_elements == 36 * (32 * 128 * 128 + 8192 * 3) == 19_759_104
    for context in (1000, 100_000):
        work = make_workload(m, Phase.DECODE, 2, 1, context)
        assert work.kv_cache_elements() == 2 * 12_288 * context
        assert work.state_bytes() == 2 * 19_759_104 * 4


def test_qwen3_next_decode_step_work_by_hand():
    """One decode step (batch 3): the linear layers' op does 7 d_k d_v per value head (the gated delta rule) and
    2 C K (the convolution) per token and layer, and reads and writes the state once; the softmax attention op reads
    the cache of the 12 full layers only; the GEMM rows are the full layers' (q doubled by the gate) and the linear
    layers' projections."""
    m = load_model("qwen3-next-80b-a3b")
    work = make_workload(m, Phase.DECODE, 3, 1, 4096)
    ops = {o.name: o for o in work.ops()}
    lin = ops["linear_attention"]
    assert float(lin.flops) == 36 * 3 * (7 * 32 * 128 * 128 + 2 * 8192 * 4)
    assert float(lin.state_bytes) == 2 * 36 * 3 * 548_864 * 4
    assert float(ops["attention"].kv_elements) == 3 * 12 * 2 * 2 * 256 * 4096
    gemms, _ = work.gemms()
    rows = {n: (float(mm), int(nn), int(k), float(c)) for n, mm, nn, k, c in
            zip(gemms.names, gemms.m, gemms.n, gemms.k, gemms.count)}
    assert rows["qkv"] == (3.0, 2 * 4096 + 2 * 512, 2048, 12.0)
    assert rows["attn_out"] == (3.0, 2048, 4096, 12.0)
    assert rows["lin_qkvz"] == (3.0, 12288, 2048, 36.0) and rows["lin_out"] == (3.0, 2048, 4096, 36.0)
    assert rows["lin_ba"] == (3.0, 64, 2048, 36.0)


def test_linear_attention_formula_on_a_small_case():
    """calc/linear_attention on 1 layer, 1 key and 2 value heads of d_k 2, d_v 3, kernel 2, 5 sequences of one token:
    C = 2 x 2 + 2 x 3 = 10; flops 5 x (7 x 2 x 2 x 3 + 2 x 10 x 2) = 620; state 2 x 2 x 3 + 10 x 1 = 22 per sequence,
    read and written: 2 x 5 x 22 x 4 bytes."""
    from roofline.calc.linear_attention import linear_attention, state_elements

    assert state_elements(k_heads=1, v_heads=2, d_k=2, d_v=3, conv_kernel=2) == 22
    op = linear_attention(batch=5, q_len=1, layers=1, k_heads=1, v_heads=2, d_k=2, d_v=3, conv_kernel=2)
    assert float(op.flops) == 620 and float(op.state_bytes) == 2 * 5 * 22 * 4 and not op.matmul


def test_qwen3_next_estimate_at_long_context():
    """At a 128k context the linear layers' state stays 79 MB per sequence while the 12 full layers' F16 cache grows:
    kv_cache_bytes is the two together."""
    out = run_json("estimate", "--model", "qwen3-next-80b-a3b", "--cpu", "genoa", "--phase", "decode", "--precision",
                   "q4_k_m", "--context", "131072")
    d = out["precisions"]["q4_k_m"]["decode"]
    assert d["tokens_per_s"] > 0 and d["kv_cache_bytes"] == 131072 * 12_288 * 2 + 19_759_104 * 4


@pytest.mark.parametrize("change, key", [
    ({"layer_types": ["linear_attention", "mamba", "linear_attention", "full_attention"] * 12}, "layer_types: 'mamba'"),
    ({"linear_conv_kernel_dim": None}, "linear_conv_kernel_dim: linear-attention layers need"),
    ({"linear_num_value_heads": 20}, "linear_num_value_heads: 20 is not a multiple"),
    ({"use_sliding_window": True, "sliding_window": 4096}, "use_sliding_window"),
    ({"full_attention_interval": None}, "full_attention_interval"),
])
def test_qwen3_next_refusals_by_name(change, key):
    """A kind of layer, a missing state dimension, value heads that do not share key heads evenly, a window in the
    hybrid, and a hybrid that names no full-attention layers: each refused naming the key."""
    with pytest.raises(ConfigError, match=key):
        hf_config_to_fields({**config("qwen3-next-80b-a3b"), **change}, "x", "t")


def test_linear_attention_keys_outside_qwen3_next_stay_refused():
    """The state keys on a model type this tool does not read them for are refused as before, naming the key."""
    cfg = {**config("qwen3-next-80b-a3b"), "model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"]}
    with pytest.raises(ConfigError, match="full_attention_interval: linear-attention layers"):
        hf_config_to_fields(cfg, "x", "t")


def test_qwen3_next_plan_counts_the_state_per_sequence():
    """A capacity plan's memory per token of a sequence (256-token prompts + 128 output tokens by default): the
    full-attention layers' F16 cache, 12,288 x 2 bytes, plus the 79,036,416-byte state spread over its 384 tokens."""
    out = run_json("plan", "--model", "qwen3-next-80b-a3b", "--cpu", "genoa", "--precision", "q4_k_m")
    mem = out["cpus"][0]["memory"]
    assert mem["tokens_per_sequence"] == 384
    assert mem["kv_bytes_per_token"] == pytest.approx(12_288 * 2 + 19_759_104 * 4 / 384, rel=1e-12)


def test_output_gate_alone_doubles_q_in_weights_and_rows_alike():
    """A model whose every layer is full attention with the gate (full_attention_interval 1): no linear layers, q_proj
    twice the query width in the footprint and in the step's qkv row, the same weights either way."""
    from roofline.model.footprint import weight_params

    cfg = {**config("qwen3-next-80b-a3b"), "full_attention_interval": 1}
    m = ModelSpec(**hf_config_to_fields(cfg, "x", "t"))
    assert m.linear_attention_layers == () and m.attention_output_gate and m.linear_state_elements == 0
    work = make_workload(m, Phase.DECODE, 1, 1, 16)
    gemms, lm_head = work.gemms()
    qkv = list(gemms.names).index("qkv")
    assert int(gemms.n[qkv]) == 2 * 4096 + 2 * 512 and float(gemms.count[qkv]) == 48
    step = sum(int(n) * int(k) * c for n, k, c, head in zip(gemms.n, gemms.k, work.weight_set_counts(gemms), lm_head)
               if not head)
    assert step + 151936 * 2048 == weight_params(m) - 151936 * 2048  # the rows hold every matrix but the embedding


@pytest.mark.parametrize("name", ["glm-4.5-air", "falcon-7b", "falcon-40b", "chatglm3-6b", "qwen3-next-80b-a3b"])
def test_step_rows_hold_the_footprint_matrices(name):
    """The GEMM rows of a step, each expert counted (weight_set_counts), hold exactly the footprint's matrices but the
    embedding table and the lm_head: the shapes a step prices are the shapes counted (the MTP layer in neither)."""
    from roofline.model.footprint import weight_params

    m = load_model(name)
    work = make_workload(m, Phase.DECODE, 1, 1, 16)
    gemms, lm_head = work.gemms()
    rows = sum(int(n) * int(k) * c for n, k, c, head in zip(gemms.n, gemms.k, work.weight_set_counts(gemms), lm_head)
               if not head)
    tables = m.vocab_size * m.hidden_size * (1 if m.tie_word_embeddings else 2)
    assert rows == weight_params(m) - tables
