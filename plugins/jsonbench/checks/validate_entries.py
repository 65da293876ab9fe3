"""The validation's ground floor: the error that names a file and a field, and one GX expectation entry checked.

Every check of an expectation file refuses through :func:`need` (an :class:`ExpectationFileError` naming
the file and the JSON path in it). :func:`check_entry` has Great Expectations itself build an entry, so
that GX is the judge of a type or a kwarg; :class:`GxMemo` remembers the entries it accepted, so that a
plan of unchanged files does not import GX at all.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from jsonbench import paths
from jsonbench.checks.library import expectation
from jsonbench.errors import BenchmarkError, ConfigError

_OPERATORS = ("in", "not_in", "ne")


class ExpectationFileError(ConfigError):
    """An expectation file is malformed; ``path`` is the file, ``field`` the JSON path in it (``findings[2].band``)."""

    def __init__(self, path: Path, field: str, message: str) -> None:
        BenchmarkError.__init__(self, f"expectation file {path}: {field}: {message}")
        self.path, self.field = str(path), field


def need(ok: bool, path: Path, field: str, message: str) -> None:
    if not ok:
        raise ExpectationFileError(path, field, message)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def has_names(item: Any, *keys: str) -> bool:
    return isinstance(item, dict) and all(isinstance(item.get(k), str) for k in keys)


class GxMemo:
    """The entries Great Expectations has already built under this GX version, by the digest of their JSON.

    Building an entry is what makes GX itself the judge of a type or a kwarg, and the first one imports GX: about 5 s of
    every plan on 2 cores, for files that did not change since the last plan (a one-cell run's overhead). An
    entry GX accepted once is accepted again by the same version, so only entries not seen before are built; a
    malformed one never enters the memo. Kept in ``.cache/gx-accepted/<GX version>.txt``; a memo that cannot be read
    or written (a read-only checkout) only means every entry is built, as before.
    """

    def __init__(self) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            self.file: Path | None = paths.PROJECT_ROOT / ".cache" / "gx-accepted" / f"{version('great_expectations')}.txt"
        except PackageNotFoundError:
            self.file = None
        self.known: set[str] = set()
        self.new: set[str] = set()
        try:
            if self.file is not None and self.file.exists():
                self.known = set(self.file.read_text(encoding="utf-8").split())
        except OSError:
            self.known = set()

    @staticmethod
    def digest(entry: dict[str, Any]) -> str:
        import hashlib

        return hashlib.sha256(json.dumps(entry, sort_keys=True, default=str).encode()).hexdigest()

    def save(self) -> None:
        if self.file is None or not self.new:
            return
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.file.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text("\n".join(sorted(self.known | self.new)) + "\n", encoding="utf-8")
            tmp.replace(self.file)
        except OSError:
            pass


#: The memo of the validation under way (set by :func:`gx_memo` for its duration).
_MEMO: GxMemo | None = None


@contextmanager
def gx_memo() -> Iterator[GxMemo]:
    """The memo that :func:`check_entry` reads and adds to while the block runs (saved by the caller, once every file passed)."""
    global _MEMO
    _MEMO = memo = GxMemo()
    try:
        yield memo
    finally:
        _MEMO = None


def check_entry(path: Path, field: str, entry: Any) -> None:
    """One GX expectation entry: known type, ``where`` shorthand well formed, kwargs accepted by GX itself."""
    need(isinstance(entry, dict), path, field, f"an expectation must be an object, got {type(entry).__name__}")
    need(isinstance(entry.get("type"), str), path, f"{field}.type", "missing (a GX expectation type, e.g. expect_column_to_exist)")
    for key in ("kwargs", "where", "meta"):
        need(isinstance(entry.get(key, {}), dict), path, f"{field}.{key}", "must be an object")
    for column, spec in (entry.get("where") or {}).items():
        if isinstance(spec, dict):
            ok = len(spec) == 1 and next(iter(spec)) in _OPERATORS
            need(ok, path, f"{field}.where.{column}", f"an operator object has one key of {list(_OPERATORS)}, got {sorted(spec)}")
    digest = GxMemo.digest(entry)
    if _MEMO is not None and digest in _MEMO.known:
        return
    try:
        expectation(entry)
    except Exception as exc:  # GX's own words: unknown type, missing or mistyped kwargs
        what = f"{field}.type" if type(exc).__name__ == "ExpectationNotFoundError" else f"{field}.kwargs"
        raise ExpectationFileError(path, what, f"{entry['type']}: {' '.join(str(exc).split())[:400]}") from None
    if _MEMO is not None:
        _MEMO.new.add(digest)
