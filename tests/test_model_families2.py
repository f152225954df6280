"""The model families of issue 47, second part: GLM-4.5 and GLM-4.5-Air (``glm4_moe``), Falcon, ChatGLM3 and
Qwen3-Next's linear-attention hybrid. Parameter counts against the published totals (each tolerance says why),
KV-cache (or recurrent state) bytes by hand, and the refusal of a key that would change a shape but is not priced."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from clitools import run_json

from roofline.catalog import load_model, load_model_file
from roofline.model.footprint import MTP_GROUP, active_params, footprint
from roofline.model.workload import make_workload
from roofline.spec.hf_config import ConfigError, hf_config_to_fields
from roofline.spec.model import ModelSpec
from roofline.spec.vocab import Phase

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "hf_configs"


def config_model(folder: str) -> ModelSpec:
    return load_model_file((CONFIGS / folder / "config.json").resolve())


def config(folder: str) -> dict:
    return json.loads((CONFIGS / folder / "config.json").read_text())


def groups(m: ModelSpec) -> dict[str, int]:
    return {g.name: g.params for g in footprint(m, "bf16").groups}


def _plain(v):
    return tuple(v) if isinstance(v, (list, tuple)) else v


def assert_same_model(a: ModelSpec, b: ModelSpec) -> None:
    """Every architecture field equal (a cached spec may hold a list where a fresh one holds a tuple)."""
    for f in dataclasses.fields(ModelSpec):
        if f.name not in ("name", "source", "description", "aliases"):
            assert _plain(getattr(a, f.name)) == _plain(getattr(b, f.name)), f.name


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
