"""A plan's answer in sentences, for the people a plan is shared with: each CPU by its full name, the servers a load
needs (or the users one server holds), what they cost, and what the plan's error band does to the count."""

from __future__ import annotations

from roofline.report.fmt import sig


def _slo(r) -> str:
    parts = [f"{name} {v * 1e3:g} ms" for name, v in (("a p99 latency of", r.latency_target_s),
                                                       ("a time to first token of", r.ttft_target_s),
                                                       ("a time per output token of", r.tpot_target_s))
             if v is not None]
    return " and ".join(parts) if parts else "no latency target"


def _band(c) -> str:
    """What the band's two ends do to the server count (``servers_needed_band``: fewest, most)."""
    if not c.servers_needed_band or c.service_band is None:
        return ""
    fewest, most = c.servers_needed_band
    slow = "no layout meets the target" if most is None else f"{most:,} server{'s' if most != 1 else ''}"
    return (f" If this CPU runs {c.service_band:.0%} slower than estimated (the edge of the plan's error band), "
            f"{slow}; {c.service_band:.0%} faster, {fewest:,}." if fewest is not None else "")


def _cpu(r, c) -> str:
    name = f"{c.description} ({c.cpu})"
    if not c.meets:
        return f"{name}: no layout meets {_slo(r)}."
    if r.scenario == "concurrency":
        if c.max_users is None:
            return f"{name}: one server holds no user within {_slo(r)}."
        return (f"{name}: one server holds {c.max_users.users:,} users, each with a request in flight, within "
                f"{_slo(r)} (the most the plan found).")
    if c.servers_needed is None:
        return f"{name}: one server serves {sig(c.best.rps_per_server)} requests per second within {_slo(r)}."
    cost = (f", at {c.price_per_hour:g} an hour each ({sig(c.servers_needed * c.price_per_hour)} an hour in all)"
            if c.price_per_hour is not None else "")
    return (f"{name}: {c.servers_needed:,} server{'s' if c.servers_needed != 1 else ''} serve "
            f"{sig(r.target_rps)} requests per second within {_slo(r)}{cost}.{_band(c)}")


def plan_in_words(r) -> list[str]:
    """One sentence per CPU of plan ``r`` (:class:`~roofline.results.plan.PlanResult`), the cheapest CPU that meets
    the target first where prices are given."""
    meets = [c for c in r.cpus if c.meets and c.servers_needed is not None]
    priced = [c for c in meets if c.price_per_hour is not None]
    lead = []
    if priced:
        best = min(priced, key=lambda c: c.servers_needed * c.price_per_hour)
        lead = [f"Cheapest: {best.description} ({best.cpu}), {best.servers_needed:,} server"
                f"{'s' if best.servers_needed != 1 else ''} at {sig(best.servers_needed * best.price_per_hour)} an "
                "hour (the prices are the ones given, not quotes)."]
    return lead + [_cpu(r, c) for c in r.cpus]
