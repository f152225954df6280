"""The probe within its time budget, and its peaks on the path a real model runs, on a simulated AVX2-only
host (a Zen 1 guest: family 23, no AVX-512, no VNNI, no native BF16) with fake kernels and a fake clock:
no real timing here."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from roofline.validation.budget import PROBE_BUDGET_S, TIMED_CALLS, Deadline, timed
from roofline.validation.gemm_peaks import (
    TRIAL_SIZE,
    Candidate,
    Trial,
    bf16_native,
    int8_native,
    measure,
    per_call_budget,
    pick,
    sized,
)
from roofline.validation.host import Cache, HostInfo
from roofline.validation.probe import Level, ProbeResult, gemm_peaks, probe_platform

from roofline.catalog import load_model, load_platform
from roofline.catalog.write import platform_toml
from roofline.model.estimate import EstimateQuery, estimate

ZEN1_FLAGS = {f: f in ("avx2", "fma") for f in ("avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
                                                 "avx_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_int8",
                                                 "amx_bf16", "amx_fp16")}
ZEN1 = HostInfo(cpu_model="AMD EPYC Processor (with IBPB)", vendor="AuthenticAMD", family=23, model=1,
                microarchitecture="Zen (Naples)", sockets=1, cores=2, threads=2, numa_nodes=1, mhz=2495.3,
                flags=ZEN1_FLAGS, caches=[Cache(1, "Data", 32 * 1024, 1), Cache(2, "Unified", 512 * 1024, 1),
                                          Cache(3, "Unified", 16 * 2**20, 2)],
                hypervisor=True, memory_kib=8_000_000)


class FakeClock:
    """Seconds that pass only when a fake kernel runs."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def fake(clock: FakeClock, name: str, dtype: str, gops: float, *, error: float = 0.0, emulated: bool = False,
         calls: list | None = None, overhead_s: float = 0.0) -> Candidate:
    """A kernel that takes 2 size^3 / (gops x 1e9) seconds of fake time per call (plus ``overhead_s``)."""

    def build(size: int) -> Trial:
        def call():
            clock.now += 2.0 * size**3 / (gops * 1e9) + overhead_s
            if calls is not None:
                calls.append(size)
        return Trial(call, lambda y: error)

    return Candidate(name, dtype, build, 1e-3 if dtype == "int8" else 5e-2, emulated=emulated)


def zen1_candidates(clock: FakeClock, host: HostInfo = ZEN1) -> list[Candidate]:
    """The probe's candidates on the Zen 1 guest, at the rates measured there (DESIGN: torch 2.13, 2 vCPU)."""
    no_bf16, no_vnni = not bf16_native(host), not int8_native(host)
    return [fake(clock, "aten.mm (fp32)", "fp32", 69.5), fake(clock, "aten.linear (fp32)", "fp32", 66.0),
            fake(clock, "aten.addmm (fp32)", "fp32", 64.0),
            fake(clock, "aten.mm (bf16)", "bf16", 0.7, emulated=no_bf16),
            fake(clock, "aten.linear (bf16)", "bf16", 11.0, emulated=no_bf16),
            fake(clock, "aten.addmm (bf16)", "bf16", 0.7, emulated=no_bf16),
            fake(clock, "onednn.qlinear_pointwise (u8 x s8)", "int8", 73.6),
            fake(clock, "onednn.qlinear_pointwise (s8 x s8)", "int8", 37.0),
            fake(clock, "aten._int_mm (s8 x s8)", "int8", 3.8, emulated=no_vnni)]


def test_sizing_follows_the_cube_law_of_one_trial_call():
    # 0.7 Gops/s: 256^3 takes 47.9 ms, so 2048^3 would take 24.5 s
    trial = 2 * 256**3 / 0.7e9
    assert sized(2048, trial, per_call_s=30.0) == 2048
    fits = 256 * (0.8 / trial) ** (1 / 3)  # 652: the largest multiple of 128 below it
    assert sized(2048, trial, per_call_s=0.8) == 640 and 640 <= fits < 768
    assert sized(2048, trial, per_call_s=0.001) == TRIAL_SIZE  # never below the trial's size
    assert sized(2048, 2 * 256**3 / 70e9, per_call_s=0.8) == 2048
    assert sized(1024, 0.0, per_call_s=0.1) == 1024


def test_a_slow_emulated_kernel_is_measured_on_a_smaller_shape_and_says_so():
    clock = FakeClock()
    calls: list[int] = []
    slow = fake(clock, "aten.mm (bf16)", "bf16", 0.7, emulated=True, calls=calls)
    m = measure(slow, 2048, per_call_s=0.8, clock=clock)
    assert calls[:2] == [TRIAL_SIZE, TRIAL_SIZE] and set(calls[2:]) == {640}  # one warm-up, one trial call, then 640^3
    assert m.size == 640 and m.reduced and m.target_size == 2048
    assert m.ops_per_s == pytest.approx(0.7e9) and m.trial_s == pytest.approx(2 * 256**3 / 0.7e9)
    text = m.describe()
    assert text.startswith("aten.mm (bf16) 0.7 Gops/s at 640^3 (emulated;") and "24.5 s at 2048^3" in text
    assert "smaller shape" in text
    # the timing at 640^3: 2 warm-ups and 3 trials of one call each (each call over the 0.3 s minimum)
    assert len(calls) - 2 == TIMED_CALLS + 1  # and one call for the error check
    fast = measure(fake(clock, "aten.mm (fp32)", "fp32", 69.5), 2048, per_call_s=0.8, clock=clock)
    assert fast.size == 2048 and not fast.reduced and "smaller shape" not in fast.describe()


def test_timed_is_the_best_median_over_a_fake_clock():
    clock = FakeClock()
    durations = iter([9.0, 9.0] + [0.2, 0.1, 0.3] + [0.05, 0.5, 0.5] + [0.4, 0.4, 0.4])

    def call():
        clock.now += next(durations)
    assert timed(call, clock=clock, min_time=0.0, min_calls=3) == pytest.approx(0.2)


def test_the_probe_gemm_stage_fits_its_budget_on_the_zen1_guest():
    """The 22-minute probe: 2048^3, 12 calls each, BF16 aten.mm at 0.7 Gops/s (24.5 s a call). Sized from one
    trial call each, the nine candidates fit the probe's budget, the slow ones on smaller shapes."""
    clock = FakeClock()
    deadline = Deadline(PROBE_BUDGET_S, clock=clock)
    clock.now += 40.0  # the clock and the bandwidths took their share
    lines: list[str] = []
    peaks = gemm_peaks(zen1_candidates(clock), 2048, deadline, clock=clock, progress=lines.append)
    assert clock.now < PROBE_BUDGET_S
    by_name = {m.name: m for g in peaks.values() for m in g.measured}
    assert by_name["aten.mm (fp32)"].size == 2048 and by_name["onednn.qlinear_pointwise (u8 x s8)"].size == 2048
    for slow in ("aten.mm (bf16)", "aten.addmm (bf16)", "aten._int_mm (s8 x s8)"):
        assert by_name[slow].reduced and by_name[slow].size % 128 == 0, by_name[slow]
    assert f"GEMM peaks: aten.mm (bf16): a slow path, measured at {by_name['aten.mm (bf16)'].size}^3" in lines
    assert sum(line.startswith("GEMM peaks: ") and ":" not in line[12:] for line in lines) == 9


def test_a_candidate_far_below_its_dtypes_fastest_is_timed_at_its_trials_size():
    """With budget to spare, an s8 x s8 linear at 0.2 Gops/s after the u8 one at 1,938 (a Zen 5 guest) is not sized
    up: it cannot be the peak. A native candidate is not outpaced by an emulated one, nor the first of a dtype."""
    clock = FakeClock()
    calls: list[int] = []
    cands = [fake(clock, "onednn.qlinear_pointwise (u8 x s8)", "int8", 1938.0),
             fake(clock, "onednn.qlinear_pointwise (s8 x s8)", "int8", 0.2, calls=calls),
             fake(clock, "aten.linear (bf16)", "bf16", 11.0, emulated=True),
             fake(clock, "aten.mm (bf16)", "bf16", 0.7)]
    lines: list[str] = []
    peaks = gemm_peaks(cands, 2048, Deadline(10_000.0, clock=clock), clock=clock, progress=lines.append)
    by_name = {m.name: m for g in peaks.values() for m in g.measured}
    s8 = by_name["onednn.qlinear_pointwise (s8 x s8)"]
    assert s8.outpaced and s8.size == TRIAL_SIZE and set(calls) == {TRIAL_SIZE}
    assert "timed at the trial's size" in s8.describe() and "predicted" not in s8.describe()
    assert any("(below a tenth of its dtype's fastest)" in line for line in lines)
    assert peaks["int8"].kernel == "onednn.qlinear_pointwise (u8 x s8)"
    u8 = by_name["onednn.qlinear_pointwise (u8 x s8)"]
    assert not u8.outpaced and u8.size == 2048
    native = by_name["aten.mm (bf16)"]  # 0.7 Gops/s beside an emulated 11: sized by its own trial, as before
    assert not native.outpaced and native.size > TRIAL_SIZE and peaks["bf16"].kernel == "aten.mm (bf16)"


def test_an_exhausted_budget_still_measures_every_candidate_at_the_trial_size():
    clock = FakeClock()
    deadline = Deadline(10.0, clock=clock)
    clock.now += 20.0
    peaks = gemm_peaks(zen1_candidates(clock), 2048, deadline, clock=clock)
    assert {m.size for g in peaks.values() for m in g.measured if m.ops_per_s < 20e9} == {TRIAL_SIZE}
    assert per_call_budget(-5.0, 3) == 0.0 and per_call_budget(33.0, 1) == pytest.approx(6.6)  # 2 warm-ups, 3 trials


def zen1_probe(clock: FakeClock | None = None) -> ProbeResult:
    clock = clock or FakeClock()
    peaks = gemm_peaks(zen1_candidates(clock), 2048, Deadline(PROBE_BUDGET_S, clock=clock), clock=clock)
    return ProbeResult(host=ZEN1, threads=2, date="2026-12-01", clock_hz=2.5e9, clock_source="add chain",
                       dram=Level(2**28, 2, 14e9, 12e9, 13e9), llc=Level(8 * 2**20, 2, 60e9, 50e9, 55e9),
                       l2=Level(2**19, 2, 150e9, 120e9, 130e9), dram_one_core=Level(2**28, 1, 9e9, 8e9, 8e9),
                       llc_one_core=Level(8 * 2**20, 1, 30e9, 25e9, 28e9), gemm=peaks,
                       versions={"torch": "2.13.0", "torchao": "0.18.0"})


def test_the_int8_peak_on_an_avx2_host_is_the_quantized_linear_never_the_emulated_int_mm():
    clock = FakeClock()
    peaks = zen1_probe(clock).gemm
    int8 = peaks["int8"]
    assert int8.kernel == "onednn.qlinear_pointwise (u8 x s8)" and int8.ops_per_s == pytest.approx(73.6e9)
    emulated = {m.name for m in int8.measured if m.emulated}
    assert emulated == {"aten._int_mm (s8 x s8)"}
    # even were _int_mm the fastest, an emulated kernel is not the peak while a native one is correct
    faster = [m if not m.emulated else type(m)(**{**m.__dict__, "ops_per_s": 1e12}) for m in int8.measured]
    assert pick(faster).name == "onednn.qlinear_pointwise (u8 x s8)"
    # a saturating kernel is not a peak either: full-range u8 inputs without VNNI (rel. error 5%)
    wrong = [type(m)(**{**m.__dict__, "rel_error": 0.05}) if "u8" in m.name else m for m in int8.measured]
    assert pick(wrong).name == "onednn.qlinear_pointwise (s8 x s8)"
    # only emulated ones correct: the fastest of those; none correct: the fastest, its error saying so
    assert pick([m for m in int8.measured if m.emulated]).name == "aten._int_mm (s8 x s8)"
    assert peaks["bf16"].kernel == "aten.linear (bf16)" and peaks["bf16"].emulated
    assert peaks["fp32"].kernel == "aten.mm (fp32)" and not peaks["fp32"].emulated


def test_the_zen1_probe_marks_bf16_emulated_and_the_estimate_leaves_it_out(tmp_path):
    p = probe_platform(zen1_probe())
    bf16, int8 = p.compute["bf16-measured"], p.compute["int8-measured"]
    assert bf16.emulated and "emulated" in bf16.note and not int8.emulated and not p.compute["fp32-measured"].emulated
    assert p.paths_for("bf16") == [] and p.emulated_paths("bf16") == ["bf16-measured"]
    assert int8.ops_per_cycle.value == pytest.approx(73.6e9 / (2 * 2.5e9), rel=1e-3)
    assert "onednn.qlinear_pointwise (u8 x s8)" in int8.ops_per_cycle.source
    notes = " ".join(p.notes)
    assert "aten._int_mm (s8 x s8) 3.8 Gops/s" in notes and "(emulated; a trial call predicted" in notes
    assert "onednn.qlinear_pointwise (u8 x s8) 73.6 Gops/s at 2048^3 <- the peak" in notes
    path = tmp_path / "zen1.toml"
    path.write_text(platform_toml(p))
    loaded = load_platform(str(path))
    assert loaded == p and loaded.compute["bf16-measured"].emulated
    model = load_model("bert-base")
    r = estimate(loaded, model)
    assert list(r.precisions) == ["fp32", "int8-static"]
    assert any(n.startswith("bf16 left out of the default precisions") and "emulated" in n for n in r.notes)
    emulated_path = next(c for c in r.platform.compute_paths if c.name == "bf16-measured")
    assert emulated_path.emulated
    asked = estimate(loaded, model, EstimateQuery(precisions=["bf16"]))
    bf = asked.precisions["bf16"]
    assert bf.compute_path == "fp32-measured" and not bf.native and "is emulated" in bf.notes[0]
    assert any(n.startswith("bf16:") and "autocast to FP32" in n for n in asked.notes)
    # INT8 over FP32 on the real quantized path: about the 73.6 / 69.5 ratio, not the 0.05x of the emulated peak
    assert r.speedups[0].gemm_speedup > 0.9


def test_a_required_dtype_needs_a_native_path(tmp_path):
    from roofline.errors import SpecError

    text = platform_toml(probe_platform(zen1_probe()))
    head, tail = text.split("[compute.int8-measured]\n", 1)
    assert tail.count("emulated = false") >= 1
    path = tmp_path / "bad.toml"
    path.write_text(head + "[compute.int8-measured]\n" + tail.replace("emulated = false", "emulated = true", 1))
    with pytest.raises(SpecError, match="compute.int8-measured.emulated: every int8 path is emulated"):
        load_platform(str(path))


def test_the_candidates_on_an_avx2_host_use_seven_bit_activations():
    torch = pytest.importorskip("torch")
    import dataclasses

    from roofline.validation.gemm_peaks import torch_candidates

    cands = {c.name: c for c in torch_candidates(torch, ZEN1)}
    assert {n for n, c in cands.items() if c.emulated} == {"aten.mm (bf16)", "aten.linear (bf16)", "aten.addmm (bf16)",
                                                           "aten._int_mm (s8 x s8)"}
    u8, s8 = cands["onednn.qlinear_pointwise (u8 x s8)"], cands["onednn.qlinear_pointwise (s8 x s8)"]
    assert "reduce_range" in u8.inputs and "reduce_range" in s8.inputs
    t = u8.build(64)
    assert int(t.activations.max()) <= 127 and int(t.activations.min()) >= 0
    assert t.error(t.call()) < 1e-6  # 7-bit u8 x s8 pairs cannot saturate
    t = s8.build(64)
    assert -64 <= int(t.activations.min()) and int(t.activations.max()) <= 63
    vnni = dataclasses.replace(ZEN1, flags={**ZEN1.flags, "avx512_vnni": True, "avx512_bf16": True})
    full = {c.name: c for c in torch_candidates(torch, vnni)}
    assert not any(c.emulated for c in full.values())
    assert int(full["onednn.qlinear_pointwise (u8 x s8)"].build(64).activations.max()) > 127


PROGRESS = ("import sys; from roofline.cli.progress import progress_reporter\n"
            "with progress_reporter('probe') as p:\n    p('contention canary'); p('GEMM peaks: aten.mm (bf16)')\n"
            "print('answer')\n")


@pytest.mark.parametrize("env", [{}, {"FORCE_COLOR": "1", "TERM": "dumb"}, {"TTY_COMPATIBLE": "1"}])
def test_progress_lines_reach_stderr_when_it_is_not_a_terminal(env):
    proc = subprocess.run([sys.executable, "-c", PROGRESS], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "answer\n"
    assert proc.stderr.splitlines() == ["probe [0:00]: contention canary", "probe [0:00]: GEMM peaks: aten.mm (bf16)"]


def test_progress_lines_stay_on_a_terminal():
    import pty

    primary, secondary = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-c", PROGRESS], stdout=subprocess.PIPE, stderr=secondary,
                              timeout=60, env={**os.environ, "TERM": "xterm", "COLUMNS": "100"})
        os.close(secondary)
        secondary = -1
        seen = b""
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(primary)
        if secondary >= 0:
            os.close(secondary)
    assert proc.returncode == 0 and proc.stdout == b"answer\n"
    text = seen.decode(errors="replace")
    assert "probe [0:00]: contention canary" in text and "probe [0:00]: GEMM peaks: aten.mm (bf16)" in text
