"""GXSession: a file-backed context under <results>/gx, Checkpoints with UpdateDataDocsAction, Data Docs
history across runs, finish() naming each suite's page, and two concurrent checks on one folder."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from jsonbench.checks.gxrun import GXSession, data_docs_dir, gx_dir

BETWEEN = {
    "type": "expect_column_values_to_be_between",
    "kwargs": {"column": "x", "min_value": 0, "max_value": 2},
    "meta": {"notes": "x is small"},
}
NOT_NULL = {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "x"}}
FRAME = pd.DataFrame({"x": [1, 2, 3], "key": ["a", "b", "c"]})


def test_checkpoint_with_data_docs_keeps_every_run(tmp_path: Path) -> None:
    results = tmp_path / "results"
    pages: list[dict[str, str]] = []
    for run in ("run_a", "run_b"):
        s = GXSession(results, run_name=run, data_docs=True)
        out = s.validate("demo.sanity", FRAME, [BETWEEN, NOT_NULL], ["key"])
        assert [o.success for o in out] == [False, True]
        assert out[0].unexpected == [{"x": 3, "key": "c"}] or out[0].unexpected == [{"x": "3", "key": "c"}]
        assert s.validate("demo.other", FRAME[FRAME.x < 3], [BETWEEN], [])[0].success
        pages.append(s.finish())
    # The GX way: a file-backed context with a Checkpoint (and its UpdateDataDocsAction) per suite.
    cfg = (gx_dir(results) / "great_expectations.yml").read_text()
    assert "local_site" in cfg and "validation_results_limit" in cfg
    checkpoint = json.loads((gx_dir(results) / "checkpoints" / "demo.sanity.json").read_text())
    assert [a["type"] for a in checkpoint["actions"]] == ["update_data_docs"]
    # finish(): suite -> page relative to the results folder, one per run, both kept (history).
    for p in pages:
        assert set(p) == {"demo.sanity", "demo.other"}
        assert all((results / page).is_file() for page in p.values())
        assert p["demo.sanity"].startswith("gx/uncommitted/data_docs/local_site/validations/demo/sanity/")
    assert pages[0]["demo.sanity"] != pages[1]["demo.sanity"]
    assert "/run_a/" in pages[0]["demo.sanity"] and "/run_b/" in pages[1]["demo.sanity"]
    stored = list((gx_dir(results) / "uncommitted" / "validations").rglob("*.json"))
    assert len(stored) == 4, stored  # 2 suites x 2 runs
    index = (data_docs_dir(results) / "index.html").read_text()
    assert "run_a" in index and "run_b" in index


def test_data_docs_off_still_validates_through_the_checkpoint(tmp_path: Path) -> None:
    s = GXSession(tmp_path / "results", run_name="r", data_docs=False)
    assert s.validate("demo.sanity", FRAME, [BETWEEN], ["key"])[0].success is False
    assert s.finish() == {}
    assert not data_docs_dir(tmp_path / "results").joinpath("index.html").exists()
    assert list((gx_dir(tmp_path / "results") / "uncommitted" / "validations").rglob("*.json"))


def test_former_per_run_docs_folder_and_ephemeral(tmp_path: Path) -> None:
    """What run.py passes today (``<results>/data_docs/<key>``, or None when docs are off) keeps working."""
    s = GXSession(tmp_path / "results" / "data_docs" / "run_x", run_name="run_x", data_docs=True)
    s.validate("demo.sanity", FRAME, [NOT_NULL], [])
    assert s.results_dir == tmp_path / "results" and s.build_docs() == data_docs_dir(tmp_path / "results") / "index.html"
    e = GXSession(None, run_name="r")
    assert e.validate("demo.sanity", FRAME, [BETWEEN], ["key"])[0].success is False and e.finish() == {}
    assert e.docs_index() is None


def _concurrent(results: str, run: str, n: int, start: Any, q: Any) -> None:
    try:
        import great_expectations  # noqa: F401 - imported before the start line, so both processes work at once

        start.wait(timeout=300)
        s = GXSession(results, run_name=run, data_docs=True)
        for i in range(n):
            # Shared suites (both runs update them) and suites of this run only (each adds a data asset to the yml).
            name = f"shared{i % 3}.part" if i % 2 == 0 else f"{run}.own{i}"
            s.validate(name, pd.DataFrame({"x": [i % 3], "key": [run]}), [BETWEEN], ["key"])
        q.put((run, s.finish()))
    except BaseException as exc:  # report to the parent, whatever it was
        q.put((run, repr(exc)))


def test_two_concurrent_checks_leave_the_context_whole(tmp_path: Path) -> None:
    results = tmp_path / "results"
    ctx = multiprocessing.get_context("spawn")
    q, start = ctx.Queue(), ctx.Event()
    n = 8
    procs = [ctx.Process(target=_concurrent, args=(str(results), f"run{k}", n, start, q)) for k in range(2)]
    for p in procs:
        p.start()
    start.set()
    got = dict(q.get(timeout=600) for _ in procs)
    for p in procs:
        p.join(timeout=60)
    assert all(isinstance(v, dict) for v in got.values()), got
    assert all(len(v) == 7 for v in got.values()), got  # 3 shared suites + 4 of its own
    assert all((results / page).is_file() for v in got.values() for page in v.values())
    # The context still loads, names every data asset both runs added, and works.
    s = GXSession(results, run_name="after", data_docs=True)
    assert s.validate("shared0.part", FRAME, [NOT_NULL], [])[0].success
    import great_expectations as gx

    assets = gx.get_context(mode="file", project_root_dir=str(results)).data_sources.all()["jsonbench"].get_asset_names()
    assert {f"run{k}.own{i}" for k in range(2) for i in range(1, n, 2)} <= assets
    assert len(list((gx_dir(results) / "uncommitted" / "validations").rglob("*.json"))) == 2 * 7 + 1


@pytest.mark.parametrize("bad_entry", [{"type": "expect_column_values_to_be_between", "kwargs": {"column": "missing", "min_value": 0}}])
def test_an_expectation_that_errors_is_an_outcome_not_a_crash(tmp_path: Path, bad_entry: dict[str, Any]) -> None:
    s = GXSession(tmp_path / "results", run_name="r", data_docs=True)
    out = s.validate("demo.broken", FRAME, [bad_entry, NOT_NULL], [])
    assert out[0].success is False and out[0].error and out[1].success
    assert "demo.broken" in s.finish()
