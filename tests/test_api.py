"""The Python API: the commands as functions, their results what --json prints."""

from __future__ import annotations

import doctest
import json
import subprocess
import sys

import pytest
from clitools import REPO, run_cli

import roofline
from roofline.errors import UserError


def _cli_json(*args: str) -> str:
    proc = run_cli(*args, "--json", cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_readme_example_runs():
    """Every `>>>` line of the README runs and prints what the README shows."""
    parser = doctest.DocTestParser()
    text = (REPO / "README.md").read_text()
    test = parser.get_doctest(text, {}, "README.md", str(REPO / "README.md"), 0)
    assert len(test.examples) >= 4
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0


def test_estimate_is_the_result_json_prints():
    r = roofline.estimate(model="bert-large", cpu="icx")
    assert r.speedups[0].end_to_end_ceiling == pytest.approx(3.15, abs=5e-3)
    assert r.speedups[0].gemm_speedup == pytest.approx(4.0)
    assert r.to_json() == _cli_json("estimate", "--model", "bert-large", "--cpu", "icx")
    assert r.to_dict() == json.loads(r.to_json()) and roofline.to_json(r) == r.to_json()


def test_keyword_arguments_mirror_the_flags():
    r = roofline.estimate(model="bert-large", cpu="gnr", precision=["bf16", "int8-static"], baseline="bf16",
                          memory_model="paper", batch=2, seq_len=128, instance_cores=8, stack="none",
                          separate_qkv=True)
    assert r.to_json() == _cli_json("estimate", "--model", "bert-large", "--cpu", "gnr", "--precision",
                                    "bf16,int8-static", "--baseline", "bf16", "--memory-model", "paper", "--batch", "2",
                                    "--seq-len", "128", "--instance-cores", "8", "--stack", "none", "--separate-qkv")
    assert roofline.estimate(model="bert-large", cpu="gnr", precision="bf16,int8-static", baseline="bf16",
                             memory_model="paper").speedups[0].end_to_end_ceiling == pytest.approx(1.53, abs=5e-3)
    decode = roofline.estimate(model="llama-3.2-1b", cpu="spr", phase="decode", context=512, kv_dtype="int8")
    assert decode.workload.context == 512 and decode.precisions["bf16"].decode.kv_dtype == "int8"


def test_the_other_commands(corpus_accuracy):
    fp = roofline.footprint(model="qwen3-0.6b", precision="int8-weight-only", base_dtype="fp32")
    assert fp.to_json() == _cli_json("footprint", "--model", "qwen3-0.6b", "--precision", "int8-weight-only",
                                     "--base-dtype", "fp32")
    ck = roofline.check(model="bert-large", cpu="gnr", precision="int8-static", throughput_speedup=5.82,
                        linear_speedup=8.7)
    assert ck.stack == "torch-inductor" and ck.realistic_accuracy.figures > 0
    assert ck.to_json() == _cli_json("check", "--model", "bert-large", "--cpu", "gnr", "--precision", "int8-static",
                                     "--throughput-speedup", "5.82", "--linear-speedup", "8.7")
    report = roofline.check(report=str(REPO / "validation/results/zen4-2vcpu-bert-base.json"),
                            calibration=str(REPO / "platforms/calibration/zen4-2vcpu.toml"), precision="int8-static")
    assert {c.precision for c in report.comparisons} == {"int8-static"} and report.latency
    acc = corpus_accuracy
    assert acc.violations == 0 and acc.to_json() == _cli_json("accuracy")
    plan = roofline.plan(model="bert-large", cpu="icx,spr", precision="int8-static", target_rps=2000, p99_ms=50,
                         price_per_hour=[1.2, 2.1])
    assert [c.cpu for c in plan.cpus] == ["icx", "spr"]
    assert roofline.to_json(plan) == _cli_json("plan", "--model", "bert-large", "--cpu", "icx,spr", "--precision",
                                               "int8-static", "--target-rps", "2000", "--p99-ms", "50",
                                               "--price-per-hour", "1.2,2.1")


def test_objects_instead_of_names():
    from roofline.catalog import load_calibration, load_model, load_platform
    from roofline.catalog.stacks import load_stack

    by_name = roofline.estimate(model="bert-base", cpu="spr", stack="torch-inductor")
    by_object = roofline.estimate(model=load_model("bert-base"), cpu=load_platform("spr"),
                                  stack=load_stack("torch-inductor"))
    assert by_object.speedups == by_name.speedups and by_object.precisions == by_name.precisions
    host = load_platform(str(REPO / "validation/results/zen4-2vcpu-probe.toml"))
    cal = roofline.estimate(model="bert-base", cpu=host, calibration=load_calibration(
        str(REPO / "platforms/calibration/zen4-2vcpu.toml")))
    assert cal.calibration and cal.stack is None


@pytest.mark.parametrize("call, fragment", [
    (lambda: roofline.estimate(model="bert-large", cpu="icx", batch=0), "batch: 0 is out of range"),
    (lambda: roofline.estimate(model="bert-large", cpu="nope"), "unknown CPU 'nope'"),
    (lambda: roofline.estimate(model="bert-large"), "required: cpu"),
    (lambda: roofline.estimate(model="bert-large", cpu="icx", bogus=1), "no argument 'bogus'"),
    (lambda: roofline.estimate(model="bert-large", cpu="icx", phase="sideways"), "phase: invalid choice"),
    (lambda: roofline.estimate(model="bert-large", cpu="icx", separate_qkv="yes"), "give True or False"),
    (lambda: roofline.estimate(model="bert-large", cpu="icx", json=True), "no argument 'json'"),
    (lambda: roofline.estimate(model="bert-large", cpu="icx", f_gemm=2), "f_gemm: 2 is out of range"),
    (lambda: roofline.footprint(model="bert-large", precision=["int8-static", "fp32"]), "takes one value"),
    (lambda: roofline.check(model="bert-large", cpu="gnr", precision="int8-static"), "--throughput-speedup"),
    (lambda: roofline.plan(model="bert-large", cpu="icx", no_such_flag=1), "no_such_flag"),
])
def test_bad_input_raises_user_error(call, fragment):
    with pytest.raises(UserError) as e:
        call()
    assert fragment in str(e.value)


def _spec(kind: str):
    from roofline.catalog import load_model, load_platform

    return load_model("bert-base") if kind == "model" else load_platform("icx")


@pytest.mark.parametrize("call, fragment", [
    (lambda: roofline.estimate(model={"a": 1}, cpu="icx"), "model: {'a': 1}: give a string"),
    (lambda: roofline.estimate(model="bert-base", cpu=_spec("model")), "--cpu: a ModelSpec is not a Platform"),
    (lambda: roofline.estimate(model=_spec("platform"), cpu="icx"), "--model: a Platform is not a ModelSpec"),
    (lambda: roofline.estimate(model=object(), cpu="icx"), "an object is not a ModelSpec"),
    (lambda: roofline.estimate(model="bert-base", cpu=["icx"]), "cpu: takes one value, not 1"),
    (lambda: roofline.estimate(model="bert-base", cpu="icx", batch=[1, 2]), "batch: takes one value, not 2"),
    (lambda: roofline.estimate(model="bert-base", cpu="icx", batch=2.0), "batch: 2.0 is not a whole number"),
    (lambda: roofline.estimate(model="bert-base", cpu="icx", precision=[5]), "precision: 5: give a string"),
    (lambda: roofline.estimate(model="bert-base", cpu="icx", calibration=_spec("model")),
     "a ModelSpec is not a Calibration"),
    (lambda: roofline.estimate(model="bert-base", cpu="icx", stack=_spec("platform")),
     "a Platform is not a StackProfile"),
    (lambda: roofline.estimate(model="bert-base", cpu="icx", gemm_speedup=10 ** 400), "gemm_speedup: "),
    (lambda: roofline.plan(model="bert-base", cpu={"icx"}), "give a list (in order)"),
    (lambda: roofline.plan(model="bert-base", cpu=[_spec("model")]), "a ModelSpec is not a Platform"),
    (lambda: roofline.accuracy(records=5), "records: 5: give a list of paths"),
    (lambda: roofline.accuracy(records={"a": 1}), "records: {'a': 1}: give a list of paths"),
    (lambda: roofline.api.calibrate(report=5), "report: 5: give a list of paths"),
    (lambda: roofline.api.calibrate(report=[str(REPO / "validation/results/zen4-2vcpu-bert-base.json")],
                                    cpu=_spec("model")), "a ModelSpec is not a Platform"),
    (lambda: roofline.api.sweep(model=["bert-base", 3], cpu="icx"), "model: 3: give a string"),
    (lambda: roofline.estimate(model="bert-base", cpu="icx", stack=_spec("model").__class__),
     "--stack: a type is not a StackProfile"),
])
def test_wrong_typed_arguments_are_user_errors_naming_the_argument(call, fragment):
    import roofline.api  # noqa: F401

    with pytest.raises(UserError) as e:
        call()
    assert fragment in str(e.value)


def test_integers_of_any_integer_type_are_whole_numbers():
    np = pytest.importorskip("numpy")
    a = roofline.estimate(model="bert-base", cpu="icx", batch=np.int64(2), seq_len=np.int32(128))
    b = roofline.estimate(model="bert-base", cpu="icx", batch=2, seq_len=128)
    assert a.to_json() == b.to_json()


def test_import_roofline_is_light():
    code = ("import sys, roofline; print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('numpy', 'pydantic', 'rich', 'torch') or m.startswith('roofline.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", check=True)
    assert out.stdout.strip() == "[]"
    help_text = subprocess.run([sys.executable, "-c", "import roofline; print(roofline.estimate.__doc__)"],
                               capture_output=True, text=True, cwd="/", check=True).stdout
    assert help_text.startswith("``roofline estimate``")


def test_estimate_stays_callable_after_its_modules_are_imported():
    import roofline.model.estimate  # noqa: F401  # sets the attribute roofline.estimate to the package again

    assert callable(roofline.estimate)
    assert roofline.estimate("bert-base", "icx").workload.model == "bert-base"


@pytest.mark.parametrize(("cpu", "precision", "said"), [
    ("zen3-2vcpu", "int8-static", True),  # AVX2 only: oneDNN's s8 path pays its per-call cost
    ("milan", "int8-dynamic", True),
    ("zen3-2vcpu", "fp32", False),  # no INT8 activations
    ("zen4-2vcpu", "int8-static", False),  # AVX512_VNNI
    ("spr", "int8-static", False),  # AMX
])
def test_the_s8_activations_cost_without_vnni_is_said_left_out(cpu, precision, said):
    """The per-call cost of oneDNN's INT8 linear on s8 activations where the CPU has no INT8 dot product
    (validation/results/zen3-2vcpu-int8-s8-vs-u8.txt) is not priced, and an INT8 estimate there says so."""
    from roofline.model.estimate import S8_WITHOUT_VNNI

    r = roofline.estimate(model="bert-base", cpu=cpu, precision=precision, baseline=precision)
    assert (S8_WITHOUT_VNNI in r.left_out) is said
