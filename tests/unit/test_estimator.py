"""``aidopt.LADRegressor``: the scikit-learn style estimator around ``solve_lad``."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import aidopt
from aidopt import LADRegressor
from aidopt.api.estimator import ConvergenceWarning

N = 1500
COEF = np.array([2.0, -1.0, 0.5])
INTERCEPT = 1.5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(42)
    X = rng.normal(size=(N, COEF.size))
    y = INTERCEPT + X @ COEF + rng.laplace(scale=0.05, size=N)
    return X, y


@pytest.fixture(scope="module")
def fitted(data):
    X, y = data
    return LADRegressor(fit_intercept=True).fit(X, y)


def _sad(y, pred):
    return float(np.abs(np.asarray(y) - np.asarray(pred)).sum())


# --------------------------------------------------------------------------- fit / predict


def test_fit_returns_self_and_recovers_coefficients(data):
    X, y = data
    est = LADRegressor(fit_intercept=True)
    assert est.fit(X, y) is est
    assert est.coef_.shape == (COEF.size,)
    np.testing.assert_allclose(est.coef_, COEF, atol=0.02)
    assert isinstance(est.intercept_, float)
    assert est.intercept_ == pytest.approx(INTERCEPT, abs=0.02)
    assert est.n_features_in_ == COEF.size


def test_result_is_certified(fitted, data):
    X, y = data
    res = fitted.result_
    assert isinstance(res, aidopt.AIDResult)
    assert res.certified is True
    assert res.termination == aidopt.Termination.CERTIFIED_OPTIMAL
    assert res.gap <= 1e-6
    # the result's beta is [coef_, intercept_] and its objective is the training SAD
    np.testing.assert_array_equal(res.solution["beta"], [*fitted.coef_, fitted.intercept_])
    assert res.objective == pytest.approx(_sad(y, fitted.predict(X)), rel=1e-9)


def test_predict_is_linear(fitted, data):
    X, _ = data
    pred = fitted.predict(X[:10])
    np.testing.assert_allclose(pred, X[:10] @ fitted.coef_ + fitted.intercept_)
    assert pred.shape == (10,)
    # nested lists are accepted like arrays
    np.testing.assert_allclose(fitted.predict(X[:3].tolist()), pred[:3])


def test_score_is_r2(fitted, data):
    X, y = data
    pred = fitted.predict(X)
    r2 = 1.0 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2)
    score = fitted.score(X, y)
    assert score == pytest.approx(r2, rel=1e-12)
    assert 0.99 < score <= 1.0
    # a worse predictor scores lower
    rng = np.random.default_rng(0)
    assert fitted.score(X, rng.permutation(y)) < 0.1


def test_score_with_sample_weight(fitted, data):
    X, y = data
    w = np.r_[np.ones(N // 2), np.zeros(N - N // 2)]
    assert fitted.score(X, y, sample_weight=w) == pytest.approx(
        fitted.score(X[: N // 2], y[: N // 2]), rel=1e-12
    )


def test_fit_without_intercept(data):
    X, y = data
    est = LADRegressor(fit_intercept=False).fit(X, y - INTERCEPT)
    assert est.intercept_ == 0.0
    assert est.coef_.shape == (COEF.size,)
    np.testing.assert_allclose(est.coef_, COEF, atol=0.02)
    assert est.result_.m == COEF.size
    assert est.result_.certified


def test_direct_fit_same_objective(fitted, data):
    X, y = data
    direct = LADRegressor(fit_intercept=True, aid=False).fit(X, y)
    assert direct.result_.aid is False
    assert direct.result_.certified
    assert _sad(y, direct.predict(X)) == pytest.approx(_sad(y, fitted.predict(X)), rel=2e-6)


def test_integer_sample_weight_equals_repeated_rows():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 2))
    y = X @ [1.0, -1.0] + rng.standard_t(3, size=300)
    w = rng.integers(1, 4, size=300)
    weighted = LADRegressor(fit_intercept=True).fit(X, y, sample_weight=w)
    repeated = LADRegressor(fit_intercept=True).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert weighted.result_.certified and repeated.result_.certified
    assert weighted.result_.objective == pytest.approx(repeated.result_.objective, rel=1e-6)
    assert _sad(np.repeat(y, w), repeated.predict(np.repeat(X, w, axis=0))) == pytest.approx(
        np.dot(w, np.abs(y - weighted.predict(X))), rel=1e-6
    )


def test_dataframe_feature_names(data):
    X, y = data
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    est = LADRegressor(fit_intercept=True).fit(frame, pd.Series(y))
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    # scikit-learn's convention: an array without the names fitted on still predicts, with a warning
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        np.testing.assert_allclose(est.predict(frame), est.predict(X))
    assert est.result_.solution["feature_names"] == ["a", "b", "c", "intercept"]


def test_refit_on_array_forgets_feature_names(data):
    """scikit-learn convention: a fit on data without column names removes feature_names_in_."""
    X, y = data
    est = LADRegressor(fit_intercept=True).fit(pd.DataFrame(X, columns=["a", "b", "c"]), y)
    est.fit(X, y)
    assert not hasattr(est, "feature_names_in_")


def test_refit_with_other_width(data):
    X, y = data
    est = LADRegressor(fit_intercept=True).fit(X, y)
    est.fit(X[:, :2], y)
    assert est.n_features_in_ == 2
    assert est.coef_.shape == (2,)
    with pytest.raises(ValueError):
        est.predict(X)


def test_iteration_limit_warns_convergence(data):
    X, y = data
    with pytest.warns(ConvergenceWarning, match="not certified"):
        est = LADRegressor(fit_intercept=True, max_iter=1).fit(X, y)
    assert est.result_.termination == "iteration_limit"
    assert not est.result_.certified
    assert est.coef_.shape == (COEF.size,)  # best solution so far is kept


def test_certified_fit_emits_no_warning(data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ConvergenceWarning would fail the test
        est = LADRegressor(fit_intercept=True).fit(X[:400], y[:400])
    assert est.result_.certified


# --------------------------------------------------------------------------- errors


def test_predict_before_fit_raises(data):
    X, _ = data
    with pytest.raises((RuntimeError, ValueError, AttributeError), match="fit"):
        LADRegressor(fit_intercept=True).predict(X)


@pytest.mark.parametrize("n_cols", [2, 4])
def test_predict_wrong_number_of_columns(fitted, data, n_cols):
    X, _ = data
    Xw = np.column_stack([X, X])[:, :n_cols]
    with pytest.raises(ValueError, match=rf"expected \(n, {COEF.size}\)"):
        fitted.predict(Xw)


def test_predict_one_dimensional_raises(fitted):
    with pytest.raises(ValueError):
        fitted.predict(np.ones(COEF.size))


def test_predict_nan_raises(fitted, data):
    X, _ = data
    Xn = X[:5].copy()
    Xn[2, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fitted.predict(Xn)


def test_fit_invalid_input_raises(data):
    X, y = data
    est = LADRegressor(fit_intercept=True)
    with pytest.raises(ValueError, match="rows"):
        est.fit(X, y[:-1])
    with pytest.raises(TypeError, match="city"):
        est.fit(pd.DataFrame({"a": X[:, 0], "city": ["x"] * N}), y)
    assert not hasattr(est, "coef_")


# --------------------------------------------------------------------------- params


def test_get_params_defaults():
    """The estimator's parameters are its own plus the common options, with the API's defaults
    (one definition: RunConfig) except log=False; fit_intercept=True as in the CLI."""
    import dataclasses
    import inspect

    from aidopt.decomposition import RunConfig

    from aidopt.api.lad import solve_lad

    params = LADRegressor().get_params()
    common = {f.name: (None if f.name == "solver_options" else f.default)
              for f in dataclasses.fields(RunConfig)}
    assert params == {"fit_intercept": True, "form": "auto", "quantile": None, **common, "log": False}
    api = inspect.signature(solve_lad).parameters
    # the estimator fits an intercept (scikit-learn, R's rq); solve_lad takes X as given
    assert api["fit_intercept"].default is False and params["fit_intercept"] is True
    for name in common:
        assert name in api, name


def test_set_params_roundtrip():
    est = LADRegressor(fit_intercept=True)
    assert est.set_params(tol=1e-5, fit_intercept=False, max_iter=7) is est
    params = est.get_params()
    assert (params["tol"], params["fit_intercept"], params["max_iter"]) == (1e-5, False, 7)
    assert LADRegressor(**params).get_params() == params
    assert "tol=1e-05" in repr(est)


def test_set_params_unknown_raises():
    with pytest.raises(ValueError, match="invalid parameter 'alpha'"):
        LADRegressor(fit_intercept=True).set_params(alpha=1.0)


def test_set_params_changes_fit(data):
    X, y = data
    est = LADRegressor(fit_intercept=True).set_params(fit_intercept=False)
    est.fit(X, y)
    assert est.intercept_ == 0.0
    assert est.result_.m == COEF.size


# --------------------------------------------------------------------------- scikit-learn


def test_sklearn_clone(fitted):
    base = pytest.importorskip("sklearn.base")
    est = LADRegressor(tol=1e-5, seed=3, solver_options={"solver": "ipm"})
    est2 = base.clone(est)
    assert est2 is not est
    assert est2.get_params() == est.get_params()
    assert est2.solver_options is not est.solver_options  # deep-copied
    refit = base.clone(fitted)
    assert not hasattr(refit, "coef_")
    assert refit.get_params() == fitted.get_params()


def test_sklearn_pipeline_fit_predict(data):
    pytest.importorskip("sklearn")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = data
    pipe = make_pipeline(StandardScaler(), LADRegressor(fit_intercept=True)).fit(X[:600], y[:600])
    est = pipe[-1]
    assert est.result_.certified
    pred = pipe.predict(X[600:700])
    np.testing.assert_allclose(pred, y[600:700], atol=1.0)
    assert np.mean(np.abs(y[600:700] - pred)) < 0.1  # noise scale 0.05


def test_sklearn_check_is_fitted(data):
    validation = pytest.importorskip("sklearn.utils.validation")
    from sklearn.exceptions import NotFittedError

    X, y = data
    est = LADRegressor(fit_intercept=True)
    with pytest.raises(NotFittedError):
        validation.check_is_fitted(est)
    est.fit(X[:300], y[:300])
    validation.check_is_fitted(est)


@pytest.mark.parametrize("seed", [0, 1])
def test_objective_matches_sklearn_quantile_regressor(seed):
    linear_model = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(seed)
    n = 600
    X = rng.normal(size=(n, 4))
    # heavy-tailed noise: LAD and least squares differ, so this is a real comparison
    y = 0.3 + X @ [1.0, 0.0, -2.0, 0.7] + rng.standard_t(2, size=n)
    ours = LADRegressor(fit_intercept=True).fit(X, y)
    ref = linear_model.QuantileRegressor(quantile=0.5, alpha=0, solver="highs").fit(X, y)
    ours_sad = _sad(y, ours.predict(X))
    ref_sad = _sad(y, ref.predict(X))
    assert ours_sad == pytest.approx(ref_sad, rel=1e-6)
    assert ours.result_.objective == pytest.approx(ref_sad, rel=1e-6)
    # and it is a LAD fit: least squares is strictly worse in absolute deviation
    ols = np.linalg.lstsq(np.column_stack([X, np.ones(n)]), y, rcond=None)[0]
    assert _sad(y, np.column_stack([X, np.ones(n)]) @ ols) > ours_sad * (1 + 1e-4)


def test_weighted_objective_matches_sklearn_quantile_regressor():
    linear_model = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(9)
    n = 500
    X = rng.normal(size=(n, 2))
    y = X @ [1.0, -1.0] + rng.laplace(size=n)
    w = rng.uniform(0.1, 3.0, size=n)
    ours = LADRegressor(fit_intercept=True).fit(X, y, sample_weight=w)
    ref = linear_model.QuantileRegressor(quantile=0.5, alpha=0, solver="highs").fit(
        X, y, sample_weight=w
    )
    ours_obj = float(np.dot(w, np.abs(y - ours.predict(X))))
    ref_obj = float(np.dot(w, np.abs(y - ref.predict(X))))
    assert ours_obj == pytest.approx(ref_obj, rel=1e-6)
    assert ours.result_.certified
