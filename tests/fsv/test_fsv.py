"""FSV by successive linearization (Bradley, Mangasarian & Musicant (1.21)-(1.23), Algorithm 2)."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.models import fsv

import aidopt
from aidopt.results import Termination
from aidopt.solvers import availability


def instance(seed: int, n: int = 200, informative: int = 3, noise: int = 4):
    """Two classes separated in the first ``informative`` coordinates, plus pure-noise ones."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(n, informative + noise))
    X[:, :informative] += 0.8 * y[:, None]
    return X, y


def concave(X, y, w, gamma, nu, alpha):
    """(1.21) evaluated independently of the package."""
    error = np.maximum(0.0, 1.0 - y * (X @ w - gamma)).sum()
    return nu * error + np.sum(1.0 - np.exp(-alpha * np.abs(w)))


@pytest.mark.parametrize("seed", range(20))
def test_sla_terminates_at_a_stationary_point_and_never_increases_the_objective(seed):
    X, y = instance(seed)
    res = aidopt.solve_fsv(X, y, nu=0.1, aid=False, log=False, max_iter=50)
    assert res.termination is Termination.STATIONARY
    assert not res.certified  # a stationary point is never called optimal
    assert len(res.history) <= 20  # finitely, in a few LPs (the paper: usually 5 to 7)
    E = [h.E_t for h in res.history]
    start = res.history[0].E_t
    assert all(b <= a + 1e-7 * max(1.0, abs(a)) for a, b in zip([start, *E], E, strict=False))
    # the stopping rule (1.23) holds at the returned point: the LP decreases by at most tol |f|
    decrease = res.certificate.residuals["decrease of the linearized LP (1.23)"]
    assert decrease <= 1e-6 * max(1.0, abs(res.objective))
    w, gamma = res.solution["w"], res.solution["gamma"]
    assert res.objective == pytest.approx(concave(X, y, w, gamma, 0.1, 5.0), rel=1e-9)
    # the returned plane is a minimizer of the LP linearized at itself (minimum principle):
    # re-solve that LP independently and compare values
    t = np.maximum(5.0 * np.exp(-5.0 * np.abs(w)), 1e-9)
    model = fsv.create_instance(X, y, None, 0.1, t)
    out = aidopt.solvers.solve_model(model, "highs")
    w2, g2, y2, v2 = fsv.solution_from(model)
    at_point = 0.1 * np.maximum(0.0, 1.0 - y * (X @ w - gamma)).sum()
    lp_value = 0.1 * y2.sum() + t @ (v2 - np.abs(w))
    assert out.optimal and lp_value >= at_point - 1e-6 * max(1.0, abs(res.objective))


def test_fsv_drops_noise_features_and_the_plane_separates():
    X, y = instance(3, n=600, informative=3, noise=6)
    res = aidopt.solve_fsv(X, y, nu=0.05, log=False)
    support = set(res.solution["support"].tolist())
    assert support and support <= {0, 1, 2}
    f = X @ res.solution["w"] - res.solution["gamma"]
    assert np.mean(np.sign(f) == y) > 0.75


def test_aid_inside_sla_gives_the_direct_answer():
    X, y = instance(5, n=3000, informative=3, noise=5)
    direct = aidopt.solve_fsv(X, y, nu=0.05, aid=False, log=False, tol=1e-9)
    by_aid = aidopt.solve_fsv(X, y, nu=0.05, aid=True, log=False, tol=1e-9)
    assert by_aid.termination is direct.termination is Termination.STATIONARY
    assert by_aid.solution["support"].tolist() == direct.solution["support"].tolist()
    assert by_aid.objective == pytest.approx(direct.objective, rel=1e-5)
    np.testing.assert_allclose(by_aid.solution["w"], direct.solution["w"], atol=1e-3)
    assert all(h.info["inner_certified"] == 1.0 for h in by_aid.history)
    # each AID solve after the first starts from the previous final partition
    assert by_aid.history[-1].info["inner_iterations"] <= by_aid.history[0].info["inner_iterations"]


def test_direct_steps_after_the_first_are_warm_re_solves():
    X, y = instance(7)
    res = aidopt.solve_fsv(X, y, nu=0.1, aid=False, log=False)
    assert len(res.history) >= 2
    lines = []
    import logging

    class Keep(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())

    handler = Keep()
    logger = logging.getLogger("aidopt")
    logger.addHandler(handler)  # a user's own logging configuration: handler and level
    logger.setLevel(logging.INFO)
    try:
        aidopt.solve_fsv(X, y, nu=0.1, aid=False, log=True)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)
    rows = [line for line in lines if line.strip().split(" ")[0].isdigit()]
    assert "cold highs" in rows[0] and all("warm highs" in r for r in rows[1:])


@pytest.mark.skipif(availability("gurobi") not in ("full", "limited"), reason="Gurobi not installed")
def test_gurobi_persistent_path_agrees_with_highs():
    X, y = instance(2, n=150)
    a = aidopt.solve_fsv(X, y, nu=0.1, log=False, solver="highs", tol=1e-9)
    b = aidopt.solve_fsv(X, y, nu=0.1, log=False, solver="gurobi", tol=1e-9)
    assert a.objective == pytest.approx(b.objective, rel=1e-6)
    assert a.solution["support"].tolist() == b.solution["support"].tolist()


def test_rlp_start():
    X, y = instance(1)
    res = aidopt.solve_fsv(X, y, nu=0.1, start="rlp", log=False)
    assert res.termination is Termination.STATIONARY


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(nu=0.0), ValueError, "nu must be a positive"),
    (dict(nu=-1.0), ValueError, "nu must be a positive"),
    (dict(alpha=0.0), ValueError, "alpha must be a positive"),
    (dict(start="zero"), ValueError, "start must be"),
    (dict(aid="yes"), TypeError, "aid must be"),
    (dict(nu_=1.0), TypeError, "did you mean 'nu'|unexpected keyword"),
])
def test_bad_parameters(kwargs, error, match):
    X, y = instance(0, n=40)
    with pytest.raises(error, match=match):
        aidopt.solve_fsv(X, y, log=False, **kwargs)


def test_bad_data():
    X, y = instance(0, n=40)
    with pytest.raises(ValueError, match="two classes|one class|2 classes"):
        aidopt.solve_fsv(X, np.ones(40), log=False)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        aidopt.solve_fsv(Xn, y, log=False)


def test_classifier_is_a_feature_selector_in_a_pipeline():
    sklearn = pytest.importorskip("sklearn")  # noqa: F841
    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    X, y = instance(4, n=300, informative=2, noise=5)
    clf = aidopt.FSVClassifier(nu=0.05).fit(X, y)
    assert set(clf.get_support(indices=True)) <= {0, 1} and clf.get_support().sum() >= 1
    assert clf.transform(X).shape == (300, clf.get_support().sum())
    assert clf.result_.termination is Termination.STATIONARY
    assert clone(clf).get_params() == clf.get_params()
    scores = cross_val_score(make_pipeline(aidopt.FSVClassifier(nu=0.05), LinearSVC()), X, y, cv=3)
    assert scores.mean() > 0.7
    with pytest.raises(RuntimeError, match="not fitted"):
        aidopt.FSVClassifier().get_support()


def test_cli_fsv(tmp_path, capsys):
    from aidopt.cli.main import main

    X, y = instance(6, n=200, informative=2, noise=3)
    path = tmp_path / "d.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",",
               header="a,b,c,d,e,label", comments="")
    rc = main(["fsv", "--data", str(path), "--nu", "0.1", "--quiet", "--output",
               str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    assert rc == 0 and "stationary" in out and "selected features" in out
    assert (tmp_path / "r.json").exists()
