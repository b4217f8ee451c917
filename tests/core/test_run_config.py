"""Core v2: one definition of the common options, and time limits that never raise."""

from __future__ import annotations

import argparse
import dataclasses
import inspect

import numpy as np
import pytest
from aidopt.decomposition import RunConfig
from aidopt.decomposition.run import add_arguments, config_from_args
from aidopt.instances import lad_instance

import aidopt
from aidopt.cli.main import build_parser
from aidopt.solvers import availability

COMMON = [f.name for f in dataclasses.fields(RunConfig)]


@pytest.mark.parametrize("func", [aidopt.solve_lad, aidopt.solve_svm, aidopt.solve_s3vm,
                                  aidopt.solve_fsv])
def test_every_solve_function_documents_every_common_option(func):
    params = inspect.signature(func).parameters
    for name in COMMON:
        assert name in params, f"{func.__name__} lacks {name}"
        assert name in func.__doc__, f"{func.__name__} does not document {name}"
    for name in COMMON:
        if name not in ("solver", "solver_options") and not (func is aidopt.solve_fsv and name == "aid"):
            assert params[name].default == getattr(RunConfig(), name), name


@pytest.mark.parametrize("cls", [aidopt.LADRegressor, aidopt.SVMClassifier, aidopt.S3VMClassifier,
                                 aidopt.FSVClassifier])
def test_every_estimator_takes_every_common_option_with_the_api_defaults(cls):
    params = cls().get_params()
    defaults = RunConfig()
    for name in COMMON:
        assert name in params, f"{cls.__name__} lacks {name}"
        if name not in ("log", "solver_options", "solver") and not (
                cls is aidopt.FSVClassifier and name == "aid"):  # FSV: None = AID above 20,000 rows
            assert params[name] == getattr(defaults, name), name
    assert params["log"] is False  # estimators are quiet, as scikit-learn's


def test_unknown_keyword_raises_with_a_suggestion():
    X, y = lad_instance("A", n=200, m=3, seed=0)
    with pytest.raises(TypeError, match="time_limt.*did you mean 'time_limit'"):
        aidopt.solve_lad(X, y, time_limt=3)
    with pytest.raises(TypeError, match="unexpected parameter"):
        aidopt.LADRegressor(tol_gap=1e-3)


def test_cli_flags_are_generated_from_the_config():
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--tol", "1e-4", "--no-aid", "--quiet", "--max-iter", "3",
                              "--option", "solver=ipm", "--seed", "7"])
    options = config_from_args(args)
    assert options["tol"] == 1e-4 and options["aid"] is False and options["log"] is False
    assert options["max_iter"] == 3 and options["seed"] == 7
    assert options["solver_options"] == {"solver": "ipm"}
    RunConfig(**options)  # every flag maps onto a valid config field
    # the real CLI commands carry all of them (raise_on_failure is the CLI's own choice)
    lad_help = build_parser()._subparsers._group_actions[0].choices["lad"].format_help()
    for name in COMMON:
        if name != "raise_on_failure":
            flag = {"aid": "--no-aid", "log": "--quiet", "solver_options": "--option",
                    "fallback": "--no-fallback"}.get(name, "--" + name.replace("_", "-"))
            assert flag in lad_help, flag


def test_fit_intercept_defaults_follow_each_surface_convention():
    """The design-matrix function takes X as given; the estimator and the CLI fit a model and
    follow scikit-learn's / R's convention (an intercept)."""
    api = inspect.signature(aidopt.solve_lad).parameters["fit_intercept"].default
    est = aidopt.LADRegressor().fit_intercept
    cli = build_parser().parse_args(["lad", "--data", "x.csv"]).fit_intercept
    assert api is False and est is cli is True


@pytest.mark.parametrize("raise_on_failure", [False, True])
def test_a_time_limit_never_raises(raise_on_failure):
    """Regression: LAD with SCIP (no duals: the certificate solves a dual LP of its own) and a
    time limit that falls between iterations or inside the certificate raised SolverError."""
    if availability("scip") not in ("full", "limited"):
        pytest.skip("SCIP not installed")
    X, y = lad_instance("A", n=4000, m=5, seed=0)
    for limit in (0.05, 0.3, 1.0):
        res = aidopt.solve_lad(X, y, solver="scip", time_limit=limit, log=False,
                               raise_on_failure=raise_on_failure)
        assert res.termination in ("time_limit", "certified_optimal"), res.termination
        if res.termination == "time_limit":
            assert not res.certified or res.certificate.certified


def test_time_limit_with_highs_returns_the_best_so_far():
    X, y = lad_instance("B", n=200_000, m=20, seed=1)
    res = aidopt.solve_lad(X, y, solver="highs", time_limit=1.0, log=False)
    assert res.termination == "time_limit"
    if res.history:
        assert np.isfinite(res.objective) and res.objective == res.history[-1].E_best


@pytest.mark.parametrize("raise_on_failure", [False, True])
def test_a_time_limit_inside_the_certificate_never_raises(monkeypatch, raise_on_failure):
    """The certificate's own dual LP (solvers without duals) meets the time limit: the run ends
    ``time_limit`` with its best solution, uncertified, whatever ``raise_on_failure`` says."""
    from aidopt.decomposition.plugins.lad import LADProblem

    from aidopt import solvers

    original = LADProblem.certify

    def out_of_time(model, need_duals=False, solver=None):
        return solvers.SolveOutcome(solvers.SolveStatus.TIME_LIMIT, None, None, False, "highs", "",
                                    0.0, "no time left")

    def certify(self, data, best, *, bound, solve, **kw):
        bound.lifted.state.v = None  # as if the solver had returned no duals
        return original(self, data, best, bound=bound, solve=out_of_time, **kw)

    monkeypatch.setattr(LADProblem, "certify", certify)
    X, y = lad_instance("A", n=3000, m=4, seed=2)
    res = aidopt.solve_lad(X, y, log=False, raise_on_failure=raise_on_failure)
    assert res.termination == "time_limit"
    assert res.certificate is None and not res.certified
    assert np.isfinite(res.objective) and "certificate not checked" in res.message


def test_run_persistent_handle_writes_the_updated_model_and_re_solves_warm(tmp_path):
    """The run framework's persistent handle: the Pyomo model stays the source of truth (what is
    written is what was solved, after the update) and an objective change re-solves in place."""
    import pyomo.environ as pyo
    from aidopt.decomposition import Run

    from aidopt.solvers import ProblemClass

    m = pyo.ConcreteModel(name="tiny")
    m.c = pyo.Param(mutable=True, initialize=1.0)
    m.x = pyo.Var(bounds=(0, 4))
    m.y = pyo.Var(bounds=(0, 4))
    m.row = pyo.Constraint(expr=m.x + m.y >= 2)
    m.obj = pyo.Objective(expr=m.c * m.x + 2 * m.y)
    run = Run("tiny", ProblemClass.LP, RunConfig(solver="highs", log=False,
                                                   write_models=str(tmp_path)))
    handle = run.persistent(m)
    first = handle.solve(need_duals=True)
    assert first.optimal and pyo.value(m.x) == pytest.approx(2.0) and first.objective == pytest.approx(2.0)
    m.c = 3.0  # now y is cheaper
    handle.update_objective()
    second = handle.solve()
    assert second.optimal and pyo.value(m.y) == pytest.approx(2.0) and second.objective == pytest.approx(4.0)
    assert handle.warm and handle.stats.warm_solves >= 1
    written = sorted(p.name for p in tmp_path.glob("*.lp"))
    assert written == ["001_tiny.lp", "002_tiny.lp"]
    assert "+3.0 x" in (tmp_path / "002_tiny.lp").read_text()  # the updated cost
    assert "+1.0 x" in (tmp_path / "001_tiny.lp").read_text()  # what the first solve had


def test_run_persistent_handle_passes_a_mip_start():
    """The run's handle hands a MIP start to HiGHS: with branching and heuristics off only the
    start can give a solution."""
    import pyomo.environ as pyo
    from aidopt.decomposition import Run

    from aidopt.solvers import ProblemClass

    w = [31, 47, 22, 58, 19, 40, 27, 36, 44, 53, 12, 29]
    m = pyo.ConcreteModel(name="knap")
    m.J = pyo.RangeSet(0, len(w) - 1)
    m.x = pyo.Var(m.J, within=pyo.Binary)
    m.cap = pyo.Constraint(expr=sum(w[j] * m.x[j] for j in m.J) <= 200)
    m.obj = pyo.Objective(expr=sum((w[j] + (j % 3) + 1) * m.x[j] for j in m.J), sense=pyo.maximize)
    run = Run("knap", ProblemClass.MILP, RunConfig(
        solver="highs", log=False,
        solver_options={"mip_max_nodes": 0, "presolve": "off", "mip_heuristic_effort": 0.0}))
    with run.persistent(m) as handle:
        assert not handle.solve().has_solution  # the options reach HiGHS: no search
        start = [(m.x[j], 1.0 if j in (0, 1, 2, 3) else 0.0) for j in m.J]  # weight 158
        handle.set_start(start)
        out = handle.solve()
        assert out.extra["start"].startswith("passed")
        assert out.has_solution and out.objective >= sum(w[j] + (j % 3) + 1 for j in range(4)) - 1e-9
        assert sum(w[j] * round(m.x[j].value) for j in m.J) <= 200


def test_cli_turns_aidopt_errors_into_one_line_and_exit_code_2(tmp_path, capsys):
    from aidopt.cli.main import main

    X, y = lad_instance("A", n=300, m=3, seed=0)
    path = tmp_path / "d.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header="a,b,c,y", comments="")
    assert main(["lad", "--data", str(path), "--solver", "no_such_solver", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("aidopt: error:") and "no_such_solver" in err[0]
    assert main(["lad", "--data", str(path), "--tol", "2", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "tol must be" in err[0]


def test_a_flag_that_turns_an_option_off_says_so():
    """--no-aid, --quiet and --no-fallback: the help describes what the flag does, not the
    option it turns off; and --tol states the gap's real denominator."""
    parser = build_parser("lad")
    sub = parser._subparsers._group_actions[0].choices["lad"]
    helps = {a.option_strings[0]: a.help for a in sub._actions if a.option_strings}
    assert helps["--no-aid"].startswith("Solve the full model directly instead of")
    assert helps["--quiet"].startswith("Print the result only")
    assert helps["--no-fallback"].startswith("Do not retry")
    assert "max(phi, |E|)" in helps["--tol"]
    args = build_parser("fsv").parse_args(["fsv", "--data", "x.csv", "--no-aid"])
    assert args.aid is False  # fsv's aid defaults to None: the flag still turns AID off
    assert build_parser("fsv").parse_args(["fsv", "--data", "x.csv"]).aid is None
