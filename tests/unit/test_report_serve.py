"""Which files the results app serves (`jsonbench.report.serve.resolve_inside`): the folder's files, never a file outside it.

A stand-in for speed beside the real test (tests/integration/test_airflow_ui.py, through Airflow's API server and a
browser): here the rule alone, on a real folder with a symbolic link that leaves it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from jsonbench.report.serve import REPORT_HREF, URL_PREFIX, resolve_inside


def test_the_folder_s_files_and_nothing_else(tmp_path: Path) -> None:
    root = tmp_path / "results"
    (root / "report" / ".vendor").mkdir(parents=True)
    (root / "report" / "index.html").write_text("<html>")
    (root / "report" / ".vendor" / "vega.js").write_text("js")
    (root / ".lease").write_text("x")
    (tmp_path / "secret.txt").write_text("outside")
    (root / "escape").symlink_to(tmp_path / "secret.txt")
    (root / "gx").mkdir()

    assert resolve_inside(root, "report/index.html") == (root / "report" / "index.html").resolve()
    assert resolve_inside(root, "report") == (root / "report" / "index.html").resolve()  # a folder is its index.html
    assert resolve_inside(root, "report/") == (root / "report" / "index.html").resolve()
    for refused in (
        "../secret.txt",
        "report/../../secret.txt",
        "/etc/passwd",
        "escape",
        ".lease",
        "report/.vendor/vega.js",
        "gx",
        "nope",
        "",
    ):
        assert resolve_inside(root, refused) is None, refused


def test_loading_the_plugin_stays_light() -> None:
    """Every process that loads plugins imports the plugin file (each task's runner among them): no pandas, no FastAPI (Jinja2 is Airflow's own)."""
    root = Path(__file__).resolve().parents[2]
    probe = (
        "import sys; sys.path[:0] = [sys.argv[1]]; import jsonbench_ui; "
        "p = jsonbench_ui.JsonbenchUiPlugin(); assert p.external_views[0]['name'] == 'Benchmark report'; "
        "print(sorted(m for m in ('pandas', 'fastapi', 'pyarrow', 'altair', 'great_expectations') if m in sys.modules))"
    )
    res = subprocess.run([sys.executable, "-c", probe, str(root / "plugins")], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.strip() == "[]", res.stdout


def test_airflow_loads_one_plugin_file_and_nothing_of_the_package(tmp_path: Path) -> None:
    """Airflow imports each .py file under the plugins folder as a module named after it, in every process that loads
    plugins; plugins/.airflowignore leaves it the plugin file alone (not drift.py as ``drift``, tasks.py as ``tasks``)."""
    import os

    root = Path(__file__).resolve().parents[2]
    probe = (
        "import json, sys; from airflow import plugins_manager; plugins, errors = plugins_manager._get_plugins(); "
        "print(json.dumps({'plugins': [p.name for p in plugins], 'errors': errors, "
        "'stray': sorted(m for m in ('drift', 'tasks', 'plan', 'page', 'cli', 'serve') if m in sys.modules)}))"
    )
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(tmp_path),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(root / "plugins"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "PYTHONPATH": str(root / "plugins"),
    }
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got == {"plugins": ["jsonbench"], "errors": {}, "stray": []}, got


def test_the_report_link_is_relative_and_under_the_app() -> None:
    # The UI frames a view by a link relative to its root (an absolute one breaks behind a proxy's path).
    assert not REPORT_HREF.startswith("/") and REPORT_HREF.startswith(URL_PREFIX.lstrip("/") + "/results/")
