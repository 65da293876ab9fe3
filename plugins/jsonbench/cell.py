"""The typed values that travel from the run plan to every task: a run, a cell, an engine's identity.

The run plan (:func:`jsonbench.orchestration.plan.plan_cells`) builds one :class:`Cell` per (suite, engine) once;
every task of that cell, possibly in another process on another worker, gets the same cell back
from XCom. JSON is only the transport: :meth:`Cell.to_json` at the XCom boundary,
:meth:`Cell.from_json` right after it, typed values everywhere else.

The engine's identity (:class:`EngineIdentity`) is derived from the run and the cell in this one
place: the folder an engine works in, its container's name and its schema on a shared server are
all the same hash, so a retry or the sweep finds what an earlier attempt started, and no engine
has to ask the driver how that name is made.

This module sits at the bottom of the package: it imports nothing of the project but ``paths``.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from jsonbench import paths

#: Prefix of every engine folder, container and schema name (the leak checks and sweeps look for it).
NAME_PREFIX = "jsonbench-"
#: Appended to a run's id for its confirmation measurements (staged and published apart: jsonbench.checks.confirm).
CONFIRMATION_SUFFIX = "+confirm"
#: The key of a cell's ``scale_params`` (and so of every row's) that says on how many engine starts its timed
#: figures rest (the run parameter ``starts``); absent: one, as every run before it. A parameter, not a column of its
#: own, so that rows of different designs are never one drift history (:func:`jsonbench.history.drift.same_input`) and
#: old files need nothing.
STARTS_KEY = "starts"
#: The scale parameters that say *how* a cell measures, not how much, each with the value it has when unsaid (in rows
#: written before it): rows that differ in one are two designs and never one drift history (:func:`design_params_of`).
#: The starts, and the order of json_vs_jsonb's timed reads (``read_order``: the seed's, one table after the other,
#: unless the scale says ``interleaved``).
READ_ORDER_KEY = "read_order"
DESIGN_PARAMS: dict[str, str] = {STARTS_KEY: "1", READ_ORDER_KEY: "sequential"}
#: How many starts a cell's figures may rest on: a restart costs about 0.4 s, and a workload's source tables are made
#: once and kept across its starts, but each start repeats its warm-ups and the loads its reads need, so more than
#: three would cost more than the 10 % of a night the confirmation budget allows (:data:`jsonbench.checks.confirm.BUDGET_SHARE`).
MAX_STARTS = 3


@dataclass(frozen=True)
class HostFacts:
    """The machine a run measured on (recorded with every row)."""

    host_name: str = ""
    host_cpu_model: str = ""
    host_cores: int = 0
    host_memory_bytes: int = 0
    host_kernel: str = ""
    #: Tell two machines of one type apart (every host here is called ``vm``).
    host_boot_id: str = ""
    host_machine_id: str = ""
    #: Cores a CPU quota on the run's cgroup allowed (None: no quota).
    host_cpu_quota: float | None = None

    @classmethod
    def from_json(cls, d: dict[str, Any] | None) -> HostFacts:
        return cls(**{k: v for k, v in (d or {}).items() if k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class QuietPolicy:
    """When a measurement window counts as disturbed (``quiet_window`` in ``include/matrix.yaml``).

    ``max_other_cpu`` is the share of the whole machine's CPU (all cores) that processes other than
    the engine and the harness may use during a window; ``max_steal`` the share a hypervisor may take.
    """

    max_other_cpu: float = 0.10
    max_steal: float = 0.05


@dataclass(frozen=True)
class RunRef:
    """What every cell of one run shares."""

    run_id: str
    logical_date: str | None
    hardware_label: str
    results_dir: str
    scale: str
    git_revision: str = "unknown"
    host: HostFacts = field(default_factory=HostFacts)
    planned_at: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def confirmation(self) -> RunRef:
        """The same run under the id its confirmation measurements use (own staging, own engines, own host lease)."""
        return self if self.is_confirmation else replace(self, run_id=self.run_id + CONFIRMATION_SUFFIX)

    @property
    def is_confirmation(self) -> bool:
        return self.run_id.endswith(CONFIRMATION_SUFFIX)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RunRef:
        d = dict(d)
        d["host"] = HostFacts.from_json(d.get("host"))
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class EngineIdentity:
    """The names one engine instance goes by, all derived from one hash of the run and the cell.

    Kept short because a unix socket path (``<scratch>/<name>/.s.PGSQL.5432``) may not exceed
    about 100 bytes.
    """

    instance_id: str

    @classmethod
    def of(cls, run_id: str, cell_id: str) -> EngineIdentity:
        return cls(hashlib.sha1(f"{run_id}|{cell_id}".encode()).hexdigest()[:12])

    @property
    def name(self) -> str:
        """``jsonbench-<hash>``: the engine folder's and the container's name."""
        return f"{NAME_PREFIX}{self.instance_id}"

    @property
    def schema(self) -> str:
        """``jsonbench_<hash>``: the cell's schema on a shared (existing) server."""
        return f"jsonbench_{self.instance_id}"

    def workdir(self) -> Path:
        """The engine's private folder on the host that runs the task (it need not exist yet)."""
        return paths.scratch_dir() / self.name


@dataclass(frozen=True)
class PostgresOptions:
    """What only PostgreSQL cells carry: the server settings in force and how they are sized."""

    server_settings: dict[str, str] = field(default_factory=dict)
    memory_caps: dict[str, float] = field(default_factory=dict)
    data_checksums: bool = True
    #: Per-statement limit for benchmark sessions (``statement_timeout``, seconds; 0 = none).
    statement_timeout_s: int = 0


@dataclass(frozen=True)
class Cell:
    """One suite on one engine in one run: everything its tasks need, and nothing they must look up.

    ``adapter`` is the import path (``module:Class``) of the engine backend that runs this cell,
    resolved by the run plan from the matrix's ``families`` block, so that ``engine_for`` needs no
    registry and callers never branch on an engine's name. ``backend_options`` are that backend's
    own options from the matrix (a build, an image, a connection id, an apsw pin), read by the
    adapter alone. ``postgres`` is set for PostgreSQL cells only.
    """

    cell_id: str
    suite: str
    engine_id: str
    family: str
    version: str
    backend: str
    adapter: str
    backend_options: dict[str, Any]
    scale: str
    scale_params: dict[str, Any]
    repetitions: int
    run: RunRef
    quiet: QuietPolicy = field(default_factory=QuietPolicy)
    postgres: PostgresOptions | None = None
    #: Position of this cell in the run's order (cells run one after another on the host).
    position: int = 0

    @property
    def identity(self) -> EngineIdentity:
        return EngineIdentity.of(self.run.run_id, self.cell_id)

    @property
    def server_settings(self) -> dict[str, str]:
        """The server settings of a PostgreSQL cell (empty for other families)."""
        return dict(self.postgres.server_settings) if self.postgres else {}

    @property
    def starts(self) -> int:
        """On how many engine starts this cell's timed figures rest (:data:`STARTS_KEY`; 1 when absent)."""
        return starts_of(self.scale_params)

    def with_starts(self, starts: int) -> Cell:
        """This cell with its figures resting on ``starts`` engine starts (the key is left out for one, as before it existed)."""
        params = {k: v for k, v in self.scale_params.items() if k != STARTS_KEY}
        if starts > 1:
            params[STARTS_KEY] = int(starts)
        return replace(self, scale_params=params)

    def to_json(self) -> dict[str, Any]:
        """The cell as plain JSON (for XCom and the staging files)."""
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Cell:
        d = dict(d)
        d["run"] = RunRef.from_json(d["run"])
        d["quiet"] = QuietPolicy(**(d.get("quiet") or {}))
        d["postgres"] = PostgresOptions(**d["postgres"]) if d.get("postgres") else None
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


def starts_of(scale_params: Any) -> int:
    """The starts a row's or a cell's figures rest on, from its scale parameters (a dict, or a row's JSON text); 1 when unsaid."""
    if isinstance(scale_params, str):
        if STARTS_KEY not in scale_params:
            return 1
        try:
            scale_params = json.loads(scale_params)
        except ValueError:
            return 1
    if not isinstance(scale_params, dict):
        return 1
    try:
        return max(1, int(scale_params.get(STARTS_KEY) or 1))
    except (TypeError, ValueError):
        return 1


def design_params_of(scale_params: Any) -> tuple[str, ...]:
    """The :data:`DESIGN_PARAMS` of a row or cell (a dict, or a row's JSON text) as comparable text, each its default
    when unsaid (so rows written before a parameter existed are of its default design)."""
    params: Any = scale_params
    if isinstance(params, str):
        try:
            params = json.loads(params) if any(k in params for k in DESIGN_PARAMS) else {}
        except ValueError:
            params = {}
    if not isinstance(params, dict):
        params = {}
    return (str(starts_of(params)), *(str(params.get(k) or d) for k, d in DESIGN_PARAMS.items() if k != STARTS_KEY))


def cell_id_of(suite: str, engine_id: str) -> str:
    """``<suite>__<engine>``: a cell's id, also its task group's id in the DAG.

    Airflow group ids allow letters, digits, dashes and underscores only, so anything else (the dots
    of ``sqlite-3.46.1``) becomes an underscore: ``sqlite_jsonb__sqlite-3_46_1``.
    """
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"{suite}__{engine_id}")


def cell_label_of(suite: str, engine_id: str) -> str:
    """``<engine> · <suite>``: the name a cell's task group shows in Airflow's UI (its id stays :func:`cell_id_of`).

    The engine first: the grid's name column cuts a long name after about 26 characters, and the id's suite-first
    ``large_document_update__pos…`` hid which engine a group measures (seen on the UI test's screenshots).
    """
    return f"{engine_id} · {suite}"
