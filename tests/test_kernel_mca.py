"""The kernel table's llvm-mca rows are the committed evidence's (validation/kernel_mca/cycles.csv): a table entry
that drifted from the file it cites, or an entry the file does not hold, fails here."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import tomllib

REPO = Path(__file__).resolve().parents[1]
#: each core the table prices from llvm-mca, and the gcc build whose assembly its rows were simulated on
BUILD = {"haswell": "haswell", "broadwell": "haswell", "skylake-avx512": "skylake-avx512",
         "cascadelake": "cascadelake", "icelake-server": "icelake-server", "sapphirerapids": "icelake-server",
         "graniterapids": "icelake-server", "znver3": "znver3", "znver4": "znver4*"}
IQUANTS = ("iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s")


def _table() -> dict:
    with open(REPO / "platforms" / "kernels" / "llama.cpp.toml", "rb") as f:
        return tomllib.load(f)


def _csv() -> dict[tuple[str, str, str], float]:
    with open(REPO / "validation" / "kernel_mca" / "cycles.csv", newline="") as f:
        return {(r["type"], r["build_march"], r["mca_mcpu"]): float(r["cycles_per_32w_per_row_sim"])
                for r in csv.DictReader(f) if r["kernel"] == "vec_dot"}


@pytest.mark.parametrize("core", sorted(BUILD))
def test_every_vec_dot_entry_is_its_llvm_mca_row(core):
    table, rows = _table(), _csv()
    assert "validation/kernel_mca/cycles.csv" in table["cycles"][core]["source"]
    entries = {t: e["vec_dot"] for t, e in table["cycles"][core]["types"].items() if "vec_dot" in e}
    assert set(IQUANTS) <= set(entries)
    for t, cycles in entries.items():
        assert cycles == pytest.approx(rows[(t, BUILD[core], core)], abs=1.5e-3), t


def test_an_i_quant_costs_more_than_a_k_quant_of_its_bits():
    """The i-quants read their grids with scalar loads: on every core LLVM models, each costs more cycles per 32
    weights than Q2_K and Q3_K, the k-quants of about the same bits."""
    table = _table()
    for core in BUILD:
        types = table["cycles"][core]["types"]
        k = max(types["q2_K"]["vec_dot"], types["q3_K"]["vec_dot"])
        assert all(types[t]["vec_dot"] > k for t in IQUANTS), core


def test_zen5_s_i_quant_entries_are_the_medians_of_its_timed_runs():
    """LLVM has no Zen 5 model, so Zen 5's rows are timed on the guest (python -m roofline.validation.kernel_cycles):
    each i-quant entry (vec_dot, and the tiled matmul's per-row and unpacking cycles) is the median of the runs of the
    results file that time it, and the file's q8_0 and q4_K runs repeat the table's rows of the earlier session within
    12% (the host ran at the same speed)."""
    import statistics

    table = _table()["cycles"]["znver5"]
    path = REPO / "validation" / "results" / "zen5-2vcpu-r3-kernel-cycles-iquants.txt"
    assert str(path.relative_to(REPO)) in table["source"]
    runs: dict[str, dict[str, list[float]]] = {}
    for line in path.read_text().split("# medians")[0].splitlines():
        if line and not line.startswith("#"):
            name, entry = line.split(" = ", 1)
            for key, v in tomllib.loads(f"x = {entry}")["x"].items():
                runs.setdefault(name, {}).setdefault(key, []).append(v)
    for t in IQUANTS:
        assert set(runs[t]) == set(table["types"][t]) == {"vec_dot", "tiled", "tiled_unpack"}, t
        assert len(runs[t]["vec_dot"]) == 6 and len(runs[t]["tiled"]) == 3
        for key, values in runs[t].items():
            assert table["types"][t][key] == pytest.approx(statistics.median(values), abs=1e-4), (t, key)
    for t in ("q8_0", "q4_K"):
        assert all(abs(v / table["types"][t]["vec_dot"] - 1) < 0.12 for v in runs[t]["vec_dot"]), (t, runs[t])
