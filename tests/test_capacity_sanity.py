"""What does not fit is flagged, never priced as if it ran; duplicate CPUs cost one evaluation; plans at the
edges of their documented ranges give finite JSON."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from clitools import all_finite, run_cli

import roofline.api as api
from roofline.results import json_text

pytestmark = pytest.mark.slow  # the file takes seconds: out of the fast stage (pytest -m "not slow")

CONFIGS = Path(__file__).resolve().parent / "fixtures" / "hf_configs"


def test_a_model_larger_than_the_dram_is_flagged_in_the_headline():
    """Qwen2-57B-A14B in BF16: 57,408,658,944 x 2 bytes = 114.8 GB of weights, on a 25.28 GB guest."""
    proc = run_cli("estimate", "--model", str(CONFIGS / "qwen2-57b-a14b"), "--cpu", "zen4-2vcpu", "--phase", "decode",
                   "--precision", "bf16", "--json")
    data = json.loads(proc.stdout)
    bf16 = data["precisions"]["bf16"]
    assert bf16["fits_memory"] is False
    kv = 2 * 28 * 4 * 128 * 1025 * 2  # one instance, one sequence at context 1,024 (+ the new token), BF16
    assert bf16["memory_bytes"] == pytest.approx(57_408_658_944 * 2 + kv, rel=1e-6)
    assert any("do not fit zen4-2vcpu's DRAM" in n for n in data["notes"])
    brief = run_cli("estimate", "--model", str(CONFIGS / "qwen2-57b-a14b"), "--cpu", "zen4-2vcpu", "--phase", "decode",
                    "--precision", "bf16", "--brief").stdout
    assert "do not fit zen4-2vcpu's DRAM" in brief and "assume memory the platform does not have" in brief
    # what fits says so, and a platform without a capacity says nothing either way
    small = api.estimate(model="llama-3.2-1b", cpu="spr", phase="decode")
    assert all(p.fits_memory for p in small.precisions.values()) and not any("DRAM" in n for n in small.notes)


def test_a_kv_cache_larger_than_the_dram_is_flagged():
    r = api.estimate(model="llama-3.1-8b", cpu="spr", phase="decode", batch=1000, context=100_000, precision="bf16")
    assert r.precisions["bf16"].fits_memory is False
    assert "KV cache" in r.precisions["bf16"].notes[-1]


def test_plan_flags_weights_larger_than_a_socket():
    r = api.plan(model=str(CONFIGS / "qwen2-57b-a14b"), cpu="zen4-2vcpu,spr", phase="prefill")
    tiny, big = r.cpus
    assert not tiny.meets and "do not fit" in tiny.best_reason and tiny.servers_needed is None
    assert tiny.memory.weight_bytes > tiny.memory.dram_bytes_per_socket
    assert big.meets


def test_duplicate_cpus_are_evaluated_once_and_listed_as_given(monkeypatch):
    import roofline.capacity as capacity

    seen = []
    real = capacity.plan_dynamic_batching

    def counting(platforms, *args, **kw):
        seen.append([p.name for p in platforms])
        return real(platforms, *args, **kw)

    monkeypatch.setattr(capacity, "plan_dynamic_batching", counting)
    r = api.plan(model="bert-base", cpu="gnr,icx,gnr,gnr", price_per_hour="1,2,3,6")
    assert seen == [["gnr", "icx"]]
    assert [c.cpu for c in r.cpus] == ["gnr", "icx", "gnr", "gnr"]
    g1, _, g3, g6 = r.cpus
    assert g1.best == g3.best == g6.best
    assert g6.cost_per_million_requests == pytest.approx(6 * g1.cost_per_million_requests)


@pytest.mark.parametrize("flags", [
    # a wait far longer than the simulated window: every measured request rides in a batch headed before it
    dict(model="bert-base", cpu="zen4-2vcpu", target_rps=1e12, p99_ms=1e-6, max_wait_ms=1e7, max_batch_tokens=1 << 20,
         seed=2**32 - 1),
    # prefill steps of one token: the service table has a single entry
    dict(model="llama-3.2-1b", cpu="icx", max_batch_tokens=1, seq_len=1, output_len=1, max_sequences=1),
    dict(model="llama-3.2-1b", cpu="gnr", max_batch_tokens=1, output_len=2, max_sequences=1, ttft_ms=1e-6,
         tpot_ms=1e-6, target_rps=1e12, memory_gb=1e8),
])
def test_plans_at_the_edges_of_their_ranges_give_finite_json(flags):
    data = json.loads(json_text(api.plan(**flags)))
    assert all_finite(data)


def test_a_one_entry_token_table_serves_any_batch():
    from roofline.serving.dynamic_batching import TokenTable

    t = TokenTable([256.0], [[0.5], [0.25]])
    out = t(np.array([0, 1]), np.array([1, 1]), np.array([256.0, 256.0]))
    assert out.tolist() == [0.5, 0.25]


def test_a_cpus_plan_is_its_own_whatever_the_cpus_planned_beside_it():
    """CPUs are planned a few at a time (bounded memory): a CPU's best layout and rate are the same alone and as
    the sixth of six, past a chunk's boundary, its price kept with it."""
    import roofline
    from roofline.capacity import PLAN_CHUNK

    cpus = ["spr", "gnr", "milan", "genoa", "emr", "icx"]
    assert len(cpus) > PLAN_CHUNK
    kw = dict(precision="int8-static", p99_ms=100, target_rps=1000)
    many = roofline.plan("bert-base", cpus, price_per_hour=[1, 2, 3, 4, 5, 6], **kw).cpus
    alone = roofline.plan("bert-base", "icx", price_per_hour=[6], **kw).cpus[0]
    assert [c.cpu for c in many] == cpus
    assert (many[-1].best.rps_per_server, many[-1].best.instance_cores) == (alone.best.rps_per_server,
                                                                             alone.best.instance_cores)
    assert many[-1].cost_per_million_requests == alone.cost_per_million_requests
