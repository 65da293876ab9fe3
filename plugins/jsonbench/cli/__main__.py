"""``python -m jsonbench.cli``: the same as the ``jsonbench`` command."""

import sys

from jsonbench.cli import main

sys.exit(main())
