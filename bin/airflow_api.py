#!/usr/bin/env python3
"""A small client of Airflow 3's REST API, as a user's script uses it: a JWT from ``/auth/token``, then ``/api/v2``.

Standard library only, so it runs with any Python 3.11 (the project's venv is not needed).

    bin/airflow_api.py [--url URL] [--user admin] [--password-file F | $AIRFLOW_API_PASSWORD] COMMAND ...

    trigger DAG_ID [--conf JSON] [--logical-date now|next|ISO] [--wait SECONDS]
        Create a run. ``--logical-date next`` gives it the logical date of the DAG's next scheduled run
        (``next_dagrun_logical_date``): unpausing the DAG right afterwards then starts *this* run instead
        of the scheduled one (catchup off: the scheduler finds the slot taken and moves on to the next).
    unpause DAG_ID / pause DAG_ID
    state DAG_ID RUN_ID          print the run's state
    runs DAG_ID                  print the DAG's runs (run id, type, logical date, state)
    wait DAG_ID RUN_ID [--timeout S]   wait until the run ends; exit 0 when it succeeded

Exit status: 0 on success, 1 when a run failed, 2 on an API error (its message printed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

FINISHED = ("success", "failed")


class ApiError(RuntimeError):
    """The API answered with an error status (or not at all)."""


@dataclass
class AirflowApi:
    """A session with one Airflow API server: logs in once, then calls ``/api/v2``."""

    url: str
    username: str
    password: str
    timeout: float = 30.0
    _token: str | None = field(default=None, repr=False)

    def _request(self, method: str, path: str, body: Any = None, auth: bool = True) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if auth:
            headers["Authorization"] = f"Bearer {self.token()}"
        req = urllib.request.Request(self.url.rstrip("/") + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:2000]
            raise ApiError(f"{method} {path}: HTTP {exc.code}: {detail}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise ApiError(f"{method} {path}: no answer from {self.url}: {exc}") from None
        return json.loads(raw) if raw else None

    def token(self) -> str:
        """A JWT from ``POST /auth/token`` (fetched once per client)."""
        if self._token is None:
            answer = self._request("POST", "/auth/token", {"username": self.username, "password": self.password}, auth=False)
            self._token = str(answer["access_token"])
        return self._token

    # -- DAGs and runs ---------------------------------------------------------------------------

    def dag(self, dag_id: str) -> dict[str, Any]:
        return dict(self._request("GET", f"/api/v2/dags/{urllib.parse.quote(dag_id)}"))

    def set_paused(self, dag_id: str, paused: bool) -> dict[str, Any]:
        return dict(self._request("PATCH", f"/api/v2/dags/{urllib.parse.quote(dag_id)}", {"is_paused": paused}))

    def trigger(
        self, dag_id: str, conf: dict[str, Any] | None = None, logical_date: str | None = None, run_id: str | None = None
    ) -> dict[str, Any]:
        """``POST /api/v2/dags/{dag_id}/dagRuns``; ``logical_date`` ``"next"`` takes the DAG's next scheduled slot."""
        if logical_date == "next":
            logical_date = self.dag(dag_id).get("next_dagrun_logical_date")
            if not logical_date:
                raise ApiError(f"{dag_id} has no next scheduled run (is it parsed yet?)")
        elif logical_date == "now":
            logical_date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        body: dict[str, Any] = {"logical_date": logical_date, "conf": conf or {}}
        if run_id:
            body["dag_run_id"] = run_id
        return dict(self._request("POST", f"/api/v2/dags/{urllib.parse.quote(dag_id)}/dagRuns", body))

    def run(self, dag_id: str, run_id: str) -> dict[str, Any]:
        return dict(self._request("GET", f"/api/v2/dags/{urllib.parse.quote(dag_id)}/dagRuns/{urllib.parse.quote(run_id)}"))

    def runs(self, dag_id: str) -> list[dict[str, Any]]:
        answer = self._request("GET", f"/api/v2/dags/{urllib.parse.quote(dag_id)}/dagRuns?limit=100&order_by=logical_date")
        return list(answer["dag_runs"])

    def task_instances(self, dag_id: str, run_id: str) -> list[dict[str, Any]]:
        """Every task instance of the run, page by page: the API answers at most ``[api] maximum_page_limit`` (100 by
        default) a call, whatever ``limit`` asks for, and a matrix run has more than 250."""
        path = f"/api/v2/dags/{urllib.parse.quote(dag_id)}/dagRuns/{urllib.parse.quote(run_id)}/taskInstances"
        out: list[dict[str, Any]] = []
        while True:
            page = self._request("GET", f"{path}?limit=100&offset={len(out)}")
            out += page["task_instances"]
            if not page["task_instances"] or len(out) >= int(page.get("total_entries") or 0):
                return out

    def wait(self, dag_id: str, run_id: str, timeout: float = 3600, poll: float = 10) -> dict[str, Any]:
        """Poll until the run succeeded or failed; raise :class:`TimeoutError` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                run = self.run(dag_id, run_id)
            except ApiError as exc:  # a busy API server: ask again until the deadline
                if "no answer" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(poll)
                continue
            if run.get("state") in FINISHED:
                return run
            if time.monotonic() > deadline:
                raise TimeoutError(f"{dag_id} {run_id} still {run.get('state')} after {timeout:.0f}s")
            time.sleep(poll)

    def wait_for_dag(self, dag_id: str, timeout: float = 300, poll: float = 5) -> dict[str, Any]:
        """Wait until the DAG processor has parsed ``dag_id`` (and computed its next run)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.dag(dag_id)
            except ApiError as exc:
                # Not parsed yet (404), or an API server too busy to answer in time: ask again until the deadline.
                if not ("HTTP 404" in str(exc) or "no answer" in str(exc)) or time.monotonic() > deadline:
                    raise
            time.sleep(poll)


def wait_for_api(url: str, timeout: float = 300) -> None:
    """Wait until ``GET /api/v2/version`` answers (no login needed)."""
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url.rstrip("/") + "/api/v2/version", timeout=5) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError) as exc:
            last = str(exc)
        time.sleep(2)
    raise ApiError(f"the API server at {url} did not answer within {timeout:.0f}s ({last})")


def _password(args: argparse.Namespace) -> str:
    if args.password_file:
        with open(args.password_file) as f:
            text = f.read().strip()
        try:  # SimpleAuthManager's generated file: {"admin": "..."}
            return str(json.loads(text)[args.user])
        except (ValueError, KeyError, TypeError):
            return text
    password = os.environ.get("AIRFLOW_API_PASSWORD")
    if not password:
        raise SystemExit("error: give the password in $AIRFLOW_API_PASSWORD or with --password-file")
    return password


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=os.environ.get("AIRFLOW_API_URL", "http://127.0.0.1:8080"))
    parser.add_argument("--user", default=os.environ.get("AIRFLOW_API_USER", "admin"))
    parser.add_argument("--password-file")
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("trigger")
    t.add_argument("dag_id")
    t.add_argument("--conf", default="{}")
    t.add_argument("--logical-date", default=None, help="now, next (the next scheduled slot) or an ISO timestamp; default: none")
    t.add_argument("--wait", type=float, default=0, help="wait this many seconds for the run to end")
    for name in ("unpause", "pause"):
        sub.add_parser(name).add_argument("dag_id")
    s = sub.add_parser("state")
    s.add_argument("dag_id")
    s.add_argument("run_id")
    sub.add_parser("runs").add_argument("dag_id")
    w = sub.add_parser("wait")
    w.add_argument("dag_id")
    w.add_argument("run_id")
    w.add_argument("--timeout", type=float, default=3600)
    args = parser.parse_args(argv)
    api = AirflowApi(args.url, args.user, _password(args))
    try:
        if args.command == "trigger":
            run = api.trigger(args.dag_id, json.loads(args.conf), args.logical_date)
            print(f"{args.dag_id}: created run {run['dag_run_id']} (logical date {run.get('logical_date')}, state {run.get('state')})")
            if args.wait:
                run = api.wait(args.dag_id, run["dag_run_id"], timeout=args.wait)
                print(f"{args.dag_id}: run {run['dag_run_id']} {run['state']}")
                return 0 if run["state"] == "success" else 1
        elif args.command in ("unpause", "pause"):
            dag = api.set_paused(args.dag_id, args.command == "pause")
            print(f"{args.dag_id}: is_paused={dag.get('is_paused')}")
        elif args.command == "state":
            print(api.run(args.dag_id, args.run_id).get("state"))
        elif args.command == "runs":
            for run in api.runs(args.dag_id):
                print(f"{run['dag_run_id']}\t{run.get('run_type')}\t{run.get('logical_date')}\t{run.get('state')}")
        elif args.command == "wait":
            run = api.wait(args.dag_id, args.run_id, timeout=args.timeout)
            print(run["state"])
            return 0 if run["state"] == "success" else 1
    except (ApiError, TimeoutError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
