"""A malformed matrix file fails when it is loaded, naming the file and the YAML path of the bad field.

Each case breaks one thing in a copy of the project's own ``include/matrix.yaml``, as text, the way a
person editing it would.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from jsonbench import paths
from jsonbench.errors import ConfigError
from jsonbench.matrix import MatrixFileError, load_matrix


def _broken(tmp_path: Path, edit: Callable[[str], str]) -> Path:
    text = paths.matrix_file().read_text()
    changed = edit(text)
    assert changed != text, "the edit must change the file"
    path = tmp_path / "matrix.yaml"
    path.write_text(changed)
    return path


def _sub(old: str, new: str, count: int = 1) -> Callable[[str], str]:
    return lambda text: text.replace(old, new, count)


CASES: list[tuple[str, Callable[[str], str], str, str]] = [
    ("yaml syntax", _sub("scales:\n", "scales:\n  smoke: [unclosed\n"), "line ", "not valid YAML"),
    ("repetitions not a number", _sub("    repetitions: 2\n", "    repetitions: two\n"), "matrix.scales.smoke.repetitions", "integer >= 1"),
    ("starts beyond the most", _sub("    starts: 2\n", "    starts: 4\n"), "matrix.scales.laptop.starts", "integer from 1 to 3"),
    (
        "scale parameter a list",
        _sub("large_document_update: {rows: 500}", "large_document_update: {rows: [500]}"),
        "matrix.scales.smoke.large_document_update.rows",
        "number, string or boolean",
    ),
    (
        "suite missing at a scale",
        _sub("    large_document_update: {rows: 500}\n", ""),
        "matrix.scales.smoke.large_document_update",
        "no parameters",
    ),
    (
        "unknown default engine",
        _sub("default_engines: [postgres-16,", "default_engines: [postgres-61,"),
        "matrix.default_engines[0]",
        "not declared",
    ),
    ("unknown default scale", _sub("default_scale: laptop", "default_scale: lap-top"), "matrix.default_scale", "not one of the scales"),
    (
        "misspelt top-level key",
        _sub("\nserver_settings:\n", "\nserver_setting:\n"),
        "matrix.server_setting",
        "did you mean 'server_settings'",
    ),
    ("quiet share above 1", _sub("  max_other_cpu: 0.10", "  max_other_cpu: 10"), "matrix.quiet_window.max_other_cpu", "between 0 and 1"),
    ("unknown quiet key", _sub("  max_steal: 0.05", "  max_stael: 0.05"), "matrix.quiet_window.max_stael", "unknown key"),
    ("memory cap above 1", _sub("  shared_buffers: 0.125", "  shared_buffers: 12.5"), "matrix.memory_caps.shared_buffers", "(0, 1]"),
    (
        "settings of an unknown suite",
        _sub("  large_document_update: {}\n", "  large_document_updates: {}\n"),
        "matrix.suite_settings.large_document_updates",
        "not a suite",
    ),
    (
        "checksums not a boolean",
        _sub("  data_checksums: true", "  data_checksums: yes please"),
        "matrix.initdb.data_checksums",
        "true or false",
    ),
    (
        "adapter not an import path",
        _sub("apsw: jsonbench.engines.sqlite_apsw:SqliteApsw", "apsw: SqliteApsw"),
        "matrix.families.sqlite.backends.apsw",
        "module:Class",
    ),
]


@pytest.mark.parametrize(("case", "edit", "field", "words"), CASES, ids=[c[0] for c in CASES])
def test_malformed_matrix_names_file_and_yaml_path(tmp_path: Path, case: str, edit: Callable[[str], str], field: str, words: str) -> None:
    path = _broken(tmp_path, edit)
    with pytest.raises(MatrixFileError) as err:
        load_matrix(path)
    assert err.value.path == str(path)
    assert err.value.field.startswith(field) and field in str(err.value), str(err.value)
    assert words in str(err.value) and str(path) in str(err.value)
    assert isinstance(err.value, ConfigError)  # what the plan step and the CLI report as a bad input


def test_the_projects_matrix_is_valid() -> None:
    assert load_matrix().scales["smoke"]["repetitions"] >= 1
