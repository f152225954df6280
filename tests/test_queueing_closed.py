"""The closed forms of roofline.calc.queueing_closed, by hand and against each other."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.calc import queueing_closed as qc


def test_erlang_c_by_hand():
    # M/M/1: P(wait) = rho
    assert qc.erlang_c(1, 0.7) == pytest.approx(0.7)
    # M/M/2, a = 1: B_2 = (1/2) / (1 + 1 + 1/2) = 0.2; C = 2 * 0.2 / (2 - 1 * 0.8) = 1/3
    assert qc.erlang_c(2, 1.0) == pytest.approx(1 / 3)
    # textbook value: c = 4, a = 3 -> 0.5094
    assert qc.erlang_c(4, 3.0) == pytest.approx(0.509434, abs=1e-6)
    # the direct formula C = (a^c/c! * c/(c-a)) / (sum_{k<c} a^k/k! + a^c/c! * c/(c-a)) for c = 7, a = 5.5
    c, a = 7, 5.5
    top = a**c / math.factorial(c) * c / (c - a)
    direct = top / (sum(a**k / math.factorial(k) for k in range(c)) + top)
    assert qc.erlang_c(c, a) == pytest.approx(direct, rel=1e-12)
    assert qc.erlang_c(3, 3.5) == 1.0  # overloaded: everyone waits


def test_erlang_c_broadcasts_over_servers():
    c = np.array([1, 2, 8, 64])
    out = qc.erlang_c(c, 0.8 * c)
    assert out.shape == (4,)
    assert out[0] == pytest.approx(0.8)
    assert np.all(np.diff(out) < 0)  # at the same utilization, more servers wait less often


def test_mm1_is_exponential():
    lam, mu = 0.8, 1.0
    assert qc.mmc_wait_mean(lam, mu, 1) == pytest.approx(lam / (mu * (mu - lam)))  # rho / (mu - lam) = 4
    assert qc.mmc_wait_quantile(0.99, lam, mu, 1) == pytest.approx(math.log(0.8 / 0.01) / 0.2)
    # M/M/1 latency is Exp(mu - lam): p99 = ln(100) / (mu - lam)
    assert qc.mmc_latency_quantile(0.99, lam, mu, 1) == pytest.approx(math.log(100) / 0.2, rel=1e-9)
    assert qc.mmc_wait_quantile(0.1, lam, mu, 1) == 0.0  # 20% never wait


def test_mmc_latency_tail_limits():
    lam, mu, c = 2.5, 1.0, 3
    assert qc.mmc_latency_tail(0.0, lam, mu, c) == pytest.approx(1.0)
    # theta = c mu - lam equal to mu: the (1 + mu t) e^{-mu t} limit is continuous
    t = 1.7
    at = qc.mmc_latency_tail(t, 2.0, 1.0, 3)  # theta = 1 = mu
    near = qc.mmc_latency_tail(t, 2.0 + 1e-7, 1.0, 3)
    assert at == pytest.approx(near, rel=1e-5)
    assert qc.mmc_wait_mean(3.0, 1.0, 3) == np.inf


def test_md1_pollaczek_khinchine_and_atom():
    assert qc.md1_wait_mean(0.5, 1.0) == pytest.approx(0.5)  # rho d / (2 (1 - rho))
    assert qc.md1_wait_mean(0.4, 2.0) == pytest.approx(0.8 * 2 / (2 * 0.2))  # rho = 0.8
    assert qc.md1_wait_tail(0.0, 0.6, 1.0) == pytest.approx(0.6)  # P(W > 0) = rho
    assert qc.md1_wait_mean(1.0, 1.0) == np.inf


def test_md1_distribution_by_hand_below_one_service():
    # for t < d only k = 0 counts: P(W <= t) = (1 - rho) e^{lam t}
    lam, d, t = 0.5, 1.0, 0.6
    assert 1 - qc.md1_wait_tail(t, lam, d) == pytest.approx(0.5 * math.exp(0.3))
    # d <= t < 2d: (1 - rho) (e^{lam t} - lam (t - d) e^{lam (t - d)})
    t = 1.5
    expect = 0.5 * (math.exp(0.75) - 0.5 * 0.5 * math.exp(0.25))
    assert 1 - qc.md1_wait_tail(t, lam, d) == pytest.approx(expect)


@pytest.mark.parametrize("rho", [0.05, 0.3, 0.6, 0.8, 0.95, 0.99])
def test_md1_exact_sum_meets_the_asymptote_at_the_switch(rho):
    lam, d = rho, 1.0
    t = qc.MD1_EXACT_LIMIT / lam
    exact = qc.md1_wait_tail(t * (1 - 1e-12), lam, d)  # just inside the exact region
    asym = qc.md1_wait_tail(t * (1 + 1e-12), lam, d)  # just outside
    assert abs(exact - asym) < 1e-8


@settings(max_examples=40, deadline=None)
@given(rho=st.floats(0.05, 0.98), p=st.floats(0.5, 0.999))
def test_md1_quantile_inverts_the_tail(rho, p):
    w = qc.md1_wait_quantile(p, rho, 1.0)
    if w == 0:
        assert qc.md1_wait_tail(0.0, rho, 1.0) <= 1 - p + 1e-12
    else:
        assert qc.md1_wait_tail(w * (1 + 1e-6), rho, 1.0) <= 1 - p + 1e-9
        assert qc.md1_wait_tail(w * (1 - 1e-6), rho, 1.0) >= 1 - p - 1e-9


@settings(max_examples=40, deadline=None)
@given(c=st.integers(1, 64), rho=st.floats(0.05, 0.97), p=st.floats(0.5, 0.999))
def test_mmc_latency_quantile_inverts_the_tail(c, rho, p):
    lam = rho * c
    t = qc.mmc_latency_quantile(p, lam, 1.0, c)
    assert qc.mmc_latency_tail(t, lam, 1.0, c) == pytest.approx(1 - p, rel=1e-6)


def test_md1_waits_half_as_long_as_mm1():
    # Pollaczek-Khinchine: E[W] is proportional to (1 + c_s^2) / 2
    for rho in (0.3, 0.7, 0.9):
        assert qc.md1_wait_mean(rho, 1.0) == pytest.approx(qc.mmc_wait_mean(rho, 1.0, 1) / 2)


def test_allen_cunneen_is_exact_for_mmc_and_mg1():
    lam, c = 3.0, 4
    assert qc.allen_cunneen_wait_mean(lam, 1.0, 1.0, c) == pytest.approx(qc.mmc_wait_mean(lam, 1.0, c))
    assert qc.allen_cunneen_wait_quantile(0.99, lam, 1.0, 1.0, c) == pytest.approx(qc.mmc_wait_quantile(0.99, lam, 1.0, c))
    # c = 1 with deterministic service is Pollaczek-Khinchine exactly
    assert qc.allen_cunneen_wait_mean(0.7, 1.0, 0.0, 1) == pytest.approx(qc.md1_wait_mean(0.7, 1.0))

