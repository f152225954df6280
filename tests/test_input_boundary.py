"""The one boundary for untrusted input (roofline/files/reading.py) and the outputs beside it: special files
never read (no hang), sizes capped while reading, symlink loops one line, a catalog folder's odd entries
skipped with a warning; an output that is an input refused; SIGTERM leaves no temporary file; long names
write; a full standard output is one line; strings from files reach the terminal as text."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clitools import REPO, run_cli

from roofline.errors import SpecError, printable
from roofline.files.reading import read_bytes

pytestmark = pytest.mark.slow  # the file takes seconds: out of the fast stage (pytest -m "not slow")

PROBE = str(REPO / "validation" / "results" / "zen4-2vcpu-probe.toml")
REPORT = REPO / "validation" / "results" / "zen4-2vcpu-bert-base.json"
LLAMA = REPO / "tests" / "fuzz_cases" / "llama-config.json"


def _one_line_refusal(proc, *fragments):
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    for f in fragments:
        assert f in proc.stderr, proc.stderr


# ------------------------------------------------------------------ the reader


def test_the_reader_refuses_special_files_and_caps_while_reading(tmp_path):
    fifo = tmp_path / "f.toml"
    os.mkfifo(fifo)
    with pytest.raises(SpecError, match="a FIFO"):
        read_bytes(fifo)  # opened non-blocking: no writer, no hang
    with pytest.raises(SpecError, match="a device"):
        read_bytes("/dev/zero")  # st_size 0, endless: refused by its type, before a byte is read
    with pytest.raises(SpecError, match="a directory"):
        read_bytes(tmp_path)
    loop = tmp_path / "loop.toml"
    loop.symlink_to(loop)
    with pytest.raises(SpecError, match="symlink loop"):
        read_bytes(loop)
    big = tmp_path / "big.json"
    with open(big, "wb") as f:  # sparse: 500 MB that costs nothing to make
        f.truncate(500 << 20)
    start = time.perf_counter()
    with pytest.raises(SpecError, match="larger than 1,000 bytes"):
        read_bytes(big, max_bytes=1000)
    assert time.perf_counter() - start < 1
    assert read_bytes(LLAMA) == LLAMA.read_bytes()


@pytest.mark.parametrize("make,argv,fragment", [
    ("fifo", ["plan", "--model", "bert-base", "--cpu", "icx", "--seq-len-histogram", "{f}"], "a FIFO"),
    ("fifo", ["check", "--report", "{f}", "--cpu", "icx"], "a FIFO"),
    ("fifo", ["estimate", "--model", "{f}.json", "--cpu", "icx"], "a FIFO"),
    ("fifo", ["estimate", "--model", "bert-base", "--cpu", "{f}.toml"], "a FIFO"),
    ("fifo", ["estimate", "--model", "bert-base", "--cpu", "icx", "--calibration", "{f}.toml"], "a FIFO"),
    ("fifo", ["estimate", "--model", "bert-base", "--cpu", "icx", "--stack", "{f}.toml"], "a FIFO"),
    ("fifo", ["accuracy", "--records", "{f}.toml"], "FIFO"),
    ("zero", ["check", "--report", "/dev/zero", "--cpu", "icx"], "a device"),
    ("zero", ["calibrate", "/dev/zero", "-o", "{f}.toml"], "a device"),
    ("loop", ["estimate", "--model", "{f}.toml", "--cpu", "icx"], "symlink loop"),
    ("big", ["estimate", "--model", "{f}", "--cpu", "icx"], "larger than 16,777,216 bytes"),
])
def test_special_and_huge_inputs_are_one_line_in_bounded_time(tmp_path, make, argv, fragment):
    base = tmp_path / "in"
    for suffix in ("", ".json", ".toml"):
        p = Path(f"{base}{suffix}")
        if make == "fifo":
            os.mkfifo(p)
        elif make == "loop":
            p.symlink_to(p.name)
    if make == "big":
        (tmp_path / "in").mkdir()
        with open(tmp_path / "in" / "config.json", "wb") as f:
            f.truncate(500 << 20)
    start = time.perf_counter()
    proc = run_cli(*[a.replace("{f}", str(base)) for a in argv], timeout=30)
    assert time.perf_counter() - start < 30
    _one_line_refusal(proc, fragment)


def test_a_catalog_folder_skips_fifos_devices_and_loops_with_a_warning(tmp_path):
    cat = tmp_path / "cat"
    cat.mkdir()
    os.mkfifo(cat / "fifo.toml")
    (cat / "loop.toml").symlink_to("loop.toml")
    (cat / "zero.toml").symlink_to("/dev/zero")
    env = {"ROOFLINE_MODELS": str(cat), "ROOFLINE_PLATFORMS": str(cat)}
    proc = run_cli("estimate", "--model", "bert-large", "--cpu", "icx", "--brief", env=env, timeout=30)
    assert proc.returncode == 0, proc.stderr
    warnings = proc.stderr.splitlines()
    assert len(warnings) == 3 and all(w.startswith("roofline: warning: skipped") for w in warnings), warnings
    assert any("FIFO" in w for w in warnings) and any("symlink loop" in w for w in warnings)
    listing = run_cli("models", "--json", env=env, timeout=30)
    assert listing.returncode == 0 and "bert-large" in {m["name"] for m in json.loads(listing.stdout)}
    assert listing.stderr.count("warning: skipped") == 3


def test_a_records_folder_skips_a_fifo(tmp_path):
    folder = tmp_path / "records"
    folder.mkdir()
    src = REPO / "validation" / "records" / "paper-icx-bert-large.toml"
    (folder / src.name).write_bytes(src.read_bytes())
    os.mkfifo(folder / "z.toml")
    proc = run_cli("accuracy", "--records", str(folder), "--json", timeout=60)
    assert proc.returncode == 0 and "warning: skipped" in proc.stderr, proc.stderr


# ------------------------------------------------------------------ outputs


def test_an_output_that_is_an_input_is_refused_and_left_alone(tmp_path):
    rep = tmp_path / "rep.json"
    rep.write_bytes(REPORT.read_bytes())
    (tmp_path / "link.json").symlink_to("rep.json")
    os.link(rep, tmp_path / "hard.json")
    cfg = tmp_path / "m" / "config.json"
    cfg.parent.mkdir()
    cfg.write_bytes(LLAMA.read_bytes())
    cat = tmp_path / "cat"
    cat.mkdir()
    (cat / "mine.toml").write_bytes((REPO / "models" / "bert-base.toml").read_bytes().replace(
        b'name = "bert-base"', b'name = "mine"'))
    for argv, fragment in (
        (["calibrate", "rep.json", "--cpu", PROBE, "-o", "rep.json"], "the report rep.json"),
        (["calibrate", "rep.json", "--cpu", PROBE, "-o", "link.json"], "the report rep.json"),
        (["calibrate", "link.json", "--cpu", PROBE, "-o", "hard.json"], "the report link.json"),
        (["estimate", "--model", "m/config.json", "--cpu", "icx", "--json", "m/config.json"], "--model m/config.json"),
        (["estimate", "--model", "m", "--cpu", "icx", "--json", "./m/../m/config.json"], "--model m"),
        (["estimate", "--model", "mine", "--cpu", "icx", "--json", str(cat / "mine.toml")], "--model mine"),
        (["plan", "--model", "bert-base", "--cpu", f"icx,{PROBE}", "--json", "link.json"], None),
    ):
        before = {p.name: p.read_bytes() for p in (rep, cfg, cat / "mine.toml")}
        proc = run_cli(*argv, cwd=tmp_path, env={"ROOFLINE_MODELS": str(cat)})
        if fragment is None:  # not an input here: written through the link as usual
            assert proc.returncode == 0, proc.stderr
            json.loads(rep.read_text())
            rep.write_bytes(REPORT.read_bytes())
            continue
        _one_line_refusal(proc, "is also an input of this command", fragment)
        assert {p.name: p.read_bytes() for p in (rep, cfg, cat / "mine.toml")} == before


def test_sigterm_removes_the_temporary_file(tmp_path):
    out = tmp_path / "grid.csv"
    proc = subprocess.Popen([sys.executable, "-m", "roofline", "sweep", "--model", "bert-base,bert-large", "--cpu",
                             "icx,gnr,spr", "--batch", "1:2000", "--seq-len", "1:500", "-o", str(out)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and not [p for p in tmp_path.iterdir() if p.name.startswith(".grid.csv.")]:
        time.sleep(0.05)
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".grid.csv.")], "no temporary file appeared"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and err.strip() == "terminated", (proc.returncode, err)
    assert list(tmp_path.iterdir()) == []


def test_a_legal_long_name_is_written(tmp_path):
    name = "a" * 250 + ".json"  # 255 bytes: the file system's limit
    proc = run_cli("estimate", "--model", "bert-base", "--cpu", "icx", "--json", name, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert [p.name for p in tmp_path.iterdir()] == [name] and json.loads((tmp_path / name).read_text())


def test_a_full_standard_output_is_one_line():
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "roofline", "estimate", "--model", "bert-base", "--cpu", "icx"],
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.splitlines() == [
        "roofline estimate: error: cannot write the standard output (No space left on device)"], proc.stderr


# ------------------------------------------------------------------ strings from files are text


def test_strings_from_files_are_never_markup_and_their_controls_are_escaped(tmp_path):
    text = (REPO / "platforms" / "zen4-2vcpu.toml").read_text().replace(
        'source = "lscpu in the guest: Socket(s) 1"', 'source = "[/sys/devices/system/cpu] \\u001b]0;owned [bold]x"', 1)
    p = tmp_path / "p.toml"
    p.write_text(text)
    proc = run_cli("platforms", "show", str(p), env={"COLUMNS": "300"})
    assert proc.returncode == 0, proc.stderr
    assert "[/sys/devices/system/cpu] \\x1b]0;owned [bold]x" in proc.stdout and "\x1b" not in proc.stdout
    assert run_cli("estimate", "--model", "bert-base", "--cpu", str(p)).returncode == 0
    cfg = tmp_path / "m\x1b[31m" / "config.json"
    cfg.parent.mkdir()
    cfg.write_text(json.dumps({**json.loads(LLAMA.read_text()), "hidden_size": -1}))
    bad = run_cli("models", "show", str(cfg))
    _one_line_refusal(bad, "m\\x1b[31m")
    assert "\x1b" not in bad.stderr


def test_printable_escapes_controls_and_keeps_text():
    assert printable("a\x1b[2Jb\x07\r\u009b\udcff\tok\n") == "a\\x1b[2Jb\\x07\\r\\x9b\\udcff\tok\n"
    assert printable("x\ny", keep_newlines=False) == "x\\ny"
