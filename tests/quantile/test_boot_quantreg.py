"""``se="boot"`` is quantreg's default bootstrap (``boot.rq``, ``bsmethod = "xy"``): its standard
errors at 10^4 x 10 against R's, recorded below (R is not on CI), within Monte Carlo error."""

from __future__ import annotations

import numpy as np
from aidopt.instances import lad_instance

import aidopt
from aidopt.api.rq import resample_counts

# R 4.2.2, quantreg 5.94, on lad_instance("B", n=10000, m=10, seed=0) (column 0 the intercept),
# X and y written as binary doubles and read with readBin:
#   set.seed(7); fit <- rq(y ~ X - 1, tau = 0.5)
#   summary(fit, se = "boot", R = 1000)$coefficients[, 2]
R_BOOT_SE = [0.075597185759783997, 0.0049417585420527188, 0.0047970454563174506,
             0.0050173082198516124, 0.0054696571010636654, 0.0053067336593050924,
             0.0052403590490127843, 0.0047746162143283265, 0.0049177069383783889,
             0.0051552652035148456]
R_REPLICATES = 1000


def test_boot_standard_errors_agree_with_quantreg_within_monte_carlo_error():
    """The ratio of two independent bootstrap standard errors from B and R replicates has relative
    standard deviation sigma = sqrt(1/(2(B-1)) + 1/(2(R-1))) (normal errors). Each coefficient's
    ratio must be within 3 sigma of 1, and their mean within 3 sigma / sqrt(p) (as if the
    coefficients were independent): a wrong resample size or scaling (a factor sqrt(2), m-of-n)
    fails the second by far. B = 40 keeps the test fast: sigma = 0.115."""
    X, y = lad_instance("B", n=10_000, m=10, seed=0)
    fit = aidopt.solve_lad(X, y, quantile=0.5, log=False)
    B = 40
    boot = fit.inference("boot", B=B, seed=0)
    ratio = boot.std_error / np.asarray(R_BOOT_SE)
    sigma = np.sqrt(1 / (2 * (B - 1)) + 1 / (2 * (R_REPLICATES - 1)))
    assert np.all(np.abs(ratio - 1) <= 3 * sigma), ratio
    assert abs(ratio.mean() - 1) <= 3 * sigma / np.sqrt(ratio.size), ratio.mean()


def test_the_resamples_are_n_rows_drawn_with_replacement():
    """boot.rq's "xy": sample(n, n, replace = TRUE) per replicate (mofn = n, scale sqrt(mofn/n) =
    1); ours: the counts of n uniform draws with replacement."""
    n = 50
    draws = list(resample_counts(n, 2000, seed=3))
    assert all(d.sum() == n and d.min() >= 0 for d in draws)
    counts = np.asarray(draws)
    # each count is Binomial(n, 1/n): variance 1 - 1/n, a row left out with (1 - 1/n)^n
    assert abs(counts.var() - (1 - 1 / n)) < 0.03
    assert abs(np.mean(counts == 0) - (1 - 1 / n) ** n) < 0.01
