"""The command line as scripts and people use it."""

from __future__ import annotations

import json
import math

import jsonschema
import pytest
from clitools import run_cli, run_json

from roofline.schema import schema_path, schema_text


def test_estimate_json_contract():
    data = run_json("estimate", "--model", "bert-large", "--cpu", "gnr", "--memory-model", "paper", "--precision", "bf16",
                    "--precision", "int8-static", "--baseline", "bf16")
    assert data["platform"]["name"] == "gnr"
    assert data["workload"] == {**data["workload"], "model": "bert-large", "batch": 1, "seq_len": 256}
    assert list(data["precisions"]) == ["bf16", "int8-static"]
    for p in data["precisions"].values():
        assert {"aggregate_ops_per_s", "weight_bytes", "llc_resident"} <= set(p)
        for g in p["gemms"]:
            assert {"name", "m", "n", "k", "count", "flops", "bytes", "arithmetic_intensity", "balance_point",
                    "bound", "bandwidth_bytes_per_s", "attainable_ops_per_s"} <= set(g)
            assert g["flops"] == 2 * g["m"] * g["n"] * g["k"]  # SI: ops, not Gops
            assert g["attainable_ops_per_s"] > 1e12  # SI: ops/s
    (s,) = data["speedups"]
    assert {"precision", "baseline", "gemm_speedup", "f_gemm", "f_gemm_source", "non_gemm_speedup",
            "end_to_end_ceiling"} <= set(s)
    assert (s["precision"], s["baseline"], round(s["end_to_end_ceiling"], 2)) == ("int8-static", "bf16", 1.53)


def _numbers(obj):
    if isinstance(obj, dict):
        for v in obj.values():
            yield from _numbers(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _numbers(v)
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield obj


@pytest.mark.parametrize("cpu", ["icx", "genoa", "milan", "emr-16vcpu"])
def test_json_is_valid_against_the_published_schema_and_finite(cpu):
    data = run_json("estimate", "--model", "distilbert-base", "--cpu", cpu, "--seq-len", "128", "--batch", "4")
    jsonschema.validate(data, json.loads(schema_path("estimate").read_text()))
    assert all(math.isfinite(x) for x in _numbers(data))


@pytest.mark.parametrize("which", ["estimate", "validate"])
def test_published_schema_is_current(which):
    assert schema_path(which).read_text() == schema_text(which), "run: python -m roofline.schema"


def test_overrides_are_used_and_labelled():
    data = run_json("estimate", "--model", "bert-base", "--cpu", "spr", "--precision", "int8-dynamic",
                    "--f-gemm", "0.8", "--gemm-speedup", "5", "--non-gemm-speedup", "1.5")
    (s,) = data["speedups"]
    assert (s["f_gemm"], s["gemm_speedup"], s["non_gemm_speedup"]) == (0.8, 5.0, 1.5)
    assert s["f_gemm_source"].startswith("user") and s["gemm_speedup_source"].startswith("user")
    assert s["end_to_end_ceiling"] == pytest.approx(1 / (0.8 / 5 + 0.2 / 1.5))


def test_modelled_inputs_are_labelled_as_modelled():
    data = run_json("estimate", "--model", "bert-large", "--cpu", "icx", "--seq-len", "128")
    (s,) = data["speedups"]  # no measurement at seq 128: f and s_non come from the model
    assert s["f_gemm_source"].startswith("modelled") and s["non_gemm_speedup_source"].startswith("modelled")
    assert 0.5 < s["f_gemm"] < 1


def test_json_file_is_written_whole(tmp_path):
    out = tmp_path / "est.json"
    proc = run_cli("estimate", "--model", "bert-base", "--cpu", "icx", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["workload"]["model"] == "bert-base"
    assert "Compute paths" in proc.stdout  # the table is still printed for the person
    bad = run_cli("estimate", "--model", "bert-base", "--cpu", "nope", "--json", str(tmp_path / "no.json"))
    assert bad.returncode == 2 and not (tmp_path / "no.json").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["est.json"]  # no temporary files left behind


def test_bandwidth_and_sockets_flags():
    meas = run_json("estimate", "--model", "bert-large", "--cpu", "gnr")
    theo = run_json("estimate", "--model", "bert-large", "--cpu", "gnr", "--bandwidth", "theoretical")
    one = run_json("estimate", "--model", "bert-large", "--cpu", "gnr", "--sockets", "1")
    assert meas["platform"]["dram_bandwidth_kind"] == "measured"
    assert theo["platform"]["dram_bandwidth_bytes_per_s"] == pytest.approx(2 * 614.4e9)
    assert one["platform"]["cores"] == 128
    assert one["precisions"]["fp32"]["aggregate_ops_per_s"] == pytest.approx(
        meas["precisions"]["fp32"]["aggregate_ops_per_s"] / 2)


def test_catalog_commands():
    for args in (["platforms"], ["platforms", "show", "gnr"], ["models"], ["models", "show", "bert-large"]):
        proc = run_cli(*args)
        assert proc.returncode == 0, proc.stderr
    assert "Intel Xeon 6980P" in run_cli("platforms").stdout
    show = run_cli("platforms", "show", "gnr").stdout
    assert "1000 GB/s" in show and "derived" in show
    assert "0.885" in run_cli("models", "show", "bert-large").stdout
    listed = run_json("platforms")
    assert {"icx", "gnr"} <= {p["name"] for p in listed}
    assert run_json("models", "show", "xlm-roberta-large")["vocab_size"] == 250002
    proc = run_cli("platforms", "show")
    assert proc.returncode == 2 and "needs a NAME" in proc.stderr


def test_no_command_prints_help():
    proc = run_cli()
    assert proc.returncode == 2 and "estimate" in proc.stdout
