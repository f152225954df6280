"""The dynamic-batching queue simulation (roofline.serving.dynamic_batching) against closed forms, a plain
per-request reference implementation, and the properties a queue must have."""

from __future__ import annotations

import heapq
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roofline.calc import queueing_closed as qc
from roofline.errors import UserError
from roofline.serving.dynamic_batching import (
    BatchTable,
    TokenTable,
    bare_latency_p99,
    batch_queue_path,
    latency_curve,
    max_rate,
    offline_throughput,
    simulate_server,
)
from roofline.serving.request_lengths import fixed_lengths, histogram_lengths, lognormal_lengths
from roofline.serving.sampling import Sampling

pytestmark = pytest.mark.slow  # the file takes seconds: out of the fast stage (pytest -m "not slow")

LONG = Sampling(requests=20_000, warmup=2_000, replications=10, seed=1)


def const(seconds):
    return lambda s, n, tok: np.full(np.shape(n), float(seconds))


def reference_path(arrivals, lengths, c, service, cap, max_wait, shortest, watermark=None):
    """The batching policy of the module docstring, one request at a time with a heap of free times."""
    wm = cap if watermark is None else watermark
    n = len(arrivals)
    free = [0.0] * c
    dispatch, end = [0.0] * n, [0.0] * n
    h = 0
    while h < n:
        f = heapq.heappop(free)
        acc, fit = 0, h
        for j in range(h, n):
            acc += lengths[j]
            if acc > cap:
                break
            fit = j
            if acc >= wm:
                break
        acc, t_full = 0, math.inf
        for j in range(h, n):
            acc += lengths[j]
            if acc > cap - shortest or acc >= wm:
                t_full = arrivals[j]
                break
        t = max(f, min(arrivals[h] + max_wait, t_full))
        e = h
        while e + 1 <= fit and arrivals[e + 1] <= t:
            e += 1
        s = float(service(np.array(0), np.array(e - h + 1), np.array(sum(lengths[h:e + 1]))))
        for j in range(h, e + 1):
            dispatch[j], end[j] = t, t + s
        heapq.heappush(free, t + s)
        h = e + 1
    return np.array(dispatch), np.array(end)


def affine_service(s, n, tok):
    return 0.3 + 0.01 * np.asarray(tok) + 0.05 * np.asarray(n)


# ----------------------------------------------------------------------------- exact sample paths


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    gaps=st.lists(st.sampled_from([0.0, 0.01, 0.05, 0.1, 0.3, 0.7, 1.5]), min_size=1, max_size=40),
    data=st.data(),
    c=st.integers(1, 4),
    cap=st.integers(1, 120),
    max_wait=st.sampled_from([0.0, 0.02, 0.2, 1.0]),
    watermark=st.one_of(st.none(), st.floats(0.0, 1.0)),
)
def test_vectorised_path_equals_the_reference(gaps, data, c, cap, max_wait, watermark):
    lengths = data.draw(st.lists(st.integers(1, 40), min_size=len(gaps), max_size=len(gaps)))
    arrivals = np.cumsum(gaps)
    wm = None if watermark is None else max(1, round(watermark * cap))
    d, e = batch_queue_path(arrivals, lengths, c, affine_service, max_batch_tokens=cap, max_wait_s=max_wait,
                            watermark_tokens=wm)
    d_ref, e_ref = reference_path(list(arrivals), lengths, c, affine_service, cap, max_wait, min(lengths), wm)
    np.testing.assert_allclose(d, d_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(e, e_ref, rtol=0, atol=1e-12)


def test_batching_policy_by_hand():
    # one instance, cap 3 requests of 10 tokens, service 1 s, wait up to 0.5 s
    a = [0.0, 0.1, 0.2, 0.3, 2.0, 5.0]
    d, e = batch_queue_path(a, [10] * 6, 1, const(1.0), max_batch_tokens=30, max_wait_s=0.5)
    # request 0 waits for the batch to fill: full when request 2 arrives at 0.2
    # request 3 waits until the instance is free at 1.2 (past its 0.8 deadline): alone
    # request 4 arrives at 2.0 to an idle instance, waits its 0.5 s: nobody comes; request 5 likewise
    np.testing.assert_allclose(d, [0.2, 0.2, 0.2, 1.2, 2.5, 5.5])
    np.testing.assert_allclose(e, [1.2, 1.2, 1.2, 2.2, 3.5, 6.5])
    # without the wait a free instance takes whatever is waiting: request 0 alone at once, then
    # requests 1-3 together when it frees at 1.0
    d, _ = batch_queue_path(a, [10] * 6, 1, const(1.0), max_batch_tokens=30)
    np.testing.assert_allclose(d, [0.0, 1.0, 1.0, 1.0, 2.0, 5.0])


def test_a_watermark_closes_the_batch_by_hand():
    # Intel's MLPerf BERT harness: a batch takes waiting samples until it holds the watermark's tokens
    # (-w), never more than the cap (-u). Cap 40, watermark 25, one instance busy until 1.0 with request 0.
    # At 1.0 requests 1-5 wait (10, 10, 10, 10, 10 tokens): 10 + 10 + 10 = 30 >= 25 closes the batch at three,
    # although a fourth would still fit the cap; requests 4 and 5 go next, at 2.0.
    a = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
    d, e = batch_queue_path(a, [10] * 6, 1, const(1.0), max_batch_tokens=40, watermark_tokens=25)
    np.testing.assert_allclose(d, [0.0, 1.0, 1.0, 1.0, 2.0, 2.0])
    # without it the cap alone bounds the batch: four requests of 10, then one
    d, _ = batch_queue_path(a, [10] * 6, 1, const(1.0), max_batch_tokens=40)
    np.testing.assert_allclose(d, [0.0, 1.0, 1.0, 1.0, 1.0, 2.0])
    # with a wait the batch is full once it reaches the watermark: request 0 waits for requests 1 and 2
    d, _ = batch_queue_path(a, [10] * 6, 1, const(1.0), max_batch_tokens=40, watermark_tokens=25, max_wait_s=5.0)
    np.testing.assert_allclose(d[:3], [0.2, 0.2, 0.2])
    # a watermark at the cap changes nothing
    for wait in (0.0, 0.25):
        np.testing.assert_array_equal(
            batch_queue_path(a, [10, 7, 12, 10, 3, 10], 2, affine_service, max_batch_tokens=30, max_wait_s=wait,
                             watermark_tokens=30),
            batch_queue_path(a, [10, 7, 12, 10, 3, 10], 2, affine_service, max_batch_tokens=30, max_wait_s=wait))


def test_offline_batches_close_at_the_watermark():
    # fixed lengths 10, cap 80, watermark 25: every batch holds ceil(25 / 10) = 3 requests
    times = np.linspace(1.0, 2.4, 8)  # per-request cost falls with the batch: unwatermarked, the cap's 8 win
    off = offline_throughput([2], BatchTable(times), fixed_lengths(10), max_batch_tokens=80, watermark_tokens=25)
    assert off.batch_requests[0] == 3 and off.rps[0] == pytest.approx(2 * 3 / times[2])
    assert offline_throughput([2], BatchTable(times), fixed_lengths(10), max_batch_tokens=80).batch_requests[0] == 8
    # unequal lengths: greedy packing closes each batch at the first request reaching 25 tokens
    lengths = histogram_lengths([6, 14], [1, 1])
    off = offline_throughput([1], TokenTable([1.0, 200.0], [1.0, 2.0]), lengths, max_batch_tokens=80,
                             watermark_tokens=25, requests=4000)
    assert 25 <= off.batch_tokens[0] < 25 + 14
    # at vanishing load a lone request waits for company only while it is under the watermark
    table = BatchTable([0.01, 0.015])
    assert bare_latency_p99(table, fixed_lengths(64), 1, max_batch_tokens=128, max_wait_s=0.004,
                            watermark_tokens=64)[0] == pytest.approx(0.01)
    assert bare_latency_p99(table, fixed_lengths(64), 1, max_batch_tokens=128, max_wait_s=0.004,
                            watermark_tokens=65)[0] == pytest.approx(0.014)


def test_batch_full_is_judged_without_future_lengths():
    # cap 25, shortest 5. Batch 1: after 10 + 10 tokens one more of 5 could fit, so it is not yet
    # full; request 2 (12 tokens) does not fit, and its arrival at 0.3 makes the batch full without it.
    # Batch 2 (requests 2, 3: 17 tokens) becomes full when request 4 arrives at 0.4; it starts when
    # the instance frees at 1.3. Request 4 then waits out its 5 s: nobody else comes.
    d, e = batch_queue_path([0.0, 0.1, 0.3, 0.35, 0.4], [10, 10, 12, 5, 10], 1, const(1.0), max_batch_tokens=25,
                            max_wait_s=5.0)
    np.testing.assert_allclose(d, [0.3, 0.3, 1.3, 1.3, 5.4])


# ----------------------------------------------------------------------------- closed forms


@pytest.mark.parametrize("rho", [0.5, 0.8])
def test_md1_mean_wait_and_p99_within_the_confidence_interval(rho):
    d = 0.02
    st_ = simulate_server(rho / d, [1], BatchTable([d]), fixed_lengths(128), max_batch_tokens=128, sampling=LONG)
    lo, hi = st_.mean_wait_ci_s[0, 0]
    assert lo <= qc.md1_wait_mean(rho / d, d) <= hi
    p99 = qc.md1_wait_quantile(0.99, rho / d, d) + d  # latency = wait + service
    lo, hi = st_.p99_ci_s[0, 0]
    assert lo <= p99 <= hi
    assert st_.p99_s[0, 0] == pytest.approx(p99, rel=0.05)
    assert st_.batch_requests[0, 0] == 1.0  # cap = one request: the unbatched queue
    assert st_.utilization[0, 0] == pytest.approx(rho, rel=1e-9)  # every request costs d


def exponential_lengths(mean_tokens: int = 100):
    """ceil(m X), X ~ Exp(1): geometric on 1, 2, ...; (L - 1/2) / m is Exp(1) to O(1/m^2) in mean."""
    k = np.arange(1, 20 * mean_tokens + 1)
    return histogram_lengths(k, np.exp(-(k - 1) / mean_tokens))


@pytest.mark.parametrize("c,rho", [(1, 0.7), (3, 0.75), (8, 0.85)])
def test_mmc_erlang_c_mean_wait_and_p99_within_the_confidence_interval(c, rho):
    m, mu = 100, 50.0  # 20 ms mean service

    def exp_service(s, n, tok):
        return (np.asarray(tok) - 0.5 * np.asarray(n)) / m / mu

    lam = rho * c * mu
    # cap 1 token: every request is longer than the cap and goes alone
    st_ = simulate_server(lam, [c], exp_service, exponential_lengths(m), max_batch_tokens=1, sampling=LONG)
    lo, hi = st_.mean_wait_ci_s[0, 0]
    w = qc.mmc_wait_mean(lam, mu, c)
    assert lo <= w <= hi
    lo, hi = st_.p99_ci_s[0, 0]
    p99 = qc.mmc_latency_quantile(0.99, lam, mu, c)
    assert lo <= p99 <= hi
    assert st_.p99_s[0, 0] == pytest.approx(p99, rel=0.05)


def test_allen_cunneen_approximates_mdc_within_ten_percent():
    d, c, rho = 0.01, 4, 0.8
    st_ = simulate_server(rho * c / d, [c], BatchTable([d]), fixed_lengths(64), max_batch_tokens=64, sampling=LONG)
    approx = qc.allen_cunneen_wait_mean(rho * c / d, d, 0.0, c)
    assert st_.mean_wait_s[0, 0] == pytest.approx(approx, rel=0.10)


def test_p99_at_99_percent_load_is_far_above_50_percent():
    d = 0.01
    # M/D/1 and a batching server with 4 instances, both at 50% and 99% of capacity
    md1 = simulate_server([0.5 / d, 0.99 / d], [1], BatchTable([d]), fixed_lengths(64), max_batch_tokens=64)
    assert md1.p99_s[0, 1] > 10 * md1.p99_s[0, 0]
    table = BatchTable(d * (0.4 + 0.6 * np.arange(1, 9)))
    cap = offline_throughput([4], table, fixed_lengths(64), max_batch_tokens=512).rps[0]
    batched = simulate_server([0.5 * cap, 0.99 * cap], [4], table, fixed_lengths(64), max_batch_tokens=512)
    assert batched.p99_s[0, 1] > 3 * batched.p99_s[0, 0]


# ----------------------------------------------------------------------------- offline and max_rate


CONFIGS = [
    ("fixed", fixed_lengths(128), 1, 1024, 0.0),
    ("fixed", fixed_lengths(128), 6, 1024, 0.002),
    ("lognormal", lognormal_lengths(128, 0.5, 16, 512), 3, 2048, 0.0),
    ("histogram", histogram_lengths([32, 128, 384], [3, 5, 2]), 2, 1536, 0.001),
]


def sublinear(kind):
    if kind == "fixed":
        return BatchTable(0.004 * (0.3 + 0.7 * np.arange(1, 9)))
    tok = np.array([16.0, 2048.0])
    return TokenTable(tok, 0.004 * (0.3 + 0.7 * tok / 128))


@pytest.mark.parametrize("kind,lengths,c,cap,wait", CONFIGS)
def test_offline_bounds_the_server_scenario(kind, lengths, c, cap, wait):
    svc = sublinear(kind)
    off = offline_throughput([c], svc, lengths, max_batch_tokens=cap)
    mr = max_rate(0.05, [c], svc, lengths, max_batch_tokens=cap, max_wait_s=wait)
    assert mr.meets[0]
    assert 0 < mr.rate_rps[0] <= off.rps[0]
    assert mr.stats.p99_s[0, 0] <= 0.05
    assert mr.rate_fail_rps[0] > mr.rate_rps[0]
    # overloaded, the server runs full batches: its throughput is the offline one
    over = simulate_server(1.5 * off.rps[0], [c], svc, lengths, max_batch_tokens=cap, max_wait_s=wait)
    assert over.throughput_rps[0, 0] == pytest.approx(off.rps[0], rel=0.02 if kind == "fixed" else 0.05)
    assert over.throughput_rps[0, 0] <= off.rps[0] * 1.001 or kind != "fixed"


def test_offline_picks_the_best_batch_size():
    # per-request cost falls to b = 3 then rises: the offline batch is 3, not the cap's 8
    times = np.array([1.0, 1.6, 2.1, 3.5, 5.0, 6.0, 7.0, 8.0])
    off = offline_throughput([2], BatchTable(times), fixed_lengths(10), max_batch_tokens=80)
    assert off.batch_requests[0] == 3
    assert off.rps[0] == pytest.approx(2 * 3 / 2.1)


def test_batching_raises_the_max_rate_when_service_is_flat():
    # memory-bound: a batch of up to 8 costs the same as one request
    flat = BatchTable(np.full(8, 0.01))
    one = max_rate(0.05, [2], flat, fixed_lengths(100), max_batch_tokens=100)
    eight = max_rate(0.05, [2], flat, fixed_lengths(100), max_batch_tokens=800)
    assert one.stats.batch_requests[0, 0] == 1.0
    assert eight.rate_rps[0] > 4 * one.rate_rps[0]
    # batch cap 1 is M/D/2: at its answer the simulated mean wait matches the closed form
    lam = one.rate_rps[0]
    assert one.offline_rps[0] == pytest.approx(200.0)
    sim = simulate_server(lam, [2], flat, fixed_lengths(100), max_batch_tokens=100, sampling=LONG)
    approx = qc.allen_cunneen_wait_mean(lam, 0.01, 0.0, 2)  # M/D/c: within a few percent
    assert sim.mean_wait_s[0, 0] == pytest.approx(approx, rel=0.1)


def test_slo_below_the_bare_service_time_meets_nothing():
    table = BatchTable(np.array([[0.02, 0.03], [0.005, 0.008]]))
    mr = max_rate(0.01, [4, 1], table, fixed_lengths(64), max_batch_tokens=128)
    assert list(mr.meets) == [False, True]
    assert mr.rate_rps[0] == 0.0 and np.isnan(mr.stats.p99_s[0, 0])
    assert mr.bare_p99_s[0] == pytest.approx(0.02)
    assert mr.rate_rps[1] > 0


def test_bare_latency_includes_the_batching_wait_only_when_another_request_fits():
    table = BatchTable([0.01, 0.015])
    assert bare_latency_p99(table, fixed_lengths(64), 1, max_batch_tokens=128, max_wait_s=0.004)[0] == pytest.approx(0.014)
    assert bare_latency_p99(table, fixed_lengths(64), 1, max_batch_tokens=64, max_wait_s=0.004)[0] == pytest.approx(0.01)


def test_conservative_search_never_answers_more():
    svc = sublinear("fixed")
    kw = dict(max_batch_tokens=1024, max_wait_s=0.001)
    plain = max_rate(0.03, [1, 4], svc, fixed_lengths(128), **kw)
    safe = max_rate(0.03, [1, 4], svc, fixed_lengths(128), conservative=True, **kw)
    assert np.all(safe.rate_rps <= plain.rate_rps)
    assert np.all(safe.stats.p99_ci_s[:, 0, 1] <= 0.03)


def test_latency_curve_points():
    svc = sublinear("fixed")
    curve = latency_curve([10.0, 100.0, 400.0], [2], svc, fixed_lengths(128), max_batch_tokens=1024)
    assert len(curve) == 1 and len(curve[0]) == 3
    pts = curve[0]
    assert [p["offered_rps"] for p in pts] == [10.0, 100.0, 400.0]
    assert set(pts[0]) >= {"offered_rps", "p50_s", "p99_s", "utilization"}
    assert all(p["p50_s"] <= p["p99_s"] for p in pts)
    assert pts[0]["utilization"] < pts[1]["utilization"] < pts[2]["utilization"] <= 1


# ----------------------------------------------------------------------------- properties


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    c=st.integers(1, 5),
    n=st.integers(5, 200),
    factor=st.floats(1.01, 3.0),
)
def test_unbatched_latency_is_pathwise_monotone_in_rate_and_instances(seed, c, n, factor):
    # FCFS G/G/c (Kiefer-Wolfowitz): compressing the arrivals never shortens a wait, one more
    # server never lengthens one; with batches of one request the engine must show both exactly
    rng = np.random.default_rng(seed)
    u = np.cumsum(rng.exponential(1.0, n))
    ln = rng.integers(1, 50, n)
    svc = lambda s, k, tok: 0.2 + 0.05 * np.asarray(tok)  # noqa: E731
    kw = dict(max_batch_tokens=1)
    _, slow = batch_queue_path(u, ln, c, svc, **kw)
    _, fast = batch_queue_path(u / factor, ln, c, svc, **kw)
    assert np.all(fast - u / factor >= slow - u - 1e-9)
    _, more = batch_queue_path(u, ln, c + 1, svc, **kw)
    assert np.all(more <= slow + 1e-9)


@settings(max_examples=8, deadline=None)
@given(c=st.integers(1, 8), per_batch=st.integers(1, 8), wait=st.sampled_from([0.0, 0.001]))
def test_p99_rises_with_load_and_falls_with_instances(c, per_batch, wait):
    svc = BatchTable(0.004 * (0.3 + 0.7 * np.arange(1, 9)))
    lengths, cap = fixed_lengths(64), 64 * per_batch
    cap_rps = offline_throughput([c], svc, lengths, max_batch_tokens=cap).rps[0]
    small = Sampling(requests=1000, warmup=300, replications=4)
    st_ = simulate_server(np.array([0.3, 0.6, 0.9]) * cap_rps, [c, c + 2], svc, lengths, max_batch_tokens=cap,
                          max_wait_s=wait, sampling=small)
    assert np.all(np.diff(st_.p99_s[0]) > 0)
    # the same offered rates on more instances are never slower
    assert np.all(st_.p99_s[1] <= st_.p99_s[0] * 1.02)


def test_fixed_seed_is_deterministic():
    svc = sublinear("fixed")
    kw = dict(max_batch_tokens=1024, max_wait_s=0.001, sampling=Sampling(requests=500, warmup=100, replications=3))
    a = simulate_server([50.0, 200.0], [2], svc, fixed_lengths(128), **kw)
    b = simulate_server([50.0, 200.0], [2], svc, fixed_lengths(128), **kw)
    np.testing.assert_array_equal(a.p99_s, b.p99_s)
    np.testing.assert_array_equal(a.p99_ci_s, b.p99_ci_s)
    kw["sampling"] = Sampling(requests=500, warmup=100, replications=3, seed=7)
    c = simulate_server([50.0, 200.0], [2], svc, fixed_lengths(128), **kw)
    assert not np.array_equal(a.p99_s, c.p99_s)


def test_scenarios_do_not_change_each_others_results():
    # common random numbers: a scenario's result does not depend on which others run beside it
    svc = BatchTable(np.array([0.004 * (0.3 + 0.7 * np.arange(1, 9)), 0.002 * (0.5 + 0.5 * np.arange(1, 9))]))
    kw = dict(max_batch_tokens=512, sampling=Sampling(requests=800, warmup=200, replications=3))
    both = simulate_server([[100.0], [300.0]], [2, 3], svc, fixed_lengths(64), **kw)
    alone = simulate_server([[300.0]], [3], BatchTable(svc.times_s[1]), fixed_lengths(64), **kw)
    assert both.p99_s[1, 0] == alone.p99_s[0, 0]


# ----------------------------------------------------------------------------- tables and bad input


def test_token_table_interpolates():
    t = TokenTable([16, 32, 64], [[1.0, 2.0, 4.0], [2.0, 2.0, 3.0]])
    out = t(np.array([0, 0, 1, 1]), np.ones(4, dtype=int), np.array([16, 24, 48, 64]))
    np.testing.assert_allclose(out, [1.0, 1.5, 2.5, 3.0])


def test_tables_must_cover_every_batch():
    with pytest.raises(UserError, match="max_batch_tokens=1024"):
        simulate_server(10.0, [1], BatchTable([0.01, 0.02]), fixed_lengths(128), max_batch_tokens=1024)
    with pytest.raises(UserError, match="spans 16-512 tokens"):
        simulate_server(10.0, [1], TokenTable([16, 512], [0.01, 0.02]), lognormal_lengths(128, 0.5, 16, 512),
                        max_batch_tokens=1024)


@pytest.mark.parametrize("bad", [0.0, -5.0, float("nan"), float("inf")])
def test_bad_rates_and_slos_raise_user_errors(bad):
    svc = BatchTable([0.01])
    with pytest.raises(UserError, match="rate_rps") as e:
        simulate_server(bad, [1], svc, fixed_lengths(64), max_batch_tokens=64)
    assert "\n" not in str(e.value)
    with pytest.raises(UserError, match="p99_slo_s"):
        max_rate(bad, [1], svc, fixed_lengths(64), max_batch_tokens=64)
    with pytest.raises(UserError, match="rate_rps"):
        latency_curve([10.0, bad], [1], svc, fixed_lengths(64), max_batch_tokens=64)


@pytest.mark.parametrize("call,name", [
    (lambda: fixed_lengths(0), "seq_len"),
    (lambda: fixed_lengths(-3), "seq_len"),
    (lambda: fixed_lengths(float("nan")), "seq_len"),
    (lambda: fixed_lengths(12.5), "seq_len"),
    (lambda: lognormal_lengths(float("nan")), "seq_len_mean"),
    (lambda: lognormal_lengths(0), "seq_len_mean"),
    (lambda: lognormal_lengths(100, sigma=0), "sigma"),
    (lambda: lognormal_lengths(100, hi=50), "seq_len_mean"),
    (lambda: histogram_lengths([10, 0], [1, 1]), "lengths"),
    (lambda: histogram_lengths([10, 20], [1, -1]), "weights"),
    (lambda: simulate_server(1.0, [0], BatchTable([0.01]), fixed_lengths(8), max_batch_tokens=8), "instances"),
    (lambda: simulate_server(1.0, [1], BatchTable([0.01]), fixed_lengths(8), max_batch_tokens=0), "max_batch_tokens"),
    (lambda: simulate_server(1.0, [1], BatchTable([0.01]), fixed_lengths(8), max_batch_tokens=8, max_wait_s=-1),
     "max_wait_s"),
    (lambda: simulate_server(1.0, [1], const(-1.0), fixed_lengths(8), max_batch_tokens=8), "service_time"),
    (lambda: simulate_server(1.0, [1], BatchTable([0.01]), fixed_lengths(8), max_batch_tokens=8, watermark_tokens=9),
     "watermark_tokens"),
    (lambda: max_rate(0.1, [1], BatchTable([0.01]), fixed_lengths(8), max_batch_tokens=8, watermark_tokens=0),
     "watermark_tokens"),
    (lambda: simulate_server(1.0, [1], const(float("nan")), fixed_lengths(8), max_batch_tokens=8), "service_time"),
    (lambda: Sampling(requests=0), "requests"),
    (lambda: Sampling(replications=0), "replications"),
    (lambda: BatchTable([0.01, -1]), "service time table"),
])
def test_bad_inputs_name_the_parameter(call, name):
    with pytest.raises(UserError) as e:
        call()
    msg = str(e.value)
    assert name in msg and "\n" not in msg
