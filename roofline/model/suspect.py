"""A measurement faster than its ceiling is an error in the model's inputs, not a kernel beating
physics: which input does it contradict? The one that bounds the row:

- compute-bound: the peak, ``cores x clock x ops per cycle``. A datasheet's ops per cycle is the ISA's
  rate, a fact; the clock it is priced at is what a datasheet gets wrong (a VM's cores boost above
  it), so the clock is suspect. A measured or assumed ops per cycle is suspect itself (a probe that
  timed a slower kernel than the one the model runs: an emulated one, or one that saturated);
- bound by a memory level: that level's bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from roofline.model.step import BOUNDS, StepEval
from roofline.spec.platform import Platform
from roofline.spec.sourced import Sourced
from roofline.spec.vocab import Bound, SuspectInput


@dataclass(frozen=True)
class Suspect:
    input: SuspectInput
    text: str
    """the input named with its value and where it came from"""


def _where(s: Sourced) -> str:
    source = (s.source or "").split(";")[0]
    return f"{s.kind}: {source[:140]}" if source else str(s.kind)


def _bandwidth(platform: Platform, level: Bound) -> str:
    """The bandwidth a level is priced at, with its unit and source."""
    if level is Bound.L2:
        l2 = platform.l2
        if l2 is not None and l2.read_gb_per_s.known:
            return f"{l2.read_gb_per_s.value:g} GB/s per socket ({_where(l2.read_gb_per_s)})"
        if l2 is not None and l2.read_bytes_per_cycle.known:
            return f"{l2.read_bytes_per_cycle.value:g} bytes per cycle per core ({_where(l2.read_bytes_per_cycle)})"
        return "not given"
    if level is Bound.LLC:
        b = platform.llc.read_gb_per_s
    else:
        b = platform.dram.measured_gb_per_s if platform.dram_kind() == "measured" else platform.dram.theoretical_gb_per_s
    return f"{b.value:g} GB/s per socket ({_where(b)})" if b.known else "not given"


def suspect_input(platform: Platform, path: str, bound: Bound | str) -> Suspect:
    """The input of ``platform`` that a measurement above a ceiling bound by ``bound`` (on compute path
    ``path`` when compute-bound) contradicts."""
    bound = Bound(bound)
    if bound is Bound.COMPUTE:
        c = platform.compute[path]
        ops, clock = c.ops_per_cycle, platform.frequency_ghz[c.isa_class]
        if ops.kind == "datasheet":
            return Suspect(SuspectInput.CLOCK, f"the clock {path} is priced at (frequency_ghz.{c.isa_class} "
                                               f"{clock.value:g} GHz, {_where(clock)}; its {ops.value:g} ops per "
                                               "cycle is the ISA's datasheet rate)")
        return Suspect(SuspectInput.PEAK, f"the peak, {path}'s {ops.value:.4g} ops per cycle ({_where(ops)})")
    return Suspect(SuspectInput.BANDWIDTH, f"the {bound.value} bandwidth, {_bandwidth(platform, bound)}")


def gemm_bound(step: StepEval) -> Bound:
    """What most of a step's GEMM time is bound by."""
    g = step.gemm
    t = g.count * g.time
    by = [float(np.sum(t * (g.bound == b))) for b in range(len(BOUNDS))]
    return BOUNDS[int(np.argmax(by))]


def step_bound(step: StepEval) -> Bound:
    """What most of a step's time (GEMMs and the rest) is bound by."""
    return BOUNDS[int(step.bound)]


def violation_text(measured: str, ceiling: str, suspect: Suspect) -> str:
    """The flag of a row above its ceiling."""
    return (f"ceiling violation: measured {measured}, faster than the ceiling's {ceiling}: an error in the model, "
            f"not the kernel; suspect {suspect.text}")
