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

pytestmark = pytest.mark.slow  # the file takes seconds: out of the fast stage (pytest -m "not slow")

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


# ------------------------------------------------------------------ a calibration is bound to its measured host


def _gnr_probe(tmp_path):
    """Granite Rapids numbers in a file named like every probe: 'host'."""
    text = (REPO / "platforms" / "gnr.toml").read_text()
    lines = ['name = "host"' if line.startswith("name = ") else line for line in text.splitlines()
             if not line.startswith("aliases = ")]
    path = tmp_path / "host.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_shipped_calibration_applies_to_its_host_by_identity_not_name(tmp_path):
    from roofline.catalog import load_calibration, load_platform

    cal = load_calibration("zen4-2vcpu")
    assert cal.platform == "host" and cal.host is not None
    assert cal.host.differences(load_platform("zen4-2vcpu")) == []  # the catalog entry of that VM
    assert cal.host.differences(load_platform_file(str(RESULTS / "zen4-2vcpu-probe.toml"))) == []  # its probe
    ok = run_cli("estimate", "--model", "bert-large", "--cpu", "zen4-2vcpu", "--calibration", "zen4-2vcpu", "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["notes"] == [], ok.stderr
    gnr = run_cli("estimate", "--model", "bert-large", "--cpu", str(_gnr_probe(tmp_path)), "--calibration", "zen4-2vcpu")
    assert gnr.returncode == 2 and gnr.stderr.count("\n") == 1, gnr.stderr
    assert "fitted on platform 'host', not on 'host'" in gnr.stderr and "2 x 128 cores, not 1 x 2" in gnr.stderr


def test_a_calibration_without_a_host_named_host_says_why(tmp_path):
    text = (REPO / "platforms" / "calibration" / "zen4-2vcpu.toml").read_text()
    head, rest = text.split("[host]", 1)
    old = tmp_path / "old.toml"
    old.write_text(head + "[gemm_efficiency]" + rest.split("[gemm_efficiency]", 1)[1])
    proc = run_cli("estimate", "--model", "bert-large", "--cpu", "zen4-2vcpu", "--calibration", str(old))
    assert proc.returncode == 2 and "names no measured host" in proc.stderr and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("value", ["1e-300", "0.0009", "1.6", "0"])
def test_an_efficiency_outside_its_range_is_refused(tmp_path, value):
    text = (REPO / "platforms" / "calibration" / "zen4-2vcpu.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('"fp32" = { value = 0.962,', f'"fp32" = {{ value = {value},', 1))
    proc = run_cli("estimate", "--model", "bert-large", "--cpu", "zen4-2vcpu", "--calibration", str(bad))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "gemm_efficiency.fp32" in proc.stderr and "0.001 to 1.5" in proc.stderr, proc.stderr


def test_calibrate_writes_the_measured_host(tmp_path, host):
    from roofline.catalog import load_calibration
    from roofline.spec.calibration import platform_fingerprint

    out = tmp_path / "c.toml"
    proc = run_cli("calibrate", BASE, "--cpu", str(RESULTS / "zen4-2vcpu-probe.toml"), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    cal = load_calibration(str(out))
    assert (cal.host.cpu_model, cal.host.sockets, cal.host.cores_per_socket) == ("AMD EPYC", 1, 2)
    assert cal.host.probe_sha256 == platform_fingerprint(host) and cal.host.isa == host.isa


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO / "platforms" / "calibration").glob("*.toml")))
def test_a_shipped_calibration_is_what_its_own_command_gives(tmp_path, name):
    """Each committed host calibration is the output of the command in its first line, run on the committed
    report: a change to the model that moves a calibrated efficiency fails here until it is refitted."""
    path = REPO / "platforms" / "calibration" / name
    command = path.read_text().splitlines()[0].removeprefix("# ").split()
    assert command[:2] == ["roofline", "calibrate"] and command[-2] == "-o"
    out = tmp_path / name
    proc = run_cli(*command[1:-1], str(out), cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text().splitlines()[1:] == path.read_text().splitlines()[1:]
