"""The results folder served inside Airflow's own web server: the report a person opens from the UI.

The report is a static page (``<results>/report/index.html``) with relative links into the results folder (Great
Expectations' Data Docs, the Parquet dataset). :func:`make_app` serves that folder read-only, to signed-in Airflow
users only: Airflow does not guard a plugin's FastAPI app, so every request passes Airflow's own check of its token
(the UI's session cookie, or a bearer token) before a file is read. Nothing outside the folder and no hidden file
(``.vendor``, staging, leases) is ever served. The plugin in ``plugins/jsonbench_ui.py`` mounts it at
:data:`URL_PREFIX` and adds the report to the UI's navigation.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

#: Where Airflow's web server mounts the app (not one of Airflow's reserved prefixes).
URL_PREFIX = "/jsonbench"
#: The report inside the app, relative to the web server's root (the UI's views take relative links).
REPORT_HREF = URL_PREFIX.lstrip("/") + "/results/report/index.html"


def resolve_inside(root: Path, relative: str) -> Path | None:
    """The file ``relative`` names inside ``root``, or None: outside it, hidden, or not a file.

    A folder means its ``index.html``. ``..``, absolute paths and symbolic links that leave the folder resolve to None.
    """
    parts = PurePosixPath(relative).parts
    if any(p.startswith(".") or p == "/" for p in parts):
        return None
    base = root.resolve()
    target = (base / Path(*parts)).resolve() if parts else base
    if target.is_dir():
        target = target / "index.html"
    if not target.is_relative_to(base) or not target.is_file():
        return None
    return target


def make_app(results_dir: str | Path | None = None) -> FastAPI:
    """A FastAPI app serving ``results_dir`` (default: ``$JSONBENCH_RESULTS_DIR``) under ``/results/``, signed-in users only."""
    from airflow.api_fastapi.core_api.security import requires_authenticated
    from fastapi import Depends, FastAPI, HTTPException
    from fastapi.responses import FileResponse, RedirectResponse

    from jsonbench import paths

    app = FastAPI(
        title="jsonbench results",
        description="The benchmark's report and results folder, read-only, for signed-in Airflow users.",
        dependencies=[Depends(requires_authenticated())],
    )

    @app.get("/", include_in_schema=False)
    def index() -> RedirectResponse:
        return RedirectResponse("results/report/index.html")

    @app.get("/results/{relative:path}")
    def results_file(relative: str) -> FileResponse:
        root = paths.results_dir(results_dir)
        target = resolve_inside(root, relative)
        if target is None:
            detail = "no report yet: it is built after a checked run" if relative.startswith("report") else "not found"
            raise HTTPException(status_code=404, detail=detail)
        return FileResponse(target)

    return app
