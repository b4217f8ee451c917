"""The semi-supervised SVM (Bennett & Demiriz MIQP / MILP) by AID: :func:`solve_s3vm` and
:class:`S3VMClassifier`; the parameters are declared once in :data:`S3VM`."""

from __future__ import annotations

import warnings

import numpy as np

from aidopt import solvers
from aidopt.api import _front
from aidopt.api._params import Family, Param, none_or_str
from aidopt.api.estimator import _BaseEstimator, _ClassifierMixin
from aidopt.data.validate import (
    as_semisupervised_data,
)
from aidopt.decomposition.plugins.s3vm import S3VMProblem
from aidopt.decomposition.run import RunConfig
from aidopt.results import AIDResult, Termination

__all__ = ['default_s3vm_solver', 'solve_s3vm', 'S3VMClassifier']


def default_s3vm_solver(norm: str = "l2") -> str:
    """The solver ``solve_s3vm`` uses when none is given: HiGHS for the l1 MILP; for the l2 MIQP
    (HiGHS has none) Gurobi when installed, else SCIP. Gurobi solved a 44-cluster aggregated
    Digit1 MIQP in 0.6 s where SCIP 6.3 needed 87 s (docs/s3vm.md); when the size-limited pip
    licence (200 variables in a quadratic model) refuses a larger aggregated model, AID retries it
    with SCIP."""
    if norm != "l2":
        return "highs"
    for name in ("gurobi", "scip"):
        if solvers.availability(name) in ("full", "limited"):
            return name
    raise solvers.SolverUnavailableError(
        "the l2 S3VM is an MIQP, which HiGHS cannot solve: install SCIP (pip install "
        "'aidopt[scip]') or Gurobi (pip install 'aidopt[gurobi]'), or use norm='l1' (a MILP "
        "that HiGHS solves)"
    )


#: the parameters of the semi-supervised SVM: the one declaration behind solve_s3vm,
#: S3VMClassifier and ``aidopt s3vm``
S3VM = Family(
    "s3vm",
    Param("Ml", 5.0,
          "Cost of the labeled hinges.",
          kind="float"),
    Param("Mu", 1.0,
          "Cost of the unlabeled hinges.",
          kind="float"),
    Param("balance", "constraint",
          "Mean of ``w x + b`` over unlabeled rows = mean labeled label; or class-balanced "
          "labeled costs; or neither.",
          kind="{\"constraint\", \"cost\", None}", choices=("constraint", "cost", None),
          parse=none_or_str, metavar="{constraint,cost,none}"),
    Param("norm", "l2",
          "Regularizer 1/2 ||w||^2 (MIQP: SCIP or Gurobi) or ||w||_1 (MILP: HiGHS too); the "
          "same name as in :func:`solve_svm`.",
          kind="{\"l2\", \"l1\"}", choices=("l2", "l1")),
    Param("big_M", None,
          "Override the data-derived big-M.",
          kind="float", parse=float),
    Param("positive_fraction", None,
          "Share of the unlabeled rows known to be in class +1 (0 < value < 1, as SVMlight's "
          "-p): the balance constraint then asks their mean ``w x + b`` to be "
          "2 positive_fraction - 1 instead of the mean labeled label. balance='constraint' only.",
          kind="float", parse=float),
)


@S3VM.door()
def solve_s3vm(X, y, *, labeled=None, regularizer=None, p, **options) -> AIDResult:
    r"""Semi-supervised SVM (Bennett & Demiriz's MIQP / MILP) by AID (Park & Klabjan section 3.3).

    :math:`\min R(w) + M_l \sum_{labeled} \max(0, 1 - y_i(w x_i + b))
    + M_u \sum_{unlabeled} \max(0, 1 - |w x_i + b|)`, written with one binary per unlabeled
    row (cluster, under AID) and big-M rows (:mod:`aidopt.models.s3vm`).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, m)
        A scipy sparse X (CSR, CSC, COO) or a DataFrame with sparse columns stays sparse (CSR):
        the MIPs are built from its (or its centroids') stored entries, the initial k-means
        runs on a 16-column random sketch of the rows, and only the centroids of an aggregated
        l2 problem with K < m are made dense for the span reduction, when K m <= 10^6
        (docs/s3vm.md).
    y : array-like of shape (n,)
        -1 / +1 for labeled rows, 0 or NaN for unlabeled ones.
    labeled : array-like of bool, optional
        Which rows are labeled (then ``y`` of the others is ignored).
    regularizer : {"l2", "l1"}, optional
        Deprecated spelling of ``norm`` (a ``FutureWarning``).
    solver : str, optional
        Default :func:`default_s3vm_solver`. ``solver="highs"`` with ``norm="l2"`` raises
        :class:`aidopt.solvers.SolverCapabilityError` naming Gurobi and SCIP.
    aid : bool, default True
        ``False`` solves the full MIP directly (its bound is the MIP solver's).
    max_iter : int, optional
        Iteration limit: 1 and 5 are the paper's AID1 and AID5. r0 defaults to 0.01 for
        n <= 10^4, else 0.0001 (the paper's smaller rates; at least 12 clusters).

    Returns
    -------
    AIDResult
        ``solution["w"], solution["b"]``, ``solution["decision"]`` (w x_i + b for every row) and
        ``solution["transduction"]`` (the sign labels, -1 / +1, of every row). Termination:
        ``prop5_optimal`` when Prop. 5 holds for the returned solution (optimal among labellings
        constant on the final clusters; not a global certificate), ``certified_optimal`` only
        for a direct solve whose MIP gap is within ``tol``, otherwise the limit that stopped it.
    """
    if regularizer is not None:
        warnings.warn("solve_s3vm(regularizer=...) is now spelled norm=... (as in solve_svm)",
                      FutureWarning, stacklevel=3)  # the caller of the door
        p.norm = regularizer
    problem = S3VMProblem(Ml=p.Ml, Mu=p.Mu, balance=p.balance, norm=p.norm, big_M=p.big_M,
                          positive_fraction=p.positive_fraction)
    config = RunConfig.from_kwargs(options, caller="solve_s3vm", solver=options.get("solver")
                                   or default_s3vm_solver(p.norm))
    data = as_semisupervised_data(X, y, labeled, sparse=True)
    result = _front.run_problem(problem, data, config)
    if "decision" in result.solution:
        result.solution["transduction"] = np.where(result.solution["decision"] >= 0, 1.0, -1.0)
    _front.decorate(result, data)
    return result


class S3VMClassifier(_ClassifierMixin, _BaseEstimator):
    """Semi-supervised linear SVM (Bennett & Demiriz MIQP / MILP) solved by AID.

    ``fit(X, y)`` takes ``y`` = -1 / +1 on labeled rows and 0 or NaN on unlabeled rows (the
    labels of the unlabeled rows are inferred: ``transduction_``).

    Parameters
    ----------

    Attributes
    ----------
    classes_ : ndarray ``[-1, 1]``
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    transduction_ : ndarray of shape (n_samples,)
        Predicted label (-1 / +1) of every training row; ``transduction_[y == 0]`` are the
        labels given to the unlabeled rows.
    result_ : AIDResult
    n_iter_ : int
        AID iterations (1 for a direct solve).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        The column names, when X was a DataFrame with string column names.

    Notes
    -----
    A binary model, with no multi-class form (docs/multiclass.md): the MIQP / MILP labels each
    unlabeled row by one binary variable, the side of one plane, and Prop. 5 is a statement
    about that labelling. One-vs-rest or one-vs-one subproblems would each label the unlabeled
    rows on their own, and nothing makes their labellings agree (a row could join no class or
    several), so the transduction would not be the solution of any one problem. Labels other
    than -1 / +1 / 0 / NaN are refused (``labels must be -1 or +1``).

    Not a standard scikit-learn classifier: the labels are -1 / +1 and 0 / NaN marks the
    unlabeled rows, at least one of which is required. scikit-learn's common checks (which fit
    fully labeled data with arbitrary labels, 0 among them) are therefore skipped
    (``tags._skip_test``); ``tests/unit/test_sklearn_checks.py`` runs the checks that need no
    fit and tests the conventions (features, fitted state, pickling) on semi-supervised data.

    Examples
    --------
    >>> import numpy as np
    >>> from aidopt import S3VMClassifier
    >>> from aidopt.instances import s3vm_instance
    >>> X, y, truth = s3vm_instance(n=120, n_labeled=6, separation=4.0, seed=0)
    >>> clf = S3VMClassifier(norm="l1").fit(X, y)
    >>> float((clf.transduction_ == truth).mean()) > 0.9
    True
    """

    _options_note = "``max_iter=1`` / ``5`` are the paper's AID1 / AID5"
    _family = S3VM
    _sparse_input = True
    _sklearn_checks_skipped = (
        "transductive: y is -1 / +1 on labeled rows and 0 / NaN on unlabeled ones, at least one "
        "unlabeled; the common checks fit fully labeled y with arbitrary labels (0 among them)")

    def fit(self, X, y):
        """Fit on labeled and unlabeled rows together.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            -1 / +1 on labeled rows, 0 or NaN on unlabeled rows.

        Returns
        -------
        self
        """
        X, y = self._validate_fit(X, y, target="labels")
        result = solve_s3vm(X, y, **self._solve_kwargs())
        self._require_solution(result, "S3VM")
        sol = result.solution
        self.classes_ = np.array([-1, 1])
        self.coef_ = np.asarray(sol["w"], dtype=float)[None, :]
        self.intercept_ = np.array([float(sol["b"])])
        self.transduction_ = sol["transduction"].astype(int)
        self._after_fit(X, result, "S3VM", n_features=len(sol["feature_names"]),
                        accepted=(Termination.CERTIFIED_OPTIMAL, Termination.PROP5_OPTIMAL))
        return self

    def decision_function(self, X) -> np.ndarray:
        """``w x + b``; >= 0 means class +1."""
        X = self._check_X(X, dense=False)
        return X @ self.coef_[0] + self.intercept_[0]

    def predict(self, X) -> np.ndarray:
        """Labels -1 / +1."""
        return np.where(self.decision_function(X) >= 0, 1, -1)
