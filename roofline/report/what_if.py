"""The plan page's what-if: a load, a price per server-hour and (a server plan's) p99 SLO typed in the page give each
CPU's servers and fleet price at once, computed in the browser from the result's JSON embedded in the page (no server,
no network). At another SLO a server's rate is read off the latency curve of the plan's chosen layout: the highest
offered load whose p99 is within it, linear between the curve's points.

One server's capacity at the SLO is the plan's own: ``best.rps_per_server x utilization`` requests per second
(the server and offline scenarios; what ``servers_needed`` divides by), or ``max_users.users`` (a concurrency plan
with a TTFT or TPOT bound: the most users one server holds within it). Then, as
:func:`roofline.capacity.fleet.servers_needed` computes it,

    servers = ceil(load / capacity)

and at the ends of the service-time band the same with ``best.rps_per_server_band`` (fewest with the faster rate,
most with the slower; none where that rate is 0: no rate meets the SLO there); the fleet's price per hour is
``servers x`` the price per server-hour (the plan's ``price_per_hour`` until another is typed).
"""

from __future__ import annotations

from enum import Enum
from html import escape


class LoadUnit(Enum):
    """What the what-if's load counts."""

    RPS = "rps"
    """requests per second (server and offline plans)"""
    USERS = "users"
    """concurrent users (a concurrency plan with its most users per server)"""


def load_unit(r) -> LoadUnit | None:
    """The what-if's unit for plan ``r``, or None where no CPU has a capacity to divide by."""
    if r.scenario == "concurrency":
        return LoadUnit.USERS if any(c.max_users is not None and c.max_users.meets for c in r.cpus) else None
    return LoadUnit.RPS if any(c.meets and c.best.rps_per_server > 0 for c in r.cpus) else None


def what_if_html(r) -> str:
    """The what-if section of plan ``r``'s page (empty where :func:`load_unit` is None): the load's input, at the
    plan's own load where it has one, and one row per CPU that :data:`WHAT_IF_JS` fills in."""
    from roofline.report.html import wrapped

    unit = load_unit(r)
    if unit is None:
        return ""
    users = unit is LoadUnit.USERS
    asked = (max((u.users for c in r.cpus for u in c.users), default=None) if users else r.target_rps) or ""
    label = "users at once" if users else "requests/s"
    per = "users per server" if users else "req/s per server"
    def price(i: int, c) -> str:
        value = "" if c.price_per_hour is None else f"{c.price_per_hour:g}"
        return (f'<td class="num"><input class="price" type="number" min="0" step="any" inputmode="decimal" '
                f'aria-label="{escape(c.cpu)}: price per server-hour" value="{escape(value)}"></td>')

    rows = "".join(f'<tr data-cpu="{i}"><td>{escape(c.cpu)}</td><td class="num capacity"></td>'
                   f'<td class="num servers"></td><td class="num band"></td>{price(i, c)}<td class="num fleet"></td>'
                   '</tr>' for i, c in enumerate(r.cpus))
    table = wrapped('<table class="plain"><thead><tr><th>cpu</th><th class="num">' + escape(per) + '</th>'
                    '<th class="num">servers</th><th class="num">band</th><th class="num">$/server-hour</th>'
                    f'<th class="num">fleet $/hour</th></tr></thead><tbody>{rows}</tbody></table>')
    formula = ("servers = ceil(users / the most users one server holds within the SLO)" if users else
               "servers = ceil(load / (requests/s per server at the SLO x the planned utilization "
               f"{r.utilization:g}))")
    slo = slo_ms(r)
    slo_input = "" if slo is None else (
        f'<p><label for="what-if-slo">p99 latency SLO, ms:</label> <input id="what-if-slo" type="number" min="0" '
        f'step="any" inputmode="decimal" data-plan="{slo:g}" value="{slo:g}"></p>')
    slo_note = "" if slo is None else (
        " At another SLO, a server's rate is read off the plan's latency curve of its chosen layout (linear between "
        "its points; none below the curve's first point, the curve's last rate or more above its last): another "
        "layout may do better there, which `roofline plan` at that SLO says, and the band is the plan's only.")
    band = ("the band: the servers at the ends of the service-time band, fewest to most (\"or more\": no rate meets "
            "the SLO with the longer service times); " if not users else "")
    return (f'<section id="what-if"><h2>What if the load changes</h2>'
            f'<p><label for="what-if-load">Load, {label}:</label> '
            f'<input id="what-if-load" type="number" min="0" step="any" inputmode="decimal" data-unit="{unit.value}" '
            f'value="{escape(f"{asked:g}" if asked != "" else "")}"></p>{slo_input}{table}'
            f'<p class="note">{escape(formula)}, per CPU, from the plan in this page; {escape(band)}fleet: the '
            "servers x the price per server-hour, the plan's where it was given, or typed here. Computed in the "
            f"page: nothing is sent anywhere.{escape(slo_note)}</p></section>")


def slo_ms(r) -> float | None:
    """The p99 SLO (ms) the what-if lets a reader change: a server plan's latency target, read against each CPU's
    latency curve; None for the other plans (an offline plan has no latency bound, a decoder's TTFT and TPOT curves
    are not one quantity)."""
    if r.scenario != "server" or not r.latency_target_s:
        return None
    return r.latency_target_s * 1e3


WHAT_IF_JS = """
(function () {
  var input = document.getElementById("what-if-load");
  if (!input) return;
  var data = JSON.parse(document.getElementById("result-json").textContent);
  var users = input.getAttribute("data-unit") === "users";
  function servers(load, perServer) {
    if (!(load > 0) || !(perServer > 0)) return null;
    var n = Math.ceil(load / perServer);
    return isFinite(n) ? n : null;
  }
  function perServer(c, rate) {
    if (users) return c.max_users && c.max_users.meets ? c.max_users.users : null;
    return c.meets ? rate * data.utilization : null;
  }
  var sloInput = document.getElementById("what-if-slo");
  function rateAt(curve, slo) {  // the highest offered load whose p99 is within slo, linear between the curve's points
    var rate = null;
    for (var i = 0; i < curve.length; i++) {
      var p = curve[i];
      if (p.p99_s === null) continue;
      if (p.p99_s <= slo) { rate = p.offered_rps; continue; }
      var a = i > 0 ? curve[i - 1] : null;
      if (rate !== null && a && a.p99_s !== null && a.p99_s <= slo)
        rate = a.offered_rps + (slo - a.p99_s) / (p.p99_s - a.p99_s) * (p.offered_rps - a.offered_rps);
      break;
    }
    return rate;
  }
  function atSlo(c) {  // [requests/s per server, true when the SLO typed is the plan's own]
    if (!sloInput) return [c.best.rps_per_server, true];
    var slo = parseFloat(sloInput.value);
    if (slo === parseFloat(sloInput.getAttribute("data-plan"))) return [c.best.rps_per_server, true];
    if (!(slo > 0)) return [null, false];
    return [rateAt(c.curve, slo / 1000), false];
  }
  function count(n) { return n === null ? "-" : n.toLocaleString("en-US"); }
  function sig(x) {
    if (x === null || !isFinite(x)) return "-";
    var mag = x === 0 ? 0 : Math.floor(Math.log10(Math.abs(x)));
    return x.toLocaleString("en-US", {maximumFractionDigits: Math.max(2 - mag, 0),
                                      minimumFractionDigits: Math.max(2 - mag, 0)});
  }
  function update() {
    var load = parseFloat(input.value);
    document.querySelectorAll("#what-if tr[data-cpu]").forEach(function (row) {
      var c = data.cpus[+row.getAttribute("data-cpu")];
      var at = atSlo(c), own = at[1];
      var cap = users ? perServer(c, null) : (at[0] > 0 && (c.meets || !own) ? at[0] * data.utilization : null);
      var n = servers(load, cap);
      var band = !users && c.meets && own ? c.best.rps_per_server_band : null, span = "-";
      if (band && n !== null) {
        var fewest = servers(load, band[1] * data.utilization), most = servers(load, band[0] * data.utilization);
        span = most === null ? count(fewest) + " or more"
          : count(fewest) + (fewest === most ? "" : " to " + count(most));
      }
      row.querySelector(".capacity").textContent = cap === null ? "does not meet the SLO" : users ? count(cap) : sig(cap);
      row.querySelector(".servers").textContent = count(n);
      row.querySelector(".band").textContent = span;
      var price = parseFloat(row.querySelector(".price").value);
      row.querySelector(".fleet").textContent = n === null || !(price >= 0) ? "-" : sig(n * price);
    });
  }
  input.addEventListener("input", update);
  if (sloInput) sloInput.addEventListener("input", update);
  document.querySelectorAll("#what-if .price").forEach(function (p) { p.addEventListener("input", update); });
  update();
})();
"""
