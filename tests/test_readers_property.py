"""Every reader behind ``check --from`` and ``records add`` (the one dispatch, ``read_measured``), driven with each
format's committed example cut short or with one JSON value replaced by an arbitrary one, and with arbitrary bytes:
a result, or one ``UserError`` naming the file; never another exception."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roofline.errors import UserError
from roofline.fidelity.measured import Given, read_measured

FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXAMPLES = [FIXTURES / p for p in (
    "vllm-bench-serve/spr-llama-3.2-1b-bf16.json",
    "sglang-bench-serving/spr-qwen2.5-0.5b-bf16.jsonl",
    "guidellm/spr-llama-3.2-1b-bf16.json",
    "openvino-benchmark-app/benchmark_report.json",
    "openvino-benchmark-app/benchmark_app.log",
    "llama-batched-bench/zen5-2vcpu-r3-llama-3.2-1b-q4_0.jsonl",
    "llama-batched-bench/zen5-2vcpu-r3-llama-3.2-1b-q4_0.md",
    "llama-bench/zen5-2vcpu-q4_0-small.csv",
    "llama-bench/zen5-2vcpu-llama-3.2-1b.md",
)]
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.floats(allow_nan=True, allow_infinity=True)
                           | st.integers(-10**30, 10**30) | st.text(max_size=20),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                       max_size=3), max_leaves=6)


def given_for(name: str) -> Given:
    """What the command line says beside each example (as the docs' `check --from` commands for them say)."""
    if name.startswith("benchmark_"):  # an encoder's samples per second
        return Given(cpu="spr", model="bert-large", precision="int8-static", seq_len=384)
    if name.startswith("zen5-2vcpu-r3-"):  # llama-batched-bench on the Zen 5 guest
        return Given(cpu="zen5-2vcpu-r3", model="llama-3.2-1b", precision="q4_0")
    if name.startswith("zen5-2vcpu-"):  # llama-bench on the Zen 5 guest, its types read from the file
        return Given(cpu="zen5-2vcpu", model="llama-3.2-1b", cores=2)
    return Given(cpu="spr", model="llama-3.2-1b", precision="q8_0")


NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _read(tmp_path: Path, name: str, raw: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(raw)
    try:
        read_measured(str(path), given_for(name))
    except UserError as e:
        assert "\n" not in str(e).strip(), str(e)


def test_every_example_reads():
    for path in EXAMPLES:
        assert read_measured(str(path), given_for(path.name)).record.measurements


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(k=st.integers(0, len(EXAMPLES) - 1), cut=st.floats(0, 1))
def test_an_example_cut_short(tmp_path, k, cut):
    raw = EXAMPLES[k].read_bytes()
    _read(tmp_path, EXAMPLES[k].name, raw[:int(len(raw) * cut)])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(k=st.integers(0, len(EXAMPLES) - 1), which=st.integers(0, 10**6), value=JSON_VALUES)
def test_an_example_with_one_number_replaced(tmp_path, k, which, value):
    """One number of the file (a rate, a count, a latency) replaced by any JSON value, written as JSON writes it."""
    raw = EXAMPLES[k].read_bytes()
    spots = list(NUMBER.finditer(raw))
    m = spots[which % len(spots)]
    _read(tmp_path, EXAMPLES[k].name, raw[:m.start()] + json.dumps(value).encode() + raw[m.end():])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=400), suffix=st.sampled_from([".json", ".jsonl", ".txt", ".csv", ".md", ".log"]))
def test_arbitrary_bytes(tmp_path, raw, suffix):
    _read(tmp_path, "file" + suffix, raw)
