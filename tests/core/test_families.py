"""One declaration per parameter: every family's door, estimator and CLI command agree on the
names and defaults of its parameters, because all three are made from its ``Family``."""

from __future__ import annotations

import inspect

import pytest

import aidopt
from aidopt.api._params import Family, Param
from aidopt.cli.main import build_parser

#: family module, door, estimator (or None), CLI command (or None), the command's required flags
FAMILIES = [
    ("lad", "solve_lad", "LADRegressor", "lad", ["--data", "x.csv"]),
    ("svm", "solve_svm", "SVMClassifier", "svm", ["--data", "x.csv"]),
    ("s3vm", "solve_s3vm", "S3VMClassifier", "s3vm", ["--data", "x.csv"]),
    ("fsv", "solve_fsv", "FSVClassifier", "fsv", ["--data", "x.csv"]),
    ("gsvm", "solve_gsvm", "GSVMClassifier", "gsvm", ["--data", "x.csv"]),
    ("aggout", "solve_aggregate_outputs", "AggregateOutputClassifier", "aggout", ["--data", "x.csv"]),
    ("s2rlsc", "solve_s2rlsc", "S2RLSCClassifier", "s2rlsc", ["--data", "x.csv"]),
    ("scm", "solve_scm", "SCMClassifier", "scm", ["--data", "x.csv"]),
    ("facility", "solve_facility_location", None, "facility", ["--costs", "c.csv"]),
    ("lpc", "solve_lp_chunked", None, None, []),
    ("lpc", "solve_lsvm_lpc", None, None, []),
]


@pytest.mark.parametrize(("module", "door", "estimator", "command", "required"), FAMILIES,
                         ids=[f[1] for f in FAMILIES])
def test_door_estimator_and_cli_agree(module, door, estimator, command, required):
    func = getattr(aidopt, door)
    family = func.family
    assert isinstance(family, Family) and family.params
    sig = inspect.signature(func).parameters
    for name, param in family.params.items():  # the door: every parameter, with its default
        assert name in sig and sig[name].default == param.default, name
        assert f"\n{name} : " in func.__doc__, f"{door} does not document {name}"
    if estimator is not None:  # the estimator: the estimator parameters, their user defaults
        est = getattr(aidopt, estimator)
        params = est().get_params()
        for name, param in family.params.items():
            if param.estimator:
                assert params[name] == param.user_default, name
                entry = f"{name} : {param.type_text()}, default {param.user_default!r}"
                assert entry in est.__doc__, f"{estimator} does not document {name}"
            else:
                assert name not in params, name
    if command is not None:  # the CLI: a flag per parameter that has one, the user default
        args = build_parser(command).parse_args([command, *required])
        for name, param in family.params.items():
            if param.cli_flag() is None:
                assert not hasattr(args, name) or name == "engine", name
            else:
                assert getattr(args, name) == param.user_default, name


def test_every_door_of_the_package_is_made_from_a_family():
    doors = [name for name in dir(aidopt) if name.startswith("solve_")]
    assert {d for d in doors if hasattr(getattr(aidopt, d), "family")} == {f[1] for f in FAMILIES}


def test_a_flag_parses_to_the_type_of_its_default():
    args = build_parser("svm").parse_args(["svm", "--data", "x", "--C", "0.5", "--degree", "4",
                                           "--gamma", "2", "--kernel", "rbf", "--chunks", "0.25"])
    assert (args.C, args.degree, args.gamma, args.kernel, args.chunks) == (0.5, 4, 2.0, "rbf", 0.25)
    args = build_parser("s3vm").parse_args(["s3vm", "--data", "x", "--balance", "none"])
    assert args.balance is None
    with pytest.raises(SystemExit):
        build_parser("svm").parse_args(["svm", "--data", "x", "--norm", "l3"])


def test_one_new_parameter_reaches_door_estimator_and_cli():
    """What adding an option means: one Param makes the keyword, the estimator parameter and
    the flag (shown on a throwaway family)."""
    fam = Family("toy", Param("alpha", 0.5, "A weight.", choices=()),
                 Param("mode", "fast", "How.", choices=("fast", "slow")))

    @fam.door()
    def solve_toy(X, *, p, **options):
        """A toy.

        Parameters
        ----------
        X : array

        Returns
        -------
        tuple
        """
        return p.alpha, p.mode, options.get("tol")

    assert solve_toy(1, alpha=2.0, tol=1e-3) == (2.0, "fast", 1e-3)
    assert "alpha : float, default 0.5" in solve_toy.__doc__
    assert list(inspect.signature(solve_toy).parameters)[:3] == ["X", "alpha", "mode"]
    assert fam.estimator_params() == {"alpha": 0.5, "mode": "fast"}
    import argparse

    parser = argparse.ArgumentParser()
    fam.add_arguments(parser)
    assert fam.cli_kwargs(parser.parse_args(["--alpha", "3", "--mode", "slow"])) == \
        {"alpha": 3.0, "mode": "slow"}
    with pytest.raises(TypeError, match="must take the keyword 'p'"):
        fam.door()(lambda X, alpha=1, **options: None)


def test_lad_estimator_and_cli_fit_an_intercept_by_default_and_the_function_does_not():
    """scikit-learn's regressors and R's rq(y ~ x) fit an intercept; solve_lad takes X as the
    design matrix. --no-fit-intercept turns it off; --fit-intercept still parses."""
    assert inspect.signature(aidopt.solve_lad).parameters["fit_intercept"].default is False
    assert aidopt.LADRegressor().fit_intercept is True
    parser = build_parser("lad")
    assert parser.parse_args(["lad", "--data", "x.csv"]).fit_intercept is True
    assert parser.parse_args(["lad", "--data", "x.csv", "--no-fit-intercept"]).fit_intercept is False
    assert parser.parse_args(["lad", "--data", "x.csv", "--fit-intercept"]).fit_intercept is True


def test_a_negated_flag_needs_its_own_help():
    from aidopt.api._params import Param

    with pytest.raises(ValueError, match="flag_help"):
        Param("thing", True, "Do the thing.").cli_help()
    assert Param("thing", True, "Do the thing.", flag_help="Skip it.").cli_help() == "Skip it."
