"""The lz4 path of suite "json vs jsonb" (seed 001) on Debian's PostgreSQL 17 and 18, built with lz4, in containers.

The embedded builds have no lz4 (tests/integration/test_json_vs_jsonb.py: their lz4 rows are not applicable,
with the reason); ./bin/setup installs no local build that has it. The Docker tier's images
``jsonbench/postgres-debian:<major>`` (./bin/setup --docker) do, so here every lz4 storage metric of the
shapes whose findings involve lz4 is measured, and each deterministic lz4 finding of the reproduction file
holds within its smoke band: sizes decided by the storage format and the TOAST threshold, never a timing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.docker.docker_support import require_docker
from tests.integration.test_json_vs_jsonb import SUITE, Measured, _run

ENGINES = {"postgres-17-debian": "jsonbench/postgres-debian:17", "postgres-18-debian": "jsonbench/postgres-debian:18"}
#: The shapes the lz4 findings are about (size_*_lz4_*): array, large, medium, small.
SHAPES = ("small", "medium", "large", "array")


def _lz4_findings() -> list[dict[str, Any]]:
    from jsonbench import paths

    definition = json.loads((paths.expectations_dir() / f"{SUITE}.reproduction.json").read_text(encoding="utf-8"))
    return [f for f in definition["findings"] if f.get("kind") == "deterministic" and "lz4" in json.dumps(f.get("requires") or [])]


@pytest.fixture(scope="module", params=sorted(ENGINES))
def on_debian(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Measured, dict[str, Any]]:
    engine = request.param
    require_docker(ENGINES[engine])
    measured, facts, _ = _run(tmp_path_factory.mktemp(engine), engine, SHAPES, f"lz4_{engine.replace('-', '_')}", backend="docker")
    return engine, measured, facts


def test_lz4_rows_measured_where_the_build_has_lz4(on_debian: tuple[str, Measured, dict[str, Any]]) -> None:
    from jsonbench.suites.json_vs_jsonb import LAYOUTS, STORAGE_METRICS, TYPES

    engine, measured, facts = on_debian
    assert facts["capabilities"]["lz4"] is True, (engine, facts["capabilities"])
    for workload in SHAPES:
        for layout in LAYOUTS:
            for typ in TYPES:
                for metric, _ in STORAGE_METRICS:
                    m = measured[(workload, f"{layout}.{typ}.lz4", metric)]
                    assert m.status == "ok" and m.value is not None and m.value >= 0, (engine, workload, layout, typ, metric, m.reason)
                assert measured[(workload, f"{layout}.{typ}.lz4", "table_bytes")].value > 0
            assert measured[(workload, layout, "table_size_ratio_lz4")].value > 0
    # The threshold decides compression whatever the method: compact medium json stays raw, jsonb is compressed.
    assert measured[("medium", "compact.json.lz4", "compressed_share")].value == 0
    assert measured[("medium", "compact.jsonb.lz4", "compressed_share")].value == 1


def test_lz4_findings_reproduce_at_smoke(on_debian: tuple[str, Measured, dict[str, Any]]) -> None:
    """Every deterministic lz4 finding of the reproduction file, on this build, within its smoke band."""
    from jsonbench.checks.findings import finding_value

    engine, measured, _ = on_debian
    values = {key: (m.value, m.status) for key, m in measured.items()}
    findings = _lz4_findings()
    assert len(findings) >= 4, [f["id"] for f in findings]
    for f in findings:
        band = f["bands"]["smoke"]
        observed, problem, _ = finding_value(values, f)
        assert not problem, (engine, f["id"], problem)
        assert band["min"] <= observed <= band["max"], (engine, f["id"], observed, band)
