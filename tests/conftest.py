"""Shared test settings: tolerances, solver capability lists, seeded instances."""

from __future__ import annotations

import pytest

from aidopt import solvers

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
