"""Mixtures of experts: config.json keys, catalog parameter counts, expert GEMMs, decode from the
active weights; and regression tests for accounting bugs peers had (head_dim, GQA KV cache, tied
embeddings, published parameter totals)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from clitools import run_cli
from estimates import estimate

from roofline.calc.shapes import decoder_gemms, expected_distinct_experts, moe_gemms, transformer_gemms
from roofline.catalog import load_model, load_platform
from roofline.errors import SpecError
from roofline.model.footprint import active_params, footprint
from roofline.model.workload import make_workload
from roofline.spec.hf_config import hf_config_to_fields
from roofline.spec.model import ModelSpec

# Published totals (parameters), each with the precision it was published to (the last digit).
# Sources: mistral.ai/news/mixtral-of-experts (46.7B total, 12.9B per token), mistral.ai/news/mixtral-8x22b ("39B
# active parameters out of 141B"); the model cards of
# Qwen/Qwen3-30B-A3B (30.5B, 3.3B activated), Qwen/Qwen3-235B-A22B (235B, 22B activated), Qwen/Qwen1.5-MoE-A2.7B (14.3B, 2.7B activated),
# Qwen/Qwen2.5-7B (7.61B), Qwen/Qwen3-0.6B (0.6B; 0.44B non-embedding), meta-llama/Llama-3.2-1B and -3B
# (1.23B, 3.21B); arXiv:2409.02060 Table 1 for OLMoE-1B-7B (6.9B, 1.3B active); Llama-3.1-8B: 8.03B
# (the safetensors parameter count its Hugging Face page shows).
PUBLISHED = {
    "mixtral-8x7b": ((46.7e9, 0.1e9), (12.9e9, 0.1e9)),
    "mixtral-8x22b": ((141e9, 1e9), (39e9, 1e9)),
    "qwen3-30b-a3b": ((30.5e9, 0.1e9), (3.3e9, 0.1e9)),
    "qwen3-235b-a22b": ((235e9, 1e9), (22e9, 1e9)),
    "qwen1.5-moe-a2.7b": ((14.3e9, 0.1e9), (2.7e9, 0.1e9)),
    "olmoe-1b-7b": ((6.9e9, 0.1e9), (1.3e9, 0.1e9)),
    "llama-3.1-8b": ((8.03e9, 0.01e9), None),
    "llama-3.2-1b": ((1.23e9, 0.01e9), None),
    "llama-3.2-3b": ((3.21e9, 0.01e9), None),
    "qwen2.5-7b": ((7.61e9, 0.01e9), None),
    "qwen3-0.6b": ((0.6e9, 0.1e9), None),
}


def _close(ours: float, published: tuple[float, float]) -> bool:
    """Within 1% of the published figure, or within what its last published digit allows: a "3.3B"
    stands for anything that rounds (3.25-3.35B) or truncates (3.3-3.4B) to it. Qwen3-30B-A3B's
    3.35B active parameters are published as "3.3B" (truncated: its 30.53B total is "30.5B");
    OLMoE's 1.28B active as "1.3B" (rounded)."""
    value, unit = published
    if abs(ours - value) <= 0.01 * value:
        return True
    return value - unit / 2 <= ours < value + unit


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_parameter_counts_match_published_totals(name):
    total, active = PUBLISHED[name]
    r = footprint(load_model(name), "bf16")
    assert _close(r.params, total), (name, r.params, total)
    if active:
        assert _close(r.active_params, active), (name, r.active_params, active)
    else:
        assert r.active_params == r.params


def test_moe_totals_within_one_percent_where_the_published_digits_allow():
    # the tighter statement, for the figures published to three digits or that happen to land within 1%
    for name, pub in [("mixtral-8x7b", (46.7e9, 12.9e9)), ("qwen3-30b-a3b", (30.5e9, None)),
                      ("qwen1.5-moe-a2.7b", (14.3e9, 2.7e9)), ("olmoe-1b-7b", (6.9e9, None))]:
        m = load_model(name)
        r = footprint(m, "bf16")
        assert abs(r.params / pub[0] - 1) < 0.01
        if pub[1]:
            assert abs(active_params(m) / pub[1] - 1) < 0.01


def test_qwen3_non_embedding_count():
    """Qwen3-30B-A3B's card also gives 29.9B non-embedding parameters; Qwen3-0.6B 0.44B."""
    for name, non_emb in (("qwen3-30b-a3b", 29.9e9), ("qwen3-0.6b", 0.44e9)):
        r = footprint(load_model(name), "bf16")
        emb = sum(g.params for g in r.groups if g.name in ("embeddings", "lm_head"))
        assert abs((r.params - emb) / non_emb - 1) < 0.01


# ------------------------------------------------------------------ config.json


def _cfg(**kw):
    base = dict(model_type="qwen2_moe", hidden_size=256, intermediate_size=1024, num_hidden_layers=6,
                num_attention_heads=4, num_key_value_heads=2, vocab_size=1000, max_position_embeddings=512,
                tie_word_embeddings=False)
    base.update(kw)
    return base


def test_config_moe_keys():
    f = hf_config_to_fields(_cfg(num_experts=16, num_experts_per_tok=2, moe_intermediate_size=128,
                                 shared_expert_intermediate_size=512, decoder_sparse_step=2, mlp_only_layers=[5]),
                            "x", "s")
    m = ModelSpec(**f)
    assert (m.num_experts, m.num_experts_per_tok, m.expert_intermediate) == (16, 2, 128)
    assert m.shared_expert_intermediate_size == 512 and m.shared_expert_gate
    # sparse layers: (i + 1) % 2 == 0 and not in mlp_only_layers -> 1, 3; 5 is forced dense
    assert m.dense_layers == (0, 2, 4, 5) and m.moe_layers == 2


def test_config_mixtral_and_deepseek_spellings():
    mix = ModelSpec(**hf_config_to_fields(_cfg(model_type="mixtral", num_local_experts=8, num_experts_per_tok=2),
                                          "m", "s"))
    assert mix.num_experts == 8 and mix.expert_intermediate == 1024 and mix.dense_layers == ()
    ds = ModelSpec(**hf_config_to_fields(
        _cfg(model_type="deepseek", architectures=["DeepseekForCausalLM"], n_routed_experts=64,
             num_experts_per_tok=6, moe_intermediate_size=64, n_shared_experts=2, first_k_dense_replace=1,
             moe_layer_freq=1), "d", "s"))
    assert ds.num_experts == 64 and ds.shared_expert_intermediate_size == 128 and not ds.shared_expert_gate
    assert ds.dense_layers == (0,)


def test_unknown_expert_key_is_refused_naming_it(tmp_path):
    cfg = _cfg(model_type="dbrx", architectures=["DbrxForCausalLM"], ffn_config={"moe_num_experts": 16})
    with pytest.raises(ValueError, match="ffn_config.moe_num_experts"):
        hf_config_to_fields(cfg, "x", "s")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    proc = run_cli("footprint", "--model", str(path), "--precision", "bf16")
    assert proc.returncode == 2 and "moe_num_experts" in proc.stderr and proc.stderr.count("\n") == 1


def test_moe_spec_checks():
    with pytest.raises(ValueError, match="num_experts_per_tok"):
        ModelSpec(**hf_config_to_fields(_cfg(num_experts=8), "x", "s"))
    with pytest.raises(ValueError, match="num_experts_per_tok"):
        ModelSpec(**{**hf_config_to_fields(_cfg(), "x", "s"), "num_experts": 8, "num_experts_per_tok": 9})
    with pytest.raises(ValueError, match="dense_layers"):
        ModelSpec(**{**hf_config_to_fields(_cfg(), "x", "s"), "num_experts": 8, "num_experts_per_tok": 2,
                     "dense_layers": (7,)})


def test_toml_with_bad_moe_field_is_one_line_error(tmp_path):
    text = (load_model("mixtral-8x7b").source and
            "\n".join(l for l in open(_catalog("mixtral-8x7b")).read().splitlines() if "num_experts_per_tok" not in l))
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    with pytest.raises(SpecError, match="num_experts_per_tok"):
        from roofline.catalog import load_model_file
        load_model_file(bad.resolve())


def _catalog(name):
    from roofline.catalog import find_file
    return find_file("models", name)


# ------------------------------------------------------------------ GEMMs


def test_expected_distinct_experts():
    assert expected_distinct_experts(8, 2, 1) == pytest.approx(2.0)
    assert expected_distinct_experts(128, 8, 1) == pytest.approx(8.0)
    assert expected_distinct_experts(8, 2, 4) == pytest.approx(8 * (1 - 0.75**4))
    assert expected_distinct_experts(64, 8, 4096) == pytest.approx(64.0)
    # more tokens never activate fewer experts
    d = [expected_distinct_experts(60, 4, b) for b in (1, 2, 4, 8, 16, 64)]
    assert d == sorted(d)


def test_moe_rows_keep_the_flops_of_k_experts_per_token():
    for tokens in (1, 3, 16, 512):
        rows = moe_gemms(tokens=tokens, hidden=2048, moe_layers=48, experts=128, top_k=8, expert_intermediate=768)
        by = {r[0]: r for r in rows}
        _, m, n, k, count = by["expert_up"]
        # flops of the routed experts: 2 x tokens x k x N x K per layer, whatever the number of distinct experts
        assert 2 * m * n * k * count == pytest.approx(2 * tokens * 8 * 2 * 768 * 2048 * 48)
        assert count == pytest.approx(48 * expected_distinct_experts(128, 8, tokens))
        assert by["router"][1:4] == (tokens, 128, 2048)


def test_prefill_expert_m_is_tokens_k_over_e():
    rows = moe_gemms(tokens=4096, hidden=4096, moe_layers=32, experts=8, top_k=2, expert_intermediate=14336)
    _, m, _, _, count = rows[1]
    assert m == pytest.approx(4096 * 2 / 8) and count == pytest.approx(32 * 8)


def test_decoder_gemms_without_moe_is_transformer_gemms():
    kw = dict(tokens=7, hidden=512, intermediate=1024, layers=4, heads=8, kv_heads=2, head_dim=64, gated_mlp=True)
    a, b = decoder_gemms(**kw), transformer_gemms(**kw)
    assert a.names == b.names and np.array_equal(a.m, b.m) and np.array_equal(a.count, b.count)


def test_mixed_dense_and_moe_layers():
    m = load_model("qwen1.5-moe-a2.7b")
    g, _ = make_workload(m, "decode", 1, 1, 16).gemms()
    assert "ffn_up" not in g.names and {"router", "expert_up", "expert_down", "shared_up", "shared_down"} <= set(g.names)
    router = g.names.index("router")
    assert g.n[router] == 61  # 60 experts + the shared expert's gate
    f = hf_config_to_fields(_cfg(num_experts=16, num_experts_per_tok=2, moe_intermediate_size=128,
                                 first_k_dense_replace=2), "x", "s")
    mixed = ModelSpec(**f)
    g, _ = make_workload(mixed, "decode", 1, 1, 16).gemms()
    assert g.count[g.names.index("ffn_up")] == 2 and g.count[g.names.index("router")] == 4


# ------------------------------------------------------------------ decode from the active weights


def test_moe_decode_ceiling_comes_from_the_active_weights():
    cpu = load_platform("genoa")
    m = load_model("qwen3-30b-a3b")
    r = estimate(cpu, m, precisions=["bf16"], phase="decode", batch=1, context=1024)
    p = r.precisions["bf16"]
    total = footprint(m, "bf16")
    # weights read per token: the active ones (minus the embedding table, which is looked up, not read)
    emb = next(g.bytes for g in total.groups if g.name == "embeddings")
    active_bytes = active_params(m) * 2 - emb
    assert p.weight_bytes == pytest.approx(active_bytes, rel=0.01)
    assert p.weight_bytes < 0.2 * total.total_bytes
    # the memory-bound step time is about weights / bandwidth: far faster than the total would allow
    b = r.platform.dram_bandwidth_bytes_per_s
    assert p.decode.token_latency_s < 1.2 * (p.weight_bytes + p.decode.kv_cache_bytes) / b
    assert p.decode.tokens_per_s > 3 * b / total.total_bytes


def test_moe_decode_reads_more_experts_at_larger_batch():
    cpu = load_platform("genoa")
    m = load_model("mixtral-8x7b")
    w = [estimate(cpu, m, precisions=["bf16"], phase="decode", batch=b, context=64).precisions["bf16"].weight_bytes
         for b in (1, 2, 8, 64)]
    assert w == sorted(w) and w[-1] / w[0] > 3


def test_estimate_qwen3_moe_decode_q4_k_is_memory_bound():
    proc = run_cli("estimate", "--model", "qwen3-30b-a3b", "--cpu", "genoa", "--phase", "decode",
                   "--precision", "q4_k", "--json")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    p = r["precisions"]["q4_k"]
    assert p["decode"]["bound"] == "memory"
    assert all(g["bound"] == "memory" for g in p["gemms"])


# ------------------------------------------------------------------ accounting regressions


def test_head_dim_different_from_hidden_over_heads():
    """Qwen3-0.6B: 16 heads of 128 on a hidden size of 1024 (not 64)."""
    m = load_model("qwen3-0.6b")
    assert m.head_size == 128 and m.hidden_size // m.num_attention_heads == 64
    g, _ = make_workload(m, "decode", 1, 1, 16).gemms()
    qkv = g.names.index("qkv")
    assert g.n[qkv] == (16 + 2 * 8) * 128 and g.k[g.names.index("attn_out")] == 16 * 128
    attn = next(x for x in footprint(m, "bf16").groups if x.name == "attention projections")
    assert attn.params == 28 * (1024 * 2048 + 2 * 1024 * 1024 + 2048 * 1024)


def test_grouped_query_kv_cache_bytes():
    """KV cache: 2 x layers x batch x kv_heads x head_dim x context elements, not query heads."""
    m = load_model("llama-3.1-8b")
    r = estimate(load_platform("genoa"), m, precisions=["bf16"], phase="decode", batch=2, context=1000,
                 kv_dtype="fp16")
    assert r.precisions["bf16"].decode.kv_cache_bytes == 2 * 32 * 2 * 8 * 128 * 1000 * 2


@pytest.mark.parametrize("name,tied", [("qwen3-0.6b", True), ("llama-3.1-8b", False), ("llama-3.2-1b", True)])
def test_tied_and_untied_embeddings(name, tied):
    m = load_model(name)
    assert m.tie_word_embeddings is tied
    r = footprint(m, "bf16")
    lm = [g for g in r.groups if g.name == "lm_head"]
    assert (not lm) if tied else lm[0].params == m.vocab_size * m.hidden_size
    copy = footprint(m, "bf16", count_tied_lm_head_copy=True)
    assert copy.params - r.params == (m.vocab_size * m.hidden_size if tied else 0)
    # the decode step reads an lm_head either way (a tied one is the embedding table)
    g, lm_mask = make_workload(m, "decode", 1, 1, 16).gemms()
    assert g.names[-1] == "lm_head" and lm_mask[-1] and math.prod((g.n[-1], g.k[-1])) == m.vocab_size * m.hidden_size


def test_footprint_counts_every_expert():
    m = load_model("mixtral-8x7b")
    r = footprint(m, "int8-weight-only")
    ex = next(g for g in r.groups if g.name == "expert projections")
    assert ex.params == 32 * 8 * 3 * 4096 * 14336 and ex.quantized
    router = next(g for g in r.groups if g.name == "routers")
    assert router.params == 32 * 8 * 4096 and not router.quantized
    proc = run_cli("footprint", "--model", "mixtral-8x7b", "--precision", "bf16")
    assert proc.returncode == 0 and "active per token" in proc.stdout
