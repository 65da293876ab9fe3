"""The engine contract: the one interface every engine backend fulfils.

An *engine* is a database build a suite can run against: an embedded PostgreSQL 17, a
``postgres:17`` container, an existing server, an apsw build of SQLite 3.46.1. Each backend is one
small adapter class; ``include/matrix.yaml`` registers it under its family
(``families.<family>.backends.<backend>: module:Class``), the run plan
(:mod:`jsonbench.orchestration.plan`) copies that import path into the :class:`~jsonbench.cell.Cell`,
and :func:`engine_for` imports it. The driver (:mod:`jsonbench.orchestration.tasks`) only ever calls
the methods below, and suites only ever see a :class:`Session`.

Lifecycle, one cell at a time on a host (each step may run in a different process, even on a
different worker, so what crosses steps is the adapter's typed :class:`Handle`, as JSON)::

    engine = engine_for(cell)                 # the adapter of the cell; no I/O
    engine.check()                            # fail early: build present, tools present
    handle = engine.provision()               # start the server (or prepare the runtime)
    facts = engine.facts(handle)              # version, build, configure, settings, checksums
    with engine.session(handle) as session:   # what suites use
        ...
    engine.teardown(handle)                   # always runs; idempotent; removes everything

Everything an adapter needs comes from the cell: the engine's folder, container name and schema
are ``cell.identity`` (one hash of the run and the cell), so :meth:`Engine.handle_for` can find
what a killed task started. Adapters never import the driver (``tasks``), the run plan
(``plan``), the matrix file (``matrix``) or the command line; setup-time work (fetching builds, making venvs) belongs to
:mod:`jsonbench.setup`, not here.

Adding a backend: subclass :class:`Engine` with a :class:`Handle` dataclass of its own (named by
``handle_type``, which :meth:`Engine.load_handle` rebuilds from JSON), add it under its family in
``include/matrix.yaml``, and give the engines an entry under ``backends:`` with the options the
adapter reads from ``cell.backend_options``. ``tests/matrix/test_backend_recipe.py`` adds one
from a temporary folder exactly this way (``docs/extending.md`` has the recipe step by step).

Families:

* ``postgres`` sessions are :class:`jsonbench.engines.postgres_session.PostgresSession`:
  a psycopg connection plus the measuring primitives PostgreSQL suites need (LSN, CHECKPOINT,
  relation sizes, flushed table statistics, pgbench). Every PostgreSQL backend returns one, so a
  PostgreSQL suite runs unchanged on embedded, Docker and existing servers.
* ``sqlite`` sessions run statements inside the SQLite build's own Python environment and time
  them there (see :mod:`jsonbench.engines.sqlite_apsw`).
"""

from __future__ import annotations

import abc
import dataclasses
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from jsonbench import load_object
from jsonbench.cell import Cell


@dataclass
class Handle:
    """What provision hands to every later step of a cell; JSON across processes.

    Subclasses add their backend's fields (a socket folder, a container id, a schema). ``workdir``
    is the engine's private folder on the executing host (``cell.identity.workdir()``); its
    existence is what tells the sweep that a cell may have left something behind.
    """

    workdir: str

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls: type[H], d: dict[str, Any]) -> H:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


H = TypeVar("H", bound=Handle)


class Session(abc.ABC):
    """A live connection to a provisioned engine, used by suites. Family-specific subclasses add primitives."""

    #: What the engine build can do (``{"lz4": False, "json_table": True, ...}``), from the engine's facts.
    capabilities: dict[str, bool]

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connection."""

    def fingerprint(self) -> str | None:
        """A content hash of every table the session's database holds now, the same for the same rows whatever their
        physical order or the engine build; None when the family has none. What an A/B comparison records of the data
        each start loaded, to drop a pair whose arms saw different data."""
        return None


S = TypeVar("S", bound=Session)


@dataclass(frozen=True)
class ResourceUsage:
    """What an engine holds right now: memory of its processes (PSS, bytes) and its data on disk (bytes)."""

    memory_bytes: int = 0
    disk_bytes: int = 0


class Engine(abc.ABC, Generic[H, S]):
    """One engine build reached through one backend."""

    family: ClassVar[str]
    backend: ClassVar[str]
    handle_type: ClassVar[type[Handle]] = Handle
    #: Whether :meth:`restart` works: the run plan lets a cell's figures rest on several engine starts (``starts``)
    #: only then, and gives the other cells one start (a user's own server, SQLite opened in its worker).
    can_restart: ClassVar[bool] = False

    def __init__(self, cell: Cell) -> None:
        self.cell = cell
        self.version: str = cell.version
        self.options: dict[str, Any] = dict(cell.backend_options)

    @property
    def workdir(self) -> Path:
        """This engine's private folder on this host (it exists while the engine may be alive)."""
        return self.cell.identity.workdir()

    def check(self) -> None:  # noqa: B027 - optional hook: most builds have nothing to check cheaply
        """Raise :class:`~jsonbench.errors.EngineUnavailable` if this engine cannot possibly run here.

        Cheap and side-effect free: the plan task calls it for every cell before any engine starts.
        """

    @abc.abstractmethod
    def provision(self) -> H:
        """Start a fresh engine with the cell's settings; return the handle the other steps need.

        Creates :attr:`workdir` (it does not exist yet). On failure, clean up whatever was started
        and raise with the server's own words (log tail).
        """

    def handle_for(self) -> H:
        """A handle good enough for :meth:`teardown` when the real one was lost (a killed setup task)."""
        return self.handle_type(workdir=str(self.workdir))  # type: ignore[return-value]  # adapters with required fields override

    def load_handle(self, d: dict[str, Any]) -> H:
        """The typed handle from its JSON (what crossed XCom)."""
        return self.handle_type.from_json(d)  # type: ignore[return-value]  # handle_type is H for every adapter

    def pgbench(self) -> list[str] | None:
        """The argv prefix of a pgbench able to reach this engine's servers, known before provisioning.

        What sessions get as ``PostgresSession.pgbench``; ``None`` when the backend has none (or the
        family has no pgbench). Lets a suite's ``preflight`` check the tool before any engine starts.
        """
        return None

    @abc.abstractmethod
    def facts(self, handle: H) -> dict[str, Any]:
        """Exact version, build, configure flags/compile options, settings in force, checksum state, capabilities."""

    @abc.abstractmethod
    def session(self, handle: H) -> AbstractContextManager[S]:
        """A context manager yielding a :class:`Session`."""

    @abc.abstractmethod
    def teardown(self, handle: H) -> None:
        """Stop and remove everything :meth:`provision` created. Must succeed when run twice or after a crash."""

    def restart(self, handle: H) -> H:
        """Stop the engine and start it again on the same data: new processes and memory, the files and the page cache kept.

        What a second *start* of one cell costs without a second load (where the noise between engine
        starts enters; ``jsonbench-dev restart-check`` measures it). A backend that cannot (a user's own server, a file
        opened in process) raises :class:`~jsonbench.errors.EngineUnavailable`.
        """
        from jsonbench.errors import EngineUnavailable

        raise EngineUnavailable(f"the {self.backend} backend cannot restart its engine inside a cell")

    # -- what the driver samples while the engine runs ----------------------------------------

    def pids(self, handle: H) -> list[int]:
        """Host process ids of the engine's processes (a server and its children); empty when remote."""
        return []

    def cpu_seconds(self, handle: H) -> float | None:
        """CPU time the engine has used so far, children that already exited included; None if unknown.

        The quiet-window sampler subtracts it from the host's busy time to see what *else* ran.
        The default sums ``/proc/<pid>/stat`` (utime, stime, cutime, cstime) over :meth:`pids`.
        """
        from jsonbench.host import load as hostload

        pids = self.pids(handle)
        return hostload.cpu_seconds_of(pids) if pids else None

    def usage(self, handle: H) -> ResourceUsage:
        """Memory and disk the engine holds now (the driver records the peaks per cell)."""
        from jsonbench.host import load as hostload

        return ResourceUsage(hostload.pss_bytes_of(self.pids(handle)), hostload.folder_bytes(Path(handle.workdir)))


def engine_for(cell: Cell) -> Engine[Any, Any]:
    """The adapter of a cell (the import path the run plan put into ``cell.adapter``)."""
    from jsonbench.errors import ConfigError

    try:
        cls = load_object(cell.adapter)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"matrix.families.{cell.family}.backends.{cell.backend}", f"cannot import adapter {cell.adapter!r}: {exc}"
        ) from None
    if not (isinstance(cls, type) and issubclass(cls, Engine)):
        raise ConfigError(f"matrix.families.{cell.family}.backends.{cell.backend}", f"{cell.adapter!r} is not an Engine adapter")
    engine: Engine[Any, Any] = cls(cell)
    return engine
