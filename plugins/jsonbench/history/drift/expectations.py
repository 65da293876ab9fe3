"""The Great Expectations suite of a drift frame: every judged row's ``drift_score`` within [0, 1]."""

from __future__ import annotations

from typing import Any


def drift_expectations(policy: dict[str, Any]) -> list[dict[str, Any]]:
    """Expectation entries (library format) for a drift frame."""
    return [
        {
            "type": "expect_column_values_to_be_between",
            "kwargs": {"column": "drift_score", "min_value": 0, "max_value": 1},
            "where": {"judged": "yes"},
            "meta": {
                "notes": "no judged metric drifted: no significant change point (Otava, p < max_pvalue, magnitude > "
                "min_magnitude) starts in the last recent_runs runs, and no deterministic metric left its tolerance",
                "policy": {
                    k: policy.get(k) for k in ("min_history", "deterministic_min_history", "window", "recent_runs", "max_pvalue", "points")
                },
                "generated": True,
            },
        },
        *(policy.get("expectations") or []),
    ]
