"""bin/airflow_api.py against a stand-in API server: the requests a user's script sends, in order.

The real API server answers the same calls in tests/docker/test_compose_stack.py (./bin/stack selftest) (and the smoke flag of bin/airflow-standalone);
this checks the request shapes quickly: the JWT from /auth/token on every /api/v2 call, the run created in
the DAG's next scheduled slot, errors reported with the server's message.
"""

from __future__ import annotations

import json
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bin"))
import airflow_api  # noqa: E402 - bin/ is not a package

NEXT_SLOT = "2026-11-30T02:00:00Z"
#: A matrix run's task instances: more than the API's page (139 ran and 126 were skipped in a smoke run).
TASK_INSTANCES = 265


class FakeAirflow(BaseHTTPRequestHandler):
    calls: list[tuple[str, str, Any, str | None]] = []
    #: The states a run reports, one per GET, the last one repeated: set by each test (the client must poll until finished).
    states: dict[str, list[str]] = {}

    def log_message(self, *args: Any) -> None:
        pass

    def _answer(self, status: int, body: Any) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _handle(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        type(self).calls.append((method, self.path, body, self.headers.get("Authorization")))
        if self.path == "/auth/token":
            if body == {"username": "admin", "password": "pw"}:
                return self._answer(201, {"access_token": "jwt-1"})
            return self._answer(401, {"detail": "Invalid credentials"})
        if self.headers.get("Authorization") != "Bearer jwt-1":
            return self._answer(401, {"detail": "Not authenticated"})
        if method == "GET" and self.path == "/api/v2/dags/jsonb_benchmark_matrix":
            return self._answer(200, {"dag_id": "jsonb_benchmark_matrix", "is_paused": True, "next_dagrun_logical_date": NEXT_SLOT})
        if method == "GET" and self.path == "/api/v2/dags/missing":
            return self._answer(404, {"detail": "DAG not found"})
        if method == "PATCH" and self.path == "/api/v2/dags/jsonb_benchmark_matrix":
            return self._answer(200, {"dag_id": "jsonb_benchmark_matrix", "is_paused": body["is_paused"]})
        if method == "POST" and self.path == "/api/v2/dags/jsonb_benchmark_matrix/dagRuns":
            return self._answer(
                200,
                {
                    "dag_run_id": f"manual__{body['logical_date']}",
                    "logical_date": body["logical_date"],
                    "state": "queued",
                    "conf": body["conf"],
                },
            )
        if method == "GET" and "/taskInstances" in self.path:
            # The real API answers at most [api] maximum_page_limit (100) a call, whatever limit asks for.
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            limit, offset = min(int(query.get("limit", ["100"])[0]), 100), int(query.get("offset", ["0"])[0])
            tis = [{"task_id": f"cell.t{i}", "state": "success"} for i in range(TASK_INSTANCES)]
            return self._answer(200, {"task_instances": tis[offset : offset + limit], "total_entries": len(tis)})
        if method == "GET" and self.path.startswith("/api/v2/dags/jsonb_benchmark_matrix/dagRuns/"):
            run_id = urllib.parse.unquote(self.path.rsplit("/", 1)[1])
            left = type(self).states.get(run_id)
            if not left:
                return self._answer(404, {"detail": f"DagRun {run_id} not found"})
            state = left.pop(0) if len(left) > 1 else left[0]
            return self._answer(200, {"dag_run_id": run_id, "state": state})
        return self._answer(404, {"detail": f"no route {method} {self.path}"})

    def do_GET(self) -> None:  # http.server's naming
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PATCH(self) -> None:
        self._handle("PATCH")


@pytest.fixture
def server() -> Iterator[str]:
    FakeAirflow.calls = []
    FakeAirflow.states = {}
    httpd = HTTPServer(("127.0.0.1", 0), FakeAirflow)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _gets_of(run_id: str) -> int:
    return sum(1 for m, path, _, _ in FakeAirflow.calls if m == "GET" and urllib.parse.unquote(path).endswith(f"/dagRuns/{run_id}"))


def test_trigger_into_the_next_slot_then_unpause(server: str) -> None:
    api = airflow_api.AirflowApi(server, "admin", "pw")
    run = api.trigger("jsonb_benchmark_matrix", {"scale": "smoke"}, logical_date="next")
    assert run["dag_run_id"] == f"manual__{NEXT_SLOT}"
    assert api.set_paused("jsonb_benchmark_matrix", False)["is_paused"] is False
    FakeAirflow.states[run["dag_run_id"]] = ["queued", "running", "running", "success"]
    assert api.wait("jsonb_benchmark_matrix", run["dag_run_id"], timeout=5, poll=0.01)["state"] == "success"
    assert _gets_of(run["dag_run_id"]) == 4  # asked until the run had finished, not once
    calls = [(m, p, b) for m, p, b, _ in FakeAirflow.calls]
    assert calls[:4] == [
        ("POST", "/auth/token", {"username": "admin", "password": "pw"}),  # once, then reused
        ("GET", "/api/v2/dags/jsonb_benchmark_matrix", None),
        ("POST", "/api/v2/dags/jsonb_benchmark_matrix/dagRuns", {"logical_date": NEXT_SLOT, "conf": {"scale": "smoke"}}),
        ("PATCH", "/api/v2/dags/jsonb_benchmark_matrix", {"is_paused": False}),
    ]
    assert all(auth == "Bearer jwt-1" for _, path, _, auth in FakeAirflow.calls if path.startswith("/api/v2"))


def test_wait_returns_a_failed_run_and_times_out_on_a_running_one(server: str) -> None:
    api = airflow_api.AirflowApi(server, "admin", "pw")
    FakeAirflow.states = {"broken": ["running", "failed"], "endless": ["running"]}
    assert api.wait("jsonb_benchmark_matrix", "broken", timeout=5, poll=0.01)["state"] == "failed"
    with pytest.raises(TimeoutError, match="endless still running"):
        api.wait("jsonb_benchmark_matrix", "endless", timeout=0.2, poll=0.01)


def test_errors_carry_the_servers_words(server: str) -> None:
    with pytest.raises(airflow_api.ApiError, match=r"HTTP 401: .*Invalid credentials"):
        airflow_api.AirflowApi(server, "admin", "wrong").token()
    with pytest.raises(airflow_api.ApiError, match=r"HTTP 404: .*DAG not found"):
        airflow_api.AirflowApi(server, "admin", "pw").wait_for_dag("missing", timeout=0.2, poll=0.1)


def test_command_line_reads_the_password_from_a_file_and_exits_by_the_runs_state(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    passwords = tmp_path / "simple_auth_manager_passwords.json.generated"
    passwords.write_text('{"admin": "pw"}')  # the file airflow standalone writes
    FakeAirflow.states = {f"manual__{NEXT_SLOT}": ["success"], "broken": ["failed"]}
    code = airflow_api.main(
        [
            "--url",
            server,
            "--password-file",
            str(passwords),
            "trigger",
            "jsonb_benchmark_matrix",
            "--logical-date",
            "next",
            "--conf",
            '{"scale": "smoke"}',
            "--wait",
            "5",
        ]
    )
    assert code == 0
    assert f"created run manual__{NEXT_SLOT}" in capsys.readouterr().out
    assert airflow_api.main(["--url", server, "--password-file", str(passwords), "state", "missing", "x"]) == 2
    assert airflow_api.main(["--url", server, "--password-file", str(passwords), "wait", "jsonb_benchmark_matrix", "broken"]) == 1
    assert capsys.readouterr().out.strip().endswith("failed")


def test_task_instances_reads_every_page(server: str) -> None:
    """A run of 265 task instances spans three pages of 100: every page is read (the first alone misses the publish task)."""
    tis = airflow_api.AirflowApi(server, "admin", "pw").task_instances("jsonb_benchmark_matrix", "manual__x")
    assert [t["task_id"] for t in tis] == [f"cell.t{i}" for i in range(TASK_INSTANCES)]
