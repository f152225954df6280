"""`roofline check`: the paper's Table 14 fractions, the gap attribution, calibration, bad input."""

from __future__ import annotations

import json

import pytest
from clitools import REPO, run_cli, run_json

from roofline.catalog import load_model, load_platform
from roofline.fidelity.check import check_typed

RESULTS = REPO / "validation" / "results"

# the paper's Table 14 (BERT-large): (cpu, precision, baseline, throughput, its %, linear block, its %)
TABLE_14 = [
    ("icx", "int8-dynamic", "fp32", 2.22, 70, 3.59, 90),
    ("icx", "int8-static", "fp32", 2.58, 82, 3.87, 97),
    ("gnr", "int8-dynamic", "fp32", 5.02, 71, 9.9, 89),
    ("gnr", "int8-static", "fp32", 5.82, 82, 8.7, 78),
    ("gnr", "int8-dynamic", "bf16", 1.37, 90, 1.84, 96),
    ("gnr", "int8-static", "bf16", 1.59, 104, 1.61, 84),
]


@pytest.mark.parametrize("cpu, precision, baseline, thr, thr_pct, lin, lin_pct", TABLE_14)
def test_paper_table_14_fractions(cpu, precision, baseline, thr, thr_pct, lin, lin_pct):
    r = check_typed(load_platform(cpu), load_model("bert-large"), precision, baseline, throughput_speedup=thr,
                    linear_speedup=lin, memory_model="paper")
    (c,) = r.comparisons
    throughput, linear = c.rows
    assert round(100 * throughput.fraction_of_ceiling) == thr_pct
    assert round(100 * linear.fraction_of_ceiling) == lin_pct
    assert c.f_gemm_source.startswith("measured")  # the paper's own f_GEMM and s_non


def test_attribution_adds_up():
    r = check_typed(load_platform("icx"), load_model("bert-large"), "int8-dynamic", "fp32", throughput_speedup=2.22)
    (c,) = r.comparisons
    throughput = c.rows[0]
    ceiling_time = 1 / throughput.ceiling
    gap = 1 / 2.22 - ceiling_time
    explained = sum(t.share_of_baseline for t in c.terms)
    assert explained + c.unexplained == pytest.approx(gap)
    assert sum(t.share_of_gap for t in c.terms) == pytest.approx(c.explained_gap)
    assert 1 / throughput.realistic == pytest.approx(ceiling_time + explained)
    names = [t.name for t in c.terms]
    assert names[:4] == ["activation quantization", "smoothing", "u8 shift and compensation", "unfused post-ops"]
    assert next(t for t in c.terms if t.name == "u8 shift and compensation").seconds > 0  # VNNI, u8 x s8
    static = check_typed(load_platform("gnr"), load_model("bert-large"), "int8-static", "fp32", throughput_speedup=5.82)
    terms = {t.name: t.seconds for t in static.comparisons[0].terms}
    assert terms["u8 shift and compensation"] == 0 and terms["unfused post-ops"] == 0  # AMX s8 x s8; GeLU fused
    dyn = check_typed(load_platform("gnr"), load_model("bert-large"), "int8-dynamic", "fp32", throughput_speedup=5.02)
    dterms = {t.name: t.seconds for t in dyn.comparisons[0].terms}
    assert dterms["activation quantization"] > terms["activation quantization"]  # the scale search pass
    assert dterms["unfused post-ops"] == 0  # GeLU as its own pass, as the ceiling's non-GEMM work counts it


def test_static_quantization_is_fused_in_a_model_and_a_pass_alone():
    """Hand derivation on the Zen 4 probe (VNNI, a measured LLC bandwidth, no L2 figure): in a compiled
    model the static quantize is fused into X's producer, so it costs its ops, ``4 M K / P_fp32``; a
    linear called alone reads X (fp32) and writes it in INT8, ``max(4 M K / P_fp32, 5 M K / B)`` with B
    the LLC bandwidth (X fits the LLC)."""
    from roofline.calc.shapes import gemm_list
    from roofline.catalog import load_platform_file
    from roofline.model.harness import shape_run
    from roofline.model.realistic import realistic_step
    from roofline.spec.precision import get_recipe

    host = load_platform_file(str(RESULTS / "zen4-2vcpu-probe.toml"))
    m, n, k = 256, 1024, 4096
    gemms = gemm_list([("ffn_down", m, n, k, 1)])
    recipe = get_recipe("int8-static")
    h = shape_run(host, "int8-static", "ffn_down", m, n, k)
    res, step = h.res, h.step

    def quant(graph: bool) -> float:
        r = realistic_step(res, recipe, gemms, step, mode="fp32", graph=graph)
        return next(t.seconds for t in r.terms if t.name == "activation quantization")

    p_vec = 2 * 2.596e9 * 32.82  # cores x the probe's clock x its FP32 ops per cycle
    assert quant(True) == pytest.approx(4 * m * k / p_vec, rel=1e-3)
    assert quant(False) == pytest.approx(max(4 * m * k / p_vec, 5 * m * k / 163.4e9), rel=1e-3)
    assert quant(False) > quant(True)


def test_a_measurement_above_the_ceiling_is_called_what_it_is():
    r = check_typed(load_platform("gnr"), load_model("bert-large"), "int8-static", "bf16", throughput_speedup=1.59, memory_model="paper")
    (c,) = r.comparisons
    assert c.rows[0].fraction_of_ceiling > 1 and c.explained_gap == 0 and c.unexplained == 0
    assert any("not a real breakthrough" in n for n in r.notes)
    # an error in the model, and said as one: the JSON flags the row, the notes name the input bounding it
    row = c.rows[0]
    assert row.ceiling_violation and row.suspect == "bandwidth"  # DRAM-bound on Granite Rapids (paper model)
    assert c.suspect_detail.startswith("the DRAM bandwidth, 500 GB/s per socket (derived:")
    note = next(n for n in r.notes if n.startswith("ceiling violation: int8-static vs bf16 throughput speedup 1.59x"))
    assert "suspect the DRAM bandwidth" in note and "or the bf16 baseline ran further below its own ceiling" in note
    below = check_typed(load_platform("gnr"), load_model("bert-large"), "int8-static", "bf16", throughput_speedup=1.2,
                        memory_model="paper")
    assert not below.comparisons[0].rows[0].ceiling_violation and below.comparisons[0].suspect_detail == ""
    assert not any(n.startswith("ceiling violation") for n in below.notes)


def test_a_report_row_faster_than_its_ceiling_names_the_suspect(tmp_path):
    """check --report on a probe whose INT8 peak is 20x too low (what an emulated _int_mm peak did on a
    Zen 1 guest): each INT8 shape and the INT8 encoders run faster than their ceilings; the rows say so, the
    suspect is the peak, and the printed answer (even --brief) says it."""
    import dataclasses

    from roofline.catalog import load_platform_file
    from roofline.catalog.reports import load_report
    from roofline.catalog.write import platform_toml
    from roofline.fidelity.check import check_report, report_model

    results = REPO / "validation" / "results"
    probe = load_platform_file(results / "zen4-2vcpu-probe.toml")
    int8 = probe.compute["int8-measured"]
    low = dataclasses.replace(probe, compute={**probe.compute, "int8-measured": dataclasses.replace(
        int8, ops_per_cycle=dataclasses.replace(int8.ops_per_cycle, value=int8.ops_per_cycle.value / 20))})
    report = load_report(results / "zen4-2vcpu-bert-base.json")
    r = check_report(report, low, report_model(report, load_model("bert-base")), source="r.json")
    bad = [row for row in r.latency if row.ceiling_violation]
    assert bad and all(row.precision.startswith("int8") for row in bad)
    assert all(row.suspect == "peak" and row.suspect_detail.startswith("the peak, int8-measured's ") for row in bad)
    assert all(row.measured_s < row.ceiling_s and row.ceiling_error > 0 for row in bad)  # faster than the bound
    fine = check_report(report, probe, report_model(report, load_model("bert-base")), source="r.json")
    assert not any(row.ceiling_violation for row in fine.latency)
    notes = [n for n in r.notes if n.startswith("ceiling violation: ")]
    assert len(notes) >= len(bad) and "faster than its" in notes[0] and "suspect the peak" in notes[0]
    path = tmp_path / "low.toml"
    path.write_text(platform_toml(low))
    proc = run_cli("check", "--report", str(results / "zen4-2vcpu-bert-base.json"), "--cpu", str(path), "--brief")
    assert proc.returncode == 0, proc.stderr
    assert "ran faster than its ceiling" in proc.stdout and "suspect the peak, int8-measured's" in proc.stdout


@pytest.mark.parametrize("args, fragment", [
    (["--throughput-speedup", "-2"], "positive number"),
    (["--throughput-speedup", "0"], "positive number"),
    (["--throughput-speedup", "2", "--linear-speedup", "-1"], "positive number"),
    (["--throughput-speedup", "x"], "--throughput-speedup"),
])
def test_typed_bad_input(args, fragment):
    proc = run_cli("check", "--model", "bert-large", "--cpu", "icx", "--precision", "int8-static", *args)
    assert proc.returncode == 2 and fragment in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_report_from_another_model_or_cpu_or_with_failed_numerics(tmp_path):
    report = RESULTS / "zen4-2vcpu-bert-base.json"
    probe = RESULTS / "zen4-2vcpu-probe.toml"
    other_model = run_cli("check", "--report", str(report), "--model", "bert-large", "--cpu", str(probe), cwd=REPO)
    assert other_model.returncode == 2 and "is for model 'bert-base'" in other_model.stderr
    other_cpu = run_cli("check", "--report", str(report), "--cpu", "gnr", cwd=REPO)
    assert other_cpu.returncode == 2 and "measured on 'host', not 'gnr'" in other_cpu.stderr
    data = json.loads(report.read_text())
    data["shapes"][0]["numerics_ok"] = False
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    failed = run_cli("check", "--report", str(bad), "--cpu", str(probe))
    assert failed.returncode == 2 and "failed numerics" in failed.stderr and "Traceback" not in failed.stderr
    junk = tmp_path / "junk.json"
    junk.write_text('{"a": 1}')
    assert "not a `roofline validate --json` report" in run_cli("check", "--report", str(junk)).stderr


def test_check_json_contract():
    data = run_json("check", "--model", "bert-large", "--cpu", "gnr", "--precision", "int8-static",
                    "--throughput-speedup", "5.82", "--linear-speedup", "8.7")
    (c,) = data["comparisons"]
    assert [r["metric"] for r in c["rows"]] == ["throughput", "linear block"]
    assert {"name", "seconds", "share_of_baseline", "share_of_gap", "how", "calibrated"} <= set(c["terms"][0])
    # the realistic speedup's band: Granite Rapids' INT8 on AMX, the profile's figures of that class
    from roofline.catalog.stacks import load_stack

    own = load_stack("torch-inductor").accuracy.classes["int8-amx"]
    assert c["error_band"] == {"path_class": "int8-amx", "realistic_error": max(own.median_abs_error,
                               data["realistic_accuracy"]["median_abs_error"]),
                               "class_figures": own.figures, "class_platforms": own.platforms}


def test_calibrate_and_check_a_report(tmp_path):
    from roofline.catalog import load_calibration

    base = RESULTS / "zen4-2vcpu-bert-base.json"
    out = tmp_path / "cal.toml"
    proc = run_cli("calibrate", str(base), "--cpu", str(RESULTS / "zen4-2vcpu-probe.toml"), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    c = load_calibration(str(out))
    assert set(c.kernel_efficiency) == {"fp32", "bf16", "int8-dynamic", "int8-static"}
    assert set(c.gemm_efficiency) <= set(c.kernel_efficiency) and "fp32" in c.gemm_efficiency
    assert set(c.kernel_quantization_efficiency) == {"int8-dynamic", "int8-static"}
    for group in (c.gemm_efficiency, c.kernel_efficiency, c.kernel_quantization_efficiency):
        assert all(0 < v.value <= 1.5 and "zen4-2vcpu-bert-base.json" in v.source for v in group.values())
    assert {"attention-fp32", "other-fp32"} <= set(c.non_gemm_efficiency)
    dispatch = json.loads(base.read_text())["dispatch"]
    assert (c.call_s.value, c.per_op_s.value) == (pytest.approx(dispatch["call_s"], rel=1e-3),
                                                  pytest.approx(dispatch["per_op_s"], rel=1e-3))
    data = run_json("check", "--report", str(RESULTS / "zen4-2vcpu-bert-large.json"), "--cpu",
                    str(RESULTS / "zen4-2vcpu-probe.toml"), "--calibration", str(out))
    assert {(x["precision"], x["baseline"]) for x in data["comparisons"]} >= {("int8-static", "fp32"),
                                                                             ("int8-dynamic", "fp32")}
    rows = {(r["what"], r["precision"]): r for r in data["latency"]}
    assert ("encoder", "int8-static") in rows and ("ffn_down", "int8-dynamic") in rows
    for (what, precision), r in rows.items():
        assert r["realistic_s"] >= r["ceiling_s"], (what, precision)  # efficiencies are capped at 1
        assert r["ceiling_error"] == pytest.approx(r["ceiling_s"] / r["measured_s"] - 1)
    for comp in data["comparisons"]:  # the realistic speedup: the modelled baseline over the modelled precision
        thr = comp["rows"][0]
        base, mine = rows[("encoder", comp["baseline"])], rows[("encoder", comp["precision"])]
        assert thr["realistic"] == pytest.approx(base["realistic_s"] / mine["realistic_s"])
        assert thr["fraction_of_realistic"] == pytest.approx(thr["measured"] / thr["realistic"])
    uncal = run_json("check", "--report", str(RESULTS / "zen4-2vcpu-bert-large.json"), "--cpu",
                     str(RESULTS / "zen4-2vcpu-probe.toml"))
    assert any("uncalibrated" in n for n in uncal["notes"])


def test_estimate_shows_ceiling_and_realistic():
    data = run_json("estimate", "--model", "bert-large", "--cpu", "icx")
    (s,) = data["speedups"]
    assert s["realistic"] < s["end_to_end_ceiling"]
    assert {o["name"] for o in s["overheads"]} >= {"activation quantization", "u8 shift and compensation"}
