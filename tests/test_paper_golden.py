"""The reference paper's stated numbers, reproduced from the catalogs (DESIGN.md, "golden tests")."""

from __future__ import annotations

import pytest
from clitools import run_cli
from estimates import estimate

from roofline.catalog import load_model, load_platform


@pytest.fixture(scope="module")
def bert():
    return load_model("bert-large")


def speed(result, precision):
    return next(s for s in result.speedups if s.precision == precision)


def test_ice_lake_int8_vs_fp32(bert):
    r = estimate(load_platform("icx"), bert, memory_model="paper", precisions=["fp32", "int8-static"])
    # both compute-bound, so the GEMM speedup is the ISA ratio 256/64
    for name in ("fp32", "int8-static"):
        assert {g.bound for g in r.precisions[name].gemms} == {"compute"}
    s = speed(r, "int8-static")
    assert s.gemm_speedup == pytest.approx(4.0, abs=1e-12)
    assert (s.f_gemm, s.non_gemm_speedup) == (0.885, 1.20)
    assert s.f_gemm_source.startswith("measured")
    assert round(s.end_to_end_ceiling, 2) == 3.15
    # 302 MB of INT8 weights do not fit Ice Lake's 48 MiB LLC
    assert not r.precisions["int8-static"].llc_resident


def test_cli_prints_ice_lake_ceiling_with_no_overrides():
    proc = run_cli("estimate", "--model", "bert-large", "--cpu", "icx", "--memory-model", "paper")
    assert proc.returncode == 0, proc.stderr
    row = next(line for line in proc.stdout.splitlines() if line.strip().startswith("int8-static") and "fp32" in line)
    cols = row.split()
    assert cols[-2] == "3.15x"  # ceiling S; the realistic estimate follows
    assert "4.00x" in row and float(cols[-1].rstrip("x")) < 3.15


def test_granite_rapids_bounds_and_llc(bert):
    r = estimate(load_platform("gnr"), bert, memory_model="paper", precisions=["fp32", "bf16", "int8-static"])
    p = r.precisions
    assert {g.bound for g in p["fp32"].gemms} == {"compute"}
    assert {g.bound for g in p["bf16"].gemms} == {"memory"}
    # INT8 fits the 504 MB LLC and is still memory-bound with B_eff
    assert p["int8-static"].llc_resident
    assert {g.bandwidth_kind for g in p["int8-static"].gemms} == {"llc-effective"}
    assert {g.bound for g in p["int8-static"].gemms} == {"memory"}
    assert not p["bf16"].llc_resident and not p["fp32"].llc_resident
    b_mem = r.platform.dram_bandwidth_bytes_per_s
    for g in p["int8-static"].gemms:
        assert b_mem < g.bandwidth_bytes_per_s < r.platform.llc_read_bytes_per_s
        assert g.balance_point < p["int8-static"].peak_ops_per_s / b_mem  # LLC lowers the balance point


def test_granite_rapids_speedups_from_the_catalog(bert):
    """The catalog alone gives the paper's 1.91 (INT8 vs BF16) and 11.13 (INT8 vs FP32) within 0.5%.

    The paper's measured DRAM bandwidth (Table 4) was lost; gnr.toml carries the 500 GB/s per
    socket that its 1.91 implies with its ~1000 GB/s LLC. The small gap to 11.13 is the per-channel
    scale bytes we count and the paper's own rounding.
    """
    r = estimate(load_platform("gnr"), bert, memory_model="paper", precisions=["fp32", "bf16", "int8-static"])
    agg = {n: p.aggregate_ops_per_s for n, p in r.precisions.items()}
    assert round(agg["int8-static"] / agg["bf16"], 2) == 1.91
    assert agg["int8-static"] / agg["fp32"] == pytest.approx(11.13, rel=5e-3)
    vs_bf16 = estimate(load_platform("gnr"), bert, memory_model="paper", precisions=["int8-static"], baseline="bf16")
    s = speed(vs_bf16, "int8-static")
    assert (s.f_gemm, s.non_gemm_speedup) == (0.727, 1.0)
    assert round(s.end_to_end_ceiling, 2) == 1.53


def test_granite_rapids_with_the_paper_gemm_speedup(bert):

    r = estimate(load_platform("gnr"), bert, memory_model="paper", precisions=["int8-static"], gemm_speedup=11.13)
    s = speed(r, "int8-static")
    assert (s.f_gemm, s.non_gemm_speedup) == (0.869, 2.06)
    assert round(s.end_to_end_ceiling, 2) == 7.06


def test_gnr_dram_value_is_the_one_1_91_implies():
    """Re-derive the 500 GB/s in gnr.toml: with B_LLC = 1000 GB/s and the paper's element sizes,
    INT8/BF16 = sum(bf16 bytes) / sum(D_X + D_Y + D_W B_mem/B_LLC) = 1.91 needs B_mem/B_LLC ~ 0.50."""
    # per layer, M = 256, fused QKV: X, W, Y element counts summed over the four GEMMs
    x = 256 * 1024 * 3 + 256 * 4096
    w = 1024 * 3072 + 1024 * 1024 + 2 * 1024 * 4096
    y = 256 * 3072 + 256 * 1024 * 2 + 256 * 4096
    bf16_bytes = 2 * (x + w + y)
    ratio = lambda r: bf16_bytes / (x + 4 * y + w * r)  # noqa: E731
    assert round(ratio(0.5), 2) == 1.91
    assert round(ratio(0.45), 2) != 1.91 and round(ratio(0.55), 2) != 1.91
    assert load_platform("gnr").dram.measured_gb_per_s.value / load_platform("gnr").llc.read_gb_per_s.value == 0.5


def test_int8_bert_large_size_against_llc(bert):
    """Weights streamed by the GEMMs: 24 x 12.58M INT8 + scales = 302.9 MB; fits 504 MiB, not 48 MiB."""
    r = estimate(load_platform("gnr"), bert, memory_model="paper", precisions=["int8-static"])
    w = r.precisions["int8-static"].weight_bytes
    assert w == 24 * (1024 * 3072 + 1024 * 1024 + 2 * 1024 * 4096) + 24 * 4 * (3072 + 1024 + 4096 + 1024)
    assert w < 504 * 2**20 and w > 48 * 2**20
