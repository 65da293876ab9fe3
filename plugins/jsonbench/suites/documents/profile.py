"""What the scan learns of the documents' keys: their types and values, the keys chosen, the typed twin's columns.

Pure functions of :class:`KeyStats`, the per-key tally the scan keeps over the loaded documents, so
that the defaults (which keys are read and updated when none are named) and seed 000's column design
can be checked on a handful of documents without reading any file.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from jsonbench.suites.documents.plan import TwinColumn

#: Keys read by default (the most common top-level scalar keys) and updated by default.
DEFAULT_READ_KEYS = 3
DEFAULT_UPDATE_KEYS = 1
#: At most this many typed twin columns (the rest of the document stays in the twin's ``_rest``).
MAX_TWIN_COLUMNS = 100
#: Distinct values tracked per key (to tell identifiers from attributes, and to pick an update value).
DISTINCT_CAP = 4096
#: The twin's own columns: a document key of the same name stays in ``_rest``.
ROW_ID, REST = "_row_id", "_rest"
#: Column types of the typed twin, in PostgreSQL's names (SQLite columns are untyped).
TWIN_TYPES = ("boolean", "bigint", "numeric", "date", "timestamptz", "text")
#: PostgreSQL identifiers are at most 63 bytes; a longer key stays in ``_rest``.
MAX_IDENTIFIER_BYTES = 63

_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIMESTAMP_RE = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$")
_INT64 = (-(2**63), 2**63 - 1)


@dataclass
class KeyStats:
    """What the scan saw of one top-level key over the loaded documents."""

    first_seen: int
    count: int = 0
    scalar: int = 0
    types: Counter[str] = field(default_factory=Counter)
    #: Values seen, tagged with their type (``True`` and ``1`` are equal keys in Python).
    values: Counter[tuple[str, Any]] = field(default_factory=Counter)
    many: bool = False

    def add(self, value: Any) -> None:
        self.count += 1
        kind = scalar_type(value)
        self.types[kind] += 1
        if kind in ("object", "array"):
            return
        self.scalar += 1
        if kind != "null" and not self.many and not (isinstance(value, float) and not math.isfinite(value)):
            self.values[(kind, value)] += 1
            self.many = len(self.values) > DISTINCT_CAP

    @property
    def identifier(self) -> bool:
        """Every value distinct (an id, a timestamp): a key nobody updates in place."""
        return self.many or (bool(self.values) and max(self.values.values()) == 1)


def scalar_type(value: Any) -> str:
    """The twin type a value fits best (``object``/``array`` for containers, ``null``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "bigint" if _INT64[0] <= value <= _INT64[1] else "numeric"
    if isinstance(value, float):
        return "numeric"
    if isinstance(value, str):
        if _DATE_RE.match(value) and _valid(date.fromisoformat, value):
            return "date"
        if _TIMESTAMP_RE.match(value) and _valid(datetime.fromisoformat, value.replace("Z", "+00:00")):
            return "timestamptz"
        return "text"
    return "array" if isinstance(value, list) else "object"


def _valid(parse: Any, text: str) -> bool:
    try:
        parse(text)
    except ValueError:
        return False
    return True


def twin_type(types: Counter[str]) -> str | None:
    """The one column type that holds every value a key took, or None (a container, or types no column shares)."""
    seen = {t for t in types if t != "null"}
    if not seen or seen & {"object", "array"}:
        return None
    if len(seen) == 1:
        return next(iter(seen))
    if seen <= {"bigint", "numeric"}:
        return "numeric"
    if seen <= {"date", "timestamptz", "text"}:
        return "text"
    return None


def twin_columns(stats: dict[str, KeyStats]) -> tuple[TwinColumn, ...]:
    """Seed 000's column design for these documents: every top-level key whose values all fit one type, most common first.

    A key that is sometimes an object or an array, mixes types no column shares (a number here, a
    string there), is named like the twin's own columns, or is longer than a PostgreSQL identifier
    stays in the twin's ``_rest`` document.
    """
    cols: list[TwinColumn] = []
    for key, st in _by_frequency(stats):
        kind = twin_type(st.types)
        if kind is None or key in (ROW_ID, REST) or len(key.encode("utf-8")) > MAX_IDENTIFIER_BYTES:
            continue
        cols.append(TwinColumn(key, kind))
    return tuple(cols[:MAX_TWIN_COLUMNS])


def _by_frequency(stats: dict[str, KeyStats]) -> list[tuple[str, KeyStats]]:
    return sorted(stats.items(), key=lambda kv: (-kv[1].count, kv[1].first_seen))


def discover_keys(stats: dict[str, KeyStats]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The keys read and updated by default: the most common top-level scalar keys.

    Reads: the :data:`DEFAULT_READ_KEYS` most common keys whose values are scalars in every document
    that has them. Update: the most common of those that is not an identifier (a key whose every value
    is distinct, such as an id or a timestamp, is not what an application changes in place), else the
    most common. A key with a dot in its name cannot be written as a key path, and is not chosen.
    """
    scalar = [
        (k, st)
        for k, st in _by_frequency(stats)
        if st.scalar == st.count and st.count > st.types["null"] and k and "." not in k  # a dotted name is no key path
    ]
    reads = tuple(k for k, _ in scalar[:DEFAULT_READ_KEYS])
    updates = [k for k, st in scalar if not st.identifier] or [k for k, _ in scalar]
    return reads, tuple(updates[:DEFAULT_UPDATE_KEYS])
