"""Every file a night reads that an instrument writes says, in its first lines, which command regenerates it.

The calibration records (``include/calibration/local/*.json``: ``calibrate --record``, ``campaign``) and the
reproduction files (``include/expectations/*.reproduction.json``: ``bands --write``, with the facts ``calibrate``,
``derive-facts`` and ``fit-documents`` give) open with ``"_generated_by"``, written by the writer itself; every
command it names is one of ``./bin/jsonbench-dev``'s, and the readers take the files with the key as before.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from jsonbench import paths
from jsonbench_dev.cli import COMMANDS

GENERATED = [
    *sorted((paths.INCLUDE_DIR / "calibration" / "local").glob("*.json")),
    *sorted((paths.INCLUDE_DIR / "expectations").glob("*.reproduction.json")),
]
COMMAND = re.compile(r"bin/jsonbench-dev ([a-z][a-z-]*)")


def test_each_generated_file_names_its_command_first() -> None:
    assert len(GENERATED) >= 6, GENERATED
    names = {c.name for c in COMMANDS}
    for path in GENERATED:
        head = path.read_text(encoding="utf-8").splitlines()[:3]
        line = next((h for h in head if '"_generated_by"' in h), None)
        assert line is not None, f"{path}: its first lines name no command"
        said = COMMAND.findall(line)
        assert said and set(said) <= names, (path, said)
        assert next(iter(json.loads(path.read_text(encoding="utf-8")))) == "_generated_by", path


def test_the_writers_write_the_key_first(tmp_path: Path) -> None:
    from jsonbench.history.noise import load_record
    from jsonbench_dev import bands, record

    rec = {k: v for k, v in json.loads((paths.INCLUDE_DIR / "calibration" / "local" / "smoke.json").read_text()).items()}
    rec.pop("_generated_by")
    written = record.write_record({**rec, "hardware_label": "elsewhere"}, tmp_path)
    assert written.read_text(encoding="utf-8").splitlines()[1].startswith(' "_generated_by": "bin/jsonbench-dev calibrate --record')
    assert load_record("elsewhere", "smoke", tmp_path)["series"] == rec["series"], "a reader reads the file as before"

    root = tmp_path / "expectations"
    shutil.copytree(paths.expectations_dir(), root)
    one = root / "large_document_update.reproduction.json"
    data = json.loads(one.read_text(encoding="utf-8"))
    data.pop("_generated_by")
    one.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    bands.write_rule(root)
    assert one.read_text(encoding="utf-8").splitlines()[1].startswith('  "_generated_by": "bin/jsonbench-dev bands --write')
