"""A number with its provenance.

Every hardware number in a spec file says where it came from:

    measured_gb_per_s = { value = 85.7, kind = "measured", source = "roofline probe", date = "2026-11-30", threads = 16 }

or says that it is not known, and why:

    read_gb_per_s = { unknown = "no published LLC bandwidth measurement; run `roofline probe`" }
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from roofline.spec import PYDANTIC_CONFIG

#: How a number was obtained. ``assumed``, ``derived`` and ``paper`` numbers are listed
#: among an estimate's inputs, so nobody mistakes them for datasheet facts.
SourceKind = Literal["datasheet", "measured", "paper", "derived", "assumed"]


@dataclass(frozen=True)
class Sourced:
    """A value with its source, or the reason it is unknown."""

    __pydantic_config__ = PYDANTIC_CONFIG

    value: float | None = None
    """the number, in the unit the field name gives"""
    kind: SourceKind | None = None
    """datasheet | measured | paper | derived | assumed"""
    source: str | None = None
    """where the value comes from: a URL, a document and section, or the measuring tool"""
    unknown: str | None = None
    """instead of a value: why it is not known"""
    date: str | None = None
    """measured values: the date of the measurement"""
    tool: str | None = None
    """measured values: the tool that measured it"""
    threads: int | None = None
    """measured values: the threads used"""

    def __post_init__(self) -> None:
        if self.value is None:
            if not self.unknown:
                raise ValueError("give either value (with kind and source) or unknown = '<why>'")
            return
        if self.unknown:
            raise ValueError("has both a value and 'unknown'; keep one")
        if not math.isfinite(self.value):
            raise ValueError(f"value must be a finite number, got {self.value}")
        if self.kind is None or not self.source:
            raise ValueError("a value needs kind (datasheet|measured|paper|derived|assumed) and source")

    @property
    def known(self) -> bool:
        return self.value is not None

    @property
    def known_value(self) -> float:
        """The value of a number known by construction (checked ``known``, or validated so); an unknown one is a
        TypeError, as arithmetic on its None would be."""
        if self.value is None:
            raise TypeError(f"unknown number used as a value ({self.unknown})")
        return self.value

    def describe(self) -> str:
        """One line: ``kind: source`` (with date, threads and tool for measurements)."""
        if not self.known:
            return f"unknown: {self.unknown}"
        extra = ", ".join(
            f"{k} {v}" for k, v in (("date", self.date), ("threads", self.threads), ("tool", self.tool)) if v
        )
        return f"{self.kind}: {self.source}" + (f" ({extra})" if extra else "")


UNMEASURED = Sourced(unknown="not measured")


def bare_values(table: Mapping[str, Sourced]) -> dict[str, float]:
    """A table of known sourced numbers (a stack profile's efficiencies, say) as its bare values, key by key."""
    return {k: v.known_value for k, v in table.items()}
