"""A platform's power figures per socket: the ``[power]`` table of a platform file.

    [power]
    tdp_w = { value = 350, kind = "datasheet", source = "ARK 'TDP: 350 W' (...)" }
    idle_w = { unknown = "no source states the idle package power of this SKU" }

What a server draws beyond its sockets (DRAM, fans, disks, the power supply's losses) is not here: the
energy figures count the sockets only, unless ``--server-overhead-w`` adds a figure per server.
"""

from __future__ import annotations

from dataclasses import dataclass

from roofline.spec import PYDANTIC_CONFIG
from roofline.spec.limits import check_sourced
from roofline.spec.sourced import UNMEASURED, Sourced

NOT_GIVEN = Sourced(unknown="not given")


@dataclass(frozen=True)
class Power:
    """Per socket: the thermal design power, the idle power where a source states it, a measured package power."""

    __pydantic_config__ = PYDANTIC_CONFIG

    tdp_w: Sourced = NOT_GIVEN
    """per socket, W: the datasheet TDP (the sustained package power at the all-core base clock under load)"""
    idle_w: Sourced = NOT_GIVEN
    """per socket, W: package power with the cores idle, where a source states it"""
    measured_w: Sourced = UNMEASURED
    """per socket, W: package power measured under an inference load (with its tool: turbostat, RAPL, ipmitool)"""

    def __post_init__(self) -> None:
        for name in ("tdp_w", "idle_w", "measured_w"):
            check_sourced("platform.power.*", getattr(self, name), name)
        if self.tdp_w.known and self.idle_w.known and self.idle_w.known_value > self.tdp_w.known_value:
            raise ValueError(f"idle_w: {self.idle_w.value:g} W is above the TDP {self.tdp_w.value:g} W; an idle "
                             "socket draws less than a loaded one")
