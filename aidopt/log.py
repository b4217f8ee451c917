"""Run-scoped logging: the library adds only a NullHandler; ``log=True`` attaches one for a run."""

from __future__ import annotations

import contextlib
import logging
import sys

ROOT = "aidopt"


def _configured(logger: logging.Logger) -> bool:
    """Whether a handler other than a ``NullHandler`` already receives ``logger``'s records (on
    the logger itself or, through propagation, on an ancestor such as the root of
    ``logging.basicConfig``)."""
    node = logger
    while node is not None:
        if any(not isinstance(h, logging.NullHandler) for h in node.handlers):
            return True
        if not node.propagate:
            return False
        node = node.parent
    return False


@contextlib.contextmanager
def run_logging(enabled: bool, stream=None):
    """Show a run's log on stdout, unless the user configured logging.

    The library convention (the ``logging`` HOWTO's "configuring logging for a library"): the
    ``aidopt`` logger has only a ``NullHandler``, and a run with ``log=True`` attaches a plain
    handler for its duration only when nothing else would show the records — no handler on
    ``aidopt`` or an ancestor (e.g. ``logging.basicConfig``), so the table is never printed twice.
    A level the user set on the ``aidopt`` logger is kept (``setLevel(logging.WARNING)`` silences
    every run); otherwise the level is lowered to INFO for the run and restored afterwards.
    """
    logger = logging.getLogger(ROOT)
    stream = stream or sys.stdout
    if not enabled or _configured(logger):
        yield logger
        return
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(message)s"))
    old_level = logger.level
    logger.addHandler(handler)
    if old_level == logging.NOTSET:
        logger.setLevel(logging.INFO)
    try:
        yield logger
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
