"""The ``aidopt`` command: ``main`` builds the parser (``aidopt.cli.main``); one module per
family command (``aggout``, ``facility``, ``gsvm``, ``s2rlsc``, ``scm``) and what they share
(``common``). The CLI calls the same public functions as the Python API."""

from aidopt._lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {"main": "aidopt.cli.main",
                                               "build_parser": "aidopt.cli.main"})
__all__ = ["build_parser", "main"]
