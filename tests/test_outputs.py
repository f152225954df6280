"""Output files are never lost or clobbered: atomic, through symlinks, into FIFOs, read-only refused."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clitools import run_cli

from roofline.errors import UserError
from roofline.files.writing import check_target, open_text, replacing, write_text

pytestmark = pytest.mark.slow  # the file takes seconds: out of the fast stage (pytest -m "not slow")

ESTIMATE = ("estimate", "--model", "bert-base", "--cpu", "icx")


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_an_interrupted_write_leaves_the_old_contents(tmp_path):
    out = tmp_path / "out.json"
    out.write_text("OLD\n")
    with pytest.raises(KeyboardInterrupt):
        with open_text(out) as f:
            f.write("half of the new")
            raise KeyboardInterrupt
    assert out.read_text() == "OLD\n" and _listing(tmp_path) == ["out.json"]  # no temporary file left
    write_text(out, "NEW\n")
    assert out.read_text() == "NEW\n" and _listing(tmp_path) == ["out.json"]


def test_sweep_interrupted_by_sigint_keeps_the_old_file(tmp_path):
    out = tmp_path / "grid.csv"
    out.write_text("KEEP\n")
    proc = subprocess.Popen([sys.executable, "-m", "roofline", "sweep", "--model", "bert-base,bert-large",
                             "--cpu", "icx,gnr,spr", "--batch", "1:3000", "--seq-len", "1:512", "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # SIGINT as a terminal delivers it, even when this suite runs where it is ignored (a
                            # background job of a non-interactive shell inherits SIG_IGN, and Python keeps it)
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait until rows are streaming into the temporary file
            temps = [p for p in tmp_path.iterdir() if p.name.startswith(".grid.csv.")]
            if temps and temps[0].stat().st_size > 100_000:
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        else:
            pytest.fail("the sweep never started writing")
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            status = Path(f"/proc/{proc.pid}/status").read_text()
            sizes = [p.stat().st_size for p in tmp_path.iterdir() if p.name.startswith(".grid.csv.")]
            proc.kill()
            _, err = proc.communicate()
            pytest.fail(f"the sweep ran on after SIGINT; temporary file {sizes} bytes; stderr: {err[-3000:]}; "
                        f"/proc status:\n{status}")
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err
    assert out.read_text() == "KEEP\n" and _listing(tmp_path) == ["grid.csv"]


def test_a_symlink_is_followed_and_stays_a_link(tmp_path):
    real = tmp_path / "data" / "est.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    proc = run_cli(*ESTIMATE, "--json", str(link))
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert json.loads(real.read_text())["workload"]["model"] == "bert-base"
    assert _listing(real.parent) == ["est.json"]


def test_a_fifo_is_refused_not_written_into(tmp_path):
    """A FIFO without a reader would block the command for ever (issue 49): refused before any work."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    proc = run_cli(*ESTIMATE, "--json", str(fifo), timeout=60)
    assert proc.returncode == 2 and "a FIFO" in proc.stderr and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # still the FIFO


def test_a_character_device_is_written_into(tmp_path):
    with replacing("/dev/null") as path:
        assert path == Path("/dev/null")
        path.write_text("nothing")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    proc = run_cli(*ESTIMATE, "--json", "/dev/null")
    assert proc.returncode == 0 and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_read_only_is_refused_and_replaced_with_force_keeping_its_mode(tmp_path):
    out = tmp_path / "est.json"
    out.write_text("KEEP")
    out.chmod(0o444)
    proc = run_cli(*ESTIMATE, "--json", str(out))
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert "read-only" in proc.stderr and "--force" in proc.stderr and "Traceback" not in proc.stderr
    assert out.read_text() == "KEEP"
    proc = run_cli(*ESTIMATE, "--json", str(out), "--force")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["platform"]["name"] == "icx"
    assert stat.S_IMODE(out.stat().st_mode) == 0o444


def test_the_mode_of_a_writable_file_is_kept(tmp_path):
    out = tmp_path / "est.json"
    out.write_text("x")
    out.chmod(0o640)
    write_text(out, "y")
    assert stat.S_IMODE(out.stat().st_mode) == 0o640 and out.read_text() == "y"


@pytest.mark.parametrize("command", [
    [*ESTIMATE, "--json"],
    ["sweep", "--model", "bert-base", "--cpu", "icx", "-o"],
    ["plot", "--model", "bert-base", "--cpu", "icx", "-o"],
    ["accuracy", "--plot"],
    ["models", "--json"],
])
def test_a_directory_or_a_missing_folder_is_one_line(tmp_path, command):
    (tmp_path / "dir.svg").mkdir()
    for target, fragment in ((tmp_path / "dir.svg", "is a directory"),
                             (tmp_path / "no" / "such" / "x.svg", "does not exist")):
        proc = run_cli(*command, str(target))
        assert proc.returncode == 2, proc.stderr
        assert fragment in proc.stderr and len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr
    assert _listing(tmp_path) == ["dir.svg"] and _listing(tmp_path / "dir.svg") == []


def test_a_folder_that_cannot_be_written_is_one_line(tmp_path):
    if os.geteuid() == 0:
        target = "/proc/roofline-test.json"  # root writes anywhere a mode allows; /proc refuses new files
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        target = str(ro / "x.json")
    proc = run_cli(*ESTIMATE, "--json", target)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr
    assert not Path(target).exists()
    with pytest.raises(UserError):
        with open_text(target) as f:
            f.write("x")


@pytest.mark.parametrize("extra", [["--precision", "int3"], ["--seq-len", "1000"], ["--context", "999999999"],
                                   ["--batch", "1:10:0"], ["--model", ""], ["--batch", "1:1000000000"]])
def test_sweep_user_error_keeps_the_file(tmp_path, extra):
    keep = tmp_path / "keep.csv"
    keep.write_text("KEEP\n")
    args = {"--model": "bert-base", "--cpu": "icx"}
    flat = [x for k, v in args.items() if k not in extra for x in (k, v)]
    proc = run_cli("sweep", *flat, *extra, "-o", str(keep))
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr
    assert keep.read_text() == "KEEP\n" and _listing(tmp_path) == ["keep.csv"]


def test_validation_does_not_import_the_cli():
    """The probe cache is written through roofline.files.writing (core), not the CLI's writer: validation -> core only."""
    import ast

    from clitools import REPO

    for path in (REPO / "validation").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("roofline.cli"), f"{path.name}:{node.lineno} imports {node.module}"


def test_check_target_accepts_new_files_and_refuses_empty(tmp_path):
    t = check_target(tmp_path / "new.json")
    assert t.existing is None and not t.special
    with pytest.raises(UserError, match="empty output path"):
        check_target("")


def test_the_accuracy_chart_is_written_like_every_output(tmp_path, corpus_accuracy):
    """accuracy --plot: refused on a read-only file before any work (--force replaces it, keeping its mode),
    and through a symlink the target is replaced, the link kept."""
    pytest.importorskip("matplotlib", reason="accuracy --plot draws with matplotlib (the plot extra)")
    ro = tmp_path / "ro.svg"
    ro.write_text("KEEP")
    ro.chmod(0o444)
    proc = run_cli("accuracy", "--brief", "--plot", str(ro))
    assert proc.returncode == 2 and "read-only" in proc.stderr and "--force" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and ro.read_text() == "KEEP"
    proc = run_cli("accuracy", "--brief", "--plot", str(ro), "--force")
    assert proc.returncode == 0, proc.stderr
    assert ro.read_text().lstrip().startswith("<?xml") and stat.S_IMODE(ro.stat().st_mode) == 0o444
    target, link = tmp_path / "chart.svg", tmp_path / "link.svg"
    target.write_text("OLD")
    link.symlink_to(target)
    proc = run_cli("accuracy", "--brief", "--plot", str(link))
    assert proc.returncode == 0 and f"wrote {link}" in proc.stdout, proc.stderr
    assert link.is_symlink() and target.read_text().lstrip().startswith("<?xml")
    assert _listing(tmp_path) == ["chart.svg", "link.svg", "ro.svg"]


def test_every_command_that_writes_a_file_takes_force():
    """--json FILE, -o/--output and --plot write files: each command with one of them takes --force (the
    read-only refusal names it)."""
    from roofline.cli import COMMANDS, parser_for

    writers = {"--json", "--output", "--plot"}
    checked = []
    for name in COMMANDS:
        p = parser_for(name)
        flags = {s for a in p._actions for s in a.option_strings}
        if flags & writers:
            assert "--force" in flags, name
            checked.append(name)
    assert {"accuracy", "estimate", "plan", "sweep", "plot", "probe", "validate"} <= set(checked)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("command", [
    [*ESTIMATE, "--json"],
    ["sweep", "--model", "bert-base", "--cpu", "icx", "-o"],
    ["sweep", "--model", "bert-base", "--cpu", "icx", "--format", "jsonl", "-o"],
    ["models", "--json"],
    ["accuracy", "--brief", "--json"],
])
def test_a_full_device_is_one_line(command):
    """/dev/full takes every write and fails it (ENOSPC), on a write or only when the last buffer is
    flushed at close: either way one line, exit 2."""
    proc = run_cli(*command, "/dev/full")
    assert proc.returncode == 2, proc.stderr
    assert "No space left" in proc.stderr and len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr


def test_a_closed_stdout_drops_the_tables_and_keeps_the_file(tmp_path):
    """`roofline ... >&-`: no traceback; what would go to the closed stream is dropped (as print() does),
    the --json file is written, and an error still exits 2."""
    import shlex

    out = tmp_path / "est.json"
    cli = f"{shlex.quote(sys.executable)} -m roofline"
    ok = subprocess.run(["sh", "-c", f"exec {cli} {' '.join(ESTIMATE)} --json {shlex.quote(str(out))} >&-"],
                        capture_output=True, text=True, cwd=tmp_path)
    assert ok.returncode == 0 and "Traceback" not in ok.stderr, ok.stderr
    assert json.loads(out.read_text())["platform"]["name"] == "icx"
    bad = subprocess.run(["sh", "-c", f"exec {cli} estimate --model bert-base --cpu no-such-cpu >&- 2>&-"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 2
