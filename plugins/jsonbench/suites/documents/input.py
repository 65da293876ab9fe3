"""A user's documents scanned into a :class:`~jsonbench.suites.documents.plan.DocumentsPlan`, before any engine starts.

:func:`scan` reads all of the input once (:mod:`.read`), profiles the documents the run loads
(:mod:`.profile`), and either returns the plan or raises
:class:`~jsonbench.suites.documents.plan.DocumentsError`, whose message names the file, the line and
the field. It refuses, before anything is loaded anywhere:

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
read and to update (given, or found: :func:`~.profile.discover_keys`), each update's new value, and the
typed twin's columns (:func:`~.profile.twin_columns`, seed 000's column design derived from the
top-level scalars).
"""

from __future__ import annotations

import difflib
import json
import math
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonbench import paths
from jsonbench.errors import ConfigError
from jsonbench.suites.documents.plan import PARAM, DocumentsError, DocumentsPlan, Fingerprint, KeyPath, UpdateKey
from jsonbench.suites.documents.profile import DISTINCT_CAP, KeyStats, discover_keys, scalar_type, twin_columns
from jsonbench.suites.documents.read import available_memory, check_fits, fingerprint_of, input_files, read_documents, resolve_source

#: The sample the project ships, measured when the suite is asked for without ``documents``.
SAMPLE = "examples/orders.jsonl"


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
                if scalar_type(v) not in ("object", "array"):
                    ps.scalar += 1
                    if v is not None and len(ps.values) <= DISTINCT_CAP and not (isinstance(v, float) and not math.isfinite(v)):
                        ps.values[(scalar_type(v), v)] += 1
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
