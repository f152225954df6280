"""Real kernel runs on tiny shapes: compiled, checked, named and timed on this machine."""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchao")

from roofline.validation import kernels as kernels_mod  # noqa: E402
from roofline.validation.kernels import Shape, TimingSettings, run_shape  # noqa: E402
from roofline.validation.torch_env import require_torchao  # noqa: E402

from roofline.catalog import load_platform  # noqa: E402

pytestmark = [pytest.mark.kernels, pytest.mark.slow]  # slow: out of the fast stage
FAST = TimingSettings(threads=torch.get_num_threads(), rounds=2, min_run_time=0.02)
SHAPE = Shape("tiny", 32, 64, 128)


@pytest.fixture(scope="module", autouse=True)
def _torchao():
    require_torchao()


@pytest.fixture(scope="module")
def platform():
    return load_platform("genoa")


def by_precision(rows):
    return {r.precision: r for r in rows}


def test_fp32_and_int8_run_checked_and_named(platform):
    rows = by_precision(run_shape(SHAPE, ["fp32", "int8-static"], platform, None, FAST))
    fp32, int8 = rows["fp32"], rows["int8-static"]
    assert fp32.numerics_ok and fp32.max_rel_error < 1e-5
    assert fp32.kernel.startswith(("mkl._mkl_linear", "mkldnn._linear_pointwise", "aten.addmm", "aten.mm"))
    assert int8.max_rel_error > 1e-5  # really INT8: not FP32's error
    assert int8.quantized and ("qlinear_pointwise" in int8.kernel or "_int_mm" in int8.kernel)
    if _has_int8_dot_product():
        assert int8.numerics_ok and int8.max_rel_error < 3e-2
        timed = (fp32, int8)
    else:  # AVX2 byte multiplies saturate: the harness must report that and not time the result
        assert int8.numerics_ok or (int8.measured_ops_per_s is None and any("numerics" in f for f in int8.flags))
        timed = (fp32,) + ((int8,) if int8.numerics_ok else ())
    for r in timed:
        assert r.measured_ops_per_s > 0 and r.achieved_fraction == pytest.approx(
            r.measured_ops_per_s / r.predicted_ops_per_s)
        assert r.compile_s > 0


def _has_int8_dot_product() -> bool:
    from roofline.validation.host import detect_host

    f = detect_host().flags
    return f["avx512_vnni"] or f["avx_vnni"] or f["amx_int8"]


def test_a_failing_variant_leaves_the_others_intact(platform):
    rows = by_precision(_run_with_unknown(platform))
    assert rows["fp32"].measured_ops_per_s > 0
    bad = rows["int8-bogus"]
    assert bad.measured_ops_per_s is None and not bad.numerics_ok
    assert any(f.startswith("error: ValueError") for f in bad.flags)


def _run_with_unknown(platform):
    kernels_mod.RECIPE.setdefault("int8-bogus", "int8-static")
    try:
        return run_shape(SHAPE, ["fp32", "int8-bogus"], platform, None, FAST)
    finally:
        kernels_mod.RECIPE.pop("int8-bogus")


def test_an_int8_variant_that_is_still_float_is_flagged_not_timed(platform, monkeypatch):
    from roofline.validation import prepare

    real = prepare.build_variant
    monkeypatch.setattr(prepare, "build_variant",
                        lambda name, *a: real("fp32" if name == "int8-static" else name, *a))
    rows = by_precision(run_shape(SHAPE, ["fp32", "int8-static"], platform, None, FAST))
    fake = rows["int8-static"]
    assert fake.quantized is False and fake.measured_ops_per_s is None
    assert any("not quantized" in f for f in fake.flags)
    assert rows["fp32"].measured_ops_per_s > 0


def test_missing_torch_is_one_actionable_line():
    code = ("import sys; sys.modules['torch'] = None; from roofline.cli import main; "
            "sys.exit(main(['validate', '--model', 'bert-base', '--quick']))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "pip install 'roofline[validate]'" in proc.stderr


def test_decode_kernels_stream_weights_from_dram():
    """Weight-only decode GEMMs: enough distinct weights to exceed 4x the (here tiny) LLC, each checked,
    named and timed; the achieved bandwidth is weight bytes over time."""
    import dataclasses

    from roofline.validation.decode_kernels import run_decode_kernels

    from roofline.spec.sourced import Sourced

    genoa = load_platform("genoa")
    one_mib = dataclasses.replace(genoa.llc, size_mib=Sourced(value=1, kind="assumed", source="test"),
                                  domains_per_socket=1)
    small = dataclasses.replace(genoa, llc=one_mib, sockets=Sourced(value=1, kind="assumed", source="test"))
    rows = {r.precision: r for r in run_decode_kernels(512, 512, [1], small, FAST)}
    assert set(rows) == {"bf16-weights", "int8-weight-only", "int4-weight-only"}
    for r in rows.values():
        assert r.weight_bytes >= 4 * 2**20 and r.m == 1
        if r.measured_s is not None:
            assert r.numerics_ok and r.quantized is not False
            assert r.achieved_bytes_per_s == pytest.approx(r.weight_bytes / r.measured_s)
            assert r.bandwidth_fraction == pytest.approx(r.achieved_bytes_per_s / r.dram_bytes_per_s)
    assert rows["int4-weight-only"].copies > rows["int8-weight-only"].copies > rows["bf16-weights"].copies
    assert rows["int8-weight-only"].quantized and "int8pack" in rows["int8-weight-only"].kernel
    assert rows["int4-weight-only"].quantized and "int4" in rows["int4-weight-only"].kernel


def test_a_kernel_faster_than_its_ceiling_is_an_error_in_the_model(platform):
    """A measured platform of one core whose FP32 peak is 0.01 ops per cycle at 0.1 GHz, 1 Mops/s, the lowest a
    platform file may state (a probe that timed the wrong kernel): the row is marked, the suspect is the peak, and the
    flag names where its ops per cycle came from. (At the file's 3.55 GHz, 35 Mops/s, a tiny GEMM's call overhead on a
    busy 2-core host measured below it; 35 times lower, the test needs no quiet host.)"""
    import dataclasses

    from roofline.spec.sourced import Sourced

    low = {n: dataclasses.replace(c, ops_per_cycle=Sourced(value=0.01, kind="measured",
                                                           source="a probe of the wrong kernel"))
           for n, c in platform.compute.items()}
    one = Sourced(value=1, kind="measured", source="test")
    slow = {k: Sourced(value=0.1, kind="measured", source="test") for k in platform.frequency_ghz}
    wrong = dataclasses.replace(platform, compute=low, sockets=one, cores_per_socket=one, frequency_ghz=slow,
                                all_core_turbo_ghz={}, max_turbo_ghz={})
    rows = by_precision(run_shape(SHAPE, ["fp32"], wrong, None, FAST))
    fp32 = rows["fp32"]
    assert fp32.measured_ops_per_s > fp32.predicted_ops_per_s and fp32.ceiling_violation and fp32.suspect == "peak"
    flag = next(f for f in fp32.flags if f.startswith("ceiling violation: measured "))
    assert "an error in the model, not the kernel" in flag and "a probe of the wrong kernel" in flag
    # the same platform with 4 times Genoa's ops per cycle: a ceiling no 2-core host reaches (a Zen 5 guest's full-width
    # AVX-512 cores can beat two of Genoa's, whose 512-bit instructions take two passes)
    ample = {n: dataclasses.replace(c, ops_per_cycle=Sourced(value=4 * c.ops_per_cycle.value, kind="derived",
                                                             source="test")) for n, c in platform.compute.items()}
    fine = by_precision(run_shape(SHAPE, ["fp32"], dataclasses.replace(platform, compute=ample), None, FAST))["fp32"]
    assert not fine.ceiling_violation and fine.suspect is None
