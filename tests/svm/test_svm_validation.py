"""Bad SVM inputs fail before any solve, with a message that names the problem."""

from __future__ import annotations

import numpy as np
import pytest

import aidopt
from aidopt import SVMClassifier

RNG = np.random.default_rng(0)
X = RNG.normal(size=(20, 2))
Y = np.array([0, 1] * 10)


def _with_value(arr, index, value):
    out = np.array(arr, dtype=float)
    out[index] = value
    return out


CASES = [
    # (id, X, y, kwargs, regex)
    ("three-classes", X, np.arange(20) % 3, {}, r"exactly two classes.*got 3"),
    ("one-class", X, np.ones(20), {}, r"exactly two classes.*got 1.*both classes must be present"),
    ("one-string-class", X, np.array(["a"] * 20), {}, r"exactly two classes.*got 1"),
    ("nan-in-X", _with_value(X, (3, 1), np.nan), Y, {}, r"X contains 1 NaN or infinite.*\(3, 1\)"),
    ("inf-in-X", _with_value(X, (5, 0), np.inf), Y, {}, r"X contains 1 NaN or infinite"),
    ("nan-in-y", X, _with_value(Y, 4, np.nan), {}, r"y contains 1 NaN"),
    ("none-in-y", X, np.array(["a", "b"] * 9 + [None, "a"], dtype=object), {}, r"missing labels"),
    ("C-zero", X, Y, {"C": 0}, r"C must be a positive finite number, got 0"),
    ("C-negative", X, Y, {"C": -1.0}, r"C must be a positive finite number, got -1.0"),
    ("C-nan", X, Y, {"C": float("nan")}, r"C must be a positive finite number"),
    ("C-inf", X, Y, {"C": float("inf")}, r"C must be a positive finite number"),
    ("unknown-norm", X, Y, {"norm": "l3"}, r"norm must be one of .*'l3'"),
    ("kernel-l1", X, Y, {"kernel": "rbf", "norm": "l1"}, r"kernel.*2-norm.*norm='l1' is not supported"),
    ("kernel-linf", X, Y, {"kernel": "poly", "norm": "linf"}, r"norm='linf' is not supported"),
    ("kernel-none", X, Y, {"kernel": "rbf", "norm": "none"}, r"norm='none' is not supported"),
    ("kernel-C-zero", X, Y, {"kernel": "rbf", "C": 0.0}, r"C must be a positive finite number"),
    ("unknown-kernel", X, Y, {"kernel": "sigmoid"}, r"kernel must be one of .*'sigmoid'"),
    ("bad-gamma", X, Y, {"kernel": "rbf", "gamma": -1.0}, r"gamma must be 'scale' or a positive"),
    ("bad-degree", X, Y, {"kernel": "poly", "degree": 0}, r"degree must be a positive integer"),
    ("y-length", X, Y[:-1], {}, r"X has 20 rows but y has 19 entries"),
    ("X-1d", X[:, 0], Y, {}, r"X must be 2-d"),
    ("negative-weight", X, Y, {"sample_weight": -np.ones(20)}, r"sample_weight has 20 negative"),
    ("class-zero-weight", X, Y, {"sample_weight": np.where(Y == 0, 0.0, 1.0)},
     r"every row of class .*0.* has zero sample weight"),
    ("bad-form", X, Y, {"form": "bogus"}, r"form must be 'auto', 'dual' or 'primal'"),
    ("bad-tol", X, Y, {"tol": -1.0}, r"tol must be a number in \[0, 1\)"),
]


@pytest.mark.parametrize(("X_", "y_", "kwargs", "regex"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_solve_svm_rejects_bad_input(X_, y_, kwargs, regex):
    with pytest.raises(ValueError, match=regex):
        aidopt.solve_svm(X_, y_, log=False, **kwargs)


@pytest.mark.parametrize(("X_", "y_", "kwargs", "regex"),
                         [c[1:] for c in CASES if c[0] in ("nan-in-X", "C-zero", "unknown-norm",
                                                           "kernel-l1")],
                         ids=["nan-in-X", "C-zero", "unknown-norm", "kernel-l1"])
def test_classifier_fit_rejects_bad_input(X_, y_, kwargs, regex):
    with pytest.raises(ValueError, match=regex):
        SVMClassifier(**kwargs).fit(X_, y_)


def test_non_numeric_X_is_a_type_error():
    with pytest.raises(TypeError, match="X must be numeric"):
        aidopt.solve_svm(np.array([["a", "b"]] * 20), Y, log=False)


def test_unknown_solver_is_reported():
    with pytest.raises(aidopt.SolverUnavailableError, match="'nosuch'"):
        aidopt.solve_svm(X, Y, solver="nosuch", log=False)


def test_predict_checks_the_number_of_features():
    clf = SVMClassifier(C=1.0).fit(X, Y)
    with pytest.raises(ValueError, match=r"expected \(n, 2\)"):
        clf.predict(np.ones((3, 3)))
    with pytest.raises(RuntimeError, match="not fitted"):
        SVMClassifier().decision_function(X)


def test_unfitted_predict_says_not_fitted():
    with pytest.raises(RuntimeError, match="not fitted"):
        SVMClassifier().predict(X)


@pytest.mark.parametrize("kwargs", [{"C": np.int64(1)}, {"C": np.float32(0.5)},
                                    {"kernel": "poly", "degree": np.int64(2)}],
                         ids=["C-int64", "C-float32", "degree-int64"])
def test_numpy_scalar_parameters_are_accepted(kwargs):
    res = aidopt.solve_svm(X, Y, log=False, **kwargs)
    assert res.certified
