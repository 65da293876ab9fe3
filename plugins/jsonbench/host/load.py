"""What else used the machine during a measurement, and what an engine holds: read from ``/proc``.

A benchmark host is never perfectly quiet. Every measurement window records how much of the
machine's CPU went to processes that are neither the engine under test nor the harness driving it
(the task itself, pgbench, the SQLite worker), how much a hypervisor stole, and the load average.
A window is *quiet* when both shares stay under the cell's :class:`~jsonbench.cell.QuietPolicy`;
rows of a task with a disturbed window are published marked (``quiet = false``), never dropped and
never silently passed as clean.

How "other" is counted: the host's busy time over the window (``/proc/stat``: user, nice, system,
irq, softirq), minus the engine's CPU (its processes, and their children that exited during the
window: a postmaster's ``cutime``), minus the harness's (this process and its reaped children from
``getrusage``, plus its live descendants). What is left ran on behalf of someone else.

Linux only (``/proc``); elsewhere every figure is ``None`` and windows count as quiet-unknown.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

_CLK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError:
        return None


def host_times() -> tuple[float, float, float] | None:
    """``(busy, steal, total)`` CPU seconds of the whole machine since boot (all cores), from ``/proc/stat``."""
    text = _read("/proc/stat")
    if not text:
        return None
    fields = [float(x) for x in text.splitlines()[0].split()[1:]]
    user, nice, system, idle, iowait, irq, softirq = (fields + [0.0] * 8)[:7]
    steal = fields[7] if len(fields) > 7 else 0.0
    busy = user + nice + system + irq + softirq
    total = busy + idle + iowait + steal
    return busy / _CLK, steal / _CLK, total / _CLK


def load_1m() -> float | None:
    text = _read("/proc/loadavg")
    return float(text.split()[0]) if text else None


def _stat_fields(pid: int) -> list[str] | None:
    text = _read(f"/proc/{pid}/stat")
    if not text:
        return None
    return text.rsplit(")", 1)[1].split()


def cpu_seconds_of(pids: Iterable[int], children: bool = True) -> float:
    """CPU seconds of the given processes (utime + stime, plus reaped children's when ``children``)."""
    total = 0
    for pid in pids:
        f = _stat_fields(pid)
        if not f:
            continue
        # After the ")" the fields start at 3 (state); utime is field 14, stime 15, cutime 16, cstime 17.
        total += int(f[11]) + int(f[12]) + ((int(f[13]) + int(f[14])) if children else 0)
    return total / _CLK


def children_of(root: int) -> list[int]:
    """Every live descendant of ``root`` (by parent pid), ``root`` excluded."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        f = _stat_fields(int(entry.name))
        if f and f[0] != "Z":
            parents.setdefault(int(f[1]), []).append(int(entry.name))
    out: list[int] = []
    todo = [root]
    while todo:
        for kid in parents.get(todo.pop(), []):
            out.append(kid)
            todo.append(kid)
    return out


def pss_bytes_of(pids: Iterable[int]) -> int:
    """Proportional set size of the processes (shared memory counted once across them), in bytes."""
    total = 0
    for pid in pids:
        text = _read(f"/proc/{pid}/smaps_rollup")
        if text:
            for line in text.splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
                    break
        else:  # no smaps_rollup (old kernel, or not ours to read): resident set size instead
            status = _read(f"/proc/{pid}/status") or ""
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
    return total


def folder_bytes(folder: Path) -> int:
    """Bytes allocated on disk under ``folder`` (``du``-like; 0 when it does not exist)."""
    total = 0
    for root, _dirs, files in os.walk(folder, onerror=lambda _e: None):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    return total


def harness_cpu_seconds(exclude: set[int]) -> float:
    """CPU of this process, its reaped children, and its live descendants not in ``exclude``."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    live = [p for p in children_of(os.getpid()) if p not in exclude]
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime + cpu_seconds_of(live, children=False)


@dataclass(frozen=True)
class WindowLoad:
    """What the rest of the machine did during one measurement window."""

    seconds: float
    other_cpu: float | None  # share of all cores' time used by other processes (0..1)
    steal: float | None  # share of all cores' time stolen by the hypervisor (0..1)
    load_1m: float | None  # load average at the end of the window
    quiet: bool | None  # None when it could not be measured

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class WindowSampler:
    """Measures one window: call :meth:`start`, run the measurement, then :meth:`stop`.

    ``engine_cpu`` returns the engine's CPU seconds so far (or None); ``engine_pids`` the engine's
    live processes (so their CPU is not counted twice as the harness's descendants).
    """

    def __init__(
        self, engine_cpu: Callable[[], float | None], engine_pids: Callable[[], list[int]], max_other_cpu: float, max_steal: float
    ) -> None:
        self._engine_cpu = engine_cpu
        self._engine_pids = engine_pids
        self.max_other_cpu = max_other_cpu
        self.max_steal = max_steal
        self._start: tuple[float, tuple[float, float, float] | None, float | None, float] | None = None

    def _harness(self) -> float:
        try:
            return harness_cpu_seconds(set(self._engine_pids()))
        except Exception:  # sampling must never break a measurement
            return 0.0

    def _engine(self) -> float | None:
        try:
            return self._engine_cpu()
        except Exception:
            return None

    def start(self) -> None:
        self._start = (time.monotonic(), host_times(), self._engine(), self._harness())

    def stop(self) -> WindowLoad:
        assert self._start is not None, "stop() before start()"
        t0, host0, eng0, har0 = self._start
        wall = time.monotonic() - t0
        host1, eng1, har1 = host_times(), self._engine(), self._harness()
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        other = steal = None
        if host0 and host1 and wall > 0:
            capacity = max(host1[2] - host0[2], wall * cores)
            busy = host1[0] - host0[0]
            engine = (eng1 - eng0) if (eng0 is not None and eng1 is not None) else 0.0
            harness = har1 - har0
            other = min(max(busy - engine - harness, 0.0) / capacity, 1.0)
            steal = min(max(host1[1] - host0[1], 0.0) / capacity, 1.0)
        quiet = None if other is None or steal is None else (other <= self.max_other_cpu and steal <= self.max_steal)
        return WindowLoad(seconds=wall, other_cpu=other, steal=steal, load_1m=load_1m(), quiet=quiet)


def worst(windows: Iterable[WindowLoad | dict[str, Any]]) -> dict[str, Any]:
    """The columns a measurement row carries: worst other CPU, steal and load over its task's windows."""
    ws = [w.to_json() if isinstance(w, WindowLoad) else dict(w) for w in windows]

    def peak(key: str) -> float | None:
        vals = [float(w[key]) for w in ws if w.get(key) is not None]
        return max(vals) if vals else None

    flags = [w.get("quiet") for w in ws]
    quiet = None if not ws or any(f is None for f in flags) else all(bool(f) for f in flags)
    return {"host_other_cpu": peak("other_cpu"), "host_steal": peak("steal"), "host_load_1m": peak("load_1m"), "quiet": quiet}
