"""Rich rendering of a capacity plan."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from roofline.report.energy_lines import plan_joules, plan_note, shows_energy
from roofline.report.fmt import ms, sig
from roofline.report.style import document, grid, section, table
from roofline.results.plan import CpuPlan, PlanLayout, PlanResult, batch_limits


def _table(title: str, cols: list[str], left: tuple[str, ...]) -> Group:
    """A titled section whose table the caller fills (``.renderables[1]``); a header of two words takes two
    lines (``ceil`` over ``req/s``) so that the tables fit 80 columns."""
    return section(title, table([c.replace(" ", "\n", 1) if c not in left else c for c in cols], left=left))


def _rows(g: Group) -> Table:
    return g.renderables[1]


def _ms(v: float | None) -> str:
    return "-" if v is None else ms(v)


def _n(v: float | None) -> str:
    return "-" if v is None else sig(v)


def _meets(x: PlanLayout) -> str:
    return "-" if x.meets_latency is None else ("yes" if x.meets_latency else "no")


def _headline(r: PlanResult) -> Text:
    decode = r.phase == "decode"
    lengths = r.lengths.description + (" prompts" if decode else " per request")
    if decode:
        batching = (f"continuous batching, prefill steps of up to {r.max_batch_tokens:,} tokens, {r.output_len} "
                    "output tokens")
        each = "" if r.scenario == "concurrency" else " p99"
        slo = ", ".join(f"{k}{each} {v * 1e3:g} ms" for k, v in (("TTFT", r.ttft_target_s), ("TPOT", r.tpot_target_s))
                        if v is not None)
    else:
        batching = (f"batches of {batch_limits(r.max_batch_tokens, r.batch_watermark_tokens)}, max wait "
                    f"{(r.max_wait_s or 0) * 1e3:g} ms")
        slo = f"p99 {r.latency_target_s * 1e3:g} ms" if r.latency_target_s is not None else ""
    load = (f"{sig(r.target_rps)} req/s to serve" if r.target_rps else
            "users each with a request in flight" if r.scenario == "concurrency" else "no load target")
    parts = [lengths, batching] + ([slo] if slo else []) + [load]
    if r.utilization < 1:
        parts.append(f"servers at {r.utilization:.0%} of the rate")
    return Text.assemble((f"plan {r.model} in {r.precision}, {r.scenario} scenario", "bold"), ": " + "; ".join(parts))


def _encoder_layouts(r: PlanResult, c: CpuPlan) -> Group:
    server = r.scenario == "server"
    cols = ["cores", "inst", "alone ms", "ceil ms", "req/s", "ceil req/s"]
    cols += ["offline", "p99 ms", "batch", "meets"] if server else ["batch"]
    cols += ["bound"]
    sec = _table(f"{c.cpu}: {c.description}; weights {'resident in' if c.weights_llc_resident else 'beyond'} the LLC. "
               "Per layout (cores per instance, instances per socket): a lone request's service time, realistic "
               "and at the ceiling; requests/s per server" + (", offline capacity, p99 at that rate, requests per "
                                                             "batch" if server else ", requests per batch"),
               cols, left=("bound", "meets"))
    t = _rows(sec)
    for x in c.layouts:
        row = [str(x.instance_cores), str(x.instances_per_socket), ms(x.service_time_s), ms(x.service_time_ceiling_s),
               sig(x.rps_per_server), sig(x.rps_per_server_ceiling)]
        row += ([sig(x.offline_rps_per_server), _ms(x.p99_s), _n(x.batch_requests), _meets(x)] if server
                else [_n(x.batch_requests)])
        t.add_row(*row, x.bound, style="bold" if x == c.best else "")
    return sec


def _decoder_layouts(r: PlanResult, c: CpuPlan) -> Group:
    server = r.scenario == "server"
    cols = ["cores", "inst", "seqs", "TTFT ms", "TPOT ms", "req/s", "tok/s", "ceil tok/s"]
    cols += ["TTFT p99", "TPOT p99", "meets"] if server else ["batch"]
    sec = _table(f"{c.cpu}: {c.description}. Per layout (cores per instance, instances per socket): running sequences "
               "per instance, a lone request's TTFT and TPOT, requests and output tokens/s per server"
               + (", p99s at that rate (ms)" if server else ", mean running batch"), cols, left=("meets",))
    t = _rows(sec)
    for x in c.layouts:
        row = [str(x.instance_cores), str(x.instances_per_socket), str(x.max_concurrent_sequences),
               _ms(x.prefill_time_s), _ms(x.decode_step_s), sig(x.rps_per_server), _n(x.tokens_per_s_per_server),
               _n(x.tokens_per_s_per_server_ceiling)]
        row += [_ms(x.ttft_p99_s), _ms(x.tpot_p99_s), _meets(x)] if server else [_n(x.batch_requests)]
        t.add_row(*row, style="bold" if x == c.best else "")
    return sec


def _summary(r: PlanResult) -> Group:
    server, decode = r.scenario == "server", r.phase == "decode"
    cols = ["cpu", "layout"]
    cols += ["seqs", "tok/s", "req/s", "ceil tok/s"] if decode else ["req/s", "ceil req/s"]
    if server:
        cols += ["TTFT p99", "TPOT p99"] if decode else ["p99 ms"]
    cols += ["servers", "$/M tok" if decode else "$/M req"]
    energy = shows_energy(r)
    cols += ["J/tok" if decode else "J/req"] if energy else []
    title = "Best layout per CPU: instances x cores per socket x sockets, rates per server"
    sec = _table(title + (", p99 in ms" if server else ""), cols, left=("cpu", "layout"))
    t = _rows(sec)
    for c in r.cpus:
        b = c.best
        if not c.meets:
            fits = any(x.max_concurrent_sequences for x in c.layouts) or not decode
            what = ("none meets it; fastest " + c.layout_label(b.instances_per_socket, b.instance_cores) if fits
                    else "no layout fits the KV cache")
            if c.memory is not None and c.memory.weight_bytes > c.memory.dram_bytes_per_socket:
                what = "the weights do not fit its DRAM"
            row = [c.cpu, what] + ["-"] * (len(cols) - 2)
            if server and not decode:  # the fastest layout's lone request: the p99 no load gets under
                row[cols.index("p99 ms")] = f"> {ms(b.bare_p99_s)}" if b.bare_p99_s else "-"
            if c.ceiling is not None and c.ceiling.rps_per_server > 0:
                key = "ceil tok/s" if decode else "ceil req/s"
                row[cols.index(key)] = _n(c.ceiling.tokens_per_s_per_server if decode else c.ceiling.rps_per_server)
            t.add_row(*row)
            continue
        ceil = None if c.ceiling is None else (
            c.ceiling.tokens_per_s_per_server if decode else c.ceiling.rps_per_server)
        row = [c.cpu, c.layout_label(b.instances_per_socket, b.instance_cores)]
        row += ([str(b.max_concurrent_sequences), _n(b.tokens_per_s_per_server), sig(b.rps_per_server), _n(ceil)]
                if decode else [sig(b.rps_per_server), _n(ceil)])
        if server:
            row += [_ms(b.ttft_p99_s), _ms(b.tpot_p99_s)] if decode else [_ms(b.p99_s)]
        cost = c.cost_per_million_tokens if decode else c.cost_per_million_requests
        row += ["-" if c.servers_needed is None else f"{c.servers_needed:,}", "-" if cost is None else f"{cost:.3g}"]
        row += [plan_joules(c, decode)] if energy else []
        t.add_row(*row)
    return sec


def _notes(r: PlanResult) -> list[str]:
    out = []
    for c in r.cpus:
        out.append(f"{c.cpu}: {c.best_reason}")
        if c.ceiling is not None and c.meets:
            rate = (f"{sig(c.ceiling.tokens_per_s_per_server)} tokens/s" if r.phase == "decode"
                    and c.ceiling.tokens_per_s_per_server is not None else f"{sig(c.ceiling.rps_per_server)} req/s")
            out.append(f"{c.cpu}: at the ceiling the best is {c.ceiling.instances_per_socket} x "
                       f"{c.ceiling.instance_cores} cores"
                       + (f" split over {c.tensor_parallel} ranks" if c.tensor_parallel > 1 else "")
                       + f", {rate} per server")
        band = c.best.rps_per_server_band
        cpu_band = c.service_band if c.service_band is not None else r.service_band
        if band is not None and c.meets and cpu_band is not None:
            servers = c.servers_needed_band or [None, None]
            k = 1 + cpu_band
            if band[0] > 0:
                fleet = ("" if not servers[1] else f", {servers[0]:,} servers" if servers[0] == servers[1] else
                         f", {servers[0]:,} to {servers[1]:,} servers")
                span = f"serves {sig(band[0])} to {sig(band[1])} req/s per server{fleet}"
            else:
                fleet = f" ({servers[0]:,} servers)" if servers[0] else ""
                span = f"meets the p99 bounds at no rate with the longer ones, {sig(band[1])} req/s with the shorter{fleet}"
            steep = band[0] > 0 and band[1] / band[0] > 1.25 * k * k  # the rate moves much more than the service time
            whose = (f", its figures on {c.path_class}" if r.service_band is not None and cpu_band > r.service_band
                     else "")
            out.append(f"{c.cpu}: with service times {cpu_band:.0%} longer or shorter (the {r.stack} profile's "
                       f"median error on unseen CPUs{whose}: about half are further off) the best layout {span}"
                       + (": near a p99 bound the rate moves much further than the service time" if steep else ""))
        if c.memory is not None:
            m = c.memory
            share = c.sockets if c.tensor_parallel > 1 else 1  # a split holds its share of each on every socket
            whose = f" (each socket's share of the {c.tensor_parallel}-rank split)" if share > 1 else ""
            out.append(f"{c.cpu}: KV cache: {m.dram_bytes_per_socket / 1e9:.4g} GB DRAM per socket less "
                       f"{m.weight_bytes / share / 1e9:.3g} GB of weights, {m.kv_bytes_per_token / share / 1e3:.4g} kB "
                       f"per token{whose}, {m.tokens_per_sequence:,.0f} tokens per sequence")
        out += [n for n in c.notes if n != c.best_reason]
        out += [plan_note(c, r.phase == "decode")] if c.energy is not None and shows_energy(r) else []
    s = r.simulation
    if r.scenario == "server" or any(c.curve for c in r.cpus):
        out.append(f"simulation: {s.replications} replications of at least {s.requests_per_replication:,} requests, "
                   f"seed {s.seed}; p99 intervals are 95% (--json)")
    return out + r.notes


def _users_headline(r: PlanResult) -> list[RenderableType]:
    """A concurrency plan: per CPU and user count, the best layout's TTFT, TPOT, a user's tokens/s and the server's;
    with an SLO, the most users one server holds within it."""
    slo = ", ".join(f"{k} {v * 1e3:g} ms" for k, v in (("TTFT", r.ttft_target_s), ("TPOT", r.tpot_target_s))
                    if v is not None)
    g = grid(["cpu", "users", "layout", "TTFT ms", "TPOT ms", "tok/s/user", "tok/s", "+/-"] + (["SLO"] if slo else []),
             left=("cpu", "layout", "SLO"))
    for c in r.cpus:
        points = list(c.users) + ([c.max_users] if c.max_users is not None and c.max_users not in c.users else [])
        for x in points:
            pm = f"{max(x.tpot_s_band) / x.tpot_s - 1:.0%}" if x.tpot_s_band else "-"
            most = c.max_users is not None and x.users == c.max_users.users
            g.add_row(c.cpu, f"{x.users:,}" + ("*" if most else ""),
                      c.layout_label(x.instances_per_socket, x.instance_cores), ms(x.ttft_s), ms(x.tpot_s),
                      sig(x.user_tokens_per_s), sig(x.tokens_per_s_per_server), pm,
                      *([("meets" if x.meets else "misses")] if slo else []))
        if not points:
            g.add_row(c.cpu, "-", "no layout fits the KV cache", *["-"] * (5 + bool(slo)))
    most = [f"{c.cpu}: {c.max_users.users:,} users per server" if c.max_users is not None else
            f"{c.cpu}: not one user" for c in r.cpus] if slo else []
    text = (f"users: clients per server, each with a request in flight ({r.lengths.description} prompts, {r.output_len} "
            f"output tokens; * the most within the SLO); layout: instances x cores per socket x sockets; TTFT and TPOT "
            f"as each user sees them, from " + (f"the {r.stack} profile's realistic step times" if r.stack else
                                                "the ceiling's step times") + "; +/-: its median error on "
            "unseen CPUs (--json: TTFT and TPOT at both ends)")
    out: list[RenderableType] = [_headline(r), g, Text(text)]
    if most:
        out.append(Text(f"within {slo}: " + "; ".join(most), style="bold"))
    return out


def headline(r: PlanResult) -> list[RenderableType]:
    """What the plan says, then per CPU its best layout, its rate per server, the servers and the cost."""
    if r.scenario == "concurrency":
        return _users_headline(r)
    decode = r.phase == "decode"
    g = grid(["cpu", "layout", "tok/s" if decode else "req/s", "servers", "$/M tok" if decode else "$/M req"],
             left=("cpu", "layout"))
    for c in r.cpus:
        b = c.best
        if not c.meets:
            weights_too_big = c.memory is not None and c.memory.weight_bytes > c.memory.dram_bytes_per_socket
            no_kv = decode and not any(x.max_concurrent_sequences for x in c.layouts)
            g.add_row(c.cpu, "the weights do not fit its DRAM" if weights_too_big else
                      "no layout fits the KV cache" if no_kv else "none meets the SLO", "-", "-", "-")
            continue
        cost = c.cost_per_million_tokens if decode else c.cost_per_million_requests
        g.add_row(c.cpu, c.layout_label(b.instances_per_socket, b.instance_cores),
                  _n(b.tokens_per_s_per_server) if decode else sig(b.rps_per_server),
                  "-" if c.servers_needed is None else f"{c.servers_needed:,}", "-" if cost is None else f"{cost:.3g}")
    rested = (f"the calibration {r.calibration}'s realistic service times" if r.calibration else
              f"the {r.stack} stack profile's realistic service times" if r.stack else
              "ceiling service times plus the priced terms")
    return [_headline(r), g, Text(f"layout: instances x cores per socket x sockets; rates per server, from {rested}")]


def render_plan(r: PlanResult, all_layouts: bool = True, brief: bool = False) -> RenderableType:
    sections: list[RenderableType] = [_summary(r)]
    if all_layouts:
        sections += [_decoder_layouts(r, c) if r.phase == "decode" else _encoder_layouts(r, c) for c in r.cpus]
    sections.append(section("Notes", None, _notes(r)))
    from roofline.report.deploy_tables import render_commands

    commands = render_commands(r)
    return document(headline(r), sections + ([commands] if commands is not None else []), brief=brief)
