"""What every PostgreSQL backend shares: sizing settings to the machine, and reading server facts."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from jsonbench.engines.postgres_session import PostgresSession

_SIZE_RE = re.compile(r"^\s*(\d+)\s*(B|kB|MB|GB|TB)?\s*$")
_UNITS = {None: 1024 * 8, "B": 1, "kB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}


def size_bytes(value: str) -> int | None:
    """Bytes of a PostgreSQL memory setting such as ``1GB`` (a bare number means 8 kB pages); None if not a size."""
    m = _SIZE_RE.match(str(value))
    if not m:
        return None
    return int(m.group(1)) * _UNITS[m.group(2)]


def scaled_settings(settings: dict[str, str], caps: dict[str, float], memory_bytes: int) -> tuple[dict[str, str], dict[str, str]]:
    """Cap memory settings at a fraction of this machine's RAM.

    Returns ``(settings, adjustments)`` where ``adjustments`` maps each lowered setting to a note
    saying what was asked for, so the record shows why a figure ran with less memory than the seed.
    """
    out = dict(settings)
    notes: dict[str, str] = {}
    for name, fraction in caps.items():
        if name not in out or not memory_bytes:
            continue
        asked = size_bytes(out[name])
        if asked is None:
            continue
        cap = int(memory_bytes * float(fraction))
        if asked > cap:
            out[name] = f"{max(cap // (1024 * 1024), 1)}MB"
            notes[name] = f"asked {settings[name]}, capped at {fraction:g} of {memory_bytes // 1024**2} MB RAM"
    return out, notes


def server_facts(session: PostgresSession) -> dict[str, Any]:
    """Exact version, configure flags, non-default settings, checksum state and capabilities of a server."""
    version = str(session.scalar("SHOW server_version")).split()[0]
    version_num = int(session.scalar("SHOW server_version_num"))
    try:
        configure = session.scalar("SELECT setting FROM pg_config WHERE name = 'CONFIGURE'")
    except Exception:  # pg_config is superuser-only; an existing server may not allow it
        session.conn.rollback() if session.conn and not session.conn.autocommit else None
        configure = None
    settings = dict(
        session.execute(
            "SELECT name, current_setting(name) FROM pg_settings WHERE source NOT IN ('default', 'override') OR name IN "
            "('shared_buffers','work_mem','maintenance_work_mem','max_wal_size','effective_cache_size','fsync','synchronous_commit',"
            "'full_page_writes','wal_compression','default_toast_compression','autovacuum','jit','max_parallel_workers_per_gather',"
            "'wal_level','checkpoint_timeout','data_checksums','block_size','wal_block_size') ORDER BY name"
        )
    )
    return {
        "version": version,
        "version_num": version_num,
        "version_string": session.scalar("SELECT version()"),
        "configure": configure,
        "data_checksums": str(session.scalar("SHOW data_checksums")) == "on",
        "settings": settings,
        "capabilities": server_capabilities(session),
    }


def server_capabilities(session: PostgresSession) -> dict[str, bool]:
    """What this server can do that some workloads need (a missing one makes them not applicable)."""
    version_num = int(session.scalar("SHOW server_version_num"))
    lz4 = bool(session.scalar("SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"))
    extensions = {r[0] for r in session.execute("SELECT name FROM pg_available_extensions")}
    return {
        "lz4": lz4,
        "json_table": version_num >= 170000,
        "pg_stat_force_next_flush": version_num >= 150000,
        "pg_prewarm": "pg_prewarm" in extensions,
        "pg_walinspect": "pg_walinspect" in extensions,
        "pgbench": session.pgbench is not None,
    }


@contextmanager
def opened(session: PostgresSession) -> Iterator[PostgresSession]:
    """Yield a freshly connected session with its capabilities read; close it afterwards.

    Every PostgreSQL backend's ``Engine.session`` builds its :class:`PostgresSession` (connection
    and pgbench differ per backend) and hands it through this, so what a suite receives is the same.
    """
    try:
        session.capabilities = server_capabilities(session)
        yield session
    finally:
        session.close()
