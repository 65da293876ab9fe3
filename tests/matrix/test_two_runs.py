"""Two runs at once on one host, from two processes: the host lease serialises their engines, both publish every row once.

Two ``python -m jsonbench.cli run --scale smoke`` are started nearly at once (the scheduler's
nightly run and a person's manual run, or two deployments on one machine: Airflow's pool spans
neither). A sampler counts this session's live postmasters (by executable and parent) every few
hundredths of a second for the whole time: never two at once. Then both runs' rows are read back:
every expected metric of every cell, each once, in one shared results folder (the harder case: both
also publish into one dataset). The lease lives in the host's lock folder, not under a results
folder, so runs with a folder each meet the same lease (tests/unit/test_host.py).
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from jsonbench.cell import CONFIRMATION_SUFFIX, EngineIdentity, cell_id_of
from jsonbench.dataset.publish import read_dataset_report
from jsonbench.suites import get_suite
from tests.faultkit import postmasters

pytestmark = pytest.mark.dag

SUITE = "large_document_update"
ENGINES = ["postgres-16", "postgres-17"]
_DONE = re.compile(r"DAG run (\S+): (\w+) in")


class Census:
    """Samples this session's postmasters until stopped; remembers the most alive at once, and when."""

    def __init__(self, tracker: Any) -> None:
        self.tracker = tracker
        self.most = 0
        self.crowded: list[list[str]] = []
        self.seen: set[str] = set()
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            live = postmasters(self.tracker)
            self.samples += 1
            scratch = str(self.tracker.scratch)
            # data folders (initdb's own postgres runs there too, or in "/" while it bootstraps)
            self.seen |= {p.cwd.removesuffix(" (deleted)") for p in live if p.cwd.startswith(scratch + "/")}
            self.most = max(self.most, len(live))
            if len(live) > 1:
                self.crowded.append([f"{p.pid} {p.cwd}" for p in live])

    def __enter__(self) -> Census:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


def _cli_run(env: dict[str, str], results: Path, label: str, log: Path) -> subprocess.Popen[str]:
    argv = [
        sys.executable,
        "-m",
        "jsonbench.cli",
        "run",
        "--scale",
        "smoke",
        "--engines",
        ",".join(ENGINES),
        "--suites",
        SUITE,
        "--results-dir",
        str(results),
        "--hardware-label",
        label,
        "--repetitions",
        "1",
    ]
    env = {**env, "JSONBENCH_HOST_ENGINES": ",".join(ENGINES)}  # no task groups of other engines to skip
    return subprocess.Popen(argv, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT, text=True)


def _wait_for_full_log(log: Path, proc: subprocess.Popen[str], timeout: float = 120) -> Path:
    """The full log a ``jsonbench.cli run`` names on its first line, once it has printed it."""
    deadline = time.monotonic() + timeout
    while not (m := re.search(r"full log: (\S+)", log.read_text() if log.exists() else "")):
        assert proc.poll() is None, log.read_text()[-3000:]
        assert time.monotonic() < deadline, f"{log} names no full log"
        time.sleep(0.02)
    return Path(m.group(1))


def _published(results: Path, run_id: str) -> dict[str, int]:
    got = read_dataset_report(results, run_id=run_id)
    assert got.damaged == ()
    df = got.table.to_pandas()
    expected = set(get_suite(SUITE).expected_metrics())
    lost = sum(len(expected - set(zip(g.workload, g.metric, strict=True))) for _, g in df.groupby("engine_id"))
    lost += len(expected) * len(set(ENGINES) - set(df.engine_id))
    return {"rows": len(df), "lost": lost, "duplicated": int(df[["engine_id", "workload", "variant", "metric"]].duplicated().sum())}


def test_two_cli_runs_at_once_take_turns_and_both_publish(
    airflow_env: dict[str, str], leak_tracker: Any, leak_check: Any, tmp_path: Path
) -> None:
    folders = "shared"
    results = [tmp_path / "shared"] * 2
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    # Two `dags test` processes racing to write the DAG into a fresh metadata database for the first time fail one of
    # them in Airflow's own DAG sync (UNIQUE constraint failed: asset.name); an installation has synced its DAGs long
    # before two runs meet, so sync once first, as `./bin/setup` and any earlier run do.
    sync = subprocess.run(
        [str(Path(sys.executable).parent / "airflow"), "dags", "reserialize"], env=airflow_env, capture_output=True, text=True, timeout=600
    )
    assert sync.returncode == 0, sync.stderr[-3000:]
    procs: list[subprocess.Popen[str]] = []
    try:
        with Census(leak_tracker) as census:
            # Nearly at once: their start-ups (seconds of `dags test` each) overlap, so their first provisions come
            # within moments of each other, well inside a cell's time: whichever is second finds the host busy. The
            # second starts once the first has named its full log (dags-test-<second>-<pid>.log: its own file even
            # when both start within one second).
            procs.append(_cli_run(airflow_env, results[0], "twins", logs[0]))
            first_log = _wait_for_full_log(logs[0], procs[0])
            procs.append(_cli_run(airflow_env, results[1], "twins", logs[1]))
            second_log = _wait_for_full_log(logs[1], procs[1])
            assert second_log != first_log, "two runs share one full log"
            codes = [p.wait(timeout=3600) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=60)
    outs = [log.read_text() for log in logs]
    done = [_DONE.search(o) for o in outs]
    assert all(done), "\n\n".join(o[-3000:] for o in outs)
    run_ids = [m.group(1) for m in done if m]
    print(
        f"{folders}: exit codes {codes}, states {[m.group(2) for m in done if m]}, data folders seen {len(census.seen)}, "
        f"at most {census.most} at once over {census.samples} samples"
    )
    assert run_ids[0] != run_ids[1]
    full = [Path(m.group(1)).read_text() for m in (re.search(r"full log: (\S+)", o) for o in outs) if m]
    diag = "\n\n".join(f[f.find("Traceback") :][:3000] if "Traceback" in f else f[-2000:] for f in full)
    assert census.most == 1, f"two engines alive at once: {census.crowded[:3]}"
    # Every cell of both runs had its own server (its data folder). A confirmation may add more: a timing that a busy
    # minute made suspect is measured again on an engine of its own (<run>+confirm); that depends on the load, so
    # those folders are allowed, and nothing else is.
    cells = [EngineIdentity.of(rid, cell_id_of(SUITE, e)).name for rid in run_ids for e in ENGINES]
    confirmations = {EngineIdentity.of(rid + CONFIRMATION_SUFFIX, cell_id_of(SUITE, e)).name for rid in run_ids for e in ENGINES}
    seen = {Path(f).parent.name for f in census.seen}
    assert set(cells) <= seen and seen - set(cells) <= confirmations, f"{census.seen}\n{diag}"
    waits = [f.count("the benchmark host is busy") for f in full]
    print(f"  provisions that found the host busy and waited: {waits}")
    assert len(full) == 2 and sum(waits) > 0, "one run waited for the other's engine"
    for res, run_id in zip(results, run_ids, strict=True):
        numbers = _published(res, run_id)
        print(f"  {run_id} in {res.name}: {numbers}")
        assert numbers["lost"] == 0 and numbers["duplicated"] == 0
    assert set(read_dataset_report(results[0]).table.column("run_id").to_pylist()) == set(run_ids)
    assert leak_check() == []
