"""Energy of inference on a busy server, one small formula each (SI units: W, J, s; prices per kWh and per hour).

A busy server is assumed to draw its sockets' TDP plus whatever else it powers (an overhead the user gives):
the ceilings run every core at the all-core clock, a load the TDP bounds. Energy per unit of work is that power
over the rate; its cost is the energy at a price per kWh.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

if TYPE_CHECKING:
    import numpy as np

#: joules in one kilowatt-hour
JOULES_PER_KWH = 3.6e6


def server_power_w(sockets: int, tdp_w: float, overhead_w: float = 0.0) -> float:
    """What a busy server draws: ``P = sockets x tdp_w + overhead_w``.

    sockets: sockets busy; tdp_w: each one's TDP (W); overhead_w: the rest of the server (DRAM, fans, PSU losses)."""
    return sockets * tdp_w + overhead_w


@overload
def joules_per_unit(power_w: float, units_per_s: float) -> float: ...
@overload
def joules_per_unit(power_w: float, units_per_s: np.ndarray) -> np.ndarray: ...
def joules_per_unit(power_w: float, units_per_s: float | np.ndarray) -> float | np.ndarray:
    """Energy per request, sequence or token: ``E = P / rate`` (J).

    power_w: the server's draw (W); units_per_s: what it completes per second at that draw (> 0)."""
    return power_w / units_per_s


def energy_cost_per_million(joules: float, price_per_kwh: float) -> float:
    """Energy cost of a million units: ``C_E = E x 1e6 / 3.6e6 x price_per_kwh``.

    joules: energy per unit (J); price_per_kwh: the electricity price (currency per kWh)."""
    return joules * 1e6 / JOULES_PER_KWH * price_per_kwh

