"""Generated config.json files and GGUF headers with wrong types and extreme values, each run as a user runs
the tool (a separate process, under a timeout): the answer is exit 0, or exit 2 with one line on stderr,
within the time limit; never a traceback, a hang or a crash."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from gguf_files import write_gguf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roofline.spec.hf_config import KEY_TYPES

pytestmark = pytest.mark.slow  # the file takes seconds: out of the fast stage (pytest -m "not slow")

REPO = Path(__file__).resolve().parents[1]
CONFIGS = sorted((REPO / "tests" / "fixtures" / "hf_configs").glob("*/config.json")) + [
    REPO / "tests" / "fuzz_cases" / "llama-config.json", REPO / "tests" / "fuzz_cases" / "bert-large-config.json"]
#: seconds a run may take: the slowest legitimate run of these commands is a few seconds
LIMIT_S = 60

HOSTILE = st.one_of(
    st.sampled_from([None, True, False, "4096", "", "x" * 2000, -1, 0, 1, 3, 2**31, 2**63, 10**30, 10**400, 1e30,
                     1.5, -0.0, [], [1], [-1, 10**9], ["x"], ["sliding_attention"], {}, {"a": {"b": 1}}]),
    st.integers(min_value=-2**70, max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=50),
)
#: keys every reader reads, and keys that name what is not modelled
KEYS = sorted(KEY_TYPES) + ["kv_lora_rank", "sliding_window_pattern", "full_attention_interval", "hidden_activation",
                            "ffn_config", "n_group", "rope_scaling", "text_config"]


def run(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "roofline", *argv], capture_output=True, text=True, cwd=cwd,
                          timeout=LIMIT_S)


def assert_clean(proc: subprocess.CompletedProcess, what: str) -> None:
    assert "Traceback" not in proc.stderr, (what, proc.stderr[-3000:])
    assert proc.returncode in (0, 2), (what, proc.returncode, proc.stderr[-2000:])
    if proc.returncode == 2:
        assert len(proc.stderr.splitlines()) == 1, (what, proc.stderr)


COMMANDS = st.sampled_from([
    ["footprint", "--model", "{m}", "--precision", "int4-weight-only", "--json"],
    ["estimate", "--model", "{m}", "--cpu", "spr", "--json"],
    ["estimate", "--model", "{m}", "--cpu", "zen4-2vcpu", "--phase", "decode", "--context", "8000", "--brief"],
    ["models", "show", "{m}"],
])


@st.composite
def hostile_config(draw) -> str:
    cfg = json.loads(draw(st.sampled_from(CONFIGS)).read_text())
    for _ in range(draw(st.integers(1, 3))):
        cfg[draw(st.sampled_from(KEYS))] = draw(HOSTILE)
    return json.dumps(cfg)  # NaN and Infinity as JSON's extension: Python's json reads them


@given(text=hostile_config(), command=COMMANDS)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
def test_generated_configs_end_cleanly(tmp_path_factory, text, command):
    folder = tmp_path_factory.mktemp("cfg")
    (folder / "m").mkdir()
    (folder / "m" / "config.json").write_text(text)
    proc = run(*[a.replace("{m}", "m") for a in command], cwd=folder)
    assert_clean(proc, text[:400])


GGUF_KEYS = ["llama.block_count", "llama.embedding_length", "llama.feed_forward_length", "llama.context_length",
             "llama.attention.head_count", "llama.attention.head_count_kv", "llama.attention.key_length",
             "llama.expert_count", "llama.expert_used_count", "llama.expert_feed_forward_length",
             "general.alignment", "general.name", "general.architecture"]
GGUF_VALUES = st.one_of(
    st.sampled_from(["4096", "", "llama", "x" * 5000, True, False, 0, 1, 3, 7, 2**32 - 1, 2**40, -1, -2**62, 1.5,
                     float("nan"), float("inf"), [4, 4], [4], [0, 0], [2**31 - 1, 1], ["a", "b"], [1.5, 2.5]]),
    st.integers(min_value=-2**62, max_value=2**62),
)


@given(metadata=st.dictionaries(st.sampled_from(GGUF_KEYS), GGUF_VALUES, min_size=1, max_size=3),
       tokens=st.sampled_from([0, 1, 300, 301]), command=COMMANDS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
def test_generated_gguf_headers_end_cleanly(tmp_path_factory, metadata, tokens, command):
    folder = tmp_path_factory.mktemp("gguf")
    try:
        write_gguf(folder / "m.gguf", metadata=metadata, tokens=tokens)
    except (TypeError, ValueError, OverflowError, struct.error):
        return  # a value the gguf writer itself cannot store (it is no file anyone has)
    proc = run(*[a.replace("{m}", "m.gguf") for a in command], cwd=folder)
    assert_clean(proc, repr(metadata))
