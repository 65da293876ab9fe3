"""What a PostgreSQL cell costs the host, given what its suite stores and runs (used by ``Suite.estimate``).

A suite knows its data (bytes it writes and keeps at once) and its run time from its scale
parameters; this module adds what the server needs around that, from the cell's settings *after*
``memory_caps`` (the same scaling the adapters apply at provision):

* **memory**: the part of ``shared_buffers`` the data can fill (PSS counts the pages touched, not
  the setting), ``maintenance_work_mem`` while an index is built, ``work_mem`` per client, and a
  resident floor per server process (postmaster, background workers, clients);
* **disk**: the data at its peak, plus the WAL kept between checkpoints (at most about
  ``max_wal_size``), plus the empty cluster.

Figures are upper bounds meant for the plan's "will it fit" check and its duration column; a
recorded run of the same cell replaces them (:mod:`jsonbench.orchestration.costs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jsonbench.cell import Cell
from jsonbench.suites.base import CellCost

MB = 1024 * 1024
#: An empty cluster (initdb, catalogs, the first WAL segment files), measured on the embedded builds.
EMPTY_CLUSTER_BYTES = 64 * MB
#: Resident memory of one server process beyond shared buffers (postmaster, background workers, backends).
PROCESS_BYTES = 12 * MB
#: Server processes besides the clients (postmaster, checkpointer, WAL writer, autovacuum, ...).
BACKGROUND_PROCESSES = 7
#: Server start and stop, per cell (seconds): the recorded smoke cells (a whole seed 004 cell
#: in 2.5 s of staged task time, its workloads 2.4 s of it) leave under a second for them.
PROVISION_S = 1.0


@dataclass(frozen=True)
class ServerSizes:
    """The memory settings in force for a cell (bytes), after ``memory_caps``."""

    shared_buffers: int
    work_mem: int
    maintenance_work_mem: int
    max_wal_size: int


def server_sizes(cell: Cell) -> ServerSizes:
    """The cell's memory settings as the adapter will start the server with them (capped to this machine)."""
    from jsonbench.engines.postgres_common import scaled_settings, size_bytes
    from jsonbench.host import facts as hostfacts

    pg = cell.postgres
    settings, _ = scaled_settings(cell.server_settings, pg.memory_caps if pg else {}, hostfacts.memory_bytes())

    def size(name: str, default: str) -> int:
        return size_bytes(settings.get(name, default)) or (size_bytes(default) or 0)

    return ServerSizes(
        size("shared_buffers", "128MB"), size("work_mem", "4MB"), size("maintenance_work_mem", "64MB"), size("max_wal_size", "1GB")
    )


def postgres_cost(
    cell: Cell,
    *,
    load_bytes: float,
    data_peak_bytes: float,
    wal_bytes: float,
    clients: int,
    duration_s: float,
    builds_indexes: bool = True,
    source: str = "estimate from the scale",
) -> CellCost:
    """A :class:`CellCost` from what the suite writes and keeps (bytes), its clients and its run time.

    ``load_bytes`` is what the setup step loads; ``data_peak_bytes`` the most data held at once
    (tables, indexes, copies); ``wal_bytes`` the WAL the busiest stretch between two checkpoints
    writes (kept at most up to ``max_wal_size``, then checkpoints recycle it).
    """
    sizes = server_sizes(cell)
    buffers = min(sizes.shared_buffers, int(data_peak_bytes) + 16 * MB)
    maintenance = min(sizes.maintenance_work_mem, int(data_peak_bytes)) if builds_indexes else 0
    memory = buffers + maintenance + clients * sizes.work_mem + (clients + BACKGROUND_PROCESSES) * PROCESS_BYTES
    wal = min(int(wal_bytes), int(sizes.max_wal_size * 1.1))
    disk = EMPTY_CLUSTER_BYTES + int(data_peak_bytes) + wal
    return CellCost(
        load_bytes=int(load_bytes), disk_peak_bytes=disk, memory_peak_bytes=memory, duration_s=PROVISION_S + duration_s, source=source
    )


def run_seconds(scale: dict[str, Any], kind: str, transactions_s: float = 1.0) -> float:
    """Seconds one pgbench run of ``kind`` (``pgbench``, ``update``) lasts: ``<kind>_seconds``, or
    ``transactions_s`` for a run of a fixed transaction count (``<kind>_transactions``, smoke)."""
    if scale.get(f"{kind}_transactions"):
        return transactions_s
    return float(scale.get(f"{kind}_seconds", 1) or 1)
