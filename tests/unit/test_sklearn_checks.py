"""scikit-learn's estimator checks on every estimator of ``aidopt.estimators``.

``parametrize_with_checks`` runs the full set of checks on the standard estimators, with the
default parameters and a few others that change the code path (intercept, LP SVM, kernel SVM,
one-vs-one linear SVM, linear SCM). The classifiers take k classes (one-vs-rest or one-vs-one,
aidopt/api/multiclass.py), so scikit-learn's multi-class checks run on them too. Checks that
fail by design are declared by the estimator itself
(``_sklearn_expected_failed_checks``, a reason for each) and run as strict xfails: a declared
failure that starts passing fails this test, so the list cannot go stale.

``S3VMClassifier`` and ``S2RLSCClassifier`` (labels -1 / +1, 0 / NaN unlabeled) and
``AggregateOutputClassifier`` (``fit(X, collections, counts)``) cannot be driven by the common
checks, which fit ``(X, y)`` with fully labeled data: they declare it (``tags._skip_test``, with
the reason). They pass the checks that need no fit, and the conventions the fitting checks test
are tested below with their own ``fit``.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

pytest.importorskip("sklearn", minversion="1.6")

from aidopt.instances import s3vm_instance  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import DataConversionWarning  # noqa: E402
from sklearn.exceptions import NotFittedError as SklearnNotFittedError  # noqa: E402
from sklearn.utils import get_tags  # noqa: E402
from sklearn.utils.estimator_checks import (  # noqa: E402
    check_do_not_raise_errors_in_init_or_set_params,
    check_estimator_cloneable,
    check_estimator_repr,
    check_estimator_tags_renamed,
    check_estimators_empty_data_messages,
    check_estimators_unfitted,
    check_get_params_invariance,
    check_mixin_order,
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_set_params,
    check_valid_tag_types,
    parametrize_with_checks,
)
from sklearn.utils.validation import check_is_fitted  # noqa: E402

from aidopt import (  # noqa: E402
    AggregateOutputClassifier,
    FSVClassifier,
    GSVMClassifier,
    LADRegressor,
    S2RLSCClassifier,
    S3VMClassifier,
    SCMClassifier,
    SVMClassifier,
)
from aidopt.api.estimator import NotFittedError  # noqa: E402

STANDARD = [
    LADRegressor(),
    LADRegressor(fit_intercept=True),
    SVMClassifier(),
    SVMClassifier(norm="l1"),
    SVMClassifier(kernel="rbf"),
    SVMClassifier(multi_class="ovo"),
    GSVMClassifier(),
    FSVClassifier(),
    SCMClassifier(),
    SCMClassifier(kernel="linear"),
]
NON_STANDARD = [S3VMClassifier(), AggregateOutputClassifier(), S2RLSCClassifier()]


def _expected_failed_checks(estimator) -> dict:
    return estimator._sklearn_expected_failed_checks()


@parametrize_with_checks(STANDARD + NON_STANDARD, expected_failed_checks=_expected_failed_checks,
                         xfail_strict=True)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_expected_failures_are_few_and_justified():
    for est in STANDARD + NON_STANDARD:
        failures = est._sklearn_expected_failed_checks()
        assert len(failures) <= 3, type(est).__name__
        assert all(isinstance(reason, str) and len(reason) > 20 for reason in failures.values())
    for est in NON_STANDARD:  # skipped as a whole, with the reason, by their tags
        assert get_tags(est)._skip_test and len(est._sklearn_checks_skipped) > 20
    for est in STANDARD:
        tags = get_tags(est)
        assert not tags._skip_test and tags.input_tags.sparse
        assert tags.classifier_tags is None or tags.classifier_tags.multi_class is True


def test_no_estimator_expects_to_fail_the_empty_data_check():
    """Zero features must raise ValueError (scikit-learn's check_estimators_empty_data_messages):
    LADRegressor with its default fit_intercept=True fitted the intercept-only model and declared
    the check an expected failure; the suite above runs it on every standard estimator."""
    for est in STANDARD:
        assert "check_estimators_empty_data_messages" not in est._sklearn_expected_failed_checks()
    for est in (LADRegressor(), LADRegressor(fit_intercept=True), LADRegressor(fit_intercept=False)):
        check_estimators_empty_data_messages(type(est).__name__, est)
        with pytest.raises(ValueError, match=r"0 feature\(s\)"):
            est.fit(np.empty((12, 0)), np.arange(12.0))


# --------------------------------------------------------------------------- non-standard fit

FIT_FREE_CHECKS = [
    check_estimator_cloneable,
    check_estimator_tags_renamed,
    check_valid_tag_types,
    check_estimator_repr,
    check_no_attributes_set_in_init,
    check_estimators_unfitted,
    check_do_not_raise_errors_in_init_or_set_params,
    check_mixin_order,
    check_parameters_default_constructible,
    check_get_params_invariance,
    check_set_params,
]


@pytest.mark.parametrize("check", FIT_FREE_CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("estimator", NON_STANDARD, ids=lambda e: type(e).__name__)
def test_non_standard_estimators_pass_the_checks_without_fit(estimator, check):
    check(type(estimator).__name__, estimator)


def _s3vm_data():
    X, y, _ = s3vm_instance(n=60, n_labeled=6, separation=4.0, seed=0)
    return X, y.astype(float), {"norm": "l1"}  # the MILP: HiGHS, no MIQP solver needed


def _aggout_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    collections = np.arange(60) // 5
    counts = np.bincount(collections, weights=(X[:, 0] > 0)).astype(int)
    return X, (collections, counts), {}


def _s2rlsc_data():
    X, y, _ = _s3vm_data()  # the same convention: -1 / +1 labeled, 0 unlabeled
    return X, y, {"search": "1+1", "restarts": 2}


NON_STANDARD_DATA = {"S3VMClassifier": _s3vm_data, "AggregateOutputClassifier": _aggout_data,
                     "S2RLSCClassifier": _s2rlsc_data}


def _fit_args(name):
    X, target, params = NON_STANDARD_DATA[name]()
    return X, (target if isinstance(target, tuple) else (target,)), params


@pytest.fixture(params=sorted(NON_STANDARD_DATA))
def non_standard(request):
    """(estimator class, X, the fit arguments after X, parameters)."""
    name = request.param
    X, args, params = _fit_args(name)
    return {type(e).__name__: type(e) for e in NON_STANDARD}[name], X, args, params


def test_non_standard_fitted_state(non_standard):
    cls, X, args, params = non_standard
    est = cls(**params)
    with pytest.raises(SklearnNotFittedError):
        check_is_fitted(est)
    with pytest.raises(NotFittedError, match="not fitted"):
        est.predict(X)
    assert est.fit(X, *args) is est
    check_is_fitted(est)
    assert est.n_features_in_ == X.shape[1] and est.n_iter_ >= 1
    assert not hasattr(est, "feature_names_in_")
    pred = est.predict(X)
    assert set(np.unique(pred)) <= set(est.classes_)
    # fit is idempotent, clone forgets the fit, pickling keeps it
    np.testing.assert_array_equal(cls(**params).fit(X, *args).decision_function(X),
                                  est.decision_function(X))
    assert not hasattr(clone(est), "result_")
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(est)).predict(X), pred)


def test_non_standard_feature_checks(non_standard):
    cls, X, args, params = non_standard
    frame = pd.DataFrame(X, columns=["a", "b"])
    est = cls(**params).fit(frame, *args)
    np.testing.assert_array_equal(est.feature_names_in_, ["a", "b"])
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        est.predict(X)
    with pytest.raises(ValueError, match="The feature names should match"):
        est.predict(frame[["b", "a"]])
    with pytest.raises(ValueError, match="X has 1 features, but .* is expecting 2 features"):
        est.predict(X[:, :1])
    with pytest.raises(ValueError, match="Reshape your data"):
        est.predict(X[0])
    est.fit(X, *args)
    assert not hasattr(est, "feature_names_in_")


def test_non_standard_input_validation(non_standard):
    cls, X, args, params = non_standard
    with pytest.raises(ValueError, match="Complex data not supported"):
        cls(**params).fit(X + 1j, *args)
    per_row = tuple(a[:0] if len(a) == X.shape[0] else a for a in args)  # y, collections
    with pytest.raises(ValueError, match=r"0 sample\(s\)"):
        cls(**params).fit(np.empty((0, 2)), *per_row)
    with pytest.raises(ValueError, match=r"0 feature\(s\)"):
        cls(**params).fit(np.empty((X.shape[0], 0)), *args)
    with pytest.raises(ValueError, match="NaN"):
        cls(**params).fit(np.where(np.arange(X.size).reshape(X.shape) == 3, np.nan, X), *args)
    # sparse X is accepted (densified): the same model as dense X
    dense = cls(**params).fit(X, *args)
    sparse = cls(**params).fit(sp.csr_array(X), *args)
    np.testing.assert_allclose(_coef(sparse), _coef(dense))
    np.testing.assert_allclose(sparse.decision_function(sp.csr_array(X)), dense.decision_function(X))
    # object arrays of numbers are converted like numeric ones
    np.testing.assert_allclose(_coef(cls(**params).fit(X.astype(object), *args)), _coef(dense))


def _coef(est):
    """The fitted model's coefficients: ``coef_`` (linear), or ``dual_coef_`` (S2RLSC)."""
    return est.coef_ if hasattr(est, "coef_") else est.dual_coef_


@pytest.mark.parametrize("cls", [S3VMClassifier, S2RLSCClassifier], ids=lambda c: c.__name__)
def test_semi_supervised_column_vector_labels_warn_and_fit_the_same(cls):
    X, y, params = NON_STANDARD_DATA[cls.__name__]()
    flat = cls(**params).fit(X, y)
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        column = cls(**params).fit(X, y[:, None])
    np.testing.assert_array_equal(column.transduction_, flat.transduction_)


# --------------------------------------------------------------------------- behaviours


def test_not_fitted_error_is_sklearns_and_a_runtime_error():
    for est in STANDARD + NON_STANDARD:
        with pytest.raises(SklearnNotFittedError) as info:
            est.predict(np.zeros((2, 2)))
        assert isinstance(info.value, RuntimeError) and "not fitted" in str(info.value)


def test_wrong_width_message_has_sklearns_wording_and_the_expected_shape():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    clf = SVMClassifier().fit(X, X[:, 0] > 0)
    with pytest.raises(ValueError, match=r"X has 3 features, but SVMClassifier is expecting 2 "
                                         r"features as input.*expected \(n, 2\) as in fit"):
        clf.predict(np.ones((5, 3)))


def test_one_class_message():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    for cls in (SVMClassifier, GSVMClassifier, FSVClassifier, SCMClassifier):
        with pytest.raises(ValueError, match="needs at least two classes, got 1 class"):
            cls().fit(X, np.ones(30))
        with pytest.raises(ValueError, match="Unknown label type"):
            cls().fit(X, rng.normal(size=30))


def test_gsvm_labels_other_than_plus_minus_one():
    """classes_ are the labels of y: predict returns them (it returned -1 / +1 before)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 2))
    y = np.where(X[:, 0] + X[:, 1] > 0, "yes", "no")
    clf = GSVMClassifier(kernel="linear").fit(X, y)
    assert list(clf.classes_) == ["no", "yes"]
    assert clf.score(X, y) > 0.9
    same = GSVMClassifier(kernel="linear").fit(X, np.where(y == "yes", 1, -1))
    np.testing.assert_allclose(clf.decision_function(X), same.decision_function(X))


@pytest.mark.parametrize("est", [SVMClassifier(kernel="rbf", gamma=0.5),
                                 GSVMClassifier(kernel="shifted_poly")],
                         ids=["SVMClassifier-rbf", "GSVMClassifier-shifted_poly"])
def test_kernel_models_pickle(est):
    """The kernel functions are local functions: rebuilt on unpickling, also in result_."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    est = clone(est).fit(X, y)
    twin = pickle.loads(pickle.dumps(est))
    np.testing.assert_allclose(twin.decision_function(X), est.decision_function(X))
    if "kernel" in est.result_.solution:
        assert callable(twin.result_.solution["kernel"])


def test_lad_integer_weights_equal_repeated_rows_on_tall_data():
    """The sample-weight equivalence check with more rows than columns (the check's own data
    has n <= m, which LAD rejects): the weighted LP is the LP on repeated rows, zero weights
    drop rows. LAD optima need not be unique, so the objectives are compared."""
    rng = np.random.RandomState(42)
    X = rng.rand(60, 4)
    y = X @ [1.0, -2.0, 0.5, 3.0] + rng.standard_t(3, size=60)
    sw = rng.randint(0, 5, size=60)
    weighted = LADRegressor(fit_intercept=True).fit(X, y, sample_weight=sw)
    repeated = LADRegressor(fit_intercept=True).fit(X.repeat(sw, axis=0), y.repeat(sw))
    assert weighted.result_.certified and repeated.result_.certified
    assert weighted.result_.objective == pytest.approx(repeated.result_.objective, rel=1e-7)
    for est in (weighted, repeated):
        assert np.dot(sw, np.abs(y - est.predict(X))) == pytest.approx(
            repeated.result_.objective, rel=1e-6)


def test_estimators_work_without_scikit_learn():
    """scikit-learn is optional: with it unimportable the estimators fall back to aidopt's own
    validation and keep fit / predict / score / transform, NotFittedError and pickling."""
    code = textwrap.dedent("""
        import sys
        sys.modules["sklearn"] = None  # any import of scikit-learn fails
        import pickle
        import numpy as np
        import pandas as pd
        import aidopt
        from aidopt.api.estimator import NotFittedError, validate_data
        assert validate_data is None
        rng = np.random.default_rng(0)
        X = rng.normal(size=(200, 3))
        y = np.where(X[:, 0] > 0, "b", "a")
        lad = aidopt.LADRegressor(fit_intercept=True).fit(
            pd.DataFrame(X, columns=list("pqr")), X @ [1.0, 2.0, 3.0] + rng.laplace(size=200))
        assert list(lad.feature_names_in_) == ["p", "q", "r"] and lad.n_iter_ >= 1
        svm = aidopt.SVMClassifier(kernel="rbf").fit(X, y)
        assert svm.score(X, y) > 0.9 and svm.n_features_in_ == 3
        assert (pickle.loads(pickle.dumps(svm)).predict(X) == svm.predict(X)).all()
        fsv = aidopt.FSVClassifier(nu=0.05).fit(X, y)
        assert fsv.transform(X).shape == (200, fsv.get_support().sum())
        try:
            aidopt.GSVMClassifier().predict(X)
        except NotFittedError as exc:
            assert isinstance(exc, RuntimeError) and isinstance(exc, ValueError)
        else:
            raise AssertionError("no NotFittedError")
        try:
            svm.predict(X[:, :2])
        except ValueError as exc:
            assert "expected (n, 3)" in str(exc)
        try:
            aidopt.LADRegressor().fit(np.empty((12, 0)), np.arange(12.0))
        except ValueError as exc:
            assert "0 features" in str(exc)
        else:
            raise AssertionError("X without columns was fitted")
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]


def test_checks_keep_estimators_quiet_and_deterministic():
    """log=False stays the default, and two fits on the same data give the same model."""
    for est in STANDARD + NON_STANDARD:
        assert est.get_params()["log"] is False
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 3))
    y = X[:, 0] - X[:, 1] > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a, b = FSVClassifier().fit(X, y), FSVClassifier().fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
