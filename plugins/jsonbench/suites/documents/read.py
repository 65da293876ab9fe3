"""The input's documents read from disk and checked, one at a time, in pure Python.

The input is a JSON Lines file (one document per line; blank lines are skipped) or a folder of
``.json`` files (one document per file, taken in file-name order). Kept apart from the profile and
the plan because the scan and the suites' load steps both read through here, so that what a run
loads is the exact text the scan checked and fingerprinted (:func:`document_texts`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonbench import paths
from jsonbench.errors import ConfigError
from jsonbench.suites.documents.plan import PARAM, DocumentsError, DocumentsPlan

_SURROGATE_RE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Document:
    """One document as read: where it came from, its text as stored, and its parsed value."""

    file: Path
    line: int
    text: str
    value: dict[str, Any]


def resolve_source(value: Any, param: str = PARAM) -> Path:
    """The input's path: absolute, or relative to the working folder, else to the project (``examples/orders.jsonl``)."""
    if isinstance(value, Path):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(param, f"must be the path of a .jsonl file or of a folder of .json files, got {value!r}")
    path = Path(value).expanduser()
    if not path.is_absolute() and not path.exists() and (paths.PROJECT_ROOT / path).exists():
        path = paths.PROJECT_ROOT / path
    path = path.resolve()
    if not path.exists():
        raise DocumentsError(path, "does not exist", param=param)
    return path


def input_files(source: Path) -> list[Path]:
    """The files of an input: the file itself, or a folder's ``.json`` files in name order."""
    if source.is_dir():
        files = sorted(p for p in source.iterdir() if p.is_file() and p.suffix == ".json")
        if not files:
            raise DocumentsError(source, "is an empty input: a folder of documents must hold .json files, and this one has none")
        return files
    return [source]


def check_fits(source: Path, size: int, free_disk: int, free_memory: int) -> None:
    """Refuse an input larger than the engines' free disk or the available memory (each engine stores it at least twice)."""
    if size > free_disk:
        raise DocumentsError(
            source,
            f"is {_mb(size)}, larger than the free disk of the engines' scratch folder {paths.scratch_dir()} ({_mb(free_disk)}); "
            "each engine stores the documents at least twice (json and jsonb, text and JSONB)",
        )
    if size > free_memory:
        raise DocumentsError(source, f"is {_mb(size)}, larger than the available memory ({_mb(free_memory)})")


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def available_memory() -> int:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes (a very large number when unknown)."""
    try:
        for line in Path("/proc/meminfo").read_text(encoding="ascii").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 2**62


def fingerprint_of(source: Path, files: list[Path]) -> tuple[str, int]:
    """sha256 and bytes of an input: a file's bytes, or each file's name and bytes of a folder, in order."""
    h = hashlib.sha256()
    total = 0
    for f in files:
        if source.is_dir():
            h.update(f.name.encode("utf-8") + b"\0")
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
                total += len(chunk)
        if source.is_dir():
            h.update(b"\0")
    return h.hexdigest(), total


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (PostgreSQL refuses it)")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def parse_document(file: Path, line: int, text: str) -> dict[str, Any]:
    """One document's text parsed and checked; :class:`DocumentsError` names the file, line and field of a problem."""
    try:
        value = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_pairs)
    except _DuplicateKey as exc:
        raise DocumentsError(
            file,
            "a key appears twice in one object: json would keep both and jsonb the last, so they would differ",
            line=line,
            where=exc.key,
        ) from None
    except json.JSONDecodeError as exc:
        at = line + exc.lineno - 1
        raise DocumentsError(file, f"not valid JSON: {exc.msg} (column {exc.colno})", line=at) from None
    except RecursionError:
        raise DocumentsError(file, "nested too deeply to parse", line=line) from None
    except ValueError as exc:
        raise DocumentsError(file, f"not valid JSON: {exc}", line=line) from None
    if not isinstance(value, dict):
        raise DocumentsError(file, f"the document is a JSON {_json_type(value)}, not an object", line=line, where="(top level)")
    bad = _unstorable(value)
    if bad is not None:
        where, why = bad
        raise DocumentsError(file, why, line=line, where=where)
    return value


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _text_problem(s: str) -> str | None:
    if "\x00" in s:
        return "holds the escape \\u0000, which jsonb refuses"
    if _SURROGATE_RE.search(s):
        return "holds an unpaired UTF-16 surrogate escape, which jsonb refuses"
    return None


def _unstorable(doc: dict[str, Any]) -> tuple[str, str] | None:
    """The first field jsonb would refuse (its path, and why), or None. Iterative: no recursion limit."""
    stack: list[tuple[str, Any]] = [("", doc)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                here = f"{where}.{key}" if where else key
                problem = _text_problem(key)
                if problem:
                    return here, f"the key {problem}"
                stack.append((here, value))
        elif isinstance(node, list):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(node))
        elif isinstance(node, str):
            problem = _text_problem(node)
            if problem:
                return where, f"the value {problem}"
    return None


def read_documents(source: Path, files: list[Path] | None = None) -> Iterator[Document]:
    """Every document of the input, in order, parsed and checked (see :func:`parse_document`)."""
    for f in files if files is not None else input_files(source):
        if f.stat().st_size == 0:
            raise DocumentsError(f, "is empty: it holds no document")
        if source.is_dir():
            yield Document(f, 1, *_one_file(f))
            continue
        with open(f, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise DocumentsError(f, f"not UTF-8 (byte {exc.start + 1} of the line)", line=number) from None
                if number == 1:
                    text = text.removeprefix("\ufeff")
                text = text.rstrip("\r\n")
                if not text.strip():
                    continue
                yield Document(f, number, text, parse_document(f, number, text))


def _one_file(f: Path) -> tuple[str, dict[str, Any]]:
    try:
        text = f.read_bytes().decode("utf-8").removeprefix("\ufeff").rstrip()
    except UnicodeDecodeError as exc:
        line = f.read_bytes()[: exc.start].count(b"\n") + 1
        raise DocumentsError(f, "not UTF-8", line=line) from None
    if not text:
        raise DocumentsError(f, "is empty: it holds no document")
    return text, parse_document(f, 1, text)


def document_texts(plan: DocumentsPlan) -> Iterator[tuple[int, str]]:
    """``(row id, text)`` of the documents the run loads (ids from 1, in input order), as the scan read them.

    The input is hashed again first: a file changed since the run was planned is refused (its rows would
    carry a fingerprint that is not theirs).
    """
    source = Path(plan.source)
    if not source.exists():
        raise DocumentsError(source, "no longer exists (it was there when the run was planned)")
    files = input_files(source)
    sha, _ = fingerprint_of(source, files)
    if sha != plan.fingerprint.sha256:
        raise DocumentsError(source, f"changed since the run was planned (sha256 {plan.fingerprint.short}... then, {sha[:12]}... now)")
    row = 0
    for f in files:
        if row >= plan.loaded:
            return
        if source.is_dir():
            row += 1
            yield row, _one_file(f)[0]
            continue
        with open(f, "rb") as fh:  # split on \n only, as read_documents does
            for number, raw in enumerate(fh, start=1):
                text = raw.decode("utf-8").rstrip("\r\n")
                if number == 1:
                    text = text.removeprefix("\ufeff")
                if not text.strip():
                    continue
                row += 1
                yield row, text
                if row >= plan.loaded:
                    return
