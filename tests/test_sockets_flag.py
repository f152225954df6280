"""``--sockets`` on every command that takes a CPU: a server of that many of the platform's sockets."""

from __future__ import annotations

import pytest

import roofline
from roofline.errors import UserError


def test_a_plan_on_one_socket_spreads_its_users_over_one_instance():
    """4 users on a two-socket Genoa are 2 per socket (one instance each); on one socket all 4 run on the one
    instance, and each step carries twice the sequences, so each user's TPOT grows and the server's tokens/s falls."""
    kw = dict(precision="q4_k_m", concurrency=[4], seq_len=512, output_len=128)
    one = roofline.plan("llama-3.1-8b", "genoa", sockets=1, **kw).cpus[0]
    two = roofline.plan("llama-3.1-8b", "genoa", **kw).cpus[0]
    assert (one.sockets, two.sockets) == (1, 2)
    assert (one.users[0].running, two.users[0].running) == (4, 2)
    assert one.users[0].tpot_s > two.users[0].tpot_s
    assert one.users[0].tokens_per_s_per_server < two.users[0].tokens_per_s_per_server


def test_more_sockets_than_the_platform_has_is_refused_naming_the_flag():
    with pytest.raises(UserError, match=r"--sockets 3: genoa has 2 socket\(s\); give 1 to 2"):
        roofline.plan("llama-3.1-8b", "genoa", precision="q4_k_m", concurrency=[1], sockets=3)


def test_sweep_and_check_take_sockets():
    """A sweep's DRAM-bound decode step on one socket takes twice the two sockets' (half the bandwidth for the same
    weights, one instance per socket); a typed tokens rate is priced on the sockets it names."""
    rate = {s: float(roofline.sweep("llama-3.1-8b", "genoa", precision="bf16", phase="decode", batch=[1], sockets=s,
                                    instance_cores=96).to_numpy()["throughput_per_s"][0]) for s in (1, 2)}
    assert rate[2] == pytest.approx(2 * rate[1], rel=1e-9)
    one, two = (roofline.check(model="llama-3.1-8b", cpu="genoa", precision="q8_0", tokens_per_s=10.0, phase="decode",
                               sockets=s).rates[0] for s in (1, 2))
    assert (one.instances, two.instances) == (1, 2)
    assert two.ceiling == pytest.approx(2 * one.ceiling, rel=1e-9)


def test_a_typed_gguf_rate_is_priced_by_llama_cpp():
    """A GGUF type is priced by the GGUF engine's profile unless --stack names another."""
    r = roofline.check(model="llama-3.1-8b", cpu="genoa", precision="q8_0", tokens_per_s=10.0, phase="decode")
    assert r.rates[0].stack == "llama.cpp"
    assert roofline.check(model="llama-3.1-8b", cpu="genoa", precision="bf16", tokens_per_s=10.0,
                          phase="decode").rates[0].stack == "torch-inductor"


def test_the_sweep_command_line_takes_sockets(tmp_path):
    """The CLI's sweep builds its layout with --sockets as the API's does: half the sockets, half the rate."""
    import csv

    from clitools import run_cli

    rate = {}
    for s in (1, 2):
        out = tmp_path / f"s{s}.csv"
        done = run_cli("sweep", "--model", "llama-3.1-8b", "--cpu", "genoa", "--precision", "bf16", "--phase",
                       "decode", "--instance-cores", "96", "--sockets", str(s), "-o", str(out))
        assert done.returncode == 0, done.stderr
        (row,) = csv.DictReader(out.open())
        rate[s] = float(row["throughput_per_s"])
    assert rate[2] == pytest.approx(2 * rate[1], rel=1e-9)
