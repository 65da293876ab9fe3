"""The canary: a small fixed workload timed beside every cell, whose figures measure the host, not the software.

With the engine builds pinned, what moves from night to night is mostly the host: a machine of
the same type can be 30 % slower than the last one, and one host can slow by 25 % within a night.
The quiet detector sees only this VM's processes; a slower hypervisor, a noisy
neighbour or a CPU quota are invisible to it. MongoDB's performance team answered the same problem
on EC2 with canary benchmarks; this is that, kept independent of every engine and of this project's
code paths (no SQL, no pgbench, no suite), so that a harness or engine regression cannot move it:

* ``cpu_single``: SHA-256 over :data:`CPU_BYTES` of fixed data in one thread (hashlib's C loop);
* ``cpu_all``: :data:`CPU_ALL_BYTES` on every usable core at once (threads: hashlib releases the GIL),
  long enough to span several CFS periods, so a CPU quota or a neighbour on the other core shows,
  which one thread on an idle core may not;
* ``memory``: :data:`MEMORY_PASSES` copies of a :data:`MEMORY_BYTES` buffer (``memcpy``), a
  memory-bandwidth pass far beyond the CPU caches;
* ``fsync``: :data:`FSYNC_WRITES` writes of :data:`FSYNC_BLOCK` bytes, each followed by
  ``fdatasync``, in the folder the engine writes to (a WAL-like commit pattern on the engine's
  filesystem), the file removed after;
* ``wakeup``: :data:`WAKEUP_TRIPS` round trips of one byte through ``cat`` on the other core (:class:`Echo`):
  each trip wakes an idle core and sleeps until it answers, as a client and its server backend do
  for every statement. A SHA-256 loop never sleeps, so it cannot feel what a host charges for a
  wake-up (the hypervisor's exit from an idle vCPU, the interrupt to it), which is most of a
  one-client statement's time: pgbench's select of one row took 91 us with the other core idle
  and 19-20 us with both ends on one core (``docs/noise-levels.md``). A host can run every PostgreSQL
  family 10-50 % slower with the SHA components within 7 %.

Each component is run :data:`SAMPLES` times; every sample is kept (milliseconds, kind ``timed``),
each inside its own quiet window, so a canary measured beside other load is marked like any
measurement. It runs before every cell (under the host lease, before the engine starts) and after the
last cell (after its engine is gone): about 1.9 s each time on the reference type (0.2 s of it the wakeup component), which ``total`` records. The rows
are published with suite ``host`` and workload ``canary`` (:data:`jsonbench.dataset.measurement.HOST_SUITE`),
variant ``before.<suite>`` or ``after.<suite>`` and the engine id of the cell they sat beside.
"""

from __future__ import annotations

import hashlib
import os
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Fixed work per sample. The all-cores pass is four times longer (about 0.22 s per thread on the reference
#: type) so that it spans several CFS periods (100 ms): at 96 MB two threads finished inside one period's quota,
#: and a CPU quota of 1.2 of 2 cores read 1.15-1.38x where the engines' pgbench work ran 1.5-2x slower.
CPU_BYTES = 96 << 20
CPU_ALL_BYTES = 384 << 20
MEMORY_BYTES = 64 << 20
MEMORY_PASSES = 4
FSYNC_BLOCK = 64 << 10
FSYNC_WRITES = 32
#: Round trips per wakeup sample: about 31-35 ms on the reference type (61-70 us a trip), as long as a cpu_single sample.
WAKEUP_TRIPS = 500
SAMPLES = 5
#: Components, in the order they run: each is a metric (ms) of the canary's rows.
COMPONENTS: tuple[str, ...] = ("cpu_single", "cpu_all", "memory", "fsync", "wakeup")

_CHUNK = 1 << 20


@dataclass
class CanaryResult:
    """One canary's samples (ms per component), the quiet verdict of each sample's window, and its own cost."""

    samples: dict[str, list[float]] = field(default_factory=dict)
    #: CPU milliseconds this process used in each sample (every thread): the work is fixed, so a wall time far
    #: above it is the host (a quota, a neighbour, steal), and one near it a fast host.
    cpu: dict[str, list[float]] = field(default_factory=dict)
    windows: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    cores: int = 1

    def median(self, component: str) -> float:
        return statistics.median(self.samples[component])


def _hash(data: bytes, total: int) -> bytes:
    h = hashlib.sha256()
    for _ in range(total // len(data)):
        h.update(data)
    return h.digest()


def cpu_single(data: bytes) -> None:
    _hash(data, CPU_BYTES)


def cpu_all(data: bytes, cores: int) -> None:
    threads = [threading.Thread(target=_hash, args=(data, CPU_ALL_BYTES)) for _ in range(cores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def memory(src: bytearray, dst: bytearray) -> None:
    for _ in range(MEMORY_PASSES):
        dst[:] = src


def fsync_writes(folder: Path, block: bytes) -> None:
    fd, name = tempfile.mkstemp(prefix=".jsonbench-canary-", dir=folder)
    try:
        for _ in range(FSYNC_WRITES):
            os.write(fd, block)
            os.fdatasync(fd)
    finally:
        os.close(fd)
        os.unlink(name)


class Echo:
    """``cat`` between two pipes, on another core than the canary: a process that sleeps until a byte arrives and writes
    it back at once (coreutils' ``cat`` reads and writes without buffering), started once per canary so that no sample
    times an ``exec``.

    Each trip wakes an idle core and waits to be woken by it. Left to the scheduler, both ends share one core and a trip
    is a context switch (2 us on the reference type), which no cell pays: a pgbench client and its backend run on two
    cores, and one client's read took 91 us with the other core idle against 19-20 us with both on one core
    (``docs/noise-levels.md``). So the echo is held on one usable core and the canary's thread on another while the
    trips run; with one usable core both share it.
    """

    def __init__(self) -> None:
        cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        self._mine = set(cores)
        self._pins = (cores[0], cores[-1]) if len(cores) >= 2 else None
        self.proc = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._w, self._r = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        try:
            if self._pins:
                os.sched_setaffinity(self.proc.pid, {self._pins[1]})
            self.trips(10)  # the child's first read: page faults and the loader, not a wake-up
        except BaseException:
            self.close()
            raise

    def trips(self, n: int) -> None:
        if self._pins:
            os.sched_setaffinity(0, {self._pins[0]})
        try:
            for _ in range(n):
                os.write(self._w, b"x")
                if os.read(self._r, 1) != b"x":
                    raise RuntimeError("the canary's echo process did not answer")
        finally:
            if self._pins:
                os.sched_setaffinity(0, self._mine)

    def close(self) -> None:
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None:
                f.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def wakeup(echo: Echo) -> None:
    echo.trips(WAKEUP_TRIPS)


def usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def run(folder: str | Path, sampler: Callable[[], Any] | None = None, samples: int = SAMPLES) -> CanaryResult:
    """Time every component ``samples`` times; ``sampler()`` makes a quiet-window sampler (``start``/``stop``).

    ``folder`` is where the fsync component writes: the engine's filesystem. Components alternate
    within each round (cpu_single, cpu_all, memory, fsync, then again), so a host that changes speed
    during the canary moves every component alike.
    """
    t_all = time.perf_counter()
    where = Path(folder)
    where.mkdir(parents=True, exist_ok=True)
    cores = usable_cores()
    data = bytes(range(256)) * (_CHUNK // 256)
    src = bytearray(b"\xa5") * MEMORY_BYTES  # real pages (a zeroed buffer would map one shared zero page)
    dst = bytearray(b"\x5a") * MEMORY_BYTES
    block = bytes(range(256)) * (FSYNC_BLOCK // 256)
    try:
        echo: Echo | None = Echo()
    except OSError:  # no ``cat`` or no right to pin it: the other components still read the host
        echo = None
    steps: dict[str, Callable[[], None]] = {
        "cpu_single": lambda: cpu_single(data),
        "cpu_all": lambda: cpu_all(data, cores),
        "memory": lambda: memory(src, dst),
        "fsync": lambda: fsync_writes(where, block),
    }
    if echo is not None:
        steps["wakeup"] = lambda: wakeup(echo)
    names = [c for c in COMPONENTS if c in steps]
    out = CanaryResult(samples={c: [] for c in names}, cpu={c: [] for c in names}, cores=cores)
    try:
        for _ in range(samples):
            for name in names:
                win = sampler() if sampler else None
                if win is not None:
                    win.start()
                c0, t0 = time.process_time(), time.perf_counter()
                steps[name]()
                elapsed, used = time.perf_counter() - t0, time.process_time() - c0
                if win is not None:
                    load = win.stop()
                    out.windows.append({**load.to_json(), "component": name})
                out.samples[name].append(elapsed * 1000.0)
                out.cpu[name].append(used * 1000.0)
    finally:
        if echo is not None:
            echo.close()
    out.seconds = time.perf_counter() - t_all
    return out


if __name__ == "__main__":  # python -m jsonbench.host.canary [FOLDER]: one canary, as JSON (the tests run it under a quota)
    import json
    import sys

    got = run(sys.argv[1] if len(sys.argv) > 1 else tempfile.gettempdir())
    print(json.dumps({"samples": got.samples, "cpu": got.cpu, "seconds": got.seconds, "cores": got.cores}))
