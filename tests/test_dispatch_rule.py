"""A stack's measured dispatch ([dispatch]): refused out of range, reproduced from its committed measurement,
held by the fit, and what llama.cpp's costs on a model too small for its arithmetic to count."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from roofline.validation.llamacpp_dispatch import GEMMS_PER_LAYER, line_fit, summarise

from roofline.catalog.stacks import load_stack
from roofline.spec.stack import DispatchRule

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "validation" / "results" / "zen5-2vcpu-r3-llamacpp-dispatch.json"


def test_out_of_range_dispatch_is_refused():
    for bad in (-1e-6, float("nan"), float("inf"), 1e300):
        with pytest.raises(ValueError, match="dispatch.call_s"):
            DispatchRule(call_s=bad, per_op_s=1e-6)
        with pytest.raises(ValueError, match="dispatch.per_op_s"):
            DispatchRule(call_s=1e-6, per_op_s=bad)


@given(st.floats(0, 1e-3), st.floats(0, 1e-4))
def test_the_line_fit_recovers_an_exact_line(a, b):
    layers = np.array([1, 2, 4, 8, 16])
    got_a, got_b = line_fit(layers, a + b * layers)
    assert got_a == pytest.approx(a, abs=1e-12)
    assert got_b == pytest.approx(b, abs=1e-12)


def test_summarise_by_hand():
    # 10 us a call and 7 us a layer above ceilings of 1 us a layer: 1 us per GEMM launch
    rows = [{"model_filename": f"micro-L{n}-q8_0.gguf", "avg_ts": 1 / ((10 + 8 * n) * 1e-6), "stddev_ts": 0.0,
             "n_threads": 1} for n in (1, 2, 4, 8, 16)]
    got = summarise(rows, {n: n * 1e-6 for n in (1, 2, 4, 8, 16)})
    assert got["call_s"] == pytest.approx(10e-6)
    assert got["per_layer_s"] == pytest.approx(7e-6)
    assert got["per_op_s"] == pytest.approx(1e-6)


def test_llama_cpp_holds_its_committed_measurement():
    """The profile's [dispatch] is the committed run's fit, and calibrate wrote it as measured, not fitted."""
    d = json.loads(RESULT.read_text())
    layers = np.array(sorted(int(n) for n in d["layers"]))
    excess = np.array([d["layers"][str(n)]["seconds_per_token"] - d["layers"][str(n)]["ceiling_s"] for n in layers])
    a, b = line_fit(layers, excess)
    stack = load_stack("llama.cpp")
    rule = stack.dispatch
    assert rule is not None
    assert rule.call_s == pytest.approx(a, rel=0.01)
    assert rule.per_op_s == pytest.approx(b / GEMMS_PER_LAYER, rel=0.01)
    assert d["cpu"] == "zen5-2vcpu-r3" and d["build_commit"] == "0c1e570"
    # one thread: no barrier in the figure (priced apart); every model a few microseconds of arithmetic
    assert all(r["n_threads"] == 1 for r in d["bench"])
    assert all(v["ceiling_s"] < 0.2 * v["seconds_per_token"] for v in d["layers"].values())
    for name in ("call_s", "per_op_s"):
        v = getattr(stack, name)
        assert v is not None and v.kind == "measured"
        assert v.value == pytest.approx(getattr(rule, name), rel=1e-3)


def test_a_tiny_model_is_priced_near_its_run(tmp_path):
    """Llama-bench ran the 16-layer micro model at 162 us a token on one thread of the Zen 5 guest; the realistic
    estimate with the measured dispatch is within a factor of 2 (a fitted 2 ms per call had priced it at 2 ms)."""
    import roofline

    d = json.loads(RESULT.read_text())
    measured = d["layers"]["16"]["seconds_per_token"]
    cfg = {**d["model_config"], "num_hidden_layers": 16}
    path = tmp_path / "micro16.json"
    path.write_text(json.dumps(cfg))
    r = roofline.estimate(model=str(path), cpu="zen5-2vcpu-r3", precision="q8_0", phase="decode", context=32,
                          instance_cores=1, cores=1, sockets=1, kv_dtype="fp16", stack="llama.cpp",
                          quantize_lm_head=True)
    got = r.precisions["q8_0"].realistic_step_time_s
    assert math.isfinite(got)
    assert 0.5 < got / measured < 2.0


def test_the_committed_ceilings_are_the_models(tmp_path):
    """The micro models the script writes are the committed run's (their GGUF files load as the config says), and
    their attainable ceilings on the guest are the ones the result subtracted (profile-free: no fitted value in them)."""
    from roofline.validation.llamacpp_dispatch import LAYERS, ceilings, write_models

    d = json.loads(RESULT.read_text())
    paths = write_models(tmp_path, LAYERS)
    assert [p.name for p in paths] == [f"micro-L{n}-q8_0.gguf" for n in LAYERS]
    assert sorted(r["model_filename"] for r in d["bench"]) == sorted(p.name for p in paths)
    got = ceilings(tmp_path, d["cpu"], LAYERS)
    for n in LAYERS:
        assert got[n] == pytest.approx(d["layers"][str(n)]["ceiling_s"], rel=1e-9)
    assert all(got[a] < got[b] for a, b in zip(LAYERS, LAYERS[1:]))
