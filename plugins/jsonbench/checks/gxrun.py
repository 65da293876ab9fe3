"""Running expectation entries against pandas frames with Great Expectations 1.x, and Data Docs.

One :class:`GXSession` per checked run: an ephemeral data context, one pandas data source, and per
frame a dataframe asset, an expectation suite built from the library's entries and a validation
definition. :meth:`GXSession.build_docs` then renders every result of the session into a
filesystem Data Docs site (``<results>/data_docs/<run_key>/index.html``), once, because rendering
is the slow part. Results come back as :class:`Outcome` objects, with every unexpected row named
by the frame's index columns.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from jsonbench.checks.library import expectation

log = logging.getLogger(__name__)

#: GX must not phone home (no network here, and a benchmark host should not either).
os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")

SITE = "jsonbench"


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


class GXSession:
    """An ephemeral GX context that validates frames and (optionally) keeps a Data Docs site."""

    def __init__(self, docs_dir: Path | None = None, run_name: str = "run") -> None:
        import great_expectations as gx
        from great_expectations.data_context.types.base import DataContextConfig, InMemoryStoreBackendDefaults, ProgressBarsConfig

        self._gx = gx
        # No default temporary docs site: GX would leave a folder in /tmp on every run.
        config = DataContextConfig(store_backend_defaults=InMemoryStoreBackendDefaults(init_temp_docs_sites=False))
        self.context = gx.get_context(mode="ephemeral", project_config=config)
        self.context.variables.progress_bars = ProgressBarsConfig(globally=False)
        self.docs_dir = docs_dir
        self.run_name = run_name
        if docs_dir is not None:
            docs_dir.mkdir(parents=True, exist_ok=True)
            self.context.add_data_docs_site(
                SITE,
                {
                    "class_name": "SiteBuilder",
                    "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(docs_dir)},
                    "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
                },
            )
        self.source = self.context.data_sources.add_pandas("jsonbench")
        self.validated = 0

    def validate(self, suite_name: str, frame: pd.DataFrame, entries: list[dict[str, Any]], index_columns: list[str]) -> list[Outcome]:
        """Validate ``frame`` against ``entries``; one :class:`Outcome` per entry, in order."""
        gx = self._gx
        from great_expectations.core.run_identifier import RunIdentifier

        if not entries:
            return []
        asset = self.source.add_dataframe_asset(suite_name)
        batch = asset.add_batch_definition_whole_dataframe(f"{suite_name}.frame")
        suite = gx.ExpectationSuite(name=suite_name)
        for entry in entries:
            suite.add_expectation(expectation(entry))
        suite = self.context.suites.add(suite)
        vd = self.context.validation_definitions.add(gx.ValidationDefinition(name=f"{suite_name}.validation", data=batch, suite=suite))
        # GX keeps the frame's index in results; a clean RangeIndex keeps them small and readable.
        # The result is also kept in the context's store, from which build_docs() renders Data Docs once.
        vr = vd.run(
            batch_parameters={"dataframe": frame.reset_index(drop=True)},
            result_format={"result_format": "COMPLETE", "unexpected_index_column_names": [c for c in index_columns if c in frame.columns]},
            run_id=RunIdentifier(run_name=self.run_name),
        )
        self.validated += 1
        outcomes: list[Outcome] = []
        for r in vr.results:
            cfg = r.expectation_config
            exc = r.exception_info or {}
            error = exc.get("exception_message") if isinstance(exc, dict) and exc.get("raised_exception") else None
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

    def build_docs(self) -> Path | None:
        """Render the Data Docs site of everything validated in this session (once: rendering is slow)."""
        if self.docs_dir is None or not self.validated:
            return None
        self.context.build_data_docs(site_names=[SITE])
        return self.docs_index()

    def docs_index(self) -> Path | None:
        """The Data Docs site's index page, if one was written."""
        if self.docs_dir is None:
            return None
        index = self.docs_dir / "index.html"
        return index if index.exists() else None

    def finish(self) -> dict[str, str]:
        """Each GX suite name's Data Docs page, relative to the results folder (minimal until the report helper's GX context lands)."""
        return {}
