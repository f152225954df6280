"""Where an input number came from: the row every result's list of inputs holds."""

from __future__ import annotations

from dataclasses import dataclass

from roofline.spec import PYDANTIC_CONFIG


@dataclass(frozen=True)
class Provenance:
    """Where an input number came from."""

    __pydantic_config__ = PYDANTIC_CONFIG

    what: str
    value: str
    kind: str
    """datasheet | measured | paper | derived | assumed"""
    source: str
