"""`jsonbench-dev recheck`: every reproduction band holds on every honest recorded run of every host, and a planted reversal is caught.

The rows are real: `recorded/` holds the measurements of several hosts of the reference type (its `hosts.json`
says which, and what each folder's runs cannot judge because the data changed after them). A band that breaks
an honest host fails here, not on a user's night.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

from jsonbench.paths import RECORDED_DIR
from jsonbench_dev.recheck import folders_to_check, recheck, render


def test_every_band_holds_on_every_recorded_host() -> None:
    results = recheck(folders_to_check([]))
    hosts = {h.host for h in results}
    assert len(hosts) >= 3, f"recorded runs of at least three hosts, got {sorted(hosts)}"
    assert {h.scale for h in results} >= {"smoke", "laptop", "full"}
    assert all(h.judged > 0 for h in results), render(results)
    assert [f for h in results for f in h.failures] == [], render(results)


def test_a_planted_reversal_is_caught(tmp_path: Path) -> None:
    """The same rows with one speed-up pushed into the opposite conclusion: the recheck names that finding, and only it."""
    src = RECORDED_DIR / "local-9a24bd8"
    work = tmp_path / "planted"
    shutil.copytree(src, work)
    files = sorted((work / "measurements").rglob("part-0.parquet"))
    path = next(p for p in files if pc.any(pc.equal(pq.read_table(p)["scale"], "laptop")).as_py())
    table = pq.read_table(path)
    hit = pc.and_(
        pc.and_(pc.equal(table["workload"], "keys_10"), pc.equal(table["metric"], "extract_first_speedup")),
        pc.equal(table["engine_id"], "sqlite-3.46.1"),
    )
    assert pc.any(hit).as_py()
    table = table.set_column(table.schema.get_field_index("value"), "value", pc.if_else(hit, 0.8, table["value"]))
    pq.write_table(table, path)
    results = recheck([(work, {})])
    fails = [(f["finding"], f["engine_id"]) for h in results for f in h.failures]
    assert fails == [("keys_10_first_jsonb_faster", "sqlite-3.46.1")], render(results)


def test_every_recorded_folder_is_described_in_the_manifest() -> None:
    """`hosts.json`'s `folders` names each folder's commit and host, and says what its runs cannot judge: a folder it
    does not list (an entry written outside `folders`, as four once were) is read with nothing declined."""
    entries = dict(folders_to_check([]))
    missing = sorted(p.name for p, entry in entries.items() if not entry)
    assert not missing, f"recorded/ folders without an entry under hosts.json's folders: {missing}"
    assert all({"commit", "host", "made", "not_asked"} <= set(e) for e in entries.values())
