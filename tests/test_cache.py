"""The validated-spec cache: same bytes hit, changed bytes miss, a broken entry is ignored."""

from __future__ import annotations

import pytest

from roofline.catalog import builtin_dir
from roofline.catalog.cache import load_validated
from roofline.errors import SpecError
from roofline.files.reading import parse_toml
from roofline.spec.platform import Platform


def load(path):
    return load_validated(Platform, path, lambda raw: parse_toml(raw, path))


@pytest.fixture
def spec(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ROOFLINE_NO_CACHE", raising=False)
    path = tmp_path / "gnr.toml"
    path.write_text((builtin_dir("platforms") / "gnr.toml").read_text())
    return path


def entries(spec):
    return sorted((spec.parent / "cache" / "specs").glob("*.json"))


def test_hit_equals_fresh_validation(spec):
    fresh = load(spec)
    assert len(entries(spec)) == 1
    cached = load(spec)
    assert cached == fresh and cached is not fresh
    assert isinstance(cached.compute["int8-amx"].requires, tuple)


def test_changed_file_misses_and_is_validated(spec):
    load(spec)
    spec.write_text(spec.read_text().replace("value = 1000,", "value = 10,"))  # LLC slower than DRAM
    with pytest.raises(SpecError, match="llc.read_gb_per_s"):
        load(spec)


def test_corrupt_entry_is_ignored(spec):
    load(spec)
    (entry,) = entries(spec)
    entry.write_text("{not json")
    assert load(spec).name == "gnr"


def test_cached_entry_still_runs_the_physical_checks(spec):
    import json

    load(spec)
    (entry,) = entries(spec)
    data = json.loads(entry.read_text())
    data["cores_per_socket"]["value"] = -1  # a tampered entry is rebuilt and checked, not trusted blindly
    entry.write_text(json.dumps(data))
    assert load(spec).cores_per_socket.value == 128  # the bad entry failed its checks: validated afresh


def test_cache_can_be_turned_off(spec, monkeypatch):
    monkeypatch.setenv("ROOFLINE_NO_CACHE", "1")
    load(spec)
    assert entries(spec) == []


@pytest.mark.parametrize("value, off", [("1", True), ("yes", True), ("true", True), ("0", False), ("false", False),
                                        ("No", False), ("", False), (None, False)])
def test_no_cache_is_off_only_when_set_to_something_true(spec, monkeypatch, value, off):
    """``ROOFLINE_NO_CACHE=0`` leaves the cache on: a zero is not a request to turn it off."""
    from roofline.catalog.cache import cache_off

    if value is None:
        monkeypatch.delenv("ROOFLINE_NO_CACHE", raising=False)
    else:
        monkeypatch.setenv("ROOFLINE_NO_CACHE", value)
    assert cache_off() is off
    load(spec)
    assert len(entries(spec)) == (0 if off else 1)


def test_every_catalog_model_read_from_the_cache_equals_its_fresh_validation(tmp_path, monkeypatch):
    """A cached spec is rebuilt with the types validation gives: an optional tuple (a model's windowed layers) comes
    back a tuple, not the JSON's list, so a cached model equals a freshly validated one."""
    from roofline.spec.model import ModelSpec

    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ROOFLINE_NO_CACHE", raising=False)
    for path in sorted(builtin_dir("models").glob("*.toml")):
        fresh = load_validated(ModelSpec, path, lambda raw, p=path: parse_toml(raw, p))  # validated, then stored
        cached = load_validated(ModelSpec, path, lambda raw, p=path: parse_toml(raw, p))  # read back
        assert cached == fresh, path.name
        if fresh.sliding_window_layers is not None:
            assert isinstance(cached.sliding_window_layers, tuple), path.name
