"""A comparison's faults through the real engine: a setting the server refuses fails before any pair runs, naming
the arm, the setting and the server's words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jsonbench.compare import tasks
from jsonbench.errors import ConfigError


def _planned(results: Path, b_settings: dict[str, str]) -> dict[str, Any]:
    params = {
        "a": {"engine": "postgres-17"},
        "b": {"engine": "postgres-17", "settings": b_settings},
        "suites": ["large_document_update"],
        "scale": "smoke",
        "pairs": 6,
        "results_dir": str(results),
    }
    return tasks.plan(params, "manual__refused", "2026-12-01T00:00:00+00:00")


@pytest.mark.parametrize(
    ("settings", "field", "said"),
    [
        ({"work_mem": "8MB", "shared_buffers": "banana"}, "b.settings.shared_buffers", 'invalid value for parameter "shared_buffers"'),
        ({"jsonbench_no_such_setting": "1"}, "b.settings.jsonbench_no_such_setting", "unrecognized configuration parameter"),
    ],
)
def test_a_setting_the_server_refuses_fails_before_any_pair_naming_it(
    results_dir: Path, settings: dict[str, str], field: str, said: str
) -> None:
    planned = _planned(results_dir, settings)
    assert [a.name for a, _ in tasks.check_cells(planned)] == ["B"], "arm A has no settings of its own: nothing to check"
    with pytest.raises(ConfigError) as err:
        tasks.check_settings(planned)
    assert err.value.field == field
    assert said in str(err.value) and "arm B (postgres-17)" in str(err.value), str(err.value)
    assert not any(cell.identity.workdir().exists() for _, cell in tasks.check_cells(planned)), "the check's engine is gone"
    assert not any(p.name.endswith((tasks.ATTEMPT, tasks.DONE)) for p in results_dir.rglob("*")), "no start ran"


def test_settings_the_server_takes_pass_the_check(results_dir: Path) -> None:
    planned = _planned(results_dir, {"work_mem": "8MB"})
    assert tasks.check_settings(planned) == ["B"]


def test_both_arms_record_the_same_fingerprint_of_the_rows_they_loaded(results_dir: Path) -> None:
    """Two starts of pair 0 through the nightly driver (one workload): the rows as loaded hash alike in both arms,
    and the hash follows the rows' content, not their physical order."""
    from jsonbench.engines.base import engine_for

    planned = tasks.plan(
        {
            "a": {"engine": "postgres-17"},
            "b": {"engine": "postgres-17", "settings": {"work_mem": "8MB"}},
            "suites": ["large_document_update"],
            "workloads": ["rel_small"],
            "scale": "smoke",
            "pairs": 6,
            "results_dir": str(results_dir),
        },
        "manual__fingerprint",
        None,
    )
    pair = [s for s in planned["stages"][0] if s["pair"] == 0]
    for start in pair:
        tasks.run_start(planned, start)
    staging = tasks.Staging(str(results_dir), "manual__fingerprint")
    markers = {s["arm"]: tasks._done(staging, tasks.start_cell_id("large_document_update", 0, s["arm"])) for s in pair}
    assert markers["A"] and markers["B"]
    assert markers["A"]["loaded"]["rel_small"], "the workload fingerprinted what it loaded"
    assert markers["A"]["loaded"] == markers["B"]["loaded"] and markers["A"]["fingerprint"] == markers["B"]["fingerprint"]

    _, cell = tasks.check_cells(planned)[0]
    engine = engine_for(cell)
    handle = engine.provision()
    try:
        with engine.session(handle) as s:
            s.execute("CREATE TABLE t (k int, doc jsonb)")
            s.execute("INSERT INTO t SELECT g, jsonb_build_object('k', g) FROM generate_series(1, 100) g")
            one = s.fingerprint()
            s.execute("TRUNCATE t")
            s.execute("INSERT INTO t SELECT g, jsonb_build_object('k', g) FROM generate_series(100, 1, -1) g")
            assert s.fingerprint() == one, "the same rows in another physical order"
            s.execute("UPDATE t SET doc = jsonb_build_object('k', 0) WHERE k = 7")
            assert s.fingerprint() != one, "one changed value"
    finally:
        engine.teardown(handle)
