"""Hand derivations of every formula, on shapes small enough to check on paper."""

from __future__ import annotations

import numpy as np
import pytest
from oracles import effective_bandwidth, gemm_roofline

from roofline.calc.aggregate import aggregate_throughput
from roofline.calc.amdahl import amdahl
from roofline.calc.gemm import activation_meta_bytes, arithmetic_intensity, gemm_flops, operand_bytes, weight_meta_bytes
from roofline.calc.levels import llc_resident
from roofline.calc.roofline import attainable, balance_point, compute_bound, compute_peak
from roofline.calc.shapes import gemm_list, transformer_gemms


def test_flops_and_bytes_by_hand():
    # Y[256,1024] = X[256,1024] W[1024,1024]^T, INT8 in, FP32 out
    assert gemm_flops(256, 1024, 1024) == 2 * 256 * 1024 * 1024 == 536_870_912
    d_x, d_w, d_y = operand_bytes(256, 1024, 1024, 1, 1, 4)
    assert (d_x, d_w, d_y) == (262_144, 1_048_576, 1_048_576)
    # AI = 2MNK / (e_x MK + e_w NK + e_y MN) = 536870912 / 2359296 = 227.555...
    assert arithmetic_intensity(gemm_flops(256, 1024, 1024), d_x + d_w + d_y) == pytest.approx(536_870_912 / 2_359_296)
    assert 536_870_912 / 2_359_296 == pytest.approx(227.5556, abs=1e-4)


def test_fp32_intensity_of_bert_large_ffn_down():
    # M=256, N=1024, K=4096, all FP32: 2*256*1024*4096 / (4*(256*4096 + 1024*4096 + 256*1024)) = 97.52
    f = gemm_flops(256, 1024, 4096)
    d = sum(operand_bytes(256, 1024, 4096, 4, 4, 4))
    assert f / d == pytest.approx(2 * 256 * 1024 * 4096 / (4 * (256 * 4096 + 1024 * 4096 + 256 * 1024)))
    assert f / d == pytest.approx(97.5238, abs=1e-4)


def test_quantization_metadata_bytes():
    assert weight_meta_bytes(1024, 4096, "per-channel", None, 4, False) == 4096  # 1024 fp32 scales
    assert weight_meta_bytes(1024, 4096, "per-channel", None, 4, True) == 8192  # plus zero points
    # 4096 x 4096 INT4 with group 128, bf16 scales and zero points: 4096 * 32 groups * (2 + 2) bytes
    assert weight_meta_bytes(4096, 4096, "per-group", 128, 2, True) == 4096 * 32 * 4
    assert weight_meta_bytes(1024, 100, "per-group", 64, 4, False) == 1024 * 2 * 4  # ceil(100/64) = 2
    assert weight_meta_bytes(8, 8, "none", None, 4, False) == 0
    assert activation_meta_bytes(256, "per-token", 4) == 1024
    assert activation_meta_bytes(256, "per-tensor", 4) == 4
    with pytest.raises(ValueError):
        weight_meta_bytes(8, 8, "per-group", None, 4, False)


def test_peak_and_balance_point_ice_lake():
    # 2 sockets x 32 cores x 2.6 GHz x 64 flop/cycle = 10.6496 TFLOP/s; vs 409.6 GB/s -> 26 flop/B
    p = compute_peak(2, 32, 2.6e9, 64)
    assert p == pytest.approx(10.6496e12)
    assert balance_point(p, 409.6e9) == pytest.approx(26.0)
    # INT8 VNNI: 4x the ops per cycle at the same clock
    assert compute_peak(2, 32, 2.6e9, 256) / p == 4.0


def test_roofline_min_and_bound():
    assert attainable(100.0, 2.0, 10.0) == 20.0  # memory-bound: AI x B
    assert attainable(100.0, 20.0, 10.0) == 100.0  # compute-bound: P
    assert not compute_bound(9.99, 100.0, 10.0)
    assert compute_bound(10.0, 100.0, 10.0)  # at the balance point counts as compute


def test_effective_bandwidth_by_hand():
    # D_X = 1, D_W = 6, D_Y = 1 bytes; B_mem = 1, B_LLC = 2: B_eff = 8 / (1 + 3 + 1) = 1.6
    assert effective_bandwidth(1, 6, 1, 1.0, 2.0) == pytest.approx(1.6)
    # all bytes weights -> B_LLC; no weight bytes -> B_mem
    assert effective_bandwidth(0, 5, 0, 1.0, 2.0) == pytest.approx(2.0)
    assert effective_bandwidth(3, 0, 4, 1.0, 2.0) == pytest.approx(1.0)
    assert llc_resident(442e6, 504 * 2**20) and not llc_resident(442e6, 48 * 2**20)


def test_aggregate_by_hand():
    # two shapes: 10 calls of 1 Gop at 1 Top/s (10 ms) and 1 call of 10 Gop at 10 Top/s (1 ms)
    # P_agg = 20 Gop / 11 ms = 1.818 Top/s
    agg = aggregate_throughput([10, 1], [1e9, 10e9], [1e12, 10e12])
    assert agg == pytest.approx(20e9 / 11e-3)


@pytest.mark.parametrize(
    "f, s, s_non, expected",
    [(0.885, 4.0, 1.20, 3.15), (0.869, 11.13, 2.06, 7.06), (0.727, 1.91, 1.0, 1.53)],
)
def test_amdahl_reference_paper(f, s, s_non, expected):
    assert round(float(amdahl(f, s, s_non)), 2) == expected


def test_amdahl_limits():
    assert amdahl(0.0, 10.0, 1.0) == 1.0
    assert amdahl(1.0, 10.0, 1.0) == pytest.approx(10.0)
    assert amdahl(0.5, 1e12, 1.0) == pytest.approx(2.0)


def test_grid_matches_scalar_evaluation():
    """The vectorised grid computes, element by element, what the scalar formulas give."""
    m = np.array([1, 256, 4096])
    n, k = np.array([4096, 1024, 1024]), np.array([4096, 4096, 1024])
    e = np.array([[4.0], [1.0]])
    peak = np.array([[1e13], [4e13]])
    grid = gemm_roofline(m, n, k, e, e, np.array([[4.0], [4.0]]), peak, 4e11, 1e12, np.array([[False], [True]]))
    for i in range(2):
        for j in range(3):
            dx, dw, dy = operand_bytes(m[j], n[j], k[j], e[i, 0], e[i, 0], 4.0)
            bw = effective_bandwidth(dx, dw, dy, 4e11, 1e12) if i == 1 else 4e11
            ai = gemm_flops(m[j], n[j], k[j]) / (dx + dw + dy)
            assert grid.bandwidth[i, j] == pytest.approx(bw)
            assert grid.attainable[i, j] == pytest.approx(min(peak[i, 0], ai * bw))
            assert grid.compute_bound[i, j] == (ai >= peak[i, 0] / bw)


def test_transformer_gemms_bert_large():
    g = transformer_gemms(tokens=256, hidden=1024, intermediate=4096, layers=24, heads=16, kv_heads=16, head_dim=64)
    assert g.names == ("qkv", "attn_out", "ffn_up", "ffn_down")
    assert list(zip(g.m, g.n, g.k, g.count)) == [(256, 3072, 1024, 24), (256, 1024, 1024, 24),
                                                  (256, 4096, 1024, 24), (256, 1024, 4096, 24)]
    # total linear-layer work: 24 layers x 2 x 256 x 1024 x 12288 = 154.6 GFLOP
    assert float((g.count * gemm_flops(g.m, g.n, g.k)).sum()) == 24 * 2 * 256 * 1024 * 12288
    sep = transformer_gemms(tokens=256, hidden=1024, intermediate=4096, layers=24, heads=16, kv_heads=16,
                            head_dim=64, fused_qkv=False)
    assert sep.names[0] == "q/k/v" and sep.n[0] == 1024 and sep.count[0] == 72


def test_transformer_gemms_gqa_and_gated():
    # Llama-3.2-1B: hidden 2048, 32 heads, 8 kv heads, head_dim 64, SwiGLU 8192
    g = transformer_gemms(tokens=1, hidden=2048, intermediate=8192, layers=16, heads=32, kv_heads=8, head_dim=64,
                          gated_mlp=True)
    assert g.n[0] == (32 + 2 * 8) * 64 == 3072
    assert g.n[2] == 2 * 8192
    sep = transformer_gemms(tokens=1, hidden=2048, intermediate=8192, layers=16, heads=32, kv_heads=8, head_dim=64,
                            fused_qkv=False)
    assert sep.names[:2] == ("q", "k/v") and sep.n[1] == 512 and sep.count[1] == 32


def test_non_positive_shape_is_refused():
    with pytest.raises(ValueError, match="positive"):
        gemm_list([("bad", 0, 10, 10, 1)])
