"""What the machine offers that the methods size themselves by: its physical memory."""

from __future__ import annotations

import os

__all__ = ["physical_memory"]


def physical_memory() -> float:
    """Bytes of physical memory (16 GB assumed where the system does not say)."""
    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows)
        return 16.0 * 2**30
