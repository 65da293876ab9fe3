"""The project's texts say what a check does and why, as it is now: none narrates how it came to be.

The texts under ``include/`` (band reasons, gates, descriptions, the calibration records' why) are shown to
users in the report and in ``--help``; they point to their evidence (``recorded/``, ``docs/``) instead of
telling the story of a working session. So no text names a working session ("sitting"), an issue by its
number, a boot id, a host id that ``recorded/hosts.json`` lists, or a commit ("at 16f99b7", "commit
e1bcfbf"). Recorded data may name hosts and commits: in a JSON file, the value of a key in ``DATA_KEYS``
is data, not text (a run's host, a record's source folders); a 40-hex revision or a sha256 fingerprint that
no "commit"/"at" precedes is data too.

``SCANNED`` holds the folders read; widening the scan to the whole repository is a matter of adding to it
(``recorded/`` stays out, and the rows of the methods' evidence tables, ``EVIDENCE_TABLES``, may name hosts
and commits).
"""

from __future__ import annotations

import bisect
import fnmatch
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The folders (or files) whose texts are read, relative to the repository.
SCANNED: tuple[str, ...] = ("include",)
#: Never read: recorded data, which names the hosts and commits it came from by design.
EXCLUDED: tuple[str, ...] = ("recorded",)
#: Markdown files whose table rows (lines starting with ``|``) are evidence and may name hosts and commits.
EVIDENCE_TABLES: tuple[str, ...] = ("docs/*.md",)  # fnmatch: * crosses folders
#: JSON keys whose string values are recorded data, not text: not read.
DATA_KEYS = frozenset({"host", "host_boot_id", "host_machine_id", "source", "git_revision"})

SESSION = re.compile(r"\bsittings?\b", re.IGNORECASE)
ISSUE = re.compile(r"\bissues?\s+#?\d+\b", re.IGNORECASE)
BOOT_ID = re.compile(r"\bboot[ -]?ids?\b", re.IGNORECASE)
_HEX = r"(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}"  # a digit and a letter: not a number, not a word
#: A commit: a 7-40 hex token right after commit/commits/revision/at, or right before "commit".
COMMIT = re.compile(
    rf"\b(?:commits?|revision|at)\s+`?({_HEX})(?![0-9A-Za-z_])|(?<![0-9A-Za-z_])({_HEX})`?(?:'s)?\s+commit\b", re.IGNORECASE
)
#: "host 1a2b3c4d": a host named by an 8-hex id, listed or not.
HOST_NAMED = re.compile(r"\bhosts?\s+`?(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{8}(?![0-9A-Za-z_])")


def listed_hosts() -> list[str]:
    """The host ids ``recorded/hosts.json`` lists (its folders' ``host``)."""
    folders = json.loads((ROOT / "recorded" / "hosts.json").read_text(encoding="utf-8"))["folders"]
    return sorted({str(f["host"]) for f in folders.values() if f.get("host")})


def host_pattern(hosts: list[str]) -> re.Pattern[str]:
    """Any of ``hosts`` as a whole token (an 8-hex id also as a full boot id's prefix: ``0ded6d5b-aed3-...``)."""
    return re.compile("(?<![0-9A-Za-z_-])(" + "|".join(re.escape(h) for h in hosts) + ")(?![0-9A-Za-z_])")


def offences(text: str, hosts: re.Pattern[str], evidence_row: bool = False) -> Iterator[str]:
    """Each forbidden word in one line of text; an evidence table's row may name hosts and commits."""
    for rule in (SESSION, ISSUE, BOOT_ID):
        yield from (m.group(0) for m in rule.finditer(text))
    if evidence_row:
        return
    for rule in (hosts, HOST_NAMED, COMMIT):
        yield from (m.group(0) for m in rule.finditer(text))


def _json_strings(node: object, key: str | None = None) -> Iterator[str]:
    """The string values of a JSON document in document order, leaving out those under ``DATA_KEYS``."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _json_strings(v, k)
    elif isinstance(node, list):
        for v in node:
            yield from _json_strings(v, key)
    elif isinstance(node, str) and key not in DATA_KEYS:
        yield node


def _json_lines(raw: str) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of each string value of a JSON file, the line where its encoded form starts."""
    newlines = [i for i, c in enumerate(raw) if c == "\n"]
    cursor = 0
    for s in _json_strings(json.loads(raw)):
        found = -1
        for ascii_only in (False, True):
            found = raw.find(json.dumps(s, ensure_ascii=ascii_only), cursor)
            if found >= 0:
                break
        if found < 0:
            found = cursor
        cursor = max(cursor, found)
        yield bisect.bisect_right(newlines, found - 1) + 1, s


def _is_evidence(rel: str) -> bool:
    return any(fnmatch.fnmatchcase(rel, g) for g in EVIDENCE_TABLES)


def scan_file(path: Path, rel: str, hosts: re.Pattern[str]) -> list[str]:
    """``rel:line: 'word'`` for each forbidden word in one file (nothing for a file that is not text)."""
    try:
        raw = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return []
    if path.suffix == ".json":
        lines: Iterator[tuple[int, str]] = _json_lines(raw)
    else:
        lines = enumerate(raw.splitlines(), start=1)
    evidence = path.suffix == ".md" and _is_evidence(rel)
    out: list[str] = []
    for number, text in lines:
        row = evidence and text.lstrip().startswith("|")
        out += [f"{rel}:{number}: {word!r}" for word in offences(text, hosts, evidence_row=row)]
    return out


def scan(root: Path, scanned: tuple[str, ...], hosts: re.Pattern[str]) -> list[str]:
    """Every offence in the scanned folders of ``root``, ``EXCLUDED`` left out."""
    out: list[str] = []
    for top in scanned:
        base = root / top
        for path in sorted([base] if base.is_file() else base.rglob("*")):
            rel = path.relative_to(root).as_posix()
            if not path.is_file() or any(rel == e or rel.startswith(e + "/") for e in EXCLUDED):
                continue
            out += scan_file(path, rel, hosts)
    return out


def test_hosts_json_lists_hosts() -> None:
    """The host rule has ids to look for (else it would pass whatever the texts say)."""
    assert any(re.fullmatch(r"[0-9a-f]{8}", h) for h in listed_hosts())


def test_the_scanned_texts_narrate_nothing() -> None:
    found = scan(ROOT, SCANNED, host_pattern(listed_hosts()))
    assert not found, "texts that narrate how they came to be (say what and why, point to the evidence):\n" + "\n".join(found)


@pytest.mark.parametrize(
    "text",
    [
        "Observed 1.14 in this sitting's smoke runs",
        "SITTINGS 31 and 32",
        "the fixed-time ratio (issue 26)",
        "Issue #37: interleaving",
        "(boot id 1a2b3c4d)",
        "boot-id prefix",
        "runs of commit 16f99b7 on 2 cores",
        "a fresh clone at e1bcfbf, quiet",
        "from 4e4146c's commit",
        "on host 9f8e7d6c, one start",
    ],
)
def test_a_narrating_text_is_caught(text: str) -> None:
    assert list(offences(text, host_pattern(["host-x"])))


@pytest.mark.parametrize(
    "text",
    [
        "the seed's 1-2 % for facts; issues of the seed's printing",
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 of the input",
        "integrity sha512-9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "at 1000000 rows, at 20,000 products",
        "the cache at decade boundaries",
        "recorded/local-laptop holds the runs",
    ],
)
def test_plain_text_and_data_pass(text: str) -> None:
    assert not list(offences(text, host_pattern(["host-x"])))


def test_the_scan_names_file_line_and_word_and_reads_past_data(tmp_path: Path) -> None:
    """A JSON text is reported at its line; a listed host under a data key, an excluded folder and a
    markdown evidence row are not."""
    host = next(h for h in listed_hosts() if re.fullmatch(r"[0-9a-f]{8}", h))
    (tmp_path / "include").mkdir()
    doc = {"reason": "inside", "runs": [{"host": f"{host}-aed3", "git_revision": "16f99b7" + "0" * 33}], "why": f"seen on {host}"}
    (tmp_path / "include" / "x.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    (tmp_path / "include" / "a.yaml").write_text("a: 1\n# measured in sitting 9\n", encoding="utf-8")
    (tmp_path / "recorded").mkdir()
    (tmp_path / "recorded" / "r.md").write_text(f"sitting 3 on {host}\n", encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "m.md").write_text(f"| run | {host} |\nran on {host}\n", encoding="utf-8")
    found = scan(tmp_path, ("include", "recorded", "docs"), host_pattern([host]))
    json_line = next(i for i, line in enumerate(json.dumps(doc, indent=2).splitlines(), 1) if '"why"' in line)
    assert sorted(found) == [f"docs/m.md:2: {host!r}", "include/a.yaml:2: 'sitting'", f"include/x.json:{json_line}: {host!r}"]
