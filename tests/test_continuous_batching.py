"""Continuous batching for decoders (roofline.serving.continuous_batching): a token-by-token reference,
the limits at vanishing load and at saturation, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roofline.errors import UserError
from roofline.serving.continuous_batching import (
    DecodeStep,
    bare_latencies_p99,
    decode_path,
    decoder_max_rate,
    decoder_offline,
    simulate_decoder,
)
from roofline.serving.request_lengths import fixed_lengths, lognormal_lengths
from roofline.serving.sampling import Sampling

SMALL = Sampling(requests=600, warmup=150, replications=4)


def reference_decode(arrivals, prompts, out_len, k_max, prefill, step, cap=None):
    """The policy of the module docstring, one decode step at a time (gaps and step times are chosen
    so that no arrival falls exactly on a step boundary, where rounding would decide the order)."""
    n = len(arrivals)
    t, w = 0.0, 0
    running = []  # [request, generated, context]
    first, last = [None] * n, [None] * n
    while w < n or running:
        if not running and w < n:
            t = max(t, arrivals[w])
        if w < n and arrivals[w] <= t and len(running) < k_max:
            m, tok = 0, 0
            while (w + m < n and arrivals[w + m] <= t and len(running) + m < k_max
                   and (cap is None or m == 0 or tok + prompts[w + m] <= cap)):
                tok += prompts[w + m]
                m += 1
            t += float(prefill(np.array(0), np.array(float(tok))))
            for j in range(w, w + m):
                first[j] = t
                if out_len == 1:
                    last[j] = t
                else:
                    running.append([j, 1, prompts[j] + 1])
            w += m
        else:
            b = len(running)
            t += float(step(np.array(0), np.array(b), np.array(float(sum(r[2] for r in running)))))
            for r in running:
                r[1] += 1
                r[2] += 1
            for r in running:
                if r[1] == out_len:
                    last[r[0]] = t
            running = [r for r in running if r[1] < out_len]
    return np.array(first), np.array(last)


def linear_prefill(per_token=1e-3, fixed=5e-3):
    return lambda s, tok: fixed + per_token * np.asarray(tok, dtype=float)


def affine_step(k_max, base=0.02, growth=0.02, per_token=1e-6):
    return DecodeStep(base * (1 + growth * np.arange(k_max)), np.full(k_max, per_token))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    gaps=st.lists(st.sampled_from([0.0, 0.00317, 0.0213, 0.0517, 0.2111, 1.0379]), min_size=1, max_size=30),
    data=st.data(),
    out_len=st.integers(1, 12),
    k_max=st.integers(1, 5),
    cap=st.sampled_from([None, 10, 40]),
    per_token=st.sampled_from([0.0, 1e-4, 3e-3]),
)
def test_event_jumps_equal_the_token_by_token_reference(gaps, data, out_len, k_max, cap, per_token):
    prompts = data.draw(st.lists(st.integers(1, 30), min_size=len(gaps), max_size=len(gaps)))
    arrivals = np.cumsum(gaps)
    step = affine_step(k_max, per_token=per_token)
    pre = linear_prefill()
    first, last = decode_path(arrivals, prompts, out_len, k_max, pre, step, max_prefill_tokens=cap)
    f_ref, l_ref = reference_decode(list(arrivals), prompts, out_len, k_max, pre, step, cap)
    np.testing.assert_allclose(first, f_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(last, l_ref, rtol=1e-9, atol=1e-12)


def test_continuous_batching_by_hand():
    # K = 2, O = 3 tokens, prefill 0.1 s flat, decode step 0.05 s at any batch
    step = DecodeStep(np.full(2, 0.05), np.zeros(2))
    pre = lambda s, tok: np.full(np.shape(tok), 0.1)  # noqa: E731
    first, last = decode_path([0.0, 0.01, 0.02], [8, 8, 8], 3, 2, pre, step)
    # r0 prefills alone [0, 0.1]; r1 (arrived) prefills next [0.1, 0.2]; then decode steps for both
    # at 0.25 (r0: 2 tokens, r1: 2) and 0.30 (r0 and r1 done); r2 waits for a slot, prefills [0.3, 0.4]
    np.testing.assert_allclose(first, [0.1, 0.2, 0.4])
    np.testing.assert_allclose(last, [0.3, 0.3, 0.5])


def test_vanishing_load_ttft_is_prefill_and_tpot_is_the_batch_one_step():
    k_max, prompt, out_len = 16, 200, 64
    step = affine_step(k_max, per_token=2e-6)
    pre = linear_prefill()
    st_ = simulate_decoder(1e-3, [1], pre, step, fixed_lengths(prompt), out_len, k_max, sampling=SMALL)
    ttft = 5e-3 + 1e-3 * prompt
    assert st_.ttft_p50_s[0, 0] == pytest.approx(ttft, rel=1e-9)
    assert st_.ttft_p99_s[0, 0] == pytest.approx(ttft, rel=1e-9)
    # batch 1, contexts P + 1 .. P + O - 1: the mean step is base[1] + per_token[1] (P + O / 2)
    tpot = 0.02 + 2e-6 * (prompt + out_len / 2)
    assert st_.tpot_p50_s[0, 0] == pytest.approx(tpot, rel=1e-9)
    assert st_.tpot_p99_s[0, 0] == pytest.approx(tpot, rel=1e-9)
    assert st_.mean_batch[0, 0] == pytest.approx(1.0, abs=1e-3)  # a rare overlap at 0.1% load
    bare_ttft, bare_tpot = bare_latencies_p99(pre, step, fixed_lengths(prompt), out_len, 1)
    assert bare_ttft[0] == pytest.approx(ttft) and bare_tpot[0] == pytest.approx(tpot)


def test_throughput_saturates_at_the_concurrency_cap():
    k_max, out_len = 8, 32
    step = affine_step(k_max)
    pre = linear_prefill()
    lengths = fixed_lengths(100)
    off = decoder_offline([2], pre, step, lengths, out_len, k_max)
    assert off.batch[0] == k_max  # the step grows sub-linearly: the biggest batch is the best
    # one cycle by hand: prefill of 8 x 100 tokens + 31 steps at batch 8
    cycle = 5e-3 + 1e-3 * 800 + 31 * 0.02 * (1 + 0.02 * 7) + 1e-6 * 8 * 31 * (101 + 15)
    assert off.cycle_s[0] == pytest.approx(cycle)
    assert off.tokens_per_s[0] == pytest.approx(2 * 8 * 32 / cycle)
    st_ = simulate_decoder(np.array([0.5, 2.0, 4.0]) * off.rps[0], [2], pre, step, lengths, out_len, k_max,
                           sampling=SMALL)
    tps = st_.tokens_per_s[0]
    assert tps[0] == pytest.approx(0.5 * off.tokens_per_s[0], rel=0.05)  # below capacity: what is offered
    assert st_.mean_batch[0, 2] == pytest.approx(k_max, rel=0.01)  # overloaded: every slot busy
    assert tps[2] == pytest.approx(tps[1], rel=0.02)  # and no more tokens for more load
    assert tps[2] <= off.tokens_per_s[0] * 1.001
    assert tps[2] >= 0.8 * off.tokens_per_s[0]


def test_max_rate_meets_both_slos_and_stays_below_offline():
    k_max, out_len = 16, 32
    step = affine_step(k_max)
    pre = linear_prefill()
    lengths = lognormal_lengths(200, 0.5, 16, 800)
    mr = decoder_max_rate(1.0, 0.05, [1, 4], pre, step, lengths, out_len, k_max, sampling=SMALL)
    assert np.all(mr.meets)
    assert np.all(mr.rate_rps > 0) and np.all(mr.rate_rps <= mr.offline_rps)
    assert np.all(mr.stats.ttft_p99_s[:, 0] <= 1.0) and np.all(mr.stats.tpot_p99_s[:, 0] <= 0.05)
    # random dispatch: 4 instances take 4x the rate of one at the same per-instance load
    assert mr.rate_rps[1] == pytest.approx(4 * mr.rate_rps[0], rel=0.1)
    assert mr.tokens_per_s[1] == pytest.approx(out_len * mr.rate_rps[1], rel=0.05)
    tight = decoder_max_rate(1.0, 0.025, [1], pre, step, lengths, out_len, k_max, sampling=SMALL)
    assert tight.rate_rps[0] < mr.rate_rps[0]  # a tighter TPOT bound keeps the batch smaller


def test_slo_below_a_lone_request_meets_nothing():
    step = affine_step(4)
    mr = decoder_max_rate(0.1, None, [1], linear_prefill(), step, fixed_lengths(200), 16, 4, sampling=SMALL)
    assert not mr.meets[0] and mr.rate_rps[0] == 0
    assert mr.bare_ttft_p99_s[0] == pytest.approx(0.205)


def test_decode_step_from_callable_is_exact_for_affine_steps():
    fn = lambda s, b, c: 0.01 + 0.001 * b + 2e-6 * c  # noqa: E731
    step = DecodeStep.from_callable(fn, 1, 4, (10, 500))
    b = np.array([1, 2, 4])
    np.testing.assert_allclose(step(np.zeros(3, dtype=int), b, np.array([7.0, 300.0, 2000.0])),
                               fn(0, b, np.array([7.0, 300.0, 2000.0])))


def test_decode_step_from_callable_with_a_jump_stays_positive_and_above_the_secant():
    """A step whose time jumps between the two contexts (the KV cache leaving a cache level): the
    secant's intercept would be negative; the line through the longest context's time from about 0
    is taken, positive, exact at hi and above the secant in between."""
    lo, hi = 100.0, 200.0
    fn = lambda s, b, c: np.where(c / b < 150, 0.001 * b, 0.01 * b)  # noqa: E731
    step = DecodeStep.from_callable(fn, 1, 3, (lo, hi))
    assert np.all(step.base_s > 0) and np.all(step.per_token_s >= 0)
    b = np.array([1, 2, 3])
    s = np.zeros(3, dtype=int)
    np.testing.assert_allclose(step(s, b, b * hi), fn(0, b, b * hi), rtol=1e-12)
    for x in (lo, 120.0, 180.0):
        secant = 0.001 * b + (0.01 - 0.001) * b * (x - lo) / (hi - lo)
        assert np.all(step(s, b, b * x) >= secant - 1e-15)


def test_deterministic_with_a_fixed_seed():
    step = affine_step(8)
    args = ([2.0, 6.0], [1], linear_prefill(), step, fixed_lengths(100), 16, 8)
    a = simulate_decoder(*args, sampling=SMALL)
    b = simulate_decoder(*args, sampling=SMALL)
    np.testing.assert_array_equal(a.ttft_p99_s, b.ttft_p99_s)
    np.testing.assert_array_equal(a.tpot_p99_s, b.tpot_p99_s)


@pytest.mark.parametrize("call,name", [
    (lambda s: simulate_decoder(0.0, [1], linear_prefill(), s, fixed_lengths(10), 8, 4), "rate_rps"),
    (lambda s: simulate_decoder(float("nan"), [1], linear_prefill(), s, fixed_lengths(10), 8, 4), "rate_rps"),
    (lambda s: simulate_decoder(1.0, [1], linear_prefill(), s, fixed_lengths(10), 0, 4), "output_len"),
    (lambda s: simulate_decoder(1.0, [1], linear_prefill(), s, fixed_lengths(10), 8, 0), "max_concurrent_sequences"),
    (lambda s: simulate_decoder(1.0, [1], linear_prefill(), s, fixed_lengths(10), 8, 64), "max_concurrent_sequences"),
    (lambda s: decoder_max_rate(-1.0, None, [1], linear_prefill(), s, fixed_lengths(10), 8, 4), "ttft_slo_s"),
    (lambda s: decoder_max_rate(1.0, float("nan"), [1], linear_prefill(), s, fixed_lengths(10), 8, 4), "tpot_slo_s"),
    (lambda s: decoder_max_rate(None, None, [1], linear_prefill(), s, fixed_lengths(10), 8, 4), "slo"),
    (lambda s: simulate_decoder(1.0, [1], lambda a, t: -np.ones(np.shape(t)), s, fixed_lengths(10), 8, 4),
     "prefill_time"),
    (lambda s: DecodeStep([0.01, 0.0], [0.0, 0.0]), "decode step"),
])
def test_bad_inputs_name_the_parameter(call, name):
    with pytest.raises(UserError) as e:
        call(affine_step(8))
    msg = str(e.value)
    assert name in msg and "\n" not in msg


def test_scenarios_do_not_change_each_others_results():
    # rows of different scenarios (their own tables and KV caps) run side by side in one loop
    k = 12
    step = DecodeStep(np.array([0.02 * (1 + 0.02 * np.arange(k)), 0.01 * (1 + 0.05 * np.arange(k))]),
                      np.array([np.full(k, 1e-6), np.full(k, 3e-6)]))
    pre_rate = np.array([1e-3, 4e-4])
    pre = lambda s, tok: 5e-3 + pre_rate[s] * tok  # noqa: E731
    both = simulate_decoder([[3.0], [5.0]], [1, 2], pre, step, fixed_lengths(100), 24, [6, 12], sampling=SMALL)
    alone = simulate_decoder([[5.0]], [2], lambda s, tok: 5e-3 + 4e-4 * tok,
                             DecodeStep(step.base_s[1], step.per_token_s[1]), fixed_lengths(100), 24, 12,
                             sampling=SMALL)
    assert both.ttft_p99_s[1, 0] == alone.ttft_p99_s[0, 0]
    assert both.tpot_p99_s[1, 0] == alone.tpot_p99_s[0, 0]
