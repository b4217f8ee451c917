"""Lazy re-exports (PEP 562): a package names its public objects without importing their modules.

``import aidopt`` must not load Pyomo, a solver, numba, scikit-learn or dask: each public name is
imported from its module the first time it is used, then kept on the package.
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["lazy_exports"]


def lazy_exports(package: str, table: dict[str, str]):
    """``(__getattr__, __dir__)`` for ``package``: ``table`` maps a public name to the module
    that defines it."""

    def __getattr__(name: str):
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # the next access is a plain attribute
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
