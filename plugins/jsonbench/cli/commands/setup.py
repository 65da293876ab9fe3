"""The setup steps ``./bin/setup`` runs: engine links, the SQLite venvs, Apache Otava's venv, the documents sample."""

from __future__ import annotations

import argparse


def link_engines(args: argparse.Namespace) -> int:
    from jsonbench.setup.engine_links import link_engines as link

    print(link())
    return 0


def install_sqlite(args: argparse.Namespace) -> int:
    from jsonbench.setup.sqlite_venvs import install_all

    install_all()
    return 0


def install_otava(args: argparse.Namespace) -> int:
    from jsonbench.setup.otava_venv import install

    install()
    return 0


def sample_documents(args: argparse.Namespace) -> int:
    from pathlib import Path

    from jsonbench import paths
    from jsonbench.suites.documents.sample import COUNT, OUT, write

    count = COUNT if args.count is None else args.count
    path = write(Path(args.out) if args.out else paths.PROJECT_ROOT / OUT, count)
    print(f"{path}: {count:,} documents, {path.stat().st_size:,} bytes")
    return 0
