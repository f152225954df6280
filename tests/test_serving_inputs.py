"""Request lengths, random streams and replication intervals of roofline.serving."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.errors import UserError
from roofline.serving.request_lengths import fixed_lengths, histogram_lengths, lognormal_lengths
from roofline.serving.sampling import Sampling, quantiles, replication_half_width, streams, t975


def test_fixed_lengths():
    d = fixed_lengths(384)
    assert d.is_fixed and d.mean == 384 and d.min == d.max == 384
    assert np.all(d.sample(np.random.default_rng(0), 5) == 384)


@settings(max_examples=25, deadline=None)
@given(mean=st.floats(4.0, 2000.0), sigma=st.floats(0.1, 1.5))
def test_lognormal_mean_is_exact_and_bounds_hold(mean, sigma):
    d = lognormal_lengths(mean, sigma)
    assert d.mean == pytest.approx(mean, rel=1e-9)
    assert d.min >= 1 and d.max <= math.ceil(4 * mean)
    assert d.prob.sum() == pytest.approx(1.0)


def test_lognormal_shape():
    narrow, wide = lognormal_lengths(256, 0.2, 16, 1024), lognormal_lengths(256, 0.8, 16, 1024)
    var = [float(((d.support - d.mean) ** 2) @ d.prob) for d in (narrow, wide)]
    assert var[0] < var[1]
    # sigma is the log-space spread: for a narrow distribution the CV is close to sigma
    assert math.sqrt(var[0]) / 256 == pytest.approx(0.2, rel=0.05)
    x = wide.sample(np.random.default_rng(1), 200_000)
    assert x.min() >= 16 and x.max() <= 1024
    assert x.mean() == pytest.approx(256, rel=0.01)


def test_histogram_normalises_and_merges():
    d = histogram_lengths([128, 32, 128, 512], [1, 2, 1, 0])
    assert list(d.support) == [32, 128]
    np.testing.assert_allclose(d.prob, [0.5, 0.5])
    assert d.mean == 80


def test_streams_are_prefixes_whatever_the_length_drawn():
    d = lognormal_lengths(100)
    short, long = streams(d, 3, 50, seed=4), streams(d, 3, 400, seed=4)
    np.testing.assert_array_equal(short[0], long[0][:, :50])
    np.testing.assert_array_equal(short[1], long[1][:, :50])
    other = streams(d, 3, 50, seed=5)
    assert not np.array_equal(short[0], other[0])
    # unit-rate Poisson: the mean gap is 1
    assert np.diff(long[0], axis=1).mean() == pytest.approx(1.0, rel=0.1)


def test_student_t_and_half_width_by_hand():
    assert t975(1) == 12.706 and t975(30) == 2.042
    assert t975(31) == pytest.approx(2.0395, abs=1e-3)  # the expansion continues the table
    assert t975(1000) == pytest.approx(1.9623, abs=1e-3)
    # values 1, 2, 3: s = 1, half-width t_{0.975,2} / sqrt(3)
    assert replication_half_width([1.0, 2.0, 3.0]) == pytest.approx(4.303 / math.sqrt(3))
    assert replication_half_width([5.0]) == np.inf


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 500), seed=st.integers(0, 1000))
def test_quantiles_match_numpy(n, seed):
    x = np.random.default_rng(seed).exponential(1.0, n)
    np.testing.assert_allclose(quantiles(x, (0.5, 0.99)), np.quantile(x, [0.5, 0.99]), rtol=1e-12)


def test_sampling_sizes_runs_by_time_on_large_servers():
    s = Sampling(requests=2000, warmup=500, cycles=10, warmup_cycles=3, max_requests=50_000)
    meas, warm, tail = s.rows(np.array([10.0, 1000.0, 1e6]), 8)
    assert list(meas) == [2000, 10_000, 50_000]
    assert list(warm) == [500, 3000, 50_000]
    assert list(tail) == [9, 9, 9]
    with pytest.raises(UserError, match="max_requests"):
        Sampling(requests=100, max_requests=50)
