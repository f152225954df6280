"""Calibration fits: known parameters come back out of synthetic measurements, reports pool, and
repeated profiles keep the median per category."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from clitools import REPO, run_cli

from roofline.catalog import load_model, load_platform_file
from roofline.catalog.reports import load_report
from roofline.fidelity.calibrate import fit_calibration, kernel_fit
from roofline.fidelity.check import report_model
from roofline.model.harness import shape_run
from roofline.model.realistic import UNFITTED, Efficiency, TermName

RESULTS = REPO / "validation" / "results"
BASE = str(RESULTS / "zen4-2vcpu-bert-base.json")
LARGE = str(RESULTS / "zen4-2vcpu-bert-large.json")


@pytest.fixture(scope="module")
def host():
    return load_platform_file(str(RESULTS / "zen4-2vcpu-probe.toml"))


def _with_times(report, seconds_of):
    """The report with each shape's measured time replaced by ``seconds_of(shape)``."""
    shapes = [dataclasses.replace(s, measured_ops_per_s=2.0 * s.m * s.n * s.k / seconds_of(s)) for s in report.shapes]
    return dataclasses.replace(report, shapes=shapes)


def _parts(host, s):
    """(ceiling, activation quantization, the other terms) of one isolated linear, unfitted."""
    real = shape_run(host, s.precision, s.name, s.m, s.n, s.k).realistic(UNFITTED)
    quant = real.seconds(TermName.ACTIVATION_QUANTIZATION)
    return real.ceiling_s, quant, real.realistic_s - real.ceiling_s - quant


def test_kernel_fit_recovers_known_efficiencies(host):
    """Shapes timed at exactly ceiling / 0.8 + quantization / 0.1 + compensation + dispatch: the fit
    returns 0.8 and 0.1 for INT8, 0.8 and no quantization efficiency for FP32 and BF16."""
    report = load_report(BASE)
    dispatch = Efficiency(call_s=2e-5, per_op_s=0.0, fitted=frozenset({"call_s"}))

    def synthetic(s):
        ceiling, quant, other = _parts(host, s)
        return ceiling / 0.8 + quant / 0.1 + other + 2e-5

    fit = kernel_fit([_with_times(report, synthetic)], host, dispatch)
    assert set(fit) == {"fp32", "bf16", "int8-dynamic", "int8-static"}
    for precision, f in fit.items():
        assert f.kernel == pytest.approx(0.8, rel=1e-9)
        assert f.shapes == 4
        assert f.quantization == (pytest.approx(0.1, rel=1e-9) if precision.startswith("int8") else None)


def test_kernel_fit_drops_a_negative_quantization_coefficient(host):
    """Times that fall as the quantization term grows fit no quantization cost: eta_q is None and the
    kernel efficiency is refitted alone."""
    report = load_report(BASE)

    def synthetic(s):
        ceiling, quant, _ = _parts(host, s)
        return ceiling / 0.9 - 5 * quant

    fit = kernel_fit([_with_times(report, synthetic)], host, UNFITTED)
    assert fit["int8-static"].quantization is None and 0 < fit["int8-static"].kernel < 1.5


def test_reports_pool_by_geometric_mean(host):
    """A second report whose encoder ran twice as slow (every profiler part too) halves its GEMM
    efficiency; pooled, the efficiency is the geometric mean, and the source names both reports."""
    a = load_report(BASE)
    slow = dataclasses.replace(a, encoder=[dataclasses.replace(
        e, latency_s=2 * e.latency_s, linear_block_s=2 * e.linear_block_s, attention_s=2 * e.attention_s,
        other_s=2 * e.other_s) for e in a.encoder])
    spec = report_model(a, load_model(a.model))
    one = fit_calibration([(a, spec, "a.json")], host)
    both = fit_calibration([(a, spec, "a.json"), (slow, spec, "slow.json")], host)
    assert set(both.gemm_efficiency) == set(one.gemm_efficiency) and len(one.gemm_efficiency) >= 3
    for precision, v in both.gemm_efficiency.items():
        assert v.value == pytest.approx(one.gemm_efficiency[precision].value / math.sqrt(2), rel=1e-3)
        assert "a.json" in v.source and "slow.json" in v.source
    assert both.non_gemm_efficiency["other-fp32"].value == pytest.approx(
        one.non_gemm_efficiency["other-fp32"].value / math.sqrt(2), rel=1e-3)


def test_calibrate_cli_pools_reports_of_one_host(tmp_path):
    out = tmp_path / "cal.toml"
    proc = run_cli("calibrate", BASE, LARGE, "--cpu", str(RESULTS / "zen4-2vcpu-probe.toml"), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert "zen4-2vcpu-bert-base.json" in text and "zen4-2vcpu-bert-large.json" in text
    other = tmp_path / "other.json"
    data = json.loads(open(LARGE).read())
    data["host"]["cpu_model"] = "Some Other CPU"
    other.write_text(json.dumps(data))
    proc = run_cli("calibrate", BASE, str(other), "--cpu", str(RESULTS / "zen4-2vcpu-probe.toml"), "-o", str(out))
    assert proc.returncode == 2 and "calibrate one host at a time" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_median_breakdown_outvotes_a_slow_profile():
    from roofline.validation.timing import Breakdown, median_breakdown

    runs = [Breakdown(1.0, 0.1, 0.2, {"mm": 1.0}), Breakdown(9.0, 0.1, 5.0, {"mm": 9.0}),
            Breakdown(1.2, 0.3, 0.2, {"mm": 1.2, "qlinear": 0.5})]
    m = median_breakdown(runs)
    assert (m.linear_s, m.attention_s, m.other_s) == (1.2, 0.1, 0.2)
    assert m.gemm_ops == {"mm": 1.2, "qlinear": 0.0}
