"""Hostile input, third round (issue 49): each defect found becomes a case here, with inputs generated in
``tmp_path``. Every case ends in a result or a one-line UserError (exit 2 from the CLI), never a traceback."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from clitools import run_cli

from roofline.catalog import builtin_dir
from roofline.catalog.cache import load_validated
from roofline.errors import UserError
from roofline.files.reading import parse_toml
from roofline.spec.platform import Platform

GNR = (builtin_dir("platforms") / "gnr.toml").read_text()


def one_line_refusal(proc, *fragments: str) -> None:
    """The CLI refused with exit 2 and one line holding every fragment."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


# ------------------------------------------------------------------ 1. caches


@pytest.fixture
def spec(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ROOFLINE_NO_CACHE", raising=False)
    path = tmp_path / "gnr.toml"
    path.write_text(GNR)
    return path


def _load(path: Path) -> Platform:
    return load_validated(Platform, path, lambda raw: parse_toml(raw, path))


def _the_entry(spec: Path) -> Path:
    [entry] = (spec.parent / "cache" / "specs").iterdir()
    return entry


@pytest.mark.parametrize("content", ["[1, 2]", '"text"', "3", '{"name": 3}', '{"name": "gnr"}', "{}", "null",
                                     "[" * 100_000])
def test_a_cache_entry_of_the_wrong_shape_is_discarded_and_rebuilt(spec, content):
    fresh = _load(spec)
    entry = _the_entry(spec)
    entry.write_text(content)
    assert _load(spec) == fresh  # not AttributeError on every later command, as before
    assert json.loads(entry.read_text())["name"] == "gnr"  # rebuilt in place


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory"])
def test_a_cache_entry_that_is_not_a_regular_file_is_never_read(spec, kind):
    fresh = _load(spec)
    entry = _the_entry(spec)
    entry.unlink()
    if kind == "fifo":
        os.mkfifo(entry)  # opened blocking, it hung every command
    elif kind == "dev-zero":
        entry.symlink_to("/dev/zero")  # read whole, it ran to MemoryError
    else:
        entry.mkdir()
        (entry / "inside").write_text("x")
    start = time.monotonic()
    assert _load(spec) == fresh
    assert time.monotonic() - start < 5
    leftovers = [p.name for p in entry.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []  # a rename over a directory fails: its temporary file is removed, not left behind


def test_a_cache_write_that_fails_leaves_no_temporary_file(spec, monkeypatch):
    import roofline.catalog.cache as cache

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache.os, "replace", broken_replace)
    fresh = _load(spec)  # the cache is skipped, the result still comes
    assert fresh.name == "gnr"
    assert list((spec.parent / "cache" / "specs").iterdir()) == []


def test_a_corrupt_cache_entry_through_the_cli_is_rebuilt(tmp_path):
    env = {"ROOFLINE_CACHE_DIR": str(tmp_path / "c")}
    first = run_cli("estimate", "--model", "bert-base", "--cpu", "icx", "--json", env=env)
    assert first.returncode == 0, first.stderr
    for entry in (tmp_path / "c" / "specs").iterdir():
        entry.write_text("[1, 2]")
    again = run_cli("estimate", "--model", "bert-base", "--cpu", "icx", "--json", env=env)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == json.loads(first.stdout)


def test_results_cache_keys_never_read_a_large_file_or_open_a_fifo(tmp_path, monkeypatch):
    from roofline.catalog import results_cache

    models = tmp_path / "models"
    models.mkdir()
    gguf = models / "big.gguf"
    with open(gguf, "wb") as f:  # sparse: 8 GiB on paper, nothing on disk
        f.truncate(8 << 30)
    os.mkfifo(models / "pipe")
    (models / "small.toml").write_text("a = 1\n")
    monkeypatch.setenv("ROOFLINE_MODELS", str(models))
    start = time.monotonic()
    key = results_cache.inputs_key("t", [models])
    assert time.monotonic() - start < 10
    assert results_cache.file_identity(gguf) == f"{gguf}\0{8 << 30}\0{gguf.stat().st_mtime_ns}\0".encode()
    # a change the size or time shows changes the key; a small file's content counts too
    (models / "small.toml").write_text("a = 2\n")
    os.utime(models / "small.toml", ns=((models / "small.toml").stat().st_atime_ns, 0))
    assert results_cache.inputs_key("t", [models]) != key


# ------------------------------------------------------------------ 2. outputs

FIXTURES = Path(__file__).parent / "fixtures"
PROBE = str(FIXTURES / "llama-bench" / "zen5-2vcpu-probe.toml")
ESTIMATE = ["estimate", "--model", "bert-base", "--cpu", "icx"]


def test_check_from_never_replaces_its_measurement(tmp_path):
    m = tmp_path / "m.jsonl"
    m.write_bytes((FIXTURES / "llama-bench" / "zen5-2vcpu-q4_0-small.jsonl").read_bytes())
    before = m.read_bytes()
    proc = run_cli("check", "--from", "m.jsonl", "--cpu", PROBE, "--model", "llama-3.2-1b", "--brief",
                   "--json", "m.jsonl", cwd=tmp_path)
    one_line_refusal(proc, "is also an input of this command", "--from m.jsonl")
    assert m.read_bytes() == before


def test_the_mlperf_system_json_beside_a_summary_is_an_input(tmp_path):
    import shutil

    shutil.copytree(FIXTURES / "mlperf-v3.1", tmp_path / "tree")
    [summary] = [p for p in (tmp_path / "tree").rglob("mlperf_log_summary.txt") if "Offline" in p.parts]
    [system] = (tmp_path / "tree").rglob("systems/*.json")
    before = system.read_bytes()
    proc = run_cli("check", "--from", str(summary), "--brief", "--json", str(system), cwd=tmp_path)
    one_line_refusal(proc, "is also an input of this command", "the system description beside the summary")
    assert system.read_bytes() == before


def test_a_record_nested_under_records_dir_is_an_input(tmp_path):
    nested = tmp_path / "recs" / "sub" / "r.toml"
    nested.parent.mkdir(parents=True)
    record = Path(__file__).parents[1] / "validation" / "records" / "emr-16vcpu-bert-large-4layer-16t.toml"
    nested.write_bytes(record.read_bytes())
    for out in ("recs/sub/r.toml", "recs/sub/link.json"):
        if out.endswith(".json"):
            (tmp_path / out).symlink_to("r.toml")
        proc = run_cli("accuracy", "--records", "recs", "--brief", "--json", out, cwd=tmp_path, timeout=60)
        one_line_refusal(proc, "is also an input of this command", "--records recs")
    assert nested.read_bytes() == record.read_bytes()


@pytest.mark.parametrize("argv, fragment", [
    ([*ESTIMATE, "--json", "out.png"], "--json out.png: the result is written as JSON, not .png"),
    ([*ESTIMATE, "--json", "out.toml"], "name the file .json"),
    (["calibrate", "--records", "-o", "cal.json"], "-o cal.json: written as TOML; name the file .toml"),
    (["accuracy", "--write-gate", "gate.json", "--reason", "r"], "--write-gate gate.json: written as TOML"),
])
def test_an_output_named_for_another_format_is_refused(tmp_path, argv, fragment):
    proc = run_cli(*argv, cwd=tmp_path, timeout=60)
    one_line_refusal(proc, fragment)
    assert list(tmp_path.iterdir()) == []


def test_a_name_without_a_format_suffix_is_written_as_json(tmp_path):
    proc = run_cli(*ESTIMATE, "--json", "result", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "result").read_text())["platform"]["name"] == "icx"


def test_a_device_is_refused_as_an_output_even_as_root(tmp_path):
    import stat

    disk = tmp_path / "disk"
    try:  # a loop device's node (7, 200): a disk to the kernel; none is attached there, so nothing could be hurt
        os.mknod(disk, 0o660 | stat.S_IFBLK, os.makedev(7, 200))
    except (PermissionError, OSError):
        pytest.skip("creating a device node needs root")
    proc = run_cli(*ESTIMATE, "--json", str(disk), timeout=60)
    one_line_refusal(proc, "is a device, not a file")
    mem = tmp_path / "mem"  # /dev/mem's numbers: the same major as /dev/null, refused by its minor
    os.mknod(mem, 0o660 | stat.S_IFCHR, os.makedev(1, 1))
    one_line_refusal(run_cli(*ESTIMATE, "--json", str(mem), timeout=60), "is a device")


def test_a_fifo_output_is_refused_at_once(tmp_path):
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    start = time.monotonic()
    for argv in ([*ESTIMATE, "--json", str(fifo)], ["records", "add", str(FIXTURES / "llama-bench" /
                                                     "zen5-2vcpu-q4_0-small.jsonl"), "-o", str(fifo)]):
        one_line_refusal(run_cli(*argv, timeout=60), "a FIFO")
    assert time.monotonic() - start < 30


def test_standard_output_by_its_device_name_is_still_written(tmp_path):
    proc = run_cli(*ESTIMATE, "--json", "/dev/stdout")  # a pipe here: /proc/self/fd/1 -> pipe:[...]
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout[:proc.stdout.rindex("}") + 1])["platform"]["name"] == "icx"
