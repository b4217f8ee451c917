"""Shared test settings: tolerances, solver capability lists, seeded instances."""

from __future__ import annotations

import os

import pytest

from aidopt import solvers


# ------------------------------------------------------------------- pytest-xdist (addopts -n auto)
def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def pytest_xdist_auto_num_workers(config):
    """``-n auto`` in pyproject's addopts: a worker per usable core, at most 4 (memory, and the
    solvers' own threads); one core runs the suite in this process. ``-n 0`` runs it serially,
    PYTEST_XDIST_AUTO_NUM_WORKERS sets the count."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    cores = _cores()
    return 0 if cores < 2 else min(cores, 4)


#: (limiter, threads) of an xdist worker's BLAS limit
_WORKER_BLAS: list = []


def pytest_configure(config):
    """In an xdist worker, BLAS gets the worker's share of the cores (two workers on two cores:
    one thread each). Tests that call fm, SMO or numpy products outside an aidopt run (which
    limits BLAS itself) otherwise run OpenBLAS's threads of two workers on the same cores, whose
    waits for each other's time slices made a 0.1 s dense fm solve take 7-18 s on the loaded
    machine. Set through threadpoolctl after loading NumPy's and SciPy's BLAS, so a test can
    still raise the limit (threads=2); the environment carries it to the tests' subprocesses. A
    serial run keeps the libraries' defaults."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if not workers:
        return
    import numpy  # noqa: F401 - both BLAS libraries loaded (with their defaults) before limiting
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_limits

    share = max(1, _cores() // int(workers))
    _WORKER_BLAS.append((threadpool_limits(limits=share, user_api="blas"), share))
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, str(share))


@pytest.fixture
def blas_library_defaults():
    """BLAS as a fresh process has it within the test (the xdist worker's limit lifted): for the
    thread-budget tests that compare limits before and after overlapping runs."""
    if not _WORKER_BLAS:
        yield
        return
    from threadpoolctl import threadpool_limits

    limiter, share = _WORKER_BLAS.pop()
    limiter.restore_original_limits()
    try:
        yield
    finally:
        _WORKER_BLAS.append((threadpool_limits(limits=share, user_api="blas"), share))

#: relative tolerance for "same objective" comparisons between two exact solves
RTOL = 1e-6


def available_solvers(problem_class=solvers.ProblemClass.LP, need_duals=False):
    """Registered solvers that are installed and can take ``problem_class``."""
    out = []
    for name, spec in solvers.SOLVERS.items():
        if problem_class not in spec.classes or (need_duals and not spec.duals):
            continue
        if solvers.availability(name) in ("full", "limited"):
            out.append(name)
    return out


def solver_params(problem_class=solvers.ProblemClass.LP, need_duals=False):
    """pytest params over every registered solver; the unavailable ones skip with a reason."""
    params = []
    for name, spec in solvers.SOLVERS.items():
        if problem_class not in spec.classes or (need_duals and not spec.duals):
            continue
        avail = solvers.availability(name)
        marks = []
        if avail not in ("full", "limited"):
            marks.append(pytest.mark.skip(reason=f"{name} not installed (pip install 'aidopt[{spec.extra}]')"))
        params.append(pytest.param(name, marks=marks, id=name))
    return params


def licence_limits(name):
    """(max_vars, max_cons) a limited licence allows, or None."""
    spec = solvers.SOLVERS[name]
    if solvers.availability(name) == "limited" and spec.limited_licence:
        return spec.limited_licence.max_vars, spec.limited_licence.max_cons
    return None
