"""A second memory tier beside DRAM: on-package HBM (flat or cache mode) and CXL memory, by hand.

A step reads each resident byte once; where the pages are decides how fast (:mod:`roofline.calc.tiers`): placed in
the tier first (HBM flat mode), after DRAM (CXL), or through a direct-mapped memory-side cache (HBM cache mode).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import roofline
import roofline.catalog
from roofline.calc.tiers import blended_bandwidth, tier_share
from roofline.spec.platform import MemoryTier
from roofline.spec.sourced import Sourced
from roofline.spec.vocab import TierUse

GB = 1e9


def _tier(use: str, capacity_gb: float = 64.0, measured: float = 1000.0, theoretical: float = 1600.0) -> MemoryTier:
    given_ = lambda v: Sourced(value=v, kind="datasheet", source="test")  # noqa: E731
    return MemoryTier(name="hbm2e", use=use, capacity_gb=given_(capacity_gb), theoretical_gb_per_s=given_(theoretical),
                      measured_gb_per_s=Sourced(value=measured, kind="measured", source="test"))


def test_shares_by_hand():
    # flat mode: 64 GB of a 141 GB set in HBM
    assert tier_share(TierUse.BEFORE_DRAM, 141 * GB, 64 * GB, 0) == pytest.approx(64 / 141)
    assert tier_share(TierUse.BEFORE_DRAM, 16 * GB, 64 * GB, 0) == 1.0
    # CXL after 512 GB of DRAM: a 700 GB set reads 188 GB from it
    assert tier_share(TierUse.AFTER_DRAM, 700 * GB, 256 * GB, 512 * GB) == pytest.approx(188 / 700)
    assert tier_share(TierUse.AFTER_DRAM, 400 * GB, 256 * GB, 512 * GB) == 0.0
    # a direct-mapped cache of 64 GB: all of 60 GB, (128 - 100) / 100 of 100 GB, none from 128 GB on
    assert tier_share(TierUse.CACHE, 60 * GB, 64 * GB, 0) == 1.0
    assert tier_share(TierUse.CACHE, 100 * GB, 64 * GB, 0) == pytest.approx(0.28)
    assert tier_share(TierUse.CACHE, 141 * GB, 64 * GB, 0) == 0.0
    # read one after the other: 45% at 1,000 GB/s, 55% at 250 GB/s
    assert blended_bandwidth(0.45, 1000, 250) == pytest.approx(1 / (0.45 / 1000 + 0.55 / 250))


@given(st.sampled_from(list(TierUse)), st.floats(1e6, 1e13), st.floats(1e9, 1e12), st.floats(1e9, 1e12),
       st.floats(1e9, 1e13), st.floats(1e9, 1e13), st.floats(0.01, 0.99))
def test_the_blend_lies_between_its_tiers(use, resident, cap, dram, b_t, b_d, w):
    """Read one after the other, a stream is never faster than the faster tier nor slower than the slower; read at
    once (interleaved), never slower than the slower and never faster than both together."""
    s = tier_share(use, resident, cap, dram, w if use is TierUse.INTERLEAVE else None)
    assert 0.0 <= s <= 1.0
    at_once = use is TierUse.INTERLEAVE
    b = blended_bandwidth(s, b_t, b_d, at_once=at_once)
    top = (b_t + b_d) if at_once else max(b_t, b_d)
    assert min(b_t, b_d) * (1 - 1e-12) <= b <= top * (1 + 1e-12)


def _decode_ms(platform, model: str) -> tuple[float, float]:
    r = roofline.estimate(model, platform, precision="bf16", baseline="bf16", phase="decode", batch=1, context=1024,
                          sockets=1, instance_cores=int(platform.cores_per_socket.value))
    p = r.precisions["bf16"]
    return p.step_time_s * 1e3, p.bound_step_time_s * 1e3


def test_a_model_larger_than_hbm_is_priced_on_both():
    """Sapphire Rapids with 64 GB of HBM a socket at 1,000 GB/s measured (1,600 theoretical) beside its DDR5:
    Llama-3.1-8B in BF16 (16 GB) runs from HBM alone in flat and cache mode; the 70B model (141 GB) reads
    64/141 of its bytes from HBM in flat mode and none in cache mode (it is more than twice the cache); CXL after
    512 GB of DRAM holds neither."""
    spr = roofline.catalog.load_platform("spr")
    base8, base70 = _decode_ms(spr, "llama-3.1-8b"), _decode_ms(spr, "llama-3.1-70b")
    flat = dataclasses.replace(spr, memory_tiers=(_tier("before-dram"),))
    cache = dataclasses.replace(spr, memory_tiers=(_tier("cache"),))
    cxl = dataclasses.replace(spr, memory_tiers=(_tier("after-dram", capacity_gb=256, measured=100, theoretical=128),))
    for p in (flat, cache):
        t8 = _decode_ms(p, "llama-3.1-8b")
        assert t8[0] < base8[0] / 3  # 1,000 GB/s against the DDR5's 243
    f70, c70 = _decode_ms(flat, "llama-3.1-70b"), _decode_ms(cache, "llama-3.1-70b")
    assert c70 == pytest.approx(base70)
    assert base70[0] * 0.6 < f70[0] < base70[0] * 0.7  # 45% of the bytes 4x faster: 0.55 + 0.45 / 4 = 0.66
    assert _decode_ms(cxl, "llama-3.1-70b") == pytest.approx(base70)
    # the bound prices the tier at its theoretical figure
    assert f70[1] < base70[1]


def test_a_tier_is_listed_and_said():
    spr = roofline.catalog.load_platform("spr")
    flat = dataclasses.replace(spr, name="spr-hbm", memory_tiers=(_tier("before-dram"),))
    r = roofline.estimate("llama-3.1-70b", flat, precision="bf16", baseline="bf16", phase="decode", batch=1,
                          context=1024, sockets=1, instance_cores=56)
    notes = " ".join(r.precisions["bf16"].notes)
    assert "hbm2e (before-dram, 64 GB a socket): 46% of the step's 139.3 GB resident per socket" in notes
    used = {i.what for i in r.inputs}
    assert any(w.startswith("memory_tiers[0].measured_gb_per_s") for w in used)
    assert any(w.startswith("memory_tiers[0].capacity_gb") for w in used)


def test_a_tier_without_its_datasheet_bandwidth_is_refused():
    with pytest.raises(ValueError, match="theoretical_gb_per_s"):
        MemoryTier(name="hbm2e", use="before-dram", capacity_gb=Sourced(value=64, kind="datasheet", source="x"),
                   measured_gb_per_s=Sourced(value=1000, kind="measured", source="x"))
    spr = roofline.catalog.load_platform("spr")
    with pytest.raises(ValueError, match="one tier"):
        dataclasses.replace(spr, memory_tiers=(_tier("before-dram"), _tier("after-dram")))


def test_the_share_is_a_whole_step_s_resident_bytes():
    """The 70B model's resident bytes per socket: its BF16 weights and one sequence's KV cache of the 1,024 tokens
    the step reads (80 layers x 8 KV heads x 128 x 2 (K and V) x 2 bytes each)."""
    from roofline.model.build import LayoutSpec, build_steps
    from roofline.model.workload import make_workload

    spr = dataclasses.replace(roofline.catalog.load_platform("spr"), memory_tiers=(_tier("before-dram"),))
    model = roofline.catalog.load_model("llama-3.1-70b")
    steps = build_steps(spr, make_workload(model, "decode", 1, 1, context=1024), ["bf16"],
                        layout=LayoutSpec(sockets=1, instance_cores=56))
    step = steps.steps[0].step
    kv = 80 * 8 * 128 * 2 * 2 * 1024
    weights = float(step.weight_bytes)
    assert float(np.ravel(step.resident_bytes)[0]) == pytest.approx(weights + kv, rel=1e-9)
    assert float(np.ravel(step.tier_share)[0]) == pytest.approx(64e9 / (weights + kv), rel=1e-9)


def test_interleaved_pages_are_read_at_once_as_stream_measured():
    """STREAM on one socket with one CXL expander (the weighted-interleave series' cover letter, Gregory Price,
    https://lore.kernel.org/linux-mm/20240202170238.90004-1-gregory.price@memverge.com/, Triad MB/s): DRAM alone
    208,523.8, the CXL memory alone 24,484.6, pages interleaved 1:1 48,727.5 and 9:1 217,671.5. Read at once, the
    slower share bounds the stream, 1 / max(s / B_t, (1 - s) / B_d): 49.0 and 231.7 GB/s, within 1% and 7%; read one
    after the other (the harmonic blend) the 1:1 case would be 43.8, 10% low."""
    dram, cxl = 208.5238, 24.4846
    one_to_one = blended_bandwidth(tier_share(TierUse.INTERLEAVE, 1e9, 0, 0, 0.5), cxl, dram, at_once=True)
    nine_to_one = blended_bandwidth(tier_share(TierUse.INTERLEAVE, 1e9, 0, 0, 0.1), cxl, dram, at_once=True)
    assert one_to_one == pytest.approx(48.7275, rel=0.01)
    assert nine_to_one == pytest.approx(217.6715, rel=0.07)
    assert blended_bandwidth(0.5, cxl, dram) < 48.7275 * 0.91
    with pytest.raises(ValueError, match="interleave_share"):
        _tier("interleave")
    tier = dataclasses.replace(_tier("before-dram"), use=TierUse.INTERLEAVE, interleave_share=0.1)
    assert tier.interleave_share == 0.1


@pytest.mark.parametrize("line, field", [('use = "foo"', "memory_tiers.0.use"),
                                         ('capacity_gb = { value = nan, kind = "datasheet", source = "x" }',
                                          "memory_tiers.0.capacity_gb"),
                                         ('capacity_gb = { value = 1e300, kind = "datasheet", source = "x" }',
                                          "memory_tiers.0.capacity_gb"),
                                         ("interleave_share = 0.5", "memory_tiers.0.interleave_share")])
def test_a_bad_tier_in_a_platform_file_is_one_line(tmp_path, line, field):
    from clitools import REPO, run_cli

    text = (REPO / "platforms" / "xeon-max-9480.toml").read_text()
    head, tier = text.split("[[memory_tiers]]\n", 1)
    key = line.split(" = ")[0]
    body, rest = tier.split("\n[llc]", 1)
    body = "\n".join(line if x.startswith(key + " = ") else x for x in body.split("\n"))
    if line not in body:
        body = line + "\n" + body
    path = tmp_path / "bad.toml"
    path.write_text(head + "[[memory_tiers]]\n" + body + "\n[llc]" + rest)
    proc = run_cli("estimate", "--model", "llama-3.1-8b", "--cpu", str(path), "--phase", "decode")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and field in proc.stderr and "bad.toml" in proc.stderr
