"""What the documents suites measure, as one value: the input's fingerprint, the keys, the typed twin.

A :class:`DocumentsPlan` is made once, by the scan before any engine starts
(:func:`jsonbench.suites.documents.input.scan`), and travels in the cell's ``scale_params``
(:meth:`DocumentsPlan.to_params`): every published row carries the input's fingerprint, and a resumed
run with another input is another cell. :class:`DocumentsError` is how every step refuses an input,
naming the file, the line and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonbench.dataset.measurement import INPUT_FINGERPRINT
from jsonbench.errors import ConfigError

#: The run parameter that names the input (also the ``field`` of every :class:`DocumentsError`).
PARAM = "documents"


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
