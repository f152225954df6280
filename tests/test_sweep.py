"""The sweep: every row is what `estimate` gives for that point; CSV and JSON lines."""

from __future__ import annotations

import csv
import io
import json

import pytest
from clitools import run_cli
from estimates import estimate
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline.catalog import load_model, load_platform
from roofline.model.sweep import COLUMNS, plane

pytestmark = pytest.mark.slow  # the file takes seconds: out of the fast stage (pytest -m "not slow")


@settings(max_examples=30, deadline=None)
@given(model=st.sampled_from(["bert-base", "distilbert-base", "llama-3.2-1b", "qwen3-0.6b", "olmoe-1b-7b",
                              "qwen1.5-moe-a2.7b", "mixtral-8x7b"]),
       cpu=st.sampled_from(["icx", "gnr", "genoa", "milan"]),
       precision=st.sampled_from(["fp32", "bf16", "int8-dynamic", "int8-static", "int8-weight-only", "w4a8"]),
       batches=st.lists(st.integers(1, 16), min_size=1, max_size=3, unique=True),
       seqs=st.lists(st.integers(1, 512), min_size=1, max_size=3, unique=True),
       decode=st.booleans())
def test_rows_match_estimate(model, cpu, precision, batches, seqs, decode):
    m = load_model(model)
    phase = "decode" if decode and m.family == "decoder" else None
    p = plane(load_platform(cpu), m, precision, batches, seqs, phase=phase, context=300 if phase else None)
    rows = list(p.rows())
    assert len(rows) == len(batches) * len(seqs)
    for row in rows[:3]:
        e = estimate(load_platform(cpu), m, precisions=[precision], baseline=precision, batch=row["batch"],
                     seq_len=row["seq_len"], phase=phase, context=300 if phase else None)
        pr = e.precisions[precision]
        assert row["gemm_time_s"] == pytest.approx(pr.gemm_time_s, rel=1e-12)
        assert row["step_time_s"] == pytest.approx(pr.step_time_s, rel=1e-12)
        assert row["aggregate_ops_per_s"] == pytest.approx(pr.aggregate_ops_per_s, rel=1e-12)
        assert row["weight_bytes"] == pytest.approx(pr.weight_bytes) and row["llc_resident"] == pr.llc_resident
        assert row["throughput_per_s"] == pytest.approx(row["batch"] / row["step_time_s"])
        assert row["m"] == e.workload.m


def test_csv_and_jsonl(tmp_path):
    proc = run_cli("sweep", "--model", "bert-base", "--cpu", "icx,gnr", "--precision", "fp32,int8-static",
                   "--batch", "1:4", "--seq-len", "128,256")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert len(rows) == 2 * 2 * 4 * 2 and tuple(rows[0]) == COLUMNS
    out = tmp_path / "grid.jsonl"
    assert run_cli("sweep", "--model", "llama-3.2-1b", "--cpu", "spr", "--phase", "decode", "--context", "512",
                   "--batch", "1,8", "-o", str(out)).returncode == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 2 * 2 and all(r["phase"] == "decode" and r["context"] == 512 for r in lines)
    assert all(r["step_time_s"] > 0 for r in lines)


@pytest.mark.parametrize("args, fragment", [(["--batch", "0"], "--batch"), (["--seq-len", "a:b"], "start:stop"),
                                            (["--precision", "int3"], "unknown precision")])
def test_sweep_bad_input(args, fragment):
    proc = run_cli("sweep", "--model", "bert-base", "--cpu", "icx", *args)
    assert proc.returncode == 2 and fragment in proc.stderr and "Traceback" not in proc.stderr


# ------------------------------------------------------------------ the table and its writers


def _text(matrix) -> list[str]:
    return [row.tobytes().replace(b"\0", b"").decode() for row in matrix]  # NUL bytes pad, anywhere


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=64))
def test_float_text_is_repr(values):
    """Every float, subnormal, huge, negative zero and non-finite ones included, as Python's repr writes it."""
    import numpy as np

    from roofline.files.columns import float_text

    assert _text(float_text(np.array(values))) == [repr(v) for v in values]


def test_float_text_is_repr_on_random_bit_patterns_and_short_decimals():
    """A million bit patterns (every exponent), plus decimals of few digits (the shortest repr is short) and the
    values around powers of ten and two: read back exactly and written as repr writes them."""
    import numpy as np

    from roofline.files.columns import float_text

    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**63, 1_000_000, dtype=np.int64).view(np.float64)
    bits = bits[np.isfinite(bits)]
    short = np.round(rng.random(100_000) * 10.0 ** rng.integers(0, 9, 100_000)) / 10.0 ** rng.integers(0, 9, 100_000)
    edges = np.concatenate([10.0 ** np.arange(-300, 300), 2.0 ** np.arange(-1070, 1020)])
    edges = np.concatenate([edges, np.nextafter(edges, 0), np.nextafter(edges, np.inf)])
    x = np.concatenate([bits, short, edges, -edges])
    assert _text(float_text(x)) == [repr(v) for v in x.tolist()]


@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=64))
def test_int_text_is_str(values):
    import numpy as np

    from roofline.files.columns import int_text

    assert _text(int_text(np.array(values, dtype=np.int64))) == [str(v) for v in values]


def test_the_csv_and_json_lines_are_the_rows_as_python_writes_them(tmp_path):
    """The column-at-a-time writer gives, byte for byte, the JSON lines json.dumps gives for each row, and CSV
    whose fields are the rows' values as csv.writer writes them."""
    from roofline.api import sweep
    from roofline.model.sweep import AxisValues
    from roofline.model.sweep import sweep as planes_of

    args = dict(model="bert-base,qwen3-0.6b", cpu="icx,genoa", precision="fp32,int8-static,w4a8", batch="1:5",
                seq_len="1,17,300")
    t = sweep(**args)
    t.write(str(tmp_path / "g.jsonl"))
    t.write(str(tmp_path / "g.csv"))
    from roofline.catalog import load_model, load_platform

    rows = [row for p in planes_of([load_platform("icx"), load_platform("genoa")],
                                   [load_model("bert-base"), load_model("qwen3-0.6b")],
                                   ["fp32", "int8-static", "w4a8"], AxisValues([range(1, 6)]), AxisValues([1, 17, 300]))
            for row in p.rows()]
    assert len(rows) == len(t) == 2 * 2 * 3 * 5 * 3
    assert (tmp_path / "g.jsonl").read_text() == "".join(json.dumps(r) + "\n" for r in rows)
    expected = io.StringIO()
    w = csv.DictWriter(expected, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    assert (tmp_path / "g.csv").read_text() == expected.getvalue()


def test_parquet_loads_in_pandas_as_the_csv_does(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    for extra in (["--precision", "fp32,bf16,int8-static"], ["--phase", "decode", "--context", "700"]):
        model = "llama-3.2-1b,olmoe-1b-7b" if "decode" in extra else "bert-base,distilbert-base"
        base = ["sweep", "--model", model, "--cpu", "spr,zen4-2vcpu", "--batch", "1:9", "--seq-len", "1:64:7", *extra]
        for fmt in ("csv", "parquet"):
            proc = run_cli(*base, "-o", str(tmp_path / f"g.{fmt}"))
            assert proc.returncode == 0 and f"({fmt})" in proc.stdout, proc.stderr
        a, b = pd.read_csv(tmp_path / "g.csv"), pd.read_parquet(tmp_path / "g.parquet")
        precisions = 2 if "decode" in extra else 3
        assert list(a.columns) == list(b.columns) == list(COLUMNS) and len(a) == len(b) == 2 * 2 * precisions * 9 * 10
        pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_the_python_table_is_the_csv(tmp_path):
    """roofline.sweep(...) returns the table: its columns by name, to_pandas (what the CSV reads back as) and
    to_arrow (what the Parquet file holds)."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    import numpy as np

    import roofline
    from roofline.results.sweep import SweepTable

    t = roofline.sweep(model="bert-base", cpu=["icx", "gnr"], precision=["fp32", "int8-static"], batch=[1, 4, 16],
                       seq_len="128:512:128")
    assert isinstance(t, SweepTable) and len(t) == 2 * 2 * 3 * 4 and t.columns == COLUMNS
    t.write(str(tmp_path / "g.csv"))
    from_csv = pd.read_csv(tmp_path / "g.csv")
    df = t.to_pandas()
    pd.testing.assert_frame_equal(df, from_csv, check_exact=True, check_dtype=False)
    assert df["step_time_s"].dtype == np.float64 and df["batch"].dtype == np.int64
    assert np.array_equal(t["step_time_s"], from_csv["step_time_s"].to_numpy())
    arrow = t.to_arrow()
    assert arrow.column_names == list(COLUMNS) and arrow.num_rows == len(t)
    assert str(arrow.schema.field("context").type) == "int64" and arrow.column("context").null_count == len(t)
    with pytest.raises(KeyError, match="the columns are"):
        t["latency"]


def test_a_hundred_million_point_sweep_streams_in_bounded_memory():
    """1e8 points: the table knows its size without evaluating anything, and its blocks come one at a time, each
    holding a chunk's memory (tens of MB), not the grid's: the peak levels off as the blocks go by."""
    import tracemalloc

    import roofline
    from roofline.model.sweep import CHUNK_POINTS

    t = roofline.sweep(model="bert-base", cpu="icx", precision="int8-static", batch="1:1000000", seq_len="1:100")
    assert len(t) == 10**8
    tracemalloc.start()
    try:
        blocks = t.blocks()
        lengths = [next(blocks).length for _ in range(8)]
        early = tracemalloc.get_traced_memory()[1]
        second = None
        for i in range(24):
            b = next(blocks)
            second = b.columns["batch"][0] if i == 0 else second
            lengths.append(b.length)
        late, held = tracemalloc.get_traced_memory()[1], tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert lengths == [CHUNK_POINTS] * 32
    assert second == 1 + 8 * CHUNK_POINTS // 100  # points in order: batch-major, 100 sequence lengths each
    assert late < 1.2 * early and late < 150e6 and held < 30e6, (early, late, held)


def test_a_long_axis_stays_lazy():
    import numpy as np

    from roofline.model.sweep import DEDUP_LIMIT, AxisValues

    ax = AxisValues([range(1, 10**8 + 1), range(5, 0, -1)])
    assert len(ax) == 10**8 + 5 and ax.max() == 10**8 and ax._values is None
    assert ax.take(np.array([0, 10**8 - 1, 10**8, 10**8 + 4])).tolist() == [1, 10**8, 5, 1]
    small = AxisValues([range(1, 5), range(3, 8)])  # de-duplicated, first occurrence kept
    assert small.tolist() == [1, 2, 3, 4, 5, 6, 7] and DEDUP_LIMIT >= 1 << 20


@pytest.mark.parametrize("args, fragment", [
    (["-o", "grid.xlsx"], "not .xlsx files"), (["-o", "grid.csv.gz"], "not .gz files"),
    (["-o", "grid.csv", "--format", "parquet"], "the file's suffix says csv"),
    (["--format", "parquet"], "Parquet is binary"), (["-o", "-", "--format", "parquet"], "Parquet is binary")])
def test_a_format_the_sweep_does_not_write_is_refused(tmp_path, args, fragment):
    proc = run_cli("sweep", "--model", "bert-base", "--cpu", "icx", *args, cwd=tmp_path)
    assert proc.returncode == 2 and fragment in proc.stderr and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_writer_thread_hands_back_its_error_and_stops():
    """Text is made on a second thread while the next blocks are evaluated: an error there (a value JSON cannot
    write) comes back on the calling thread as the one-line error, and an error while evaluating stops the writer."""
    import numpy as np

    from roofline.errors import UserError
    from roofline.files.columns import Block, Schema, pipelined, stream_text

    schema = Schema((("x", "float"),))
    blocks = [Block(3, {"x": np.array([1.0, 2.0, 3.0])}), Block(2, {"x": np.array([np.inf, 1.0])})]
    out = io.BytesIO()
    with pytest.raises(UserError, match="JSON has no infinity"):
        stream_text(out, schema, blocks, "jsonl")
    seen: list[int] = []

    def evaluated():
        yield blocks[0]
        raise KeyboardInterrupt

    import threading

    with pytest.raises(KeyboardInterrupt):
        pipelined(evaluated(), lambda b: seen.append(b.length))
    assert seen in ([], [3]) and not [t for t in threading.enumerate() if t.name == "roofline-writer"]
    seen.clear()
    assert pipelined(iter(blocks), lambda b: seen.append(b.length)) == 5 and seen == [3, 2]
