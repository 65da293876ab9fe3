"""The quiet detector sees a one-core busy loop: a deterministic fact while the loop holds a whole core.

Only the busy side is tested: whether an idle machine reads quiet depends on what else the machine
runs (``python -m jsonbench.cli quiet-check`` shows both sides on a quiet machine).
"""

from __future__ import annotations

import os
import time

from jsonbench.host import load as hostload
from jsonbench.tools.quietcheck import start_hog, stop_hog


def test_windows_beside_a_pinned_busy_loop_read_busy() -> None:
    """A busy loop on one of the cores is at least 1/cores of the machine, far above the 10 % threshold.

    The windows are as short as the suites' (5-30 ms), around this process's own work and sleeps;
    the loop is not this process's child, so it counts as someone else's.
    """
    cores = len(os.sched_getaffinity(0))
    hog = start_hog()
    try:
        time.sleep(0.3)
        loads = []
        seen = 0
        for i in range(60):
            sampler = hostload.WindowSampler(lambda: [], max_other_cpu=0.10, max_steal=1.0)
            sampler.start()
            if i % 2:
                time.sleep(0.005 + 0.0005 * i)
            else:
                t = time.perf_counter()
                while time.perf_counter() - t < 0.005 + 0.0004 * i:
                    pass
            loads.append(sampler.stop())
            seen += hog in sampler.last_others
    finally:
        stop_hog(hog)
    assert seen >= 0.95 * len(loads), f"the busy loop was counted as someone else's in {seen} of {len(loads)} windows"
    busy = [w for w in loads if w.quiet is False]
    assert len(busy) >= 0.95 * len(loads), [round(w.other_cpu or 0, 3) for w in loads]
    assert all(w.other_cpu is not None and w.other_cpu > 0.10 for w in busy)
    # A disturbed window names who disturbed it: the loop, by its command line and pid, among the busiest.
    assert all(w.busiest and "python" in w.busiest for w in busy), [w.busiest for w in busy[:5]]
    assert sum(f"({hog})" in (w.busiest or "") for w in busy) >= 0.95 * len(busy), [w.busiest for w in busy[:5]]
    assert cores >= 1
