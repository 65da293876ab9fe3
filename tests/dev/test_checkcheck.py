"""The checks-of-the-checks command on a small synthetic history shaped like real smoke runs (no timing asserts).

Six runs of large_document_update on PostgreSQL 16 and 17 are staged and published as the DAG does
(checks_synth); checkcheck copies them, plants wrong results into the latest and reruns the real
check. Every planted kind must be caught and the honest reruns must raise nothing; the source
folder must be left exactly as it was.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from jsonbench.history.changepoints import ready
from jsonbench_dev.checkcheck import LEFT_TO_DRIFT, checkcheck, render_checkcheck
from tests.unit.checks_synth import make_run


@pytest.fixture(autouse=True)
def _no_data_docs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JSONBENCH_DATA_DOCS", "0")


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.skipif(not ready(), reason="Apache Otava's venv is not installed (./bin/setup)")
def test_checkcheck_catches_every_planted_kind_and_no_honest_run(make_cells, results_dir: Path, tmp_path: Path) -> None:
    for n in range(6):
        make_run(make_cells, n)
    before = _tree(results_dir)
    # drift's power is measured in the next test (a run of its own here would double this test's time)
    report = checkcheck(results_dir, work_dir=tmp_path / "work", honest=1, sample=4, measure_power=False)
    assert _tree(results_dir) == before, "checkcheck never writes into the results it reads"
    assert "power" not in report
    assert report["scale"] == "smoke" and report["target"] == "scheduled__2026-11-06T02:00:00+00:00" and len(report["history"]) == 5
    kinds = report["kinds"]
    assert set(kinds) == {
        "reversed_comparison",
        "tie_comparison",
        "collapsed_comparison",
        "kept_conclusion_2x",
        "kept_conclusion_2x_3nights",
        "slowdown_2x",
        "deterministic_10pct",
        "lost_metric",
        "lost_hot_count",
        "input_not_applicable",
        "damaged_file",
    }
    for kind, k in kinds.items():
        assert k["planted"] > 0, kind
        if kind not in LEFT_TO_DRIFT:  # left to drift by the band rule: drift's catch is measured, not required here
            assert k["caught"] == k["planted"], f"{kind}: missed {k['missed']}"
    assert kinds["slowdown_2x"]["planted"] == 2  # one copy per engine
    assert kinds["lost_hot_count"]["planted"] == 2
    assert [h["failed"] for h in report["honest"]] == [0]
    assert report["ok"] and report["false_alarms"] == 0
    text = render_checkcheck(report)
    assert "reversed_comparison" in text and "result: ok" in text


def test_checkcheck_measures_power_per_size_with_the_labels_record(make_cells, results_dir: Path, tmp_path: Path) -> None:
    """Slowdowns of every size planted per engine, per suite and per series, judged with the label's calibration record."""
    import json

    from jsonbench_dev.checkcheck import POWER_FACTORS, save
    from jsonbench_dev.record import build_record, write_record

    for n in range(6):
        make_run(make_cells, n, hardware_label="synth")
    write_record(build_record(results_dir, "smoke", "synth"), results_dir)
    before = _tree(results_dir)
    report = checkcheck(results_dir, work_dir=tmp_path / "work", kinds=["slowdown_2x"], honest=1, series_rounds=1)
    assert _tree(results_dir) == before
    p = report["power"]
    assert p["nights"] == 3 and len(p["planted_into"]) == 3 and len(p["history"]) == 3
    assert p["record"] is not None and set(p["levels"]) == {"engine", "suite", "series"}
    for level in ("engine", "suite", "series"):
        assert set(p["levels"][level]) == {f"{f:g}" for f in POWER_FACTORS}
    for size in ("1.5", "2"):
        e = p["levels"]["engine"][size]
        assert e["planted"] == 2 and e["caught_within"] == 2, e
    assert [h["history"] for h in p["honest"]] == [1, 2, 3, 4, 5]
    assert report["power_ok"]
    saved = save(report, tmp_path / "shown")
    assert json.loads(saved.read_text())["power"]["levels"]["engine"]["2"]["planted"] == 2
    assert "power of drift" in render_checkcheck(report)


def test_a_reversal_the_check_cannot_judge_is_reported_apart_not_planted(make_cells, results_dir: Path) -> None:
    """A finding whose host lacks what it needs, or whose inputs were measured in a busy window, is not a comparison
    the run makes: no input of it is moved, and it is listed as not judged, neither caught nor missed."""
    import copy
    import dataclasses
    import random

    from jsonbench.checks.library import load_library
    from jsonbench.dataset.read import MEASUREMENTS, read_dataset_report
    from jsonbench_dev.checkcheck import _record, plant_reversed

    make_run(make_cells, 0)
    df = read_dataset_report(results_dir, MEASUREMENTS).table.to_pandas()
    lib = load_library()
    definition = copy.deepcopy(lib.reproduction["large_document_update"])
    timing = [f for f in definition["findings"] if f.get("kind", "timing") == "timing" and f.get("opposite")]
    needy, busy = timing[0], timing[1]
    needy["requires"] = [*needy.get("requires", []), {"fact": "host_cores", "min": 10_000, "why": "a test's impossible host"}]
    lib = dataclasses.replace(lib, reproduction={"large_document_update": definition})
    first = busy["numerator"][0]
    inputs = (df["workload"] == first["workload"]) & (df["variant"] == first.get("variant", "default")) & (df["metric"] == first["metric"])
    df.loc[inputs & (df["engine_id"] == "postgres-16"), "quiet"] = False
    before = df.copy()

    plants = plant_reversed(df, lib, "smoke", random.Random(1))
    by_label = {p.label: p for p in plants}
    needy_plants = [p for label, p in by_label.items() if needy["id"] in label]
    assert len(needy_plants) == 2 and all("not applicable on this host" in p.not_judged for p in needy_plants), needy_plants
    busy_16 = [p for label, p in by_label.items() if busy["id"] in label and "postgres-16" in label]
    busy_17 = [p for label, p in by_label.items() if busy["id"] in label and "postgres-17" in label]
    assert len(busy_16) == 1 and "busy window" in busy_16[0].not_judged, busy_16
    assert len(busy_17) == 1 and not busy_17[0].not_judged, "the same finding on a quiet engine is planted"
    assert df.loc[inputs & (df["engine_id"] == "postgres-16"), "value"].equals(
        before.loc[inputs & (df["engine_id"] == "postgres-16"), "value"]
    )

    report: dict = {"kinds": {}}
    _record(report, "reversed_comparison", plants)
    k = report["kinds"]["reversed_comparison"]
    assert k["planted"] == len(plants) - 3 and len(k["not_judged"]) == 3
    assert not any(needy["id"] in m or f"{busy['id']} on postgres-16" in m for m in k["missed"])


def test_findings_that_share_an_input_are_planted_in_separate_copies() -> None:
    """SQLite's "position matters for JSONB" and "matters more than for text" both read keys_1000/jsonb/last_vs_first:
    planted in one copy, the second tie moves the first off its edge (a checkcheck once missed those 3 ties). So the
    first call plants one and leaves the other for the next copy, and each lands exactly where it was put."""
    import random

    from jsonbench.checks.findings import finding_value
    from jsonbench.checks.library import load_library
    from jsonbench.dataset.read import MEASUREMENTS, read_dataset_report
    from jsonbench.paths import RECORDED_DIR
    from jsonbench_dev.checkcheck import _values, plant_reversed

    rows = read_dataset_report(RECORDED_DIR / "local-77d5ecd-ed7b53fa", MEASUREMENTS).table.to_pandas()
    rows = rows[(rows["scale"] == "smoke") & (rows["suite"] == "sqlite_jsonb")]
    lib = load_library()
    defs = {f["id"]: f for f in lib.reproduction["sqlite_jsonb"]["findings"]}
    done: set[tuple[str, str, str]] = set()
    rounds = []
    while True:
        df = rows.copy()
        plants = plant_reversed(df, lib, "smoke", random.Random(1), "tie_comparison", done)
        if not plants:
            break
        rounds.append((df, [p.label for p in plants]))
    assert len(rounds) >= 2
    for fid in ("keys_1000_position_matters_for_jsonb", "keys_1000_position_matters_more_for_jsonb"):
        where = [i for i, (_, labels) in enumerate(rounds) if any(f"{fid} on sqlite-3.45.0" in x for x in labels)]
        assert len(where) == 1, (fid, [labels for _, labels in rounds])
        df = rounds[where[0]][0]
        observed, _, _ = finding_value(_values(df[df["engine_id"] == "sqlite-3.45.0"]), defs[fid])
        assert observed is not None and abs(observed - 1.0) < 1e-6, (fid, observed)


def test_the_plant_left_to_drift_moves_a_finding_twice_toward_its_opposite_and_never_into_it() -> None:
    """``kept_conclusion_2x``: one design twice slower while the conclusion holds; when the opposite is
    nearer than 2x, halfway there in log, so the conclusion still holds and only drift can tell."""
    import math

    from jsonbench_dev.checkcheck import _halfway_value

    faster = {"opposite": {"below": 1.0}}  # "jsonb reads faster": its opposite is a ratio at or below 1
    assert _halfway_value(faster, 5.0) == 2.5
    assert _halfway_value(faster, 1.5) == math.sqrt(1.5)
    cheaper = {"opposite": {"above": 1.0}}  # "the index costs less": its opposite is at or above 1
    assert _halfway_value(cheaper, 0.3) == 0.6
    assert _halfway_value(cheaper, 0.8) == math.sqrt(0.8)
    same = {"opposite": {"below": 0.5, "above": 2.0}}  # "about the same": toward the nearer edge
    assert _halfway_value(same, 1.2) == math.sqrt(1.2 * 2.0)
    assert _halfway_value(same, 0.9) == math.sqrt(0.9 * 0.5)


def test_the_plant_held_over_three_nights_moves_the_same_inputs_of_the_two_runs_before_the_target(
    make_cells, results_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kept_conclusion_2x_3nights``: a design change that lasts. The target's planted inputs move, and the same inputs
    of the two runs before it move by the same factor; the run before the change stays as it was. Each of the three
    nights is judged on the history up to it, as it would have been checked."""
    import random

    import pandas as pd

    from jsonbench.checks.library import load_library
    from jsonbench_dev import checkcheck as cc

    for n in range(4):
        make_run(make_cells, n)
    data, label, scale, runs = cc._select_runs(results_dir, None, None)
    ids = [r for r, _ in runs]
    t = cc._Target(results_dir, tmp_path / "own", data, label, ids)
    seen: list[tuple[str, dict[str, pd.DataFrame]]] = []

    def judge(self: cc._Target, work: Path, plants: list[cc.Plant], baseline: set[tuple[str, str, str]]) -> None:
        seen.append((self.run_id, {r: cc._read_file(cc._file_of(work, r)) for r in self.history_ids}))

    monkeypatch.setattr(cc._Target, "judge", judge)
    target_df = cc._read_file(cc._file_of(results_dir, ids[-1]))
    plants = cc._comparison_rounds(
        "kept_conclusion_2x_3nights", t, target_df, t.copy("kept"), load_library(), scale, random.Random(7), set()
    )
    assert plants and seen
    assert [night for night, _ in seen[:3]] == ids[-3:], "each night of the plant judged, oldest first, the target last"
    key = ["engine_id", "suite", "workload", "variant", "metric"]

    def factors(copy: dict[str, pd.DataFrame], run_id: str) -> pd.Series:
        honest = cc._read_file(cc._file_of(results_dir, run_id)).set_index(key)["value"]
        return (copy[run_id].set_index(key)["value"] / honest).dropna().round(9)

    for night, copy in seen:
        if night != ids[-1]:
            assert set(copy) == set(ids[: ids.index(night) + 1])  # the history up to that night, no later run
            continue
        moved = factors(copy, ids[-1])
        moved = moved[moved != 1.0]
        assert not moved.empty
        for earlier in ids[-3:-1]:  # held over: the same inputs, the same factor
            f = factors(copy, earlier)
            assert f[f != 1.0].to_dict() == moved.to_dict(), earlier
        assert (factors(copy, ids[0]) == 1.0).all()  # before the change: as measured
    for night, copy in seen:  # an earlier night's copy holds the plant in its planted runs only
        if night == ids[-2]:
            assert (factors(copy, ids[-3]) != 1.0).any() and (factors(copy, ids[-2]) != 1.0).any()
            assert (factors(copy, ids[0]) == 1.0).all()


def test_a_plant_left_to_drift_is_claimed_only_where_its_series_noise_allows_the_move() -> None:
    """The report's "of those whose own noise allows it": a plant counts when one series it moved has, in the record, a
    minimum detectable shift over the nights it is held at most the move (either way in log); a series the record does
    not hold makes no claim."""
    from jsonbench_dev.checkcheck import Plant, _record, noise_allows

    record = {"series": {"s/pg/w/a/ms": {"mds": 0.9, "mds_3": 0.4}, "s/pg/w/b/ms": {"mds": 0.2, "mds_3": 0.1}}}
    slow_a = Plant("kept_conclusion_2x", "a 2x slower", moves=[("s/pg/w/a/ms", 2.0)])  # +100 %
    fast_a = Plant("kept_conclusion_2x", "a 1.5x faster", moves=[("s/pg/w/a/ms", 1 / 1.5)])  # the same as +50 %
    small = Plant("kept_conclusion_2x", "a +12 %, b +12 %", moves=[("s/pg/w/a/ms", 1.12), ("s/pg/w/b/ms", 1.12)])
    unknown = Plant("kept_conclusion_2x", "not in the record", moves=[("s/pg/w/z/ms", 3.0)])
    assert noise_allows(slow_a, record, 1) and noise_allows(slow_a, record, 3)
    assert not noise_allows(fast_a, record, 1) and noise_allows(fast_a, record, 3)
    assert not noise_allows(small, record, 1) and noise_allows(small, record, 3)  # b's mds_3 (10 %) allows +12 %
    assert not noise_allows(unknown, record, 1) and not noise_allows(unknown, record, 3)
    slow_a.caught = True
    report: dict = {"kinds": {}}
    _record(report, "kept_conclusion_2x_3nights", [slow_a, fast_a, small, unknown], record)
    k = report["kinds"]["kept_conclusion_2x_3nights"]
    assert (k["planted"], k["caught"], k["allowed"], k["caught_allowed"]) == (4, 1, 3, 1)
    assert k["missed_allowed"] == ["a 1.5x faster", "a +12 %, b +12 %"] and k["mds_field"] == "mds_3"
    _record(report, "reversed_comparison", [slow_a], record)
    assert "allowed" not in report["kinds"]["reversed_comparison"]  # a band's plant: every one must be caught


def test_an_engines_slowdown_leaves_the_canary_beside_it_as_measured() -> None:
    """A slower version does not slow the canary timed before its cells: moved with it, the canary would say "the host
    was slower", and drift takes that out, so the power table read 0 % for every engine (on one host's
    five laptop nights). The engine's own timings move; the canary's rows, under the same engine id, do not."""
    import pandas as pd

    from jsonbench.dataset.measurement import HOST_SUITE
    from jsonbench_dev.checkcheck import _mask, plant_slowdown

    df = pd.DataFrame(
        {
            "suite": ["large_document_update", HOST_SUITE, "large_document_update", HOST_SUITE],
            "engine_id": ["postgres-16", "postgres-16", "postgres-17", "postgres-17"],
            "workload": ["json_big", "canary", "json_big", "canary"],
            "variant": ["default", "before.large_document_update"] * 2,
            "metric": ["update_ms", "cpu_all"] * 2,
            "unit": ["ms", "ms", "ms", "ms"],
            "status": ["ok"] * 4,
            "value": [10.0, 300.0, 10.0, 300.0],
            "spread": [None] * 4,
            "samples": [None] * 4,
        }
    )
    assert _mask("engine", "postgres-16")(df).tolist() == [True, False, False, False]
    plant_slowdown(df, "postgres-16")
    assert df["value"].tolist() == [20.0, 300.0, 10.0, 300.0]


def test_a_plant_left_to_drift_without_a_quiet_run_before_it_is_outside_the_claim() -> None:
    """Drift judges a move against the quiet runs before it and leaves a busy window out of every later history. Where
    every earlier run of a planted series was disturbed (``small_row_update_rel_hot`` on 16 and 17 in one host's five
    nights: the first two nights' ``updates`` windows busy), the plant is its own reference and no noise makes it
    visible: it is reported apart, not as a miss within the claim."""
    import pandas as pd

    from jsonbench_dev.checkcheck import Plant, _record, quiet_runs

    def row(run: str, quiet: object, status: str = "ok") -> dict:
        return {
            "run_id": run,
            "suite": "s",
            "engine_id": "pg",
            "workload": "w",
            "variant": "a",
            "metric": "ms",
            "status": status,
            "quiet": quiet,
        }

    data = pd.DataFrame([row("r1", False), row("r2", None), row("r3", True), row("r4", True, "error")])
    assert quiet_runs(data, ["r1"], "s/pg/w/a/ms") == 0  # busy
    assert quiet_runs(data, ["r1", "r2"], "s/pg/w/a/ms") == 1  # a run that recorded no quiet flag counts as quiet
    assert quiet_runs(data, ["r1", "r3", "r4"], "s/pg/w/a/ms") == 1  # a failed row is no reference
    assert quiet_runs(data, ["r3"], "s/pg/w/b/ms") == 0  # another series
    # a row timed outside the measure windows (no flag) in a cell whose windows were busy is busy too, as drift reads it
    cell = pd.DataFrame([row("r5", None), {**row("r5", False), "metric": "other"}])
    assert quiet_runs(cell, ["r5"], "s/pg/w/a/ms") == 0

    record = {"series": {"s/pg/w/a/ms": {"mds": 0.1, "mds_3": 0.05}}}
    seen = Plant("kept_conclusion_2x", "a 2x slower", moves=[("s/pg/w/a/ms", 2.0)])
    unseen = Plant("kept_conclusion_2x", "a 2x slower, busy before", moves=[("s/pg/w/a/ms", 2.0)], unseen="no quiet run")
    report: dict = {"kinds": {}}
    _record(report, "kept_conclusion_2x_3nights", [seen, unseen], record)
    k = report["kinds"]["kept_conclusion_2x_3nights"]
    assert (k["planted"], k["caught"], k["allowed"], k["caught_allowed"]) == (2, 0, 1, 0)
    assert k["missed_allowed"] == ["a 2x slower"] and k["no_reference"] == ["a 2x slower, busy before: no quiet run"]
