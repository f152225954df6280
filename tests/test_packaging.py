"""A non-editable install carries the catalogs and the validation package, and runs from anywhere."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

import pytest
from clitools import REPO

pytestmark = pytest.mark.slow  # the file takes seconds: out of the fast stage (pytest -m "not slow")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
        capture_output=True, text=True, timeout=600,
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot build a wheel here (no setuptools from the index?): {proc.stderr[-300:]}")
    (whl,) = out.glob("roofline-*.whl")
    return whl


def test_wheel_contents(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for expected in ("roofline/catalog/_data/platforms/gnr.toml", "roofline/catalog/_data/models/bert-large.toml",
                     "roofline/validation/__init__.py", "roofline/schema/estimate.schema.json",
                     "roofline/catalog/_data/platforms/calibration/zen4-2vcpu.toml"):
        assert expected in names, expected
    tops = {n.split("/")[0] for n in names}
    assert tops <= {"roofline", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}, tops


def test_installed_wheel_runs_from_another_directory(wheel, tmp_path):
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    env = {**os.environ, "PYTHONPATH": str(site), "ROOFLINE_CACHE_DIR": str(tmp_path / "cache")}
    code = "import roofline, sys; print(roofline.__file__); sys.exit(__import__('roofline.cli').cli.main(sys.argv[1:]))"
    proc = subprocess.run([sys.executable, "-c", code, "estimate", "--model", "bert-large", "--cpu", "icx"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(str(site)), proc.stdout[:200]
    assert "3.15x" in proc.stdout
