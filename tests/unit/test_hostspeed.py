"""The canary's reading of the host beside a cell: its fastest sample, so a burst beside a few samples is not a slower host."""

from __future__ import annotations

import math

import pandas as pd

from jsonbench.history.hostspeed import canary_table


def _row(run: str, metric: str, samples: list[float] | None, value: float) -> dict:
    return {
        "run_id": run,
        "engine_id": "sqlite-3.45.0",
        "suite": "host",
        "workload": "canary",
        "variant": "before.sqlite_jsonb",
        "metric": metric,
        "unit": "ms",
        "status": "ok",
        "value": value,
        "samples": samples,
    }


def test_a_burst_beside_the_canary_is_not_read_as_a_slower_host() -> None:
    # A scheduler run: cpu_all's samples 255-453 ms beside Airflow's own processes, cpu_single steady.
    df = pd.DataFrame(
        [
            _row("night1", "cpu_all", [226.9, 227.8, 248.4, 235.2, 226.9], 227.8),
            _row("night2", "cpu_all", [442.7, 334.0, 453.2, 366.1, 255.2], 366.1),
            _row("night2", "cpu_single", [56.6, 56.6, 57.7, 57.3, 57.4], 57.3),
        ]
    )
    table = canary_table(df)
    move = math.exp(
        table[("night2", "sqlite-3.45.0", "sqlite_jsonb")]["cpu_all"] - table[("night1", "sqlite-3.45.0", "sqlite_jsonb")]["cpu_all"]
    )
    assert abs(move - 255.2 / 226.9) < 1e-9  # +12 %, not the medians' +61 %
    assert table[("night2", "sqlite-3.45.0", "sqlite_jsonb")]["cpu_single"] == math.log(56.6)


def test_a_slower_host_slows_every_sample_and_the_reading_follows() -> None:
    df = pd.DataFrame([_row("quota", "cpu_all", [x * 1.67 for x in (227.0, 229.0, 231.0)], 382.0)])
    assert math.isclose(math.exp(canary_table(df)[("quota", "sqlite-3.45.0", "sqlite_jsonb")]["cpu_all"]), 227.0 * 1.67)


def test_rows_without_samples_read_their_value() -> None:
    df = pd.DataFrame([_row("old", "cpu_all", None, 230.0), _row("two", "cpu_single", [50.0, 60.0], 55.0)])
    table = canary_table(df)
    assert math.isclose(math.exp(table[("old", "sqlite-3.45.0", "sqlite_jsonb")]["cpu_all"]), 230.0)
    assert math.isclose(math.exp(table[("two", "sqlite-3.45.0", "sqlite_jsonb")]["cpu_single"]), 55.0)
