"""`jsonbench-dev drift-recheck` on real recorded runs: drift stays quiet on an honest host it never saw, and sees a version slow down.

The rows are real (`recorded/`, several hosts of the reference type; a host is named by a folder of its runs, whose
host `recorded/hosts.json` says). The host of `local-9a24bd8` is judged by a noise record built from the other hosts
only: its second laptop night (once 50 confirmed alarms against a one-afternoon record) may
raise at most 1 % suspects before confirmation, its three back-to-back starts none, and PostgreSQL 17 planted 1.25x
slower over its last three runs must be seen. Nothing here measures a timing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from jsonbench.history.drift import DRIFT_COLUMNS
from jsonbench_dev.driftcheck import drift_recheck, render
from jsonbench_dev.plants import reference_runs
from jsonbench_dev.recheck import folders_to_check

RECORDED = Path(__file__).resolve().parents[2] / "recorded"


def host_of(folder: str) -> str:
    """The host ``recorded/hosts.json`` names for one of its folders."""
    return str(json.loads((RECORDED / "hosts.json").read_text(encoding="utf-8"))["folders"][folder]["host"])


def test_an_honest_host_it_never_saw_is_quiet_and_a_slower_version_is_caught() -> None:
    host = host_of("local-9a24bd8")
    results = drift_recheck(folders_to_check([]), "laptop", only={host})
    assert len(results) == 1, render(results, 1.25)
    h = results[0]
    assert host not in " ".join(h.record_hosts), "the record never saw the host it judges"
    assert len(h.honest) >= 4 and all(r["judged"] > 0 for r in h.honest)
    # Before confirmation, at most 1 % of a night's judged series is suspect (the record of one afternoon flagged 118 of
    # 2,604 on the second night, and confirmed 50); the back-to-back starts raise none.
    assert all(r["alarms"] <= 0.01 * r["judged"] for r in h.honest), render(results, 1.25)
    assert [r["alarms"] for r in h.honest[1:]] == [0] * (len(h.honest) - 1), render(results, 1.25)
    v = h.version
    assert v["engine"] == "postgres-17" and v["nights"] == 3 and v["judged"] > 100
    assert v["caught"] > 0, "a version 1.25x slower for three nights is seen (its family): " + render(results, 1.25)


def test_a_harness_change_is_said_as_one_where_three_engines_have_history() -> None:
    """The host of `local-3dd7625-2de39d7f`: its early runs hold PostgreSQL 17 alone, its later ones the whole matrix.
    The harness plant lands on the latest run where three engines or more have history on the host (on the first
    whole-matrix run only 17 has any, and nothing could tell the plant from 17's own version change)."""
    results = drift_recheck(folders_to_check([]), "laptop", only={host_of("local-3dd7625-2de39d7f")})
    assert len(results) == 1, render(results, 1.25)
    h = results[0]
    assert all(r["alarms"] <= 0.01 * r["judged"] for r in h.honest), render(results, 1.25)
    m = h.harness
    # The nights under ./bin/cpu-quota 0.6: hosts of their own, on which no plant lands.
    assert h.quota == ["manual__2026-12-03T09:19:09.911168+00:00", "manual__2026-12-03T16:55:00.684545+00:00"]
    assert m and m["run_id"] == [r for r in h.runs if r not in h.quota][-1], render(results, 1.25)
    assert m["said_as_harness"] > 0.5 * m["judged"], render(results, 1.25)
    # The version plant: its family is judged against the versions measured beside it the same night, so
    # the planted family is found (against its own history alone, on this host, no series of it is).
    assert h.version["engine"] == "postgres-17" and h.version["caught"] > 0, render(results, 1.25)
    # The claim counts each series' own reference: never more than the host's earlier runs; on this host, whose history
    # holds other designs (ASLR on, huge pages, the checkpoint arm), some series had fewer.
    v = h.version
    assert 0 < v["reference_min"] <= v["reference_median"] <= v["history"], render(results, 1.25)
    assert v["allowed"] <= v["judged"], render(results, 1.25)


def test_a_series_reference_is_its_history_since_its_last_change_point() -> None:
    """What the version plant's claim counts for each series (a stand-in frame for speed; the real drift frames are read
    in the test above): the judged series only, their quiet history from the last change point Otava found in it."""
    base = {c: None for c in DRIFT_COLUMNS}
    rows = [
        {
            **base,
            "suite": "s",
            "engine_id": "e",
            "workload": "w",
            "variant": "a",
            "metric": "m",
            "judged": "yes",
            "history_n": 9,
            "change_points": json.dumps([{"index_in_history": 2}, {"index_in_history": 5}]),
        },
        {
            **base,
            "suite": "s",
            "engine_id": "e",
            "workload": "w",
            "variant": "b",
            "metric": "m",
            "judged": "yes",
            "history_n": 4,
            "change_points": "[]",
        },
        {
            **base,
            "suite": "s",
            "engine_id": "e",
            "workload": "w",
            "variant": "c",
            "metric": "m",
            "judged": "no",
            "history_n": 1,
            "change_points": "[]",
        },
    ]
    got = reference_runs(pd.DataFrame(rows, columns=DRIFT_COLUMNS))
    assert got == {("s", "e", "w", "a", "m"): 4, ("s", "e", "w", "b", "m"): 4}
    assert reference_runs(pd.DataFrame(columns=DRIFT_COLUMNS)) == {}


def test_a_familys_reference_beside_the_other_versions_is_the_runs_they_shared() -> None:
    """Where tonight judged three engines of a suite, drift compares a family with the versions beside it on the runs they
    all ran in (``history.drift.beside``), and the claim counts those: 17's runs alone (``a1``, ``a2``) are in its own
    reference, not its family's. With fewer engines tonight the family's way has its whole reference (a stand-in frame)."""
    from jsonbench_dev.plants import family_reference_runs

    base = {c: None for c in DRIFT_COLUMNS}

    def row(engine: str, history: list[str], suite: str = "s") -> dict:
        return {
            **base,
            "suite": suite,
            "engine_id": engine,
            "workload": "w",
            "variant": "v",
            "metric": "m",
            "judged": "yes",
            "history_n": len(history),
            "history_runs": json.dumps(history),
            "change_points": "[]",
        }

    shared = ["r1", "r2", "r3"]
    rows = [row("pg16", shared), row("pg17", ["a1", "a2", *shared]), row("pg18", shared[1:]), row("pg17", ["a1", "r1"], suite="t")]
    frame = pd.DataFrame(rows, columns=DRIFT_COLUMNS)
    got = family_reference_runs(frame)
    assert reference_runs(frame)[("s", "pg17", "w", "v", "m")] == 5
    # r1 ran pg16 and pg17 only: not beside two others; r2 and r3 ran all three
    assert got[("s", "pg17", "w", "v", "m")] == 2 and got[("s", "pg16", "w", "v", "m")] == 2 and got[("s", "pg18", "w", "v", "m")] == 2
    assert got[("t", "pg17", "w", "v", "m")] == 2  # one engine of suite t tonight: its whole reference


def test_a_series_noise_allows_a_move_by_one_of_drift_s_two_ways() -> None:
    """At the family's level only where the family can be selected too; else alone, at BH over the run's series."""
    from jsonbench_dev.plants import noise_allows

    key = ("s", "e", "w", "v", "m")

    def record(series: float, family: float, m: int = 2000) -> dict:
        return {"series": {"s/e/w/v/m": {"sigma": series}}, "families": {"s/e": {"sigma": family}}, "method": {"m_series": m}}

    assert noise_allows(record(0.03, 0.02), key, ref_runs=6, nights=3, factor=1.25)  # both quiet: the family's way
    # a quiet series in a family its noise hides: not at the family's level; alone, 1.25x is far beyond a lone test of 10 %
    assert not noise_allows(record(0.10, 0.40), key, ref_runs=6, nights=3, factor=1.25)
    # ... unless the series is quiet enough to be seen alone
    assert noise_allows(record(0.01, 0.40), key, ref_runs=6, nights=3, factor=1.25)
    # a noisy series is not allowed either way; nor one the record does not hold
    assert not noise_allows(record(0.30, 0.02), key, ref_runs=6, nights=3, factor=1.25)
    assert not noise_allows({}, key, ref_runs=6, nights=3, factor=1.25)
    # the family's way has only the runs beside the other versions: one of them claims less than the series' own six
    assert noise_allows(record(0.06, 0.03), key, ref_runs=6, nights=3, factor=1.25)
    assert not noise_allows(record(0.06, 0.03), key, ref_runs=6, nights=3, factor=1.25, family_ref=1)
    assert not noise_allows(record(0.06, 0.03), key, ref_runs=6, nights=3, factor=1.25, family_ref=0)
    # a shorter reference claims less
    assert noise_allows(record(0.06, 0.03), key, ref_runs=20, nights=3, factor=1.25) and not noise_allows(
        record(0.06, 0.03), key, ref_runs=1, nights=1, factor=1.25
    )


def test_the_version_plant_lands_on_nights_with_other_engines_beside_it() -> None:
    """Only beside other engines can drift tell one version's change from the host's: the plant's nights are the latest
    stretch of multi-engine runs (a pure function, on made-up run names), else the last runs, said as such."""
    from jsonbench_dev.driftcheck import version_window

    whole, one = {"pg16", "pg17", "pg18", "sqlite"}, {"pg17"}
    runs = ["a", "b", "c", "d", "e", "f", "g"]
    engines = [one, whole, whole, whole, whole, one, one]  # the whole matrix, then narrowed runs (as one recorded host's)
    assert version_window(runs, runs, engines, 3) == (["c", "d", "e"], "multi-engine")
    # one run before the window at least: its history
    assert version_window(runs[1:5], runs, engines, 3) == (["c", "d", "e"], "multi-engine")
    assert version_window(runs[1:4], runs, engines, 3) == (["b", "c", "d"], "last runs")
    # no stretch of three multi-engine runs (as one recorded host: two whole-matrix nights, then three narrowed starts)
    assert version_window(runs[3:], runs, engines, 3) == (["e", "f", "g"], "last runs")
    # the runs of the machine as it is only: a night under a CPU quota is another host's, passed over as the last runs are
    own = ["a", "b", "c", "e", "f", "g"]
    assert version_window(own, runs, engines, 2) == (["c", "e"], "multi-engine")


def test_two_start_nights_are_judged_as_their_own_design_against_a_one_start_record() -> None:
    """`--starts 2`: the nights at two engine starts of the host of `local-d05adce-6b8986c8-starts2` (the arms and
    catalogue runs, the default at laptop) are the nights judged, its one-start nights are not; the record still comes
    from the other machines' one-start runs, as a user's two-start night reads the committed record. Dropping every
    two-start row would leave a folder of the default's nights nothing to judge."""
    from jsonbench.cell import starts_of
    from jsonbench.dataset.measurement import HOST_SUITE
    from jsonbench_dev.record import read_runs

    folders = folders_to_check([])
    host = host_of("local-d05adce-6b8986c8-starts2")
    results = drift_recheck(folders, "laptop", only={host}, starts=2)
    assert len(results) == 1, render(results, 1.25)
    h = results[0]
    assert host not in " ".join(h.record_hosts) and h.record_hosts, "the record never saw the host it judges"
    rows = read_runs(folders, "local", "laptop", starts=None)
    mine = rows[rows["machine"].astype(str).str.startswith(host) & (rows["suite"] != HOST_SUITE)]
    design = mine.groupby("run_id")["scale_params"].agg(lambda p: {starts_of(x) for x in p})
    # a whole-matrix night at the default holds both: PostgreSQL's figures on two starts, SQLite's on one
    two = {str(r) for r, s in design.items() if 2 in s}
    one = {str(r) for r, s in design.items() if 2 not in s}
    # the two-start arm (catalogue and json_vs_jsonb on 17) is judged; the one-start nights are not
    assert {"manual__2026-12-05T21:19:35.052716+00:00", "manual__2026-12-05T21:49:50.426571+00:00"} <= set(h.runs), h.runs
    assert set(h.runs) <= two and not set(h.runs) & one, (sorted(h.runs), sorted(one))
    judged = {r["run_id"]: r["judged"] for r in h.honest}
    assert len(judged) == len(h.runs) - 1, render(results, 1.25)
    # the canary is never judged as a suite, as in the night's own check (once, 14:03:56 and 14:43:04 alarmed
    # on host/postgres-17 and host/postgres-18 here, alarms no night could raise)
    assert not [f for r in h.honest for f in r["families"] if f.startswith(f"{HOST_SUITE}/")], render(results, 1.25)
    # the arm's later nights are judged against its two-start history (a night whose read order has no history of its own,
    # the first interleaved json_vs_jsonb run, has nothing to judge)
    assert judged["manual__2026-12-05T21:27:03.900906+00:00"] > 0 and judged["manual__2026-12-05T21:49:50.426571+00:00"] > 0, judged
