"""Run a command (pgbench) inside a benchmark container through the Docker API, as if it ran here.

The Docker backend hands sessions an argv prefix ``[python, this file, --container NAME, ...,
--, pgbench]`` so that callers (:mod:`jsonbench.pgbench`) run pgbench like a local binary and
never learn it runs in the server's own image. What makes that work without a docker CLI and
without bind mounts (which would need host paths, wrong when the worker itself runs in a
container):

* every local file named by ``-f``/``--file`` is copied into the container at the same path first,
* the current folder is created in the container and the command runs there,
* ``PG*`` variables of this process (the session's ``pgbench_env``) are passed to the command,
* files the command writes under ``--log-prefix`` (pgbench's transaction logs) are copied back,
* stdout, stderr and the exit code are the command's own.

Before the container exists, ``--version`` is answered by a throwaway container of the same
image when the image is present (removed with its anonymous volume), else from the image's tag
(``postgres:17`` ships pgbench 17).

Stand-alone on purpose: imports only ``docker``, so it runs with no project path set up. It talks to
the engine with the docker SDK directly rather than through Airflow's DockerHook, which the adapter
uses for everything else, because it is a separate short-lived process started for each pgbench
call: outside any task context (no connection to read), where importing Airflow would add seconds
before every pgbench run, and with nothing the hook adds to give (it only execs into a container that
exists, so there is no registry to log into). It gets ``--base-url`` from the adapter, which resolved
it through the hook's connection, so both reach the same engine.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
import tarfile
from pathlib import Path
from typing import Any

_FILE_OPTS = ("-f", "--file")


def _parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    if "--" not in argv:
        raise SystemExit("usage: docker_exec.py --container NAME [--base-url URL] [--image IMAGE] [--user UID:GID] -- COMMAND...")
    cut = argv.index("--")
    parser = argparse.ArgumentParser(prog="docker_exec.py")
    parser.add_argument("--container", required=True)
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--image", default=None)
    parser.add_argument("--user", default=None)
    return parser.parse_args(argv[:cut]), argv[cut + 1 :]


def script_files(command: list[str]) -> list[Path]:
    """Local files the command names with ``-f FILE``, ``-fFILE`` or ``--file=FILE`` (a ``@weight`` suffix dropped)."""
    found: list[str] = []
    it = iter(range(len(command)))
    for i in it:
        arg = command[i]
        if arg in _FILE_OPTS and i + 1 < len(command):
            found.append(command[i + 1])
            next(it, None)
        elif arg.startswith("--file="):
            found.append(arg.split("=", 1)[1])
        elif arg.startswith("-f") and len(arg) > 2 and not arg.startswith("--"):
            found.append(arg[2:])
    paths = []
    for name in found:
        path = Path(re.sub(r"@\d+$", "", name))
        if path.is_file():
            paths.append(path.resolve())
    return paths


def log_prefix(command: list[str], cwd: Path) -> Path | None:
    """Where the command's transaction logs go (``--log-prefix``; pgbench's default with ``-l``), or None."""
    logging = any(a in ("-l", "--log") for a in command)
    for i, arg in enumerate(command):
        if arg.startswith("--log-prefix="):
            return (cwd / arg.split("=", 1)[1]).resolve()
        if arg == "--log-prefix" and i + 1 < len(command):
            return (cwd / command[i + 1]).resolve()
    return cwd / "pgbench_log" if logging else None


def tar_of(files: list[Path], folders: list[Path]) -> bytes:
    """A tar archive holding ``folders`` (empty) and ``files`` at their absolute paths, to extract at ``/``."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for folder in folders:
            if str(folder) == "/":
                continue
            info = tarfile.TarInfo(str(folder).lstrip("/"))
            info.type = tarfile.DIRTYPE
            info.mode = 0o1777  # the command may run as another user than the one who owns it here
            tar.addfile(info)
        for path in files:
            tar.add(str(path), arcname=str(path).lstrip("/"), recursive=False)
    return buf.getvalue()


def _copy_back(container: Any, prefix: Path) -> None:
    """Copy ``prefix.*`` files from the container's ``prefix.parent`` into the same local folder."""
    stream, _ = container.get_archive(str(prefix.parent))
    data = io.BytesIO(b"".join(stream))
    with tarfile.open(fileobj=data) as tar:
        for member in tar.getmembers():
            name = Path(member.name).name
            if member.isfile() and name.startswith(prefix.name + "."):
                src = tar.extractfile(member)
                if src is not None:
                    (prefix.parent / name).write_bytes(src.read())


def _version_without_container(client: Any, image: str | None) -> int:
    import docker.errors

    if image:
        try:
            client.images.get(image)
            # Not containers.run(remove=True): that removes the container but keeps the anonymous volume the
            # image's VOLUME creates (one per call, left behind). Remove both, whatever happens.
            container = client.containers.create(
                image, ["pgbench", "--version"], entrypoint=[], labels={"io.jsonbench.probe": "pgbench-version"}
            )
            try:
                container.start()
                code = container.wait(timeout=120).get("StatusCode", 1)
                out = container.logs(stdout=True, stderr=True)
            finally:
                container.remove(force=True, v=True)
            sys.stdout.write(out.decode(errors="replace") if isinstance(out, bytes) else str(out))
            return int(code)
        except docker.errors.ImageNotFound:
            m = re.match(r"^(?:.*/)?postgres:(\d+)(?:\.(\d+))?", image)
            if m:
                sys.stdout.write(f"pgbench (PostgreSQL) {m.group(1)}.{m.group(2) or 0} (from the image tag {image}; not pulled yet)\n")
                return 0
    sys.stderr.write("benchmark container does not exist yet and its image is unknown\n")
    return 1


def main(argv: list[str] | None = None) -> int:
    import docker.errors

    import docker

    opts, command = _parse(list(sys.argv[1:] if argv is None else argv))
    client = docker.DockerClient(base_url=opts.base_url) if opts.base_url else docker.from_env()
    try:
        container = client.containers.get(opts.container)
    except docker.errors.NotFound:
        if command[1:] == ["--version"]:
            return _version_without_container(client, opts.image)
        sys.stderr.write(f"benchmark container {opts.container} not found\n")
        return 1
    cwd = Path.cwd()
    prefix = log_prefix(command, cwd)
    folders = [cwd] + ([prefix.parent] if prefix is not None else [])
    container.put_archive("/", tar_of(script_files(command), folders))
    env = {k: v for k, v in os.environ.items() if k.startswith("PG")}
    api = client.api
    exec_id = api.exec_create(container.id, command, environment=env, workdir=str(cwd), user=opts.user or "")["Id"]
    for out, err in api.exec_start(exec_id, stream=True, demux=True):
        if out:
            sys.stdout.buffer.write(out)
            sys.stdout.flush()
        if err:
            sys.stderr.buffer.write(err)
            sys.stderr.flush()
    code = api.exec_inspect(exec_id).get("ExitCode")
    if prefix is not None:
        _copy_back(container, prefix)
    return int(code if code is not None else 1)


if __name__ == "__main__":
    sys.exit(main())
