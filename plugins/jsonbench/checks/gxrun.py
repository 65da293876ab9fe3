"""Great Expectations as it is meant to be used: one file-backed context per results folder, each
frame validated by a Checkpoint whose UpdateDataDocsAction adds the result to Data Docs.

Layout (under the results folder, beside ``measurements/`` and ``validations/``)::

    gx/great_expectations.yml          the context (GX's own scaffold, one pandas data source "jsonbench")
    gx/expectations/...                one expectation suite per frame, rewritten from include/expectations/ each run
    gx/validation_definitions/...      one validation definition per suite
    gx/checkpoints/...                 one Checkpoint per suite, with an UpdateDataDocsAction
    gx/uncommitted/validations/...     every validation result of every checked run (the history)
    gx/uncommitted/data_docs/local_site/
        index.html                     GX's index (the latest ``INDEX_LIMIT`` results; every page stays on disk)
        validations/<suite path>/<run name>/<run time>/<batch>.html     one page per validation, per run

One :class:`GXSession` per checked run. :meth:`GXSession.validate` (signature and :class:`Outcome` unchanged)
runs the frame's Checkpoint with ``batch_parameters={"dataframe": frame}`` under the run's
``RunIdentifier`` (run name = the run key, run time = when the session started, so a re-check of a
run adds a new page and keeps the earlier one); :meth:`GXSession.finish` returns, per GX suite name,
the Data Docs page of this session's result, relative to the results folder, which the checks store
as ``details.data_docs_page`` of the validation rows and the report links to.

**Concurrency.** Two checks may run at once (two deployments sharing a results folder, a re-check
beside a nightly run). The context's files (``great_expectations.yml``, the stores, the Data Docs
index) are written under an exclusive file lock, ``gx/.jsonbench.lock`` (``filelock``), held for
each validation (context reloaded from disk, suite/definition/Checkpoint updated, Checkpoint run,
Data Docs updated) and released in between, so one check never writes from a stale copy of
another's configuration and a killed check leaves no lock behind (the OS drops it with the process).

**Why not the GX Airflow provider.** ``airflow-provider-great-expectations`` 1.0.0 (operators
``GXValidateDataFrameOperator``, ``GXValidateBatchOperator``, ``GXValidateCheckpointOperator``)
declares ``structlog<25.5.0``, while ``apache-airflow-core`` 3.3.1 and 3.3.2 require
``structlog>=26.1.0``: installing it pulls Airflow back to 3.3.0 (checked against the wheels'
metadata, 2026-11-30). Beyond that, its operators run one Checkpoint or frame per Airflow task and
fail the task on the first failed validation, while the ``check`` task validates several frames
built from the published run (sanity, the findings frame, drift against history), turns every
outcome into validation rows, stores them, and only then fails and alerts. So the check calls GX
directly, through a Checkpoint and its actions as GX documents, in one task. Revisit when a
provider release accepts the structlog that Airflow pins.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import unquote, urlparse

import pandas as pd

from jsonbench.checks.library import expectation

if TYPE_CHECKING:
    from great_expectations.data_context import AbstractDataContext
    from great_expectations.datasource.fluent import PandasDatasource

log = logging.getLogger(__name__)

#: GX must not phone home (no network here, and a benchmark host should not either).
os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")

#: The Data Docs site (GX's default site name and folder in a file-backed context).
SITE = "local_site"
SITE_DIR = "uncommitted/data_docs/local_site/"
#: GX's index page re-reads every validation result it lists each time it is rebuilt, which the
#: UpdateDataDocsAction does after every Checkpoint run (about 20 ms per listed result here, ten
#: Checkpoints per check), and it needs GX's CDN scripts to show its list at all. So it lists the
#: latest results only; every page stays on disk, linked from the validation rows
#: (``details.data_docs_page``), the ``findings`` view and the report, which is the index that opens offline.
INDEX_LIMIT = 30
DATASOURCE = "jsonbench"
LOCK_NAME = ".jsonbench.lock"
#: How long a check waits for another check's GX work before giving up (seconds).
LOCK_TIMEOUT_S = float(os.environ.get("JSONBENCH_GX_LOCK_TIMEOUT", "1800"))


@dataclass
class Outcome:
    """One expectation's result on one frame."""

    suite_name: str
    type: str
    kwargs: dict[str, Any]
    meta: dict[str, Any]
    success: bool
    result: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def unexpected(self) -> list[dict[str, Any]]:
        """The unexpected rows, each as a dict of the frame's index columns (and the checked column)."""
        rows = self.result.get("unexpected_index_list")
        return rows if isinstance(rows, list) and (not rows or isinstance(rows[0], dict)) else []

    @property
    def label(self) -> str:
        column = self.kwargs.get("column")
        where = self.meta.get("where")
        text = self.type + (f"({column})" if column else "")
        if where:
            text += " where " + ", ".join(f"{k}={v}" for k, v in where.items())
        return text


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=lambda o: o.dict() if hasattr(o, "dict") else str(o)))


def _error_of(info: Any) -> str | None:
    """The exception message of an expectation result: GX gives one dict, or one per metric it computed."""
    if not isinstance(info, dict):
        return None
    if info.get("raised_exception"):
        return str(info.get("exception_message") or "raised an exception")
    messages = [str(v.get("exception_message")) for v in info.values() if isinstance(v, dict) and v.get("raised_exception")]
    return "; ".join(dict.fromkeys(messages)) or None


def docs_enabled() -> bool:
    """Data Docs are updated unless ``$JSONBENCH_DATA_DOCS`` is ``0`` (rendering takes a fraction of a second per frame)."""
    return os.environ.get("JSONBENCH_DATA_DOCS", "1") != "0"


def gx_dir(results_dir: str | Path) -> Path:
    """The GX context folder of a results folder."""
    return Path(results_dir) / "gx"


def data_docs_dir(results_dir: str | Path) -> Path:
    """The Data Docs site of a results folder."""
    return gx_dir(results_dir) / SITE_DIR


def _site_config() -> dict[str, Any]:
    return {
        "class_name": "SiteBuilder",
        "show_how_to_buttons": False,
        "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": SITE_DIR},
        "site_index_builder": {"class_name": "DefaultSiteIndexBuilder", "validation_results_limit": INDEX_LIMIT, "show_cta_footer": False},
    }


class _NoLock:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


class GXSession:
    """Validates frames through Checkpoints of the results folder's GX context, adding each result to Data Docs.

    ``results_dir`` is the results folder (the context lives in ``<results>/gx/``). For
    compatibility, a run's former Data Docs folder ``<results>/data_docs/<run_key>`` is accepted and
    means its results folder. ``None`` gives an ephemeral context: nothing is kept and
    :meth:`finish` returns no pages (unit tests, ``python -c`` experiments). ``data_docs`` (default:
    ``$JSONBENCH_DATA_DOCS`` is not ``0``) adds the UpdateDataDocsAction to every Checkpoint.
    """

    def __init__(
        self,
        results_dir: str | Path | None = None,
        run_name: str = "run",
        *,
        data_docs: bool | None = None,
        run_time: datetime | None = None,
    ) -> None:
        import great_expectations as gx

        self._gx = gx
        root = Path(results_dir) if results_dir is not None else None
        if root is not None and root.parent.name == "data_docs":
            root = root.parent.parent
        self.results_dir = root
        self.run_name = run_name
        self.run_time = run_time or datetime.now(UTC)
        self.data_docs = (docs_enabled() if data_docs is None else data_docs) and root is not None
        self.validated = 0
        self.pages: dict[str, str] = {}
        self._ephemeral: AbstractDataContext | None = None
        self._lock_file: Path | None = None
        if root is None:
            from great_expectations.data_context.types.base import DataContextConfig, InMemoryStoreBackendDefaults, ProgressBarsConfig

            config = DataContextConfig(store_backend_defaults=InMemoryStoreBackendDefaults(init_temp_docs_sites=False))
            self._ephemeral = gx.get_context(mode="ephemeral", project_config=config)
            self._ephemeral.variables.progress_bars = ProgressBarsConfig(globally=False)
        else:
            gx_dir(root).mkdir(parents=True, exist_ok=True)
            self._lock_file = gx_dir(root) / LOCK_NAME
            with self._lock():
                self._prepare(self._context())

    # -- the context -------------------------------------------------------------------------

    def _lock(self) -> Any:
        if self._lock_file is None:
            return _NoLock()
        from filelock import FileLock

        return FileLock(str(self._lock_file), timeout=LOCK_TIMEOUT_S)

    def _context(self) -> AbstractDataContext:
        """The context as it is on disk now (re-read under the lock: another check may have changed it)."""
        if self._ephemeral is not None:
            return self._ephemeral
        assert self.results_dir is not None
        return self._gx.get_context(mode="file", project_root_dir=str(self.results_dir))

    def _prepare(self, ctx: AbstractDataContext) -> None:
        """Once per folder (idempotent): progress bars off, the Data Docs site configured, the data source."""
        from great_expectations.data_context.types.base import ProgressBarsConfig

        changed = False
        bars = ctx.variables.progress_bars
        if not bars or getattr(bars, "globally", True) is not False:
            ctx.variables.progress_bars = ProgressBarsConfig(globally=False)
            changed = True
        if changed:
            ctx.variables.save()
        sites = ctx.list_data_docs_sites()
        if sites.get(SITE) != _site_config():
            if SITE in sites:
                ctx.update_data_docs_site(SITE, _site_config())  # type: ignore[arg-type]  # GX's DataDocsSiteConfigTypedDict lacks show_how_to_buttons
            else:
                ctx.add_data_docs_site(SITE, _site_config())  # type: ignore[arg-type]  # GX's DataDocsSiteConfigTypedDict lacks show_how_to_buttons
        if DATASOURCE not in ctx.data_sources.all():
            ctx.data_sources.add_pandas(DATASOURCE)

    # -- validating --------------------------------------------------------------------------

    def validate(self, suite_name: str, frame: pd.DataFrame, entries: list[dict[str, Any]], index_columns: list[str]) -> list[Outcome]:
        """Validate ``frame`` against ``entries`` through the suite's Checkpoint; one :class:`Outcome` per entry, in order."""
        if not entries:
            return []
        with self._lock():
            ctx = self._context()
            if self._ephemeral is not None and DATASOURCE not in ctx.data_sources.all():
                ctx.data_sources.add_pandas(DATASOURCE)
            checkpoint = self._checkpoint(ctx, suite_name, entries, index_columns, frame, docs=self.data_docs)
            result = self._run(checkpoint, frame)
            if result is None:  # Data Docs failed to render: the validation itself must still count
                checkpoint = self._checkpoint(ctx, suite_name, entries, index_columns, frame, docs=False)
                result = self._run(checkpoint, frame)
                assert result is not None
            key, vr = next(iter(result.run_results.items()))
            if self.data_docs:
                page = self._page(ctx, key)
                if page:
                    self.pages[suite_name] = page
        self.validated += 1
        return self._outcomes(suite_name, vr)

    def _checkpoint(
        self,
        ctx: AbstractDataContext,
        suite_name: str,
        entries: list[dict[str, Any]],
        index_columns: list[str],
        frame: pd.DataFrame,
        docs: bool,
    ) -> Any:
        gx = self._gx
        source = cast("PandasDatasource", ctx.data_sources.all()[DATASOURCE])  # added with add_pandas
        try:
            asset = source.get_asset(suite_name)
        except LookupError:
            asset = source.add_dataframe_asset(suite_name)
        try:
            batch = asset.get_batch_definition(f"{suite_name}.frame")
        except (KeyError, LookupError):
            batch = asset.add_batch_definition_whole_dataframe(f"{suite_name}.frame")
        suite = gx.ExpectationSuite(name=suite_name)
        for entry in entries:
            suite.add_expectation(expectation(entry))
        suite = ctx.suites.add_or_update(suite)
        vd = ctx.validation_definitions.add_or_update(gx.ValidationDefinition(name=f"{suite_name}.validation", data=batch, suite=suite))
        actions = [gx.checkpoint.UpdateDataDocsAction(name="update_data_docs", site_names=[SITE])] if docs else []
        # GX keeps the frame's index in results; a clean RangeIndex keeps them small and readable.
        result_format = {"result_format": "COMPLETE", "unexpected_index_column_names": [c for c in index_columns if c in frame.columns]}
        return ctx.checkpoints.add_or_update(
            gx.Checkpoint(name=suite_name, validation_definitions=[vd], actions=actions, result_format=result_format)
        )

    def _run(self, checkpoint: Any, frame: pd.DataFrame) -> Any:
        from great_expectations.core.run_identifier import RunIdentifier

        try:
            return checkpoint.run(
                batch_parameters={"dataframe": frame.reset_index(drop=True)},
                run_id=RunIdentifier(run_name=self.run_name, run_time=self.run_time),
            )
        except Exception as exc:
            if not checkpoint.actions:
                raise
            log.warning(
                "Checkpoint %s: updating Data Docs failed (%s: %s); validating without them", checkpoint.name, type(exc).__name__, exc
            )
            return None

    def _page(self, ctx: AbstractDataContext, key: Any) -> str | None:
        """The Data Docs page of one validation result, relative to the results folder (None if not written)."""
        assert self.results_dir is not None
        try:
            urls = ctx.get_docs_sites_urls(resource_identifier=key, site_names=[SITE], only_if_exists=True)
        except Exception as exc:  # a page we cannot name is not a reason to fail the check
            log.warning("no Data Docs page for %s: %s", key, exc)
            return None
        for site in urls:
            url = site.get("site_url") or ""
            path = Path(unquote(urlparse(url).path)) if url.startswith("file:") else Path(url)
            if path.is_file():
                try:
                    return path.resolve().relative_to(self.results_dir.resolve()).as_posix()
                except ValueError:
                    return str(path)
        return None

    def _outcomes(self, suite_name: str, vr: Any) -> list[Outcome]:
        outcomes: list[Outcome] = []
        for r in vr.results:
            cfg = r.expectation_config
            error = _error_of(r.exception_info)
            outcomes.append(
                Outcome(
                    suite_name=suite_name,
                    type=cfg.type,
                    kwargs=_jsonable({k: v for k, v in cfg.kwargs.items() if k not in ("batch_id",)}),
                    meta=_jsonable(cfg.meta or {}),
                    success=bool(r.success),
                    result=_jsonable(r.result or {}),
                    error=error,
                )
            )
        return outcomes

    # -- after all validations ---------------------------------------------------------------

    def finish(self) -> dict[str, str]:
        """Per GX suite name validated in this session, its Data Docs page relative to the results folder.

        The pages were written by each Checkpoint's UpdateDataDocsAction; an empty dict when Data
        Docs are off or the context is ephemeral.
        """
        return dict(self.pages)

    def build_docs(self) -> Path | None:
        """Compatibility with the former per-run site: the pages are already written; the site's index, if any."""
        self.finish()
        return self.docs_index()

    def docs_index(self) -> Path | None:
        """The Data Docs site's index page, if one was written."""
        if self.results_dir is None:
            return None
        index = data_docs_dir(self.results_dir) / "index.html"
        return index if index.exists() else None
