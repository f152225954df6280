"""Modelling constants of the attainable ceiling. Each is a sourced value, listed among an estimate's
``inputs`` when it is used.

The attainable ceiling prices DRAM at STREAM-class bandwidth: a platform file's measured figure
where it has one, else its theoretical bandwidth times :data:`STREAM_FRACTION`, the fraction of the
theoretical figure that published all-core read and triad measurements of server CPUs reach. With
fewer than a socket's cores busy its clock slides from the single-core boost towards the nominal
all-core clock (:data:`TURBO_SLIDE`).
"""

from __future__ import annotations

from roofline.spec.sourced import Sourced

#: sustained all-core DRAM bandwidth over the theoretical (channels x MT/s x 8 bytes), where the platform
#: file has no measured figure
STREAM_FRACTION = Sourced(
    value=0.78, kind="derived",
    source="the median of three published all-core bandwidths over their theoretical figure: Intel MLC "
           "'Stream-triad like' 320.2 GB/s on 2x Xeon Platinum 8360Y, DDR4-3200 x 8 channels (0.782; KU Leuven "
           "wICE, https://github.com/hpcleuven/VscDocumentation, source/leuven/tier2_hardware/wice_hardware); "
           "BSC Mess 100% read 240.6 and 263.5 GB/s per socket on Xeon Platinum 8480+, DDR5-4800 x 8 channels "
           "with 16 GB and 64 GB DIMMs (0.783 and 0.858; MareNostrum 5, https://github.com/bsc-mem/Mess-Results, "
           "Systems/MN5/MN5-GPP)")

#: the attainable clock with ``n`` of a socket's ``N`` cores busy (``1 <= n < N``): from the single-core boost
#: ``f_1`` at one core to the nominal all-core clock ``f_N`` at all of them,
#: ``f_n = f_1 - (f_1 - f_N) ((n - 1) / (N - 1)) ** TURBO_SLIDE`` (1: a straight line)
TURBO_SLIDE = Sourced(
    value=1.0, kind="assumed",
    source="no per-active-core licence table is in the platform files; Intel's turbo 'is a sliding scale, with "
           "the peak turbo used when only one or two cores are active, sliding down to a minimum frequency that "
           "may be the ‘base’ frequency or just above it' (AnandTech, Intel Skylake-EP vs AMD EPYC 7000, page 8, "
           "https://www.anandtech.com/show/11544/intel-skylake-ep-vs-amd-epyc-7000-cpu-battle-of-the-decade/8), "
           "taken as a straight line; before, one idle core put a socket at the single-core boost (the 8380's "
           "attainable FP32 clock was 3.4 GHz with 39 of 40 cores busy, 2.3 GHz with 40)")
