"""Bad input: one line naming the file, the field and the reason; exit code 2; never a traceback."""

from __future__ import annotations

import re

import pytest
from clitools import run_cli

from roofline.catalog import builtin_dir, load_model, load_platform
from roofline.errors import SpecError

ICX = (builtin_dir("platforms") / "icx.toml").read_text()


def broken(tmp_path, old: str, new: str, name: str = "bad.toml") -> str:
    """Write icx.toml with every match of the regular expression ``old`` replaced by ``new``."""
    text, n = re.subn(old, new, ICX, flags=re.MULTILINE)
    assert n, old
    path = tmp_path / name
    path.write_text(text)
    return str(path)


CASES = [
    # (regular expression, replacement, field named in the error, reason fragment)
    (r"value = 204\.8,", "value = 0,", "dram.theoretical_gb_per_s", "must be positive"),
    (r"value = 204\.8,", "value = -5,", "dram.theoretical_gb_per_s", "must be positive"),
    (r"^cores_per_socket = \{ value = 32,", "cores_per_socket = { value = 0,", "cores_per_socket", "must be positive"),
    (r"^cores_per_socket = \{ value = 32,", "cores_per_socket = { value = 31.5,", "cores_per_socket", "whole number"),
    (r'^dtype = "int8"', 'dtype = "fp32"', "compute", "no int8 path"),
    (r"^read_gb_per_s = .*$", 'read_gb_per_s = { value = 100, kind = "measured", source = "a test figure" }',
     "llc.read_gb_per_s", "below the DRAM"),
    (r"^avx512 = \{ value = 2\.6,", "avx512 = { value = 26,", "frequency_ghz.avx512", "not a CPU frequency"),
    (r'isa_class = "avx512"\nrequires = \["avx512f"\]', 'isa_class = "amx"\nrequires = ["avx512f"]',
     "compute.fp32-avx512.isa_class", "no frequency_ghz entry"),
    (r'ops_per_cycle = \{ value = 64, kind = "datasheet",', "ops_per_cycle = { value = 64,",
     "compute.fp32-avx512.ops_per_cycle", "needs kind"),
    (r"^domains_per_socket = 1", "domains_per_socket = 1\nbogus_field = 3", "llc.bogus_field", "unknown field"),
    (r'^name = "icx"', 'nam = "icx"', "name", "required field is missing"),
]


@pytest.mark.parametrize("old, new, field, reason", CASES)
def test_impossible_platform_files(tmp_path, old, new, field, reason):
    path = broken(tmp_path, old, new)
    with pytest.raises(SpecError) as info:
        load_platform(path)
    e = info.value
    assert e.path.endswith("bad.toml") and e.field == field and reason in e.reason, str(e)
    assert "\n" not in str(e)


def test_unparseable_toml(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text("name = [unclosed\n")
    with pytest.raises(SpecError, match="not valid TOML"):
        load_platform(str(path))


def test_bad_model_json(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "bert", "hidden_size": 1000, "num_attention_heads": 16}')
    with pytest.raises(SpecError) as info:
        load_model(str(path))
    assert "required field is missing" in str(info.value)
    path.write_text('{"model_type": "bert", "hidden_size": 1000, "num_attention_heads": 16, "intermediate_size": 4,'
                    ' "num_hidden_layers": 2, "vocab_size": 10, "max_position_embeddings": 8}')
    with pytest.raises(SpecError, match="not a multiple of num_attention_heads"):
        load_model(str(path))
    path.write_text('{"model_type": "whisper"}')
    with pytest.raises(SpecError, match="model_type"):
        load_model(str(path))
    path.write_text("[1, 2]")
    with pytest.raises(SpecError, match="JSON object"):
        load_model(str(path))


def _one_clean_line(proc) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_cli_unknown_cpu_and_model():
    line = _one_clean_line(run_cli("estimate", "--model", "bert-large", "--cpu", "no-such-cpu"))
    assert "unknown CPU 'no-such-cpu'" in line
    line = _one_clean_line(run_cli("estimate", "--model", "bert-lage", "--cpu", "icx"))
    assert "did you mean: bert-large" in line
    line = _one_clean_line(run_cli("estimate", "--model", "bert-large", "--cpu", "saphire-rapids"))
    assert "sapphire-rapids" in line


def test_cli_bad_spec_file_names_file_and_field(tmp_path):
    path = broken(tmp_path, r"value = 204\.8,", "value = -1,")
    line = _one_clean_line(run_cli("estimate", "--model", "bert-large", "--cpu", path))
    assert re.search(r"bad\.toml: dram\.theoretical_gb_per_s: must be positive", line), line


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--batch", "0"], "--batch"),
        (["--seq-len", "abc"], "--seq-len"),
        (["--seq-len", "1024"], "max_position_embeddings"),
        (["--f-gemm", "1.5"], "--f-gemm"),
        (["--gemm-speedup", "-2"], "--gemm-speedup"),
        (["--non-gemm-speedup", "nan"], "--non-gemm-speedup"),
        (["--precision", "int7"], "unknown precision 'int7'"),
        (["--sockets", "3"], "--sockets 3"),
        (["--cpu", "/no/such/file.toml"], "no such platform file"),
    ],
)
def test_cli_bad_flags(args, fragment):
    base = {"--model": "bert-large", "--cpu": "icx"}
    i = 0
    while i < len(args):
        base[args[i]] = args[i + 1]
        i += 2
    flat = [x for kv in base.items() for x in kv]
    line = _one_clean_line(run_cli("estimate", *flat))
    assert fragment in line, line


def test_non_positive_model_shape(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "bert", "hidden_size": 0, "num_attention_heads": 16, "intermediate_size": 4,'
                    ' "num_hidden_layers": 2, "vocab_size": 10, "max_position_embeddings": 8}')
    line = _one_clean_line(run_cli("estimate", "--model", str(path), "--cpu", "icx"))
    assert "config.json: hidden_size: must be a positive whole number" in line, line


def test_an_expert_bias_needs_experts():
    """A dense model that says its experts have a router bias is refused when it is read, not when it is priced."""
    import dataclasses

    dense = load_model("llama-3.2-1b")
    with pytest.raises(ValueError, match="expert_bias: only for a mixture of experts"):
        dataclasses.replace(dense, expert_bias=True)
