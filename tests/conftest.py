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


# BLAS threads are not limited per worker: aidopt's runs compute on one BLAS thread already
# (decomposition/threads.py), and tests/unit/test_threads.py's two-thread test fails when BLAS's
# process-wide setting outside a run is not the default (e.g. OPENBLAS_NUM_THREADS=1).

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
