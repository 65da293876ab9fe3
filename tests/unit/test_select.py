"""The DAG's ``select`` branch: which cells an attempt measures (the rest are skipped by the scheduler, not walked)."""

from __future__ import annotations

from jsonbench.orchestration.tasks import runnable_cells


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
