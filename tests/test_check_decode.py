"""`roofline check --phase decode`: a measured tokens/s ratio beside the decode ceiling, the gap split into
the engine's terms, each priced by the step evaluator; the two stories of CPU LLM engines."""

from __future__ import annotations

import pytest
from clitools import run_cli, run_json

from roofline.catalog import load_model, load_platform
from roofline.fidelity.check_decode import COMPUTE_BOUND, UNFUSED, WIDENED, Engine, check_decode


@pytest.fixture(scope="module")
def host():
    return load_platform("zen4-2vcpu")


def test_a_widen_to_float_int8_path_in_a_compute_bound_engine_is_no_faster(host):
    """An engine whose matmul is scalar (about 4 GB/s of FP32 weights for a 0.6B model) is compute-bound, so
    INT8 weights widened to floats in registers buy nothing: measured 1.88 / 1.83 tokens/s. The ceiling
    promises the byte ratio; the realistic estimate with that engine lands near 1.0x, and an engine that also
    writes the widened copy back and reads it again loses to FP32."""
    m = load_model("qwen3-0.6b")
    r = check_decode(host, m, "int8-weight-only", "fp32", throughput_speedup=1.88 / 1.83,
                     engine=Engine(ops_per_cycle=2.0))
    (c,) = r.comparisons
    row = c.rows[0]
    assert row.ceiling > 2.5  # memory-bound: about the 4x byte ratio of FP32 over INT8 weights
    assert 0.9 < row.realistic < 1.1
    assert {t.name: t.seconds for t in c.terms}[COMPUTE_BOUND] > 0
    assert c.explained_gap > 0.9
    written = check_decode(host, m, "int8-weight-only", "fp32", throughput_speedup=1.88 / 1.83,
                           engine=Engine(ops_per_cycle=2.0, widen=True)).comparisons[0]
    assert {t.name: t.seconds for t in written.terms}[WIDENED] > 0 and written.rows[0].realistic < row.realistic


def test_an_unfused_int4_dequant_path_gives_far_less_than_its_byte_ratio(host):
    m = load_model("llama-3.1-8b")
    fused = check_decode(host, m, "int4-weight-only", "bf16", throughput_speedup=1.3)
    unfused = check_decode(host, m, "int4-weight-only", "bf16", throughput_speedup=1.3,
                           engine=Engine(dequant="unfused"))
    from estimates import estimate

    p = estimate(host, m, precisions=["int4-weight-only"], baseline="bf16", phase="decode").precisions
    byte_ratio = p["bf16"].weight_bytes / p["int4-weight-only"].weight_bytes  # the lm_head stays in BF16
    assert byte_ratio > 2.5
    ceiling = fused.comparisons[0].rows[0].ceiling
    realistic = unfused.comparisons[0].rows[0].realistic
    assert realistic < 0.75 * ceiling and realistic < 0.6 * byte_ratio
    assert {t.name for t in unfused.comparisons[0].terms} >= {UNFUSED}


def test_decode_check_cli():
    data = run_json("check", "--phase", "decode", "--model", "qwen3-0.6b", "--cpu", "zen4-2vcpu", "--precision",
                    "int8-weight-only", "--baseline", "fp32", "--throughput-speedup", "1.03",
                    "--engine-ops-per-cycle", "2", "--stack", "none")
    (c,) = data["comparisons"]
    assert c["rows"][0]["ceiling"] > 2.5 and 0.8 < c["rows"][0]["realistic"] < 1.1
    bad = run_cli("check", "--phase", "decode", "--model", "bert-base", "--cpu", "icx", "--precision", "int8-static",
                  "--throughput-speedup", "2")
    assert bad.returncode == 2 and "encoder" in bad.stderr and len(bad.stderr.splitlines()) == 1
