"""``solve_svm(method="sor")``: the modified SVM (1.35) by SOR, checked against an independent
Clarabel solve of (1.35), with its dual certificate, limits, bad input and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

import aidopt
from aidopt.cli.main import main
from aidopt.numerics.sor import primal_objective

from ._ref import data, primal_135

CASES = [(0, 0.1), (1, 1.0), (2, 5.0), (3, 0.5)]


@pytest.mark.parametrize(("seed", "C"), CASES)
def test_matches_clarabel_primal_135(seed, C):
    A, d = data(500 + seed, m=120, n=4, sep=1.0)  # overlapping classes
    w_ref, gamma_ref, opt = primal_135(A, d, C)
    res = aidopt.solve_svm(A, d, C=C, method="sor", log=False)
    assert res.termination == "certified_optimal" and res.certified
    assert res.certificate.method == "sor_dual"
    assert res.objective == pytest.approx(opt, rel=1e-5)
    # the dual value is a lower bound and the primal value an upper bound on the optimum
    slack = 1e-9 * max(1.0, abs(opt))
    assert res.lower_bound <= opt + slack <= res.objective + 2 * slack
    assert res.certificate.dual_objective <= opt + slack
    assert res.gap <= 1e-6
    w, gamma = res.solution["w"], res.solution["gamma"]
    # objective = (1.35) at the returned (w, gamma), computed independently
    assert res.objective == pytest.approx(primal_objective(A, d, w, gamma, C), rel=1e-10)
    # (1.35) is 1-strongly convex in [w; gamma]: ||v - v*||^2 <= 2 (E - opt)
    dist = np.hypot(np.linalg.norm(w - w_ref), gamma - gamma_ref)
    assert dist <= np.sqrt(2 * max(res.objective - opt, 0.0)) + 1e-5
    assert res.solution["b"] == -gamma
    u = res.solution["alpha"]
    assert u.shape == (A.shape[0],) and np.all(u >= 0) and np.all(u <= C)
    np.testing.assert_allclose(w, A.T @ (d * u), atol=1e-9)
    assert gamma == pytest.approx(-(d @ u), abs=1e-9)
    assert res.solution["feature_names"] == [f"x{j}" for j in range(4)]


def test_tight_tol_w_gamma_close():
    A, d = data(7, m=100, n=3)
    w_ref, gamma_ref, opt = primal_135(A, d, 1.0)
    res = aidopt.solve_svm(A, d, C=1.0, method="sor", tol=1e-10, log=False)
    assert res.certified
    np.testing.assert_allclose(res.solution["w"], w_ref, atol=1e-4)
    assert res.solution["gamma"] == pytest.approx(gamma_ref, abs=1e-4)
    assert res.objective == pytest.approx(opt, rel=1e-8)


def test_decision_function_is_Xw_plus_b():
    A, d = data(11, m=150, n=5)
    res = aidopt.solve_svm(A, np.where(d > 0, "pos", "neg"), C=1.0, method="sor", log=False)
    assert res.solution["classes"] == ["neg", "pos"]
    w, b, gamma = res.solution["w"], res.solution["b"], res.solution["gamma"]
    decision = A @ w + b
    np.testing.assert_allclose(decision, A @ w - gamma)  # the plane x'w = gamma (1.33)
    pred = np.where(decision >= 0, 1.0, -1.0)
    w_ref, gamma_ref, _ = primal_135(A, d, 1.0)
    ref = np.where(A @ w_ref - gamma_ref >= 0, 1.0, -1.0)
    # same classification as the reference plane except possibly points on the margin boundary
    assert np.mean(pred == ref) >= 0.98
    assert np.mean(pred == d) > 0.6


def test_sample_weight_zero_rows_left_out():
    A, d = data(13, m=80, n=3)
    s = np.ones(80)
    s[:5] = 0.0
    s[5:20] = 2.0
    res = aidopt.solve_svm(A, d, C=0.5, method="sor", sample_weight=s, log=False)
    keep = s > 0
    _, _, opt = primal_135(A[keep], d[keep], 0.5, weights=s[keep])
    assert res.certified
    assert res.objective == pytest.approx(opt, rel=1e-5)
    assert np.all(res.solution["alpha"][:5] == 0)
    assert np.all(res.solution["alpha"][5:20] <= 1.0 + 1e-12)


def test_max_iter_one_is_iteration_limit_not_certified():
    A, d = data(3, m=100, n=4)
    res = aidopt.solve_svm(A, d, C=1.0, method="sor", max_iter=1, log=False)
    assert res.termination == "iteration_limit"
    assert not res.certified and not res.certificate.certified
    assert res.dimensions["sweeps"] == 1
    # still a valid bound pair
    _, _, opt = primal_135(A, d, 1.0)
    assert res.lower_bound <= opt + 1e-9 * opt <= res.objective + 2e-9 * opt


def test_time_limit_is_reported():
    A, d = data(4, m=100, n=4)
    res = aidopt.solve_svm(A, d, C=1.0, method="sor", tol=0.0, max_iter=10**6, time_limit=1e-6,
                           log=False)
    assert res.termination == "time_limit" and not res.certified


def test_omega_option():
    A, d = data(5, m=100, n=4)
    _, _, opt = primal_135(A, d, 1.0)
    res = aidopt.solve_svm(A, d, C=1.0, method="sor", solver_options={"omega": 1.4}, log=False)
    assert res.certified and res.objective == pytest.approx(opt, rel=1e-5)


@pytest.mark.parametrize("kwargs", [
    {"norm": "l1"},
    {"norm": "linf"},
    {"kernel": "rbf"},
    {"kernel": lambda a, b: a @ b.T},
    {"solver": "highs"},
    {"solver": "clarabel"},
    {"C": 0.0},
    {"C": -1.0},
    {"C": float("nan")},
    {"solver_options": {"omega": 2.5}},
    {"solver_options": {"presolve": "on"}},
])
def test_bad_input_raises(kwargs):
    A, d = data(6, m=40, n=3)
    with pytest.raises(ValueError):
        aidopt.solve_svm(A, d, method="sor", log=False, **kwargs)


def test_unknown_common_option_raises():
    A, d = data(6, m=40, n=3)
    with pytest.raises(TypeError):
        aidopt.solve_svm(A, d, method="sor", log=False, max_iters=3)


def test_log_prints_table_and_termination(capsys):
    A, d = data(8, m=60, n=3)
    aidopt.solve_svm(A, d, C=1.0, method="sor", log=True)
    out = capsys.readouterr().out
    assert "sweeps" in out and "rel gap" in out and "certified_optimal" in out
    assert "sor_dual" in out


def test_cli_sor(tmp_path, capsys):
    A, d = data(9, m=120, n=3)
    path = tmp_path / "train.csv"
    np.savetxt(path, np.column_stack([A, d]), delimiter=",",
               header="a,b,c,label", comments="")
    out = tmp_path / "result.json"
    code = main(["svm", "--data", str(path), "--method", "sor", "--C", "0.5", "--tol", "1e-7",
                 "--max-iter", "5000", "--output", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "certified_optimal" in printed
    result = json.loads(out.read_text())
    assert result["termination"] == "certified_optimal" and result["solver"] == "sor"
    _, _, opt = primal_135(A, d, 0.5)
    assert result["objective"] == pytest.approx(opt, rel=1e-6)
    assert result["solution"]["feature_names"] == ["a", "b", "c"]


def test_cli_sor_iteration_limit(tmp_path, capsys):
    A, d = data(10, m=80, n=3)
    path = tmp_path / "train.csv"
    np.savetxt(path, np.column_stack([A, d]), delimiter=",", header="a,b,c,label", comments="")
    code = main(["svm", "--data", str(path), "--method", "sor", "--max-iter", "1", "--quiet"])
    assert code == 1  # finished without a certificate
    assert "iteration_limit" in capsys.readouterr().out


# ---------------------------------------------------------------- sor_linear's new arguments


def test_sor_linear_gap_tol_and_callback():
    from aidopt.numerics.sor import sor_linear

    A, d = data(21, m=100, n=4)
    seen = []
    res = sor_linear(A, d, 1.0, tol=0.0, gap_tol=1e-7,
                     callback=lambda *args: seen.append(args))
    assert res.gap <= 1e-7 * max(1.0, res.primal)
    assert not res.time_limited
    assert seen[0][0] == 0 and seen[-1][0] == res.sweeps
    assert seen[-1][2] == pytest.approx(res.primal) and seen[-1][3] == pytest.approx(res.dual)
    # without gap_tol the residual rule alone is unchanged
    plain = sor_linear(A, d, 1.0, tol=1e-6)
    assert plain.converged and plain.residual <= 1e-6


def test_sor_linear_time_limit_between_blocks(tmp_path):
    from aidopt.numerics.sor import sor_linear

    A, d = data(22, m=200, n=3)
    path = tmp_path / "A.npy"
    np.save(path, A)
    res = sor_linear(str(path), d, 1.0, tol=0.0, max_sweeps=10**6, block_rows=10,
                     time_limit=1e-9)
    assert res.time_limited and res.sweeps == 0  # stopped inside the first sweep
    assert np.all(res.u >= 0) and np.all(res.u <= 1.0) and res.u.any()
    # reported numbers are exact at the returned u
    assert res.primal == pytest.approx(primal_objective(A, d, res.w, res.gamma, 1.0), rel=1e-12)
    np.testing.assert_allclose(res.w, A.T @ (d * res.u), atol=1e-12)


@pytest.mark.parametrize("bad", [{"gap_tol": -1.0}, {"time_limit": 0.0}, {"time_limit": "1"},
                                 {"callback": 3}])
def test_sor_linear_new_arguments_validated(bad):
    from aidopt.numerics.sor import sor_linear

    A, d = data(23, m=20, n=2)
    with pytest.raises(ValueError):
        sor_linear(A, d, 1.0, **bad)


def _ctrl_c_at_sweep(monkeypatch, at):
    """Ctrl-C as SOR's in-memory sweep number ``at`` starts."""
    from aidopt.numerics import sor as sor_module

    real, calls = sor_module._sweep_active, []

    def sweep(*args):
        calls.append(1)
        if len(calls) == at:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(sor_module, "_sweep_active", sweep)


def test_ctrl_c_in_the_sweeps_returns_the_iterate_with_its_bounds(monkeypatch):
    """Ctrl-C during solve_svm(method="sor"): the current u (in its box) comes back with
    termination ``interrupted``, its exact primal value and dual bound (it raised
    KeyboardInterrupt)."""
    rng = np.random.default_rng(3)
    y = np.where(rng.random(2000) < 0.5, 1, -1)
    X = rng.normal(size=(2000, 5)) + 0.2 * y[:, None]
    _ctrl_c_at_sweep(monkeypatch, 3)
    try:
        res = aidopt.solve_svm(X, y, C=1.0, method="sor", log=False)
    except KeyboardInterrupt:  # never abort the test session
        pytest.fail("Ctrl-C escaped solve_svm(method='sor')")
    assert res.termination == "interrupted" and not res.certified
    assert "interrupted" in res.message
    w, gamma = res.solution["w"], res.solution["gamma"]
    E = 0.5 * (w @ w + gamma * gamma) + float(np.maximum(1 - y * (X @ w - gamma), 0).sum())
    assert res.objective == pytest.approx(E, rel=1e-9)
    assert res.lower_bound <= res.objective and np.isfinite(res.lower_bound)


def test_sor_linear_passes_ctrl_c_on_unless_asked(monkeypatch):
    """The AID plug-in's SOR solves leave Ctrl-C to the run framework."""
    from aidopt.numerics.sor import sor_linear

    rng = np.random.default_rng(3)
    y = np.where(rng.random(500) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(500, 4)) + 0.2 * y[:, None]
    _ctrl_c_at_sweep(monkeypatch, 2)
    with pytest.raises(KeyboardInterrupt):
        sor_linear(X, y, 1.0, shrinking=True, tol=1e-12)
