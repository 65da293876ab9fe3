"""The rooms of ``plugins/jsonbench`` hold by their imports: read from the source, every import counted.

Three properties a move or a new import could break without any other test noticing:

* the product never imports the maintainers' instruments (``jsonbench_dev``, outside ``plugins/``): no module of
  ``plugins/`` and no DAG file names it, nor does a product test (``tests/`` outside ``tests/dev/``); and the
  command line is reached by nothing a nightly run imports: the roots are what the DAG files import (at parse time and
  inside their task callables) and the classes the matrix file names (engine adapters, suites), which are loaded by
  import path and so never appear as an import;
* no import cycle between modules;
* no upward import: a module imports only from its own room or from rooms below it (the order below).

Imports inside functions count as much as those at the top: they run when the task runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PLUGINS = ROOT / "plugins"

# Rooms from the bottom up; a module may import from its own room and from any room listed before it.
LAYERS: list[tuple[str, ...]] = [
    # dataset.fsio (durable writes, the standard library only) serves every room, the host's lease included
    ("jsonbench", "jsonbench.paths", "jsonbench.errors", "jsonbench.dataset.fsio"),
    ("jsonbench.cell", "jsonbench.sqlfiles", "jsonbench.matrix"),
    ("jsonbench.host",),
    ("jsonbench.engines",),
    ("jsonbench.pgbench",),
    ("jsonbench.dataset",),
    ("jsonbench.suites",),
    # which builds a compared build inherits its noise from (pure): below the drift that reads it
    ("jsonbench.compare.inherit",),
    # how a night is judged against its history (drift, noise, the canary, change points): below the checks that call it
    ("jsonbench.history",),
    ("jsonbench.checks",),
    ("jsonbench.report",),
    ("jsonbench.orchestration",),
    # an A/B comparison of two arms: the nightly driver measures each start
    ("jsonbench.compare",),
    ("jsonbench.setup",),
    ("jsonbench.cli",),
]
DEV = "jsonbench_dev"


def _modules() -> dict[str, Path]:
    out = {}
    for f in sorted((PLUGINS / "jsonbench").rglob("*.py")):
        name = ".".join(f.relative_to(PLUGINS).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = f
    return out


MODULES = _modules()


def _imports(path: Path, name: str) -> set[str]:
    """The jsonbench modules ``path`` imports anywhere in it (``from pkg import mod`` counts as ``pkg.mod`` only)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: len(name.split(".")) - node.level + (path.name == "__init__.py")]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            subs = {f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in MODULES}
            found |= subs
            if len(subs) < len(node.names):  # a name that is not a submodule: the module itself is imported for it
                found.add(module)
    out = set()
    for m in found:
        while m not in MODULES and "." in m:
            m = m.rsplit(".", 1)[0]
        if m in MODULES and m != name:
            out.add(m)
    return out


GRAPH = {m: _imports(p, m) for m, p in MODULES.items()}


def _nightly_roots() -> set[str]:
    roots: set[str] = set()
    for dag in (ROOT / "dags").glob("*.py"):
        roots |= _imports(dag, f"dags.{dag.stem}")
    matrix = yaml.safe_load((ROOT / "include" / "matrix.yaml").read_text(encoding="utf-8"))
    named = [a for fam in matrix["families"].values() for a in fam["backends"].values()]
    named += [s["module"] for s in matrix["suites"].values()]
    roots |= {ref.split(":")[0] for ref in named}
    return roots


def _closure(starts: set[str]) -> dict[str, str]:
    """Every module reached from ``starts``, each with the module that first reached it (for the message)."""
    via: dict[str, str] = {}
    todo = [(m, "(root)") for m in sorted(starts)]
    while todo:
        m, parent = todo.pop()
        if m in via:
            continue
        via[m] = parent
        parts = m.split(".")
        todo += [(".".join(parts[:i]), m) for i in range(1, len(parts)) if ".".join(parts[:i]) in MODULES]
        todo += [(n, m) for n in sorted(GRAPH[m])]
    return via


def _layer(module: str) -> int:
    best, rank = -1, -1
    for i, room in enumerate(LAYERS):
        for prefix in room:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    return rank


def test_every_module_has_a_room() -> None:
    assert [m for m in MODULES if _layer(m) < 0] == []


def test_the_roots_are_found() -> None:
    """The test would pass on nothing if it found no roots: the DAGs reach tasks, checks, report and the adapters."""
    reached = _closure(_nightly_roots())
    for needed in (
        "jsonbench.orchestration.tasks",
        "jsonbench.checks.examine",
        "jsonbench.report.page",
        "jsonbench.engines.postgres_embedded",
        "jsonbench.suites.catalogue",
    ):
        assert needed in reached


def _names_dev(path: Path) -> bool:
    """Whether ``path`` imports ``jsonbench_dev`` anywhere in it (inside a function too)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
        if any(n == DEV or n.startswith(DEV + ".") for n in names):
            return True
    return False


def test_the_product_never_imports_the_instruments() -> None:
    product = [*sorted(PLUGINS.rglob("*.py")), *sorted((ROOT / "dags").rglob("*.py"))]
    tests = [f for f in sorted((ROOT / "tests").rglob("*.py")) if "dev" not in f.relative_to(ROOT / "tests").parts[:1]]
    assert len(product) > 50 and len(tests) > 50
    bad = [str(f.relative_to(ROOT)) for f in product + tests if _names_dev(f)]
    assert bad == [], "the product (plugins/, dags/) and its tests import nothing of dev/jsonbench_dev"


def test_the_detector_sees_an_import_of_the_instruments(tmp_path: Path) -> None:
    """The test above would pass on nothing if its reader missed an import inside a function."""
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from jsonbench_dev.record import build_record\n", encoding="utf-8")
    assert _names_dev(f)
    f.write_text("import jsonbench.cli\n", encoding="utf-8")
    assert not _names_dev(f)


def test_nothing_nightly_reaches_the_command_line() -> None:
    reached = _closure(_nightly_roots())
    bad = {m: via for m, via in reached.items() if m == "jsonbench.cli" or m.startswith("jsonbench.cli.")}
    assert bad == {}, f"a nightly module imports the command line (module: imported by): {bad}"


def test_no_upward_import() -> None:
    up = sorted(f"{m} -> {n}" for m, deps in GRAPH.items() for n in deps if _layer(n) > _layer(m))
    assert up == []


def test_no_import_cycle() -> None:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(m: str) -> None:  # Tarjan's strongly connected components
        index[m] = low[m] = len(index)
        stack.append(m)
        for n in GRAPH[m]:
            if n not in index:
                visit(n)
                low[m] = min(low[m], low[n])
            elif n in stack:
                low[m] = min(low[m], index[n])
        if low[m] == index[m]:
            comp = []
            while True:
                n = stack.pop()
                comp.append(n)
                if n == m:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for m in sorted(GRAPH):
        if m not in index:
            visit(m)
    assert cycles == []
