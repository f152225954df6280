"""`plan --tensor-parallel T`: one instance of every core of the server, split over T ranks, priced as `estimate
--tensor-parallel` prices its step, each socket holding its share of the weights and the KV cache."""

from __future__ import annotations

import math

import pytest
from clitools import run_cli

import roofline
from roofline.capacity.service_times import StepPoint, step_times
from roofline.catalog import load_model, load_platform
from roofline.spec.vocab import Phase

BF16 = dict(precision="bf16", stack="torch-inductor", seq_len=256, output_len=64)


def test_one_instance_over_both_sockets():
    r = roofline.plan(model="llama-3.1-8b", cpu="gnr", tensor_parallel=2, **BF16)
    (c,) = r.cpus
    assert c.tensor_parallel == 2 and len(c.layouts) == 1
    b = c.best
    assert b.instances_per_server == 1 and b.instances_per_socket == 1 and b.instance_cores == 128
    assert c.layout_label(b.instances_per_socket, b.instance_cores) == "1 x 128 x 2 tp 2"
    assert any("split over 2 tensor-parallel ranks" in n for n in c.notes)


def test_the_kv_cache_holds_each_sockets_share():
    """K = floor((S D - W) / (e T)) for one instance over S sockets of D bytes each (W the weights, e the KV bytes a
    token, T a sequence's tokens), at most --max-sequences."""
    r = roofline.plan(model="llama-3.1-8b", cpu="gnr", tensor_parallel=2, max_sequences=4096, memory_gb=40, **BF16)
    (c,) = r.cpus
    m = c.memory
    k = math.floor((2 * m.dram_bytes_per_socket - m.weight_bytes) / (m.kv_bytes_per_token * m.tokens_per_sequence))
    assert 0 < k < 4096  # 20 GB a socket: the cache, not --max-sequences, holds it
    assert c.best.max_concurrent_sequences == k


def test_a_model_one_socket_cannot_hold_fits_split_over_two():
    kw = dict(model="llama-3.1-70b", cpu="gnr", precision="bf16", stack="torch-inductor", memory_gb=200,
              concurrency=[1])
    alone = roofline.plan(**kw).cpus[0]
    split = roofline.plan(tensor_parallel=2, **kw).cpus[0]
    assert alone.memory.weight_bytes > alone.memory.dram_bytes_per_socket  # 141 GB of weights, 100 GB a socket
    assert not alone.users
    assert split.users and split.users[0].tpot_s > 0


def test_the_plan_steps_are_the_estimates():
    """A decode step of the split plan is `estimate --tensor-parallel`'s realistic step of the same point."""
    p, model = load_platform("gnr"), load_model("llama-3.1-8b")
    from roofline.catalog import resolve
    from roofline.model.efficiency import EfficiencySource

    src = EfficiencySource(stack=resolve.stack("torch-inductor"), per_engine=False)
    t = step_times(p, model, "bf16", Phase.DECODE, [StepPoint(8, 1, 512)], source=src, tensor_parallel=2)
    e = roofline.estimate(model="llama-3.1-8b", cpu="gnr", precision="bf16", phase="decode", batch=8, context=512,
                          tensor_parallel=2, stack="torch-inductor")
    est = e.precisions["bf16"]
    assert t.instances_per_server.tolist() == [1.0]
    assert float(t.realistic_s[0, 0]) == pytest.approx(est.realistic_step_time_s, rel=1e-6)
    assert float(t.ceiling_s[0, 0]) == pytest.approx(est.step_time_s, rel=1e-6)


@pytest.mark.parametrize("extra, fragment", [
    (("--model", "bert-large", "--tensor-parallel", "2"), "is an encoder"),
    (("--model", "llama-3.1-8b", "--precision", "bf16", "--tensor-parallel", "3"), "multiple of the 2 socket"),
    (("--model", "llama-3.1-8b", "--precision", "bf16", "--tensor-parallel", "2", "--instance-cores", "8"),
     "drop --instance-cores"),
    (("--model", "llama-3.1-8b", "--precision", "q4_k_m", "--tensor-parallel", "2", "--commands"),
     "only vLLM's are written"),
    (("--model", "llama-3.1-8b", "--precision", "bf16", "--tensor-parallel", "nan"), "--tensor-parallel"),
])
def test_a_split_the_plan_cannot_make_is_one_line(extra, fragment):
    proc = run_cli("plan", "--cpu", "gnr", *extra)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert fragment in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_rank_cores_share_each_socket():
    """Three ranks on each of two 128-core sockets: 43, 43 and 42 cores (SGLang's binding on the Xeon 6980P), in
    order, the second socket from core 128."""
    from roofline.capacity.deploy import rank_cores

    groups = rank_cores(6, 2, 128)
    assert [len(g) for g in groups] == [43, 43, 42, 43, 43, 42]
    assert groups[0][0] == 0 and groups[2][-1] == 127 and groups[3][0] == 128 and groups[5][-1] == 255
    assert sorted(i for g in groups for i in g) == list(range(256))


def test_the_commands_of_a_split_are_one_vllm_server():
    r = roofline.plan(model="llama-3.1-8b", cpu="gnr", tensor_parallel=6, commands=True, max_sequences=32, **BF16)
    d = r.cpus[0].deploy
    assert d is not None and d.engine == "vllm" and len(d.processes) == 1
    p = d.processes[0]
    assert "VLLM_CPU_OMP_THREADS_BIND=0-42|43-85|86-127|128-170|171-213|214-255" in p.command
    assert "--tensor-parallel-size 6" in p.command and p.threads == 256
    assert p.check is not None and p.check.startswith("vllm bench serve")
