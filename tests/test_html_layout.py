"""The HTML pages' layout in a real browser: no page scrolls sideways on a 1400 px screen, a 390 px phone or A4
paper; each table's CSV button gives the table's cells; the accuracy page's contents reach every section.

Headless Chromium is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: JSON messages ended
by a NUL byte, read from fd 4 and written to fd 3; https://chromedevtools.github.io/devtools-protocol/): the
command line's ``--window-size`` cannot go below 500 px in the new headless mode, so the phone's width and the
print media are emulated (``Emulation.setDeviceMetricsOverride``, ``Emulation.setEmulatedMedia``) and A4 is
printed with ``Page.printToPDF``.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import re
import select
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest
from clitools import run_cli
from test_html import CHROMIUM, COMMANDS, Page

pytestmark = pytest.mark.slow

#: the longest wait for one message from the browser (a page that never loads fails, it does not hang)
TIMEOUT_S = 120
#: A4 less the page's 12 mm margins (its @page rule), in CSS pixels (96 per inch): 186 mm
A4_TEXT_PX = round((210 - 2 * 12) / 25.4 * 96)
#: (viewport width, media, a phone's viewport): the desktop, the phone, the printed page
SIZES = {"desktop": (1400, "screen", False), "phone": (390, "screen", True), "a4": (A4_TEXT_PX, "print", False)}


class Browser:
    """One headless Chromium and one page in it, driven over the DevTools protocol on a pipe."""

    def __init__(self, profile: Path) -> None:
        ours_r, its_w = os.pipe()  # what it writes (its fd 4), we read
        its_r, ours_w = os.pipe()  # what we write, it reads (its fd 3)

        def fds() -> None:
            os.dup2(its_r, 3)
            os.dup2(its_w, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--hide-scrollbars", f"--user-data-dir={profile}",
             "--remote-debugging-pipe", "about:blank"],
            pass_fds=(3, 4), preexec_fn=fds, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(its_r)
        os.close(its_w)
        self.out, self.inp = os.fdopen(ours_w, "wb", buffering=0), os.fdopen(ours_r, "rb", buffering=0)
        self.buffer, self.n, self.events = b"", 0, []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable", page=True)
        self.call("Runtime.enable", page=True)

    def _message(self) -> dict:
        while b"\0" not in self.buffer:
            if not select.select([self.inp], [], [], TIMEOUT_S)[0]:
                raise TimeoutError(f"Chromium sent nothing in {TIMEOUT_S} s")
            chunk = self.inp.read(1 << 16)
            if not chunk:
                raise EOFError("Chromium closed the DevTools pipe")
            self.buffer += chunk
        msg, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, page: bool = False, **params) -> dict:
        """The result of one DevTools command (``page``: sent to the page's session); events meanwhile are kept."""
        self.n += 1
        msg = {"id": self.n, "method": method, "params": params} | ({"sessionId": self.session} if page else {})
        self.out.write(json.dumps(msg).encode() + b"\0")
        while True:
            msg = self._message()
            if msg.get("id") == self.n:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]
            self.events.append(msg)

    def open(self, page: Path, width: int, media: str = "screen", mobile: bool = False) -> None:
        """``page`` loaded in a viewport ``width`` CSS pixels wide (``mobile``: as a phone, its viewport meta
        obeyed), with ``media`` (screen or print) emulated."""
        self.call("Emulation.setDeviceMetricsOverride", page=True, width=width, height=900, deviceScaleFactor=1,
                  mobile=mobile)
        # "" ends the emulation: a page printed must see the print media, not an emulated screen
        self.call("Emulation.setEmulatedMedia", page=True, media="" if media == "screen" else media)
        self.events.clear()
        self.call("Page.navigate", page=True, url=page.as_uri())
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(self._message())

    def eval(self, expression: str):
        """The value of a JavaScript expression in the page (a promise awaited)."""
        r = self.call("Runtime.evaluate", page=True, expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(r["exceptionDetails"])
        return r["result"].get("value")

    def errors(self) -> list[str]:
        """What the page logged as an error or threw since it was opened."""
        out = [json.dumps(e["params"]["args"]) for e in self.events if e.get("method") == "Runtime.consoleAPICalled"
               and e["params"]["type"] in ("error", "assert")]
        return out + [json.dumps(e["params"]["exceptionDetails"]) for e in self.events
                      if e.get("method") == "Runtime.exceptionThrown"]

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (EOFError, OSError, RuntimeError):
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if CHROMIUM is None:
        pytest.skip("headless Chromium is not installed here (Debian: apt-get install chromium)")
    b = Browser(tmp_path_factory.mktemp("chromium"))
    yield b
    b.close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """Each command of test_html run once with --html: its page."""
    folder = tmp_path_factory.mktemp("layout")
    out = {}
    for name, args in COMMANDS.items():
        page, js = folder / f"{name}.html", folder / f"{name}.json"
        proc = run_cli(*args, "--brief", "--html", str(page), "--json", str(js))
        assert proc.returncode == 0, (name, proc.stderr)
        out[name] = page
    return out


#: the page's width as laid out, and the viewport's: documentElement.clientWidth is the layout viewport's width,
#: whatever a phone's zoom does to window.innerWidth
WIDTHS = "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"


def test_the_measurement_sees_a_page_too_wide(browser, tmp_path):
    """The harness itself: a page with a 720 px wide block is wider than the phone and than A4, not the desktop."""
    wide = tmp_path / "wide.html"
    wide.write_text('<!DOCTYPE html><html><head><meta name="viewport" content="width=device-width, initial-scale=1">'
                    '</head><body><div style="width:720px">x</div></body></html>')
    seen = {}
    for size, (width, media, mobile) in SIZES.items():
        browser.open(wide, width, media, mobile)
        seen[size] = browser.eval(WIDTHS)
    # the block's right edge: the body's 8 px margin and its 720 px
    assert seen == {"desktop": [1400, 1400], "phone": [728, 390], "a4": [728, A4_TEXT_PX]}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", COMMANDS)
def test_no_page_scrolls_sideways(browser, pages, name, size):
    width, media, mobile = SIZES[size]
    browser.open(pages[name], width, media, mobile)
    assert browser.eval(WIDTHS) == [width, width]
    assert not browser.errors(), browser.errors()
    if size != "desktop":  # every chart fits the width, scaled down
        charts = browser.eval("Array.from(document.querySelectorAll('figure svg'), function (s) {"
                              "var r = s.getBoundingClientRect(); return [r.right, r.width / r.height]; })")
        assert charts and all(right <= width for right, _ in charts)
    if size == "a4":  # nothing is left to scroll inside its box: every table is whole on the paper
        boxes = browser.eval("Array.from(document.querySelectorAll('.scroll'), function (b) {"
                             "return [b.scrollWidth, b.clientWidth]; })")
        assert boxes and all(s <= c for s, c in boxes), boxes


@pytest.mark.parametrize("name", COMMANDS)
def test_each_page_prints_on_a4(browser, pages, name):
    browser.open(pages[name], 1400)
    pdf = base64.b64decode(browser.call("Page.printToPDF", page=True, preferCSSPageSize=True)["data"])
    assert pdf.startswith(b"%PDF-")
    boxes = re.findall(rb"/MediaBox \[0 0 ([0-9.]+) ([0-9.]+)\]", pdf)
    # A4 in points: 210 mm x 297 mm at 72 per inch
    assert boxes and all(abs(float(w) - 595.28) < 1 and abs(float(h) - 841.89) < 1 for w, h in boxes), boxes


@pytest.mark.parametrize("name", ["estimate", "accuracy"])
def test_a_tables_csv_button_gives_its_cells(browser, pages, name):
    """The button's file, caught where the page makes its Blob, read as CSV: the table's rows and cells as the
    page's HTML holds them (the accuracy page's table folded in a closed <details>, the last button)."""
    page = pages[name]
    tables = [t for t in Page(page.read_text().replace("<br>", " ")).tables if t["class"] in ("sortable", "plain")]
    browser.open(page, 1400)
    which = 0 if name == "estimate" else -1
    got = browser.eval("""new Promise(function (done) {
        var make = URL.createObjectURL;
        URL.createObjectURL = function (blob) {
            blob.arrayBuffer().then(function (b) { done(Array.from(new Uint8Array(b))); });
            return make.call(URL, blob);
        };
        var buttons = document.querySelectorAll('button.csv');
        buttons[%d < 0 ? buttons.length - 1 : 0].click();
    })""" % which)
    text = bytes(got).decode("utf-8")
    assert text.startswith("\ufeff")  # the byte order mark: a spreadsheet then reads the file as UTF-8
    rows = list(csv.reader(io.StringIO(text[1:], newline="")))
    assert rows == [[" ".join(c.split()) for c in r] for r in tables[which]["rows"]] and len(rows) > 1
    names = browser.eval("Array.from(document.querySelectorAll('button.csv'), function (b) {"
                         "return b.getAttribute('data-file'); })")
    assert len(names) == len(tables) and len(set(names)) == len(names) and all(n.startswith(name + "-") for n in names)


def test_the_accuracy_pages_contents_reach_every_section(browser, pages):
    page = pages["accuracy"]
    data = json.loads(page.with_suffix(".json").read_text())
    browser.open(page, 390, mobile=True)
    links = browser.eval("Array.from(document.querySelectorAll('nav#contents a'), function (a) {"
                         "var t = document.getElementById(a.getAttribute('href').slice(1));"
                         "return [a.textContent, t ? t.tagName : null, t && t.tagName === 'DETAILS' ? t.open : null]; })")
    assert links and all(tag is not None for _, tag, _ in links), links
    folded = {text: is_open for text, tag, is_open in links if tag == "DETAILS"}
    stacks = dict.fromkeys(row["stack"] for row in data["rows"])
    assert list(folded) == [f"Stack {s}: every figure" for s in stacks] + ["Every input and its source"]
    assert not any(folded.values())


def test_the_footer_gives_the_date_and_the_version(monkeypatch):
    """The generation time in UTC to the minute ($SOURCE_DATE_EPOCH where set: 1,700,000,000 s after the epoch is
    2023-11-14 22:13:20 UTC) and roofline's version."""
    import roofline
    from roofline.report.html import estimate_page
    from roofline.version import __version__

    result = roofline.estimate(model="bert-base", cpu="icx")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    text = estimate_page(result, "roofline estimate")
    assert '<time id="generated">2023-11-14 22:13 UTC</time>' in text
    assert f'<span id="version">{__version__}</span>' in text
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    before = datetime.now(timezone.utc).replace(second=0, microsecond=0)
    stamp = re.search(r'<time id="generated">([^<]*) UTC</time>', estimate_page(result, "roofline estimate"))[1]
    when = datetime.strptime(stamp, "%Y-%m-%d %H:%M").replace(tzinfo=timezone.utc)
    assert before <= when <= datetime.now(timezone.utc)


WHAT_IF = """(function () {
    var input = document.getElementById("what-if-load");
    input.value = "%s";
    input.dispatchEvent(new Event("input"));
    return Array.from(document.querySelectorAll("#what-if tr[data-cpu]"), function (row) {
        return Array.from(row.cells, function (c) { return c.textContent; }); });
})()"""


PRICE = """(function () {
    var price = document.querySelector("#what-if tr[data-cpu='0'] .price");
    price.value = "%s";
    price.dispatchEvent(new Event("input"));
})()"""


def test_the_plans_what_if_load_changes_its_server_count(browser, pages):
    """A load typed in the plan page gives each CPU the servers roofline's own servers_needed gives (the plan's
    own load: the JSON's servers_needed and band), and the fleet's price per hour, at the plan's price per server-hour
    or one typed in the page."""
    from roofline.capacity.fleet import servers_needed

    page = pages["plan"]
    data = json.loads(page.with_suffix(".json").read_text())
    u = data["utilization"]
    browser.open(page, 390, mobile=True)
    for load in (data["target_rps"], 5000, 123.5):
        rows = browser.eval(WHAT_IF % load)
        assert not browser.errors(), browser.errors()
        assert [r[0] for r in rows] == [c["cpu"] for c in data["cpus"]]
        for row, c in zip(rows, data["cpus"]):
            slower, faster = c["best"]["rps_per_server_band"]
            n = servers_needed(load, c["best"]["rps_per_server"], u)
            fewest, most = servers_needed(load, faster, u), servers_needed(load, slower, u)
            assert row[2] == f"{n:,}" and row[3] == (f"{fewest:,} or more" if most is None else f"{fewest:,} to {most:,}")
            assert float(row[5].replace(",", "")) == pytest.approx(n * c["price_per_hour"], rel=5e-3)
            if load == data["target_rps"]:
                assert n == c["servers_needed"] and [fewest, most] == c["servers_needed_band"]
    assert [r[2] for r in browser.eval(WHAT_IF % 5000)] != [r[2] for r in browser.eval(WHAT_IF % 123.5)]
    # a price typed for the first CPU prices its fleet at once; the others keep the plan's
    browser.eval(PRICE % 7.5)
    rows = browser.eval(WHAT_IF % 5000)
    n = servers_needed(5000, data["cpus"][0]["best"]["rps_per_server"], u)
    assert float(rows[0][5].replace(",", "")) == pytest.approx(n * 7.5, rel=5e-3)
    for row, c in list(zip(rows, data["cpus"]))[1:]:
        n = servers_needed(5000, c["best"]["rps_per_server"], u)
        assert float(row[5].replace(",", "")) == pytest.approx(n * c["price_per_hour"], rel=5e-3)
    browser.eval(PRICE % "")
    assert browser.eval(WHAT_IF % 5000)[0][5] == "-"
    assert [r[2] for r in browser.eval(WHAT_IF % "")] == ["-"] * len(data["cpus"])


SLO = """(function () {
    var slo = document.getElementById("what-if-slo");
    slo.value = "%s";
    slo.dispatchEvent(new Event("input"));
})()"""


def _rate_at(curve: list[dict], slo_s: float) -> float | None:
    """The highest offered load whose p99 is within ``slo_s``, linear between the curve's points (what_if.py)."""
    rate, previous = None, None
    for p in curve:
        if p["p99_s"] is None:
            continue
        if p["p99_s"] <= slo_s:
            rate, previous = p["offered_rps"], p
            continue
        if rate is not None:
            rate += (slo_s - previous["p99_s"]) / (p["p99_s"] - previous["p99_s"]) * (p["offered_rps"] - rate)
        break
    return rate


def test_a_server_plans_what_if_reads_another_slo_off_each_cpus_latency_curve(browser, pages):
    """A p99 SLO typed in the page: each CPU's rate is its chosen layout's curve read at that SLO (linear between its
    points), its servers ceil(load / that rate); none where even the first point misses it; the plan's own SLO gives
    the plan's servers and band back."""
    from roofline.capacity.fleet import servers_needed

    page = pages["plan"]
    data = json.loads(page.with_suffix(".json").read_text())
    u, load = data["utilization"], 3000
    browser.open(page, 1400)
    assert float(browser.eval("document.getElementById('what-if-slo').value")) == data["latency_target_s"] * 1e3
    for slo_ms in (80, 200, 35):
        browser.eval(SLO % slo_ms)
        rows = browser.eval(WHAT_IF % load)
        assert not browser.errors(), browser.errors()
        for row, c in zip(rows, data["cpus"]):
            rate = _rate_at(c["curve"], slo_ms / 1e3)
            if rate is None:
                assert row[1] == "does not meet the SLO" and row[2] == "-"
            else:
                assert row[2] == f"{servers_needed(load, rate, u):,}" and row[3] == "-"  # the band is the plan's only
    assert any(_rate_at(c["curve"], 0.2) != _rate_at(c["curve"], 0.08) for c in data["cpus"])
    assert {_rate_at(c["curve"], 0.035) is None for c in data["cpus"]} == {True, False}  # both branches seen
    browser.eval(SLO % (data["latency_target_s"] * 1e3))
    rows = browser.eval(WHAT_IF % load)
    for row, c in zip(rows, data["cpus"]):
        if c["meets"]:
            assert row[2] == f"{servers_needed(load, c['best']['rps_per_server'], u):,}" and row[3] != "-"


def test_a_concurrency_plans_what_if_counts_users(browser, tmp_path):
    """A concurrency plan: servers = ceil(users / the most users one server holds within the TTFT and TPOT)."""
    page, js = tmp_path / "users.html", tmp_path / "users.json"
    proc = run_cli("plan", "--model", "llama-3.1-8b", "--cpu", "genoa,spr", "--precision", "q4_k_m", "--concurrency",
                   "1,8", "--tpot-ms", "100", "--ttft-ms", "2000", "--html", str(page), "--json", str(js))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(js.read_text())
    most = [c["max_users"]["users"] for c in data["cpus"]]
    browser.open(page, 1400)
    assert browser.eval("document.getElementById('what-if-load').value") == "8"  # the most users asked
    rows = browser.eval(WHAT_IF % 30)
    assert [r[1] for r in rows] == [str(m) for m in most] and all(m > 1 for m in most)
    assert [r[2] for r in rows] == [str(-(-30 // m)) for m in most]
