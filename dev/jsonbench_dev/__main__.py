"""``python -m jsonbench_dev`` (what ``./bin/jsonbench-dev`` runs): the maintainers' instruments."""

import sys

from jsonbench_dev.cli import main

sys.exit(main())
