"""Cycles timed on a core are the engine's own kernel as that core runs it: priced as they stand.

The llama.cpp kernel table counts most cores' cycles with llvm-mca on LLVM's model of the core; what counting leaves
out (cache misses, the front end) is one fitted efficiency for every counted kernel (``gguf-kernels``). Zen 5's
section is timed on the core itself (``timed = true``: ggml's MUL_MAT at the guest's threads), so that efficiency is
already in its cycles: its rows take class ``gguf-timed``, at efficiency 1, which no fit moves.
"""

from __future__ import annotations

import numpy as np

import roofline
from roofline.calc.kernel_cycles import call_cycles
from roofline.catalog.kernels import load_kernel_table
from roofline.catalog.records import load_records
from roofline.catalog.stacks import load_stack
from roofline.model.efficiency import Found, found_value, kernel_class
from roofline.model.layout import make_layout
from roofline.model.recipes import precision_recipe
from roofline.model.resources import Resources
from roofline.spec.kernels import Kernel


def _resources(cpu: str) -> Resources:
    platform = roofline.catalog.load_platform(cpu)
    return Resources(platform, make_layout(platform, sockets=1, instance_cores=int(platform.cores_per_socket.value)))


def test_the_table_marks_zen5_timed_and_the_others_counted():
    table = load_kernel_table("llama.cpp")
    assert table.core_cycles("znver5").timed
    assert not any(table.core_cycles(c).timed for c in ("znver3", "znver4", "sapphirerapids", "haswell"))


def test_a_timed_core_s_rows_take_the_timed_class_at_efficiency_1():
    stack = load_stack("llama.cpp")
    q40 = precision_recipe("q4_0", None)
    assert kernel_class(_resources("zen5-2vcpu"), q40, stack) == "gguf-timed"
    assert kernel_class(_resources("genoa"), q40, stack) == "gguf-kernels"
    # whatever the counted kernels' efficiency, the timed class's is 1, and the profile holds no value for it
    value, _, found = found_value({"gguf-kernels": 0.5, "int8-avx512": 0.7}, "gguf-timed")
    assert (value, found) == (1.0, Found.TIMED)
    assert "gguf-timed" not in stack.gemm_efficiency


def test_a_compute_bound_prefill_on_zen5_is_its_timed_cycles_by_hand():
    """Llama-3.2-1B q4_0 prefill of 512 tokens on the 2-vCPU Zen 5 guest: each linear layer is the repacked GEMM's
    timed cycles (calc/kernel_cycles.py) x n k / 32 over 2 cores at the INT8 path's clock, at efficiency 1; the
    estimate's kernel time is the sum of those, since every call is bound by its arithmetic there."""
    from roofline.model.efficiency import kernel_row

    res = _resources("zen5-2vcpu")
    stack = load_stack("llama.cpp")
    entries = load_kernel_table("llama.cpp").core_cycles("znver5").types["q4_0"]
    path = res.platform.compute[res.path("int8").name]
    hz = res.clock(path.isa_class)
    m, n, k = 512, 2048, 8192
    row = kernel_row(res, precision_recipe("q4_0", None), stack, np.array([m]), n, k)
    assert row is not None and row.cls == "gguf-timed"
    cycles, _ = call_cycles(Kernel.REPACK, entries, np.array([m]))
    want = float(cycles[0]) * n * k / 32 / (res.layout.instance_cores * res.layout.total_instances) / hz
    np.testing.assert_allclose(float(np.ravel(row.seconds)[0]), want, rtol=1e-12)


def test_the_fit_holds_the_timed_class_at_1():
    """A fit over the Zen 5 guest's llama-batched-bench records alone leaves their class at 1 whatever they say."""
    from roofline.fidelity.accuracy import stack_figures
    from roofline.fidelity.fit import fit

    stack = load_stack("llama.cpp")
    recs = [r for r in load_records() if r.id.startswith("zen5-2vcpu-r3-llamacpp-batched-q4_")]
    assert recs
    figs = stack_figures(recs, stack)[0]
    assert any("gguf-timed" in s.classes for f in figs for s in f.steps)
    q = fit(figs)
    assert q.gemm["gguf-timed"] == 1.0
