"""What the kernel says about the machine's CPU time: ``/proc/stat`` (all CPUs, steal included) and
``/proc/[pid]/stat`` (each process's user and system time), read as snapshots whose difference covers
one timing round. Pure Python, no torch; every reader takes the ``/proc`` root as a parameter so that
tests feed fake trees.

All times are in the kernel's clock ticks (``USER_HZ``), in which both files count.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class CpuTimes:
    """The aggregate ``cpu`` line of ``/proc/stat`` (jiffies): total and stolen, if reported."""

    total: int
    steal: int | None

    @staticmethod
    def read(path: Path = PROC / "stat") -> CpuTimes | None:
        try:
            with open(path, encoding="ascii") as f:
                first = f.readline().split()
        except OSError:
            return None
        if not first or first[0] != "cpu":
            return None
        values = [int(v) for v in first[1:]]
        # user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in user
        steal = values[7] if len(values) > 7 else None
        return CpuTimes(total=sum(values[:8]), steal=steal)

    def steal_share_since(self, earlier: CpuTimes | None) -> float | None:
        """Share of all CPU time stolen by the hypervisor between ``earlier`` and this reading."""
        if earlier is None or self.steal is None or earlier.steal is None:
            return None
        total = self.total - earlier.total
        return (self.steal - earlier.steal) / total if total > 0 else None


@dataclass(frozen=True)
class ProcessTimes:
    pid: int
    ppid: int
    comm: str
    ticks: int
    """user + system time"""


def _cpus(path: Path) -> int:
    try:
        with open(path, encoding="ascii") as f:
            return sum(1 for line in f if line.startswith("cpu") and line[3:4].isdigit()) or 1
    except OSError:
        return 1


def read_process(stat: Path) -> ProcessTimes | None:
    """One ``/proc/[pid]/stat`` (``pid (comm) state ppid ... utime stime ...``); None when it is gone or
    unreadable. The command name may hold spaces and parentheses: it ends at the last ')'."""
    try:
        text = stat.read_text(encoding="utf-8", errors="replace")
        head, _, tail = text.rpartition(")")
        pid, _, comm = head.partition(" (")
        fields = tail.split()
        return ProcessTimes(int(pid), int(fields[1]), comm, int(fields[11]) + int(fields[12]))
    except (OSError, ValueError, IndexError):
        return None


@dataclass(frozen=True)
class Snapshot:
    """The machine's CPU time and every process's at one moment."""

    cpu: CpuTimes | None
    cpus: int
    processes: dict[int, ProcessTimes]

    @staticmethod
    def take(proc: Path = PROC) -> Snapshot:
        processes = {}
        try:
            entries = [d for d in proc.iterdir() if d.name.isdigit()]
        except OSError:
            entries = []
        for d in entries:
            p = read_process(d / "stat")
            if p is not None:
                processes[p.pid] = p
        return Snapshot(CpuTimes.read(proc / "stat"), _cpus(proc / "stat"), processes)


@dataclass(frozen=True)
class Others:
    """Other processes' CPU time between two snapshots."""

    cpus_used: float
    """CPUs' worth of time they took (1.0: one CPU all the time)"""
    share: float
    """of the machine's CPU time"""
    top: tuple[tuple[str, int, float], ...]
    """(comm, pid, CPUs used), busiest first, those above a hundredth of a CPU"""
    ticks: dict[tuple[str, int], int]
    total_ticks: int
    cpus: int


def _family(processes: dict[int, ProcessTimes], root: int) -> set[int]:
    """``root`` and its descendants (Inductor's compile workers are this run's own work)."""
    children: dict[int, list[int]] = defaultdict(list)
    for p in processes.values():
        children[p.ppid].append(p.pid)
    out, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid not in out:
            out.add(pid)
            todo += children.get(pid, [])
    return out


def others_since(before: Snapshot, after: Snapshot, own_pid: int, top: int = 3) -> Others | None:
    """Every process but ``own_pid`` and its descendants: the CPU time it used between the snapshots (a
    process born meanwhile: all of its time). None when ``/proc/stat`` was unreadable or no time passed."""
    if before.cpu is None or after.cpu is None or after.cpu.total <= before.cpu.total:
        return None
    total = after.cpu.total - before.cpu.total
    mine = _family(after.processes, own_pid) | _family(before.processes, own_pid)
    ticks: dict[tuple[str, int], int] = {}
    for pid, p in after.processes.items():
        if pid in mine:
            continue
        earlier = before.processes.get(pid)
        # the same process when its time did not go backwards (a kernel worker renames itself after the work
        # item it runs: kworker/u8:2-writeback, then kworker/u8:2-kvfree_rcu_reclaim; a reused pid starts at 0)
        used = p.ticks - (earlier.ticks if earlier is not None and p.ticks >= earlier.ticks else 0)
        if used > 0:
            ticks[(p.comm, pid)] = used
    cpus = after.cpus
    used = sum(ticks.values())
    busiest = sorted(ticks.items(), key=lambda kv: -kv[1])
    shown = tuple((comm, pid, t * cpus / total) for (comm, pid), t in busiest[:top] if t * cpus / total >= 0.01)
    return Others(used * cpus / total, used / total, shown, ticks, total, cpus)
