"""The roofline chart: a valid SVG/PNG with one marker per GEMM shape and precision (and per measured shape)."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from clitools import REPO, run_cli

pytestmark = pytest.mark.slow  # the file takes seconds: out of the fast stage (pytest -m "not slow")

pytest.importorskip("matplotlib")


def _ids(svg_path) -> list[str]:
    root = ET.parse(svg_path).getroot()  # raises if the SVG is not well-formed XML
    assert root.tag.endswith("svg")
    return [e.get("id") for e in root.iter() if e.get("id")]


def test_svg_has_a_point_per_shape_and_precision(tmp_path):
    out = tmp_path / "gnr.svg"
    proc = run_cli("plot", "--model", "bert-large", "--cpu", "gnr", "--precision", "fp32,bf16,int8-static", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    ids = _ids(out)
    points = [i for i in ids if i.startswith("point-")]
    assert len(points) == 3 * 4  # 3 precisions x 4 GEMM shapes (qkv, attn_out, ffn_up, ffn_down)
    assert {"point-int8-static-ffn_down", "point-fp32-qkv"} <= set(points)
    assert "12 predicted points" in proc.stdout


def test_png_with_measured_points(tmp_path):
    out = tmp_path / "host.png"
    report = REPO / "validation" / "results" / "zen4-2vcpu-bert-large.json"
    probe = REPO / "validation" / "results" / "zen4-2vcpu-probe.toml"
    proc = run_cli("plot", "--model", "bert-large", "--cpu", str(probe), "--precision",
                   "fp32,bf16,int8-dynamic,int8-static", "--measured", str(report), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    assert "16 predicted points, 16 measured" in proc.stdout
    svg = tmp_path / "host.svg"
    run_cli("plot", "--model", "bert-large", "--cpu", str(probe), "--precision", "fp32,int8-static",
            "--measured", str(report), "-o", str(svg))
    ids = _ids(svg)
    assert len([i for i in ids if i.startswith("measured-")]) == 8  # 2 precisions x 4 shapes measured


def test_plot_bad_input(tmp_path):
    proc = run_cli("plot", "--model", "bert-large", "--cpu", "gnr", "-o", str(tmp_path / "x.jpg"))
    assert proc.returncode == 2 and ".svg or .png" in proc.stderr
    report = REPO / "validation" / "results" / "zen4-2vcpu-bert-large.json"
    proc = run_cli("plot", "--model", "bert-base", "--cpu", "gnr", "--measured", str(report), "-o", str(tmp_path / "x.svg"))
    assert proc.returncode == 2 and "no shape of that report matches" in proc.stderr


def test_missing_matplotlib_says_how_to_install(tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None; from roofline.cli import main; "
            f"sys.exit(main(['plot', '--model', 'bert-base', '--cpu', 'icx', '-o', r'{tmp_path / 'x.svg'}']))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "pip install 'roofline[plot]'" in proc.stderr and "Traceback" not in proc.stderr
