"""The thread budget of aidopt's own computation in a run (``RunConfig.threads``).

External solvers get ``threads`` as an option (:mod:`aidopt.solvers`); while one of aidopt's
runs lasts (:func:`~.run.run_scope`: AID and direct solves, LPC, the SLA loop, SOR, SCM) the same
number also bounds what aidopt computes itself: the BLAS threads of numpy's products (the native
methods ``fm``, ``fn`` and ``smo``, cluster sums, lifts) and kernel AID's worker threads
(:mod:`.mean_kernel`). ``None`` runs BLAS on one thread (:data:`DEFAULT_BLAS_THREADS`) and leaves
the kernel workers at one per core, at most four; external solvers keep their own defaults.

Why one BLAS thread by default: the native methods make many products and factorizations of
moderate size (a ``(p+1) x K`` gemm per Newton step of ``fm``, a ``p x p`` Cholesky per step of
``fn``). OpenBLAS's threads wait for each other at every call, so on a machine that other jobs
share (another terminal's jobs are another scheduling group, which ``nice`` does not reach) a
call waits for the other thread's next time slice: the 2-norm SVM at 3e4 x 30 took 50-65x its
time alone. Alone on the 2 cores measured, one thread was as fast (``fm``) or twice as fast
(``fn``: small Cholesky factorizations are slower threaded); docs/benchmarks.md has the numbers.
``threads=k`` gives BLAS ``k`` threads, for large products on an idle many-core machine; the
environment variable ``AIDOPT_BLAS_THREADS`` changes the default for every run of the process.

BLAS limits are process-wide and set through threadpoolctl, which lets one thread at a time set
OpenBLAS's: while a run in one thread holds them, a run in another thread leaves them as they
are (its kernel workers still keep to its own budget). The limits from before a run come back
when it ends, and the thread that set them hands the control back.
"""

from __future__ import annotations

import contextlib
import contextvars
import os

from threadpoolctl import ThreadpoolController

__all__ = ["DEFAULT_BLAS_THREADS", "budget", "blas_controller", "blas_limit", "compute_threads"]

def _default_blas_threads() -> int:
    raw = os.environ.get("AIDOPT_BLAS_THREADS", "1")
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"AIDOPT_BLAS_THREADS must be a positive integer, got {raw!r}")
    return value


#: BLAS threads within a run whose ``threads`` is None (see the module's docstring; the
#: environment variable ``AIDOPT_BLAS_THREADS``, read at import, changes it).
DEFAULT_BLAS_THREADS = _default_blas_threads()

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
        import numpy  # noqa: F401 - both BLAS libraries (NumPy's and SciPy's) must be loaded:
        import scipy.linalg  # noqa: F401 - the controller sees only what is loaded when made

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
    (``None``: BLAS :data:`DEFAULT_BLAS_THREADS`, the workers their default)."""
    token = _BUDGET.set(None if threads is None else int(threads))
    try:
        with blas_limit(DEFAULT_BLAS_THREADS if threads is None else int(threads)):
            yield
    finally:
        _BUDGET.reset(token)
