"""The host lease: at most one engine alive on a benchmark host, whoever started it.

Within one run the DAG chains its cells, so they never overlap. Two runs can still meet on one
host: the scheduler's nightly run and a manual ``jsonbench.cli run``, or two Airflow deployments
that share a machine. Airflow's pools do not span processes or deployments, so the engines take a
lease on the host itself: a small JSON file in :func:`jsonbench.paths.host_lock_dir` (one folder per
machine), created atomically by the cell's provision task before its engine starts and removed by
its teardown (or by the sweep) after the engine is gone.

A lease names its holder (run, cell, engine folder, when), so a waiting run can say who it waits
for. A lease whose engine folder no longer exists is stale (the holder is gone and left nothing
running) and is taken over. A live lease is never broken: a run that waits too long fails with a
message naming the holder and the command that releases it.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from jsonbench import paths
from jsonbench.dataset.fsio import write_text_atomic
from jsonbench.errors import BenchmarkError

log = logging.getLogger(__name__)

LEASE = "engine.lease"
#: A lease younger than this is never judged stale: its holder may be creating its engine folder.
GRACE_S = 60.0


class HostBusy(BenchmarkError):
    """Another run's engine holds the host; ``holder`` says whose."""

    def __init__(self, holder: Lease, waited_s: float | None = None) -> None:
        self.holder = holder
        self.waited_s = waited_s
        super().__init__(
            f"the benchmark host is busy: {holder.cell_id} of run {holder.run_id} holds it since {holder.acquired_at} "
            f"(engine folder {holder.workdir}, process {holder.pid} on {holder.hostname})"
        )


@dataclass(frozen=True)
class Lease:
    """Who holds the host."""

    run_id: str
    cell_id: str
    workdir: str
    acquired_at: str
    pid: int
    hostname: str

    @property
    def age_s(self) -> float:
        return (datetime.now(UTC) - datetime.fromisoformat(self.acquired_at)).total_seconds()


def _dir() -> Path:
    d = paths.host_lock_dir()
    d.mkdir(parents=True, exist_ok=True)
    try:
        os.chmod(d, 0o1777)  # every user's runs on this host share it (sticky: nobody removes another's files)
    except PermissionError:
        pass
    return d


@contextmanager
def _guard() -> Iterator[None]:
    """Serialise read-check-write of the lease between processes (held for microseconds)."""
    with open(_dir() / ".guard", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def holder() -> Lease | None:
    """The current lease, if any (a file that cannot be read counts as none, and is replaced)."""
    path = _dir() / LEASE
    try:
        return Lease(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def _stale(lease: Lease) -> bool:
    return lease.age_s > GRACE_S and not Path(lease.workdir).exists()


def acquire(run_id: str, cell_id: str, workdir: Path) -> Lease:
    """Take the host for ``cell_id`` of ``run_id``, or raise :class:`HostBusy` naming the holder.

    Taking it again for the same run and cell (a retry of the same provision) is allowed.
    """
    import socket

    with _guard():
        current = holder()
        if current is not None and (current.run_id, current.cell_id) != (run_id, cell_id):
            if not _stale(current):
                raise HostBusy(current)
            log.warning(
                "taking over a stale host lease of %s (run %s): its engine folder %s is gone",
                current.cell_id,
                current.run_id,
                current.workdir,
            )
        lease = Lease(run_id, cell_id, str(workdir), datetime.now(UTC).isoformat(), os.getpid(), socket.gethostname())
        write_text_atomic(_dir() / LEASE, json.dumps(asdict(lease)))
        return lease


def release(run_id: str, cell_id: str) -> bool:
    """Give the host back if ``cell_id`` of ``run_id`` holds it; True when a lease was removed."""
    with _guard():
        current = holder()
        if current is None or (current.run_id, current.cell_id) != (run_id, cell_id):
            return False
        (_dir() / LEASE).unlink(missing_ok=True)
        return True


def release_run(run_id: str) -> Lease | None:
    """Give the host back if any cell of ``run_id`` holds it (the sweep, after every teardown)."""
    with _guard():
        current = holder()
        if current is None or current.run_id != run_id:
            return None
        (_dir() / LEASE).unlink(missing_ok=True)
        return current


def force_release() -> Lease | None:
    """Remove whatever lease is there (``jsonbench.cli host release``: for a holder that is known dead)."""
    with _guard():
        current = holder()
        (_dir() / LEASE).unlink(missing_ok=True)
        return current


def wait_file(run_id: str, cell_id: str) -> Path:
    """Where a waiting provision remembers when it started waiting (so the wait can be bounded)."""
    key = f"{run_id}|{cell_id}".encode().hex()[:96]
    return _dir() / f".wait-{key}"


def waited_s(run_id: str, cell_id: str) -> float:
    """Seconds since this cell first found the host busy (0 on the first attempt)."""
    path = wait_file(run_id, cell_id)
    try:
        return time.time() - float(path.read_text())
    except (OSError, ValueError):
        path.write_text(str(time.time()))
        return 0.0


def stop_waiting(run_id: str, cell_id: str) -> None:
    wait_file(run_id, cell_id).unlink(missing_ok=True)
