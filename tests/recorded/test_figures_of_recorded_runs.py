"""The figures table on the committed runs of recorded/: a run under a CPU quota is no figure."""

from __future__ import annotations


def test_a_run_under_a_cpu_quota_is_not_a_figure() -> None:
    """``recorded/local-714acc6-ed7b53fa`` holds two nights at full speed, then one under ``./bin/cpu-quota 0.6`` (the
    latest): the figures read the two, so the latest laptop column of PostgreSQL 17 is not a slowed-down host's."""
    from jsonbench.dataset.read import read_dataset
    from jsonbench.paths import RECORDED_DIR
    from jsonbench.report.figures import read_measurements

    folder = RECORDED_DIR / "local-714acc6-ed7b53fa"
    every = read_dataset(folder).to_pandas()
    quota = set(every.loc[every["host_cpu_quota"].notna(), "run_id"])
    assert quota and set(every["run_id"]) - quota, "the premise: the folder has quota and full-speed runs"
    read = read_measurements([folder])
    assert not read.empty and not set(read["run_id"]) & quota
    assert set(read["run_id"]) == set(every["run_id"]) - quota
