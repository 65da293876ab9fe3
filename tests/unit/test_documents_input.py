"""The documents suite's input, in pure Python: every bad input refused before any engine starts,
naming the file, the line and the field; the fingerprint; key discovery; the typed twin; the shipped sample."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from jsonbench.errors import ConfigError
from jsonbench.suites.documents.input import SAMPLE, scan
from jsonbench.suites.documents.plan import DocumentsError, DocumentsPlan, KeyPath
from jsonbench.suites.documents.postgres import updated_ids, variant
from jsonbench.suites.documents.profile import REST, ROW_ID, KeyStats, twin_columns, twin_type
from jsonbench.suites.documents.read import document_texts

ROOT = Path(__file__).resolve().parents[2]
BIG = 10**15  # free disk and memory for the tests that are not about them


def _jsonl(tmp_path: Path, lines: list[str], name: str = "docs.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _scan(path: Path | str, **kw: Any) -> DocumentsPlan:
    return scan(str(path), free_disk=kw.pop("free_disk", BIG), free_memory=kw.pop("free_memory", BIG), **kw)


GOOD = [
    '{"id": 1, "status": "new", "n": 1, "when": "2025-01-02", "items": [1, 2]}',
    '{"id": 2, "status": "paid", "n": 2.5, "when": "2025-01-03", "items": []}',
    '{"id": 3, "status": "paid", "n": 3, "when": "2025-01-04", "items": [3]}',
]


# -- bad inputs: each refused with the file, the line and the field ----------------------------------------


def test_a_malformed_line_is_named(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, [GOOD[0], GOOD[1], '{"id": 3, "status": }'])
    with pytest.raises(DocumentsError) as exc:
        _scan(path)
    assert exc.value.field == "documents" and exc.value.line == 3
    assert str(path) in str(exc.value) and "line 3" in str(exc.value) and "not valid JSON" in str(exc.value)


def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    with pytest.raises(DocumentsError, match="empty"):
        _scan(path)


def test_a_file_of_blank_lines_holds_no_document(tmp_path: Path) -> None:
    with pytest.raises(DocumentsError, match="holds no document"):
        _scan(_jsonl(tmp_path, ["", "   "]))


def test_a_folder_without_json_files_is_empty(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("{}", encoding="utf-8")
    with pytest.raises(DocumentsError, match="no .json file|has none"):
        _scan(tmp_path)


def test_a_document_that_is_not_an_object_is_named(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, [GOOD[0], "[1, 2, 3]"])
    with pytest.raises(DocumentsError) as exc:
        _scan(path)
    assert exc.value.line == 2 and exc.value.where == "(top level)" and "array, not an object" in str(exc.value)


def test_a_read_key_no_document_has_is_named_with_the_closest_key(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, GOOD)
    with pytest.raises(DocumentsError) as exc:
        _scan(path, read_keys=["status", "stauts"])
    assert exc.value.field == "read_keys" and exc.value.where == "read_keys[1]"
    assert "'stauts'" in str(exc.value) and "did you mean 'status'" in str(exc.value) and str(path) in str(exc.value)


def test_an_update_key_no_document_has_is_named(tmp_path: Path) -> None:
    with pytest.raises(DocumentsError) as exc:
        _scan(_jsonl(tmp_path, GOOD), update_keys="shipping.city")
    assert exc.value.field == "update_keys" and exc.value.where == "update_keys[0]"


def test_an_update_key_that_is_never_a_scalar_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DocumentsError, match="object or array"):
        _scan(_jsonl(tmp_path, GOOD), update_keys=["items"])


def test_a_key_path_must_be_names_between_dots() -> None:
    with pytest.raises(ConfigError, match="read_keys"):
        KeyPath.parse("a..b", "read_keys")


@pytest.mark.parametrize(("limit", "what"), [("free_disk", "free disk"), ("free_memory", "available memory")])
def test_an_input_larger_than_the_free_disk_or_memory_is_refused(tmp_path: Path, limit: str, what: str) -> None:
    path = _jsonl(tmp_path, GOOD)
    with pytest.raises(DocumentsError) as exc:
        _scan(path, **{limit: 10})
    assert what in str(exc.value) and str(path) in str(exc.value)


@pytest.mark.parametrize(
    ("line", "where", "why"),
    [
        ('{"a": NaN}', "", "NaN is not JSON"),
        ('{"a": {"b": "x\\u0000y"}}', "a.b", "\\u0000"),
        ('{"a": ["\\ud800"]}', "a[0]", "surrogate"),
        ('{"a": 1, "a": 2}', "a", "appears twice"),
    ],
)
def test_what_jsonb_refuses_is_refused_here(tmp_path: Path, line: str, where: str, why: str) -> None:
    with pytest.raises(DocumentsError) as exc:
        _scan(_jsonl(tmp_path, [GOOD[0], line]))
    assert exc.value.line == 2 and exc.value.where == where and why in str(exc.value)


def test_a_line_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(GOOD[0].encode() + b"\n" + '{"city": "Malmö"}'.encode("latin-1") + b"\n")
    with pytest.raises(DocumentsError) as exc:
        _scan(path)
    assert exc.value.line == 2 and "UTF-8" in str(exc.value)


def test_a_missing_input_is_named(tmp_path: Path) -> None:
    with pytest.raises(DocumentsError, match="does not exist"):
        _scan(tmp_path / "nope.jsonl")
    with pytest.raises(ConfigError, match="documents"):
        scan("")


def test_a_bad_file_in_a_folder_is_named_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps({"id": 1, "status": "x"}, indent=2), encoding="utf-8")
    (tmp_path / "b.json").write_text('{\n  "id": 2,\n  "status": \n}\n', encoding="utf-8")
    with pytest.raises(DocumentsError) as exc:
        _scan(tmp_path)
    assert exc.value.path.endswith("b.json") and exc.value.line == 4


# -- good inputs ---------------------------------------------------------------------------------------------


def test_the_fingerprint_is_the_content_hash_count_and_bytes(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, [*GOOD, ""])
    plan = _scan(path)
    assert plan.fingerprint.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert plan.fingerprint.documents == 3 and plan.fingerprint.bytes == path.stat().st_size and plan.loaded == 3
    other = _scan(_jsonl(tmp_path, [GOOD[0], GOOD[2], GOOD[1]], "reordered.jsonl"))
    assert other.fingerprint.sha256 != plan.fingerprint.sha256  # the same documents in another order are another input


def test_keys_are_found_by_the_scan(tmp_path: Path) -> None:
    plan = _scan(_jsonl(tmp_path, GOOD))
    assert plan.read_keys == ("id", "status", "n") and plan.keys_from == "found"
    # id's values are all distinct (an identifier): the update takes the most common key that is not.
    assert [(u.path, u.value) for u in plan.update_keys] == [("status", '"paid"')]


def test_given_keys_are_kept_and_nested_paths_allowed(tmp_path: Path) -> None:
    lines = ['{"id": 1, "ship": {"city": "Graz"}}', '{"id": 2, "ship": {"city": "Lyon"}}', '{"id": 3, "ship": {"city": "Graz"}}']
    plan = _scan(_jsonl(tmp_path, lines), read_keys="ship.city,id", update_keys=["ship.city"])
    assert plan.read_keys == ("ship.city", "id") and plan.keys_from == "given"
    assert [(u.path, u.value) for u in plan.update_keys] == [("ship.city", '"Graz"')]
    assert plan.twin_column("ship.city") is None and plan.twin_column("id") is not None
    assert KeyPath.parse("ship.city", "read_keys").sqlite() == '$."ship"."city"'


def test_the_typed_twin_takes_every_top_level_key_one_type_holds(tmp_path: Path) -> None:
    lines = [
        '{"a": 1, "b": 1.5, "c": "2025-01-01", "d": "2025-01-01T10:00:00Z", "e": true, "f": "x", "g": {"h": 1}, "i": 1, "_rest": 1}',
        '{"a": 2, "b": 2,   "c": "2025-02-30", "d": "2025-01-01T10:00:00+02:00", "e": null, "f": "y", "g": [], "i": "1", "_rest": 2}',
    ]
    twin = {c.key: c.type for c in _scan(_jsonl(tmp_path, lines)).twin}
    # c: 2025-02-30 is no date, so c is text; g is a container and i mixes a number and a string: both stay in _rest.
    assert twin == {"a": "bigint", "b": "numeric", "c": "text", "d": "timestamptz", "e": "boolean", "f": "text"}


def test_twin_types_and_names() -> None:
    from collections import Counter

    assert twin_type(Counter({"bigint": 3, "numeric": 1})) == "numeric"
    assert twin_type(Counter({"date": 3, "text": 1})) == "text"
    assert twin_type(Counter({"null": 3})) is None
    assert twin_type(Counter({"bigint": 1, "boolean": 1})) is None
    long_key = "k" * 64
    stats = {k: KeyStats(first_seen=i) for i, k in enumerate(("x", ROW_ID, REST, long_key))}
    for st in stats.values():
        st.add(1)
    assert [c.key for c in twin_columns(stats)] == ["x"]


def test_the_plan_round_trips_through_scale_params(tmp_path: Path) -> None:
    plan = _scan(_jsonl(tmp_path, GOOD))
    params = json.loads(json.dumps(plan.to_params()))
    assert DocumentsPlan.from_params(params) == plan
    assert params["input_sha256"] == plan.fingerprint.sha256


def test_max_documents_loads_a_prefix_and_still_checks_the_whole_input(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, [*GOOD, "not json"])
    with pytest.raises(DocumentsError, match="line 4"):
        _scan(path, max_documents=2)
    plan = _scan(_jsonl(tmp_path, GOOD, "ok.jsonl"), max_documents=2)
    assert plan.loaded == 2 and plan.fingerprint.documents == 3
    assert list(document_texts(plan)) == [(1, GOOD[0]), (2, GOOD[1])]


def test_document_texts_refuse_an_input_changed_since_the_plan(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, GOOD)
    plan = _scan(path)
    path.write_text(path.read_text(encoding="utf-8") + GOOD[0] + "\n", encoding="utf-8")
    with pytest.raises(DocumentsError, match="changed since the run was planned"):
        list(document_texts(plan))


def test_a_folder_is_read_in_name_order_with_its_texts_kept(tmp_path: Path) -> None:
    for name, doc in (("b.json", {"id": 2}), ("a.json", {"id": 1}), ("c.txt", {"id": 3})):
        (tmp_path / name).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    plan = _scan(tmp_path)
    assert plan.fingerprint.documents == 2
    assert list(document_texts(plan)) == [(1, json.dumps({"id": 1}, indent=2)), (2, json.dumps({"id": 2}, indent=2))]


def test_updated_rows_are_fixed_and_spread() -> None:
    assert updated_ids(10, 5) == [1, 3, 5, 7, 9]
    assert updated_ids(3, 50) == [1, 2, 3]
    assert variant("jsonb", "a.b") == "jsonb:a.b"


# -- the shipped sample and the run's parameters -------------------------------------------------------------


#: The sample's bytes, the same on every machine: ./bin/setup writes it (it is not committed), drift keys its history on
#: this sha256, so a generator that changed would start every user's documents history again.
SAMPLE_SHA256 = "64e42d6e1661d0ef6b7e0758f0da877f8d23a5a419ea777e10138457e399d0ba"


def test_the_sample_is_what_the_generator_writes() -> None:
    import hashlib

    from jsonbench.suites.documents.sample import COUNT, lines

    made = "".join(line + "\n" for line in lines(COUNT)).encode("utf-8")
    assert hashlib.sha256(made).hexdigest() == SAMPLE_SHA256, "the generator no longer writes the sample's bytes"
    assert (ROOT / SAMPLE).read_bytes() == made, "examples/orders.jsonl: ./bin/setup (jsonbench sample-documents) writes it"


def test_the_sample_has_small_and_toasted_documents() -> None:
    sizes = [len(line.encode()) for line in (ROOT / SAMPLE).read_text(encoding="utf-8").splitlines()]
    assert len(sizes) == 10_000
    big = sum(1 for s in sizes if s > 2032)
    assert 100 <= big <= 1000 and sorted(sizes)[len(sizes) // 2] < 500  # some TOASTed, most small
    assert (ROOT / SAMPLE).stat().st_size < 4_000_000


def test_a_run_without_documents_measures_the_sample_and_selects_both_halves(tmp_path: Path) -> None:
    from jsonbench.orchestration.plan import resolve

    cfg = resolve({"suites": ["documents"], "scale": "smoke", "results_dir": str(tmp_path)}, env={})
    assert cfg.suites == ("documents", "documents_sqlite")
    for suite in cfg.suites:
        params = cfg.suite_inputs[suite]
        assert params["documents"] == str((ROOT / SAMPLE).resolve()) and params["documents_loaded"] == 1000
        assert params["input_documents"] == 10_000


def test_bad_documents_fail_the_plan_naming_the_field(tmp_path: Path) -> None:
    from jsonbench.orchestration.plan import resolve

    path = _jsonl(tmp_path, [GOOD[0], "[]"])
    with pytest.raises(ConfigError) as exc:
        resolve({"suites": ["documents"], "documents": str(path), "results_dir": str(tmp_path)}, env={})
    assert exc.value.field == "documents" and "line 2" in str(exc.value)


def test_documents_without_the_suite_are_refused(tmp_path: Path) -> None:
    from jsonbench.orchestration.plan import resolve

    with pytest.raises(ConfigError) as exc:
        resolve({"suites": ["catalogue"], "read_keys": ["status"], "results_dir": str(tmp_path)}, env={})
    assert exc.value.field == "read_keys" and "--suites documents" in str(exc.value)


def test_the_cells_carry_the_fingerprint(tmp_path: Path) -> None:
    from jsonbench.cell import RunRef
    from jsonbench.orchestration.plan import plan_cells, resolve

    path = _jsonl(tmp_path, GOOD)
    cfg = resolve(
        {"suites": ["documents"], "engines": ["postgres-17", "sqlite-3.46.1"], "documents": str(path), "results_dir": str(tmp_path)},
        env={},
    )
    run = RunRef(run_id="r", logical_date=None, hardware_label="t", results_dir=str(tmp_path), scale=cfg.scale)
    cells = plan_cells(cfg, run)
    assert [c.suite for c in cells] == ["documents", "documents_sqlite"]
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert all(c.scale_params["input_sha256"] == sha and c.scale_params["input_documents"] == 3 for c in cells)


def test_the_matrix_checks_input_and_part_of() -> None:
    import copy

    from jsonbench.matrix import Matrix, _check_matrix, load_matrix

    raw = copy.deepcopy(load_matrix().raw)
    raw["suites"]["documents_sqlite"]["part_of"] = "no_such_suite"
    with pytest.raises(ConfigError, match="matrix.suites.documents_sqlite.part_of"):
        _check_matrix(Matrix(raw))
    raw = copy.deepcopy(load_matrix().raw)
    raw["suites"]["documents"]["input"] = "spreadsheets"
    with pytest.raises(ConfigError, match="matrix.suites.documents.input"):
        _check_matrix(Matrix(raw))
    m = load_matrix()
    assert "documents" not in m.raw["default_suites"] and "documents_sqlite" not in m.raw["default_suites"]


# -- the nightly run: the deployment's environment fills what a run leaves empty -----------------------------


NIGHTLY = "large_document_update,catalogue,json_vs_jsonb,sqlite_jsonb,documents"


def test_the_nightly_suites_and_documents_come_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that names no suite measures $JSONBENCH_SUITES, and the documents suite reads $JSONBENCH_DOCUMENTS with
    $JSONBENCH_READ_KEYS: what the scheduled run, triggered without parameters, does with them."""
    from jsonbench.orchestration.plan import params_schema, resolve

    path = _jsonl(tmp_path, GOOD)
    env = {"JSONBENCH_SUITES": NIGHTLY, "JSONBENCH_DOCUMENTS": str(path), "JSONBENCH_READ_KEYS": "status, when"}
    cfg = resolve({"scale": "smoke", "results_dir": str(tmp_path)}, env=env)
    assert cfg.suites == (*NIGHTLY.split(","), "documents_sqlite")
    for suite in ("documents", "documents_sqlite"):
        params = cfg.suite_inputs[suite]
        assert params["documents"] == str(path.resolve()) and params["input_documents"] == 3
        assert params["read_keys"] == ["status", "when"] and params["keys_from"] == "given"
    # The trigger form's default is the same list (the DAG file reads the variable where Airflow parses it).
    monkeypatch.setenv("JSONBENCH_SUITES", NIGHTLY)
    assert params_schema()["suites"]["default"] == NIGHTLY.split(",")


def test_a_run_that_names_its_own_wins_over_the_environment(tmp_path: Path) -> None:
    from jsonbench.orchestration.plan import resolve

    mine, theirs = _jsonl(tmp_path, GOOD, "mine.jsonl"), _jsonl(tmp_path, GOOD[:2], "theirs.jsonl")
    env = {"JSONBENCH_SUITES": NIGHTLY, "JSONBENCH_DOCUMENTS": str(theirs)}
    cfg = resolve({"suites": ["documents"], "documents": str(mine), "scale": "smoke", "results_dir": str(tmp_path)}, env=env)
    assert cfg.suites == ("documents", "documents_sqlite") and cfg.suite_inputs["documents"]["input_documents"] == 3
    # A run without the documents suite ignores the documents variable (it is no error there).
    cfg = resolve({"suites": ["catalogue"], "scale": "smoke", "results_dir": str(tmp_path)}, env=env)
    assert cfg.suites == ("catalogue",) and cfg.suite_inputs == {}


@pytest.mark.parametrize(
    ("env", "field", "words"),
    [
        ({"JSONBENCH_SUITES": "catalogue,documnets"}, "JSONBENCH_SUITES", "unknown suite 'documnets'"),
        ({"JSONBENCH_SUITES": "catalogue,catalogue"}, "JSONBENCH_SUITES", "twice"),
        (
            {"JSONBENCH_SUITES": "documents", "JSONBENCH_DOCUMENTS": "/nowhere/orders.jsonl"},
            "documents (from $JSONBENCH_DOCUMENTS)",
            "does not exist",
        ),
        ({"JSONBENCH_SUITES": "documents", "JSONBENCH_READ_KEYS": "stauts"}, "read_keys (from $JSONBENCH_READ_KEYS)", "stauts"),
    ],
)
def test_a_wrong_variable_fails_the_plan_naming_it(tmp_path: Path, env: dict[str, str], field: str, words: str) -> None:
    from jsonbench.orchestration.plan import resolve

    env = {"JSONBENCH_DOCUMENTS": str(_jsonl(tmp_path, GOOD)), **env}
    with pytest.raises(ConfigError) as exc:
        resolve({"scale": "smoke", "results_dir": str(tmp_path)}, env=env)
    assert exc.value.field == field and words in str(exc.value), str(exc.value)
