"""The contention canary: a busy host is flagged (or the contended rounds are re-run until clean);
a quiet one is not. Steal time is read from /proc/stat where the kernel reports it."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time

import pytest

from roofline.validation.canary import CpuTimes


def _cpus() -> int:
    return len(os.sched_getaffinity(0))


def _host_busy_share(seconds: float = 0.5) -> float:
    """Share of the host's CPU time spent busy while this process sleeps: other processes' load."""
    a = open("/proc/stat").readline().split()[1:]
    time.sleep(seconds)
    b = open("/proc/stat").readline().split()[1:]
    d = [int(y) - int(x) for x, y in zip(a, b)]
    idle = d[3] + (d[4] if len(d) > 4 else 0)
    return 1 - idle / sum(d) if sum(d) else 0.0


@contextlib.contextmanager
def busy_loops(n: int):
    """``n`` processes spinning on a core each; stopped (by their pids) on exit."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        time.sleep(0.3)  # let them get scheduled
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def test_steal_time_from_proc_stat(tmp_path):
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 1 2 3\n")
    before = CpuTimes.read(stat)
    assert before == CpuTimes(total=1000, steal=40)
    stat.write_text("cpu  200 0 100 1500 20 0 0 180 0 0\n")
    after = CpuTimes.read(stat)
    assert after.steal_share_since(before) == pytest.approx(140 / 1000)
    stat.write_text("cpu  100 0 50 800\n")  # an old kernel: no steal column
    assert CpuTimes.read(stat).steal is None and CpuTimes.read(stat).steal_share_since(before) is None
    assert CpuTimes.read(tmp_path / "missing") is None


class _Scripted:
    """A canary whose verdicts are scripted: True = contended."""

    def __init__(self, verdicts):
        from roofline.validation.canary import CanarySample

        self.verdicts, self.reruns, self.unresolved, self.Sample = list(verdicts), 0, 0, CanarySample

    def mark(self):
        return None

    def sample(self, since=None):
        bad = self.verdicts.pop(0)
        return self.Sample(1.0, 3.0 if bad else 1.0, 1.0, None, "scripted" if bad else None)


def test_contended_rounds_are_rerun_and_flagged_when_the_reruns_run_out():
    pytest.importorskip("torch")
    from roofline.validation.timing import time_interleaved

    fns = {"a": lambda x: x, "b": lambda x: x}
    recovers = _Scripted([True, False, True, False, False])
    t = time_interleaved(fns, lambda: 0, rounds=3, min_run_time=0.001, threads=1, canary=recovers, max_reruns=2)
    assert recovers.reruns == 2 and recovers.unresolved == 0 and recovers.verdicts == []
    assert all(x.contention is None and len(x.rounds) == 3 for x in t.values())
    stuck = _Scripted([True] * 4)
    t = time_interleaved(fns, lambda: 0, rounds=2, min_run_time=0.001, threads=1, canary=stuck, max_reruns=2)
    assert stuck.reruns == 2 and stuck.unresolved == 1 and stuck.verdicts == []
    flag = t["a"].contention
    assert flag.startswith("contention: 2 of 2 timing rounds") and "scripted" in flag and t["b"].contention == flag


@pytest.mark.kernels
def test_a_loaded_host_is_flagged_or_recovers():
    torch = pytest.importorskip("torch")
    from roofline.validation.canary import Canary
    from roofline.validation.timing import time_interleaved

    threads = _cpus()
    w = torch.randn(256, 256)
    fns = {"linear": lambda x: torch.nn.functional.linear(x, w)}
    canary = Canary(threads)  # the reference, before the load
    with busy_loops(_cpus()):
        timings = time_interleaved(fns, lambda: torch.randn(64, 256), rounds=2, min_run_time=0.02,
                                   threads=threads, canary=canary, max_reruns=2)
    s = canary.summary()
    assert s.contended_samples >= 1, s  # the load was seen
    t = timings["linear"]
    assert (t.contention is not None and t.contention.startswith("contention:")) or (s.reruns > 0 and s.unresolved == 0)


@pytest.mark.kernels
def test_a_quiet_host_is_not_flagged():
    torch = pytest.importorskip("torch")
    from roofline.validation.canary import Canary
    from roofline.validation.timing import time_interleaved

    busy = _host_busy_share()
    if busy > 0.15:
        pytest.skip(f"other processes keep this host {busy:.0%} busy: a quiet run cannot be tested now")
    threads = _cpus()
    w = torch.randn(256, 256)
    canary = Canary(threads)
    timings = time_interleaved({"linear": lambda x: torch.nn.functional.linear(x, w)}, lambda: torch.randn(64, 256),
                               rounds=2, min_run_time=0.02, threads=threads, canary=canary, max_reruns=4)
    assert timings["linear"].contention is None, canary.summary()
    assert canary.summary().unresolved == 0


@pytest.mark.kernels
def test_a_run_contended_from_the_start_is_caught_by_an_earlier_reference(tmp_path):
    """The reference of earlier runs on this host is kept: a canary that was 3x faster before flags the
    first round of a run that is slow from its first second; save() never keeps a slower reference."""
    pytest.importorskip("torch")
    import json

    from roofline.validation.canary import Canary

    history = tmp_path / "canary.json"
    first = Canary(1, history_file=history)
    first.save()
    kept = json.loads(history.read_text())
    assert kept["reference_s"] == first.reference_s and kept["key"].endswith("1 threads; mm 256^3")
    history.write_text(json.dumps({**kept, "reference_s": first.reference_s / 3}))
    second = Canary(1, history_file=history)
    assert second.reference_s == pytest.approx(first.reference_s / 3)
    sample = second.sample(second.mark())
    assert sample.contended and "slower than its reference" in sample.reason
    second.save()
    assert json.loads(history.read_text())["reference_s"] == pytest.approx(first.reference_s / 3)
    history.write_text(json.dumps({**kept, "key": "another CPU"}))  # another host's figures are ignored
    assert Canary(1, history_file=history).reference_s > first.reference_s / 2
