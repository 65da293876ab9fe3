"""Measure the json_vs_jsonb documents against seed 001's published statistics.

``./bin/jsonbench-dev fit-documents --dsn "host=/tmp/sock user=postgres dbname=postgres"``
connects to a server (a libpq conninfo or URI; ``$JSONBENCH_FIT_DSN`` when ``--dsn`` is left out),
or, with ``--bin-dir /usr/lib/postgresql/15/bin`` (or ``--build pg17``, the npm alias of a pinned build
fetched by ``./bin/setup``), starts a throwaway server of its own (data checksums on, unix
socket only, as the unprivileged ``postgres`` user when run as root) and removes it afterwards.

It loads ``include/sql/json_vs_jsonb/setup.sql`` and measures each shape exactly as the suite does,
with the suite's own SQL files: ``source.sql`` generates ``N`` rows, ``source_stats.sql`` gives the
average input length and the json / jsonb datum sizes before compression, and for each layout, type
and compression method (pglz, and lz4 when the build has it) ``create_doc.sql``, ``load_doc.sql``,
``vacuum.sql`` and ``stored_stats.sql`` give the stored sizes and ``pg_total_relation_size`` the
table size. It prints the measured figures next to the seed's as a markdown table (``--json`` for
the raw numbers). A measuring tool only: it changes nothing in the project.

Sizes are per-row averages of deterministic documents, so a few thousand rows per shape fit them;
the small shapes' table ratios include the tuple and page overhead, so give them enough rows that
page fill is representative (``--small-rows 20000``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from jsonbench import paths
from jsonbench.cli import UsageError
from jsonbench.engines.npm_builds import npm_build
from jsonbench.sqlfiles import compose, load_sql, statements

SUITE = "json_vs_jsonb"
LAYOUTS = ("compact", "pretty")
TYPES = ("json", "jsonb")
METHODS = ("pglz", "lz4")

#: Shape -> (generator function, which row count it takes), as in the suite's ``SHAPES``.
SHAPES: dict[str, tuple[str, str]] = {
    "small": ("jvj_doc_small", "small"),
    "small_long_keys": ("jvj_doc_small_long_keys", "small"),
    "medium": ("jvj_doc_medium", "medium"),
    "large": ("jvj_doc_large", "large"),
    "flat": ("jvj_doc_flat", "large"),
    "array": ("jvj_doc_array", "large"),
}

#: Seed 001's figures, keyed (shape, layout, figure): ``input`` average input bytes, ``json`` /
#: ``jsonb`` average datum bytes before compression, ``pglz`` / ``lz4`` jsonb-vs-json table size.
#: "did not move" (lz4 for the small and medium rows) is the pglz figure.
SEED: dict[tuple[str, str, str], float] = {
    ("small", "compact", "input"): 203.4,
    ("small", "pretty", "input"): 248.4,
    ("medium", "compact", "input"): 1517.9,
    ("medium", "pretty", "input"): 2381.9,
    ("large", "compact", "input"): 20532.0,
    ("flat", "compact", "input"): 21129.0,
    ("array", "compact", "input"): 20692.3,
    ("medium", "compact", "json"): 1521.9,
    ("medium", "compact", "jsonb"): 2071.9,
    ("medium", "pretty", "json"): 2385.9,
    ("array", "compact", "json"): 20696.3,
    ("array", "compact", "jsonb"): 54701.6,
    ("small", "compact", "pglz"): 1.178,
    ("small", "pretty", "pglz"): 0.964,
    ("small_long_keys", "compact", "pglz"): 1.063,
    ("medium", "compact", "pglz"): 0.834,
    ("medium", "pretty", "pglz"): 1.166,
    ("large", "compact", "pglz"): 1.330,
    ("large", "pretty", "pglz"): 1.330,
    ("flat", "compact", "pglz"): 0.774,
    ("flat", "pretty", "pglz"): 0.945,
    ("array", "compact", "pglz"): 1.032,
    ("array", "pretty", "pglz"): 1.019,
    ("array", "compact", "lz4"): 1.409,
    ("large", "compact", "lz4"): 1.222,
    ("small", "compact", "lz4"): 1.178,
    ("medium", "compact", "lz4"): 0.834,
}

#: The tolerances the documents were fitted to: sizes within 1 %, table-size changes within 2 percentage points.
SIZE_TOLERANCE = 0.01
RATIO_TOLERANCE = 0.02


@dataclass
class Stored:
    """One loaded and vacuumed table: average stored datum, compressed share, total size (heap + TOAST + indexes)."""

    avg_stored_bytes: float
    compressed_share: float
    table_bytes: int


@dataclass
class Layout:
    """One shape in one layout: input and datum sizes, and the stored tables per ``<type>.<method>``."""

    avg_input_bytes: float
    datum_json: float
    datum_jsonb: float
    stored: dict[str, Stored] = field(default_factory=dict)

    def ratio(self, method: str) -> float | None:
        json_, jsonb = self.stored.get(f"json.{method}"), self.stored.get(f"jsonb.{method}")
        return jsonb.table_bytes / json_.table_bytes if json_ and jsonb else None


@dataclass
class Shape:
    rows: int
    seconds: float
    layouts: dict[str, Layout] = field(default_factory=dict)


def _run(conn: Any, name: str, params: dict[str, Any] | None = None, **identifiers: str) -> None:
    for stmt in statements(load_sql(SUITE, name)):
        conn.execute(compose(stmt, **identifiers), params)


def _one(conn: Any, name: str, **identifiers: str) -> tuple[Any, ...]:
    row = conn.execute(compose(load_sql(SUITE, name), **identifiers)).fetchone()
    assert row is not None
    return tuple(row)


def has_lz4(conn: Any) -> bool:
    """Whether the server accepts ``COMPRESSION lz4`` (a build without --with-lz4 refuses it)."""
    try:
        conn.execute("CREATE TEMP TABLE jvj_fit_lz4_probe (t text COMPRESSION lz4)")
    except Exception:  # noqa: BLE001 - psycopg's FeatureNotSupported, or any refusal: no lz4
        return False
    conn.execute("DROP TABLE jvj_fit_lz4_probe")
    return True


def measure_shape(conn: Any, shape: str, rows: int, methods: tuple[str, ...], layouts: tuple[str, ...] = LAYOUTS) -> Shape:
    """Generate ``rows`` documents of ``shape`` and measure them as the suite does."""
    generator = SHAPES[shape][0]
    source = f"jvj_fit_{shape}_source"
    t0 = time.perf_counter()
    _run(conn, "source", {"rows": rows}, source=source, generator=generator)
    out = Shape(rows=rows, seconds=0.0)
    for layout in layouts:
        avg_input, dj, djb = _one(conn, "source_stats", layout=layout, source=source)
        lay = Layout(float(avg_input), float(dj), float(djb))
        for method in methods:
            for typ in TYPES:
                table = f"jvj_fit_{shape}_{layout}_{typ}_{method}"
                _run(conn, "create_doc", table=table, type=typ, method=method)
                _run(conn, "load_doc", table=table, type=typ, layout=layout, source=source)
                _run(conn, "vacuum", table=table)
                avg_stored, share = _one(conn, "stored_stats", table=table)
                total = conn.execute("SELECT pg_total_relation_size(%s::regclass)", (table,)).fetchone()[0]
                lay.stored[f"{typ}.{method}"] = Stored(float(avg_stored), float(share), int(total))
                _run(conn, "drop", table=table)
        out.layouts[layout] = lay
    _run(conn, "drop", table=source)
    out.seconds = time.perf_counter() - t0
    return out


def measure(
    conn: Any, rows: dict[str, int], shapes: list[str], lz4: bool | None = None, extra_sql: tuple[Path, ...] = ()
) -> dict[str, Any]:
    """Load setup.sql (then each of ``extra_sql``: candidate generators that replace its functions) and
    measure every shape in ``shapes``; ``rows`` maps small / medium / large to a row count."""
    _run(conn, "setup")
    for path in extra_sql:
        for stmt in statements(path.read_text(encoding="utf-8")):
            conn.execute(stmt)
    if lz4 is None:
        lz4 = has_lz4(conn)
    methods = METHODS if lz4 else METHODS[:1]
    version = conn.execute("SHOW server_version").fetchone()[0]
    result: dict[str, Any] = {"server_version": version, "lz4": lz4, "shapes": {}}
    for shape in shapes:
        got = measure_shape(conn, shape, rows[SHAPES[shape][1]], methods)
        result["shapes"][shape] = got
        print(f"-- {shape}: {got.rows} rows in {got.seconds:.1f} s", file=sys.stderr, flush=True)
    return result


# -- report ---------------------------------------------------------------------------------


def _fmt(value: float | None, kind: str) -> str:
    if value is None:
        return "n/a"
    if kind in ("pglz", "lz4"):
        return f"{(value - 1) * 100:+.1f} %"
    return f"{value:,.1f}"


def _verdict(value: float | None, seed: float | None, kind: str) -> str:
    if value is None or seed is None:
        return ""
    if kind in ("pglz", "lz4"):
        return "pass" if abs(value - seed) <= RATIO_TOLERANCE + 5e-4 else "FAIL"
    return "pass" if abs(value / seed - 1) <= SIZE_TOLERANCE else "FAIL"


def _values(lay: Layout) -> dict[str, float | None]:
    return {
        "input": lay.avg_input_bytes,
        "json": lay.datum_json,
        "jsonb": lay.datum_jsonb,
        "pglz": lay.ratio("pglz"),
        "lz4": lay.ratio("lz4"),
    }


def markdown(result: dict[str, Any]) -> str:
    """The measured figures against the seed's, one row per (shape, layout), then the per-target verdicts."""
    lines = [
        f"PostgreSQL {result['server_version']}, lz4 {'yes' if result['lz4'] else 'no'}.",
        "",
        "| shape | layout | rows | input bytes | json datum | jsonb datum | json stored (pglz) | jsonb stored (pglz) "
        "| pglz: jsonb vs json | lz4: jsonb vs json |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    checks: list[str] = []
    for shape, got in result["shapes"].items():
        for layout, lay in got.layouts.items():
            vals = _values(lay)
            cells = []
            for kind in ("input", "json", "jsonb"):
                seed = SEED.get((shape, layout, kind))
                cells.append(_fmt(vals[kind], kind) + (f" ({_fmt(seed, kind)})" if seed else ""))
            for typ in TYPES:
                stored = lay.stored.get(f"{typ}.pglz")
                cells.append(_fmt(stored.avg_stored_bytes if stored else None, "input"))
            for kind in ("pglz", "lz4"):
                seed = SEED.get((shape, layout, kind))
                cells.append(_fmt(vals[kind], kind) + (f" ({_fmt(seed, kind)})" if seed else ""))
            lines.append(f"| {shape} | {layout} | {got.rows:,} | " + " | ".join(cells) + " |")
            for kind, value in vals.items():
                seed = SEED.get((shape, layout, kind))
                if seed is not None and value is not None:
                    checks.append(f"| {shape} {layout} {kind} | {_fmt(value, kind)} | {_fmt(seed, kind)} | {_verdict(value, seed, kind)} |")
    lines += ["", "Seed figures in parentheses.", "", "| target | measured | seed | within tolerance |", "|---|---:|---:|---|", *checks]
    lines += [
        "",
        "The reproduction file's deterministic findings on these documents:",
        "",
        "| finding | measured | seed |",
        "|---|---:|---:|",
    ]
    for fid, observed, seed in findings(result):
        lines.append(f"| {fid} | {'n/a' if observed is None else f'{observed:.4g}'} | {'' if seed is None else f'{seed:.4g}'} |")
    return "\n".join(lines)


def metric_values(result: dict[str, Any]) -> dict[tuple[str, ...], tuple[Any, str]]:
    """The measured figures under the suite's own ``(workload, variant, metric)`` names, as the checks read them."""
    out: dict[tuple[str, ...], tuple[Any, str]] = {}
    for shape, got in result["shapes"].items():
        for layout, lay in got.layouts.items():
            out[(shape, layout, "avg_input_bytes")] = (lay.avg_input_bytes, "ok")
            out[(shape, f"{layout}.json", "avg_datum_bytes")] = (lay.datum_json, "ok")
            out[(shape, f"{layout}.jsonb", "avg_datum_bytes")] = (lay.datum_jsonb, "ok")
            out[(shape, layout, "datum_size_ratio")] = (lay.datum_jsonb / lay.datum_json, "ok")
            for method in METHODS:
                ratio = lay.ratio(method)
                if ratio is not None:
                    out[(shape, layout, f"table_size_ratio_{method}")] = (ratio, "ok")
            for key, st in lay.stored.items():
                out[(shape, f"{layout}.{key}", "avg_stored_bytes")] = (st.avg_stored_bytes, "ok")
                out[(shape, f"{layout}.{key}", "compressed_share")] = (st.compressed_share, "ok")
                out[(shape, f"{layout}.{key}", "table_bytes")] = (float(st.table_bytes), "ok")
    return out


def findings(result: dict[str, Any]) -> list[tuple[str, float | None, float | None]]:
    """``(finding id, measured value, seed value)`` of every deterministic finding of the suite's reproduction file."""
    from jsonbench.checks.findings import finding_value

    definition = json.loads((paths.expectations_dir() / f"{SUITE}.reproduction.json").read_text(encoding="utf-8"))
    values = metric_values(result)
    out = []
    for f in definition["findings"]:
        if f.get("kind") != "deterministic" or f.get("scope") == "cross_engine":
            continue
        observed, _, _ = finding_value(values, f)
        out.append((str(f["id"]), observed, (f.get("seed") or {}).get("value")))
    return out


def as_json(result: dict[str, Any]) -> str:
    found = {fid: observed for fid, observed, _ in findings(result)}
    return json.dumps({**result, "shapes": {k: asdict(v) for k, v in result["shapes"].items()}, "findings": found}, indent=1)


def from_json(text: str) -> dict[str, Any]:
    """A result written by :func:`as_json` (``--json-out``), read back: the report again without a server."""
    raw = json.loads(text)
    shapes = {}
    for name, got in raw["shapes"].items():
        layouts = {
            layout: Layout(
                lay["avg_input_bytes"], lay["datum_json"], lay["datum_jsonb"], {k: Stored(**v) for k, v in lay["stored"].items()}
            )
            for layout, lay in got["layouts"].items()
        }
        shapes[name] = Shape(rows=got["rows"], seconds=got["seconds"], layouts=layouts)
    return {"server_version": raw["server_version"], "lz4": raw["lz4"], "shapes": shapes}


# -- a throwaway server -----------------------------------------------------------------------


def _as_user(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@contextmanager
def throwaway_server(bin_dir: Path) -> Iterator[str]:
    """Start a server from ``bin_dir`` on a unix socket in a fresh data directory; yield its conninfo."""
    lib = bin_dir.parent / "lib"
    env = {**os.environ, **({"LD_LIBRARY_PATH": str(lib)} if lib.is_dir() else {})}
    work = Path(tempfile.mkdtemp(prefix="jvjfit-", dir=str(paths.scratch_dir())))
    os.chmod(work, 0o777)
    data, sock = work / "data", work / "sock"
    sock.mkdir()
    os.chmod(sock, 0o777)
    initdb = [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--data-checksums"]
    subprocess.run(_as_user(initdb), check=True, env=env, capture_output=True)
    opts = f"-c listen_addresses='' -c unix_socket_directories={sock} -c autovacuum=off -c jit=off -c max_parallel_workers_per_gather=0"
    start = [str(bin_dir / "pg_ctl"), "-D", str(data), "-o", opts, "-w", "-l", str(work / "log"), "start"]
    subprocess.run(_as_user(start), check=True, env=env, capture_output=True)
    try:
        yield f"host={sock} user=postgres dbname=postgres"
    finally:
        subprocess.run(_as_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]), env=env, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


def main(args: argparse.Namespace) -> int:
    """The command: measure (or report a ``--json-out`` file again), print markdown or JSON."""
    shapes = [s.strip() for s in (args.shapes or ",".join(SHAPES)).split(",") if s.strip()]
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown:
        raise UsageError(f"unknown shape(s) {unknown}; shapes: {', '.join(SHAPES)}")
    rows = {"small": args.small_rows, "medium": args.medium_rows, "large": args.large_rows}

    import psycopg

    def run(dsn: str) -> dict[str, Any]:
        with psycopg.connect(dsn, autocommit=True) as conn:
            return measure(conn, rows, shapes, lz4=False if args.no_lz4 else None, extra_sql=tuple(args.sql))

    if args.from_json:
        result = from_json(args.from_json.read_text(encoding="utf-8"))
    elif args.bin_dir or args.build:
        bin_dir = args.bin_dir or npm_build(args.build).bin_dir
        with throwaway_server(bin_dir) as dsn:
            result = run(dsn)
    elif args.dsn or os.environ.get("JSONBENCH_FIT_DSN"):
        result = run(args.dsn or os.environ["JSONBENCH_FIT_DSN"])
    else:
        raise UsageError("give --dsn (or $JSONBENCH_FIT_DSN), --bin-dir or --build")
    if args.json_out:
        args.json_out.write_text(as_json(result) + "\n", encoding="utf-8")
    print(as_json(result) if args.json else markdown(result))
    return 0
