"""Which benchmark engines are alive right now, sampled from ``/proc`` while a real run goes on (tests and benchmark commands).

An engine is a PostgreSQL *postmaster* (a process whose executable is a ``postgres`` binary and whose
parent is not one: backends, the checkpointer and the WAL writer are its children, whatever their
command line says) or a SQLite worker (``sqlite_worker.py``), counted when its data folder (``-D``,
or the working directory) lies under the given scratch folder. Command lines are not trusted for
the postmaster's children, which rewrite theirs.

An engine is one data folder, not one process: a backend that exits between two reads of ``/proc``
(its parent then unreadable) or a child orphaned while its postmaster stops looks like a second
postmaster, but it is the same engine. Two engines alive at once means two data folders.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path


def _exe(pid: str) -> str:
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return ""


def _keep_lowest(found: dict[str, tuple[int, str]], folder: str, pid: str, kind: str) -> None:
    line = (int(pid), f"{kind} {pid} {folder}")
    found[folder] = min(found.get(folder, line), line)


def _is_postgres(exe: str) -> bool:
    return os.path.basename(exe.replace(" (deleted)", "")) == "postgres"


def live_engines(scratch: Path) -> list[str]:
    """One line per live engine (data folder) under ``scratch``: ``postmaster <pid> <data folder>`` or ``sqlite <pid> <folder>``.

    Where a folder shows more than one candidate process, the line names the lowest pid.
    """
    root = str(scratch)
    found: dict[str, tuple[int, str]] = {}
    for entry in Path("/proc").iterdir():
        pid = entry.name
        if not pid.isdigit():
            continue
        try:
            state, ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
        except (OSError, IndexError):
            continue
        if state == "Z":
            continue
        exe = _exe(pid)
        if _is_postgres(exe) and not _is_postgres(_exe(ppid)):
            args = [a.decode(errors="replace") for a in argv]
            data = args[args.index("-D") + 1] if "-D" in args[:-1] else cwd
            if data.startswith(root) or cwd.startswith(root):
                _keep_lowest(found, data, pid, "postmaster")
        elif any(a.endswith(b"sqlite_worker.py") for a in argv) and cwd.startswith(root):
            _keep_lowest(found, cwd, pid, "sqlite")
    return sorted(line for _, line in found.values())


@dataclass
class Census:
    """Samples :func:`live_engines` every ``every`` seconds in a thread until stopped."""

    scratch: Path
    every: float = 0.2
    samples: int = 0
    peak: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            now = live_engines(self.scratch)
            self.samples += 1
            self.seen.update(now)
            if len(now) > len(self.peak):
                self.peak = now
            time.sleep(self.every)

    def __enter__(self) -> Census:
        self._thread = threading.Thread(target=self._loop, name="engine-census", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
