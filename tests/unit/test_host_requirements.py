"""Findings that know the hardware (contract C2): ``requires`` host facts, read from the rows that measured them."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from jsonbench.checks.findings import findings_frame
from jsonbench.checks.library import load_library
from jsonbench.checks.validate import validate_library
from jsonbench.checks.validate_entries import ExpectationFileError

NEEDS_3 = {"fact": "host_cores", "min": 3, "why": "2 parallel workers plus the leader need 3 free cores"}
DEF = {
    "findings": [
        {
            "id": "parallel_faster",
            "kind": "timing",
            "opposite": {"below": 1.0},
            "requires": [NEEDS_3],
            "numerator": [{"workload": "scan", "metric": "serial"}],
            "denominator": [{"workload": "scan", "metric": "parallel"}],
            "bands": {"laptop": {"min": 1.1, "max": 3.5, "reason": "r"}},
        },
        {
            "id": "plain",
            "kind": "timing",
            "opposite": {"below": 1.0},
            "numerator": [{"workload": "scan", "metric": "serial"}],
            "denominator": [{"workload": "scan", "metric": "parallel"}],
            "bands": {"laptop": {"min": 0.5, "max": 3.5, "reason": "r"}},
        },
    ]
}


def _rows(cores: int | None) -> pd.DataFrame:
    base = {"engine_id": "pg17", "suite": "s", "variant": "default", "unit": "ms", "status": "ok", "scale": "laptop", "reason": None}
    base |= {"host_cores": cores, "host_memory_bytes": 24 * 2**30, "quiet": True, "host_other_cpu": 0.0}
    return pd.DataFrame(
        [
            {**base, "workload": "scan", "metric": "serial", "value": 90.0},
            {**base, "workload": "scan", "metric": "parallel", "value": 100.0},
        ]
    )


def test_a_host_without_the_cores_makes_the_finding_not_applicable_naming_fact_value_and_need() -> None:
    f = findings_frame(_rows(2), "s", DEF, scale="laptop").set_index("finding")
    row = f.loc["parallel_faster"]
    assert row["applicable"] == "no" and pd.isna(row["band_min"])
    assert "host_cores = 2" in row["problem"] and "host_cores >= 3" in row["problem"] and "leader" in row["problem"]
    assert f.loc["plain", "applicable"] == "yes", "a finding without requirements is judged as before"


def test_a_host_with_the_cores_judges_the_finding_again() -> None:
    row = findings_frame(_rows(8), "s", DEF, scale="laptop").set_index("finding").loc["parallel_faster"]
    assert row["applicable"] == "yes" and row["band_min"] == 1.1 and row["observed"] == pytest.approx(0.9)


def test_rows_that_do_not_record_the_fact_are_judged_as_before() -> None:
    assert findings_frame(_rows(None), "s", DEF, scale="laptop").set_index("finding").loc["parallel_faster", "applicable"] == "yes"


def test_catalogue_parallel_speedup_needs_three_cores_and_says_why() -> None:
    cat = {f["id"]: f for f in load_library().reproduction["catalogue"]["findings"]}
    reqs = [r for r in cat["parallel_aggregation_faster_than_serial"]["requires"] if isinstance(r, dict)]
    assert reqs == [{"fact": "host_cores", "min": 3, "why": reqs[0]["why"]}] and "leader" in reqs[0]["why"]


@pytest.mark.parametrize(
    ("req", "words"),
    [
        ({"fact": "host_gpus", "min": 1, "why": "w"}, ".fact: must be one of"),
        ({"fact": "host_cores", "why": "w"}, "a host fact needs a min or a max"),
        ({"fact": "host_cores", "min": "3", "why": "w"}, ".min: must be a number"),
        ({"fact": "host_cores", "min": 3}, ".why: say why the finding needs it"),
        ({"fact": "host_cores", "min": 3, "why": "w", "scale": "full"}, "unknown keys ['scale']"),
        (3, "a capability (string) or a host fact"),
    ],
)
def test_a_malformed_requirement_is_refused_before_work_starts_naming_it(req: object, words: str, tmp_path: Path) -> None:
    """The expectation files' validator (run by the plan task) refuses it, naming the finding's requires[i] and what is wrong."""
    import shutil

    from jsonbench import paths

    lib = tmp_path / "expectations"
    shutil.copytree(paths.EXPECTATIONS_DIR, lib)
    f = lib / "catalogue.reproduction.json"
    d = json.loads(f.read_text())
    for finding in d["findings"]:
        if finding["id"] == "parallel_aggregation_faster_than_serial":
            finding["requires"] = [req]
    f.write_text(json.dumps(d))
    with pytest.raises(ExpectationFileError) as err:
        validate_library(lib)
    assert "requires[0]" in str(err.value) and words in str(err.value), str(err.value)
