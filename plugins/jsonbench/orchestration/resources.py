"""What the driver samples of an engine while a cell's task runs, beside the suite's own figures.

The engine's memory and disk peaks, read in a background thread that never samples inside a
measure window (:func:`resource_peaks`), and the quiet-window sampler a workload hands its windows
(:func:`window_sampler`), which sees the engine's own processes so that it counts only other load.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from jsonbench.cell import Cell
from jsonbench.engines.base import Engine, Handle
from jsonbench.host.load import WINDOW_OPEN, WindowSampler

#: How often the resource sampler reads an engine's memory and disk while a task runs (seconds).
SAMPLE_EVERY_S = 2.0


def window_sampler(engine: Engine[Any, Any], handle: Handle, cell: Cell) -> Callable[[], WindowSampler]:
    """A maker of the quiet-window sampler of ``cell``, seeing ``engine``'s processes as its own (not other load)."""

    def make() -> WindowSampler:
        return WindowSampler(lambda: engine.pids(handle), cell.quiet.max_other_cpu, cell.quiet.max_steal)

    return make


@contextmanager
def resource_peaks(engine: Engine[Any, Any], handle: Handle) -> Iterator[dict[str, float]]:
    """Sample the engine's memory and disk in the background while the block runs; yield the peaks."""
    peaks: dict[str, float] = {"peak_memory": 0.0, "peak_disk": 0.0, "seconds": 0.0}
    stop = threading.Event()

    def take() -> None:
        try:
            use = engine.usage(handle)
            peaks["peak_memory"] = max(peaks["peak_memory"], float(use.memory_bytes))
            peaks["peak_disk"] = max(peaks["peak_disk"], float(use.disk_bytes))
        except Exception:  # sampling must never break a measurement
            pass

    in_windows = os.environ.get("JSONBENCH_SAMPLE_IN_WINDOWS") == "1"  # the old way, for the overhead table only

    def sample() -> None:
        t0 = time.monotonic()
        while True:
            # Never beside a measurement: while a window is open, wait for it to close, then sample at once
            # (what the engine holds right after the window is what it held at its end).
            while WINDOW_OPEN.is_set() and not in_windows:
                if stop.wait(0.05):
                    return
            take()
            # Often at first (a short task's engine processes may live a second), then every SAMPLE_EVERY_S.
            if stop.wait(0.2 if time.monotonic() - t0 < 5 else SAMPLE_EVERY_S):
                return

    t0 = time.perf_counter()
    thread = threading.Thread(target=sample, name="jsonbench-resources", daemon=True)
    thread.start()
    try:
        yield peaks
        take()  # once more at the end, while the session (and its processes) is still open
    finally:
        stop.set()
        thread.join(timeout=30)
        peaks["seconds"] = time.perf_counter() - t0
