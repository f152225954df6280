"""``roofline plan``: requests per second per server under an SLO, servers needed and cost, per CPU."""

from __future__ import annotations

import argparse

from roofline import arguments as A
from roofline.cli import flags
from roofline.cli.emit import emit_with_chart

DESCRIPTION = (
    "Capacity planning: on each socket N instances of C cores (C = 1, 2, 4, ... up to the socket), weights shared per "
    "socket. Per layout one instance's service time of every batch from the realistic model (the ceiling beside it), "
    "then a simulation of the scenario: offline (the most throughput per server, batching free up to "
    "--max-batch-tokens) or server (Poisson arrivals, dynamic batching; the highest rate whose p99 latency meets "
    "--p99-ms). Decoders are served with continuous batching (TTFT, TPOT, the KV cache capping the running batch). "
    "The best layout per CPU, the servers a load needs, the cost, and the latency-vs-load curve. See "
    "docs/capacity-planning.md.")
EXAMPLES = ["roofline plan --model bert-large --cpu spr,gnr --target-rps 5000",
            "roofline plan --model bert-large --cpu spr,gnr --p99-ms 100 --brief \\",
            "    --target-rps 20000",
            "roofline plan --model bert-base --cpu icx --scenario offline --seq-len-mean 96",
            "roofline plan --model llama-3.2-1b --cpu gnr --precision int8-weight-only \\",
            "    --prompt-len 512 --output-len 128 --ttft-ms 2000 --tpot-ms 100"]


def parser(name: str) -> argparse.ArgumentParser:
    p = flags.command_parser(name, DESCRIPTION, EXAMPLES)
    flags.add(p, A.PLAN)
    p.add_argument("--plot", metavar="FILE", help="p99 against offered load for each CPU's best layout, with the SLO "
                   "line (.svg or .png; the plot extra)")
    p.add_argument("--best-only", action="store_true", help="the summary table, not every layout's")
    flags.add_html(p)
    flags.add_outputs(p)
    return p


def run(args: argparse.Namespace) -> int:
    from roofline.api import plan

    result = plan(**flags.values(A.PLAN, args))

    def render():
        from roofline.report.plan_tables import render_plan

        out = render_plan(result, all_layouts=not args.best_only, brief=args.brief)
        if not args.brief:
            return out
        from rich.console import Group
        from rich.text import Text

        from roofline.report.deploy_tables import render_commands

        commands = render_commands(result)  # asked for: shown under the headline too
        return out if commands is None else Group(out, Text(""), commands)

    def draw(result, path):
        from roofline.report.plan_chart import plot_plan

        plot_plan(result, path)

    def page(result, command):
        from roofline.report.html import plan_page

        return plan_page(result, command)

    return emit_with_chart(result, args, render, draw, page)
