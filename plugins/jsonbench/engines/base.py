"""The engine contract: the one interface every engine backend fulfils.

An *engine* is a database build a suite can run against: an embedded PostgreSQL 17, a
``postgres:17`` container, an existing server, an apsw build of SQLite 3.46.1. Each backend is one
small adapter class registered under ``(family, backend)``; the driver (:mod:`jsonbench.tasks`)
only ever calls the methods below, and suites only ever see a :class:`Session`.

Lifecycle, one cell at a time (each step may run in a different process, even on a different
worker, so everything that crosses steps is the JSON-serialisable *handle*)::

    engine = engine_for(cell)                 # pick the adapter from the cell; no I/O
    engine.check()                            # fail early: build present, tools present
    handle = engine.provision(workdir)        # start the server (or prepare the runtime)
    facts = engine.facts(handle)              # version, build, configure, settings, checksums
    with engine.session(handle) as session:   # what suites use
        ...
    engine.teardown(handle)                   # always runs; idempotent; removes everything

Adding a backend: subclass :class:`Engine`, decorate it with :func:`register`, list its module in
``jsonbench.engines.ADAPTER_MODULES``, and give the engines of ``include/matrix.yaml`` an entry
under ``backends:`` with the options the adapter reads from ``cell["backend_options"]``.

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
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, ClassVar

Handle = dict[str, Any]


class Session(abc.ABC):
    """A live connection to a provisioned engine, used by suites. Family-specific subclasses add primitives."""

    #: What the engine build can do (``{"lz4": False, "json_table": True, ...}``), from the engine's facts.
    capabilities: dict[str, bool]

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connection."""


class Engine(abc.ABC):
    """One engine build reached through one backend. Subclasses register with :func:`register`."""

    family: ClassVar[str]
    backend: ClassVar[str]

    def __init__(self, cell: dict[str, Any]) -> None:
        self.cell = cell
        self.version: str = cell["version"]
        self.options: dict[str, Any] = cell.get("backend_options") or {}

    def check(self) -> None:
        """Raise :class:`~jsonbench.errors.EngineUnavailable` if this engine cannot possibly run here.

        Cheap and side-effect free: the plan task calls it for every cell before any engine starts.
        """

    @abc.abstractmethod
    def provision(self, workdir: Path) -> Handle:
        """Start a fresh engine with the cell's settings; return the handle the other steps need.

        ``workdir`` is this engine's own folder (it does not exist yet; create it). It is derived
        from the run and cell, so :meth:`handle_for` can find a server a killed task left behind.
        On failure, clean up whatever was started and raise with the server's own words (log tail).
        """

    def handle_for(self, workdir: Path) -> Handle:
        """A handle good enough for :meth:`teardown` when the real one was lost (a killed setup task)."""
        return {"workdir": str(workdir)}

    def pgbench(self) -> list[str] | None:
        """The argv prefix of a pgbench able to reach this engine's servers, known before provisioning.

        What sessions get as ``PostgresSession.pgbench``; ``None`` when the backend has none (or the
        family has no pgbench). Lets a suite's ``preflight`` check the tool before any engine starts.
        """
        return None

    @abc.abstractmethod
    def facts(self, handle: Handle) -> dict[str, Any]:
        """Exact version, build, configure flags/compile options, settings in force, checksum state, capabilities."""

    @abc.abstractmethod
    def session(self, handle: Handle) -> AbstractContextManager[Session]:
        """A context manager yielding a :class:`Session`."""

    @abc.abstractmethod
    def teardown(self, handle: Handle) -> None:
        """Stop and remove everything :meth:`provision` created. Must succeed when run twice or after a crash."""


_REGISTRY: dict[tuple[str, str], type[Engine]] = {}


def register(cls: type[Engine]) -> type[Engine]:
    """Class decorator: make ``cls`` the adapter for its ``(family, backend)``."""
    _REGISTRY[(cls.family, cls.backend)] = cls
    return cls


def engine_for(cell: dict[str, Any]) -> Engine:
    """The adapter for a cell's family and backend."""
    from jsonbench.engines import load_adapters
    from jsonbench.errors import ConfigError

    load_adapters()
    try:
        cls = _REGISTRY[(cell["family"], cell["backend"])]
    except KeyError:
        known = ", ".join(f"{f}/{b}" for f, b in sorted(_REGISTRY))
        raise ConfigError("backend", f"no adapter for {cell['family']}/{cell['backend']} (known: {known})") from None
    return cls(cell)


def registered() -> Iterator[tuple[str, str]]:
    """The ``(family, backend)`` pairs that have an adapter."""
    from jsonbench.engines import load_adapters

    load_adapters()
    yield from sorted(_REGISTRY)
