"""The package version (one definition; read by the run log and results)."""

__version__ = "0.1.0"
