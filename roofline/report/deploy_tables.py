"""``roofline plan --commands`` as text: per CPU, the shell lines that start its best layout's processes on one
server and the benchmarks that check it (each line whole, never wrapped: it is meant to be pasted)."""

from __future__ import annotations

import shlex

from rich.console import Group, RenderableType
from rich.text import Text

from roofline.results.plan import CpuPlan, PlanResult

#: what each engine's check prints, and how roofline reads it back
CHECK_READ = {"llama.cpp": "its table: roofline check --from FILE", "vllm": "its --save-result JSON: roofline check "
              "--from FILE", "openvino": "its report: roofline check --from FILE"}


#: a command's lines at most this wide (then continued with a backslash): whole in any terminal of 80 columns
WIDTH = 78


def continued(command: str, width: int = WIDTH) -> str:
    """``command`` over lines of at most ``width`` characters where its words allow, each but the last ending in
    `` \\`` and the next indented: the shell reads it back as the one line."""
    words, units = [shlex.quote(x) for x in shlex.split(command)], list[str]()
    for w in words:  # a flag and its value stay on one line
        if units and units[-1].startswith("-") and " " not in units[-1] and not w.startswith("-"):
            units[-1] += " " + w
        else:
            units.append(w)
    lines, cur = [], ""
    for w in units:
        if cur and len(cur) + 1 + len(w) + 2 > width:
            lines.append(cur + " \\")
            cur = "    " + w
        else:
            cur = f"{cur} {w}" if cur else w
    return "\n".join(lines + [cur])


def _line(command: str) -> Text:
    return Text(continued(command), no_wrap=True, overflow="ignore")


def _cpu(c: CpuPlan, common: set[str]) -> list[RenderableType]:
    d = c.deploy
    if d is None:
        return [Text(f"{c.cpu}: no layout serves, nothing to deploy", style="bold")]
    out: list[RenderableType] = [Text(
        f"{c.cpu}: {c.layout_label(d.instances_per_socket, d.instance_cores)} on {d.engine}, "
        f"{len(d.processes)} process{'es' if len(d.processes) > 1 else ''} per server", style="bold")]
    out += [_line(p.command) for p in d.processes]
    checks = [p.check for p in d.processes if p.check]
    if checks:
        out.append(Text(f"check, all at once ({CHECK_READ.get(d.engine, 'its output')}):"))
        out += [_line(x) for x in checks]
    own = [a for a in d.assumptions if a not in common]
    if own:
        out.append(Text("\n".join(f"- {a}" for a in own)))
    return out


def render_commands(r: PlanResult) -> RenderableType | None:
    """The commands section, or None when the plan was not asked for them."""
    if not r.commands:
        return None
    parts: list[RenderableType] = [Text("Commands: each CPU's best layout on one server", style="bold")]
    deployed = [c.deploy.assumptions for c in r.cpus if c.deploy is not None]
    common = set.intersection(*map(set, deployed)) if deployed else set()
    for c in r.cpus:
        parts += _cpu(c, common)
    if common:
        parts.append(Text("\n".join(f"- {a}" for a in deployed[0] if a in common)))
    return Group(*parts)
