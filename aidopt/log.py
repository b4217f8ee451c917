"""Run-scoped logging: the library adds only a NullHandler; ``log=True`` attaches one for a run."""

from __future__ import annotations

import contextlib
import logging
import sys

ROOT = "aidopt"


@contextlib.contextmanager
def run_logging(enabled: bool, stream=None):
    """Attach a plain stdout handler to the ``aidopt`` logger for the duration of a run.

    Restores the logger's level and handlers afterwards (as gdpopt's ``lower_logger_level_to``).
    Does nothing when ``enabled`` is false or a handler that writes to the same stream is attached.
    """
    logger = logging.getLogger(ROOT)
    stream = stream or sys.stdout
    if not enabled or any(getattr(h, "stream", None) is stream for h in logger.handlers):
        yield logger
        return
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(message)s"))
    old_level = logger.level
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    try:
        yield logger
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
