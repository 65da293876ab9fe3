"""A user's documents: read, checked, fingerprinted and profiled in pure Python, before any engine starts.

The input is a JSON Lines file (one document per line; blank lines are skipped) or a folder of
``.json`` files (one document per file, taken in file-name order). :func:`scan` reads all of it once
and either returns a :class:`DocumentsPlan` or raises :class:`DocumentsError`, whose message names the
file, the line and the field. It refuses, before anything is loaded anywhere:

* a file or folder that does not exist, an empty file, a folder with no ``.json`` file, an input with
  no document;
* an input larger than the free disk of the engines' scratch folder or the available memory;
* a line that is not UTF-8 or not JSON (the line and column of the parser's complaint);
* a document that is not a JSON object;
* what PostgreSQL's ``jsonb`` refuses although Python's parser takes it: ``NaN`` and ``Infinity``, the
  escape ``\\u0000``, unpaired surrogates; and a key given twice in one object (``json`` would keep both,
  ``jsonb`` the last: the two tables would no longer hold the same documents);
* a key path to read or update that no loaded document has (with the closest key it does have).

The plan carries the input's fingerprint (sha256 of the content, document count, bytes), the keys to
read and to update (given, or found: :func:`discover_keys`), each update's new value, and the typed
twin's columns (:func:`twin_columns`, seed 000's column design derived from the top-level scalars).
It travels in the cell's ``scale_params`` (:meth:`DocumentsPlan.to_params`), so every published row
carries the fingerprint, and a resumed run with another input is another cell.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from jsonbench import paths
from jsonbench.dataset.measurement import INPUT_FINGERPRINT
from jsonbench.errors import ConfigError

#: The run parameter that names the input (also the ``field`` of every :class:`DocumentsError`).
PARAM = "documents"
#: The sample the project ships, measured when the suite is asked for without ``documents``.
SAMPLE = "examples/orders.jsonl"
#: PostgreSQL's TOAST_TUPLE_THRESHOLD on 8 kB pages: a row larger than this is compressed, then moved out of line.
TOAST_THRESHOLD = 2032
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
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


class DocumentsError(ConfigError):
    """The documents cannot be measured: ``path`` is the file, ``line`` its line (0: the whole input), ``where`` the field."""

    def __init__(self, path: str | Path, message: str, *, line: int = 0, where: str = "", param: str = PARAM) -> None:
        place = f"{path}" + (f", line {line}" if line else "") + (f", field {where}" if where else "")
        super().__init__(param, f"{place}: {message}")
        self.path, self.line, self.where = str(path), line, where


@dataclass(frozen=True)
class Fingerprint:
    """What identifies an input: the sha256 of its content, its documents and its bytes."""

    sha256: str
    documents: int
    bytes: int

    @property
    def short(self) -> str:
        return self.sha256[:12]


@dataclass(frozen=True)
class KeyPath:
    """A key path: dot-separated names from the top of the document (``status``, ``shipping.city``)."""

    parts: tuple[str, ...]

    @classmethod
    def parse(cls, text: str, param: str) -> KeyPath:
        parts = tuple(text.split("."))
        if not text or any(not p for p in parts):
            raise ConfigError(param, f"{text!r} is not a key path: names separated by single dots, e.g. status or shipping.city")
        return cls(parts)

    @property
    def text(self) -> str:
        return ".".join(self.parts)

    @property
    def top_level(self) -> bool:
        return len(self.parts) == 1

    def sqlite(self) -> str:
        """The path as SQLite's JSON functions take it: ``$."a"."b"`` (each name quoted)."""
        return "$" + "".join('."' + p.replace("\\", "\\\\").replace('"', '\\"') + '"' for p in self.parts)

    def get(self, doc: dict[str, Any]) -> tuple[bool, Any]:
        """``(found, value)`` of this path in ``doc``."""
        node: Any = doc
        for part in self.parts:
            if not isinstance(node, dict) or part not in node:
                return False, None
            node = node[part]
        return True, node


@dataclass(frozen=True)
class TwinColumn:
    """One typed column of the twin: the document's top-level key, and its type."""

    key: str
    type: str


@dataclass(frozen=True)
class UpdateKey:
    """A key the update workload changes, and the value it writes (JSON text): the key's most common value."""

    path: str
    value: str


@dataclass(frozen=True)
class DocumentsPlan:
    """What the documents suites measure: the input, its fingerprint, the keys and the twin (JSON in ``scale_params``)."""

    source: str
    fingerprint: Fingerprint
    #: Documents the run loads: the first ``max_documents`` of the input (all when the scale gives none).
    loaded: int
    read_keys: tuple[str, ...]
    update_keys: tuple[UpdateKey, ...]
    twin: tuple[TwinColumn, ...]
    #: Whether the keys were given (``given``) or found by the scan (``found``).
    keys_from: str = "found"

    @property
    def name(self) -> str:
        return Path(self.source).name

    def twin_column(self, path: str) -> TwinColumn | None:
        """The twin column holding ``path`` (None for a nested path, or a key left in ``_rest``)."""
        if "." in path:  # a path of two keys, never a top-level key with a dot in its name
            return None
        return next((c for c in self.twin if c.key == path), None)

    def to_params(self) -> dict[str, Any]:
        """The plan as flat ``scale_params`` entries (JSON values); :meth:`from_params` reads them back."""
        return {
            PARAM: self.source,
            INPUT_FINGERPRINT: self.fingerprint.sha256,
            "input_documents": self.fingerprint.documents,
            "input_bytes": self.fingerprint.bytes,
            "documents_loaded": self.loaded,
            "read_keys": list(self.read_keys),
            "update_keys": [[u.path, u.value] for u in self.update_keys],
            "twin": [[c.key, c.type] for c in self.twin],
            "keys_from": self.keys_from,
        }

    @classmethod
    def from_params(cls, p: dict[str, Any]) -> DocumentsPlan:
        return cls(
            source=str(p[PARAM]),
            fingerprint=Fingerprint(str(p[INPUT_FINGERPRINT]), int(p["input_documents"]), int(p["input_bytes"])),
            loaded=int(p["documents_loaded"]),
            read_keys=tuple(str(k) for k in p["read_keys"]),
            update_keys=tuple(UpdateKey(str(k), str(v)) for k, v in p["update_keys"]),
            twin=tuple(TwinColumn(str(k), str(t)) for k, t in p["twin"]),
            keys_from=str(p.get("keys_from", "found")),
        )


@dataclass(frozen=True)
class Document:
    """One document as read: where it came from, its text as stored, and its parsed value."""

    file: Path
    line: int
    text: str
    value: dict[str, Any]


# -- reading --------------------------------------------------------------------------------------


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


# -- profiling ------------------------------------------------------------------------------------


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
        kind = _scalar_type(value)
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


def _scalar_type(value: Any) -> str:
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


def _key_list(value: Any, param: str) -> tuple[KeyPath, ...] | None:
    if value in (None, "", []):
        return None
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(param, f"must be a list of key paths (e.g. status,shipping.city), got {value!r}")
    if len(set(value)) != len(value):
        raise ConfigError(param, f"lists a key path twice: {value!r}")
    return tuple(KeyPath.parse(v, param) for v in value)


@dataclass
class _PathStats:
    found: int = 0
    scalar: int = 0
    values: Counter[tuple[str, Any]] = field(default_factory=Counter)


def scan(
    value: Any,
    *,
    read_keys: Any = None,
    update_keys: Any = None,
    max_documents: int | None = None,
    free_disk: int | None = None,
    free_memory: int | None = None,
) -> DocumentsPlan:
    """Read and check the whole input named by ``value``; profile its first ``max_documents`` documents.

    Raises :class:`DocumentsError` (a :class:`~jsonbench.errors.ConfigError` of field ``documents``, or
    ``read_keys`` / ``update_keys`` for a key no loaded document has) naming the file, line and field.
    ``free_disk`` and ``free_memory`` default to this machine's (the engines' scratch folder's free disk,
    ``MemAvailable``); tests pass their own.
    """
    source = resolve_source(value)
    files = input_files(source)
    size = sum(f.stat().st_size for f in files)
    if size == 0:
        raise DocumentsError(source, "is empty: it holds no document")
    disk = free_disk if free_disk is not None else shutil.disk_usage(_existing(paths.scratch_dir())).free
    check_fits(source, size, disk, free_memory if free_memory is not None else available_memory())
    reads = _key_list(read_keys, "read_keys")
    updates = _key_list(update_keys, "update_keys")
    wanted = {k.text: k for k in (*(reads or ()), *(updates or ()))}

    sha, total = fingerprint_of(source, files)
    stats: dict[str, KeyStats] = {}
    path_stats = {k: _PathStats() for k in wanted}
    count = 0
    limit = max_documents if max_documents and max_documents > 0 else None
    for doc in read_documents(source, files):
        count += 1
        if limit is not None and count > limit:
            continue  # checked, counted and hashed, not profiled: the run does not load it
        for key, v in doc.value.items():
            stats.setdefault(key, KeyStats(first_seen=len(stats))).add(v)
        for text, kp in wanted.items():
            found, v = kp.get(doc.value)
            if found:
                ps = path_stats[text]
                ps.found += 1
                if _scalar_type(v) not in ("object", "array"):
                    ps.scalar += 1
                    if v is not None and len(ps.values) <= DISTINCT_CAP and not (isinstance(v, float) and not math.isfinite(v)):
                        ps.values[(_scalar_type(v), v)] += 1
    if count == 0:
        raise DocumentsError(source, "is empty: it holds no document (only blank lines)")
    loaded = min(count, limit) if limit is not None else count
    where = f"{source} (the first {loaded:,} documents the scale loads)" if loaded < count else str(source)
    for param, keys in (("read_keys", reads), ("update_keys", updates)):
        for i, kp in enumerate(keys or ()):
            ps = path_stats[kp.text]
            if ps.found == 0:
                close = difflib.get_close_matches(kp.parts[-1], list(stats), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; top-level keys: {', '.join(list(stats)[:12])}"
                raise DocumentsError(where, f"no document has the key path {kp.text!r}{hint}", where=f"{param}[{i}]", param=param)
            if param == "update_keys" and ps.scalar == 0:
                raise DocumentsError(
                    where, f"{kp.text!r} is an object or array in every document; update a scalar key", where=f"{param}[{i}]", param=param
                )
    found_reads, found_updates = discover_keys(stats)
    read_paths = tuple(k.text for k in reads) if reads else found_reads
    update_paths = tuple(k.text for k in updates) if updates else found_updates
    if not read_paths or not update_paths:
        raise DocumentsError(
            where,
            "no top-level key holds a scalar (string, number, boolean) in the documents: name the keys with read_keys and update_keys",
        )
    update_values: list[UpdateKey] = []
    for text in update_paths:
        counter = path_stats[text].values if text in path_stats else stats[text].values
        update_values.append(UpdateKey(text, _update_value(counter)))
    return DocumentsPlan(
        source=str(source),
        fingerprint=Fingerprint(sha, count, total),
        loaded=loaded,
        read_keys=read_paths,
        update_keys=tuple(update_values),
        twin=twin_columns(stats),
        keys_from="given" if (reads or updates) else "found",
    )


def _update_value(values: Counter[tuple[str, Any]]) -> str:
    """The value an update writes (JSON text): the key's most common value (ties: the smallest JSON text), ``null`` when it has none."""
    if not values:
        return "null"
    top = max(values.values())
    return min(json.dumps(v, ensure_ascii=False) for (_, v), n in values.items() if n == top)


def _existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


_SCANNED: dict[tuple[Any, ...], DocumentsPlan] = {}


def plan_documents(params: dict[str, Any], max_documents: int | None) -> DocumentsPlan:
    """The documents of a run's parameters (``documents``, ``read_keys``, ``update_keys``), scanned; the sample when none is named.

    Scanned once per process for the same file (path, size, modification time) and parameters: the
    command line's preview and the plan both resolve the run's parameters.
    """
    value = params.get(PARAM) or SAMPLE
    source = resolve_source(value)
    stat = source.stat()
    key = (str(source), stat.st_size, stat.st_mtime_ns, repr(params.get("read_keys")), repr(params.get("update_keys")), max_documents)
    if key not in _SCANNED:
        _SCANNED[key] = scan(source, read_keys=params.get("read_keys"), update_keys=params.get("update_keys"), max_documents=max_documents)
    return _SCANNED[key]


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
