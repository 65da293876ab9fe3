"""The comparison's parameters: each bad field is refused by name, before any engine starts (nothing here starts one)."""

from __future__ import annotations

from typing import Any

import pytest

from jsonbench.compare.params import DEFAULT_MARGIN, MAX_STAGES, resolve_comparison, schema
from jsonbench.errors import ConfigError

GOOD: dict[str, Any] = {
    "a": {"engine": "postgres-17"},
    "b": {"engine": "postgres-17", "settings": {"work_mem": "4MB"}},
    "suites": ["json_vs_jsonb"],
    "scale": "smoke",
    "pairs": 6,
}


def _bad(field: str, **changes: Any) -> None:
    with pytest.raises(ConfigError) as err:
        resolve_comparison({**GOOD, **changes})
    assert err.value.field == field, str(err.value)


def test_a_good_comparison_resolves_with_its_arms_stages_and_workloads() -> None:
    cfg = resolve_comparison(GOOD)
    assert cfg.a.engine == cfg.b.engine == "postgres-17" and cfg.b.settings == {"work_mem": "4MB"} and not cfg.same_arm
    assert cfg.family == "postgres" and cfg.suites == ("json_vs_jsonb",) and cfg.run.scale == "smoke" and cfg.run.starts == 1
    assert [s.pairs for s in cfg.stages] == [6] and cfg.stages[0].level == pytest.approx(0.95)
    assert cfg.margin is None and cfg.seed == 0
    assert "small" in cfg.workloads["json_vs_jsonb"]
    assert cfg.b.label == "postgres-17 (work_mem=4MB)"


def test_other_builds_and_sqlite_versions_and_staged_pairs() -> None:
    cfg = resolve_comparison({**GOOD, "b": {"engine": "postgres-16"}, "pairs": [10, 20, 40], "margin": 0.05, "workloads": ["small"]})
    assert cfg.workloads == {"json_vs_jsonb": ("small",)}
    assert [s.pairs for s in cfg.stages] == [10, 20, 40] and sum(s.alpha for s in cfg.stages) == pytest.approx(0.05)
    sq = resolve_comparison(
        {"a": "sqlite-3.46.1", "b": {"engine": "sqlite-3.54.1"}, "suites": ["sqlite_jsonb"], "scale": "smoke", "pairs": 6}
    )
    assert sq.family == "sqlite" and sq.a.settings == {} and 0 < DEFAULT_MARGIN < 1


@pytest.mark.parametrize(
    ("field", "changes"),
    [
        ("a.engine", {"a": {"engine": "postgres-99"}}),
        ("b.engine", {"b": {"engine": "sqlite-3.54.1"}}),  # arms of two families
        (
            "a.settings",
            {"a": {"engine": "sqlite-3.46.1", "settings": {"cache_size": "1"}}, "b": "sqlite-3.54.1", "suites": ["sqlite_jsonb"]},
        ),
        ("b.settings.Work-Mem", {"b": {"engine": "postgres-17", "settings": {"Work-Mem": "4MB"}}}),
        ("b.settings.work_mem", {"b": {"engine": "postgres-17", "settings": {"work_mem": True}}}),
        ("b.colour", {"b": {"engine": "postgres-17", "colour": "red"}}),
        ("a", {"a": ["postgres-17"]}),
        ("margin", {"margin": 0}),
        ("margin", {"margin": -0.02}),
        ("margin", {"margin": 2}),
        ("margin", {"margin": "2%"}),
        ("pairs", {"pairs": 5}),  # too few for a 95 % interval
        ("pairs", {"pairs": [6, 12]}),  # the first of two stages is judged above 95 %: 6 pairs cannot reach it
        ("pairs", {"pairs": [20, 10]}),
        ("pairs", {"pairs": list(range(10, 10 * (MAX_STAGES + 2), 10))}),
        ("pairs", {"pairs": "ten"}),
        ("suites", {"suites": ["sqlite_jsonb"]}),  # a suite not of the arms' family
        ("suites", {"suites": ["no_such_suite"]}),
        ("suites", {"suites": []}),
        ("workloads", {"workloads": ["no_such_workload"]}),
        ("scale", {"scale": "huge"}),
        ("seed", {"seed": "x"}),
        ("pears", {"pears": 6}),
    ],
)
def test_each_bad_field_is_named(field: str, changes: dict[str, Any]) -> None:
    _bad(field, **changes)


def test_the_trigger_form_declares_every_parameter_resolve_knows() -> None:
    form = schema()
    assert {"a", "b", "suites", "workloads", "pairs", "margin", "seed", "scale", "results_dir"} <= set(form)
    assert all("default" in spec for spec in form.values())
    resolve_comparison({k: spec["default"] for k, spec in form.items()})  # the form's defaults are a valid comparison
