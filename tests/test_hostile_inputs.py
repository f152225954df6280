"""Silent wrong results, now either right or refused. The one-line refusals themselves are
cases of the fuzz corpus (tests/test_fuzz_inputs.py); this file checks what must work, and how."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from clitools import REPO, run_cli, run_json

from roofline.catalog import builtin_dir, catalog_listing, find_file, load_model, load_model_file, load_platform
from roofline.errors import SpecError, UserError

BERT_LARGE = {
    "architectures": ["BertForMaskedLM"], "model_type": "bert", "hidden_size": 1024, "intermediate_size": 4096,
    "num_hidden_layers": 24, "num_attention_heads": 16, "vocab_size": 30522, "max_position_embeddings": 512,
    "type_vocab_size": 2, "hidden_act": "gelu",
}
ICX = (builtin_dir("platforms") / "icx.toml").read_text()


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "cache"))
    load_model_file.cache_clear()
    yield tmp_path
    load_model_file.cache_clear()


# ------------------------------------------------------------------ the spec cache


def test_identical_configs_in_two_folders_are_two_models(fresh_cache):
    paths = []
    for name in ("modelA", "modelB"):
        p = fresh_cache / name / "config.json"
        p.parent.mkdir()
        p.write_text(json.dumps(BERT_LARGE))
        paths.append(p)
    a, b = (load_model_file(p.resolve()) for p in paths)
    assert (a.name, b.name) == ("modelA", "modelB")
    assert b.source.endswith("modelB/config.json")


# ------------------------------------------------------------------ calibrations


def test_a_calibration_of_another_platform_is_refused_unless_asked_and_then_said():
    proc = run_cli("estimate", "--model", "bert-large", "--cpu", "icx", "--calibration", "zen4-2vcpu")
    assert proc.returncode == 2 and "fitted on platform 'host', not on 'icx'" in proc.stderr
    assert "--calibration-any-platform" in proc.stderr and len(proc.stderr.splitlines()) == 1
    data = run_json("estimate", "--model", "bert-large", "--cpu", "icx", "--calibration", "zen4-2vcpu",
                    "--calibration-any-platform")
    assert len(data["notes"]) == 1 and "applied to 'icx'" in data["notes"][0]
    assert not [n for n in run_json("estimate", "--model", "bert-large", "--cpu", "icx")["notes"] if "calibration" in n]
    check = run_json("check", "--model", "bert-large", "--cpu", "icx", "--precision", "int8-static",
                     "--throughput-speedup", "2", "--calibration", "zen4-2vcpu", "--calibration-any-platform")
    assert any("applied to 'icx'" in n for n in check["notes"])
    probe = str(REPO / "validation" / "results" / "zen4-2vcpu-probe.toml")  # its own platform: accepted, no note
    same = run_json("estimate", "--model", "bert-large", "--cpu", probe, "--calibration", "zen4-2vcpu")
    assert same["notes"] == [] and same["calibration"] == "zen4-2vcpu"


# ------------------------------------------------------------------ --model org/name


def _fake_hf_cache(root: Path, repo: str, config: dict, commit: str = "0123abcd") -> Path:
    folder = root / "hub" / f"models--{repo.replace('/', '--')}"
    snap = folder / "snapshots" / commit / "config.json"
    snap.parent.mkdir(parents=True)
    snap.write_text(json.dumps(config))
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(commit)
    return snap


def _gemms(data: dict) -> list:
    return [{k: g[k] for k in ("name", "m", "n", "k", "count")}
            for p in data["precisions"].values() for g in p["gemms"]]


def test_a_hugging_face_id_from_the_local_cache_offline(tmp_path):
    _fake_hf_cache(tmp_path, "google-bert/bert-large-uncased", BERT_LARGE)
    _fake_hf_cache(tmp_path, "some-org/bert-large-copy", BERT_LARGE)
    env = {"HF_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1", "ROOFLINE_CACHE_DIR": str(tmp_path / "rc")}
    env.pop("HF_HUB_CACHE", None)
    ref = json.loads(run_cli("estimate", "--model", "bert-large", "--cpu", "icx", "--json", env=env).stdout)
    alias = run_cli("estimate", "--model", "google-bert/bert-large-uncased", "--cpu", "icx", "--json", env=env)
    assert alias.returncode == 0, alias.stderr
    assert _gemms(json.loads(alias.stdout)) == _gemms(ref)  # the catalog alias comes first
    cached = run_cli("estimate", "--model", "some-org/bert-large-copy", "--cpu", "icx", "--json", env=env)
    assert cached.returncode == 0, cached.stderr
    data = json.loads(cached.stdout)
    assert data["workload"]["model"] == "some-org/bert-large-copy"  # read from the cache, named by its id
    assert _gemms(data) == _gemms(ref)
    missing = run_cli("estimate", "--model", "some-org/not-there", "--cpu", "icx", env=env)
    assert missing.returncode == 2 and len(missing.stderr.splitlines()) == 1
    assert str(tmp_path / "hub") in missing.stderr and "hf download some-org/not-there config.json" in missing.stderr


def test_hf_hub_cache_variable_is_honoured(tmp_path, monkeypatch):
    snap = _fake_hf_cache(tmp_path / "elsewhere", "org/tiny-bert", BERT_LARGE)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "elsewhere" / "hub"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "nothing-here"))
    path = find_file("models", "org/tiny-bert")
    assert path == snap.absolute()
    assert load_model_file(path).name == "org/tiny-bert"


def test_aliases_with_a_slash_and_folders(tmp_path):
    assert load_model("meta-llama/Llama-3.2-1B").name == "llama-3.2-1b"
    assert load_model("Qwen/Qwen3-0.6B").name == "qwen3-0.6b"
    folder = tmp_path / "my-bert"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(BERT_LARGE))
    assert load_model(str(folder)).name == "my-bert"
    (tmp_path / "empty").mkdir()
    with pytest.raises(SpecError, match="holds no config.json"):
        load_model(str(tmp_path / "empty"))


def test_a_catalog_name_never_imports_huggingface_hub(tmp_path):
    code = ("import sys, contextlib, io; from roofline.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['estimate', '--model', 'meta-llama/Llama-3.2-1B', '--cpu', 'icx', '--json']) == 0\n"
            "print('huggingface_hub' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "ROOFLINE_CACHE_DIR": str(tmp_path / "c")}, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------ user catalog folders


def test_user_folders_win_by_name_and_alias_and_a_broken_file_is_skipped(tmp_path, monkeypatch):
    mine = ICX.replace('name = "icx"', 'name = "spr"', 1).replace("aliases = [", 'aliases = ["my-alias", ', 1)
    (tmp_path / "mine.toml").write_text(mine)
    aliased = ICX.replace('name = "icx"', 'name = "other"', 1).replace("aliases = [", 'aliases = ["gnr", ', 1)
    (tmp_path / "other.toml").write_text(aliased)
    (tmp_path / "broken.toml").write_text("name = [unclosed\n")
    monkeypatch.setenv("ROOFLINE_PLATFORMS", str(tmp_path))
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "cache"))
    assert find_file("platforms", "spr") == (tmp_path / "mine.toml").resolve()  # not the built-in spr.toml
    assert find_file("platforms", "GNR") == (tmp_path / "other.toml").resolve()  # by alias too
    assert load_platform("icx").name == "icx"  # the broken file does not break other lookups
    assert load_platform("my-alias").cores_per_socket.value == 32
    items, skipped = catalog_listing("platforms")
    assert [p.name for p, _ in skipped] == ["broken.toml"] and "not valid TOML" in skipped[0][1]
    assert [p.description for p in items if p.name == "spr"] == [load_platform(str(tmp_path / "mine.toml")).description]
    with pytest.raises(SpecError, match="not valid TOML"):
        load_platform("broken")  # asking for the broken file by name says what is wrong with it
    proc = run_cli("platforms", env={"ROOFLINE_PLATFORMS": str(tmp_path), "ROOFLINE_CACHE_DIR": str(tmp_path / "c")})
    assert proc.returncode == 0
    assert proc.stderr.splitlines() == [line for line in proc.stderr.splitlines() if "skipped" in line]
    assert len(proc.stderr.splitlines()) == 1 and "broken.toml" in proc.stderr and "not valid TOML" in proc.stderr


# ------------------------------------------------------------------ sweep ranges and lists


def test_sweep_ranges_include_the_stop_both_ways():
    proc = run_cli("sweep", "--model", "bert-base", "--cpu", "icx", "--precision", "fp32", "--batch", "10:1:-3",
                   "--seq-len", "128:256:128")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert [(int(r["batch"]), int(r["seq_len"])) for r in rows] == [
        (b, s) for b in (10, 7, 4, 1) for s in (128, 256)]


def test_models_json_list_writes_stdout_not_a_file(tmp_path):
    proc = run_cli("models", "--json", "list", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert {"bert-base", "llama-3.2-1b"} <= {m["name"] for m in json.loads(proc.stdout)}
    shown = run_cli("platforms", "--json", "show", "gnr", cwd=tmp_path)
    assert shown.returncode == 0 and json.loads(shown.stdout)["name"] == "gnr"
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ config.json types and refusals


@pytest.mark.parametrize("key, value, fragment", [
    ("mlp_bias", "false", "must be true or false"),
    ("hidden_size", True, "must be a whole number"),
    ("hidden_size", 1024.0, "must be a whole number"),
    ("hidden_size", "1024", "must be a whole number"),
    ("architectures", 5, "a list of strings"),
    ("architectures", [1, 2], "a list of strings"),
    ("tie_word_embeddings", 1, "true or false"),
    ("hidden_size", 2**70, "outside the possible range"),
    ("kv_lora_rank", 512, "multi-head latent attention"),
    ("mamba_d_state", 16, "Mamba"),
    ("layer_types", ["full_attention", "mamba"], "not attention (mamba)"),
])
def test_config_json_values_are_strict(tmp_path, key, value, fragment):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**BERT_LARGE, key: value}))
    with pytest.raises(UserError) as info:
        load_model(str(path))
    text = str(info.value)
    assert fragment in text and f": {key}: " in text and "\n" not in text, text


def test_deeply_nested_config_is_one_line(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "bert", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(SpecError, match="nested deeper"):
        load_model(str(path))


# ------------------------------------------------------------------ ranges and versions


@pytest.mark.parametrize("old, new, field", [
    ("ops_per_cycle = { value = 64,", "ops_per_cycle = { value = 1e300,", "compute.fp32-avx512.ops_per_cycle"),
    ("theoretical_gb_per_s = { value = 204.8,", "theoretical_gb_per_s = { value = 1e300,", "dram.theoretical_gb_per_s"),
    ("sockets = { value = 2,", "sockets = { value = 1e300,", "sockets"),
    ("schema_version = 1", "schema_version = 7", "schema_version"),
])
def test_impossible_platform_values_name_file_and_field(tmp_path, old, new, field):
    path = tmp_path / "huge.toml"
    path.write_text(ICX.replace(old, new, 1))
    with pytest.raises(SpecError) as info:
        load_platform(str(path))
    assert info.value.field == field and info.value.path.endswith("huge.toml"), str(info.value)
    expected = "newer roofline" if field == "schema_version" else "outside the possible range"
    assert expected in str(info.value), str(info.value)


def test_limits_table_api():
    """The table other spec fields add rows to: check() names the field, its range, its unit and why."""
    from roofline.spec.limits import LIMITS, check

    check("platform.sockets", 2)
    with pytest.raises(ValueError, match=r"^sockets: 65 sockets is outside the possible range, 1 to 64 sockets"):
        check("platform.sockets", 65)
    with pytest.raises(ValueError, match=r"^compute.x.ops_per_cycle: inf"):
        check("platform.compute.*.ops_per_cycle", float("inf"), "compute.x.ops_per_cycle")
    with pytest.raises(ValueError, match="outside"):
        check("model.hidden_size", 10**400)  # a whole number too large for a float
    with pytest.raises(KeyError, match="no limit for 'platform.l2_size_kib'"):
        check("platform.l2_size_kib", 1)
    assert all(lim.low < lim.high and lim.why for lim in LIMITS.values())
