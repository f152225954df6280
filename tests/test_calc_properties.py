"""Properties of the calculators over random inputs (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import effective_bandwidth, gemm_roofline

from roofline.calc.aggregate import aggregate_throughput
from roofline.calc.amdahl import amdahl
from roofline.calc.roofline import attainable

pos = st.floats(min_value=1e-3, max_value=1e15, allow_nan=False, allow_infinity=False)
dim = st.integers(min_value=1, max_value=65536)
esize = st.sampled_from([0.5, 1.0, 2.0, 4.0])


@given(peak=pos, ai=pos, bw=pos)
def test_attainable_never_exceeds_peak(peak, ai, bw):
    assert attainable(peak, ai, bw) <= peak


@given(peak=pos, ai=pos, bw=pos, factor=st.floats(min_value=1.0, max_value=1e3))
def test_attainable_monotone_in_bandwidth(peak, ai, bw, factor):
    assert attainable(peak, ai, bw * factor) >= attainable(peak, ai, bw)


@given(dx=pos, dw=pos, dy=pos, b_mem=pos, ratio=st.floats(min_value=1.0, max_value=100.0))
def test_effective_bandwidth_between_dram_and_llc(dx, dw, dy, b_mem, ratio):
    b_llc = b_mem * ratio
    b = effective_bandwidth(dx, dw, dy, b_mem, b_llc)
    assert b_mem * (1 - 1e-12) <= b <= b_llc * (1 + 1e-12)


@given(
    counts=st.lists(st.integers(min_value=1, max_value=1000), min_size=1, max_size=8),
    data=st.data(),
)
def test_aggregate_between_slowest_and_fastest(counts, data):
    n = len(counts)
    flops = data.draw(st.lists(pos, min_size=n, max_size=n))
    per_shape = data.draw(st.lists(pos, min_size=n, max_size=n))
    agg = aggregate_throughput(counts, flops, per_shape)
    assert min(per_shape) * (1 - 1e-9) <= agg <= max(per_shape) * (1 + 1e-9)


@given(f=st.floats(min_value=0.0, max_value=0.999), s=st.floats(min_value=1.0, max_value=1e6))
def test_amdahl_bounds_when_only_gemm_speeds_up(f, s):
    S = amdahl(f, s, 1.0)
    assert 1.0 - 1e-12 <= S <= 1.0 / (1.0 - f) + 1e-9
    assert S <= s + 1e-9


@settings(max_examples=50)
@given(m=dim, n=dim, k=dim, ex=esize, ew=esize, ey=esize, peak=pos, b_mem=pos, ratio=st.floats(1.0, 50.0))
def test_llc_residency_never_slows_a_gemm(m, n, k, ex, ew, ey, peak, b_mem, ratio):
    dram = gemm_roofline(m, n, k, ex, ew, ey, peak, b_mem, b_mem * ratio, False)
    llc = gemm_roofline(m, n, k, ex, ew, ey, peak, b_mem, b_mem * ratio, True)
    assert llc.attainable >= dram.attainable * (1 - 1e-12)
    assert llc.balance_point <= dram.balance_point * (1 + 1e-12)
    assert np.all(llc.attainable <= peak)
