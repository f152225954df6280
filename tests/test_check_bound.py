"""`check` leads with the bound: a measured rate above it (no run can be that fast on the stated description) is
said in the first line of the output, with the measurement's likely slips named, before the realistic comparison."""

from __future__ import annotations

import pytest
from clitools import run_cli
from rich.console import Console

import roofline
from roofline.catalog import resolve
from roofline.report.check_tables import render_check

BERT = dict(model="bert-large", cpu="spr", precision="int8-full", batch=8, seq_len=384)


def _hand_limit() -> float:
    """Samples/s no 2-socket 8480+ can beat on BERT-large at 384 tokens, by hand: every core at the datasheet's
    max turbo (above any all-core clock) doing AMX INT8 at 2,048 ops/cycle, and only the linear layers' work
    counted (attention, softmax and norms left out, so the work is understated): P / (2 * 384 * 24 * 12 * 1024^2),
    the linear layers holding 12 * 1024^2 weights per layer (q, k, v, o: 4 * 1024^2; the FFN: 2 * 1024 * 4096)."""
    p = resolve.platform("spr")[0]
    peak = (p.sockets.value * p.cores_per_socket.value * p.max_turbo_ghz["amx"].value * 1e9
            * p.compute["int8-amx"].ops_per_cycle.value)
    assert peak == pytest.approx(2 * 56 * 3.8e9 * 2048, rel=1e-12)
    linear_flops = 2 * 384 * 24 * (4 * 1024 * 1024 + 2 * 1024 * 4096)  # q, k, v, o and the two FFN matmuls
    return peak / linear_flops  # 3,758 samples/s


def _text(result, width: int = 120) -> list[str]:
    console = Console(width=width, record=True, color_system=None)
    console.print(render_check(result))
    return console.export_text().splitlines()


def test_a_rate_above_the_bound_leads_the_output():
    value = round(1.2 * _hand_limit())
    r = roofline.check(**BERT, samples_per_s=value)
    (row,) = r.rates
    assert row.upper_bound < _hand_limit() < value  # the tool's bound is tighter than the hand limit
    assert row.fraction_of_upper_bound == pytest.approx(value / row.upper_bound, rel=1e-12)
    assert row.ceiling <= row.upper_bound * (1 + 1e-12)  # the attainable ceiling is under the bound
    lines = _text(r)
    assert lines[0].startswith(f"! samples rate int8-full: the measured {value:,} /s is above the bound")
    text = " ".join(" ".join(lines).split())
    lead = text.split("check bert-large on spr")[0]  # all of it before the comparison's own headline
    for cause in ("the measurement or its description before the model", "sockets", "shorter sequences",
                  "a larger batch", "another (narrower) precision"):
        assert cause in lead, cause
    assert "is below what the run had" not in text  # not the platform file first


def test_a_rate_between_the_ceiling_and_the_bound_does_not_lead():
    """Above the attainable ceiling but under the bound: possible (a higher clock, more bandwidth than STREAM
    gives), so the platform's inputs are what the note questions, and the headline is the comparison."""
    at = roofline.check(**BERT, samples_per_s=100.0).rates[0]
    value = round((at.ceiling + at.upper_bound) / 2)
    r = roofline.check(**BERT, samples_per_s=value)
    (row,) = r.rates
    assert row.fraction_of_ceiling > 1 and row.fraction_of_upper_bound < 1 and row.suspect is None
    lines = _text(r)
    assert lines[0] == "check bert-large on spr: typed"
    assert any("is below what the run had" in n for n in r.notes)
    assert any(line.startswith("bound (the highest clock") for line in lines)


def test_the_command_line_says_it_first():
    proc = run_cli("check", "--model", "bert-large", "--cpu", "spr", "--precision", "int8-full", "--samples-per-s",
                   "5000", "--batch", "8", "--seq-len", "384", "--brief", env={"COLUMNS": "120"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("! samples rate int8-full: the measured 5,000 /s is above the bound")
