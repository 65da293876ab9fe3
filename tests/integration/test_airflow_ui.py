"""What Airflow's UI shows a person, in a real browser: the trigger form, the task groups, and the report.

A real ``airflow api-server`` on a free loopback port, over the test session's metadata database, with the project's
DAGs serialized (``airflow dags reserialize``) and its plugin loaded from ``plugins/`` as a deployment loads it. A real
Chromium (``tests/browser.py``) signed in the way the UI signs a person in: the session cookie holding the JWT that
``POST /auth/token`` gives for the admin's generated password. Checked, on the screen a person sees:

* the trigger form of ``jsonb_benchmark_matrix`` shows every field of the DAG's parameters, by its title;
* the DAG's page shows its task groups (one per cell) and its plain tasks;
* **Benchmark report** frames the latest report inside the UI, its scorecard drawn there; the plugin loaded with no
  import error (which files Airflow loads as plugins at all: ``tests/unit/test_report_serve.py``).

And what a person must not get: the results folder without signing in, a file outside it, or a hidden file.
Screenshots are kept (``JSONBENCH_SCREENSHOT_DIR``, default the test's temporary folder). Nothing asserts a time.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import CHROMIUM, Page
from tests.unit.report_synth import build_once

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bin"))
import airflow_api  # noqa: E402 - bin/ is not a package

if CHROMIUM is None:  # under CI this skip fails the run (tests/conftest.py)
    pytestmark = pytest.mark.skip(reason="chromium not installed (./bin/setup installs it as root)")

DAG = "jsonb_benchmark_matrix"


def free_port() -> int:
    """A TCP port free on loopback right now (the OS picks it)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def ui(airflow_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A running API server with the DAGs serialized and a results folder holding a built report."""
    from jsonbench.report import build_report

    home = tmp_path_factory.mktemp("ui")
    results = build_once(home / "results", runs=4, docs_for_last=True)
    build_report(results)
    (results / ".hidden").write_text("never served")
    port = free_port()
    env = {
        **airflow_env,
        "JSONBENCH_RESULTS_DIR": str(results),
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(port),
        "AIRFLOW__API__WORKERS": "1",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(home / "passwords.json"),
    }
    airflow = str(Path(sys.executable).parent / "airflow")
    res = subprocess.run([airflow, "dags", "reserialize"], env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    log = (home / "api-server.log").open("w")
    proc = subprocess.Popen([airflow, "api-server"], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        airflow_api.wait_for_api(url, 300)
        password = json.loads((home / "passwords.json").read_text())["admin"]
        yield {"url": url, "api": airflow_api.AirflowApi(url, "admin", password), "results": results, "log": home / "api-server.log"}
    finally:
        os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
        log.close()


@pytest.fixture
def page(ui: dict[str, Any], tmp_path: Path) -> Iterator[Page]:
    """A signed-in browser tab: the UI's session cookie set to the admin's token."""
    p = Page(tmp_path / "profile")
    try:
        p.call("Network.setCookie", name="_token", value=ui["api"].token(), url=ui["url"], path="/")
        yield p
    finally:
        p.close()


def _shot(page: Page, tmp_path: Path, name: str) -> None:
    out = Path(os.environ.get("JSONBENCH_SCREENSHOT_DIR") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    page.screenshot(out / f"airflow-ui-{name}.png")


def _get(url: str, token: str | None = None) -> tuple[int, str]:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def test_the_trigger_form_shows_every_parameter(ui: dict[str, Any], page: Page, tmp_path: Path) -> None:
    from jsonbench.orchestration.plan import params_schema

    titles = [str(spec["title"]) for spec in params_schema().values()]
    page.goto(f"{ui['url']}/dags/{DAG}")
    page.wait_for(f"document.body.innerText.includes('{DAG}')", what="the DAG's page")
    clicked = page.wait_for(
        "(() => { const b = [...document.querySelectorAll('button')].find(b => b.innerText.trim() === 'Trigger'"
        " || (b.getAttribute('aria-label') || '').startsWith('Trigger')); if (b) { b.click(); return true; } return false; })()",
        what="the Trigger button",
    )
    assert clicked
    dialog = page.wait_for(
        "(() => { const d = [...document.querySelectorAll('[role=dialog]')].find(d => d.innerText.includes('Scale profile'));"
        " return d ? d.innerText : ''; })()",
        what="the trigger form with its fields",
    )
    _shot(page, tmp_path, "trigger-form")
    missing = [t for t in titles if t not in dialog]
    assert not missing, f"fields missing from the trigger form: {missing}\n{dialog[:3000]}"


def test_the_dag_page_shows_its_task_groups(ui: dict[str, Any], page: Page, tmp_path: Path, airflow_env: dict[str, str]) -> None:
    from jsonbench.cell import cell_label_of
    from jsonbench.matrix import load_matrix
    from jsonbench.orchestration.deployment import dag_engines
    from jsonbench.orchestration.plan import cell_slots

    # Each group by the name it shows (engine first: the grid cuts long names), not by its id.
    groups = [cell_label_of(suite, engine) for suite, engine in cell_slots(None, dag_engines(load_matrix(), airflow_env))]
    assert groups, "the DAG has no cell group on this host"
    page.goto(f"{ui['url']}/dags/{DAG}")
    text = page.wait_for(
        f"document.body.innerText.includes({json.dumps(groups[0])}) ? document.body.innerText : ''", what="the DAG's task groups"
    )
    _shot(page, tmp_path, "tasks")
    missing = [g for g in [*groups, "plan", "select", "publish", "check"] if g not in text]
    assert not missing, f"not shown on the DAG's page: {missing}\n{text[:3000]}"


def test_the_report_opens_inside_the_ui(ui: dict[str, Any], page: Page, tmp_path: Path) -> None:
    api = ui["api"]
    plugins = api._request("GET", "/api/v2/plugins")
    ours = [p for p in plugins["plugins"] if p["name"] == "jsonbench"]
    assert ours and [v["name"] for v in ours[0]["external_views"]] == ["Benchmark report"], plugins
    # No plugin file failed to import (which files Airflow loads as plugins: tests/unit/test_report_serve.py).
    errors = api._request("GET", "/api/v2/plugins/importErrors")
    assert errors["total_entries"] == 0, errors

    page.goto(f"{ui['url']}/plugin/benchmark-report")
    src = page.wait_for("(() => { const f = document.querySelector('iframe'); return f ? f.src : ''; })()", what="the report's frame")
    assert src == f"{ui['url']}/jsonbench/results/report/index.html", src
    page.wait_for(
        "(() => { const f = document.querySelector('iframe'); const d = f && f.contentDocument;"
        " return !!(d && d.getElementById('scorecard')); })()",
        what="the report's scorecard inside the UI",
    )
    _shot(page, tmp_path, "report")
    title = page.eval("document.querySelector('iframe').contentDocument.title")
    assert title == (ui["results"] / "report" / "index.html").read_text().split("<title>", 1)[1].split("</title>", 1)[0]


def test_the_results_are_served_to_signed_in_users_only(ui: dict[str, Any]) -> None:
    base, token = ui["url"] + "/jsonbench/results", ui["api"].token()
    assert _get(f"{base}/report/index.html")[0] in (401, 403)
    status, body = _get(f"{base}/report/index.html", token)
    assert status == 200 and re.search(r"id=[\"']scorecard", body)
    assert _get(f"{base}/report/", token)[0] == 200  # a folder is its index.html
    assert _get(f"{base}/.hidden", token)[0] == 404
    assert _get(f"{base}/%2e%2e/%2e%2e/etc/passwd", token)[0] == 404
    assert _get(f"{base}/no-such-file", token)[0] == 404
