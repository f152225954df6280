"""Energy: a busy server's sockets x TDP + overhead over the rate estimate, plan and sweep compute (in process)."""

from __future__ import annotations

import math
import re

import pytest
from rich.console import Console

import roofline
from roofline.catalog import builtin_dir, load_platform
from roofline.errors import SpecError, UserError
from roofline.report.catalog_tables import render_platform
from roofline.report.estimate_tables import render_estimate
from roofline.report.plan_tables import render_plan

#: the TDP per socket of each platform the README and docs use, and the CPU whose datasheet row gives it
TDP = {"icx": (250, "8358"), "xeon-8380": (270, "8380"), "spr": (350, "8480+"), "emr": (350, "8592+"),
       "gnr": (500, "6980P"), "genoa": (360, "9654"), "milan": (280, "7763"), "turin": (500, "9755")}
NO_TDP = "zen3-2vcpu"


def text(renderable, width: int = 400) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


@pytest.mark.parametrize("cpu", TDP)
def test_platform_files_give_the_datasheet_tdp_with_its_row(cpu):
    watts, sku = TDP[cpu]
    tdp = roofline.estimate(model="bert-base", cpu=cpu, precision="fp32").energy.power.inputs[0]
    p = load_platform(str(builtin_dir("platforms") / f"{cpu}.toml")).power
    assert p.tdp_w.value == watts and p.tdp_w.kind == "datasheet" and sku in p.tdp_w.source
    assert re.search(r"github\.com/\S+/blob/[0-9a-f]{40}/\S+#L\d+", p.tdp_w.source), p.tdp_w.source
    assert not p.idle_w.known and p.idle_w.unknown  # no source states one: unknown, with the reason
    assert (tdp.what, tdp.kind, tdp.source) == ("power.tdp_w", "datasheet", p.tdp_w.source)
    shown = text(render_platform(load_platform(str(builtin_dir("platforms") / f"{cpu}.toml"))))
    assert re.search(rf"power\.tdp_w +{watts} W +datasheet", shown) and re.search(r"power\.idle_w +unknown", shown)


def test_estimate_joules_per_sequence_is_the_servers_tdp_over_its_throughput():
    r = roofline.estimate(model="bert-large", cpu="spr", precision="fp32,int8-static")
    e = r.energy
    assert (e.power.watts, e.power.sockets, e.power.tdp_w) == (700.0, 2, 350.0)
    assert [f.precision for f in e.figures] == ["fp32", "int8-static"]
    for f in e.figures:
        pr = r.precisions[f.precision]
        assert f.unit == "sequence"
        assert f.joules == 700.0 / pr.throughput_per_s and f.realistic_joules == 700.0 / pr.realistic_throughput_per_s
    assumed = {i.what: i for i in r.inputs if i.kind == "assumed"}
    assert "2 x 350 W + 0 W = 700 W" in assumed["server power"].value and "TDP" in assumed["server power"].source
    assert "J/seq" in text(render_estimate(r)) and "700 W" in text(render_estimate(r))


def test_overhead_and_sockets_change_the_power_exactly():
    one = roofline.estimate(model="bert-large", cpu="spr", precision="int8-static", sockets=1, server_overhead_w=150)
    f = {f.precision: f for f in one.energy.figures}["int8-static"]
    assert one.energy.power.watts == 1 * 350 + 150
    assert f.joules == 500.0 / one.precisions["int8-static"].throughput_per_s
    assert any(i.what == "server overhead" and i.value == "150 W" for i in one.inputs)


def test_decode_gives_joules_per_token():
    r = roofline.estimate(model="llama-3.2-1b", cpu="genoa", precision="bf16", phase="decode", batch=8)
    f = {f.precision: f for f in r.energy.figures}["bf16"]
    assert f.unit == "token" and f.joules == 720.0 / r.precisions["bf16"].throughput_per_s


def test_a_platform_without_tdp_says_no_power_figure():
    r = roofline.estimate(model="bert-base", cpu=NO_TDP, precision="fp32")
    assert r.energy.power.watts is None and r.energy.figures == []
    assert r.energy.power.note.startswith("no power figure")
    assert "no power figure" in text(render_estimate(r)) and "J/seq" not in text(render_estimate(r))
    p = roofline.plan(model="bert-base", cpu=NO_TDP, price_per_hour=1, price_per_kwh=0.2)
    (c,) = p.cpus
    assert c.energy.joules_per_request is None and c.energy.energy_cost_per_million_requests is None
    assert c.cost_per_million_requests == roofline.plan(model="bert-base", cpu=NO_TDP,
                                                        price_per_hour=1).cpus[0].cost_per_million_requests
    assert "no power figure" in text(render_plan(p)) and "leaves energy out" in text(render_plan(p))


def test_plan_joules_per_request_and_the_energy_share_of_the_cost():
    hourly = roofline.plan(model="bert-base", cpu="spr", price_per_hour=10)
    both = roofline.plan(model="bert-base", cpu="spr", price_per_hour=10, price_per_kwh=0.2)
    energy_only = roofline.plan(model="bert-base", cpu="spr", price_per_kwh=0.2)
    (h,), (b,), (o,) = hourly.cpus, both.cpus, energy_only.cpus
    rps = b.best.rps_per_server
    assert rps == h.best.rps_per_server == o.best.rps_per_server > 0
    joules = 700.0 / rps
    share = joules * 1e6 / 3.6e6 * 0.2  # J per request x a million requests, in kWh, at 0.2 per kWh
    assert b.energy.joules_per_request == joules and b.energy.energy_cost_per_million_requests == share
    assert b.cost_per_million_requests == pytest.approx(h.cost_per_million_requests + share, rel=1e-12)
    assert h.cost_per_million_requests == pytest.approx(10 / (rps * 3600) * 1e6, rel=1e-12)
    assert o.price_per_hour is None and o.cost_per_million_requests == share  # energy alone still priced
    assert h.energy.energy_cost_per_million_requests is None and h.energy.joules_per_request == joules
    page = text(render_plan(both))
    assert "J/req" in page and "700 W" in page and "included in $/M req" in page
    assert "all of $/M req (no --price-per-hour)" in text(render_plan(energy_only))


def test_plan_utilization_and_overhead_enter_the_joules():
    p = roofline.plan(model="bert-base", cpu="spr", utilization=0.5, server_overhead_w=300)
    (c,) = p.cpus
    assert c.energy.power.watts == 1000.0
    assert c.energy.joules_per_request == 1000.0 / (c.best.rps_per_server * 0.5)


def test_sweep_joules_columns_where_the_platform_has_a_tdp():
    t = roofline.sweep(model="bert-base", cpu=f"spr,{NO_TDP}", precision="fp32", batch="1,4").to_numpy()
    spr = t["cpu"] == "spr"
    assert spr.sum() == 2
    assert list(t["joules_per_sample"][spr]) == list(700.0 / t["throughput_per_s"][spr])
    assert list(t["joules_per_token"][spr]) == list(700.0 * t["step_time_s"][spr] / t["m"][spr])
    assert all(math.isnan(x) for x in t["joules_per_sample"][~spr]) and all(
        math.isnan(x) for x in t["joules_per_token"][~spr])


SPR = (builtin_dir("platforms") / "spr.toml").read_text()


@pytest.mark.parametrize("old, new, field, reason", [
    ("tdp_w = { value = 350,", "tdp_w = { value = -350,", "power.tdp_w", "outside the possible range"),
    ("tdp_w = { value = 350,", "tdp_w = { value = nan,", "power.tdp_w", "finite"),
    ("tdp_w = { value = 350,", "tdp_w = { value = 0,", "power.tdp_w", "outside the possible range"),
    ('idle_w = { unknown = "no source found states this SKU\'s idle package power" }',
     'idle_w = { value = 400, kind = "measured", source = "a test figure" }', "power.idle_w", "above the TDP"),
])
def test_a_bad_power_table_is_refused_naming_the_field(tmp_path, old, new, field, reason):
    assert old in SPR
    path = tmp_path / "bad.toml"
    path.write_text(SPR.replace(old, new))
    with pytest.raises(SpecError) as info:
        load_platform(str(path))
    e = info.value
    assert e.path.endswith("bad.toml") and e.field.startswith(field) and reason in e.reason, str(e)
    assert "\n" not in str(e)


@pytest.mark.parametrize("flag, value", [("server_overhead_w", -1), ("price_per_kwh", float("nan"))])
def test_bad_energy_flags_are_refused_naming_them(flag, value):
    with pytest.raises(UserError, match=flag):
        roofline.plan(model="bert-base", cpu="spr", **{flag: value})
