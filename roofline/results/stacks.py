"""``roofline stacks``: the stack profiles, and one profile's values beside their fit ranges."""

from __future__ import annotations

from dataclasses import dataclass

from roofline.spec import PYDANTIC_CONFIG
from roofline.spec.stack import Accuracy


@dataclass(frozen=True)
class ProfileValue:
    __pydantic_config__ = PYDANTIC_CONFIG

    table: str
    """the profile's table holding it (empty: a top-level value)"""
    name: str
    value: float
    unit: str
    kind: str
    """derived (fitted), measured, assumed, datasheet"""
    lower: float
    upper: float
    """the range the fit may give it"""
    at_bound: str | None
    """lower or upper: a fitted value on that end of its range (the figures did not pin it down); null otherwise"""
    figures: int | None
    """a path class's: the leave-one-platform-out figures that ran on it (null: not a class, or none)"""
    platforms: int | None
    source: str

    @property
    def label(self) -> str:
        return f"{self.table}.{self.name}" if self.table else self.name


@dataclass(frozen=True)
class StackValues:
    __pydantic_config__ = PYDANTIC_CONFIG

    name: str
    file: str
    kernels: str | None
    """the kernel table its GGUF rows are priced from"""
    records: int
    accuracy: Accuracy | None
    values: list[ProfileValue]
    at_bound: list[str]
    """the fitted values on a bound of their range"""
    form: str | None = None
    """the form its values are fitted in (:class:`~roofline.spec.stack.FitForm`'s label; null: none stored)"""
    folds: dict[str, str] | None = None
    """per CPU of its records, the form of the profile fitted without it, where it differs from ``form``"""


@dataclass(frozen=True)
class StackSummary:
    __pydantic_config__ = PYDANTIC_CONFIG

    name: str
    file: str
    records: int
    figures: int | None
    platforms: int | None
    median_abs_error: float | None
    """leave-one-platform-out"""
    fitted: int
    at_bound: int
