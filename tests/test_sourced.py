"""Sourced.known_value: the value of a known number, a TypeError on an unknown one (as arithmetic on None was)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from roofline.spec.sourced import Sourced, bare_values


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_known_number_reads_as_its_value(x):
    s = Sourced(value=x, kind="assumed", source="a test")
    assert s.known_value == x and s.known_value is s.value


def test_an_unknown_number_is_a_type_error_naming_why():
    s = Sourced(unknown="no published figure")
    with pytest.raises(TypeError, match="no published figure"):
        s.known_value  # noqa: B018


def test_bare_values_are_the_known_values_key_by_key():
    table = {"a": Sourced(value=0.5, kind="derived", source="x"), "b": Sourced(value=2.0, kind="measured", source="y")}
    assert bare_values(table) == {"a": 0.5, "b": 2.0}
    with pytest.raises(TypeError):
        bare_values({"c": Sourced(unknown="not fitted")})
