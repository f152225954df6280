"""Number formatting for tables: decimal units (MB = 1e6 bytes), a few significant figures."""

from __future__ import annotations

import math


def sig(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant figures, without scientific notation for table-sized numbers
    (``0.0001`` to ``9,999,999``); beyond them, ``7.38e12`` (a cell stays narrow at any value)."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    mag = math.floor(math.log10(abs(x)))
    if mag >= 7 or mag <= -5:
        mantissa = float(f"{x / 10 ** mag:.{digits - 1}f}")
        if abs(mantissa) >= 10:  # rounding carried into the next power of ten
            mantissa, mag = mantissa / 10, mag + 1
        return f"{mantissa:.{digits - 1}f}e{mag}"
    decimals = max(digits - 1 - mag, 0)
    return f"{x:,.{decimals}f}"


def tera(x: float) -> str:
    return sig(x / 1e12)


def giga(x: float) -> str:
    return sig(x / 1e9)


def mega(x: float) -> str:
    return sig(x / 1e6)


def ms(seconds: float) -> str:
    return sig(seconds * 1e3)


def ratio(x: float) -> str:
    return f"{x:.2f}x"


def pct(x: float) -> str:
    return f"{100 * x:,.0f}%" if x >= 10 else f"{100 * x:.1f}%"


def realistic_basis(calibration: str | None, stack: str | None, accuracy, bands=None) -> str:
    """Where a realistic figure comes from, and how far off it is expected to be (``accuracy``: the stack
    profile's leave-one-platform-out error, or None; ``bands``: each precision's
    :class:`~roofline.results.estimate.ErrorBand` or None, named where wider than the profile's band or on a
    class no record's figure ran on)."""
    if calibration:
        return f"calibration {calibration}: this host's fitted efficiencies"
    if accuracy is not None and accuracy.figures == 0:
        return f"stack {stack}, no measured error band (no figure scored leave-one-platform-out)"
    if accuracy is not None:
        if accuracy.band != accuracy.median_abs_error:
            basis = f"+/-{accuracy.band:.0%} cross-stack: {stack} is fitted on {accuracy.platforms} CPU(s)"
        else:
            basis = f"+/-{accuracy.median_abs_error:.0%} on unseen CPUs, {accuracy.figures} figures, {stack}"
        return "; ".join([basis, *class_bands(bands or {}, accuracy.band)])
    if stack:
        return f"stack {stack}, no measured error band"
    return "no stack profile: the ceiling plus the roofline-priced overhead terms"


def loo_said(accuracy) -> str:
    """A leave-one-platform-out accuracy in words: ``median 12%, worst 40%, 30 figures on 5 CPUs``, or that no
    figure was scored (a median of no figures is not 0%)."""
    if accuracy is None or accuracy.figures == 0:
        return "no figure scored leave-one-platform-out"
    return (f"median {accuracy.median_abs_error:.0%}, worst {accuracy.worst_abs_error:.0%}, {accuracy.figures} "
            f"figures on {accuracy.platforms} CPUs")


def class_bands(bands, band: float) -> list[str]:
    """The precisions (``bands``: name -> its :class:`~roofline.results.estimate.ErrorBand` or None) whose GEMMs
    run on a compute path class that quotes a wider band than the stack's (``band``), or that none of the stack's
    records ran on (its efficiency is the profile's fallback)."""
    out = []
    for name, b in bands.items():
        if b is None:
            continue
        if not b.class_figures:
            out.append(f"{name} on {b.path_class}: no record's figure ran on it, " + (
                "no band" if b.realistic_error is None else f"the cross-stack band +/-{b.realistic_error:.0%}"))
        elif b.realistic_error > band:
            out.append(f"{name} on {b.path_class} +/-{b.realistic_error:.0%} ({b.class_figures} "
                       f"figure{'s' if b.class_figures > 1 else ''}, {b.class_platforms} CPU(s))")
    return out


def differs_by_class(bands, accuracy) -> bool:
    """Whether any precision (``bands``: name -> its ErrorBand or None) quotes another band than its stack's, or
    runs on a class no record's figure ran on: then a headline gives each precision's band (``+/-``)."""
    return accuracy is not None and any(
        b is not None and (b.realistic_error != accuracy.band or not b.class_figures) for b in bands.values())
