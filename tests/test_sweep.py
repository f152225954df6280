"""The sweep: every row is what `estimate` gives for that point; CSV and JSON lines."""

from __future__ import annotations

import csv
import io
import json

import pytest
from clitools import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.catalog import load_model, load_platform
from estimates import estimate
from roofline.model.sweep import COLUMNS, plane


@settings(max_examples=30, deadline=None)
@given(model=st.sampled_from(["bert-base", "distilbert-base", "llama-3.2-1b", "qwen3-0.6b", "olmoe-1b-7b",
                              "qwen1.5-moe-a2.7b", "mixtral-8x7b"]),
       cpu=st.sampled_from(["icx", "gnr", "genoa", "milan"]),
       precision=st.sampled_from(["fp32", "bf16", "int8-dynamic", "int8-static", "int8-weight-only", "w4a8"]),
       batches=st.lists(st.integers(1, 16), min_size=1, max_size=3, unique=True),
       seqs=st.lists(st.integers(1, 512), min_size=1, max_size=3, unique=True),
       decode=st.booleans())
def test_rows_match_estimate(model, cpu, precision, batches, seqs, decode):
    m = load_model(model)
    phase = "decode" if decode and m.family == "decoder" else None
    p = plane(load_platform(cpu), m, precision, batches, seqs, phase=phase, context=300 if phase else None)
    rows = list(p.rows())
    assert len(rows) == len(batches) * len(seqs)
    for row in rows[:3]:
        e = estimate(load_platform(cpu), m, precisions=[precision], baseline=precision, batch=row["batch"],
                     seq_len=row["seq_len"], phase=phase, context=300 if phase else None)
        pr = e.precisions[precision]
        assert row["gemm_time_s"] == pytest.approx(pr.gemm_time_s, rel=1e-12)
        assert row["step_time_s"] == pytest.approx(pr.step_time_s, rel=1e-12)
        assert row["aggregate_ops_per_s"] == pytest.approx(pr.aggregate_ops_per_s, rel=1e-12)
        assert row["weight_bytes"] == pytest.approx(pr.weight_bytes) and row["llc_resident"] == pr.llc_resident
        assert row["throughput_per_s"] == pytest.approx(row["batch"] / row["step_time_s"])
        assert row["m"] == e.workload.m


def test_csv_and_jsonl(tmp_path):
    proc = run_cli("sweep", "--model", "bert-base", "--cpu", "icx,gnr", "--precision", "fp32,int8-static",
                   "--batch", "1:4", "--seq-len", "128,256")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert len(rows) == 2 * 2 * 4 * 2 and tuple(rows[0]) == COLUMNS
    out = tmp_path / "grid.jsonl"
    assert run_cli("sweep", "--model", "llama-3.2-1b", "--cpu", "spr", "--phase", "decode", "--context", "512",
                   "--batch", "1,8", "-o", str(out)).returncode == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 2 * 2 and all(r["phase"] == "decode" and r["context"] == 512 for r in lines)
    assert all(r["step_time_s"] > 0 for r in lines)


@pytest.mark.parametrize("args, fragment", [(["--batch", "0"], "--batch"), (["--seq-len", "a:b"], "start:stop"),
                                            (["--precision", "int3"], "unknown precision")])
def test_sweep_bad_input(args, fragment):
    proc = run_cli("sweep", "--model", "bert-base", "--cpu", "icx", *args)
    assert proc.returncode == 2 and fragment in proc.stderr and "Traceback" not in proc.stderr
