"""A malformed expectation file fails validate_library() (the plan step) naming the file and the field.

Each case breaks one thing in a copy of the project's own expectation files.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jsonbench import paths
from jsonbench.checks.validate import validate_library
from jsonbench.checks.validate_entries import ExpectationFileError
from jsonbench.errors import ConfigError

LDU = "large_document_update.reproduction.json"


@pytest.fixture
def library(tmp_path: Path) -> Path:
    root = tmp_path / "expectations"
    shutil.copytree(paths.EXPECTATIONS_DIR, root)
    return root


def _edit(root: Path, name: str, change: Callable[[dict[str, Any]], None]) -> Path:
    path = root / name
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=1))
    return path


def test_the_projects_own_files_are_valid() -> None:
    lib = validate_library()
    assert {"large_document_update", "catalogue", "json_vs_jsonb", "sqlite_jsonb"} <= set(lib.reproduction)


def test_bad_json_names_file_line_and_column(library: Path) -> None:
    path = library / LDU
    text = path.read_text()
    path.write_text(text.replace('"findings": [', '"findings": [,', 1))
    with pytest.raises(ExpectationFileError) as err:
        validate_library(library)
    assert err.value.path == str(path) and err.value.field.startswith("line ")
    assert str(path) in str(err.value) and "not valid JSON" in str(err.value)
    assert isinstance(err.value, ConfigError)  # the plan step's kind of error


CASES: list[tuple[str, str, Callable[[dict[str, Any]], None], str, str]] = [
    ("finding without its bands", LDU, lambda d: d["findings"][2].pop("bands"), "findings[2].bands", "tolerance band"),
    (
        "band min above max",
        LDU,
        lambda d: d["findings"][0].update(bands={"laptop": {"min": 5, "max": 1, "reason": "r"}}),
        "findings[0].bands.laptop",
        "above max",
    ),
    (
        "band without a reason",
        LDU,
        lambda d: d["findings"][0].update(bands={"laptop": {"min": 1, "max": 5}}, band_reason=""),
        "findings[0].bands.laptop.reason",
        "reason",
    ),
    (
        "unknown scale",
        LDU,
        lambda d: d["findings"][0]["bands"].update(huge={"min": 1, "max": 2, "reason": "r"}),
        "findings[0].bands.huge",
        "unknown scale",
    ),
    ("unknown kind", LDU, lambda d: d["findings"][0].update(kind="vibes"), "findings[0].kind", "must be one of"),
    (
        "band bound not a number",
        LDU,
        lambda d: d["findings"][1].update(bands={"laptop": {"min": "low", "max": 4, "reason": "r"}}),
        "findings[1].bands.laptop.min",
        "number",
    ),
    ("finding without an id", LDU, lambda d: d["findings"][3].pop("id"), "findings[3].id", "missing"),
    (
        "term without a metric",
        LDU,
        lambda d: d["findings"][0]["numerator"][0].pop("metric"),
        "findings[0].numerator[0]",
        "workload and a metric",
    ),
    (
        "unknown statistic",
        LDU,
        lambda d: d["findings"][0]["numerator"][0].update(statistic="best"),
        "findings[0].numerator[0].statistic",
        "one of",
    ),
    (
        "unknown expectation type",
        "sanity.json",
        lambda d: d["frames"]["measurements"]["expectations"][1].update(type="expect_column_values_to_be_in_sett"),
        "frames.measurements.expectations[1].type",
        "not found",
    ),
    (
        "expectation missing a kwarg",
        "sanity.json",
        lambda d: d["frames"]["measurements"]["expectations"][1]["kwargs"].pop("column"),
        "frames.measurements.expectations[1].kwargs",
        "column",
    ),
    (
        "bad where operator",
        "sanity.json",
        lambda d: d["frames"]["measurements"]["expectations"][2].update(where={"status": {"like": "x"}}),
        "frames.measurements.expectations[2].where.status",
        "operator",
    ),
    (
        "a band still marked provisional",
        LDU,
        lambda d: d["findings"][0]["bands"]["laptop"].update(provisional=True),
        "findings[0].bands.laptop",
        "unknown keys ['provisional']",
    ),
    (
        "a band naming no run and not saying why",
        LDU,
        lambda d: d["findings"][0]["bands"]["laptop"].pop("not_derived"),
        "findings[0].bands.laptop.not_derived",
        "derived from no run",
    ),
    (
        "a band derived from a run the file does not list",
        LDU,
        lambda d: d["findings"][0]["bands"]["laptop"].update(derived_from=["manual__1999-01-01T00:00:00+00:00"]),
        "findings[0].bands.laptop.derived_from[0]",
        "not listed in recorded_runs",
    ),
    (
        "a band without derived_from",
        LDU,
        lambda d: d["findings"][0]["bands"]["laptop"].pop("derived_from"),
        "findings[0].bands.laptop.derived_from",
        "name the runs",
    ),
    (
        "an opposite that contradicts the seed's direction",
        LDU,  # the seed: the big jsonb update is 136x slower; declaring "above 1" as the opposite reverses it
        lambda d: d["findings"][0].update(opposite={"above": 1.0}),
        "findings[0].opposite.above",
        "is itself in the opposite",
    ),
    (
        "an opposite that contradicts the seed file's figures",
        "catalogue.reproduction.json",  # computed from catalogue.seed.json (heap 284 MB / 95 MB), not from seed.value
        lambda d: next(f for f in d["findings"] if f["id"] == "storage_heap_ratio").update(opposite={"above": 2.0}),
        "findings[18].opposite.above",
        "the seed file's figures",
    ),
    (
        "a timing finding without its opposite",
        LDU,
        lambda d: d["findings"][0].pop("opposite"),
        "findings[0].opposite",
        "names its opposite conclusion",
    ),
    (
        "a band reaching into the opposite",
        LDU,
        lambda d: d["findings"][0]["bands"]["laptop"].update(min=0.8),
        "findings[0].bands.laptop.min",
        "must exclude the opposite",
    ),
    (
        "a seed value outside its band without a sentence",
        LDU,
        lambda d: d["findings"][0]["bands"]["laptop"].update(max=120.0),
        "findings[0].bands.laptop.mechanism",
        "lies outside",
    ),
    (
        "a timing band fitted to one machine's range",
        LDU,
        lambda d: d["findings"][0]["bands"]["laptop"].update(min=66.9),
        "findings[0].bands.laptop",
        "not the band rule's",
    ),
    (
        "a timing finding not judged at a scale without a gate",
        LDU,
        lambda d: d["findings"][0]["bands"].update(smoke={"not_applicable": "too small"}),
        "findings[0].bands.smoke.not_applicable",
        "gated",
    ),
    (
        "a mechanism with no arithmetic",
        LDU,
        lambda d: d["findings"][0]["bands"]["laptop"].update(mechanism="no_such_arithmetic"),
        "findings[0].bands.laptop.mechanism",
        "is not under arithmetic",
    ),
    (
        "a host requirement naming an unknown fact",
        LDU,
        lambda d: d["findings"][0].update(requires=[{"fact": "host_gpus", "min": 1, "why": "w"}]),
        "findings[0].requires[0].fact",
        "must be one of",
    ),
    (
        "a host requirement without why",
        LDU,
        lambda d: d["findings"][0].update(requires=[{"fact": "host_cores", "min": 3}]),
        "findings[0].requires[0].why",
        "say why",
    ),
    (
        "a host requirement without bounds",
        LDU,
        lambda d: d["findings"][0].update(requires=[{"fact": "host_cores", "why": "w"}]),
        "findings[0].requires[0]",
        "a min or a max",
    ),
    (
        "a cross-engine term naming no engine",
        "json_vs_jsonb.reproduction.json",
        lambda d: next(f for f in d["findings"] if f["id"] == "pg18_reads_like_pg17")["numerator"][0].pop("engine"),
        "findings[25].numerator[0].engine",
        "names its engine",
    ),
    (
        "seed figure without a number",
        "large_document_update.seed.json",
        lambda d: d["figures"][0].update(value="9 ms"),
        "figures[0].value",
        "number",
    ),
    (
        "drift threshold not a number",
        "drift.json",
        lambda d: d["min_magnitude"]["units"].update(ms="3x"),
        "min_magnitude.units.ms",
        "number",
    ),
    (
        "drift patterns guessing a metric's kind",
        "drift.json",
        lambda d: d.update(deterministic=[{"unit": "rows"}]),
        "deterministic",
        "declared by the suite",
    ),
    (
        "a suite's tolerance not a number",
        "drift.json",
        lambda d: d.update(tolerances={"heap_bytes": "tight"}),
        "tolerances.heap_bytes",
        "number",
    ),
]


@pytest.mark.parametrize(("case", "name", "change", "field", "words"), CASES, ids=[c[0] for c in CASES])
def test_malformed_file_names_file_and_field(
    library: Path, case: str, name: str, change: Callable[[dict[str, Any]], None], field: str, words: str
) -> None:
    path = _edit(library, name, change)
    with pytest.raises(ExpectationFileError) as err:
        validate_library(library)
    assert err.value.path == str(path), str(err.value)
    assert err.value.field == field, str(err.value)
    assert words in str(err.value) and str(path) in str(err.value) and field in str(err.value)


def test_misnamed_file_is_not_silently_ignored(library: Path) -> None:
    shutil.copy(library / LDU, library / "large_document_update.reproducton.json")
    with pytest.raises(ExpectationFileError, match="reproducton.json: \\(file name\\)"):
        validate_library(library)


def test_a_host_requirement_of_contract_c2_is_accepted(library: Path) -> None:
    """``requires`` holds capabilities (strings) and host facts ({fact, min|max, why}) side by side."""
    need = {"fact": "host_cores", "min": 3, "why": "2 parallel workers plus the leader need 3 free cores"}
    _edit(library, LDU, lambda d: d["findings"][0].update(requires=["lz4", need, {"fact": "host_memory_bytes", "max": 2**40, "why": "w"}]))
    validate_library(library)


def test_an_entry_gx_built_once_is_not_built_again_and_a_new_one_still_is(library: Path) -> None:
    """The plan's validation imports Great Expectations only for entries it has not built before (else 5 s of
    every plan). In a fresh process, after a validation of the same files, GX is not imported at all; an entry edited
    into a malformed one is new to the memo, so GX still judges it and the plan still fails naming the field."""
    import os
    import subprocess
    import sys

    validate_library(library)  # warms the memo with every entry of these files
    probe = (
        "import sys\n"
        "from pathlib import Path\n"
        "from jsonbench.checks.validate import validate_library\n"
        f"validate_library(Path({str(library)!r}))\n"
        "print('gx imported' if 'great_expectations' in sys.modules else 'gx not imported')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "plugins")}
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.strip().splitlines()[-1] == "gx not imported"
    _edit(
        library, "sanity.json", lambda d: d["frames"]["measurements"]["expectations"][1].update(type="expect_column_values_to_be_in_sett")
    )
    with pytest.raises(ExpectationFileError) as err:
        validate_library(library)
    assert err.value.field == "frames.measurements.expectations[1].type"
