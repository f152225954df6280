"""The HTML report (``--html FILE`` on estimate, plan, check and accuracy): one self-contained page for people who
read rather than run. The answer first (the headline the command prints), then its figures in numbers, the chart
(hand-built SVG, :mod:`roofline.report.svg`: no matplotlib needed), the tables behind it (the terminal report's
own tables, as HTML tables that sort when a header is clicked), every input with its source, what was left out,
and the result's JSON (what ``--json`` writes) inside the page.

No network and no script from elsewhere: the style and the small script (tables that sort, a CSV button per
table that makes the file from its cells) are inline. The page reads on a phone and on A4 paper: tables scroll
sideways inside their own box (on paper their cells wrap), long words (URLs, paths) break, charts scale to the
width. The footer gives the date it was made and roofline's version. The page is text; the command writes it
through :mod:`roofline.files.writing`, as it writes every file.

Each figure of the answer carries ``data-json`` (its path in the JSON, a JSON list of keys and list indices)
and ``data-value`` (the JSON's value, as JSON writes it), so a test (or a script) can check the page against
the JSON.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from html import escape

from rich.console import Group
from rich.table import Table
from rich.text import Text

from roofline.report.fmt import ms, pct, ratio, sig
from roofline.version import __version__

CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;margin:0;background:#fafafa}
main{max-width:1180px;margin:0 auto;padding:18px 28px 40px}
h1{font-size:22px;margin:8px 0 2px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc}
h3{font-size:15px;margin:18px 0 6px}
.command{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px;color:#444;word-break:break-all}
.meta{color:#666;font-size:13px}
#answer{background:#fff;border:1px solid #bbb;border-left:5px solid #1f77b4;padding:10px 16px;margin-top:14px}
#answer p{margin:4px 0}#answer .lead{font-weight:600;font-size:16px}
table{border-collapse:collapse;margin:6px 0 4px;background:#fff;font-variant-numeric:tabular-nums}
th,td{padding:3px 9px;border-bottom:1px solid #e3e3e3;vertical-align:top}
th{background:#f0f0f0;text-align:left;font-weight:600}
td.num,th.num{text-align:right}
table.grid th,table.grid td{border:none;background:none;padding:1px 12px 1px 0}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th[aria-sort=ascending]::after{content:" \\25B2";font-size:10px}
table.sortable th[aria-sort=descending]::after{content:" \\25BC";font-size:10px}
p.note{color:#444;font-size:13px;margin:2px 0 10px;white-space:pre-line}
figure{margin:10px 0 18px;background:#fff;border:1px solid #ddd;padding:6px;display:inline-block}
figcaption{font-size:13px;color:#444;padding:4px 6px}
svg text{font:12px system-ui,sans-serif;fill:#222}svg text.title{font-weight:600;font-size:13px}
svg text.tick{font-size:11px;fill:#555}svg text.legend{font-size:11.5px}
footer{color:#777;font-size:12px;margin-top:30px}
.scroll{max-width:100%;overflow-x:auto}.scroll>table{margin-bottom:2px}
td.long{overflow-wrap:anywhere;min-width:12em}td.num{white-space:nowrap}
p,li,figcaption,summary,h1,h2,h3{overflow-wrap:anywhere}
figure{max-width:100%;box-sizing:border-box}figure svg{display:block;max-width:100%;height:auto}
button.csv{font:12px system-ui,sans-serif;margin:0 0 8px;padding:1px 8px;cursor:pointer}
nav#contents ol{margin:4px 0;padding-left:22px}
details{margin:4px 0 10px}details>summary{cursor:pointer}details>summary>h2,details>summary>h3{display:inline;margin:0;border:none}
@media (max-width:600px){
body{font-size:14px}main{padding:10px 10px 30px}h1{font-size:19px}h2{font-size:16px}
#answer{padding:8px 10px}th,td{padding:2px 6px}table.grid th,table.grid td{padding:1px 8px 1px 0}
figure{display:block;padding:2px;margin:8px 0}
}
@media print{
@page{size:A4;margin:12mm}
body{background:#fff;font-size:10.5px}main{max-width:none;padding:0}
h1{font-size:16px}h2{font-size:13.5px;margin:14px 0 6px;break-after:avoid}h3{font-size:11.5px;break-after:avoid}
#answer .lead{font-size:12px}.command{font-size:10px}p.note,figcaption,footer{font-size:9.5px}
.scroll{overflow:visible}table{font-size:9px}
th,td{padding:1px 3px;overflow-wrap:anywhere}td.long{min-width:0}td.num{white-space:normal}
figure{display:block;border:none;padding:0;break-inside:avoid}tr{break-inside:avoid}
button.csv{display:none}nav#contents{display:none}
}
"""

SORT_JS = """
(function () {
  function key(text) {
    var t = text.replace(/[,\\s]/g, "").replace(/(tok\\/s|\\/s|ms|x|%|MB|GB)$/, "");
    var n = parseFloat(t);
    return isNaN(n) || !/^[-+0-9.eE]+$/.test(t) ? null : n;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var head = table.tHead;
    if (!head || !table.tBodies.length) return;
    Array.prototype.forEach.call(head.rows[0].cells, function (th, col) {
      th.addEventListener("click", function () {
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        var down = th.getAttribute("aria-sort") === "ascending";
        Array.prototype.forEach.call(head.rows[0].cells, function (c) { c.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", down ? "descending" : "ascending");
        rows.sort(function (a, b) {
          var x = a.cells[col] ? a.cells[col].textContent : "", y = b.cells[col] ? b.cells[col].textContent : "";
          var kx = key(x), ky = key(y), r;
          if (kx !== null && ky !== null) r = kx - ky; else r = x.localeCompare(y);
          return down ? -r : r;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
})();
"""


CSV_JS = """
(function () {
  function text(cell) {
    var out = "";
    cell.childNodes.forEach(function (n) { out += n.nodeName === "BR" ? " " : n.textContent; });
    return out.replace(/\\s+/g, " ").trim();
  }
  function field(t) { return /[",\\r\\n]/.test(t) ? '"' + t.replace(/"/g, '""') + '"' : t; }
  function csv(table) {
    return Array.prototype.map.call(table.rows, function (row) {
      return Array.prototype.map.call(row.cells, function (c) { return field(text(c)); }).join(",");
    }).join("\\r\\n") + "\\r\\n";
  }
  var kind = document.querySelector("main").getAttribute("data-report") || "roofline", heading = "", seen = {};
  document.querySelectorAll("h2, h3, button.csv").forEach(function (el) {
    if (el.tagName !== "BUTTON") { heading = el.textContent; return; }
    var slug = (kind + "-" + heading.toLowerCase()).replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 60);
    seen[slug] = (seen[slug] || 0) + 1;
    var name = slug + (seen[slug] > 1 ? "-" + seen[slug] : "") + ".csv";
    var table = el.previousElementSibling.querySelector("table");
    el.title = "download this table as " + name;
    el.setAttribute("data-file", name);
    el.addEventListener("click", function () {
      var url = URL.createObjectURL(new Blob(["\\ufeff" + csv(table)], {type: "text/csv;charset=utf-8"}));
      var a = document.createElement("a");
      a.href = url; a.download = name; document.body.appendChild(a); a.click(); a.remove();
      setTimeout(function () { URL.revokeObjectURL(url); }, 0);
    });
  });
  window.roofline = window.roofline || {};
  window.roofline.csv = csv;
})();
"""

PAGE_JS = SORT_JS + CSV_JS


def _path(dotted: str) -> tuple:
    """``"speedups.0.realistic"`` as ``("speedups", 0, "realistic")`` (keys hold no dot here: precision names,
    fields)."""
    return tuple(int(k) if k.isdigit() else k for k in dotted.split("."))


@dataclass(frozen=True)
class Figure:
    """One figure of the answer: its label, its path in the JSON, its value there, and its text."""

    label: str
    path: tuple
    """keys and list indices, from the top of the result's JSON"""
    value: object
    text: str

    def __post_init__(self) -> None:
        if isinstance(self.path, str):
            object.__setattr__(self, "path", _path(self.path))


# ------------------------------------------------------------------------------- rich renderables as HTML


def _plain(cell) -> str:
    return cell.plain if isinstance(cell, Text) else str(cell)


def _numeric(text: str) -> bool:
    t = text.replace(",", "").replace(" ", "").rstrip("x%").replace("tok/s", "").replace("/s", "").replace("ms", "")
    try:
        float(t)
        return True
    except ValueError:
        return False


#: a word longer than this (a URL, a path) may break anywhere: the cell holding it would widen the page else
LONG_WORD = 24


def _long(text: str) -> str:
    """``long``, the class of a cell that holds a word longer than :data:`LONG_WORD` characters, else ``""``."""
    return "long" if any(len(w) > LONG_WORD for w in text.split()) else ""


def _td(text: str) -> str:
    cls = _long(text)
    return (f'<td class="{cls}">' if cls else "<td>") + escape(text) + "</td>"


def table_html(t: Table, sortable: bool = True) -> str:
    """A rich table as an HTML table: its header, its rows, its footer."""
    cols = t.columns
    grid = t.box is None
    cls = "grid" if grid else ("sortable" if sortable else "plain")
    head = "".join(f'<th class="{"num" if c.justify == "right" else ""}">'
                   + "<br>".join(escape(part) for part in _plain(c.header).split("\n")) + "</th>" for c in cols)
    cells = [list(c.cells) for c in cols]
    rows = []
    for i in range(t.row_count):
        tds = []
        for j, c in enumerate(cols):
            text = _plain(cells[j][i]) if i < len(cells[j]) else ""
            right = c.justify == "right"
            tds.append(f'<td class="{"num" if right else _long(text)}">' + escape(text).replace("\n", "<br>") + "</td>")
        rows.append("<tr>" + "".join(tds) + "</tr>")
    foot = ""
    if t.show_footer:
        foot = "<tfoot><tr>" + "".join(f'<td class="{"num" if c.justify == "right" else ""}">{escape(_plain(c.footer))}'
                                       "</td>" for c in cols) + "</tr></tfoot>"
    table = f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody>{foot}</table>'
    return f'<div class="scroll">{table}</div>' if grid else wrapped(table)


def wrapped(table: str) -> str:
    """A table inside the box that scrolls it sideways where the screen is narrower than it, with the button that
    downloads its cells as CSV (:data:`PAGE_JS` makes the file from the cells in the browser)."""
    return f'<div class="scroll">{table}</div><button type="button" class="csv">CSV</button>'


def _bold(r: Text) -> bool:
    return "bold" in str(r.style) or any("bold" in str(s.style) for s in r.spans if s.start == 0)


@dataclass
class Contents:
    """The titled sections of a page's tables, in order, for its contents list; ``fold``: which of them start
    folded (a ``<details>`` element the reader opens)."""

    fold: Callable[[str], bool] = lambda title: False
    entries: list[tuple[str, str]] = field(default_factory=list)
    """(id, title) of each section"""

    def anchor(self, title: str) -> str:
        """A new section's id, from its title (``s-`` and the title's letters and digits, numbered if taken)."""
        base = "s-" + (re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60] or "section")
        taken = {i for i, _ in self.entries}
        sid = base
        for n in range(2, len(taken) + 3):
            if sid not in taken:
                break
            sid = f"{base}-{n}"
        self.entries.append((sid, title))
        return sid


def rich_html(renderables: Iterable, *, lead: bool = False, contents: Contents | None = None) -> str:
    """The report's renderables (groups of a bold title, a table and notes) as HTML: a title as a heading, a
    table as a table, notes as a paragraph; ``lead``: the headline (its first line stands out); ``contents``: each
    group with a title becomes a section with an id there (folded where its ``fold`` says)."""
    out: list[str] = []
    first = True
    for r in renderables:
        if isinstance(r, Group):
            items = list(r.renderables)
            if (contents is not None and not lead and items and isinstance(items[0], Text) and _bold(items[0])
                    and items[0].plain.strip()):
                title = items[0].plain
                sid, body = contents.anchor(title), rich_html(items[1:])
                if contents.fold(title):
                    out.append(f'<details id="{sid}"><summary><h3>{escape(title)}</h3></summary>{body}</details>')
                else:
                    out.append(f'<section id="{sid}"><h3>{escape(title)}</h3>{body}</section>')
            else:
                out.append(rich_html(items, lead=lead and first))
        elif isinstance(r, Table):
            out.append(table_html(r))
        elif isinstance(r, Text):
            if not r.plain.strip():
                continue
            if lead and first:
                out.append(f'<p class="lead">{escape(r.plain)}</p>')
            elif _bold(r) and not lead:
                out.append(f"<h3>{escape(r.plain)}</h3>")
            else:
                out.append(f'<p class="{"" if lead else "note"}">{escape(r.plain)}</p>')
        else:
            out.append(f"<p>{escape(str(r))}</p>")
        first = False
    return "".join(out)


def _items(renderable) -> list:
    return list(renderable.renderables) if isinstance(renderable, Group) else [renderable]


# ------------------------------------------------------------------------------- the page


def generated_at() -> str:
    """When the page is made, in UTC to the minute (``$SOURCE_DATE_EPOCH`` where set, as reproducible builds
    ask)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    when = datetime.fromtimestamp(int(epoch), timezone.utc) if epoch.isdigit() else datetime.now(timezone.utc)
    return when.strftime("%Y-%m-%d %H:%M UTC")


def _contents_html(contents: Contents, fixed: Sequence[tuple[str, str]]) -> str:
    """The contents list: the page's own sections (``fixed``: id, title), the tables' sections under theirs."""
    inner = "".join(f'<li><a href="#{sid}">{escape(t)}</a></li>' for sid, t in contents.entries)
    items = "".join(f'<li><a href="#{sid}">{escape(t)}</a>' + (f"<ol>{inner}</ol>" if sid == "tables" else "")
                    + "</li>" for sid, t in fixed)
    return f'<nav id="contents"><h2>Contents</h2><ol>{items}</ol></nav>'


def page(*, kind: str, title: str, command: str, headline: Sequence, figures: Sequence[Figure],
         charts: Sequence[tuple[str, str]], tables: Sequence, inputs: Sequence[tuple[str, str, str, str]],
         left_out: Sequence[tuple[str, str]], result_json: str, notes: Sequence[str] = (),
         contents: Contents | None = None, fold_inputs: bool = False, extra: str = "", script: str = "",
         words: Sequence[str] = ()) -> str:
    """The whole page. ``charts``: ``(svg, caption)``; ``inputs``: ``(what, value, kind of source, source)``;
    ``contents``: a contents list at the top, the tables' titled sections in it (folded where it says);
    ``fold_inputs``: the inputs' table folded; ``extra``: HTML after the figures (the plan's what-if), ``script``:
    JavaScript for it, run after the page's own (one inline script in all)."""
    fig_rows = "".join(
        f'<tr><th>{escape(f.label)}</th><td class="num" data-json="{escape(json.dumps(list(f.path)))}" '
        f'data-value="{escape(json.dumps(f.value))}">{escape(f.text)}</td></tr>' for f in figures)
    chart_html = "".join(f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>" for svg, caption in charts)
    input_rows = "".join("<tr>" + "".join(_td(x) for x in row) + "</tr>" for row in inputs)
    left = "".join(f"<tr>{_td(w)}{_td(y)}</tr>" for w, y in left_out)
    note_html = "".join(f"<li>{escape(n)}</li>" for n in notes)
    # in JSON, < > & occur only inside strings, where \u003c is the same character: no "</script>" or "<!--" of a
    # name can close the element or open a comment that swallows the page's own script
    data = result_json.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    table_sections = rich_html(tables, contents=contents)
    inputs_table = wrapped('<table class="sortable"><thead><tr><th>input</th><th>value</th><th>kind</th><th>source</th>'
                           f"</tr></thead><tbody>{input_rows}</tbody></table>")
    inputs_html = (f'<details id="inputs"><summary><h2>Every input and its source ({len(inputs):,})</h2></summary>'
                   f"{inputs_table}</details>" if fold_inputs else
                   f'<section id="inputs"><h2>Every input and its source</h2>{inputs_table}</section>')
    left_html = (wrapped(f'<table class="plain"><thead><tr><th>what</th><th>why</th></tr></thead><tbody>{left}</tbody>'
                         "</table>") if left else "<p>nothing beyond the tables above</p>")
    nav = ""
    if contents is not None:
        fixed = [("figures", "The answer in numbers")] + ([("charts", "Chart")] if chart_html else []) + [
            ("tables", "The tables behind it"), ("inputs", "Every input and its source"),
            ("left-out", "What was left out")] + ([("notes", "Notes")] if note_html else [])
        nav = _contents_html(contents, fixed)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="roofline {escape(__version__)}">
<title>{escape(title)}</title><style>{CSS}</style></head>
<body><main data-report="{escape(kind)}">
<h1>{escape(title)}</h1>
<p class="command">{escape(command)}</p>
<section id="answer">{"".join(f'<p class="in-words">{escape(w)}</p>' for w in words)}{rich_html(headline, lead=True)}</section>
{nav}
<section id="figures"><h2>The answer in numbers</h2>{wrapped(f'<table class="plain">{fig_rows}</table>')}</section>
{extra}
{f'<section id="charts"><h2>Chart</h2>{chart_html}</section>' if chart_html else ''}
<section id="tables"><h2>The tables behind it</h2>{table_sections}</section>
{inputs_html}
<section id="left-out"><h2>What was left out</h2>{left_html}</section>
{f'<section id="notes"><h2>Notes</h2><ul>{note_html}</ul></section>' if note_html else ''}
<footer>Generated <time id="generated">{escape(generated_at())}</time> by roofline
<span id="version">{escape(__version__)}</span>. The result's JSON (what --json writes) is in this page:
<code>script#result-json</code>. No network, no script from elsewhere.</footer>
</main>
<script type="application/json" id="result-json">{data}</script>
<script>{PAGE_JS}{script}</script>
</body></html>
"""


def _split(full, brief) -> tuple[list, list]:
    """The headline (what ``brief`` holds) and the sections after it."""
    head = _items(brief)
    return head, _items(full)[len(head):]


# ------------------------------------------------------------------------------- the four commands


def estimate_page(r, command: str) -> str:
    from roofline.report.estimate_tables import render_estimate
    from roofline.report.svg import roofline_chart

    head, sections = _split(render_estimate(r), render_estimate(r, brief=True))
    figures: list[Figure] = []
    for name, pr in r.precisions.items():
        at = lambda field, name=name: ("precisions", name, field)  # noqa: E731  (a precision's name is a key, dots and all)
        figures += [Figure(f"{name}: bound", at("bound"), pr.bound, pr.bound),
                    Figure(f"{name}: latency, ceiling (ms)", at("instance_latency_s"), pr.instance_latency_s,
                           ms(pr.instance_latency_s)),
                    Figure(f"{name}: latency, realistic (ms)", at("realistic_instance_latency_s"),
                           pr.realistic_instance_latency_s, ms(pr.realistic_instance_latency_s)),
                    Figure(f"{name}: throughput, ceiling (/s)", at("throughput_per_s"), pr.throughput_per_s,
                           sig(pr.throughput_per_s)),
                    Figure(f"{name}: throughput, realistic (/s)", at("realistic_throughput_per_s"),
                           pr.realistic_throughput_per_s, sig(pr.realistic_throughput_per_s))]
    for i, s in enumerate(r.speedups):
        label = f"{s.precision} over {s.baseline}"
        figures += [Figure(f"{label}: GEMM speedup", f"speedups.{i}.gemm_speedup", s.gemm_speedup, ratio(s.gemm_speedup)),
                    Figure(f"{label}: end-to-end ceiling", f"speedups.{i}.end_to_end_ceiling", s.end_to_end_ceiling,
                           ratio(s.end_to_end_ceiling)),
                    Figure(f"{label}: realistic", f"speedups.{i}.realistic", s.realistic, ratio(s.realistic))]
    w = r.workload
    inputs = [("model", w.model, "argument", f"{w.family}, {w.layers} layers"),
              ("platform", r.platform.name, "argument", r.platform.file or r.platform.description),
              ("workload", f"{w.phase}, batch {w.batch}, " + (f"context {w.context}" if w.phase == "decode"
                                                               else f"seq {w.seq_len}"), "argument", "")]
    inputs += [(i.what, i.value, i.kind, i.source) for i in r.inputs]
    charts = [(roofline_chart(r), "The roofline: each GEMM at its arithmetic intensity and attainable rate, under the "
               "DRAM slope and each dtype's compute roof (hover a point for its numbers)")]
    return page(kind="estimate", title=f"roofline estimate: {w.model} on {r.platform.name}", command=command,
                headline=head, figures=figures, charts=charts, tables=sections, inputs=inputs,
                left_out=[(x.what, x.why) for x in r.left_out], result_json=r.to_json(), notes=r.notes)


def plan_page(r, command: str) -> str:
    from roofline.report.plan_tables import render_plan
    from roofline.report.plan_words import plan_in_words
    from roofline.report.svg import plan_chart
    from roofline.report.what_if import WHAT_IF_JS, what_if_html
    from roofline.results.plan import batch_limits

    head, sections = _split(render_plan(r, all_layouts=True), render_plan(r, brief=True))
    figures: list[Figure] = []
    for i, c in enumerate(r.cpus):
        figures.append(Figure(f"{c.cpu}: requests/s per server", f"cpus.{i}.best.rps_per_server", c.best.rps_per_server,
                              sig(c.best.rps_per_server)))
        if c.servers_needed is not None:
            figures.append(Figure(f"{c.cpu}: servers", f"cpus.{i}.servers_needed", c.servers_needed,
                                  f"{c.servers_needed:,}"))
        if c.cost_per_million_requests is not None:
            figures.append(Figure(f"{c.cpu}: $ per million requests", f"cpus.{i}.cost_per_million_requests",
                                  c.cost_per_million_requests, sig(c.cost_per_million_requests)))
    inputs = [("model", r.model, "argument", ""), ("precision", r.precision, "argument", ""),
              ("scenario", r.scenario, "argument", ""), ("request lengths", r.lengths.description, r.lengths.kind, ""),
              ("batching", batch_limits(r.max_batch_tokens, r.batch_watermark_tokens)
               + (f", max wait {r.max_wait_s * 1e3:g} ms" if r.max_wait_s else ""),
               f"{r.batching_from} stack profile" if r.batching_from else "argument", ""),
              ("utilization", f"{r.utilization:g}", "argument", ""),
              ("service times", r.stack or r.calibration or "no stack profile", "stack profile" if r.stack else
               "calibration" if r.calibration else "ceiling", ""),
              ("simulation", f"{r.simulation.method}, seed {r.simulation.seed}, {r.simulation.replications} "
               f"replications of {r.simulation.requests_per_replication:,} requests", "argument",
               r.simulation.confidence)]
    for name, v in (("p99 target (ms)", r.latency_target_s), ("TTFT target (ms)", r.ttft_target_s),
                    ("TPOT target (ms)", r.tpot_target_s)):
        if v is not None:
            inputs.append((name, f"{v * 1e3:g}", "argument", ""))
    if r.target_rps:
        inputs.append(("load", f"{sig(r.target_rps)} req/s", "argument", ""))
    for c in r.cpus:
        inputs.append((f"{c.cpu}", f"{c.sockets} x {c.cores_per_socket} cores", "platform file", c.description))
        if c.price_per_hour is not None:
            inputs.append((f"{c.cpu}: price per hour", f"{c.price_per_hour:g}", "argument", "an example, not a quote"))
        if c.memory is not None:
            inputs.append((f"{c.cpu}: DRAM per socket", f"{sig(c.memory.dram_bytes_per_socket / 1e9)} GB", "",
                           c.memory.source))
    charts = [(svg, "Latency against offered load per server: each CPU's best layout, simulated; the SLO dashed")
              for svg in plan_chart(r)]
    notes = list(r.notes) + [f"{c.cpu}: {n}" for c in r.cpus for n in c.notes]
    return page(kind="plan", title=f"roofline plan: {r.model} in {r.precision}", command=command, headline=head,
                figures=figures, charts=charts, tables=sections, inputs=inputs, left_out=[], result_json=r.to_json(),
                notes=notes, extra=what_if_html(r), script=WHAT_IF_JS, words=plan_in_words(r))


def check_page(r, command: str) -> str:
    from roofline.report.check_tables import render_check
    from roofline.report.svg import check_chart

    head, sections = _split(render_check(r), render_check(r, brief=True))
    figures: list[Figure] = []
    for i, c in enumerate(r.comparisons):
        for j, row in enumerate(c.rows):
            base = f"comparisons.{i}.rows.{j}"
            label = f"{c.precision} vs {c.baseline}, {row.metric}"
            figures += [Figure(f"{label}: measured", f"{base}.measured", row.measured, ratio(row.measured)),
                        Figure(f"{label}: ceiling", f"{base}.ceiling", row.ceiling, ratio(row.ceiling)),
                        Figure(f"{label}: realistic", f"{base}.realistic", row.realistic, ratio(row.realistic))]
    for i, x in enumerate(r.rates):
        label = f"{x.what} {x.precision} ({x.unit})"
        figures += [Figure(f"{label}: measured", f"rates.{i}.measured", x.measured, sig(x.measured)),
                    Figure(f"{label}: ceiling", f"rates.{i}.ceiling", x.ceiling, sig(x.ceiling)),
                    Figure(f"{label}: of the ceiling", f"rates.{i}.fraction_of_ceiling", x.fraction_of_ceiling,
                           pct(x.fraction_of_ceiling)),
                    Figure(f"{label}: realistic", f"rates.{i}.realistic", x.realistic, sig(x.realistic))]
    inputs: list[tuple[str, str, str, str]] = [("measured", r.source, "argument", "")]
    if r.measured_from is not None:
        inputs += [(i.what, i.value, i.source, i.detail) for i in r.measured_from.inputs]
    for c in r.comparisons:
        inputs.append((f"f_GEMM of {c.baseline}", f"{c.f_gemm:.3g}", c.f_gemm_source.split(":")[0], c.f_gemm_source))
    inputs.append(("realistic estimate", r.calibration or r.stack or "none", "calibration" if r.calibration else
                   "stack profile" if r.stack else "ceiling plus priced terms", ""))
    left = [(x.what, x.why) for x in r.measured_from.left_out] if r.measured_from else []
    charts = [(check_chart(r), "Each measurement as a share of its ceiling (bars; red above it) and of the realistic "
               "estimate (dots)")]
    return page(kind="check", title=f"roofline check: {r.model} on {r.cpu}", command=command, headline=head,
                figures=figures, charts=charts, tables=sections, inputs=inputs, left_out=left, result_json=r.to_json(),
                notes=r.notes)


def accuracy_page(r, command: str, records: Sequence[tuple[str, str, str]] = ()) -> str:
    """``records``: ``(id, file, source)`` of each record, for the inputs."""
    from roofline.report.accuracy_tables import render_accuracy
    from roofline.report.svg import accuracy_chart

    head, sections = _split(render_accuracy(r), render_accuracy(r, brief=True))
    figures = [Figure("records", "records", r.records, f"{r.records:,}"),
               Figure("figures", "figures", r.figures, f"{r.figures:,}"),
               Figure("ceiling violations", "violations", r.violations, f"{r.violations:,}")]
    for i, s in enumerate(r.stacks):
        if s.accuracy is not None:
            figures.append(Figure(f"{s.stack}: median |error|, leave-one-platform-out",
                                  f"stacks.{i}.accuracy.median_abs_error", s.accuracy.median_abs_error,
                                  f"{100 * s.accuracy.median_abs_error:.0f}%"))
    inputs = [(rid, file, "record", source) for rid, file, source in records]
    inputs += [(f"stack {s.stack}", s.profile or "no profile", "stack profile" if s.profile else "ceiling only", "")
               for s in r.stacks]
    charts = [(svg, "Predicted against measured, one colour per platform: a time's ceiling (triangles) lies on or below "
               "the line and a rate's on or above it (nothing runs faster than its ceiling); the realistic estimate "
               "(dots) should lie near it") for svg in accuracy_chart(r)]
    fold = Contents(fold=lambda title: title.startswith("Stack ") and title.endswith(": every figure"))
    return page(kind="accuracy", title="roofline accuracy: the model against measurements", command=command,
                headline=head, figures=figures, charts=charts, tables=sections, inputs=inputs, left_out=[],
                result_json=r.to_json(), notes=r.notes, contents=fold, fold_inputs=True)
