"""The package version: its one definition (pyproject.toml reads it; ``aidopt --version``, the
run log and results print it)."""

__version__ = "0.2.0"
