"""``roofline stacks``: every profile value beside the range its fit may give it, and which the figures did not pin
down (a value on a bound of its range), said in the profile file too."""

from __future__ import annotations

import json

import pytest
from clitools import run_cli

from roofline.catalog.stacks import load_stack, stack_names, stack_path
from roofline.fidelity.fit import CALL_S, PER_OP_S
from roofline.fidelity.profile_values import at_bound, mark_bounds, stack_values

MARK = "the figures did not pin it down"


@pytest.mark.parametrize("value, lo, hi, want", [
    (2e-3, *CALL_S, "upper"), (1.99e-3, *CALL_S, "upper"), (1.9e-3, *CALL_S, None), (1e-8, *PER_OP_S, "lower"),
    (1.02e-8, *PER_OP_S, None), (0.0, 0.0, 1.0, "lower"), (1e-9, 0.0, 1.0, None), (0.995, 1e-3, 1.0, "upper"),
])
def test_a_value_within_one_percent_of_an_end_is_on_it(value, lo, hi, want):
    assert at_bound(value, lo, hi) == want


@pytest.mark.parametrize("name", stack_names())
def test_every_profile_says_in_its_file_which_fitted_values_sit_on_a_bound(name):
    """What ``stacks show`` finds on a bound is what the file's sources say (``calibrate --records`` writes it)."""
    profile = load_stack(name)
    v = stack_values(profile, "")
    marked = {r.label for r in v.values if MARK in r.source}
    assert marked == set(v.at_bound)
    assert all(r.kind in ("derived", "measured") for r in v.values if r.at_bound)
    assert mark_bounds(profile) == profile  # marked once


def test_stacks_show_llama_cpp():
    """The llama.cpp profile's dispatch costs are its measured ones ([dispatch]), held, not fitted, and on no bound
    of the fit's ranges (a free fit had put both on the top of theirs); its counted kernel class is the one most of its
    figures ran on."""
    proc = run_cli("stacks", "show", "llama.cpp", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    rows = {r["table"] + "." + r["name"] if r["table"] else r["name"]: r for r in data["values"]}
    rule = load_stack("llama.cpp").dispatch
    assert rule is not None
    for name in ("call_s", "per_op_s"):
        assert rows[name]["kind"] == "measured" and rows[name]["at_bound"] is None
        assert rows[name]["value"] == pytest.approx(getattr(rule, name))
        assert name not in data["at_bound"]
    assert rows["call_s"]["upper"] == CALL_S[1] and CALL_S[0] <= rows["call_s"]["value"] <= CALL_S[1]
    kernel = rows["gemm_efficiency.gguf-kernels"]
    assert kernel["at_bound"] is None and kernel["upper"] == 4.0
    assert kernel["figures"] == load_stack("llama.cpp").accuracy.classes["gguf-kernels"].figures
    assert data["kernels"] == "llama.cpp"
    assert data["file"] == "platforms/stacks/llama.cpp.toml"
    text = run_cli("stacks", "show", "llama.cpp").stdout
    assert "on a bound:" in text and "measured" in text


def test_stacks_lists_every_profile_with_its_count_on_a_bound():
    proc = run_cli("stacks", "--json")
    assert proc.returncode == 0, proc.stderr
    items = {s["name"]: s for s in json.loads(proc.stdout)}
    assert set(items) == set(stack_names())
    for name, s in items.items():
        assert s["at_bound"] == len(stack_values(load_stack(name), str(stack_path(name))).at_bound)


@pytest.mark.parametrize("argv, fragment", [(("stacks", "show", "nope"), "unknown stack"),
                                            (("stacks", "show"), "needs a NAME")])
def test_a_bad_stack_name_is_one_line(argv, fragment):
    proc = run_cli(*argv)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and fragment in proc.stderr


@pytest.mark.parametrize("name", stack_names())
def test_stacks_show_says_the_form_and_the_folds_that_differ(name):
    """Every committed profile stores the form it was fitted in and one per CPU of its records (chosen without that
    CPU); ``stacks show`` says the form and lists exactly the CPUs whose fold differs."""
    profile = load_stack(name)
    assert profile.forms is not None and profile.forms.folds
    v = stack_values(profile, "")
    assert v.form == profile.forms.chosen.label
    assert v.folds == {p: f.label for p, f in profile.forms.folds.items() if f != profile.forms.chosen}
    out = run_cli("stacks", "show", name, "--brief").stdout
    assert f"form: {v.form}" in " ".join(out.split())
    assert all(p in out for p in v.folds)
