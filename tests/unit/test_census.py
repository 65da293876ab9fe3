"""The census of live engines counts data folders, not processes (real processes, real /proc)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from jsonbench.host.census import live_engines


def _worker(folder: Path) -> subprocess.Popen[bytes]:
    """A process that looks like a SQLite worker to the census: a script of that name, started in ``folder``."""
    script = folder / "sqlite_worker.py"
    if not script.exists():  # rewriting it could truncate it under a worker still reading it: an empty script exits at once
        script.write_text("import time\ntime.sleep(30)\n")
    proc = subprocess.Popen([sys.executable, str(script)], cwd=folder)
    for _ in range(200):  # until it has exec'd: its command line names the script
        if b"sqlite_worker.py" in Path(f"/proc/{proc.pid}/cmdline").read_bytes():
            return proc
        time.sleep(0.01)
    raise AssertionError("the worker never started")


def test_two_processes_in_one_folder_are_one_engine_and_two_folders_are_two(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    procs = [_worker(one), _worker(one)]
    try:
        assert live_engines(tmp_path) == [f"sqlite {min(p.pid for p in procs)} {one}"]
        procs.append(_worker(two))
        assert sorted(line.split()[2] for line in live_engines(tmp_path)) == [str(one), str(two)]
        assert live_engines(tmp_path / "elsewhere") == []
    finally:
        for p in procs:
            p.kill()
            p.wait()
