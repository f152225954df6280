"""A plan's answer in sentences (the shared page's first lines): the numbers are the plan's own."""

from __future__ import annotations

import re

import pytest

import roofline
from roofline.report.plan_words import plan_in_words

pytestmark = pytest.mark.slow  # plans: out of the fast stage


@pytest.fixture(scope="module")
def bert():
    return roofline.plan("bert-large", "icx,spr,gnr", precision="int8-static", p99_ms=100, target_rps=20000,
                         price_per_hour="1.2,2.1,3.9")


def test_the_cheapest_cpu_leads_and_each_cpu_is_named_with_its_servers(bert):
    words = plan_in_words(bert)
    priced = [c for c in bert.cpus if c.meets and c.servers_needed is not None]
    best = min(priced, key=lambda c: c.servers_needed * c.price_per_hour)
    assert words[0].startswith(f"Cheapest: {best.description} ({best.cpu}), {best.servers_needed:,} server")
    for c, line in zip(bert.cpus, words[1:]):
        assert line.startswith(f"{c.description} ({c.cpu}): {c.servers_needed:,} server")
        fewest, most = c.servers_needed_band
        assert f"{c.service_band:.0%} slower" in line and f"{most:,} servers" in line and line.endswith(f"faster, {fewest:,}.")


def test_the_page_opens_with_the_sentences(bert, tmp_path):
    from roofline.report.html import plan_page

    text = plan_page(bert, "roofline plan ...")
    answer = text[text.index('<section id="answer">'):text.index("</section>", text.index('<section id="answer">'))]
    found = re.findall(r'<p class="in-words">(.*?)</p>', answer)
    assert len(found) == len(bert.cpus) + 1 and "Cheapest:" in found[0]


def test_a_concurrency_plan_says_the_users_one_server_holds():
    r = roofline.plan("llama-3.2-1b", "spr", precision="q4_k_m", seq_len=128, output_len=32, tpot_ms=200,
                      ttft_ms=5000, concurrency="1,4")
    (line,) = plan_in_words(r)
    c = r.cpus[0]
    assert c.max_users is not None and f"one server holds {c.max_users.users:,} users" in line
    assert "time per output token of 200 ms" in line
