"""The thread barriers of llama.cpp's graph: counted from its source, priced at the core-to-core latency.

``T_b = L r n t_line`` (:mod:`roofline.calc.barriers`): L layers per step, r rounds per layer (the llama.cpp
profile's ``[barriers]`` rule: 40 per Llama layer), n threads, t_line one cache line's transfer between two cores (a
platform's ``core_to_core_ns``, else its core's table entry).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from roofline.calc.barriers import barrier_seconds
from roofline.catalog import load_platform
from roofline.catalog.stacks import load_stack
from roofline.model.layout import make_layout
from roofline.model.realistic import TermName
from roofline.model.resources import Resources
from roofline.spec.core_latency import DEFAULT_LINE_TRANSFER_NS, LINE_TRANSFER_NS
from roofline.spec.sourced import Sourced
from roofline.spec.stack import BarrierRule


def test_barrier_seconds_by_hand():
    # Llama-3.2-1B: 16 layers of 40 rounds, on 96 Genoa cores at 87 ns: 640 x 96 x 87 ns = 5.345 ms
    assert barrier_seconds(16, 40, 96, 87e-9) == pytest.approx(5.345e-3, rel=1e-3)


@given(st.floats(1, 1e4), st.floats(0, 50), st.integers(2, 512), st.floats(1e-9, 1e-6))
def test_barrier_seconds_linear_in_threads(layers, rounds, n, line):
    one = barrier_seconds(layers, rounds, n, line)
    assert barrier_seconds(layers, rounds, 2 * n, line) == pytest.approx(2 * one)
    assert one >= 0


def test_one_thread_passes_no_barrier():
    # ggml_barrier returns at once when its pool has one thread; from two threads on, n transfers a round
    assert barrier_seconds(16, 40, 1, 87e-9) == 0.0
    assert barrier_seconds(16, 40, 2, 87e-9) == pytest.approx(16 * 40 * 2 * 87e-9)


def test_the_llama_cpp_rule_counts_40_rounds_per_layer():
    rule = load_stack("llama.cpp").barriers
    assert rule is not None
    assert rule.rounds_per_layer == 22 + 9 + 9  # nodes that are not views, mul_mat's own barrier, its chunk counter
    assert "ggml_barrier" in rule.evidence and "0c1e570" in rule.evidence


def test_rounds_out_of_range_are_refused():
    for bad in (-1.0, float("nan"), 1e300):
        with pytest.raises(ValueError, match="rounds_per_layer"):
            BarrierRule(rounds_per_layer=bad)


def _res(cpu: str, cores: int | None = None) -> Resources:
    p = load_platform(cpu)
    return Resources(p, make_layout(p, sockets=1, cores=cores, instance_cores=cores))


def test_line_transfer_from_the_core_table_and_the_platform_file():
    genoa = _res("genoa")
    assert genoa.line_transfer_s == pytest.approx(LINE_TRANSFER_NS["znver4"].value * 1e-9)
    assert genoa.used["core_to_core"].what == "core_latency.znver4"
    desktop = _res("ryzen-7950x")  # its own file's figure (two CCDs), not Genoa's twelve
    assert desktop.line_transfer_s == pytest.approx(68e-9)
    assert desktop.used["core_to_core"].what == "core_to_core_ns"


def test_a_core_the_table_does_not_know_takes_the_assumed_default():
    p = dataclasses.replace(load_platform("genoa"), core="")
    res = Resources(p, make_layout(p, sockets=1))
    assert res.line_transfer_s == pytest.approx(DEFAULT_LINE_TRANSFER_NS.value * 1e-9)
    assert DEFAULT_LINE_TRANSFER_NS.kind == "assumed"


def test_every_table_entry_is_sourced_and_in_range():
    for core, ns in LINE_TRANSFER_NS.items():
        assert isinstance(ns, Sourced) and ns.source, core
        assert 20 <= ns.value <= 300, core


def _decode(cpu: str, cores: int, precision: str = "q4_k_m", stack: str = "llama.cpp"):
    """(parts, realistic terms) of a decode step of Llama-3.2-1B priced by ``stack``, one instance of ``cores``."""
    from roofline.catalog import load_model
    from roofline.model.build import LayoutSpec
    from roofline.model.efficiency import EfficiencySource
    from roofline.model.estimate import EstimateQuery, evaluate
    from roofline.model.workload import WorkloadSpec
    from roofline.spec.vocab import Phase

    ev = evaluate(load_platform(cpu), load_model("llama-3.2-1b"), EstimateQuery(
        precisions=[precision], baseline=precision,
        workload=WorkloadSpec(phase=Phase.DECODE, batch=1, seq_len=512, context=512),
        layout=LayoutSpec(sockets=1, cores=cores, instance_cores=cores),
        source=EfficiencySource(stack=load_stack(stack))))
    return ev.evaluated[0].parts, {t.name: t for t in ev.realistic[0].terms}


def test_the_dispatch_term_holds_the_counted_barriers():
    rule = load_stack("llama.cpp").barriers
    t = LINE_TRANSFER_NS["znver4"].value * 1e-9
    for cores in (48, 96):
        parts, terms = _decode("genoa", cores)
        assert float(parts.barrier_s[0]) == pytest.approx(16 * rule.rounds_per_layer * cores * t, rel=1e-9)
        dispatch = terms[TermName.DISPATCH]
        assert dispatch.seconds >= float(parts.barrier_s[0]) and "barrier" in dispatch.how


def test_a_torch_stack_has_no_barrier_term():
    parts, terms = _decode("genoa", 96, "bf16", "torch-inductor")
    assert np.all(parts.barrier_s == 0)
    assert all("barrier" not in t.how for t in terms.values())


def test_core_to_core_ns_out_of_range_in_a_platform_file_is_one_line(tmp_path):
    from clitools import run_cli

    from roofline.catalog import find_file

    text = find_file("platforms", "genoa").read_text()
    for bad in ("nan", "1e300", "-5", '"fast"'):
        f = tmp_path / f"p{abs(hash(bad))}.toml"
        f.write_text(text.replace('core = "znver4"', f'core = "znver4"\ncore_to_core_ns = {{ value = {bad}, kind = '
                                  '"measured", source = "x" }', 1))
        r = run_cli("estimate", "--model", "bert-base", "--cpu", str(f))
        assert r.returncode == 2, (bad, r.stderr)
        assert "core_to_core_ns" in r.stderr and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_platforms_show_lists_a_files_own_core_to_core_latency():
    from clitools import run_cli

    r = run_cli("platforms", "show", "ryzen-7950x")
    assert r.returncode == 0, r.stderr
    row = next(line for line in r.stdout.splitlines() if line.startswith("core_to_core"))
    assert "68 ns" in row and "measured" in row
