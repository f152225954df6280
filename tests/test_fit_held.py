"""A path class the figures cannot pin is held at its ceiling's rate, not fitted.

Qwen3-30B-A3B's GGUF keeps its MoE router (ffn_gate_inp) in F32: in a 512-token prefill its rows are a sliver of
the step, the only F32 rows of more than one activation row in llama.cpp's corpus. Left free, the fit gave that class
whatever value absorbed the rest of those two figures' error (2% of the FP32 peak), and every F16 prefill estimate
took it. A class under ``MIN_CLASS_SHARE`` of every figure's ceiling time it is in is held at 1 instead.
"""

from __future__ import annotations

import numpy as np

from roofline.catalog.records import load_records
from roofline.catalog.stacks import load_stack
from roofline.fidelity.accuracy import stack_figures
from roofline.fidelity.fit import MIN_CLASS_SHARE, FitTable, class_shares, fit


def _figs():
    stack = load_stack("llama.cpp")
    recs = [r for r in load_records() if r.id.startswith(("llamacpp-markkobo-epyc9r14-2numa-qwen3-30b",
                                                          "zen5-2vcpu-r3-llamacpp-batched-q4_0-2026"))]
    assert len(recs) >= 3
    return stack_figures(recs, stack)[0]


def test_the_router_s_f32_rows_are_a_sliver_of_their_steps():
    figs = _figs()
    classes = sorted({c for f in figs for s in f.steps for c in s.classes})
    table = FitTable.of(figs, classes)
    shares = dict(zip(classes, class_shares(table)))
    assert 0 < shares["fp32-avx512"] < MIN_CLASS_SHARE
    assert shares["gguf-kernels"] > 0.5 and shares["gguf-timed"] > 0.5
    # by hand for one step: its rows' count x max(compute, memory) over its ceiling
    p = table.parts
    step = int(p.row_step[np.asarray(table.row_class) == classes.index("fp32-avx512")][0])
    rows = (p.row_step == step) & (np.asarray(table.row_class) == classes.index("fp32-avx512"))
    mine = float((p.count[rows] * np.maximum(p.t_compute[rows], p.t_memory[rows])).sum() / p.ceiling_s[step])
    assert mine <= shares["fp32-avx512"] + 1e-15


def test_a_faint_class_is_held_at_1_and_said_so():
    q = fit(_figs())
    assert "fp32-avx512" in q.held and q.gemm["fp32-avx512"] == 1.0
    assert "gguf-kernels" not in q.held and "gguf-timed" not in q.held
    value = load_stack("llama.cpp").gemm_efficiency.get("fp32-avx512")
    assert value is not None and value.value == 1.0 and value.kind == "assumed" and "not fitted" in value.source
