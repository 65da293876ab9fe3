"""The benchmark's Airflow plugin: the report, inside the Airflow UI.

Airflow loads this file from the plugins folder (``plugins/.airflowignore`` keeps it from importing the ``jsonbench``
package file by file). It adds **Benchmark report** to the UI's navigation: the latest report
(``<results>/report/index.html``, rebuilt by ``jsonb_benchmark_report`` after every checked run), shown inside the
UI and served by Airflow's own web server to signed-in users only (:mod:`jsonbench.report.serve`). The FastAPI app
is made on first use, so the scheduler and the workers, which load plugins too, never import FastAPI for it.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from airflow.sdk.plugins_manager import AirflowPlugin  # the task runner's own (Airflow accepts either by name)

from jsonbench.report.serve import REPORT_HREF, URL_PREFIX


class JsonbenchUiPlugin(AirflowPlugin):
    name = "jsonbench"
    external_views = [
        {
            "name": "Benchmark report",
            "href": REPORT_HREF,
            "url_route": "benchmark-report",
            "destination": "nav",
            "nav_top_level": True,
        }
    ]

    @cached_property
    def fastapi_apps(self) -> list[dict[str, Any]]:  # type: ignore[override]
        from jsonbench.report.serve import make_app

        return [{"app": make_app(), "url_prefix": URL_PREFIX, "name": "jsonbench results"}]
