"""The reproduction files' bands (per scale, excluding the opposite conclusion, tight for facts) and the findings frame."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from jsonbench.checks.findings import SCALES, band_at, finding_expectations, findings_frame
from jsonbench.checks.library import load_library
from jsonbench.checks.validate import validate_library


def _all() -> list[tuple[str, dict]]:
    return [(suite, f) for suite, d in load_library().reproduction.items() for f in d["findings"]]


def test_every_reproduction_file_is_sound() -> None:
    """The one validator (the plan step's) accepts the project's own files."""
    assert set(validate_library().reproduction) == set(load_library().reproduction)


@pytest.mark.parametrize("scale", SCALES)
def test_every_finding_has_a_band_or_a_reason_at_every_scale(scale: str) -> None:
    for suite, f in _all():
        b = band_at(f, scale)
        assert b.not_applicable is None or "not applied" in b.not_applicable, f"{suite}/{f['id']}@{scale}: {b.not_applicable}"
        if not b.not_applicable:
            assert b.reason.strip() and (b.min is not None or b.max is not None), (
                f"{suite}/{f['id']}@{scale}: a band needs bounds and a reason"
            )


@pytest.mark.parametrize("scale", SCALES)
def test_comparison_bands_exclude_the_opposite_conclusion(scale: str) -> None:
    """A timing finding names the region where the seed's conclusion is reversed; no band may reach into it."""
    for suite, f in _all():
        if f.get("kind", "timing") != "timing":
            continue
        opp = f.get("opposite")
        assert opp and (opp.get("below") is not None or opp.get("above") is not None), (
            f"{suite}/{f['id']}: a comparison must say what the opposite conclusion is"
        )
        b = band_at(f, scale)
        if b.not_applicable:
            continue
        if opp.get("below") is not None:
            assert b.min is not None and b.min >= opp["below"], (
                f"{suite}/{f['id']}@{scale}: band {b.min} reaches the opposite conclusion (< {opp['below']})"
            )
        if opp.get("above") is not None:
            assert b.max is not None and b.max <= opp["above"], (
                f"{suite}/{f['id']}@{scale}: band {b.max} reaches the opposite conclusion (> {opp['above']})"
            )


@pytest.mark.parametrize("scale", SCALES)
def test_deterministic_facts_are_checked_within_two_percent(scale: str) -> None:
    """Counts, sizes, buffers, plan facts: exact or within 1-2 % of what named runs measured.

    A band derived from no run (``derived_from: []``, at a scale nobody has recorded) is not a
    measured fact's band; it says so in ``not_derived``, and every check row carries that.
    """
    for suite, f in _all():
        if f.get("kind") != "deterministic":
            continue
        b = band_at(f, scale)
        if b.not_applicable:
            continue
        if not b.derived_from:
            assert b.not_derived, f"{suite}/{f['id']}@{scale}: a band derived from no run says why"
            continue
        assert b.min is not None and b.max is not None, f"{suite}/{f['id']}@{scale}"
        mid = (b.min + b.max) / 2
        width = 0.0 if b.max == b.min else (b.max - b.min) / abs(mid) if mid else 1.0
        assert width <= 0.045 or b.max - b.min <= 0.011, f"{suite}/{f['id']}@{scale}: [{b.min}, {b.max}] is not a fact's band"


def test_no_band_is_provisional() -> None:
    """``provisional`` changed no verdict; a band names its runs or says it is not derived (the validator refuses the key)."""
    for suite, f in _all():
        for scale, spec in (f.get("bands") or {}).items():
            assert "provisional" not in spec, f"{suite}/{f['id']}@{scale}"


def test_the_bound_on_the_opposites_side_is_strict() -> None:
    """A tie fails: with opposite below 1.0 and min 1.0, an observed 1.0 is outside the band (GX strict_min)."""
    f = {"id": "x", "kind": "timing", "opposite": {"below": 1.0}, "numerator": [{"workload": "w", "metric": "a"}]}
    f["bands"] = {"laptop": {"min": 1.0, "max": 3.0, "reason": "r", "derived_from": ["run"]}}
    (entry,) = finding_expectations({"findings": [f]}, "laptop")[1:]
    assert entry["kwargs"]["strict_min"] is True and "strict_max" not in entry["kwargs"]
    fact = dict(f, kind="deterministic")
    (entry,) = finding_expectations({"findings": [fact]}, "laptop")[1:]
    assert "strict_min" not in entry["kwargs"]  # a fact's band is inclusive: exactly 1.0 is the fact


def _measurements(
    engine: str, rows: list[tuple[str, str, str, float | None, str]], scale: str = "smoke", reasons: dict | None = None
) -> list[dict]:
    return [
        {
            "suite": "s",
            "engine_id": engine,
            "engine_version": engine[-2:],
            "engine_build": f"b{engine}",
            "workload": w,
            "variant": v,
            "metric": m,
            "value": val,
            "status": st,
            "samples": [val] if val is not None else [],
            "scale": scale,
            "reason": (reasons or {}).get(m),
        }
        for w, v, m, val, st in rows
    ]


DEF = {
    "findings": [
        {
            "id": "faster",
            "kind": "timing",
            "opposite": {"below": 1.0},
            "numerator": [{"workload": "w", "metric": "a"}],
            "denominator": [{"workload": "w", "metric": "b"}],
            "bands": {"smoke": {"not_applicable": "too small"}, "laptop": {"min": 1.2, "max": 4, "reason": "r"}},
        },
        {
            "id": "fact",
            "kind": "deterministic",
            "numerator": [{"workload": "w", "metric": "n"}],
            "bands": {"smoke": {"min": 119, "max": 119, "reason": "exact"}, "laptop": {"min": 1122, "max": 1122, "reason": "exact"}},
        },
        {
            "id": "pending",
            "kind": "deterministic",
            "numerator": [{"workload": "w", "metric": "launched"}],
            "bands": {"smoke": {"min": 1, "max": 1, "reason": "r"}, "laptop": {"min": 1, "max": 1, "reason": "r"}},
        },
        {
            "id": "lz4",
            "kind": "deterministic",
            "requires": ["lz4"],
            "numerator": [{"workload": "w", "metric": "z"}],
            "bands": {"smoke": {"min": 1, "max": 2, "reason": "r"}, "laptop": {"min": 1, "max": 2, "reason": "r"}},
        },
        {
            "id": "v18_vs_17",
            "kind": "timing",
            "scope": "cross_engine",
            "geomean": True,
            "opposite": {"below": 0.5, "above": 2},
            "numerator": [{"engine": "pg18", "workload": "w", "metric": "a"}, {"engine": "pg18", "workload": "w", "metric": "b"}],
            "denominator": [{"engine": "pg17", "workload": "w", "metric": "a"}, {"engine": "pg17", "workload": "w", "metric": "b"}],
            "bands": {"smoke": {"min": 0.67, "max": 1.5, "reason": "r"}, "laptop": {"min": 0.8, "max": 1.25, "reason": "r"}},
        },
    ]
}
PROMISED = {("w", "a"), ("w", "b"), ("w", "n"), ("w", "z")}


def _frame(scale: str, pg18_a: float = 4.0, z_status: str = "ok", z_reason: str | None = None) -> pd.DataFrame:
    rows = _measurements(
        "pg17",
        [
            ("w", "default", "a", 4.0, "ok"),
            ("w", "default", "b", 2.0, "ok"),
            ("w", "default", "n", 119.0, "ok"),
            ("w", "default", "z", None if z_status != "ok" else 1.5, z_status),
        ],
        scale,
        {"z": z_reason},
    )
    rows += _measurements(
        "pg18",
        [
            ("w", "default", "a", pg18_a, "ok"),
            ("w", "default", "b", 2.0, "ok"),
            ("w", "default", "n", 1122.0, "ok"),
            ("w", "default", "z", 1.5, "ok"),
        ],
        scale,
    )
    return findings_frame(pd.DataFrame(rows), "s", DEF, scale=scale, promised=PROMISED).set_index(["finding", "engine_id"])


def test_bands_are_chosen_per_scale_and_a_finding_can_step_aside_at_one() -> None:
    smoke = _frame("smoke")
    assert smoke.loc[("faster", "pg17"), "applicable"] == "no" and "too small" in smoke.loc[("faster", "pg17"), "problem"]
    assert smoke.loc[("fact", "pg17"), ["band_min", "band_max"]].tolist() == [119, 119]
    laptop = _frame("laptop")
    assert laptop.loc[("faster", "pg17"), "applicable"] == "yes" and laptop.loc[("faster", "pg17"), "band_min"] == 1.2
    assert laptop.loc[("fact", "pg18"), "band_min"] == 1122 and laptop.loc[("fact", "pg18"), "finding_kind"] == "deterministic"


def test_a_metric_the_suite_does_not_measure_yet_makes_the_finding_not_applicable() -> None:
    row = _frame("smoke").loc[("pending", "pg17")]
    assert row["applicable"] == "no" and "does not measure w/default/launched (yet)" in row["problem"]


def test_not_applicable_input_excuses_only_a_declared_requirement() -> None:
    ok = _frame("smoke", z_status="not_applicable", z_reason="PostgreSQL was built without --with-lz4").loc[("lz4", "pg17")]
    assert ok["applicable"] == "no"
    bad = _frame("smoke", z_status="not_applicable", z_reason="planted: recorded by mistake").loc[("lz4", "pg17")]
    assert bad["applicable"] == "yes" and pd.isna(bad["observed"]) and "names none of this finding's requirements" in bad["problem"]


def test_cross_engine_finding_is_one_row_per_run() -> None:
    f = _frame("laptop", pg18_a=8.0)
    row = f.loc[("v18_vs_17", "pg18/pg17")]
    assert row["observed"] == pytest.approx(2**0.5) and row["scope"] == "cross_engine"  # sqrt(8/4 * 2/2)
    assert json.loads(row["inputs"])["pg18:w/default/a"] == 8.0
    only17 = findings_frame(
        pd.DataFrame(_measurements("pg17", [("w", "default", "a", 4.0, "ok")])), "s", DEF, scale="smoke", promised=PROMISED
    )
    cross = only17[only17["finding"] == "v18_vs_17"].iloc[0]
    assert cross["applicable"] == "no" and "pg18" in cross["problem"]


def test_a_timing_finding_measured_in_a_busy_window_is_reported_not_judged() -> None:
    rows = _measurements(
        "pg17", [("w", "default", "a", 1.0, "ok"), ("w", "default", "b", 2.0, "ok"), ("w", "default", "n", 1100.0, "ok")], "laptop"
    )
    for r in rows:
        r["quiet"], r["host_other_cpu"] = (False, 0.8) if r["metric"] == "a" else (True, 0.01)
    f = findings_frame(pd.DataFrame(rows), "s", DEF, scale="laptop", promised=PROMISED).set_index(["finding", "engine_id"])
    faster = f.loc[("faster", "pg17")]
    assert faster["disturbed"] == "yes" and "host was busy" in faster["problem"] and faster["observed"] == 0.5  # reversed, but not judged
    fact = f.loc[("fact", "pg17")]
    assert fact["disturbed"] == "no" and fact["observed"] == 1100.0  # facts are judged whatever the load (and this one is wrong)


def test_a_measured_finding_that_depends_on_no_host_property_is_judged_whatever_the_load() -> None:
    """The WAL of a fixed count of updates (``depends_on: []``): a busy window cannot move it, so it is judged, not excused."""
    fixed = {**next(f for f in DEF["findings"] if f["id"] == "faster"), "id": "fixed_count", "depends_on": []}
    definition = {**DEF, "findings": [*DEF["findings"], fixed]}
    rows = _measurements(
        "pg17", [("w", "default", "a", 1.0, "ok"), ("w", "default", "b", 2.0, "ok"), ("w", "default", "n", 1122.0, "ok")], "laptop"
    )
    for r in rows:
        r["quiet"], r["host_other_cpu"] = (False, 0.8) if r["metric"] == "a" else (True, 0.01)
    f = findings_frame(pd.DataFrame(rows), "s", definition, scale="laptop", promised=PROMISED).set_index(["finding", "engine_id"])
    assert f.loc[("faster", "pg17"), "disturbed"] == "yes"  # the same inputs, a speed: excused
    row = f.loc[("fixed_count", "pg17")]
    assert row["disturbed"] == "no" and pd.isna(row["problem"]) and row["observed"] == 0.5 < row["band_min"]  # judged: out of its band


def test_a_tie_fails_in_great_expectations() -> None:
    """The strict bound reaches GX: observed 1.0 against min 1.0 with the opposite below 1.0 fails, 1.01 passes."""
    from jsonbench.checks.gxrun import GXSession

    f = {"id": "faster", "kind": "timing", "opposite": {"below": 1.0}, "numerator": [{"workload": "w", "metric": "a"}]}
    f["denominator"] = [{"workload": "w", "metric": "b"}]
    f["bands"] = {"smoke": {"min": 1.0, "max": 3.0, "reason": "r", "derived_from": ["run"]}}
    definition = {"findings": [f]}
    rows = _measurements("e1", [("w", "default", "a", 1.0, "ok"), ("w", "default", "b", 1.0, "ok")])
    rows += _measurements("e2", [("w", "default", "a", 1.01, "ok"), ("w", "default", "b", 1.0, "ok")])
    frame = findings_frame(pd.DataFrame(rows), "s", definition, scale="smoke")
    (outcome,) = GXSession(None).validate("s.reproduction", frame, finding_expectations(definition, "smoke")[1:], ["finding", "engine_id"])
    assert not outcome.success
    assert {str(u.get("engine_id")) for u in outcome.unexpected} == {"e1"}, outcome.unexpected
