"""`jsonbench-dev noise-levels` on the real recorded runs: the table of where noise enters, by the record's own definition.

The levels are split by the very function the calibration record uses (`jsonbench.history.stats.levels`), so the
docs' table and the thresholds a night is judged with cannot say two different things. Nothing here measures a timing.
"""

from __future__ import annotations

import math

from jsonbench.history import noise, stats
from jsonbench_dev.noise_levels import levels, render
from jsonbench_dev.recheck import folders_to_check


def test_the_levels_table_splits_recorded_runs_as_the_record_does() -> None:
    series = levels(folders_to_check([]))
    laptop = [s for s in series if s.series.endswith("/laptop")]
    assert {s.suite for s in laptop} >= {"catalogue", "json_vs_jsonb", "large_document_update", "sqlite_jsonb"}
    # Several hosts ran the laptop matrix, and some ran it more than once: both levels are measured.
    assert any(s.starts is not None for s in laptop) and any(s.hosts is not None for s in laptop)
    assert all(s.n_hosts >= 1 and s.n_starts >= 1 for s in laptop)
    for s in laptop:
        for v in (s.within, s.expected, s.starts, s.hosts):
            assert v is None or (math.isfinite(v) and v >= 0), s
    table = render(series)
    assert "| catalogue @ laptop |" in table and "dominates" in table


def test_the_split_is_the_records_own() -> None:
    # two hosts, two starts each: the starts' sd pooled inside each host, the hosts' beyond what the starts explain
    start, start_df, host, host_df = stats.levels([0.0, 0.1, 0.5, 0.6], ["a", "a", "b", "b"])
    assert start_df == 2 and math.isclose(start or 0.0, math.sqrt(0.01 / 2))
    assert host_df == 1 and host is not None and host > 0.3


def test_the_canary_fit_is_shown_per_workload() -> None:
    from jsonbench_dev.noise_levels import render_fit

    fit = {"points": 12, "canary_sd": 0.2, "slope": 0.98, "se": 0.05, "r2": 0.9, "decisive": True}
    rec = {
        "hardware_label": "local",
        "scale": "laptop",
        "created_at": "now",
        "canary_fit": {
            "catalogue/scan/cpu_single": {"suite": "catalogue", "workload": "scan", "policy": "cpu_single", "use": "cpu_all", "coef": 0.98,
                                          "fits": {"cpu_all": fit}},
            "catalogue/updates/cpu_all": {"suite": "catalogue", "workload": "updates", "policy": "cpu_all", "use": None, "coef": None,
                                          "fits": {"cpu_all": {**fit, "slope": -0.4}}},
        },
    }  # fmt: skip
    table = render_fit(rec)
    assert "| catalogue | scan | cpu_single | - | 0.98 +- 0.05 (r² 0.90, canary sd 20.0%) | - | cpu_all x 0.98 |" in table
    assert "| catalogue | updates | cpu_all | - | -0.40 +- 0.05" in table and "nothing (judged as measured)" in table


def test_arms_compare_the_pooled_spread_between_starts_over_the_series_both_measured() -> None:
    """An arm whose starts spread half as much reads a variance ratio of 0.25, over common series only."""
    from jsonbench_dev.noise_levels import SeriesNoise, compare_arms

    def s(series: str, starts: float, n: int = 3) -> SeriesNoise:
        return SeriesNoise("catalogue", f"postgres-17/{series}/default/t/laptop", 0.05, 0.03, starts, None, n, 1)

    base = [s(f"w{i}", 0.10) for i in range(20)] + [s("only_here", 5.0)]
    narrow = [s(f"w{i}", 0.05) for i in range(20)]
    table = compare_arms({"on": base, "off": narrow})
    row = next(line for line in table.splitlines() if line.startswith("| catalogue @ laptop"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "20"  # the series only one arm measured is left out
    assert cells[2] == f"{(math.exp(0.10) - 1) * 100:.1f} % (40)" and cells[4] == f"{(math.exp(0.05) - 1) * 100:.1f} % (40)"
    assert cells[6].startswith("0.25 (p 0.00")


def test_arms_say_what_a_setting_shifts_pair_by_pair() -> None:
    """Interleaved runs (off, on, off, on) pair with their neighbour; each pair reads the median move over the series
    both runs measured: a setting 10 % higher in one pair and 10 % lower in the next shifts nothing consistently."""
    from jsonbench_dev.noise_levels import SeriesNoise, _pairs, compare_arms

    on_runs, off_runs = (
        ["manual__2026-12-03T04:12:21", "manual__2026-12-03T04:28:52"],
        ["manual__2026-12-03T04:02:50", "manual__2026-12-03T04:20:29"],
    )
    assert _pairs([set(on_runs), set(off_runs)]) == [(on_runs[0], off_runs[0]), (on_runs[1], off_runs[1])]
    assert _pairs([{"manual__a", "manual__b"}, {"manual__c"}]) == [("manual__b", "manual__c")]  # a, b, c: b and c are neighbours

    def s(series: str, runs: dict[str, float]) -> SeriesNoise:
        return SeriesNoise("catalogue", f"postgres-17/{series}/default/t/laptop", 0.05, 0.03, 0.05, None, 2, 1, runs=runs)

    on = [s(f"w{i}", {on_runs[0]: 1.0, on_runs[1]: 1.0}) for i in range(10)]
    off = [s(f"w{i}", {off_runs[0]: 1.0 + math.log(1.10), off_runs[1]: 1.0 - math.log(1.10)}) for i in range(9)]
    off.append(s("w9", {off_runs[0]: 1.0 + math.log(1.10)}))  # its second off run was disturbed: not in that pair
    rows = [line for line in compare_arms({"on": on, "off": off}).splitlines() if "| on 2026" in line]
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in rows]
    assert [c[1] for c in cells] == ["on 2026-12-03T04:12:21, off 2026-12-03T04:02:50", "on 2026-12-03T04:28:52, off 2026-12-03T04:20:29"]
    assert [c[2] for c in cells] == ["10", "9"]
    assert [c[3] for c in cells] == ["1.100x", "0.909x"] and [c[4] for c in cells] == ["100%", "0%"]


def test_the_table_reads_real_two_start_nights_by_drifts_own_figure() -> None:
    """The `--starts 2` nights (`recorded/local-4418ae2-431a3be6-starts2/`): each run's figure in
    the table is `noise.statistic` of its row (each start's best, averaged), and the one-start record never reads them."""
    from jsonbench import paths
    from jsonbench.dataset.read import MEASUREMENTS, read_dataset_report

    folder = paths.RECORDED_DIR / "local-4418ae2-431a3be6-starts2"
    assert not [s for s in levels([(folder, {})]) if s.runs], "the record's design (one start) reads no two-start figure"
    series = {s.series: s for s in levels([(folder, {})], design=None) if s.suite == "catalogue"}
    rows = read_dataset_report(folder, MEASUREMENTS, hardware_label="local").table.to_pandas()
    row = rows[
        (rows["workload"] == "reads") & (rows["variant"] == "full_doc") & (rows["metric"] == "tps") & rows["quiet"].astype(bool)
    ].iloc[0]
    assert len(row["samples"]) >= 2 and '"start_samples"' in str(row["extra"])
    figure = noise.statistic(str(row["unit"]), row["value"], row["samples"], row["extra"])
    got = series["postgres-17/reads/full_doc/tps/laptop"].runs[str(row["run_id"])]
    assert figure is not None and math.isclose(got, math.log(figure)) and not math.isclose(got, math.log(float(row["value"])))


def test_a_run_of_another_design_is_not_read_as_a_night_of_canary_rows_alone() -> None:
    """The record's reader keeps one start's rows; a two-start run's canary rows go with it, or drift-recheck reads a
    night with nothing judged (and plants a version on it)."""
    from jsonbench import paths
    from jsonbench_dev.record import read_runs

    two = paths.RECORDED_DIR / "local-4418ae2-431a3be6-starts2"
    one = paths.RECORDED_DIR / "local-4418ae2-431a3be6-starts1"
    assert read_runs([(two, {})], "local", "laptop").empty
    assert len(set(read_runs([(two, {})], "local", "laptop", starts=None)["run_id"])) == 3
    both = read_runs([(one, {}), (two, {})], "local", "laptop")
    assert len(set(both["run_id"])) == 3 and (both["suite"] == "host").any()


def test_a_quotient_keeps_what_its_inputs_do_not_share_and_cancels_what_they_do() -> None:
    """``noise-levels --quotients``: a start that moves both designs together cancels in their quotient (variance kept
    near 0); inputs that move apart keep all of it (about 1). A finding that reads one published ratio is not listed."""
    import random

    from jsonbench_dev.noise_levels import SeriesNoise, quotients, render_quotients

    rng = random.Random(3)
    runs = [f"r{i}" for i in range(40)]
    hosts = {r: "h1" if i < 20 else "h2" for i, r in enumerate(runs)}
    start = {r: rng.gauss(0, 0.15) for r in runs}  # what a start does to every statement of the cell

    def series(name: str, own: float, shared: bool) -> SeriesNoise:
        figs = {r: (start[r] if shared else 0.0) + rng.gauss(0, own) for r in runs}
        sd, _, _, _ = stats.levels(list(figs.values()), list(hosts.values()))
        return SeriesNoise("s", f"pg/{name}/laptop", None, None, sd, None, 20, 2, figs, hosts)

    findings = {
        "s": {
            "findings": [
                {
                    "id": "together",
                    "kind": "timing",
                    "numerator": [{"workload": "a", "variant": "x", "metric": "t"}],
                    "denominator": [{"workload": "a", "variant": "y", "metric": "t"}],
                },
                {
                    "id": "apart",
                    "kind": "timing",
                    "numerator": [{"workload": "b", "variant": "x", "metric": "t"}],
                    "denominator": [{"workload": "b", "variant": "y", "metric": "t"}],
                },
                {"id": "one_ratio", "kind": "timing", "numerator": [{"workload": "a", "variant": "x", "metric": "t"}]},
            ]
        }
    }
    got = quotients(
        [series("a/x/t", 0.02, True), series("a/y/t", 0.02, True), series("b/x/t", 0.15, False), series("b/y/t", 0.15, False)],
        findings,
    )
    by = {q.finding: q for q in got}
    assert set(by) == {"together", "apart"}
    assert by["together"].shared < 0.1 and 0.5 < by["apart"].shared < 1.6, (by["together"].shared, by["apart"].shared)
    assert by["together"].runs == 40 and by["together"].engine_id == "pg" and by["together"].scale == "laptop"
    assert "| s @ laptop | 2 |" in render_quotients(got)
