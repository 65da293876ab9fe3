"""Run parameters: every bad value fails before any work starts, naming the field."""

from __future__ import annotations

import copy

import pytest

from jsonbench.cell import Cell, RunRef
from jsonbench.errors import ConfigError
from jsonbench.matrix import Matrix, load_matrix
from jsonbench.orchestration.plan import cell_slots, params_schema, plan_cells, resolve

RUN = RunRef(run_id="r", logical_date=None, hardware_label="local", results_dir="/tmp/r", scale="smoke")


def _by_suite(cells: list[Cell], suite: str) -> list[Cell]:
    return [c for c in cells if c.suite == suite]


@pytest.mark.parametrize(
    ("params", "field", "words"),
    [
        ({"engines": ["postgres-99"]}, "engines", "unknown engine 'postgres-99'"),
        ({"engines": ["mysql-8"]}, "engines", "unknown engine"),
        ({"engines": []}, "engines", "non-empty"),
        ({"engines": ["postgres-16", "postgres-16"]}, "engines", "twice"),
        ({"suites": ["nope"]}, "suites", "unknown suite 'nope'"),
        ({"scale": "huge"}, "scale", "unknown scale 'huge'"),
        ({"repetitions": 0}, "repetitions", ">= 1"),
        ({"repetitions": -3}, "repetitions", ">= 1"),
        ({"repetitions": "5"}, "repetitions", ">= 1"),
        ({"repetitions": True}, "repetitions", ">= 1"),
        ({"backend": "kubernetes"}, "backend", "unknown backend"),
        ({"hardware_label": "bad label/with slash"}, "hardware_label", "must match"),
        ({"server_settings": {"shared buffers": "1GB"}}, "server_settings.shared buffers", "not a valid setting name"),
        ({"server_settings": {"work_mem": None}}, "server_settings.work_mem", "string or number"),
        ({"colour": "red"}, "colour", "unknown parameter"),
    ],
)
def test_bad_parameter_names_the_field(params: dict, field: str, words: str) -> None:
    with pytest.raises(ConfigError) as err:
        resolve(params, env={})
    assert err.value.field == field
    assert field in str(err.value) and words in str(err.value)


def test_defaults_resolve_to_the_matrix_defaults() -> None:
    m = load_matrix()
    cfg = resolve({}, env={})
    assert list(cfg.engines) == m.raw["default_engines"]
    assert list(cfg.suites) == m.raw["default_suites"]
    assert cfg.scale == m.raw["default_scale"]
    assert cfg.repetitions == m.scales[cfg.scale]["repetitions"]


def test_overrides_narrow_and_override() -> None:
    cfg = resolve(
        {
            "engines": ["postgres-17"],
            "scale": "smoke",
            "repetitions": 3,
            "hardware_label": "rack-7",
            "server_settings": {"shared_buffers": "256MB"},
        },
        env={},
    )
    ldu = _by_suite(plan_cells(cfg, RUN), "large_document_update")
    assert [c.engine_id for c in ldu] == ["postgres-17"]
    assert ldu[0].repetitions == 3 and ldu[0].scale == "smoke"
    assert ldu[0].server_settings["shared_buffers"] == "256MB"  # the run's override wins
    assert ldu[0].server_settings["work_mem"] == "64MB"  # the seed's default stays
    assert ldu[0].backend == "embedded" and ldu[0].backend_options["build"] == "pg17"
    assert ldu[0].adapter == "jsonbench.engines.postgres_embedded:EmbeddedPostgres"
    assert ldu[0].postgres is not None and ldu[0].postgres.statement_timeout_s == load_matrix().scales["smoke"]["statement_timeout_s"]


def test_hardware_label_from_environment() -> None:
    assert resolve({}, env={"JSONBENCH_HARDWARE_LABEL": "ci-box"}).hardware_label == "ci-box"


def test_cells_come_in_the_slots_order_and_round_trip_as_json() -> None:
    """The DAG's task groups are the matrix's slots; a run's cells are a subset, in the same order."""
    m = load_matrix()
    slots = cell_slots(m)
    cells = plan_cells(resolve({"suites": ["catalogue", "large_document_update"], "engines": ["postgres-18", "postgres-16"]}, env={}), RUN)
    assert [(c.suite, c.engine_id) for c in cells] == [
        s for s in slots if s[1] in ("postgres-16", "postgres-18") and s[0] in ("catalogue", "large_document_update")
    ]
    assert [c.position for c in cells] == sorted(c.position for c in cells)
    for c in cells:
        assert Cell.from_json(c.to_json()) == c
    # One identity per run and cell, the same names everywhere.
    a, b = cells[0].identity, cells[1].identity
    assert a != b and a.name.startswith("jsonbench-") and a.schema == a.name.replace("-", "_")


def test_sqlite_cells_carry_no_postgres_options() -> None:
    cells = plan_cells(resolve({"engines": ["sqlite-3.46.1"], "suites": ["sqlite_jsonb"]}, env={}), RUN)
    assert len(cells) == 1 and cells[0].postgres is None and cells[0].server_settings == {}
    assert cells[0].cell_id == "sqlite_jsonb__sqlite-3_46_1"  # a valid Airflow group id


def test_params_schema_matches_resolve() -> None:
    """The trigger form's defaults are valid run parameters."""
    schema = params_schema()
    defaults = {k: v["default"] for k, v in schema.items()}
    resolve(defaults, env={})
    assert schema["scale"]["enum"] == list(load_matrix().scales)


def test_matrix_file_mistakes_are_caught() -> None:
    raw = copy.deepcopy(load_matrix().raw)
    del raw["scales"]["smoke"]["large_document_update"]
    from jsonbench.matrix import _check_matrix

    with pytest.raises(ConfigError, match="matrix.scales.smoke.large_document_update"):
        _check_matrix(Matrix(raw))


def test_backend_and_settings_follow_each_family() -> None:
    """The backend parameter picks among a family's backends; families without server settings get none."""
    cfg = resolve(
        {"engines": ["postgres-16", "sqlite-3.46.1"], "suites": ["large_document_update", "sqlite_jsonb"], "backend": "server"}, env={}
    )
    cells = plan_cells(cfg, RUN)
    pg, lite = _by_suite(cells, "large_document_update")[0], _by_suite(cells, "sqlite_jsonb")[0]
    assert pg.backend == "server" and pg.backend_options == {"conn_id": "jsonbench_postgres_16"}
    assert pg.server_settings["work_mem"] == "64MB"
    assert lite.backend == "apsw" and lite.server_settings == {}


def test_engine_without_the_chosen_backend_is_refused() -> None:
    with pytest.raises(ConfigError, match="engine 'postgres-15-debian' has no 'docker' build") as err:
        resolve({"engines": ["postgres-15-debian"], "backend": "docker"}, env={})
    assert err.value.field == "backend"


def test_engine_of_an_undeclared_family_is_a_matrix_error() -> None:
    from jsonbench.matrix import _check_matrix

    raw = copy.deepcopy(load_matrix().raw)
    raw["engines"]["mysql-8"] = {"family": "mysql", "version": "8", "backends": {"embedded": {}}}
    with pytest.raises(ConfigError, match="matrix.engines.mysql-8.family"):
        _check_matrix(Matrix(raw))


def test_a_dag_bound_to_a_label_refuses_another() -> None:
    with pytest.raises(ConfigError, match="measures the host labelled 'rack-7'") as err:
        resolve({"hardware_label": "gpu-1"}, env={}, bound_label="rack-7")
    assert err.value.field == "hardware_label"
    assert resolve({}, env={"JSONBENCH_HARDWARE_LABEL": "other"}, bound_label="rack-7").hardware_label == "rack-7"
    assert params_schema(hardware_label="rack-7")["hardware_label"]["enum"] == ["rack-7"]


def test_adapter_and_suite_module_mistakes_name_the_yaml_path() -> None:
    from jsonbench.matrix import _check_matrix

    raw = copy.deepcopy(load_matrix().raw)
    raw["families"]["postgres"]["backends"]["docker"] = "not an import path"
    with pytest.raises(ConfigError, match="matrix.families.postgres.backends.docker"):
        _check_matrix(Matrix(raw))
    raw = copy.deepcopy(load_matrix().raw)
    del raw["suites"]["catalogue"]["module"]
    with pytest.raises(ConfigError, match="matrix.suites.catalogue.module"):
        _check_matrix(Matrix(raw))
