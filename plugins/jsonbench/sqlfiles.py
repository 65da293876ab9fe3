"""SQL lives in ``include/sql/<suite>/<name>.sql``; this module reads it and binds identifiers.

Placeholders are psycopg's: ``{table}`` is replaced by a safely quoted identifier (through
``psycopg.sql.Identifier``), ``%(name)s`` stays a server-side parameter. Because ``{`` starts a
placeholder, write literal braces as ``{{`` and ``}}`` (or prefer ``ARRAY['key']`` for jsonb paths).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from jsonbench import paths

if TYPE_CHECKING:
    from psycopg.sql import Composed


@lru_cache(maxsize=256)
def _read(path: str) -> str:
    return Path(path).read_text(encoding="utf-8")


def sql_path(suite: str, name: str) -> Path:
    """The path of ``include/sql/<suite>/<name>.sql`` (raises ``FileNotFoundError`` naming it)."""
    path = paths.sql_dir() / suite / f"{name}.sql"
    if not path.is_file():
        raise FileNotFoundError(f"SQL file {path} does not exist")
    return path


def load_sql(suite: str, name: str) -> str:
    """The text of a suite's SQL file."""
    return _read(str(sql_path(suite, name)))


def compose(text: str, **identifiers: str) -> Composed:
    """Bind ``{name}`` placeholders in ``text`` to quoted identifiers."""
    from psycopg import sql

    return sql.SQL(text).format(**{k: sql.Identifier(v) for k, v in identifiers.items()})


def statements(text: str) -> list[str]:
    """Split a SQL file into statements on lines that end with ``;`` (no dollar-quoted bodies split).

    Used where a file must run statement by statement (for example when each one is timed).
    A statement inside ``$$ ... $$`` is kept whole.
    """
    out: list[str] = []
    buf: list[str] = []
    in_dollar = False
    for line in text.splitlines():
        if line.strip().startswith("--") and not buf:
            continue
        buf.append(line)
        if line.count("$$") % 2 == 1:
            in_dollar = not in_dollar
        if not in_dollar and line.rstrip().endswith(";"):
            stmt = "\n".join(buf).strip()
            if stmt.rstrip(";").strip():
                out.append(stmt)
            buf = []
    tail = "\n".join(buf).strip()
    if tail and not all(ln.strip().startswith("--") or not ln.strip() for ln in buf):
        out.append(tail)
    return out
