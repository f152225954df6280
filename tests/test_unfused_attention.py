"""Attention as llama.cpp runs it without flash attention: a KQ matmul writes every score of the cells in view, the
softmax masks and rewrites them, the KQV matmul reads them back (src/llama-graph.cpp, build_attn_mha, at 0c1e570).
Each score is computed whether the causal mask keeps it or not, and moves 20 bytes through memory
(``unfused_score_bytes``); the stack's rule says which runs did so (before flash attention became llama.cpp's
default, or where a record says it was off)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from roofline.calc.ops import attention
from roofline.catalog import load_platform
from roofline.catalog.records import load_records
from roofline.catalog.stacks import load_stack
from roofline.model.layout import make_layout
from roofline.model.resources import Resources
from roofline.model.step import evaluate_ops
from roofline.spec.op_costs import cost
from roofline.spec.stack import UnfusedAttentionRule, attention_form
from roofline.spec.vocab import AttentionForm, FigureKind, NonGemmMode

PREFILL = dict(batch=2, q_len=512, k_len=512, heads=32, kv_heads=8, head_dim=64, layers=16, causal=True, cached=False,
               softmax_ops=11.0)
DECODE = dict(batch=4, q_len=1, k_len=640, heads=32, kv_heads=8, head_dim=64, layers=16, causal=False, cached=True,
              softmax_ops=11.0)


def test_the_score_bytes_are_counted_from_the_graph():
    """f32 KQ written (4), the softmax's read and f32 write (8), the KQV matmul's conversion to f16 (4 + 2) and its
    read of that copy (2)."""
    assert cost("unfused_score_bytes") == 4 + 8 + (4 + 2) + 2


def test_an_unfused_prefill_scores_the_whole_rectangle_and_moves_its_scores_by_hand():
    fused, unfused = attention(**PREFILL), attention(**PREFILL, bytes_per_score=20.0)
    pairs = 16 * 2 * 32 * 512 * 512  # layers x B x h x q x k: every pair, the masked ones too
    assert fused.flops == 4.0 * 64 * pairs / 2  # a fused causal kernel skips the keys after each query
    assert unfused.flops == 4.0 * 64 * pairs and unfused.vector_flops == 11.0 * pairs
    assert unfused.score_bytes == 20.0 * pairs and fused.score_bytes == 0.0
    assert unfused.score_working_set == 4.0 * 32 * 512 * 512  # one prompt's call of one layer, f32
    assert unfused.act_elements == fused.act_elements and unfused.kv_elements == fused.kv_elements


def test_an_unfused_decode_step_moves_every_sequences_scores_by_hand():
    """One decode call holds all B queries; over a shared buffer (span 4) each scores all 4 sequences' cells."""
    one, shared = attention(**DECODE, bytes_per_score=20.0), attention(**DECODE, bytes_per_score=20.0, shared_kv=4)
    assert one.score_bytes == 20.0 * 16 * 4 * 32 * 640 and one.score_working_set == 4.0 * 32 * 640 * 4
    assert shared.score_bytes == 4 * one.score_bytes and shared.score_working_set == 4 * one.score_working_set
    assert one.flops == attention(**DECODE).flops  # a decode query scores every cached key either way


def test_a_prefill_at_a_depth_moves_the_scores_against_the_cache_too():
    p = 2048
    unfused = attention(**PREFILL, prefix=p, bytes_per_score=20.0)
    fresh = 16 * 2 * 32 * 512 * 512
    assert unfused.score_bytes == pytest.approx(20.0 * (fresh + 16 * 2 * 32 * 512 * p))
    assert unfused.score_working_set == 4.0 * 32 * 512 * (512 + p)
    assert attention(**PREFILL, prefix=p).score_bytes == 0.0


def test_the_scores_cost_their_bytes_at_the_level_they_fit():
    """The attention op's memory time grows by the score bytes over the bandwidth of the level one call's scores fit:
    a prompt of 512 keeps them in the LLC of a Genoa socket, one of 8,192 sends them to DRAM."""
    p = load_platform("genoa")
    res = Resources(p, make_layout(p, sockets=1))
    b_l2, b_llc, b_dram = (float(np.ravel(b)[0]) for b in res.bandwidths())
    llc = res.llc_capacity()
    for q, bandwidth in ((512, b_llc), (8192, b_dram)):
        kw = {**PREFILL, "q_len": q, "k_len": q}
        fused = evaluate_ops(res, [attention(**kw)], NonGemmMode.FP32, "fp16", llc, ())
        unfused_op = attention(**kw, bytes_per_score=20.0)
        unfused = evaluate_ops(res, [unfused_op], NonGemmMode.FP32, "fp16", llc, ())
        assert float(unfused.t_memory[..., 0]) == pytest.approx(
            float(fused.t_memory[..., 0]) + unfused_op.score_bytes / bandwidth)


def test_the_rule_goes_by_the_records_word_then_its_date():
    rule = UnfusedAttentionRule(before="2025-08-31")
    assert attention_form(rule, "2024-11-07") is AttentionForm.UNFUSED
    assert attention_form(rule, "2026-12-06") is AttentionForm.FUSED
    assert attention_form(rule, None) is AttentionForm.FUSED  # an estimate: today's build, flash attention on
    assert attention_form(rule, "2026-12-06", flash_attention=False) is AttentionForm.UNFUSED
    assert attention_form(rule, "2024-11-07", flash_attention=True) is AttentionForm.FUSED
    assert attention_form(None, "2024-11-07", flash_attention=False) is AttentionForm.FUSED  # a stack that always fuses
    assert attention_form(UnfusedAttentionRule(), None) is AttentionForm.UNFUSED
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        UnfusedAttentionRule(before="31/08/2025")


def test_a_record_that_ran_without_flash_attention_is_priced_slower_in_prefill():
    """The Zen 5 guest's q4_0 record (flash attention off, its report says) through llama.cpp's profile: its prefill
    figures predicted from an unfused attention, longer than the same record said to have run it fused."""
    from roofline.fidelity.figures import figures
    from roofline.fidelity.fit import params_of, predict

    profile = load_stack("llama.cpp")
    rec = next(r for r in load_records() if r.id == "zen5-2vcpu-r3-llamacpp-batched-q4_0-2026-12-06")
    assert rec.record.flash_attention is False
    said_on = dataclasses.replace(rec, record=dataclasses.replace(rec.record, flash_attention=True))
    q = params_of(profile)

    def prefill(r):
        figs = figures(r, profile.path_rules, kernels=profile.kernels, shared_kv=profile.shared_kv,
                       barriers=profile.barriers, unfused_attention=profile.unfused_attention)
        return [(predict(f, q), FigureKind(f.kind).is_rate) for f in figs if f.phase == "prefill"]

    off, on = prefill(rec), prefill(said_on)
    assert off and len(off) == len(on)
    for (slow, rate), (fast, _) in zip(off, on):
        assert slow < fast if rate else slow > fast


def test_a_record_must_agree_with_its_reports_flash_attention(tmp_path):
    """A record that takes its figures from a llama.cpp validate report (flash attention off) and says it was on is
    refused, naming the report's field; without a word of its own it takes the report's."""
    import shutil

    from clitools import REPO

    from roofline.catalog.records import load_record
    from roofline.errors import SpecError

    src = REPO / "validation" / "records" / "zen5-2vcpu-r3-llamacpp-batched-q4_0-2026-12-06.toml"
    for d in ("records", "results"):
        (tmp_path / d).mkdir()
    report = "zen5-2vcpu-r3-llamacpp-q4_0.json"
    shutil.copy(REPO / "validation" / "results" / report, tmp_path / "results" / report)
    text = src.read_text()
    line = next(x for x in text.splitlines() if x.startswith("flash_attention ="))
    (tmp_path / "records" / "on.toml").write_text(text.replace(line, "flash_attention = true"))
    (tmp_path / "records" / "unsaid.toml").write_text(text.replace(line, ""))
    with pytest.raises(SpecError, match="settings.flash_attn"):
        load_record(tmp_path / "records" / "on.toml")
    assert load_record(tmp_path / "records" / "unsaid.toml").record.flash_attention is False


def test_flash_attention_is_a_llama_cpp_option():
    """`validate --flash-attention` sets llama.cpp's attention; with the torch engine it is refused in one line."""
    from clitools import run_cli

    proc = run_cli("validate", "--model", "bert-base", "--flash-attention", "on")
    assert proc.returncode == 2 and "--flash-attention: a llama.cpp option" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
