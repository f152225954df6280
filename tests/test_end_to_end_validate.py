"""``roofline validate --quick`` end to end on this machine: a probe, the kernels and the encoder, one JSON.

Its own file so that the suite's workers, which take a file each (``--dist loadfile``), run it beside the other
kernel tests rather than after them.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("torchao")

pytestmark = [pytest.mark.kernels, pytest.mark.slow]  # slow: out of the fast stage


def test_validate_quick_end_to_end(tmp_path):
    """`roofline validate --quick --json` on this machine (one layer, two timing rounds): whole JSON, valid against
    the schema."""
    import os

    import jsonschema

    from roofline.schema import schema_path

    out = tmp_path / "report.json"
    env = {**os.environ, "ROOFLINE_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "roofline", "validate", "--model", "bert-base", "--quick",
                           "--layers", "1", "--rounds", "2", "--json", str(out)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(out.read_text())
    jsonschema.validate(data, json.loads(schema_path("validate").read_text()))
    assert {"cpu_model", "flags", "threads", "torch", "torchao"} <= set(data["host"])
    assert data["platform"]["kind"] == "measured" and (tmp_path / "cache" / "probes").is_dir()
    shapes = data["shapes"]
    assert {s["name"] for s in shapes} == {"qkv", "attn_out", "ffn_up", "ffn_down"}
    assert {s["m"] for s in shapes} == {128}  # the real M: batch 1 x seq 128
    fp32 = [s for s in shapes if s["precision"] == "fp32"]
    assert all(s["numerics_ok"] and s["measured_ops_per_s"] > 0 and s["achieved_fraction"] > 0 for s in fp32)
    for s in shapes:
        if s["measured_ops_per_s"] is not None:  # timed only when correct (and really INT8)
            assert s["numerics_ok"] and s["quantized"] is not False
    e2e = {(e["precision"], e["baseline"]): e for e in data["end_to_end"]}
    assert ("int8-static", "fp32") in e2e and ("int8-dynamic", "fp32") in e2e
    row = e2e[("int8-static", "fp32")]
    if row["realized_speedup"] is not None:
        assert row["fraction_of_ceiling"] == pytest.approx(row["realized_speedup"] / row["ceiling"])
        assert 0 < row["f_gemm"] < 1 and row["throughput_rps"] > 0
    assert "Per-shape kernels" in proc.stdout and "Table 14" in proc.stdout
    c = data["contention"]  # the canary ran after every timing round
    assert c["samples"] >= 3 and c["reference_s"] > 0 and c["canary"].startswith("torch.mm")
    flagged = [r for group in ("shapes", "encoder", "end_to_end") for r in data[group]
               if any(f.startswith("contention:") for f in r["flags"])]
    assert c["flagged_rows"] == len(flagged)
    assert (c["unresolved"] > 0) == bool(flagged) == ("the host was busy" in proc.stderr)
