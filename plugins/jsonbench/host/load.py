"""What else used the machine during a measurement, and what an engine holds: read from ``/proc``.

A benchmark host is never perfectly quiet. Every measurement window records how much of the
machine's CPU went to processes that are neither the engine under test nor the harness driving it
(the task itself, pgbench, the SQLite worker), how much a hypervisor stole, and the load average.
A window is *quiet* when both shares stay under the cell's :class:`~jsonbench.cell.QuietPolicy`;
rows of a task with a disturbed window are published marked (``quiet = false``), never dropped and
never silently passed as clean.

How "other" is counted, and why this way. Every process on the host is read at both ends of the
window (``/proc/<pid>/stat`` for its parent and flags, ``/proc/<pid>/task/*/schedstat`` for its
threads' time on CPU in nanoseconds); "other" is the CPU of every process that is none of:

* the engine (:meth:`Engine.pids <jsonbench.engines.base.Engine.pids>` and their descendants);
* the harness: this process and its descendants (pgbench, the SQLite worker), and its ancestors
  (the Airflow task supervisor that forked the task under a scheduler, the executor and scheduler
  that started it, the command line that runs ``airflow dags test``): the benchmark's own machinery,
  whose cost the overhead benchmark measures, not someone else's load;
* a kernel thread (``PF_KTHREAD``, children of kthreadd): kworkers, ksoftirqd, jbd2 do the engine's
  writeback and journal work as much as anyone's.

plus the reaped children of other processes (``cutime``, minus what their exited children had used
before the window). The share is that CPU over the window's capacity (its span times the cores).

The earlier count (``/proc/stat`` busy time minus the engine's and the harness's) read clock ticks
(10 ms) over windows of 5-30 ms: one stray tick in a 7 ms window on 2 cores is 70 % of the machine,
and the engine's own ticks are sampled per process, so the difference was mostly counting error.
Measured with ``jsonbench-dev quiet-check`` (which prints this breakdown) on the 2-core
machine type, around real updates and reads of an embedded PostgreSQL: the tick count's own error
(it minus the same windows counted in nanoseconds) alone exceeded the 10 % threshold in most
windows; the kernel threads used a fraction of a percent of the machine; the ancestors nothing
(under ``airflow dags test`` the task supervisor runs inside the task's own process). Tick quantisation
dominated. Steal is still read from ``/proc/stat`` (the hypervisor's time has no per-process
counter), so on a host that steals, short windows still round to whole ticks of it.

Reading the table (one small file per process and thread) costs the harness a few milliseconds of
CPU at each end of a window; it is taken outside the timed block.

Linux only (``/proc``); elsewhere every figure is ``None`` and windows count as quiet-unknown.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

_CLK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
log = logging.getLogger(__name__)


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


def process_name(pid: int, table: dict[int, Proc] | None = None) -> str:
    """A process's name for a person: its command line's first two words (``airflow api-server``, ``python3 -c``; a
    Python interpreter gives way to the script or module it runs), else its comm in ``table``. Every report that names
    a process (a disturbed window's log line, the scheduler trial's CPU by component) names it this way."""
    tokens = (_read(f"/proc/{pid}/cmdline") or "").replace("\0", " ").split()
    if tokens:
        tokens[0] = os.path.basename(tokens[0])
    if len(tokens) > 1 and tokens[0].startswith("python") and tokens[1] != "-c":
        tokens = tokens[2:] if tokens[1] == "-m" else tokens[1:]
        if tokens:
            tokens[0] = os.path.basename(tokens[0])
    p = (table or {}).get(pid)
    return " ".join(tokens[:2]) if tokens else ((p.comm or "?") if p else "?")


def busiest(others: dict[int, int], table: dict[int, Proc], top: int = 3) -> str:
    """The ``top`` processes that used the most of ``others`` (ns of CPU each), as ``"name (pid) N ms"``, busiest first."""
    ranked = sorted(others.items(), key=lambda x: -x[1])[:top]
    return ", ".join(f"{process_name(pid, table)} ({pid}) {ns / 1e6:.0f} ms" for pid, ns in ranked)


#: How a task's log says a disturbed measure window (:meth:`WindowSampler.stop` writes it, :func:`disturbed_in` reads
#: it back for the scheduler trial's tally): said here once.
DISTURBED = "a disturbed measure window"
_BUSIEST = "; busiest others: "
_BUSY_ITEM = re.compile(r"(.+?) \((\d+)\) (\d+) ms")


def disturbed_in(text: str) -> list[tuple[str, float]] | None:
    """The processes a disturbed window's log line names, ``(name, ms)`` each, busiest first; None for any other
    line. ``text`` may be the message alone or a JSON log line holding it (what follows its closing quote is dropped)."""
    if DISTURBED not in text or _BUSIEST not in text:
        return None
    tail = text.split(_BUSIEST, 1)[1].split('"', 1)[0]
    return [(m.group(1), float(m.group(3))) for part in tail.split(", ") if (m := _BUSY_ITEM.fullmatch(part.strip()))]


@dataclass(frozen=True)
class WindowLoad:
    """What the rest of the machine did during one measurement window."""

    seconds: float
    other_cpu: float | None  # share of all cores' time used by other processes (0..1)
    steal: float | None  # share of all cores' time stolen by the hypervisor (0..1)
    load_1m: float | None  # load average at the end of the window
    quiet: bool | None  # None when it could not be measured
    #: In a window that was not quiet, who used the other CPU: the busiest other processes, "name (pid) N ms" each
    #: (:func:`busiest`). Said in the task's log and kept in the staged window, so a disturbed row can be traced to a
    #: process, not only to a share (a laptop run through the scheduler can read 13.6 % other CPU with no share naming its source).
    busiest: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


#: ``/proc/<pid>/stat`` flags bit of a kernel thread (``PF_KTHREAD``): kworkers, ksoftirqd, jbd2...
PF_KTHREAD = 0x00200000
_NS_PER_TICK = 1_000_000_000 // _CLK


@dataclass(frozen=True)
class Proc:
    """One process as a window sees it: its parent, whether it is a kernel thread, and its CPU so far (ns)."""

    ppid: int
    kernel: bool
    cpu_ns: int  # on-CPU time of all its threads (schedstat: nanoseconds)
    reaped_ns: int  # CPU of its children that exited and were reaped (cutime + cstime: clock ticks)
    comm: str = ""


def _threads_ns(pid: int) -> int | None:
    """Nanoseconds on CPU of every thread of ``pid`` (``/proc/<pid>/task/*/schedstat``, first field)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    total = 0
    seen = False
    for tid in tids:
        text = _read(f"/proc/{pid}/task/{tid}/schedstat")
        if text:
            total += int(text.split()[0])
            seen = True
    return total if seen else None


def process_table() -> dict[int, Proc]:
    """Every process on the host now, with its CPU in nanoseconds (kernel threads without their CPU: never read)."""
    out: dict[int, Proc] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for name in entries:
        if not name.isdigit():
            continue
        pid = int(name)
        text = _read(f"/proc/{pid}/stat")
        if not text:
            continue
        head, _, rest = text.rpartition(")")
        f = rest.split()
        if len(f) < 15:
            continue
        kernel = bool(int(f[6]) & PF_KTHREAD) or pid == 2 or int(f[1]) == 2
        comm = head.partition("(")[2]
        if kernel:
            out[pid] = Proc(int(f[1]), True, 0, 0, comm)
            continue
        ns = _threads_ns(pid)
        if ns is None:  # gone meanwhile, or schedstat unavailable: the tick counters instead
            ns = (int(f[11]) + int(f[12])) * _NS_PER_TICK
        out[pid] = Proc(int(f[1]), False, ns, (int(f[13]) + int(f[14])) * _NS_PER_TICK, comm)
    return out


def ancestors_of(pid: int, table: dict[int, Proc]) -> list[int]:
    """``pid``'s parent, grandparent, ... up to (not including) init and the kernel (pids 1, 2, 0)."""
    out: list[int] = []
    cur = table.get(pid)
    while cur is not None and cur.ppid not in (0, 1, 2) and cur.ppid not in out:
        out.append(cur.ppid)
        cur = table.get(cur.ppid)
    return out


def descendants_in(roots: Iterable[int], table: dict[int, Proc]) -> set[int]:
    """``roots`` and every process below them in ``table``."""
    kids: dict[int, list[int]] = {}
    for pid, p in table.items():
        kids.setdefault(p.ppid, []).append(pid)
    out: set[int] = set()
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid in out:
            continue
        out.add(pid)
        todo.extend(kids.get(pid, []))
    return out


def others_ns(before: dict[int, Proc], after: dict[int, Proc], ours: set[int]) -> dict[int, int]:
    """Nanoseconds of CPU each process outside ``ours`` (and not a kernel thread) used between two tables.

    A process alive at both ends adds its CPU difference; one that appeared in between adds all of its
    CPU (it started inside the window). A child that exited in between is seen in its parent's reaped
    time (``cutime``, ticks), which credits the child's whole life at once: what the table saw of that
    child at the start is taken off, so only the CPU it used inside the window remains (and that of
    children that came and went inside it).
    """
    gone: dict[int, int] = {}
    for pid, old in before.items():
        if pid not in after and not old.kernel:
            gone[old.ppid] = gone.get(old.ppid, 0) + old.cpu_ns + old.reaped_ns
    out: dict[int, int] = {}
    for pid, p in after.items():
        if p.kernel or pid in ours:
            continue
        b = before.get(pid)
        if b is None:
            used = p.cpu_ns + p.reaped_ns
        elif b.kernel:
            used = 0
        else:
            used = max(p.cpu_ns - b.cpu_ns, 0) + max(p.reaped_ns - b.reaped_ns - gone.get(pid, 0), 0)
        if used > 0:
            out[pid] = used
    return out


#: A process logs at most this many disturbed windows (a host under steal disturbs every window of a night).
LOG_AT_MOST = 50
_logged = 0


#: Set while a measure window is open. The harness's own background sampling of the engine (its memory, read
#: from ``/proc/<pid>/smaps_rollup``, which walks the page tables of a process that maps the whole buffer cache
#: and holds its mmap lock while it does; its disk, a walk of the data folder) waits until the window closes:
#: nothing of the harness but the window's two readings runs beside a measurement.
WINDOW_OPEN = threading.Event()


class WindowSampler:
    """Measures one window: call :meth:`start`, run the measurement, then :meth:`stop`.

    ``engine_pids`` returns the engine's live processes on this host (empty for a remote server).
    See the module docstring for what counts as other load, and why it is counted per process.
    """

    def __init__(self, engine_pids: Callable[[], list[int]], max_other_cpu: float, max_steal: float) -> None:
        self._engine_pids = engine_pids
        self.max_other_cpu = max_other_cpu
        self.max_steal = max_steal
        self._start: tuple[float, dict[int, Proc], set[int], tuple[float, float, float] | None] | None = None
        #: CPU (ns) of each other process in the last window, for diagnosis (``quiet-check`` prints it).
        self.last_others: dict[int, int] = {}
        self.last_table: dict[int, Proc] = {}
        self._read_at = 0.0

    def _ours(self, table: dict[int, Proc]) -> set[int]:
        """The engine's processes and the harness's: this process, its descendants, and its ancestors."""
        try:
            engine = set(self._engine_pids())
        except Exception:  # sampling must never break a measurement
            engine = set()
        me = os.getpid()
        return descendants_in([*engine, me], table) | set(ancestors_of(me, table))

    def start(self) -> None:
        t_read = time.monotonic()
        table = process_table()
        ours, host = self._ours(table), host_times()
        self._read_at = t_read
        self._start = (time.monotonic(), table, ours, host)  # the window begins once the readings are taken
        WINDOW_OPEN.set()

    def stop(self) -> WindowLoad:
        assert self._start is not None, "stop() before start()"
        t0, before, ours0, host0 = self._start
        wall = time.monotonic() - t0
        WINDOW_OPEN.clear()
        after = process_table()
        host1 = host_times()
        # Each process is read once at each end, so its CPU difference spans at most from the first
        # reading's start to the second's end: that span, not the window alone, is the capacity.
        span = time.monotonic() - self._read_at
        ours = ours0 | self._ours(after)
        others = others_ns(before, after, ours)
        self.last_others, self.last_table = others, after
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        other = steal = None
        if span > 0 and before:
            other = min(sum(others.values()) / 1e9 / (span * cores), 1.0)
        if host0 and host1 and wall > 0:
            capacity = max(host1[2] - host0[2], wall * cores)
            steal = min(max(host1[1] - host0[1], 0.0) / capacity, 1.0)
        quiet = None if other is None or steal is None else (other <= self.max_other_cpu and steal <= self.max_steal)
        who = busiest(others, after) if quiet is False and others else None
        global _logged
        if quiet is False and _logged < LOG_AT_MOST:
            _logged += 1
            log.info(
                "%s of %.3f s: other CPU %s, steal %s of the machine" + _BUSIEST + "%s",
                DISTURBED,
                wall,
                "?" if other is None else f"{other:.1%}",
                "?" if steal is None else f"{steal:.1%}",
                who or "none",
            )
            if _logged == LOG_AT_MOST:
                log.info("%d disturbed measure windows logged: the rest of this process's are not (their rows say it)", LOG_AT_MOST)
        return WindowLoad(seconds=wall, other_cpu=other, steal=steal, load_1m=load_1m(), quiet=quiet, busiest=who)
