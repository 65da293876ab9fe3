"""The typed validation row and ``VALIDATION_SCHEMA`` say the same columns, in the same order, so they cannot drift apart."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime

import pyarrow as pa

from jsonbench.dataset.schema import VALIDATION_SCHEMA, ValidationRow


def test_fields_are_the_schema_columns_in_order() -> None:
    assert [f.name for f in dataclasses.fields(ValidationRow)] == VALIDATION_SCHEMA.names


def test_a_row_stores_under_the_schema_with_details_as_json_text() -> None:
    when = datetime(2026, 11, 29, 2, tzinfo=UTC)
    row = ValidationRow(
        run_id="r",
        logical_date=when,
        check_kind="sanity",
        expectation="e",
        success=False,
        verdict="fail",
        scale="smoke",
        details={"a": [1]},
    ).to_row()
    assert list(row) == VALIDATION_SCHEMA.names
    assert json.loads(row["details"]) == {"a": [1]}
    table = pa.Table.from_pylist([row], schema=VALIDATION_SCHEMA)
    assert table.column("scale").to_pylist() == ["smoke"] and table.column("logical_date").to_pylist() == [when]
