"""The probe's clock reading on this host, compiled and run: a clock no x86 core reaches means the chain is wrong.

The chain was a run of dependent ``add reg, imm``; Golden Cove and later Intel cores fold those at rename, and on
an Emerald Rapids guest it read 6 to 12 GHz (validation/results/emr-2vcpu-clock.txt). A chain of dependent
multiplies (3 cycles each on every Intel core since Nehalem and every Zen) reads the clock on all of them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

native = pytest.importorskip("roofline.validation.native")


@pytest.fixture(scope="module")
def so(tmp_path_factory: pytest.TempPathFactory):
    try:
        return native.load(Path(tmp_path_factory.mktemp("native")))
    except native.NativeUnavailable as e:
        pytest.skip(str(e))


def test_clock_is_one_a_core_can_run_at(so) -> None:
    # the fastest x86 cores shipped boost to about 6.2 GHz; no server or desktop core runs below 0.4 GHz under load
    hz = native.core_clock_hz(so, 1, seconds=0.1)
    assert 0.4e9 < hz < 6.5e9, hz

