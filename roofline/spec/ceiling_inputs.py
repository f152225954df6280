"""Modelling constants of the attainable ceiling. Each is a sourced value, listed among an estimate's
``inputs`` when it is used.

The attainable ceiling prices DRAM at STREAM-class bandwidth: a platform file's measured figure
where it has one, else its theoretical bandwidth times :data:`STREAM_FRACTION`, the fraction of the
theoretical figure that published all-core read and triad measurements of server CPUs reach.
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
