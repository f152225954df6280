"""Capacity planning invariants and the plan command."""

from __future__ import annotations

import math

import pytest
from clitools import run_cli, run_json
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.catalog import load_model, load_platform
from roofline.estimate.plan import layouts, plan, plan_cpu

CPUS = ["icx", "spr", "emr", "gnr", "genoa", "turin", "milan"]


def test_layouts():
    assert layouts(32) == [1, 2, 4, 8, 16, 32]
    assert layouts(56) == [1, 2, 4, 8, 16, 32, 56]
    assert layouts(1) == [1]


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("model, precision, phase", [("bert-large", "int8-static", None), ("bert-base", "fp32", None),
                                                      ("llama-3.2-1b", "int4-weight-only", "decode")])
def test_plan_invariants(cpu, model, precision, phase):
    p = load_platform(cpu)
    m = load_model(model)
    c = plan_cpu(p, m, precision, phase=phase, target_rps=5000)
    inst = [x.instance_rps for x in c.layouts]
    assert all(b >= a * (1 - 1e-12) for a, b in zip(inst, inst[1:])), "more cores never lower per-instance rps"
    # total throughput never exceeds the socket roofline: its work at the socket's peak or bandwidth
    est = plan_cpu(p, m, precision, phase=phase)
    from roofline.estimate.engine import estimate

    e = estimate(p, m, precisions=[precision], baseline=precision, phase=phase, sockets=1)
    pr = e.precisions[precision]
    flops = sum(g.flops * g.count for g in pr.gemms)
    socket_peak = max(c.peak_ops_per_s for c in e.platform.compute_paths)  # every core busy: all-core clock
    for x in est.layouts:
        assert x.socket_rps * flops <= socket_peak * (1 + 1e-9)
        assert x.server_rps == pytest.approx(x.socket_rps * c.sockets)
        if x.cores_per_instance * x.instances_per_socket == p.cores_per_socket.value:
            # the same layout as an estimate: a socket serves one request per amortised step
            one = estimate(p, m, precisions=[precision], baseline=precision, phase=phase, sockets=1,
                           instance_cores=x.cores_per_instance).precisions[precision]
            assert x.socket_rps == pytest.approx(1 / one.step_time_s, rel=1e-9)
            assert x.latency_s == pytest.approx(one.instance_latency_s, rel=1e-9)
    assert c.servers_needed == math.ceil(5000 / (c.best.server_rps * 0.7))


@settings(max_examples=30, deadline=None)
@given(load=st.floats(1, 1e7), utilization=st.floats(0.05, 1.0), price=st.floats(0, 100))
def test_servers_and_cost(load, utilization, price):
    c = plan([load_platform("spr")], load_model("bert-base"), "int8-static", target_rps=load,
             utilization=utilization, prices=[price]).cpus[0]
    capacity = c.best.server_rps * utilization
    assert c.servers_needed == math.ceil(load / capacity)
    assert (c.servers_needed - 1) * capacity < load <= c.servers_needed * capacity * (1 + 1e-12)
    assert c.cost_per_million_requests == pytest.approx(price / (capacity * 3600) * 1e6)


def test_latency_target_picks_a_layout_that_meets_it():
    c = plan_cpu(load_platform("icx"), load_model("bert-large"), "int8-static", latency_s=0.02)
    assert c.best.meets_latency and c.best.latency_s <= 0.02
    assert any(not x.meets_latency for x in c.layouts)  # 1-core instances take far longer than 20 ms
    none = plan_cpu(load_platform("icx"), load_model("bert-large"), "int8-static", latency_s=1e-6)
    assert not none.best.meets_latency and "no layout meets" in none.best_reason
    assert none.best.latency_s == min(x.latency_s for x in none.layouts)


def test_bounds_follow_the_platform():
    gnr = plan_cpu(load_platform("gnr"), load_model("bert-large"), "int8-static")
    icx = plan_cpu(load_platform("icx"), load_model("bert-large"), "int8-static")
    assert gnr.weights_llc_resident and gnr.best.bound == "LLC"
    assert not icx.weights_llc_resident and icx.best.bound == "compute"


def test_plan_cli():
    data = run_json("plan", "--model", "bert-large", "--cpu", "icx,gnr", "--precision", "int8-static",
                    "--target-rps", "20000", "--price-per-hour", "1.2,3.9")
    assert [c["cpu"] for c in data["cpus"]] == ["icx", "gnr"]
    assert all(c["servers_needed"] >= 1 and c["cost_per_million_requests"] > 0 for c in data["cpus"])
    text = run_cli("plan", "--model", "bert-large", "--cpu", "gnr", "--target-rps", "20000", "--p99-ms", "50").stdout
    assert "Best layout per CPU" in text and "cores/inst" in text
    bad = run_cli("plan", "--model", "bert-large", "--cpu", "icx,gnr", "--price-per-hour", "1.2")
    assert bad.returncode == 2 and "one per CPU" in bad.stderr
