"""The HTML report (--html FILE on estimate, plan, check and accuracy): one self-contained page, checked as text
here and in a real browser (headless Chromium from Debian's packages) where one is installed: it renders without
a console message, its figures are the JSON's, its headline is the command's, its tables sort."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from clitools import REPO, run_cli

pytestmark = pytest.mark.slow  # the file takes seconds: out of the fast stage (pytest -m "not slow")

BENCH = REPO / "tests" / "fixtures" / "llama-bench"
COMMANDS = {
    "estimate": ["estimate", "--model", "bert-large", "--cpu", "icx"],
    "plan": ["plan", "--model", "bert-large", "--cpu", "icx,spr", "--p99-ms", "50", "--target-rps", "2000",
             "--price-per-hour", "1.2,2.1"],
    "check": ["check", "--from", str(BENCH / "zen5-2vcpu-llama-3.2-1b.json"), "--cpu", str(BENCH / "zen5-2vcpu-probe.toml"),
              "--model", "llama-3.2-1b"],
    "accuracy": ["accuracy"],
}
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed here (Debian: "
                                    "apt-get install chromium chromium-driver; .ci/run installs it)")


class Page(HTMLParser):
    """What the tests read of a page: the figures' data attributes and text, the answer's text, the tables'
    cells, the tags and attributes that could fetch something."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.figures: list[dict] = []
        self.answer, self.tables, self.fetching, self.svgs = "", [], [], 0
        self._in_answer, self._figure, self._cell, self._row = 0, None, None, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section" and a.get("id") == "answer":
            self._in_answer = 1
        elif self._in_answer and tag == "section":
            self._in_answer += 1
        if "data-json" in a:
            self._figure = {"path": json.loads(a["data-json"]), "value": json.loads(a["data-value"]), "text": ""}
        if tag == "table":
            self.tables.append({"class": a.get("class", ""), "rows": []})
        if tag == "tr" and self.tables:
            self._row = []
            self.tables[-1]["rows"].append(self._row)
        if tag in ("td", "th"):
            self._cell = ""
        if tag == "svg":
            self.svgs += 1
        if tag in ("link", "img", "iframe", "object", "embed") or (tag == "script" and "src" in a) or \
                any(k == "src" or (k == "href" and not str(v).startswith("#")) for k, v in a.items()) or any(str(v).startswith(("http:", "https:", "//"))
                                                           for k, v in a.items() if k != "xmlns"):
            self.fetching.append((tag, a))

    def handle_endtag(self, tag):
        if tag == "section" and self._in_answer:
            self._in_answer -= 1
        if tag == "td" and self._figure is not None:
            self.figures.append(self._figure)
            self._figure = None
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(self._cell.strip())
            self._cell = None

    def handle_data(self, data):
        if self._in_answer:
            self.answer += data + " "
        if self._figure is not None:
            self._figure["text"] += data
        if self._cell is not None:
            self._cell += data


def _at(data, path):
    for key in path:
        data = data[key]
    return data


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """Each command run once with --html, --json FILE and --brief: its page, its JSON and its headline."""
    out = {}
    folder = tmp_path_factory.mktemp("html")
    for name, args in COMMANDS.items():
        page, js = folder / f"{name}.html", folder / f"{name}.json"
        proc = run_cli(*args, "--brief", "--json", str(js), "--html", str(page), env={"COLUMNS": "160"})
        assert proc.returncode == 0, (name, proc.stderr)
        assert proc.stdout.endswith(f"wrote {page}\n")
        headline = proc.stdout[: -len(f"wrote {page}\n")]
        out[name] = (page, json.loads(js.read_text()), headline)
    return out


# ------------------------------------------------------------------ the page as text


@pytest.mark.parametrize("name", COMMANDS)
def test_the_page_is_self_contained_and_holds_the_json(pages, name):
    page, data, headline = pages[name]
    text = page.read_text()
    p = Page(text)
    assert text.startswith("<!DOCTYPE html>") and not p.fetching, p.fetching
    assert p.figures and all(f["value"] == _at(data, f["path"]) for f in p.figures)
    embedded = text.split('<script type="application/json" id="result-json">', 1)[1].split("</script>", 1)[0]
    assert json.loads(embedded.replace("<\\/", "</")) == data
    for line in headline.splitlines():
        assert _words(line) in _words(p.answer), line
    assert p.svgs >= 1 and any(t["class"] == "sortable" and len(t["rows"]) > 1 for t in p.tables)
    for svg in text.split("<svg")[1:]:  # each chart is well-formed XML
        ET.fromstring("<svg" + svg.split("</svg>", 1)[0] + "</svg>")
    inputs = next(t for t in p.tables if t["rows"] and t["rows"][0][:2] == ["input", "value"])
    assert len(inputs["rows"]) > 2


def test_the_inputs_carry_their_sources(pages):
    est = Page(pages["estimate"][0].read_text())
    inputs = next(t for t in est.tables if t["rows"] and t["rows"][0][:2] == ["input", "value"])["rows"][1:]
    data = pages["estimate"][1]
    assert len(inputs) == len(data["inputs"]) + 3 and {r[2] for r in inputs} >= {"datasheet", "derived"}
    check = Page(pages["check"][0].read_text())
    rows = next(t for t in check.tables if t["rows"] and t["rows"][0][:2] == ["input", "value"])["rows"]
    kinds = {r[0]: r[2] for r in rows[1:]}
    assert kinds["threads"] == "file" and kinds["model"] == "flag" and kinds["batch"] == "assumed"


def test_an_html_page_must_be_named_html(tmp_path):
    proc = run_cli("estimate", "--model", "bert-base", "--cpu", "icx", "--html", str(tmp_path / "page.txt"))
    assert proc.returncode == 2 and "--html" in proc.stderr and len(proc.stderr.splitlines()) == 1
    ro = tmp_path / "ro.html"
    ro.write_text("KEEP")
    ro.chmod(0o444)
    proc = run_cli("estimate", "--model", "bert-base", "--cpu", "icx", "--html", str(ro))
    assert proc.returncode == 2 and "read-only" in proc.stderr and ro.read_text() == "KEEP"


def test_a_log_axis_labels_every_decade_in_one_notation():
    """1k, 10k, ..., 1T, 100T: an SI prefix from 1,000 up, so that ticks in ops/s read in the legend's Tops/s and
    never mix 1k with 1e4; decimals below 1."""
    from roofline.report.svg import _tick

    assert [_tick(10.0**k, True) for k in range(-3, 16)] == [
        "0.001", "0.01", "0.1", "1", "10", "100", "1k", "10k", "100k", "1M", "10M", "100M", "1G", "10G", "100G", "1T",
        "10T", "100T", "1P"]
    assert _tick(12345.0, False) == "12,345" and _tick(2.5, False) == "2.50"


def test_the_estimates_chart_ticks_read_in_its_legends_unit(pages):
    """The roofline chart's vertical axis is in ops/s and its legend in Tops/s: its ticks carry the T."""
    import re

    page, _, _ = pages["estimate"]
    svg = page.read_text().split("<svg", 1)[1].split("</svg>", 1)[0]
    ticks = re.findall(r'class="tick">([^<]*)</text>', svg)
    assert any(t.endswith("T") for t in ticks) and "Tops/s" in svg
    assert not any(re.fullmatch(r"1e-?\d+", t) for t in ticks), ticks


def test_the_accuracy_charts_give_each_platform_its_own_colour_and_room_for_its_legend(pages):
    """30 and more platforms: as many colours as platforms, and every legend line inside its chart."""
    import re

    from roofline.report.svg import RIGHT, WIDTH

    page, data, _ = pages["accuracy"]
    platforms = {x["platform"] for x in data["rows"]}
    charts = page.read_text().split("<svg")[1:]
    assert charts and len(platforms) > 20
    for svg in charts:
        svg = svg.split("</svg>", 1)[0]
        if "predicted against measured" not in svg:
            continue
        height = float(re.search(r'viewBox="0 0 \S+ (\S+)"', svg)[1])
        legend_y = [float(y) for y in re.findall(r'<text x="\S+" y="(\S+)" class="legend">', svg)]
        assert legend_y and max(legend_y) < height
        legend_x = WIDTH - RIGHT + 14 + 9  # Axes.legend's dots, one per platform then the realistic estimate's grey
        dots = re.findall(rf'<circle cx="{legend_x}" cy="\S+" r="4.5" fill="([^"]+)"', svg)[:-1]
        assert len(dots) == len(platforms) and len(set(dots)) == len(dots)


def test_the_charts_need_no_matplotlib():
    """The report's SVG is hand-built: rendering a page imports no matplotlib."""
    code = ("import sys, roofline; from roofline.report.html import estimate_page; "
            "estimate_page(roofline.estimate(model='bert-base', cpu='icx'), 'x'); "
            "print('matplotlib' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0 and proc.stdout.strip() == "False", proc.stderr


# ------------------------------------------------------------------ in a real browser


def _browse(page: Path, tmp: Path, *flags: str) -> subprocess.CompletedProcess:
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update", "--disable-sync",
                           f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *flags, page.as_uri()],
                          capture_output=True, text=True, timeout=180)


def _console(proc: subprocess.CompletedProcess) -> list[str]:
    return [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]


@needs_chromium
def test_the_console_check_sees_an_error(tmp_path):
    """The harness itself: a page that logs an error and throws is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><p>x</p><script>console.error('deliberate'); nope();</script>"
                   "</body></html>")
    proc = _browse(bad, tmp_path, "--dump-dom")
    lines = _console(proc)
    assert len(lines) == 2 and "deliberate" in lines[0] and "nope is not defined" in lines[1], proc.stderr


@needs_chromium
@pytest.mark.parametrize("name", COMMANDS)
def test_the_page_renders_in_chromium(pages, name, tmp_path):
    page, data, headline = pages[name]
    proc = _browse(page, tmp_path, "--dump-dom")
    assert proc.returncode == 0 and not _console(proc), _console(proc) or proc.stderr[-2000:]
    dom = Page(proc.stdout)
    assert dom.figures and len(dom.figures) == len(Page(page.read_text()).figures)
    for f in dom.figures:
        assert f["value"] == _at(data, f["path"]), f
    for line in headline.splitlines():
        assert _words(line) in _words(dom.answer), line
    assert dom.svgs >= 1
    shot = tmp_path / f"{name}.png"
    proc = _browse(page, tmp_path, f"--screenshot={shot}", "--window-size=1280,1800", "--hide-scrollbars")
    assert proc.returncode == 0 and not _console(proc), proc.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


@needs_chromium
def test_a_table_sorts_when_its_header_is_clicked(pages, tmp_path):
    """The inline script: a click on a numeric column's header sorts the rows by value, a second click the other
    way (the page, with two clicks scripted at its end, read back from the browser's DOM)."""
    text = pages["estimate"][0].read_text()
    table = 'document.querySelectorAll("table.sortable")[0]'
    for clicks, order in ((1, sorted), (2, lambda xs: sorted(xs, reverse=True))):
        script = f'<script>var h = {table}.tHead.rows[0].cells[4];' + " h.click();" * clicks + "</script></body>"
        page = tmp_path / f"sorted{clicks}.html"
        page.write_text(text.replace("</body>", script))
        proc = _browse(page, tmp_path, "--dump-dom")
        assert not _console(proc), _console(proc)
        rows = [t for t in Page(proc.stdout).tables if t["class"] == "sortable"][0]["rows"]
        assert rows[0][4] == "peak Tops/s"
        values = [float(r[4]) for r in rows[1:]]
        assert values == order(values) and len(set(values)) > 1
