"""docs/configuration.md names every knob the code reads, and nothing the code no longer reads.

The environment variables are found the way a maintainer would grep for them: every ``JSONBENCH_*`` token in the
code, scripts and deployment files (``plugins``, ``dags``, ``bin``, ``docker``, ``docker-compose.yaml``, ``dev``).
The run parameters come from the schemas the DAGs are built from (:func:`jsonbench.orchestration.plan.params_schema`
and :func:`jsonbench.compare.params.schema`), so a parameter added to a DAG fails here until the page lists it.
"""

from __future__ import annotations

import re
from pathlib import Path

from jsonbench.compare.params import schema as compare_schema
from jsonbench.orchestration.plan import params_schema

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "configuration.md"
SOURCES = ("plugins", "dags", "bin", "docker", "docker-compose.yaml", "dev")
NAME = re.compile(r"\bJSONBENCH_[A-Z0-9_]*[A-Z0-9]\b")


def names_in_code(root: Path = ROOT) -> set[str]:
    """Every ``JSONBENCH_*`` name in the sources (text files; caches and bytecode left out)."""
    found: set[str] = set()
    for top in SOURCES:
        base = root / top
        for path in [base] if base.is_file() else sorted(base.rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts or path.suffix in {".pyc", ".png"}:
                continue
            try:
                found |= set(NAME.findall(path.read_text(encoding="utf-8")))
            except UnicodeDecodeError:
                continue
    return found


def documented_variables(text: str) -> set[str]:
    return set(NAME.findall(text))


def documented_parameters(text: str, heading: str) -> set[str]:
    """The first column of the parameter table under ``### `heading```."""
    section = text.split(f"### `{heading}`", 1)[1].split("\n#", 1)[0]
    return {m for m in re.findall(r"^\| `([a-z_]+)` \|", section, re.M)}


def test_every_variable_the_code_reads_is_documented_and_no_other() -> None:
    code, doc = names_in_code(), documented_variables(DOC.read_text(encoding="utf-8"))
    assert len(code) >= 40, sorted(code)
    assert not code - doc, f"read by the code, missing from docs/configuration.md: {sorted(code - doc)}"
    assert not doc - code, f"in docs/configuration.md, read nowhere in the code: {sorted(doc - code)}"


def test_every_parameter_of_the_benchmark_dag_is_documented() -> None:
    doc = documented_parameters(DOC.read_text(encoding="utf-8"), "jsonb_benchmark_matrix")
    assert doc == set(params_schema()), {"missing": sorted(set(params_schema()) - doc), "extra": sorted(doc - set(params_schema()))}


def test_every_parameter_of_the_comparison_dag_is_documented() -> None:
    doc = documented_parameters(DOC.read_text(encoding="utf-8"), "jsonb_benchmark_compare")
    assert doc == set(compare_schema()), {"missing": sorted(set(compare_schema()) - doc), "extra": sorted(doc - set(compare_schema()))}


def test_the_scan_finds_a_name_and_the_tables_parse(tmp_path: Path) -> None:
    """The helpers see what they claim to: a name in a nested file, and a table's first column under its heading only."""
    (tmp_path / "dev" / "x").mkdir(parents=True)
    (tmp_path / "dev" / "x" / "a.py").write_text('os.environ.get("JSONBENCH_NEW_KNOB")\n', encoding="utf-8")
    assert names_in_code(tmp_path) == {"JSONBENCH_NEW_KNOB"}
    text = "### `d1`\n\n| parameter | x |\n|---|---|\n| `alpha` | 1 |\n\n### `d2`\n\n| `beta` | 2 |\n"
    assert documented_parameters(text, "d1") == {"alpha"} and documented_parameters(text, "d2") == {"beta"}
