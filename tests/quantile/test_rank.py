"""``se="rank"``: rank-inversion intervals of regression quantile coefficients against R quantreg's
numbers (recorded below with the R commands), against the rankscore statistic computed
independently (an interior-point LP, a closed form for the intercept-only model), and their
properties (they hold the estimate, widen as alpha falls, weights count as repeated rows)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import linprog

import aidopt
from aidopt.api import rq as api_rq
from aidopt.cli.main import main

# R's datasets::stackloss (21 rows): Air.Flow, Water.Temp, Acid.Conc., stack.loss
AIR = [80, 80, 75, 62, 62, 62, 62, 62, 58, 58, 58, 58, 58, 58, 50, 50, 50, 50, 50, 56, 70]
WATER = [27, 27, 25, 24, 22, 23, 24, 24, 23, 18, 18, 17, 18, 19, 18, 18, 19, 19, 20, 20, 20]
ACID = [89, 88, 90, 87, 87, 87, 93, 93, 87, 80, 89, 88, 82, 93, 89, 86, 72, 79, 80, 82, 91]
LOSS = [42, 37, 37, 28, 18, 18, 19, 20, 15, 14, 14, 13, 11, 12, 8, 7, 8, 8, 9, 15, 15]


def stackloss():
    """R's design (intercept first) and response."""
    return np.column_stack([np.ones(21), AIR, WATER, ACID]).astype(float), np.array(LOSS, float)


# R 4.2.2, quantreg 5.94 (rows: (Intercept), Air.Flow, Water.Temp, Acid.Conc.):
#   library(quantreg); f <- rq(stack.loss ~ ., stackloss, tau = tau)
#   summary(f, se = "rank", alpha = alpha)$coefficients      # alpha = 0.1 is R's default
# "coef" is coef(f); (lower bd, upper bd) by alpha.
R_STACKLOSS = {
    0.5: {"coef": [-39.689855072463792851, 0.831884057971013946, 0.573913043478264995,
                   -0.060869565217391002],
          0.05: ([-53.79463767823236253, 0.50909018993440425, 0.27150661069805809,
                  -0.27771880999694420],
                 [-24.491454290813400974, 1.167508740854438898, 3.037259077081261083,
                  0.015336276180537026]),
          0.1: ([-41.61973166151228298, 0.51277866490035040, 0.32182354127485058,
                 -0.21348289921982144],
                [-29.677535154602921352, 1.141171151437700537, 1.410898124230162143,
                 -0.028913409316186075])},
    0.25: {"coef": [-36.0, 0.5, 1.0, 0.0],
           0.05: ([-59.00675866779483414, 0.22877343348725060, 0.28633499375244609,
                   -0.64308816303038885],
                  [-7.837782429639112536, 0.969898125044599935, 2.264304707288345320,
                   0.086106626733497199]),
           0.1: ([-53.84270299225045875, 0.24822784701594774, 0.31678743381305219,
                  -0.57947203928395752],
                 [-36.0, 0.96678000319222690, 2.1906654320340619, 0.0])},
}

# The one stackloss bound that differs. R's uninterpolated output at tau = 0.5
# (rq.fit.br(x, y, tau = 0.5, ci = TRUE, alpha = a, interp = FALSE), a = 0.05 or 0.1) for
# Air.Flow's lower side: the crossing 0.50793650793650336 (where |T| jumps from 1.5883455605121870
# to 2.2256095825860358) and the inner end 0.51428571428571435 of the last piece inside. The
# statistic is 1.58834556... on all of [0.507937, 0.527778] (the restricted objective is linear
# there); quantreg's simplex pivots at 0.514286 without changing it (a degenerate pivot: the data
# are integers with ties) and interpolates from there, aidopt from the piece's end 19/36.
R_AIR_LOWER = {"crossing": 0.50793650793650336, "t_in": 1.5883455605121870,
               "t_out": 2.2256095825860358}


@pytest.mark.parametrize("tau", [0.5, 0.25])
@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_stackloss_equals_quantreg(tau, alpha):
    X, y = stackloss()
    fit = aidopt.solve_lad(X, y, quantile=tau, tol=1e-12, log=False)
    r = R_STACKLOSS[tau]
    np.testing.assert_allclose(fit.solution["beta"], r["coef"], rtol=1e-9, atol=1e-9)
    inf = fit.inference("rank", alpha=alpha)
    lower, upper = (np.array(b) for b in r[alpha])
    if tau == 0.5:  # Air.Flow's lower bound: the same crossing and statistics, another inner end
        c = stats.t.ppf(1 - alpha / 2, 17)
        inner = 19 / 36
        lower[1] = inner - (inner - R_AIR_LOWER["crossing"]) * (c - R_AIR_LOWER["t_in"]) / (
            R_AIR_LOWER["t_out"] - R_AIR_LOWER["t_in"])
        assert abs(lower[1] - r[alpha][0][1]) > 1e-3  # a real difference, within the piece
    np.testing.assert_allclose(inf.lower, lower, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(inf.upper, upper, rtol=1e-10, atol=1e-12)
    assert np.isnan(inf.std_error).all() and np.isnan(inf.p_value).all()
    assert inf.details["cutoff"] == pytest.approx(stats.t.ppf(1 - alpha / 2, 17))


def continuous_data():
    """60 rows, heteroscedastic t(4) errors (RandomState's stream is fixed by numpy's policy);
    written for R with np.savetxt(..., fmt="%.17g")."""
    rs = np.random.RandomState(7)
    x1 = rs.standard_normal(60)
    x2 = rs.uniform(0, 4, 60)
    y = 2 + x1 - 0.5 * x2 + (1 + 0.3 * x2) * rs.standard_t(4, size=60)
    return np.column_stack([x1, x2]), y


# R 4.2.2, quantreg 5.94, the data of continuous_data() in d.csv (columns x1, x2, y):
#   d <- read.csv("d.csv"); f <- rq(y ~ x1 + x2, tau = tau, data = d)
#   summary(f, se = "rank", alpha = 0.05)$coefficients        # "iid"
#   summary(f, se = "rank")$coefficients                      # "iid", alpha 0.1 (R's default)
#   summary(f, se = "rank", alpha = 0.05, iid = FALSE)$coefficients   # "nid"
# (rows (Intercept), x1, x2; (lower bd, upper bd))
R_CONTINUOUS = {
    0.5: {("iid", 0.05): ([1.31696673865608083, 0.41144780711535534, -1.36712442622689956],
                          [3.17742274140815084, 1.56134503220131515, -0.30101189126214228]),
          ("iid", 0.1): ([1.3519396500630856, 0.6011237855262932, -1.3092691994758638],
                         [3.1553149652335692, 1.3701134239186412, -0.3683833488275215]),
          ("nid", 0.05): ([1.31621505350114010, 0.41129270236272547, -1.39869634827960998],
                          [3.17854655972235856, 1.56201162432885199, -0.27396218882349532])},
    0.3: {("iid", 0.05): ([0.046791038905548504, 0.338740709390052186, -1.155470693934824267],
                          [1.85518876666983701, 1.60486168336930834, -0.35328123481923329]),
          ("iid", 0.1): ([0.22210147900518443, 0.68338447004767355, -1.12508769802739161],
                         [1.71814736730748874, 1.53343314210286508, -0.48730349162335024]),
          ("nid", 0.05): ([0.032605252790187972, 0.330511209513375370, -1.174846338385083344],
                          [1.87708527456855356, 1.60731537298019855, -0.33090928639147693])},
}


@pytest.mark.parametrize("tau", sorted(R_CONTINUOUS))
def test_continuous_data_equal_quantreg(tau):
    X, y = continuous_data()
    est = aidopt.LADRegressor(quantile=tau, tol=1e-10).fit(X, y)
    order = [2, 0, 1]  # aidopt's intercept is the last coefficient, R's the first
    for (scale, alpha), (lower, upper) in R_CONTINUOUS[tau].items():
        inf = est.result_.inference("rank", alpha=alpha, rank_scale=scale)
        # iid: exact up to rounding; nid: q_j from the fits at tau -/+ h (finished at their
        # vertices, as R's) and local densities shifted by a relative, not quantreg's absolute,
        # 3.7e-11 (docs/quantiles.md): measured 2e-8 relative apart (before the vertex finish)
        rtol, atol = (1e-10, 0) if scale == "iid" else (1e-7, 1e-9)
        np.testing.assert_allclose(inf.lower[order], lower, rtol=rtol, atol=atol)
        np.testing.assert_allclose(inf.upper[order], upper, rtol=rtol, atol=atol)
        assert inf.details["scale"] == scale


def independent_statistic(X, y, tau, j, b):
    """T_j(b) from HiGHS's interior-point method (not a vertex; x_j'u is unique inside a
    piece) and q_j from a least-squares residual."""
    others = np.delete(X, j, axis=1)
    res = linprog(-(y - b * X[:, j]), A_eq=others.T, b_eq=np.zeros(others.shape[1]),
                  bounds=(tau - 1, tau), method="highs-ipm")
    assert res.status == 0
    coef, *_ = np.linalg.lstsq(others, X[:, j], rcond=None)
    q = float(np.sum((X[:, j] - others @ coef) ** 2))
    return float(X[:, j] @ res.x) / np.sqrt(tau * (1 - tau) * q)


def test_the_bounds_against_the_statistic_computed_independently():
    X, y = continuous_data()
    X = np.column_stack([X, np.ones(len(y))])
    tau, alpha = 0.4, 0.05
    fit = aidopt.solve_lad(X, y, quantile=tau, tol=1e-10, log=False)
    inf = fit.inference("rank", alpha=alpha)
    c = stats.t.ppf(1 - alpha / 2, len(y) - 3)
    beta = fit.solution["beta"]
    for j in range(3):
        lo, hi = inf.lower[j], inf.upper[j]
        width = hi - lo
        # between the bounds every test accepts; well beyond them every test rejects
        for b in np.linspace(lo, hi, 9)[1:-1]:
            assert abs(independent_statistic(X, y, tau, j, b)) <= c + 1e-7
        for b in (lo - width, hi + width):
            assert abs(independent_statistic(X, y, tau, j, b)) > c
        assert np.sign(independent_statistic(X, y, tau, j, beta[j] - 0.25 * width)) >= 0


def test_the_intercept_only_model_has_the_closed_form():
    """p = 1 (quantreg refuses it): T(b) = (n tau - #{y < b}) / sqrt(tau (1 - tau) n) between
    data points, so the bounds interpolate between order statistics."""
    y = np.random.default_rng(4).normal(size=41)
    tau, alpha = 0.5, 0.1
    fit = aidopt.solve_lad(np.ones((41, 1)), y, quantile=tau, tol=1e-12, log=False)
    inf = fit.inference("rank", alpha=alpha)
    n, c = 41, stats.t.ppf(1 - alpha / 2, 40)
    ys = np.sort(y)
    T = (n * tau - np.arange(n + 1)) / np.sqrt(tau * (1 - tau) * n)  # on (ys[k-1], ys[k])
    k_out = np.flatnonzero(T > c).max()  # the piece below ys[k_out] is the last outside: lower
    # the last piece inside is (ys[k_out], ys[k_out + 1]) with T[k_out + 1]
    t_in, t_out = T[k_out + 1], T[k_out]
    lower = ys[k_out + 1] - (ys[k_out + 1] - ys[k_out]) * (c - t_in) / (t_out - t_in)
    k_up = np.flatnonzero(T < -c).min()  # (ys[k_up - 1], ys[k_up]) is the first outside above
    t_in, t_out = -T[k_up - 1], -T[k_up]
    upper = ys[k_up - 2] + (ys[k_up - 1] - ys[k_up - 2]) * (c - t_in) / (t_out - t_in)
    assert inf.lower[0] == pytest.approx(lower, rel=1e-12)
    assert inf.upper[0] == pytest.approx(upper, rel=1e-12)


@pytest.mark.parametrize("seed", [1, 2])
def test_intervals_hold_the_estimate_and_widen_as_alpha_falls(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(80, 2))
    y = X @ [1.0, -2.0] + rng.standard_t(3, size=80)
    tau = [0.35, 0.7][seed - 1]
    fit = aidopt.solve_lad(X, y, fit_intercept=True, quantile=tau, tol=1e-10, log=False)
    beta = fit.solution["beta"]
    previous = None
    for alpha in (0.3, 0.1, 0.02):
        inf = fit.inference("rank", alpha=alpha)
        assert (inf.lower <= beta).all() and (beta <= inf.upper).all()
        if previous is not None:
            assert (inf.lower <= previous.lower).all() and (previous.upper <= inf.upper).all()
            assert (inf.upper - inf.lower > previous.upper - previous.lower).all()
        previous = inf


def test_sample_weights_count_as_repeated_rows():
    X, y = continuous_data()
    k = np.random.default_rng(3).integers(1, 4, size=len(y))
    weighted = aidopt.solve_lad(X, y, sample_weight=k, fit_intercept=True, quantile=0.45,
                                tol=1e-12, log=False)
    repeated = aidopt.solve_lad(np.repeat(X, k, axis=0), np.repeat(y, k), fit_intercept=True,
                                quantile=0.45, tol=1e-12, log=False)
    a, b = weighted.inference("rank"), repeated.inference("rank")
    assert a.n == b.n == k.sum() and a.rdf == b.rdf
    np.testing.assert_allclose(a.lower, b.lower, rtol=1e-9)
    np.testing.assert_allclose(a.upper, b.upper, rtol=1e-9)


def test_unbounded_sides_are_infinite():
    """Five rows and alpha = 0.001 (c = 12.9): |T| never reaches c; quantreg prints
    -/+1.7976931348623157e+308 (summary(rq(y ~ x, tau = 0.5), se = "rank", alpha = 0.001)), and
    at alpha = 0.5 (-0.077398089981391638, 0.57974073983785668) and (0.745320082824684094,
    1.14476845048677989)."""
    x = np.array([0.3, 1.1, 2.0, 2.9, 4.2])
    y = np.array([1.2, 0.7, 2.5, 2.2, 4.9])
    fit = aidopt.solve_lad(np.column_stack([np.ones(5), x]), y, quantile=0.5, tol=1e-12, log=False)
    inf = fit.inference("rank", alpha=0.001)
    assert (inf.lower == -np.inf).all() and (inf.upper == np.inf).all()
    assert "-inf" in str(inf)
    half = fit.inference("rank", alpha=0.5)
    np.testing.assert_allclose(half.lower, [-0.077398089981391638, 0.745320082824684094],
                               rtol=1e-10)
    np.testing.assert_allclose(half.upper, [0.57974073983785668, 1.14476845048677989], rtol=1e-10)


def test_tables_sequences_and_the_cli(tmp_path, capsys):
    X, y = continuous_data()
    fits = aidopt.solve_lad(X, y, fit_intercept=True, quantile=[0.3, 0.5], log=False)
    tables = fits.inference("rank", alpha=0.1)
    assert [t.tau for t in tables] == [0.3, 0.5]
    text = fits.summary(se="rank")
    assert text.count("lower bd") == 2 and "Std. Error" not in text
    assert "rank-inversion intervals (iid scale, 95%)" in text
    frame = tables[0].frame()
    assert frame["std_error"].isna().all() and (frame["lower"] < frame["estimate"]).all()
    import pandas as pd

    path = tmp_path / "d.csv"
    pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": y}).to_csv(path, index=False)
    code = main(["lad", "--data", str(path), "--target", "y", "--quantile", "0.5", "--se", "rank",
                 "--quiet"])
    out = capsys.readouterr().out
    assert code == 0 and "coefficients" in out and "lower bd" in out and "Std. Error" not in out
    np.testing.assert_allclose(  # the CLI's table is the 95% one, R's order (x1, x2, intercept)
        [float(v) for v in out.split("x1")[-1].split()[:3]],
        [0.901735, 0.411448, 1.56135], rtol=1e-5)


def test_refusals(monkeypatch):
    X, y = continuous_data()
    fit = aidopt.solve_lad(X, y, fit_intercept=True, quantile=0.5, log=False)
    with pytest.raises(ValueError, match="rank_scale"):
        fit.inference("rank", rank_scale="ker")
    with pytest.raises(ValueError, match="alpha"):
        fit.inference("rank", alpha=0.0)
    with pytest.raises(ValueError, match="se must be one of"):
        fit.inference("Rank")
    monkeypatch.setattr(api_rq, "RANK_MAX_ROWS", 50)
    with pytest.raises(ValueError, match="modest n: 60 rows > 50"):
        fit.inference("rank")
    monkeypatch.setattr(api_rq, "RANK_MAX_ROWS", 100)
    monkeypatch.setattr(api_rq, "RANK_WARN_ROWS", 50)
    with pytest.warns(RuntimeWarning, match="se='rank' on 60 rows"):
        fit.inference("rank")
    import pickle

    with pytest.raises(ValueError, match="does not hold its data"):
        pickle.loads(pickle.dumps(fit)).inference("rank")
    few = aidopt.solve_lad(np.column_stack([np.ones(3), [1.0, 2.0, 3.5]]), np.array([1.0, 0.0, 2.0]),
                           quantile=0.5, log=False)
    few_rows = few.inference("rank", alpha=0.5)  # n - p = 1: a t with 1 degree of freedom
    assert few_rows.rdf == 1
    two = aidopt.solve_lad(np.column_stack([np.ones(2), [1.0, 2.0]]), np.array([1.0, 0.0]),
                           quantile=0.5, log=False)
    with pytest.raises(ValueError, match="more rows than coefficients"):
        two.inference("rank")


def test_rank_refuses_a_sparse_x_whose_dense_copy_is_too_large(monkeypatch):
    from scipy import sparse

    import aidopt.api.rq as rq_module

    rng = np.random.default_rng(3)
    X = sparse.random(4000, 300, density=0.02, random_state=4, format="csr")
    y = X @ np.ones(300) + rng.laplace(size=4000)
    res = aidopt.solve_lad(X, y, fit_intercept=True, quantile=0.5, log=False)
    assert "sparse normal equations" in res.message  # the fit kept X sparse
    monkeypatch.setattr(rq_module, "RANK_DENSE_BYTES", 1000.0)
    with pytest.raises(ValueError, match="dense copy of X"):
        res.inference(se="rank")
