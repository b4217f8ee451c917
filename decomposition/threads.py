"""The thread budget of aidopt's own computation in a run (``RunConfig.threads``).

External solvers get ``threads`` as an option (:mod:`aidopt.solvers`); while one of aidopt's
runs lasts (:func:`~.run.run_scope`: AID and direct solves, LPC, the SLA loop, SOR, SCM) the same
number also bounds what aidopt computes itself: the BLAS threads of numpy's products (the native
methods ``fm``, ``fn`` and ``smo``, cluster sums, lifts) and kernel AID's worker threads
(:mod:`.mean_kernel`). ``None`` leaves both at their defaults (BLAS: every core; kernel workers:
one per core, at most four).

BLAS limits are process-wide and set through threadpoolctl, which lets one thread at a time set
OpenBLAS's: while a run in one thread holds them, a run in another thread leaves them as they
are (its kernel workers still keep to its own budget). The limits from before a run come back
when it ends, and the thread that set them hands the control back.
"""

from __future__ import annotations

import contextlib
import contextvars

from threadpoolctl import ThreadpoolController

__all__ = ["budget", "blas_controller", "blas_limit", "compute_threads"]

_BUDGET: contextvars.ContextVar[int | None] = contextvars.ContextVar("aidopt_threads",
                                                                     default=None)
_CONTROLLER: ThreadpoolController | None = None


def budget() -> int | None:
    """The running run's ``threads`` (None: no budget)."""
    return _BUDGET.get()


def blas_controller() -> ThreadpoolController:
    """The BLAS thread-pool controller (it inspects the loaded libraries once: 10-25 ms)."""
    global _CONTROLLER
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


@contextlib.contextmanager
def blas_limit(threads: int):
    """BLAS uses at most ``threads`` threads within the block, its limits from before after it
    (see the module on threads)."""
    with blas_controller().limit(limits=int(threads), user_api="blas"):
        yield


@contextlib.contextmanager
def compute_threads(threads: int | None):
    """Within the block, BLAS and kernel AID's workers use at most ``threads`` threads
    (``None``: no change)."""
    if threads is None:
        yield
        return
    token = _BUDGET.set(int(threads))
    try:
        with blas_limit(int(threads)):
            yield
    finally:
        _BUDGET.reset(token)
