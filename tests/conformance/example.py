"""Import ``examples/l1_location.py`` (not a package) by its path, once."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "l1_location.py"


@functools.cache
def load_example():
    """The example module (registered in ``sys.modules`` as ``aidopt_example_l1_location``)."""
    name = "aidopt_example_l1_location"
    spec = importlib.util.spec_from_file_location(name, EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
