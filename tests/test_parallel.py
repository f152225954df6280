"""The suite on several cores (tests/conftest.py): a test marked ``quiet`` runs with no other test beside it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the file takes seconds: out of the fast stage (pytest -m "not slow")

HERE = Path(__file__).resolve().parent

#: a test file of ``n`` tests that each sleep 0.4 s and write when they ran and on which worker (``mark``: their
#: marker line)
TIMED = """
import json, os, time, pytest
{mark}
@pytest.mark.parametrize("k", range({n}))
def test_{name}(k, tmp_path_factory):
    t0 = time.time()
    time.sleep(0.4)
    out = tmp_path_factory.getbasetemp().parent / f"{name}{{k}}.json"
    out.write_text(json.dumps([t0, time.time(), os.environ["PYTEST_XDIST_WORKER"]]))
"""


def test_a_quiet_test_runs_alone_on_several_workers(tmp_path):
    """Two workers, one file of ordinary tests and one of quiet ones (each file on its own worker): every quiet test's
    run overlaps no ordinary test's, while the ordinary ones still ran on a second worker."""
    shutil.copy(HERE / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_busy.py").write_text(TIMED.format(mark="", n=4, name="busy"))
    (tmp_path / "test_quiet.py").write_text(TIMED.format(mark="@pytest.mark.quiet", n=2, name="quiet"))
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    quiet: needs the host to itself\n")
    base = tmp_path / "base"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist",
                           "loadfile", "--basetemp", str(base)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    runs = {p.stem: json.loads(p.read_text()) for p in base.glob("*.json")}
    assert len(runs) == 6, runs
    busy = [v for k, v in runs.items() if k.startswith("busy")]
    quiet = [v for k, v in runs.items() if k.startswith("quiet")]
    assert {w for *_, w in busy}.isdisjoint({w for *_, w in quiet}), runs  # two workers, so they could overlap
    for a, b, _ in quiet:
        assert all(b <= c or d <= a for c, d, _ in busy), runs
