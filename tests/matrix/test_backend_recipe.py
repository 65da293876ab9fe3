"""The recipe for adding an engine backend (``docs/extending.md``), followed to the letter from a temporary folder.

A backend ``relay`` is added exactly as the recipe says, and nowhere else: one adapter module on the path (outside the
repository), subclassing ``Engine`` with a handle of its own, registered under the PostgreSQL family in a copy of
``include/matrix.yaml`` and given an entry under ``postgres-17``'s ``backends:`` with the option it reads (``build``).
It serves PostgreSQL by relaying every step to the embedded adapter, so the server it starts is the real embedded
build. The backend is then planned with ``jsonbench plan --backend relay``, offered by the DAG's ``backend``
parameter, and one smoke cell runs on it through ``tasks.plan / provision / run_workload / teardown / publish``: the
rows record the backend, the quiet rule sees the server's processes through the adapter's ``pids``, and teardown
(twice, the second time from the handle ``handle_for`` finds, as after a killed task) leaves nothing behind. No file of
the project changes: the test snapshots its Python files and build pins before and compares after.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from jsonbench.cell import cell_id_of
from jsonbench.engines.npm_builds import npm_build
from tests.recipes import child_env, include_copy, jsonbench, parsed_dag, project_files, read_matrix, write_matrix

BACKEND = "relay"
ENGINE = "postgres-17"
SUITE = "large_document_update"

pytestmark = pytest.mark.integration

MODULE = '''
"""Backend "relay": the embedded build's server, started and stopped by the embedded adapter it relays every step
to, under a handle of its own. Proves the recipe for a new backend."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

from jsonbench.cell import Cell
from jsonbench.engines.base import Engine, Handle
from jsonbench.engines.postgres_embedded import EmbeddedHandle, EmbeddedPostgres
from jsonbench.engines.postgres_session import PostgresSession


@dataclass
class RelayHandle(Handle):
    """The embedded server's own handle, as JSON: what every later step needs to reach it."""

    server: dict[str, Any] = field(default_factory=dict)


class Relay(Engine[RelayHandle, PostgresSession]):
    family: ClassVar[str] = "postgres"
    backend: ClassVar[str] = "relay"
    handle_type: ClassVar[type[Handle]] = RelayHandle

    def __init__(self, cell: Cell) -> None:
        super().__init__(cell)
        self.server = EmbeddedPostgres(cell)  # it reads the option this backend's entry gives: build

    def _server(self, handle: RelayHandle) -> EmbeddedHandle:
        return self.server.load_handle(handle.server)

    def check(self) -> None:
        self.server.check()

    def provision(self) -> RelayHandle:
        server = self.server.provision()
        return RelayHandle(workdir=server.workdir, server=server.to_json())

    def handle_for(self) -> RelayHandle:
        server = self.server.handle_for()
        return RelayHandle(workdir=server.workdir, server=server.to_json())

    def facts(self, handle: RelayHandle) -> dict[str, Any]:
        return {**self.server.facts(self._server(handle)), "backend": self.backend}

    @contextmanager
    def session(self, handle: RelayHandle) -> Iterator[PostgresSession]:
        with self.server.session(self._server(handle)) as session:
            yield session

    def teardown(self, handle: RelayHandle) -> None:
        self.server.teardown(self._server(handle))

    def pids(self, handle: RelayHandle) -> list[int]:
        return self.server.pids(self._server(handle))
'''


@pytest.fixture
def recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The backend added by the recipe: its module on the path, its registration and one engine's entry."""
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "relay_backend.py").write_text(textwrap.dedent(MODULE))  # 1. the adapter
    monkeypatch.syspath_prepend(str(modules))
    include = include_copy(tmp_path, monkeypatch)
    matrix = read_matrix(include)
    matrix["families"]["postgres"]["backends"][BACKEND] = "relay_backend:Relay"  # 3. registered under its family
    matrix["engines"][ENGINE]["backends"][BACKEND] = {"build": matrix["engines"][ENGINE]["backends"]["embedded"]["build"]}  # 4.
    write_matrix(include, matrix)
    return {"include": include, "modules": modules}


def test_a_backend_added_by_the_recipe_is_planned_parsed_and_runs_a_cell(
    recipe: dict[str, Path], results_dir: Path, airflow_env: dict[str, str], leak_check: Any
) -> None:
    from jsonbench.dataset.read import read_dataset
    from jsonbench.engines.base import engine_for
    from jsonbench.orchestration import tasks
    from jsonbench.suites import get_suite

    before = project_files()
    cell_id = cell_id_of(SUITE, ENGINE)

    # Planned by the command a user runs, and offered by the DAG's form.
    env = child_env(airflow_env, recipe["include"], modules=recipe["modules"], JSONBENCH_HOST_ENGINES=ENGINE)
    planned_cli = jsonbench(env, "plan", "--backend", BACKEND, "--engines", ENGINE, "--suites", SUITE, "--scale", "smoke")
    assert planned_cli.returncode == 0 and cell_id in planned_cli.stdout, planned_cli.stdout[-3000:] + planned_cli.stderr[-3000:]
    parsed = parsed_dag(env)
    assert BACKEND in parsed["backends"] and f"{cell_id}.provision" in parsed["tasks"], parsed["backends"]

    # The run's plan imports the adapter and checks the build through it.
    planned = tasks.plan(
        {"suites": [SUITE], "engines": [ENGINE], "backend": BACKEND, "scale": "smoke", "results_dir": str(results_dir)},
        "recipe_run",
        "2026-11-29T02:00:00+00:00",
        served=[ENGINE],
    )
    (cell,) = tasks.cells_of(planned)
    assert (cell.cell_id, cell.backend, cell.adapter) == (cell_id, BACKEND, "relay_backend:Relay")
    engine = engine_for(cell)
    assert Path(sys.modules[type(engine).__module__].__file__ or "").parent == recipe["modules"]  # outside the project

    # One smoke cell through the driver, the server's processes seen through the adapter while it runs.
    handle = tasks.provision(planned, cell_id)
    try:
        assert engine.pids(engine.load_handle(handle)), "the adapter names no process of its running server"
        assert leak_check(wait_s=0), "the server should be running"
        for workload in get_suite(SUITE).workloads:
            tasks.run_workload(planned, cell_id, handle, workload)
    finally:
        tasks.teardown(planned, cell_id, handle)
    tasks.teardown(planned, cell_id, None)  # again, from the handle handle_for finds: idempotent
    assert leak_check() == []

    assert tasks.publish(planned)["rows"] > 0
    rows = read_dataset(str(results_dir), table="measurements").to_pandas()
    mine = rows[rows["suite"] == SUITE]
    assert len(mine) > 0 and set(mine["engine_backend"]) == {BACKEND} and set(mine["engine_id"]) == {ENGINE}
    assert {json.loads(f)["backend"] for f in mine["engine_facts"]} == {BACKEND}
    pinned = npm_build(str(cell.backend_options["build"])).pinned()
    assert set(mine["engine_version"]) == {".".join(pinned["version"].split(".")[:2])}, "the rows' version is not the build's own"

    assert project_files() == before, "adding a backend by the recipe must not change a Python file or a build pin"
