"""Every recorded night judged by drift as its night judged it, against the committed golden.

A change to drift that is not meant to change a verdict (a reorganisation, a faster path) must leave every recorded
night's rows as they were: verdict, method, p-value, threshold and score per row, and every column of the frame (notes
included) to six significant digits. A change that is meant to change verdicts regenerates the golden
(``python -m tests.recorded.drift_replay``) and says in its commit what moved. The replay is the one of
:mod:`tests.recorded.drift_replay`: each night against its earlier runs in its folder, with the committed
calibration record of its label and scale. Every night of ``recorded/`` is replayed (one to two minutes on a 2-core host).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jsonbench.checks.library import Library, load_library
from jsonbench.history import changepoints
from tests.recorded import drift_replay

NIGHTS = list(drift_replay.nights())
_FOLDERS: dict[Path, drift_replay.Folder] = {}


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    return drift_replay.load()["nights"]


@pytest.fixture(scope="module")
def lib() -> Library:
    return load_library()


def test_the_golden_holds_every_recorded_night(golden: dict[str, Any]) -> None:
    """A night added to ``recorded/`` (or one gone) is said here, not skipped: regenerate the golden with it."""
    assert sorted(golden) == sorted(n.name for n in NIGHTS)


@pytest.mark.parametrize("night", NIGHTS, ids=[n.name for n in NIGHTS])
def test_night_is_judged_as_recorded(night: drift_replay.Night, golden: dict[str, Any], lib: Library) -> None:
    if not changepoints.ready():
        pytest.skip(f"Apache Otava is not installed at {changepoints.python()} (./bin/setup installs it)")
    if night.name not in golden:
        pytest.fail(f"{night.name} is not in the golden; regenerate it (python -m tests.recorded.drift_replay)")
    folder = _FOLDERS.setdefault(night.folder, drift_replay.Folder(night.folder))
    got = drift_replay.outcome(drift_replay.judge(night, lib, folder))
    diff = drift_replay.differences(golden[night.name], got)
    if diff:
        pytest.fail(f"{night.name} judged otherwise than recorded:\n  " + "\n  ".join(diff), pytrace=False)
