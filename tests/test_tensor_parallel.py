"""A model split over tensor-parallel ranks (SGLang's ``--tp`` on a Xeon: one rank per socket or sub-NUMA domain).

The split runs one instance of every core used; each rank reads its share of every weight from its own domain's
memory (no link between sockets to cross for weights), and the ranks sum their partial outputs twice a layer through
shared memory (sgl-kernel's ``shm_allreduce``: :mod:`roofline.calc.allreduce`), whose bytes, additions and flag waits
are counted here by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
from clitools import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline
import roofline.catalog
from roofline.calc.allreduce import (
    CHUNK_BYTES,
    SYMMETRIC_BELOW,
    adds_per_rank,
    bytes_per_rank,
    flag_rounds,
    sync_seconds,
)
from roofline.calc.ops import tp_allreduce
from roofline.errors import UserError
from roofline.model.layout import make_layout

MIB = 1 << 20


def test_the_shared_memory_all_reduce_by_hand():
    """Under 1 MiB every rank sums every buffer: (T + 3) S bytes, (T - 1) S / e additions, one round of flags; from
    1 MiB each sums its slice: (5 + 1/T) S bytes, (T - 1) S / (T e) additions, two rounds; above 32 MiB in chunks."""
    s = 16 * 1024  # a decode step of one token of a 8,192-wide model in BF16
    assert bytes_per_rank(s, 6) == pytest.approx(9 * s)
    assert adds_per_rank(s, 6, 2) == pytest.approx(5 * s / 2)
    assert flag_rounds(s) == 1
    big = 16 * MIB  # a 1,024-token prefill of the same model
    assert bytes_per_rank(big, 6) == pytest.approx((5 + 1 / 6) * big)
    assert adds_per_rank(big, 6, 2) == pytest.approx(5 / 6 * big / 2)
    assert flag_rounds(big) == 2
    huge = CHUNK_BYTES + 8 * MIB  # one full chunk, then 8 MiB
    assert bytes_per_rank(huge, 3) == pytest.approx((5 + 1 / 3) * huge)
    assert flag_rounds(huge) == 4
    tail = CHUNK_BYTES + SYMMETRIC_BELOW // 2  # a full chunk, then a small one summed by every rank
    assert bytes_per_rank(tail, 4) == pytest.approx((5 + 1 / 4) * CHUNK_BYTES + 7 * SYMMETRIC_BELOW // 2)
    assert flag_rounds(tail) == 3
    # one rank: nothing to sum, nothing to wait for
    assert bytes_per_rank(big, 1) == 0 and sync_seconds(160, big, 1, 1e-7) == 0
    # 160 all-reduces of a decode step over 6 ranks: one round of 5 flag reads each
    assert sync_seconds(160, s, 6, 2e-7) == pytest.approx(160 * 5 * 2e-7)


def test_the_step_s_all_reduces_by_hand():
    """Llama-3.1-70B's 80 layers, a 1,024-token prefill over 6 ranks: 160 all-reduces of 16 MiB, six ranks each."""
    op = tp_allreduce(tokens=1024, hidden=8192, layers=80, ranks=6, element_bytes=2.0)
    assert float(op.comm_bytes) == pytest.approx(160 * 6 * (5 + 1 / 6) * 16 * MIB)
    assert float(op.flops) == pytest.approx(160 * 6 * (5 / 6) * 16 * MIB / 2)
    assert float(op.comm_working_set) == pytest.approx(6 * 16 * MIB) and not op.matmul


def test_a_split_is_one_instance_of_every_core_its_ranks_on_one_socket_each():
    gnr = roofline.catalog.load_platform("gnr")  # 2 x 128 cores
    lay = make_layout(gnr, tensor_parallel=6)  # SGLang's 6 ranks over SNC3 on both sockets: 43, 43, 42 cores each
    assert float(lay.instance_cores) == 256 and float(lay.total_instances) == 1
    assert float(lay.rank_cores) == pytest.approx(256 / 6)
    assert float(make_layout(gnr, sockets=1, tensor_parallel=3).rank_cores) == pytest.approx(128 / 3)
    for bad in ({"tensor_parallel": 3}, {"tensor_parallel": 2, "instance_cores": 4}, {"tensor_parallel": 0}):
        with pytest.raises(UserError):
            make_layout(gnr, **bad)


@pytest.mark.parametrize("flag", ["3", "0", "1e300", "nan", "x"])
def test_a_split_the_layout_cannot_run_is_one_line(flag):
    proc = run_cli("estimate", "--model", "llama-3.1-70b", "--cpu", "gnr", "--phase", "decode",
                   "--tensor-parallel", flag)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "tensor-parallel" in proc.stderr


def _step(tp: int, phase: str, **kw) -> tuple[float, float, float]:
    r = roofline.estimate("llama-3.1-70b", "gnr", precision="int8-dynamic", baseline="int8-dynamic", phase=phase,
                          tensor_parallel=tp, **kw)
    p = r.precisions["int8-dynamic"]
    return p.gemm_time_s, p.non_gemm_time_s, p.realistic_step_time_s


def test_more_ranks_cost_only_their_all_reduces():
    """The ranks' GEMMs are the same work on the same cores from local memory whatever their number, and the
    weights of a split are never capped at the link between the sockets: more ranks add only all-reduce bytes, at
    the ceiling, and flag waits, in the realistic step."""
    for phase, kw in (("prefill", {"seq_len": 1024}), ("decode", {"batch": 1, "context": 1536})):
        g2, n2, r2 = _step(2, phase, **kw)
        g6, n6, r6 = _step(6, phase, **kw)
        assert g6 == pytest.approx(g2, rel=1e-12)
        assert n6 > n2 and r6 > r2
    # one process over both sockets reads half its weights across the link; a split of two ranks reads none so
    one = roofline.estimate("llama-3.1-70b", "gnr", precision="int8-dynamic", baseline="int8-dynamic",
                            phase="decode", batch=1, context=1536, instance_cores=256).precisions["int8-dynamic"]
    assert _step(2, "decode", batch=1, context=1536)[0] <= one.gemm_time_s * (1 + 1e-12)


def test_the_realistic_step_counts_the_ranks_flag_waits():
    """A decode step of one token over 6 ranks: 160 all-reduces of 16 KiB, one round of 5 flag reads each, at the
    rank-to-rank line transfer (across the sockets); in the step's dispatch term."""
    from roofline.catalog.stacks import load_stack
    from roofline.model.build import LayoutSpec, StepOptions, build_steps
    from roofline.model.efficiency import EfficiencySource
    from roofline.model.workload import make_workload

    gnr = roofline.catalog.load_platform("gnr")
    model = roofline.catalog.load_model("llama-3.1-70b")
    work = make_workload(model, "decode", 1, 1, context=1536)
    steps = build_steps(gnr, work, ["bf16"], layout=LayoutSpec(tensor_parallel=6),
                        source=EfficiencySource(stack=load_stack("torch-inductor")),
                        options=StepOptions(realistic=True))
    parts = steps.steps[0].parts
    line = steps.res.rank_line_s
    assert float(np.ravel(parts.sync_s)[0]) == pytest.approx(160 * 5 * line)


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(["gnr", "spr", "genoa", "xeon-max-9480"]), st.sampled_from([1, 2, 4]),
       st.sampled_from(["prefill", "decode"]), st.sampled_from(["bf16", "int8-dynamic", "q4_0"]))
def test_a_split_s_step_keeps_realistic_above_attainable_above_bound(cpu, per_socket, phase, precision):
    """Whatever the ranks, the CPU, the phase and the precision (a GGUF type priced on llama.cpp's profile, the
    others on torch-inductor's), the split's realistic step is no faster than its attainable ceiling, nor that
    than its bound; more ranks never make the ceiling faster."""
    platform = roofline.catalog.load_platform(cpu)
    ranks = per_socket * int(platform.sockets.value)
    kw = {"seq_len": 512} if phase == "prefill" else {"batch": 4, "context": 1024}
    times = []
    for t in (ranks, 2 * ranks):
        r = roofline.estimate("llama-3.1-8b", cpu, precision=precision, baseline=precision, phase=phase,
                              tensor_parallel=t, **kw).precisions[precision]
        assert r.bound_step_time_s <= r.step_time_s * (1 + 1e-9) <= r.realistic_step_time_s * (1 + 1e-9)
        times.append(r.step_time_s)
    assert times[0] <= times[1] * (1 + 1e-12)


def test_a_split_of_an_engine_that_has_none_on_cpus_says_so():
    """llama.cpp splits a model only over GPUs (--split-mode): a GGUF type's split is priced with its kernels, and
    the answer says that it runs no such split; torch-inductor's (SGLang's kernels) says nothing of the kind."""
    r = roofline.estimate("llama-3.1-8b", "gnr", precision="q4_k_m", baseline="q4_k_m", phase="decode",
                          tensor_parallel=2)
    assert any("splits no model over CPU ranks" in n for n in r.precisions["q4_k_m"].notes)
    r = roofline.estimate("llama-3.1-8b", "gnr", precision="int8-dynamic", baseline="int8-dynamic", phase="decode",
                          tensor_parallel=2)
    assert not any("splits no model" in n for n in r.precisions["int8-dynamic"].notes)
