"""`jsonbench-dev bands`: the band rule applied to every reproduction file, and written into them (jsonbench_dev.bands)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from jsonbench.checks.bandrule import governed
from jsonbench.checks.library import load_library
from jsonbench.checks.validate import validate_library
from jsonbench.checks.validate_entries import ExpectationFileError
from jsonbench_dev.bands import apply_rule, write_rule


def test_every_governed_band_is_the_rules() -> None:
    """`jsonbench-dev bands` finds nothing to change: no timing band of a host-dependent finding was written by hand."""
    assert [(s, f, sc, why) for s, f, sc, _, why in apply_rule(load_library().root) if why] == []


def test_the_validator_refuses_a_band_fitted_by_hand(tmp_path: Path) -> None:
    """A timing band narrowed to one machine's range, or a gate written as not_applicable, fails the plan step."""
    root = tmp_path / "expectations"
    shutil.copytree(load_library().root, root)
    path = root / "sqlite_jsonb.reproduction.json"
    data = json.loads(path.read_text())
    f = next(f for f in data["findings"] if governed(f))
    f["bands"]["laptop"]["min"] = 2.32  # the old band, fitted to one machine
    path.write_text(json.dumps(data))
    with pytest.raises(ExpectationFileError, match="band rule"):
        validate_library(root)
    assert write_rule(root) == 1
    validate_library(root)  # written back by the rule, accepted
