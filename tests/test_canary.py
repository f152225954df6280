"""The contention canary: a busy host is flagged (or the contended rounds are re-run until clean);
a quiet one is not. Steal time is read from /proc/stat where the kernel reports it, other processes'
CPU time from /proc/[pid]/stat, the clock from the probe's add chain: fake /proc trees tell apart a
quiet run with a slow clock (throttling: not flagged), a busy process here (local, named) and steal
(the hypervisor's neighbours)."""

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


#: steal above this share during the quiet-host test means the host was not quiet (other guests ran on its cores)
QUIET_STEAL = 0.02


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
@pytest.mark.quiet
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
@pytest.mark.quiet
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
    s = canary.summary()
    if timings["linear"].contention is not None and s.worst_steal is not None and s.worst_steal > QUIET_STEAL:
        pytest.skip(f"the hypervisor stole {s.worst_steal:.0%} of the CPU time during the run: other guests kept "
                    "this host busy, so a quiet run could not be tested (the canary saw it, as it should)")
    assert timings["linear"].contention is None, s
    assert s.unresolved == 0


@pytest.mark.kernels
@pytest.mark.quiet
def test_the_real_canary_is_checked_against_the_probes(tmp_path):
    """The probe's canary, kept beside its file, loads back under the same key; a slower probe reference is
    the bar (one fast moment of this run's start must not set it); another host's figures are ignored.
    (Which reference a contended start takes: the fake /proc tests below.)"""
    pytest.importorskip("torch")
    from roofline.validation.canary import Canary, ProbeCanary, load_probe_canary, save_probe_canary

    probe_file = tmp_path / "host-1t.toml"
    first = Canary(1)
    save_probe_canary(probe_file, first.probe_record())
    kept = load_probe_canary(probe_file)
    assert kept == first.probe_record() and kept.key.endswith("mm 256^3; 1 threads")
    second = Canary(1)
    slower = ProbeCanary(kept.key, second.start_reference_s * 3, kept.best_cpu_share)
    second.anchor(slower)
    assert second.reference_s == slower.reference_s and second.probe_reference_s == slower.reference_s
    other = Canary(1)
    other.anchor(ProbeCanary("another CPU", other.start_reference_s / 3, 1.0))
    assert other.reference_s == other.start_reference_s and other.probe_reference_s is None


# ---------------------------------------------------------------- fake /proc trees: no real timing

class FakeProc:
    """A /proc tree in a folder: /proc/stat (2 CPUs), /proc/[pid]/stat, /proc/cpuinfo."""

    def __init__(self, root):
        self.root = root / "proc"
        self.root.mkdir()
        (self.root / "cpuinfo").write_text("processor\t: 0\nmodel name\t: Fake EPYC\n")
        self.set(busy=0, idle=0, steal=0, processes={})

    def set(self, busy: int, idle: int, steal: int, processes: dict[int, tuple[str, int, int]]) -> None:
        """Cumulative ticks: the machine's busy, idle and stolen time; each pid's (comm, ppid, user+system)."""
        (self.root / "stat").write_text(f"cpu  {busy} 0 0 {idle} 0 0 0 {steal} 0 0\ncpu0 0 0 0 0\ncpu1 0 0 0 0\n"
                                        "intr 0\n")
        for d in self.root.iterdir():
            if d.name.isdigit() and int(d.name) not in processes:
                (d / "stat").unlink()
                d.rmdir()
        for pid, (comm, ppid, ticks) in processes.items():
            d = self.root / str(pid)
            d.mkdir(exist_ok=True)
            (d / "stat").write_text(f"{pid} ({comm}) R {ppid} {pid} {pid} 0 -1 4194304 0 0 0 0 {ticks - ticks // 2} "
                                    f"{ticks // 2} 0 0 20 0 1 0 100 1000 10\n")


class FakeTimer:
    """The canary loop with scripted seconds per GEMM (calibration calls: the first value)."""

    label = "fake mm"

    def __init__(self, seconds: list[float], share: float = 0.98, on_call=None):
        self.seconds, self.share, self.on_call = list(seconds), share, on_call

    def __call__(self, calls: int):
        if self.on_call is not None:
            self.on_call(calls)
        if calls == 3:
            return self.seconds[0], self.share
        return (self.seconds.pop(0) if len(self.seconds) > 1 else self.seconds[0]), self.share


OWN = 100  # the validate process in the fake tree
QUIET = {1: ("systemd", 0, 50), OWN: ("python3", 1, 5000), 101: ("compile_worker", OWN, 10)}


def fake_canary(tmp_path, seconds, clock_hz=None, probe_clock_hz=2.5e9, **kw):
    from roofline.validation.canary import Canary

    proc = FakeProc(tmp_path)
    proc.set(busy=1000, idle=1000, steal=0, processes=QUIET)
    reader = (lambda: clock_hz[0]) if clock_hz is not None else None
    canary = Canary(2, timer=FakeTimer(seconds, **kw), clock_reader=reader, probe_clock_hz=probe_clock_hz,
                    proc=proc.root, own_pid=OWN)
    return canary, proc


def one_round(canary, proc, *, busy, idle, steal=0, processes=QUIET):
    mark = canary.mark()
    proc.set(busy=busy, idle=idle, steal=steal, processes=processes)
    return canary.sample(mark)


def test_a_quiet_run_with_a_slow_clock_is_throttling_not_contention(tmp_path):
    """(a) The canary 1.3x slower, the cores at 2.0 GHz against the probe's 2.5, nothing else running
    (systemd 1 tick, this run's own compile worker excluded), no steal: noted, never flagged."""
    clock = [2.5e9]
    canary, proc = fake_canary(tmp_path, [1e-3] * 5 + [1.3e-3], clock_hz=clock)
    assert canary.reference_s == pytest.approx(1e-3) and canary.start is not None and not canary.start.contended
    clock[0] = 2.0e9
    quiet = {**QUIET, 1: ("systemd", 0, 51), OWN: ("python3", 1, 5200), 101: ("compile_worker", OWN, 190)}
    s = one_round(canary, proc, busy=1400, idle=1000, processes=quiet)
    assert s.ratio == pytest.approx(1.3) and s.clock_ratio == pytest.approx(0.8)
    assert s.others.cpus_used == pytest.approx(2 * 1 / 400) and s.steal == 0
    assert not s.contended and s.cause == "throttling" and s.reason is None
    summary = canary.summary(flagged_rows=0)
    assert summary.throttled_samples == 1 and summary.cause is None and summary.unresolved == 0
    assert summary.lowest_clock_hz == 2.0e9 and summary.probe_clock_hz == 2.5e9
    assert "frequency throttling" in summary.advice and "2.00 GHz" in summary.advice and "2.50 GHz" in summary.advice
    assert "not contention" in summary.advice


def test_a_slow_canary_the_clock_does_not_explain_is_the_neighbours(tmp_path):
    """A slowdown with nothing else running and the clock as probed: the hypervisor's other guests."""
    canary, proc = fake_canary(tmp_path, [1e-3] * 5 + [1.6e-3], clock_hz=[2.49e9])
    s = one_round(canary, proc, busy=1400, idle=1000, processes={**QUIET, 1: ("systemd", 0, 52)})
    assert s.contended and s.cause == "neighbours"
    assert "1.6x slower" in s.reason and "nothing else running here" in s.reason and "clock 100%" in s.reason


def test_a_busy_process_here_is_local_and_named(tmp_path):
    """(b) stress-ng took 1.8 of the 2 CPUs over the round: flagged as local, naming it, in the row's flag and
    the advice; this run's own children are never counted."""
    torch = pytest.importorskip("torch")  # time_interleaved times with torch.utils.benchmark
    from roofline.validation.timing import time_interleaved

    canary, proc = fake_canary(tmp_path, [1e-3] * 5 + [2.1e-3])
    busy = {**QUIET, 4242: ("stress-ng", 1, 3000), 101: ("compile_worker", OWN, 900)}
    proc.set(busy=1000, idle=1000, steal=0, processes=busy)
    s = one_round(canary, proc, busy=1400, idle=1000, processes={**busy, 4242: ("stress-ng", 1, 3360)})
    assert s.cause == "local" and s.contended
    assert s.others.cpus_used == pytest.approx(360 * 2 / 400)
    assert s.others.top[0][:2] == ("stress-ng", 4242)
    assert "stress-ng (pid 4242) 180% of a CPU" in s.reason and "compile_worker" not in s.reason

    state = {"busy": 1400, "ticks": 3360}

    def busier(calls):  # every canary loop after a round: another 0.9 s of stress-ng per CPU
        if calls != 3:
            state["busy"] += 400
            state["ticks"] += 360
            proc.set(busy=state["busy"], idle=1000, steal=0, processes={**busy, 4242: ("stress-ng", 1, state["ticks"])})
    canary.timer.on_call = busier
    t = time_interleaved({"a": lambda x: x}, lambda: torch.zeros(1), rounds=2, min_run_time=0.001, threads=1,
                         canary=canary, max_reruns=1)
    flag = t["a"].contention
    assert flag.startswith("contention: 2 of 2 timing rounds") and "stress-ng (pid 4242)" in flag
    summary = canary.summary(flagged_rows=1)
    assert summary.cause == "local" and summary.unresolved == summary.flagged_rows == 1
    assert summary.top_processes[0].comm == "stress-ng" and summary.top_processes[0].pid == 4242
    assert "something on this machine: stress-ng (pid 4242" in summary.advice and "--threads" in summary.advice
    assert summary.worst_other_cpus == pytest.approx(1.8)


def test_steal_is_the_hypervisors_neighbours(tmp_path):
    """(c) 20% of the round's CPU time stolen, nothing else running here: flagged as the neighbours, with
    advice that does not tell the user to stop anything on this machine."""
    canary, proc = fake_canary(tmp_path, [1e-3] * 5 + [1.1e-3])
    s = one_round(canary, proc, busy=1300, idle=1060, steal=100)
    assert s.steal == pytest.approx(100 / 460) and s.cause == "neighbours" and s.contended
    assert "the hypervisor stole 22% of the CPU time" in s.reason
    summary = canary.summary(flagged_rows=2)
    assert summary.cause == "neighbours" and "the hypervisor's neighbours (steal up to 22%)" in summary.advice
    assert "nothing on this machine to stop" in summary.advice
    assert canary.summary(flagged_rows=0).cause is None  # no row flagged: nothing to attribute


def test_one_fast_moment_does_not_set_the_reference(tmp_path):
    """The start's reference is the median of its tries; the probe's is taken only when slower, or when the
    start itself was contended; a sample never lowers it."""
    from roofline.validation.canary import ProbeCanary

    canary, proc = fake_canary(tmp_path, [1e-3, 0.4e-3, 1e-3, 1e-3, 1.05e-3, 0.3e-3])
    assert canary.reference_s == pytest.approx(1e-3)
    canary.anchor(ProbeCanary(canary.key, 0.7e-3, 0.95, 2.5e9))  # the probe ran in a fast moment
    assert canary.reference_s == pytest.approx(1e-3) and canary.probe_reference_s == pytest.approx(0.7e-3)
    assert not one_round(canary, proc, busy=1400, idle=1000).contended  # 0.3 ms: faster, clean
    assert canary.reference_s == pytest.approx(1e-3)
    canary.anchor(ProbeCanary(canary.key, 1.2e-3, 0.95))
    assert canary.reference_s == pytest.approx(1.2e-3) and "the probe's" in canary.reference_source

    def contend(calls):  # another process runs while the start's tries do
        if calls != 3:
            proc.set(busy=1000 + 400 * contend.n, idle=1000, steal=0,
                     processes={**QUIET, 4242: ("stress-ng", 1, 400 * contend.n)})
            contend.n += 1
    contend.n = 1
    from roofline.validation.canary import Canary

    busy = Canary(2, timer=FakeTimer([2e-3], on_call=contend), proc=proc.root, own_pid=OWN)
    assert busy.start.contended and busy.start.cause == "local"
    busy.anchor(ProbeCanary(busy.key, 1e-3, 0.95))
    assert busy.reference_s == pytest.approx(1e-3) and "this run's start was contended" in busy.reference_source


def test_the_probe_keeps_its_canary_beside_its_file(tmp_path):
    from roofline.validation.canary import ProbeCanary, load_probe_canary, probe_canary_path, save_probe_canary

    probe = tmp_path / "host-2t.toml"
    assert load_probe_canary(probe) is None
    c = ProbeCanary("Fake EPYC; fake mm; 2 threads", 1e-3, 0.97, 2.5e9)
    save_probe_canary(probe, c)
    assert probe_canary_path(probe) == tmp_path / "host-2t.canary.json" and load_probe_canary(probe) == c
    probe_canary_path(probe).write_text("{not json")
    assert load_probe_canary(probe) is None


def test_proc_stat_parsing_takes_odd_command_names(tmp_path):
    from roofline.validation.procstat import read_process

    stat = tmp_path / "stat"
    stat.write_text("77 (tmux: server (1)) S 1 77 77 0 -1 4194560 0 0 0 0 12 30 0 0 20 0 1 0 5 0 0\n")
    p = read_process(stat)
    assert (p.pid, p.ppid, p.comm, p.ticks) == (77, 1, "tmux: server (1)", 42)
    stat.write_text("garbage")
    assert read_process(stat) is None and read_process(tmp_path / "gone") is None


def test_unresolved_and_flagged_rows_agree_by_construction(tmp_path):
    """A timing that kept contended rounds but is not a row (the dispatch overhead), or whose row lost its
    timing, counts in neither: the summary's unresolved is the flagged rows themselves."""
    canary, proc = fake_canary(tmp_path, [1e-3])
    canary.unresolved = 2  # two timings kept contended rounds; only one row carries the flag
    s = canary.summary(flagged_rows=1, dispatch_contended=True)
    assert s.unresolved == s.flagged_rows == 1 and s.dispatch_contended and not s.clean
    quiet = canary.summary(flagged_rows=0, dispatch_contended=True)
    assert quiet.unresolved == 0 and quiet.clean and quiet.cause is None


def test_the_report_says_the_cause_and_the_advice(tmp_path):
    import dataclasses
    import json

    from clitools import REPO
    from roofline.validation.report import contention_line

    from roofline.catalog.validate import validate
    from roofline.results.validate import ProcessShare, ValidateResult

    data = json.loads((REPO / "validation" / "results" / "zen4-2vcpu-bert-base.json").read_text())
    r = validate(ValidateResult, data, "r.json")
    base = fake_canary(tmp_path, [1e-3])[0].summary()
    r = dataclasses.replace(r, contention=base)
    busy = dataclasses.replace(base, unresolved=3, flagged_rows=3, cause="local",
                               advice="something on this machine: stress-ng (pid 4242, 180% of a CPU); stop it",
                               top_processes=[ProcessShare("stress-ng", 4242, 1.8)], worst_other_cpus=1.8)
    line = contention_line(dataclasses.replace(r, contention=busy))
    assert line.startswith("warning: the host was busy (something on this machine): 3 row(s)")
    assert "other processes up to 1.80 CPUs" in line and line.endswith("stress-ng (pid 4242, 180% of a CPU); stop it")
    steal = dataclasses.replace(busy, cause="neighbours", advice="the hypervisor's neighbours (steal up to 22%): ...")
    assert "(the hypervisor's neighbours)" in contention_line(dataclasses.replace(r, contention=steal))
    throttled = dataclasses.replace(base, throttled_samples=2, lowest_clock_hz=2.0e9, probe_clock_hz=2.5e9,
                                    advice="frequency throttling in 2 round(s): ...")
    line = contention_line(dataclasses.replace(r, contention=throttled))
    assert line.startswith("contention: none kept") and "clock down to 2.00 GHz (probe 2.50)" in line
    assert line.endswith("frequency throttling in 2 round(s): ...")


def test_a_kernel_worker_that_renames_itself_is_the_same_process(tmp_path):
    """A kworker names itself after the work item it runs (kworker/u8:2-writeback, then
    kworker/u8:2-kvfree_rcu_reclaim): its time is the difference of its two readings, not its lifetime (which
    once showed as 301% of a 2-CPU machine); a pid whose time went backwards is a new process."""
    from roofline.validation.procstat import CpuTimes as Cpu
    from roofline.validation.procstat import ProcessTimes, Snapshot, others_since

    def snap(total, procs):
        return Snapshot(Cpu(total=total, steal=0), 2,
                        {pid: ProcessTimes(pid, 2, comm, ticks) for pid, (comm, ticks) in procs.items()})

    before = snap(10_000, {35: ("kworker/u8:2-writeback", 50_000), 77: ("old", 9_000)})
    after = snap(10_200, {35: ("kworker/u8:2-kvfree_rcu_reclaim", 50_010), 77: ("reused", 20)})
    o = others_since(before, after, own_pid=1)
    assert o.ticks[("kworker/u8:2-kvfree_rcu_reclaim", 35)] == 10 and o.ticks[("reused", 77)] == 20
    assert o.cpus_used == pytest.approx(30 * 2 / 200)
