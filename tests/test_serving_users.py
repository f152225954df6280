"""Serving a fixed number of users: the closed loop's closed form by hand, the plan's concurrency mode, and
llama-batched-bench's output (a real run on the 2-vCPU Zen 5 guest) read and checked against the estimate."""

from __future__ import annotations

import json

import numpy as np
import pytest
from clitools import REPO, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.capacity.decoder import users_grid
from roofline.catalog.batched_bench import read_batched_bench
from roofline.errors import UserError
from roofline.serving.continuous_batching import DecodeStep, decoder_users
from roofline.serving.request_lengths import fixed_lengths

BATCHED = REPO / "tests" / "fixtures" / "llama-batched-bench"
MD = BATCHED / "zen5-2vcpu-r3-llama-3.2-1b-q4_0.md"
JSONL = BATCHED / "zen5-2vcpu-r3-llama-3.2-1b-q4_0.jsonl"


def flat_prefill(seconds=0.1):
    return lambda s, tok: np.full(np.shape(tok), seconds)


def test_users_by_hand():
    """2 instances of K = 2 slots, O = 3 tokens, a prefill of 0.1 s whatever its prompts, a decode step of 0.05 s
    at any batch: one cycle of m sequences is 0.1 + 2 x 0.05 = 0.2 s. 1 user: TTFT 0.1 s, TPOT 0.05 s, 3 tokens per
    0.2 s on one instance (15 tok/s); 4 users: 2 per instance, the same times, 2 x 2 x 3 / 0.2 = 60 tok/s; 6 users:
    3 per instance for 2 slots, a request waits half a cycle, TTFT 0.1 + 0.1 = 0.2 s, the rate stays 60; 5 users:
    the busiest instance holds 3 (TTFT 0.2 s), the rate is 60."""
    u = decoder_users([2], flat_prefill(), DecodeStep(np.full(2, 0.05), np.zeros(2)), fixed_lengths(8), 3, [2],
                      [1, 4, 5, 6])
    np.testing.assert_allclose(u.ttft_s[0], [0.1, 0.1, 0.2, 0.2])
    np.testing.assert_allclose(u.tpot_s[0], [0.05] * 4)
    np.testing.assert_allclose(u.tokens_per_s[0], [15, 60, 60, 60])
    np.testing.assert_allclose(u.running[0], [1, 2, 2, 2])
    np.testing.assert_allclose(u.user_tokens_per_s[0], [20] * 4)


def test_users_step_grows_with_the_batch_and_the_context():
    """One instance, K = 4: a decode step of ``0.02 (1 + 0.1 (b - 1)) + 1e-5 C`` seconds at batch b and total
    context C, a prefill of ``1e-3`` s per token; 100-token prompts, 11 output tokens. For u <= 4 users the group's
    cycle is ``1e-3 x 100 u + 10 step(u, u (101 + 4.5))`` (contexts 101 .. 110, a mean of 105.5 per sequence)."""
    k = 4
    step = DecodeStep(0.02 * (1 + 0.1 * np.arange(k)), np.full(k, 1e-5))
    pre = lambda s, tok: 1e-3 * np.asarray(tok, dtype=float)  # noqa: E731
    u = decoder_users([1], pre, step, fixed_lengths(100), 11, [k], [1, 2, 3, 4, 8])
    for j, n in enumerate([1, 2, 3, 4]):
        p = 1e-3 * 100 * n
        d = 0.02 * (1 + 0.1 * (n - 1)) + 1e-5 * n * 105.5
        assert u.ttft_s[0, j] == pytest.approx(p)
        assert u.tpot_s[0, j] == pytest.approx(d)
        assert u.tokens_per_s[0, j] == pytest.approx(n * 11 / (p + 10 * d))
    # 8 users on 4 slots: each request waits one cycle of 4, the rate is 4's
    assert u.ttft_s[0, 4] == pytest.approx(u.ttft_s[0, 3] + 0.4 + 10 * u.tpot_s[0, 3])
    assert u.tokens_per_s[0, 4] == pytest.approx(u.tokens_per_s[0, 3])


@settings(max_examples=40, deadline=None)
@given(instances=st.integers(1, 8), k=st.integers(1, 16), out=st.integers(2, 64), growth=st.floats(0, 0.5))
def test_more_users_never_shorten_a_users_wait_or_cut_the_servers_rate(instances, k, out, growth):
    """With a step that grows with the batch, one more user never shortens TTFT or TPOT and never lowers the
    server's tokens per second, which stops growing once every slot is busy."""
    step = DecodeStep(0.01 * (1 + growth * np.arange(k)), np.full(k, 1e-6))
    n = np.arange(1, 3 * instances * k + 1)
    u = decoder_users([instances], lambda s, tok: 2e-4 * np.asarray(tok, dtype=float) + 1e-3, step,
                      fixed_lengths(64), out, [k], n)
    assert np.all(np.diff(u.ttft_s[0]) >= -1e-12) and np.all(np.diff(u.tpot_s[0]) >= -1e-12)
    assert np.all(np.diff(u.tokens_per_s[0]) >= -1e-9)
    full = n >= instances * k
    assert np.allclose(u.tokens_per_s[0][full], u.tokens_per_s[0][full][0])


@pytest.mark.parametrize("users", [[0], [1.5], [float("nan")], [-3]])
def test_users_must_be_whole_and_positive(users):
    with pytest.raises(UserError, match="users"):
        decoder_users([1], flat_prefill(), DecodeStep(np.full(2, 0.05), np.zeros(2)), fixed_lengths(8), 3, [2],
                      users)


def test_users_grid_holds_every_count_to_64_then_about_5_percent_apart():
    g = users_grid(1000)
    assert list(g[:64]) == list(range(1, 65)) and g[-1] == 1000
    assert np.all(g[65:] / g[64:-1] < 1.06)
    assert list(users_grid(10)) == list(range(1, 11))


def test_plan_at_a_fixed_concurrency():
    """``plan --concurrency``: per CPU and user count the best layout's TTFT and TPOT, a user's rate and the
    server's; a user count meets the SLO exactly when both times do; the most users within it is a grid point
    that meets it while the next count (every count up to 64 is on the grid) does not; more users never shorten
    the TPOT on the same layout."""
    proc = run_cli("plan", "--model", "llama-3.1-8b", "--cpu", "genoa", "--precision", "q4_k_m",
                   "--concurrency", "1,4,8,32", "--tpot-ms", "100", "--ttft-ms", "2000", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["scenario"] == "concurrency"
    (cpu,) = data["cpus"]
    points = cpu["users"]
    assert [p["users"] for p in points] == [1, 4, 8, 32]
    for p in points:
        assert p["meets"] == (p["ttft_s"] <= 2.0 and p["tpot_s"] <= 0.1)
        assert p["user_tokens_per_s"] == pytest.approx(1 / p["tpot_s"])
        lo, hi = sorted(p["tpot_s_band"])
        assert lo < p["tpot_s"] < hi
    same = [p for p in points if (p["instance_cores"], p["instances_per_socket"]) ==
            (points[0]["instance_cores"], points[0]["instances_per_socket"])]
    assert [p["tpot_s"] for p in same] == sorted(p["tpot_s"] for p in same)
    most = cpu["max_users"]
    assert most["meets"] and 1 < most["users"] < 64
    more = run_cli("plan", "--model", "llama-3.1-8b", "--cpu", "genoa", "--precision", "q4_k_m",
                   "--concurrency", str(most["users"] + 1), "--tpot-ms", "100", "--ttft-ms", "2000", "--json")
    assert json.loads(more.stdout)["cpus"][0]["users"][0]["meets"] is False
    text = run_cli("plan", "--model", "llama-3.1-8b", "--cpu", "genoa", "--precision", "q4_k_m", "--concurrency",
                   "1,8", "--tpot-ms", "100", "--ttft-ms", "2000").stdout
    assert f"genoa: {most['users']} users per server" in text


@pytest.mark.parametrize("flag", ["0", "1.5", "a", "-2", "1e300"])
def test_a_bad_concurrency_is_one_line(flag):
    proc = run_cli("plan", "--model", "llama-3.1-8b", "--cpu", "genoa", "--precision", "q4_k_m", "--concurrency", flag)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "concurrency" in proc.stderr


def test_llama_batched_bench_as_the_run_wrote_it():
    """The same command's markdown table (stdout) and ``--output-format jsonl`` (two runs on the Zen 5 guest):
    the settings its header states, one row per B, ``S_TG = B TG / T_TG`` as printed."""
    md, jl = read_batched_bench(MD), read_batched_bench(JSONL)
    assert md.format == "md" and jl.format == "jsonl"
    for b in (md, jl):
        assert [r.b for r in b.rows] == [1, 2, 4, 8] and {(r.pp, r.tg) for r in b.rows} == {(128, 32)}
        assert b.threads == 2 and b.settings["n_ubatch"] == 512 and not b.shared_prompt
        for r in b.rows:
            assert r.s_tg == pytest.approx(r.b * r.tg / r.t_tg, rel=5e-3)
            assert r.s_pp == pytest.approx(r.b * r.pp / r.t_pp, rel=5e-3)
            assert r.n_kv == r.b * (r.pp + r.tg)
    assert md.rows[0].s_tg == 53.77 and jl.rows[-1].s_tg == pytest.approx(131.605667)


def test_check_prices_every_batch_of_a_batched_bench_run():
    """``check --from`` a llama-batched-bench table: each B's generation is a decode figure of B sequences at the mean
    depth PP + TG / 2, its prefill one of B prompts; none above the bound, and the step of 8 sequences is priced well
    under 8 steps of one (the weights streamed once per step); each decode rate within 25% of the run's (in sample:
    this guest's batched records are among the profile's; Zen 5's kernels are priced at their cycles as timed on the
    guest, in cache, and the 4-row repacked GEMM runs about a fifth slower in the step than that)."""
    proc = run_cli("check", "--from", str(MD), "--cpu", "zen5-2vcpu-r3", "--model", "llama-3.2-1b",
                   "--precision", "q4_0", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["what"]: r for r in json.loads(proc.stdout)["rates"]}
    tg = {b: rows[f"S_TG PP 128 TG 32 B {b}"] for b in (1, 2, 4, 8)}
    for b, r in tg.items():
        assert r["batch"] == b and r["phase"] == "decode" and r["context"] == 144
        assert r["measured"] <= r["ceiling"] and rows[f"S_PP PP 128 TG 32 B {b}"]["phase"] == "prefill"
    step = {b: b / r["realistic"] for b, r in tg.items()}  # seconds per step
    assert step[8] < 4 * step[1] and step[1] <= step[2]
    assert all(abs(r["fraction_of_realistic"] - 1) < 0.25 for r in tg.values())


def test_a_byte_order_mark_or_a_foreign_encoding(tmp_path):
    """A table saved with a UTF-8 byte-order mark (as some editors do) reads as the same rows; a table whose bytes
    are not UTF-8 is one line naming the file, exit 2."""
    bom = tmp_path / "bom.md"
    bom.write_bytes(b"\xef\xbb\xbf" + MD.read_bytes())
    assert [r.s_tg for r in read_batched_bench(bom).rows] == [r.s_tg for r in read_batched_bench(MD).rows]
    bad = tmp_path / "latin1.md"
    bad.write_bytes(MD.read_bytes().replace(b"PP", b"P\xe9", 1))
    proc = run_cli("check", "--from", str(bad), "--cpu", "zen5-2vcpu-r3", "--model", "llama-3.2-1b")
    assert proc.returncode == 2 and "latin1.md" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
