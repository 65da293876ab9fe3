"""A value its own confirmation cleared is read by later nights as its re-measurement (:mod:`jsonbench.history.cleared`).

Which earlier drift values the next night reads in place of the cleared ones. The nights judged end to end, against a
calibration record built by the maintainers' instrument, are ``tests/dev/test_record_cleared_history.py``.
"""

from __future__ import annotations

import pandas as pd

from jsonbench.cell import CONFIRMATION_SUFFIX
from jsonbench.history.cleared import as_history
from tests.unit.checks_synth import replace_metric

LABEL = "synth"
SUITE = "large_document_update"
SERIES = {"suite": SUITE, "engine_id": "postgres-16", "workload": "json_big", "variant": "default", "metric": "update_time"}
DOUBLED = replace_metric("postgres-16", "json_big", "update_time", lambda v: 2 * v)


def test_only_cleared_drift_values_of_earlier_nights_are_read_otherwise() -> None:
    rows = pd.DataFrame(
        [
            {"run_id": "r1", **SERIES, "value": 2.0, "quiet": True},
            {"run_id": "r1", **{**SERIES, "metric": "wal_bytes"}, "value": 5.0, "quiet": None},
            {"run_id": "r2", **{**SERIES, "variant": None}, "value": 3.0, "quiet": True},
        ]
    )
    conf = pd.DataFrame(
        [
            {"run_id": "r1" + CONFIRMATION_SUFFIX, **SERIES, "value": 1.0, "quiet": True},
            {"run_id": "r2" + CONFIRMATION_SUFFIX, **{**SERIES, "variant": None}, "value": 1.5, "quiet": True},
        ]
    )
    others = pd.DataFrame(
        [
            {"run_id": "r1", "check_kind": "drift", "verdict": "confirmed", **SERIES},  # a real change stays as measured
            {"run_id": "r2", "check_kind": "reproduction", "verdict": "cleared", **SERIES},  # a band reads no history
            {"run_id": "r2", "check_kind": "drift", "verdict": "unconfirmed", **SERIES},
        ]
    )
    same, cleared = as_history(rows, others, conf)
    assert same is rows and not cleared.replaced and not cleared.left_out
    # a row with no variant matches its validation's missing variant (null on both sides)
    val = pd.DataFrame([{"run_id": "r2", "check_kind": "drift", "verdict": "cleared", **{**SERIES, "variant": None}}])
    read, cleared = as_history(rows, val, conf)
    assert list(read["value"]) == [2.0, 5.0, 1.5] and list(read["run_id"]) == ["r1", "r1", "r2"]
    assert cleared.note() == "history: 1 earlier value(s) their confirmation cleared read as re-measured"
