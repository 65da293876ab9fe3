"""The project's texts say what a check does and why, as it is now: none narrates how it came to be.

Code, comments, tests, ``--help``, docs and the texts under ``include/`` (band reasons, gates, descriptions,
the calibration records' why, shown to users in the report) point to their evidence (``recorded/``,
``docs/methods/``) instead of telling the story of a working session. So no text names a working session
("sitting", also inside a name), an issue by its number, a host by its boot id (the kernel's ``boot_id``
is named as such), a host id that ``recorded/hosts.json`` lists, or a commit ("at 16f99b7", "commit
e1bcfbf"). Recorded data may name hosts and commits: in a JSON file, the value of a key in ``DATA_KEYS``
is data, not text (a run's host, a record's source folders); a 40-hex revision or a sha256 fingerprint that
no "commit"/"at" precedes is data too.

The scan reads every text file git tracks. ``recorded/`` may name hosts and commits (it is the data), but
its prose (``README.md``, the texts of ``hosts.json``) names no working session and no issue either; the
rows of the methods' evidence tables, ``EVIDENCE_TABLES``, may name hosts and commits; this file names
what it forbids and is not read.
"""

from __future__ import annotations

import bisect
import fnmatch
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Recorded data, which names the hosts and commits it came from by design: read for sessions and issues only.
EXCLUDED: tuple[str, ...] = ("recorded",)
#: Files that name what the scan forbids: this test, which plants examples of each word.
EXEMPT: tuple[str, ...] = ("tests/unit/test_project_words.py",)
#: Markdown files whose table rows (lines starting with ``|``) are evidence and may name hosts and commits.
EVIDENCE_TABLES: tuple[str, ...] = ("docs/methods/*.md",)  # fnmatch: * crosses folders
#: JSON keys whose string values are recorded data, not text: not read.
DATA_KEYS = frozenset({"host", "host_boot_id", "host_machine_id", "source", "git_revision"})

SESSION = re.compile(r"(?<![a-z])sittings?(?![a-z])", re.IGNORECASE)  # also inside a name: laptop_sitting31
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


def offences(text: str, hosts: re.Pattern[str], evidence_row: bool = False, data: bool = False) -> Iterator[str]:
    """Each forbidden word in one line of text; an evidence table's row may name hosts and commits, and
    recorded data (``data``) may also name boot ids: only sessions and issues are forbidden there."""
    for rule in (SESSION, ISSUE) if data else (SESSION, ISSUE, BOOT_ID):
        yield from (m.group(0) for m in rule.finditer(text))
    if evidence_row or data:
        return
    for rule in (hosts, HOST_NAMED, COMMIT):
        yield from (m.group(0) for m in rule.finditer(text))


def _json_strings(node: object, key: str | None = None) -> Iterator[str]:
    """The keys and string values of a JSON document in document order, leaving out the values under ``DATA_KEYS``."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield k
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


def _under(rel: str, tops: tuple[str, ...]) -> bool:
    return any(rel == t or rel.startswith(t + "/") for t in tops)


def scan_file(path: Path, rel: str, hosts: re.Pattern[str]) -> list[str]:
    """``rel:line: 'word'`` for each forbidden word in one file (nothing for a file that is not text)."""
    try:
        raw = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return []
    lines: Iterator[tuple[int, str]]
    if path.suffix == ".json":
        lines = _json_lines(raw)
    else:
        lines = enumerate(raw.splitlines(), start=1)
    evidence = path.suffix == ".md" and _is_evidence(rel)
    data = _under(rel, EXCLUDED)
    out: list[str] = []
    for number, text in lines:
        row = evidence and text.lstrip().startswith("|")
        out += [f"{rel}:{number}: {word!r}" for word in offences(text, hosts, evidence_row=row, data=data)]
    return out


def tracked_files(root: Path) -> list[str]:
    """The files git tracks under ``root``, relative to it."""
    listing = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], check=True, capture_output=True, text=True).stdout
    return sorted(f for f in listing.split("\0") if f)


def scan(root: Path, files: list[str], hosts: re.Pattern[str]) -> list[str]:
    """Every offence in ``files`` (relative to ``root``), ``EXEMPT`` left out."""
    out: list[str] = []
    for rel in files:
        path = root / rel
        if not path.is_file() or _under(rel, EXEMPT):
            continue
        out += scan_file(path, rel, hosts)
    return out


def test_hosts_json_lists_hosts() -> None:
    """The host rule has ids to look for (else it would pass whatever the texts say)."""
    assert any(re.fullmatch(r"[0-9a-f]{8}", h) for h in listed_hosts())


def test_the_scanned_texts_narrate_nothing() -> None:
    found = scan(ROOT, tracked_files(ROOT), host_pattern(listed_hosts()))
    assert not found, "texts that narrate how they came to be (say what and why, point to the evidence):\n" + "\n".join(found)


@pytest.mark.parametrize(
    "text",
    [
        "Observed 1.14 in this sitting's smoke runs",
        "SITTINGS 31 and 32",
        "sitting40 = folders[0]",
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
        "a babysitting process",
    ],
)
def test_plain_text_and_data_pass(text: str) -> None:
    assert not list(offences(text, host_pattern(["host-x"])))


def test_the_scan_names_file_line_and_word_and_reads_past_data(tmp_path: Path) -> None:
    """A JSON text is reported at its line; a listed host under a data key, in recorded data or in a
    methods' evidence row is not, but a session named in recorded data is; exempt and pending files are
    not read."""
    host = next(h for h in listed_hosts() if re.fullmatch(r"[0-9a-f]{8}", h))
    (tmp_path / "include").mkdir()
    doc = {
        "reason": "inside",
        "laptop_sitting31": [],
        "runs": [{"host": f"{host}-aed3", "git_revision": "16f99b7" + "0" * 33}],
        "why": f"seen on {host}",
    }
    (tmp_path / "include" / "x.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    (tmp_path / "include" / "a.yaml").write_text("a: 1\n# measured in sitting 9\n", encoding="utf-8")
    (tmp_path / "recorded").mkdir()
    (tmp_path / "recorded" / "r.md").write_text(f"sitting 3 on {host}, boot id {host}\n", encoding="utf-8")
    (tmp_path / "docs" / "methods").mkdir(parents=True)
    (tmp_path / "docs" / "methods" / "m.md").write_text(f"| run | {host} |\nran on {host}\n", encoding="utf-8")
    (tmp_path / "docs" / "n.md").write_text(f"| run | {host} |\n", encoding="utf-8")
    (tmp_path / EXEMPT[0]).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / EXEMPT[0]).write_text("sitting 4\n", encoding="utf-8")
    files = ["include/x.json", "include/a.yaml", "recorded/r.md", "docs/methods/m.md", "docs/n.md", EXEMPT[0]]
    found = scan(tmp_path, files, host_pattern([host]))
    json_line = next(i for i, line in enumerate(json.dumps(doc, indent=2).splitlines(), 1) if '"why"' in line)
    key_line = next(i for i, line in enumerate(json.dumps(doc, indent=2).splitlines(), 1) if "sitting31" in line)
    assert sorted(found) == sorted(
        [
            f"docs/methods/m.md:2: {host!r}",
            f"docs/n.md:1: {host!r}",
            "include/a.yaml:2: 'sitting'",
            f"include/x.json:{key_line}: 'sitting'",
            f"include/x.json:{json_line}: {host!r}",
            "recorded/r.md:1: 'sitting'",
        ]
    )


def test_the_scan_reads_what_git_tracks() -> None:
    """The scan's list is the repository's, not one folder's: code, tests, docs and recorded data."""
    files = tracked_files(ROOT)
    assert {"README.md", "tests/unit/test_project_words.py", "recorded/hosts.json"} <= set(files)
    assert any(f.startswith("plugins/jsonbench/") for f in files) and any(f.startswith("include/") for f in files)
