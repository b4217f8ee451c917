"""The thread budget of aidopt's own computation in a run (``RunConfig.threads``).

External solvers get ``threads`` as an option (:mod:`aidopt.solvers`); while one of aidopt's
runs lasts (:func:`~.run.run_scope`: AID and direct solves, LPC, the SLA loop, SOR, SCM) the same
number also bounds what aidopt computes itself: the BLAS threads of numpy's products (the native
methods ``fm``, ``fn`` and ``smo``, cluster sums, lifts) and kernel AID's worker threads
(:mod:`.mean_kernel`). ``None`` leaves both at their defaults (BLAS: every core; kernel workers:
one per core, at most four).

BLAS limits are process-wide. The limits from before the first budgeted run come back when the
last one ends; while runs overlap (nested, or in threads of one process), the most recently
entered run that is still going sets the limit.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading

from threadpoolctl import ThreadpoolController

__all__ = ["budget", "blas_controller", "compute_threads"]

_BUDGET: contextvars.ContextVar[int | None] = contextvars.ContextVar("aidopt_threads",
                                                                     default=None)
_CONTROLLER: ThreadpoolController | None = None
_LOCK = threading.Lock()
_ACTIVE: list[int] = []  # the budgets of the runs going on, in the order they started
_ORIGINAL = None  # the BLAS limits from before the first of them (a threadpoolctl limiter)


def budget() -> int | None:
    """The running run's ``threads`` (None: no budget)."""
    return _BUDGET.get()


def blas_controller() -> ThreadpoolController:
    """The BLAS thread-pool controller (it inspects the loaded libraries once: 10-25 ms)."""
    global _CONTROLLER
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


def _limit_blas(threads: int):
    return blas_controller().limit(limits=threads, user_api="blas")


@contextlib.contextmanager
def compute_threads(threads: int | None):
    """Within the block, BLAS and kernel AID's workers use at most ``threads`` threads
    (``None``: no change)."""
    global _ORIGINAL
    if threads is None:
        yield
        return
    threads = int(threads)
    token = _BUDGET.set(threads)
    try:
        with _LOCK:
            limiter = _limit_blas(threads)
            if not _ACTIVE:
                _ORIGINAL = limiter
            _ACTIVE.append(threads)
        try:
            yield
        finally:
            with _LOCK:
                _ACTIVE.remove(threads)
                if _ACTIVE:
                    _limit_blas(_ACTIVE[-1])
                else:
                    _ORIGINAL.restore_original_limits()
                    _ORIGINAL = None
    finally:
        _BUDGET.reset(token)
