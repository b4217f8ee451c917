"""``python -m aidopt.cli``: the ``aidopt`` command."""

import sys

from aidopt.cli.main import main

sys.exit(main())
