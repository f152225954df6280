"""Real Hugging Face configs (tests/fixtures/hf_configs, sources in SOURCES.md) against their published
parameter totals, and what the model cannot price refused naming the key: MLP shapes the model type does
not give, linear attention, unknown windows. Sliding-window attention priced by hand derivation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from clitools import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.calc import ops as op
from roofline.catalog import load_model_file
from roofline.model.footprint import active_params, footprint
from roofline.spec.hf_config import ConfigError, hf_config_to_fields

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "hf_configs"


def model(name: str):
    return load_model_file((CONFIGS / name / "config.json").resolve())


def config(name: str) -> dict:
    return json.loads((CONFIGS / name / "config.json").read_text())


# ------------------------------------------------------------------ published totals

#: (folder, total, active, relative tolerance): the published figures of SOURCES.md, to their printed digits
PUBLISHED = [
    ("starcoder2-15b", 15.96e9, 15.96e9, 0.0005),
    ("mistral-7b-v0.1", 7.24e9, 7.24e9, 0.001),
    ("gemma-2-9b", 917_504_000 + 8_324_201_984, None, 1e-9),
    ("qwen2-57b-a14b", 57.4e9, 14e9, 0.02),
]


@pytest.mark.parametrize("name,total,active,tol", PUBLISHED, ids=[p[0] for p in PUBLISHED])
def test_parameter_counts_match_the_published_totals(name, total, active, tol):
    m = model(name)
    params = footprint(m, "bf16").params
    assert params == pytest.approx(total, rel=tol), params
    if active is not None:
        assert active_params(m) == pytest.approx(active, rel=tol if active != 14e9 else 0.05)


def test_starcoder2_is_a_plain_mlp_with_biases_and_layer_norms():
    """15,957,889,024 by hand from transformers' Starcoder2 layers: embeddings and an untied lm_head of
    49152 x 6144; per layer q and o of 6144 x 6144, k and v of 512 x 6144, each with a bias; c_fc and
    c_proj of 6144 x 24576 with biases; two LayerNorms (weight and bias); a final LayerNorm."""
    m = model("starcoder2-15b")
    assert not m.gated_mlp and m.attention_bias and m.mlp_bias and m.layer_norm and not m.tie_word_embeddings
    h, i, kv, v = 6144, 24576, 4 * 128, 49152
    attention = 2 * (h * h + h) + 2 * (kv * h + kv)
    mlp = (i * h + i) + (h * i + h)
    per_layer = attention + mlp + 2 * 2 * h
    assert footprint(m, "bf16").params == 40 * per_layer + 2 * v * h + 2 * h == 15_957_889_024
    # taken for a gated MLP without biases (gelu_pytorch_tanh read as SwiGLU) it came out at 22.0e9
    assert footprint(m, "bf16").params < 16e9


def test_gemma2_has_four_norms_per_block_and_a_gated_gelu_mlp():
    m = model("gemma-2-9b")
    assert m.gated_mlp and m.norms_per_layer == 4 and m.tie_word_embeddings
    non_embedding = footprint(m, "bf16").params - 256000 * 3584
    assert non_embedding == 8_324_201_984  # the Gemma 2 report's figure, exactly


def test_qwen2_moe_has_qkv_biases_and_no_window_unless_asked():
    m = model("qwen2-57b-a14b")
    assert m.attention_bias and m.o_proj_bias is False and m.sliding_window is None
    assert (m.num_experts, m.num_experts_per_tok, m.shared_expert_gate) == (64, 8, True)
    on = hf_config_to_fields({**config("qwen2-57b-a14b"), "use_sliding_window": True, "max_window_layers": 20},
                             "q", "s")
    assert on["sliding_window"] == 65536 and on["sliding_window_layers"] == tuple(range(20, 28))


def test_qwen3_next_linear_attention_is_read_and_other_types_refused_naming_the_key():
    """Qwen3-Next's Gated DeltaNet layers are priced (tests/test_model_families2.py); its state keys on another model
    type, and a layer kind that is not attention, are still refused naming the key."""
    m = model("qwen3-next-80b-a3b")
    assert len(m.linear_attention_layers) == 36 and m.attention_layers == 12
    for key, value in (("linear_num_value_heads", 32), ("layer_types", ["linear_attention"] * 3 + ["full_attention"])):
        cfg = {k: v for k, v in config("qwen3-next-80b-a3b").items() if not k.startswith("linear_")
               and k != "full_attention_interval"}
        cfg.update(num_hidden_layers=4, model_type="qwen3_moe", architectures=["Qwen3MoeForCausalLM"])
        cfg[key] = value
        with pytest.raises(ConfigError) as e:
            hf_config_to_fields(cfg, "q", "s")
        assert e.value.key == key


def test_an_mlp_shape_the_model_type_does_not_give_is_refused_naming_hidden_act():
    cfg = {**config("mistral-7b-v0.1"), "model_type": "newarch", "architectures": ["NewArchForCausalLM"]}
    cfg.pop("sliding_window")
    with pytest.raises(ConfigError) as e:
        hf_config_to_fields(cfg, "n", "s")
    assert e.value.key == "hidden_act" and "gated" in e.value.reason


def test_a_window_on_a_model_type_whose_layers_are_unknown_is_refused():
    cfg = {**config("mistral-7b-v0.1"), "model_type": "llama", "architectures": ["LlamaForCausalLM"]}
    with pytest.raises(ConfigError) as e:
        hf_config_to_fields(cfg, "n", "s")
    assert e.value.key == "sliding_window"
    # layer_types says which: the sliding ones get the window
    cfg["layer_types"] = ["sliding_attention", "full_attention"] * 16
    f = hf_config_to_fields(cfg, "n", "s")
    assert f["sliding_window_layers"] == tuple(range(0, 32, 2))
    cfg["layer_types"] = ["sliding_attention"] * 31
    with pytest.raises(ConfigError, match="31 entries for 32 layers"):
        hf_config_to_fields(cfg, "n", "s")


# ------------------------------------------------------------------ sliding-window attention, priced


def _decode(name: str, context: int) -> dict:
    proc = run_cli("estimate", "--model", str(CONFIGS / name), "--cpu", "spr", "--phase", "decode", "--context",
                   str(context), "--precision", "bf16", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_mistral_at_32k_reads_its_window_not_the_context():
    """2 (K, V) x 32 layers x 8 kv heads x 128 x 4,096 tokens x 2 bytes = 0.537 GB, not the 4.29 GB of 32,767."""
    data = _decode("mistral-7b-v0.1", 32767)
    kv = data["precisions"]["bf16"]["decode"]["kv_cache_bytes"]
    assert kv == 2 * 32 * 8 * 128 * 4096 * 2
    assert any("sliding-window attention in every layer" in n and "4,096 cached tokens" in n for n in data["notes"])
    # below the window nothing changes: the context is read
    assert _decode("mistral-7b-v0.1", 1000)["precisions"]["bf16"]["decode"]["kv_cache_bytes"] == 2 * 32 * 8 * 128 * 1000 * 2


def test_gemma2_windows_half_its_layers():
    data = _decode("gemma-2-9b", 8000)
    kv = data["precisions"]["bf16"]["decode"]["kv_cache_bytes"]
    assert kv == 2 * 8 * 256 * 2 * (21 * 8000 + 21 * 4096)


def test_windowed_prefill_scores_by_hand():
    """One layer, one head, d = 1: a causal prefill of s = 8192 scores s^2 / 2 pairs, with a window of 4096
    s w - w^2 / 2; the decode step at context 10,000 reads min(10,000, w) keys."""
    kw = dict(batch=1, heads=1, kv_heads=1, head_dim=1, layers=1, softmax_ops=0.0)
    full = op.attention(q_len=8192, k_len=8192, causal=True, cached=False, **kw)
    win = op.attention(q_len=8192, k_len=8192, causal=True, cached=False, window=4096, window_layers=1, **kw)
    assert float(full.flops) == 4 * 8192 ** 2 / 2
    assert float(win.flops) == 4 * (8192 * 4096 - 4096 ** 2 / 2)
    assert float(win.act_elements) == float(full.act_elements)  # every fresh K and V is still read once
    dec = op.attention(q_len=1, k_len=10_000, causal=False, cached=True, window=4096, window_layers=1, **kw)
    assert float(dec.kv_elements) == 2 * 4096 and float(dec.flops) == 4 * 4096


@given(s=st.integers(1, 5000), w=st.integers(1, 5000))
@settings(max_examples=200, deadline=None)
def test_windowed_scores_count_the_pairs_a_mask_allows(s, w):
    """The causal score count with a window is the pairs ``(i, j)``, ``i - w < j <= i``, to within the
    diagonal's s/2 (the same half-count the full causal s^2 / 2 makes)."""
    kw = dict(batch=1, heads=1, kv_heads=1, head_dim=1, layers=1, softmax_ops=1.0)
    a = op.attention(q_len=s, k_len=s, causal=True, cached=False, window=w, window_layers=1, **kw)
    got = float(a.flops + a.vector_flops) / 5
    i = np.arange(1, s + 1)
    pairs = float(np.minimum(i, w).sum())
    assert abs(got - pairs) <= s / 2 + 1e-6


# ------------------------------------------------------------------ config.json values, typed and bounded first


@pytest.mark.parametrize("key,value,fragment", [
    ("mlp_only_layers", 5, "mlp_only_layers: must be a list of whole numbers"),
    ("mlp_only_layers", [99], "mlp_only_layers: layer 99 is not a layer"),
    ("num_experts", 10 ** 12, "num_experts: 1,000,000,000,000 experts is outside the possible range"),
    ("num_experts", "64", "num_experts: must be a whole number"),
    ("num_hidden_layers", 10 ** 9, "num_hidden_layers: 1,000,000,000 layers is outside the possible range"),
    ("decoder_sparse_step", 0, "decoder_sparse_step: must be a positive whole number"),
    ("sliding_window", "4096", "sliding_window: must be a whole number"),
    ("use_sliding_window", "yes", "use_sliding_window: must be true or false"),
    ("use_bias", 1, "use_bias: must be true or false"),
])
def test_config_values_are_typed_and_bounded_before_use(tmp_path, key, value, fragment):
    cfg = {**config("qwen2-57b-a14b"), key: value}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    proc = run_cli("footprint", "--model", str(tmp_path), "--precision", "bf16", timeout=30)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert fragment in proc.stderr, proc.stderr
