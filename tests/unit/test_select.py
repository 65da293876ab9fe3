"""The DAG's ``select``: which cells an attempt measures, and every task of the others, which it marks skipped at once.

That the scheduler then never walks them is the DAG run's test (``tests/dags/test_documents_dag.py``)."""

from __future__ import annotations

from jsonbench.orchestration.tasks import runnable_cells, unselected_tasks


def test_select_names_the_planned_cells_an_earlier_attempt_did_not_complete() -> None:
    planned = {
        "cells": [
            {"cell_id": "catalogue__postgres-17"},
            {"cell_id": "sqlite_jsonb__sqlite-3_54_1"},
            {"cell_id": "json_vs_jsonb__postgres-17"},
        ],
        "resumed": ["sqlite_jsonb__sqlite-3_54_1"],
    }
    assert runnable_cells(planned) == ["catalogue__postgres-17", "json_vs_jsonb__postgres-17"]
    assert runnable_cells({"cells": [], "resumed": []}) == []
    assert runnable_cells(None) == [], "a failed plan selects nothing (its provisions skip themselves, as before)"


def test_select_lists_every_task_of_every_other_group() -> None:
    groups = {
        "catalogue__postgres-17": ["catalogue__postgres-17.provision", "catalogue__postgres-17.reads", "catalogue__postgres-17.teardown"],
        "json_vs_jsonb__postgres-17": ["json_vs_jsonb__postgres-17.provision", "json_vs_jsonb__postgres-17.teardown"],
        "sqlite_jsonb__sqlite-3_54_1": ["sqlite_jsonb__sqlite-3_54_1.provision", "sqlite_jsonb__sqlite-3_54_1.teardown"],
    }
    planned = {
        "cells": [{"cell_id": "json_vs_jsonb__postgres-17"}, {"cell_id": "sqlite_jsonb__sqlite-3_54_1"}],
        "resumed": ["sqlite_jsonb__sqlite-3_54_1"],
    }
    assert unselected_tasks(planned, groups) == [
        "catalogue__postgres-17.provision",
        "catalogue__postgres-17.reads",
        "catalogue__postgres-17.teardown",
        "sqlite_jsonb__sqlite-3_54_1.provision",
        "sqlite_jsonb__sqlite-3_54_1.teardown",
    ]
    assert unselected_tasks(None, groups) == [t for ids in groups.values() for t in ids]
