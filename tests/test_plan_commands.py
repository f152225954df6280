"""``roofline plan --commands``: each CPU's best layout as pinned processes, with the engine's flags matching the plan
(:mod:`roofline.capacity.deploy`)."""

from __future__ import annotations

import shlex
import shutil
import subprocess

import pytest
from clitools import run_cli

import roofline
from roofline.capacity.deploy import Engine, engine_for
from roofline.catalog import load_platform
from roofline.errors import UserError
from roofline.report.deploy_tables import continued


def _flag(words: list[str], flag: str) -> str:
    """The value after ``flag`` (``--x=v`` too)."""
    for i, w in enumerate(words):
        if w == flag:
            return words[i + 1]
        if w.startswith(flag + "="):
            return w.split("=", 1)[1]
    raise AssertionError(f"{flag} not in {words}")


def _span(text: str) -> list[int]:
    """numactl's and vLLM's core list (``a-b`` ranges and single ids, comma-separated) as ids."""
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def _env(words: list[str]) -> dict[str, str]:
    env = {}
    for w in words:
        if "=" not in w or w.startswith("-"):
            break
        k, v = w.split("=", 1)
        env[k] = v
    return env


def _partition(c, physical: int, cores_of) -> None:
    """The processes' core lists partition the cores the layout uses on each socket: disjoint, within the socket,
    on the socket's node."""
    d = c.deploy
    used = d.instance_cores * d.instances_per_socket
    for s in range(c.sockets):
        mine = [p for p in d.processes if p.socket == s]
        ids = [i for p in mine for i in cores_of(p)]
        assert len(ids) == len(set(ids)) == used  # no overlap, every used core once
        assert set(ids) <= set(range(s * physical, (s + 1) * physical))  # within the socket's cores
        assert all(p.numa_node == s for p in mine)


def _numactl_cores(p) -> list[int]:
    words = shlex.split(p.command)
    assert _flag(words, "--membind") == str(p.numa_node)
    ids = _span(_flag(words, "--physcpubind"))
    assert ids == p.cores
    return ids


def test_llama_cpp_commands_partition_the_sockets_and_match_the_plan():
    r = roofline.plan("llama-3.2-1b", "spr", precision="q4_0", seq_len=512, output_len=128, instance_cores=14,
                      max_sequences=8, commands=True)
    c = r.cpus[0]
    d, physical = c.deploy, int(load_platform("spr").cores_per_socket.value)
    assert d.engine == "llama.cpp" and r.commands
    assert (d.instance_cores, d.instances_per_socket) == (c.best.instance_cores, c.best.instances_per_socket) == (14, 4)
    assert len(d.processes) == c.best.instances_per_socket * c.sockets == 8
    _partition(c, physical, _numactl_cores)
    slots = c.best.max_concurrent_sequences
    assert slots == 8  # --max-sequences caps it below the KV cache
    ports = set()
    for p in d.processes:
        words = shlex.split(p.command)
        assert words[words.index("numactl") + 3] == "llama-server"
        assert _flag(words, "-t") == _flag(words, "-tb") == str(c.best.instance_cores)
        assert _flag(words, "--parallel") == str(slots)
        assert _flag(words, "-c") == str(slots * (512 + 128))
        ports.add(_flag(words, "--port"))
        bench = shlex.split(p.check)
        assert "llama-batched-bench" in bench and _span(_flag(bench, "--physcpubind")) == p.cores
        assert (_flag(bench, "-npp"), _flag(bench, "-ntg"), _flag(bench, "-npl")) == ("512", "128", str(slots))
        assert _flag(bench, "-t") == _flag(bench, "-tb") == "14"
    assert len(ports) == len(d.processes)


def test_llama_cpp_concurrency_slots_are_the_users_per_instance():
    r = roofline.plan("llama-3.2-1b", "spr", precision="q4_0", seq_len=256, output_len=64, instance_cores=28,
                      concurrency=[12], sockets=1, commands=True)
    c = r.cpus[0]
    (point,) = c.users
    d = c.deploy
    assert len(d.processes) == point.instances_per_socket == 2
    assert point.running == 6  # 12 users over 2 instances
    for p in d.processes:
        assert _flag(shlex.split(p.command), "--parallel") == "6"


def test_torch_encoder_commands_partition_the_sockets_and_pin_the_threads():
    r = roofline.plan("bert-base", "spr", scenario="offline", seq_len=128, instance_cores=8, commands=True)
    c = r.cpus[0]
    d = c.deploy
    assert d.engine == "torch"
    assert len(d.processes) == c.best.instances_per_socket * c.sockets == 7 * 2
    _partition(c, int(load_platform("spr").cores_per_socket.value), _numactl_cores)
    for p in d.processes:
        words = shlex.split(p.command)
        assert _env(words) == {"OMP_NUM_THREADS": "8"} and p.check is None and p.sequences is None


def test_vllm_commands_bind_threads_and_cap_sequences():
    r = roofline.plan("llama-3.2-1b", "spr", precision="int8-weight-only", seq_len=512, output_len=128,
                      instance_cores=28, max_sequences=16, commands=True)
    c = r.cpus[0]
    d = c.deploy
    assert d.engine == "vllm" and len(d.processes) == 2 * 2

    def bound(p):
        return _span(_env(shlex.split(p.command))["VLLM_CPU_OMP_THREADS_BIND"])

    _partition(c, int(load_platform("spr").cores_per_socket.value), bound)
    kv = c.memory.kv_bytes_per_token * 16 * (512 + 128) / 2**30
    for p in d.processes:
        words = shlex.split(p.command)
        assert int(_env(words)["VLLM_CPU_KVCACHE_SPACE"]) == max(1, -(-kv // 1))
        assert _flag(words, "--max-num-seqs") == "16" and _flag(words, "--tensor-parallel-size") == "1"
        assert _flag(words, "--membind") == str(p.numa_node)
        bench = shlex.split(p.check)
        assert _flag(bench, "--port") == _flag(words, "--port")
        assert (_flag(bench, "--random-input-len"), _flag(bench, "--random-output-len"),
                _flag(bench, "--max-concurrency")) == ("512", "128", "16")


def test_openvino_runs_a_sockets_instances_as_streams():
    r = roofline.plan("bert-base", "spr", scenario="offline", seq_len=128, instance_cores=8, stack="openvino",
                      commands=True)
    c = r.cpus[0]
    d = c.deploy
    assert d.engine == "openvino" and len(d.processes) == c.sockets
    _partition(c, int(load_platform("spr").cores_per_socket.value), _numactl_cores)
    for p in d.processes:
        bench = shlex.split(p.check)
        assert _flag(bench, "-nstreams") == str(c.best.instances_per_socket)
        assert _flag(bench, "-nthreads") == str(c.best.instances_per_socket * c.best.instance_cores)


@pytest.mark.parametrize("stack, precision, decoder, gguf, want", [
    ("llama.cpp", "q4_0", True, True, Engine.LLAMA_CPP), (None, "q8_0", True, True, Engine.LLAMA_CPP),
    ("openvino", "int8-static", False, False, Engine.OPENVINO), ("torch-inductor", "bf16", True, False, Engine.VLLM),
    ("torch-inductor", "int8-dynamic", True, False, Engine.VLLM), ("torch-inductor", "int8-static", False, False,
                                                                    Engine.TORCH),
    ("torch-inductor", "int4-weight-only", True, False, Engine.TORCH), ("intel-mlperf", "int8-full", False, False,
                                                                        Engine.TORCH)])
def test_engine_follows_the_stack_that_priced_the_plan(stack, precision, decoder, gguf, want):
    assert engine_for(stack, precision, decoder, gguf) is want


def test_engine_without_commands_is_refused():
    with pytest.raises(UserError, match="--engine"):
        roofline.plan("bert-base", "spr", engine="torch")


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_printed_commands_are_the_same_words_to_the_shell():
    """The text output's backslash-continued lines, read by bash, are the JSON's one-line commands word for word."""
    r = roofline.plan("bert-base", "spr", scenario="offline", seq_len=128, instance_cores=8, stack="openvino",
                      commands=True)
    for p in r.cpus[0].deploy.processes:
        for line in (p.command, p.check):
            text = continued(line, width=40)
            assert len(text.splitlines()) > 2
            out = subprocess.run(["bash", "-c", f"for w in {text}; do printf '%s\\0' \"$w\"; done"],
                                 capture_output=True, text=True, check=True).stdout
            assert out.split("\0")[:-1] == shlex.split(line)


def test_cli_prints_the_commands_and_the_json_holds_them():
    proc = run_cli("plan", "--model", "bert-base", "--cpu", "spr", "--scenario", "offline", "--seq-len", "128",
                   "--instance-cores", "28", "--commands", "--brief", env={"COLUMNS": "100"})
    assert proc.returncode == 0, proc.stderr
    assert "Commands:" in proc.stdout and "OMP_NUM_THREADS=28 numactl --physcpubind=28-55 --membind=0" in proc.stdout
    proc = run_cli("plan", "--model", "bert-base", "--cpu", "spr", "--scenario", "offline", "--seq-len", "128",
                   "--instance-cores", "28", "--commands", "--json", "-")
    import json

    data = json.loads(proc.stdout)
    assert data["commands"] is True
    assert [p["cores"][0] for p in data["cpus"][0]["deploy"]["processes"]] == [0, 28, 56, 84]


def test_the_html_page_shows_each_command_once():
    from html import escape

    from roofline.report.html import plan_page

    r = roofline.plan("bert-base", "spr", scenario="offline", seq_len=128, instance_cores=28, commands=True)
    page = plan_page(r, "roofline plan --commands")
    assert page.count("Commands: each CPU") == 1
    for p in r.cpus[0].deploy.processes:  # the first line of each, as the text prints it
        assert page.count(escape(continued(p.command).splitlines()[0])) == 1
    assert "Commands" not in plan_page(roofline.plan("bert-base", "spr", scenario="offline", seq_len=128,
                                                     instance_cores=28), "roofline plan")


def test_cores_of_a_partial_socket_are_numbered_from_the_sockets_first_core():
    """--cores 20 on a 56-core socket: socket 1's instances start at core 56, not at 20."""
    r = roofline.plan("bert-base", "spr", scenario="offline", seq_len=128, cores=20, instance_cores=10, commands=True)
    d = r.cpus[0].deploy
    assert [p.cores[0] for p in d.processes] == [0, 10, 56, 66]
    _partition(r.cpus[0], 56, _numactl_cores)


def test_a_cpu_that_serves_nothing_gets_no_commands_and_says_so():
    r = roofline.plan("llama-3.2-1b", "spr", precision="q4_0", seq_len=512, output_len=128, memory_gb=0.5,
                      instance_cores=28, commands=True)
    assert not r.cpus[0].meets and r.cpus[0].deploy is None and r.commands
    from rich.console import Console

    from roofline.report.deploy_tables import render_commands

    console = Console(width=100, record=True)
    console.print(render_commands(r))
    assert "spr: no layout serves, nothing to deploy" in console.export_text()
