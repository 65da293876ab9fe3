"""What the Docker engine's clients see, in the Docker tier (its engine is up before this session starts).

Here rather than beside their kin in tests/integration and tests/unit: outside this tier the Docker engine may
still be installing (./bin/test sets it up in the background), and a test that raced it would skip or fail by
the clock. In this tier the engine answers, so nothing here skips.

- The leak check's container probe: a labelled container of this session is listed (and reaped), another's not.
- ``docker-compose config`` (no daemon needed) accepts docker-compose.yaml, with each Compose client installed.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.docker.docker_support import ROOT, require_docker
from tests.integration.test_leak_check import LABEL, _kinds
from tests.unit.test_compose import COMPOSE, ENV


def test_labelled_containers_of_this_session_are_seen(leak_tracker: Any, scratch_dir: Path) -> None:
    """A container (created, never started: no image registry is needed) labelled with a workdir under the scratch folder."""
    require_docker()
    client = leak_tracker._docker_client()
    assert client is not None, "the leak check's Docker probe found no engine, though `docker version` answers"
    import io
    import tarfile

    empty = io.BytesIO()
    with tarfile.open(fileobj=empty, mode="w"):
        pass
    tag = "jsonbench-leakcheck:empty"
    client.api.import_image_from_data(empty.getvalue(), repository="jsonbench-leakcheck", tag="empty")
    other = None
    try:
        mine = client.containers.create(
            tag, command=["/nothing"], labels={LABEL: "true", "io.jsonbench.workdir": str(scratch_dir / "jsonbench-x")}
        )
        other = client.containers.create(
            tag, command=["/nothing"], labels={LABEL: "true", "io.jsonbench.workdir": "/tmp/someone-else/jsonbench-y"}
        )
        found = _kinds(leak_tracker)
        assert [leak.key for leak in found.get("container", [])] == [mine.id], found  # not another session's
        assert leak_tracker.reap(found["container"]) == []
        assert _kinds(leak_tracker) == {}
    finally:
        if other is not None:
            other.remove(force=True)
        for c in client.containers.list(all=True, filters={"ancestor": tag}):
            c.remove(force=True)
        client.images.remove(tag, force=True)


def test_compose_client_accepts_the_file(tmp_path: Path) -> None:
    """``config`` parses and validates the file without a daemon (with each Compose client installed)."""
    env = {"PATH": "/usr/bin:/usr/local/bin:/bin", **ENV}
    checked = []
    for argv in (["docker", "compose"], ["docker-compose"]):
        if not shutil.which(argv[0]) or subprocess.run([*argv, "version"], capture_output=True, env=env, timeout=60).returncode != 0:
            continue  # not installed, or the docker client without its compose plugin
        res = subprocess.run([*argv, "-f", str(COMPOSE), "config", "-q"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
        assert res.returncode == 0, res.stdout + res.stderr
        checked.append(argv[0])
    assert "docker-compose" in checked, f"./bin/setup-docker installs docker-compose; only {checked} answered"
