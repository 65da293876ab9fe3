"""The helpers that each say one thing once: the import-path loader, the atomic text write, the templates' folding,
and the scales and backends read from the matrix file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jsonbench import load_object
from jsonbench.dataset.fsio import write_text_atomic
from jsonbench.matrix import load_matrix


def test_load_object_takes_both_spellings() -> None:
    assert load_object("jsonbench.dataset.fsio:write_text_atomic") is write_text_atomic
    assert load_object("jsonbench.dataset.fsio.write_text_atomic") is write_text_atomic  # notifiers, as Airflow spells them
    with pytest.raises(AttributeError):
        load_object("jsonbench.dataset.fsio:no_such_name")
    with pytest.raises(ImportError):
        load_object("jsonbench.no_such_module:X")


def test_write_text_atomic_replaces_whole_and_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "new" / "page.html"
    write_text_atomic(target, "first")
    write_text_atomic(target, "second é")
    assert target.read_text(encoding="utf-8") == "second é"
    assert os.listdir(target.parent) == ["page.html"]


def test_write_text_atomic_removes_its_temporary_file_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "x.txt"
    target.mkdir()  # a folder where the file should go: the rename fails
    with pytest.raises(OSError):
        write_text_atomic(target, "text")
    assert sorted(os.listdir(tmp_path)) == ["x.txt"]


def test_templates_fold_markup_tight_and_text_with_one_space() -> None:
    from jsonbench.report.templating import _fold

    assert _fold("<p>\n  <b>x</b>\n</p>\n") == "<p><b>x</b></p>"
    assert _fold("<p>one line\n   runs on</p>") == "<p>one line runs on</p>"
    assert _fold("{% if a %}\n  text\n{% endif %}\n{{ b }}\nmore") == "{% if a %}text{% endif %}{{ b }} more"


def test_scales_and_backends_come_from_the_matrix_file() -> None:
    from jsonbench.checks.findings import SCALES
    from jsonbench.orchestration.plan import params_schema
    from jsonbench.report.model import scale_key

    m = load_matrix()
    assert SCALES == tuple(m.scales)
    assert m.backends == tuple(dict.fromkeys(b for fam in m.raw["families"].values() for b in fam["backends"]))
    schema = params_schema(m)
    assert schema["backend"]["enum"] == list(m.backends) and schema["scale"]["enum"] == list(m.scales)
    assert all(name in schema["scale"]["description"] for name in m.scales)
    assert sorted(["full", "smoke", "laptop"], key=scale_key) == [s for s in m.scales if s in ("full", "smoke", "laptop")]
