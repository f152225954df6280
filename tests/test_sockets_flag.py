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


def _linked(tmp_path, gb_per_s: float):
    """genoa's file with its sockets' link bandwidth given (the catalog's genoa gives none)."""
    from roofline.catalog import builtin_dir

    text = (builtin_dir("platforms") / "genoa.toml").read_text()
    line = f'socket_link_gb_per_s = {{ value = {gb_per_s}, kind = "assumed", source = "test" }}\n'
    path = tmp_path / "genoa-linked.toml"
    path.write_text(text.replace("cores_per_socket = {", line + "cores_per_socket = {", 1))
    return str(path)


@pytest.mark.parametrize("link", [64.0, 1000.0])
def test_one_process_over_both_sockets_streams_at_the_link_or_both_sockets_memory(tmp_path, link):
    """One process over a two-socket Genoa (--instance-cores 192), its pages spread over both sockets: each socket reads
    half the bytes W, half of that from the other's memory, so W / 4 crosses the link each way and a step's stream
    takes max(W / (2 B_socket), W / (4 L)): the DRAM bandwidth is min(2 B_socket, 4 L). Its one instance's latency is
    its step; the per-socket layout's instances each have their socket's memory."""
    from roofline.catalog import load_platform
    from roofline.model.layout import make_layout
    from roofline.model.resources import Resources

    path = _linked(tmp_path, link)
    platform = load_platform(path)
    span = Resources(platform, make_layout(platform, instance_cores=192))
    apart = Resources(platform, make_layout(platform, instance_cores=96))
    assert span.layout.spans_sockets and not apart.layout.spans_sockets
    assert float(span.layout.total_instances) == 1.0 and float(span.layout.active_cores) == 96.0
    assert float(span.b_dram) == pytest.approx(min(float(apart.b_dram), 4 * link * 1e9))
    r = roofline.estimate("llama-3.1-8b", path, precision="q4_k_m", phase="decode", instance_cores=192)
    lay = r.platform.layout
    assert lay.spans_sockets and lay.cores_per_instance == 192 and lay.instances_per_socket == 0
    used = {i.what: i.value for i in r.inputs}
    assert used["socket_link_gb_per_s"] == f"{link:g}" and used["core_latency_2s.znver4"] == "184.6"
    # its barrier rounds (roofline.calc.barriers) run at the two-socket line transfer, one socket's at the one-socket one
    assert span.line_transfer_s == pytest.approx(184.6e-9) and apart.line_transfer_s == pytest.approx(87e-9)


def test_one_process_over_both_sockets_needs_the_link_and_names_what_it_may_be(tmp_path):
    with pytest.raises(UserError, match=r"genoa: socket_link_gb_per_s is not given.*--instance-cores 96\)$"):
        roofline.estimate("llama-3.1-8b", "genoa", precision="q4_k_m", phase="decode", instance_cores=192)
    with pytest.raises(UserError, match=r"--instance-cores 100: an instance has 1 to 96 cores .*, or 192: one process "
                                        r"over all 2 sockets"):
        roofline.estimate("llama-3.1-8b", "genoa", precision="q4_k_m", phase="decode", instance_cores=100)
    with pytest.raises(UserError, match=r"--instance-cores 192: an instance has 1 to 96 cores"):
        roofline.estimate("llama-3.1-8b", "genoa", precision="q4_k_m", phase="decode", instance_cores=192, sockets=1)
