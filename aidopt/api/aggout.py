r"""Learning from aggregate outputs: ``solve_aggregate_outputs`` and ``AggregateOutputClassifier``.

Rows come in collections; of each collection only the number of class-1 rows is known. Two
methods (the mathematics in docs/aggout.md):

* ``method="miqp"``: the Musicant et al. MIQP (1/2 ||w||^2, or its 1-norm MILP), solved by AID
  over clusters of rows within collections (:class:`aidopt.decomposition.AggregateOutputProblem`)
  or directly (``aid=False``), with the MIP solver's bound;
* ``method="slaag"``: Dutt & Kumar's successive linear approximation (problem (3), then the
  step-2 programs), a heuristic that is orders of magnitude faster.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from aidopt.api import _front
from aidopt.api._params import Family, Param
from aidopt.api.estimator import _BaseEstimator, _ClassifierMixin
from aidopt.data.validate import as_aggregate_data
from aidopt.decomposition.plugins.aggout import AggregateOutputProblem
from aidopt.decomposition.plugins.slaag import SLAAGStep, class_costs
from aidopt.decomposition.run import RunConfig
from aidopt.decomposition.sla import successive_linearization
from aidopt.results import AIDResult, Termination

__all__ = ['AggregateOutputClassifier', 'METHODS', 'solve_aggregate_outputs']


METHODS = ("miqp", "slaag")

#: the parameters of learning from aggregate outputs: the one declaration behind
#: solve_aggregate_outputs, AggregateOutputClassifier and ``aidopt aggout``
AGGOUT = Family(
    "aggout",
    Param("method", "slaag",
          "SLAAG's successive linear approximation, or the Musicant et al. mixed-integer "
          "program.",
          kind="{\"slaag\", \"miqp\"}", choices=("slaag", "miqp")),
    Param("C", None,
          "``\"miqp\"``: cost of the hinges (default 1). ``\"slaag\"``: cost of problem (3)'s "
          "class-1 hinges (default: the class-0 share of all rows, Dutt & Kumar section 5).",
          kind="float", parse=float),
    Param("D", None,
          "``\"miqp\"``: cost of a collection's count deviation (default 1). ``\"slaag\"``: cost "
          "of problem (3)'s class-0 hinges (default: the class-1 share of all rows).",
          kind="float", parse=float),
    Param("E", 1.0,
          "``\"slaag\"``: cost of the step-2 linearization.",
          kind="float"),
    Param("norm", "l2",
          "1/2 ||w||^2 (the seeds' objectives: an MIQP for SCIP / Gurobi, or a QP) or ||w||_1 "
          "(an MILP / an LP, HiGHS).",
          kind="{\"l2\", \"l1\"}", choices=("l2", "l1")),
    Param("offset", None,
          "``\"slaag\"``: how each point's offset b is chosen: ``\"counts\"`` (default) "
          "re-chooses it, with w fixed, to minimise the aggregate count error "
          "sum_c |predicted count - y_c| (nearest the solver's b among the minimisers); "
          "``\"solver\"`` keeps the solved program's b (the seed's literal algorithm).",
          kind="{\"counts\", \"solver\"}", choices=("counts", "solver")),
    Param("big_M", None,
          "``\"miqp\"``: use this big-M instead of the data-derived one (then no bound is "
          "claimed).",
          kind="float", parse=float),
)


class AggregateOutputClassifier(_ClassifierMixin, _BaseEstimator):
    """Linear classifier learned from class-1 counts per collection of rows (aggregate outputs).

    ``fit(X, collections, counts)`` takes the collection id of every row and the number of
    class-1 rows per collection (a mapping id -> count, or an array over the sorted ids);
    ``predict`` labels individual rows 0 / 1.

    Parameters
    ----------

    Attributes
    ----------
    classes_ : ndarray ``[0, 1]``
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
        ``-b``: the decision function is ``X coef_ + intercept_ = w x - b``.
    labels_ : ndarray of shape (n_samples,)
        The label (0 / 1) given to every training row.
    result_ : AIDResult
    n_iter_ : int
        SLAAG programs, or AID iterations of the MIQP (1 for a direct solve).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        The column names, when X was a DataFrame with string column names.

    Notes
    -----
    A binary model, with no multi-class form (docs/multiclass.md): its data are the counts of
    *one* class per collection, and the rows' 0 / 1 labels are chosen to match them. k classes
    would need k counts per collection and labels coupled across classes (each row in exactly
    one), a different problem from k binary ones; counts outside 0..collection size are refused.

    Not a standard scikit-learn classifier: it is never given individual labels, so
    ``fit(X, collections, counts)`` replaces ``fit(X, y)`` and scikit-learn's common checks,
    which all fit ``(X, y)``, are skipped (``tags._skip_test``);
    ``tests/unit/test_sklearn_checks.py`` runs the checks that need no fit and tests the
    conventions (features, fitted state, pickling) with collections and counts. ``predict`` /
    ``score`` are those of a classifier (``score`` against individual labels).

    Examples
    --------
    >>> import numpy as np
    >>> from aidopt import AggregateOutputClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); truth = (X[:, 0] > 0).astype(int)
    >>> collections = np.arange(200) // 5
    >>> counts = np.bincount(collections, weights=truth)
    >>> clf = AggregateOutputClassifier().fit(X, collections, counts)
    >>> clf.score(X, truth) > 0.9
    True
    """

    _family = AGGOUT
    _sparse_input = True
    _sklearn_checks_skipped = (
        "fit(X, collections, counts) learns from class-1 counts per collection, never from "
        "individual labels; the common checks call fit(X, y)")

    def fit(self, X, collections, counts):
        """Fit on rows, their collections and the collections' class-1 counts.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        collections : array-like of shape (n_samples,)
            The collection id of every row.
        counts : mapping or array-like
            Class-1 count per collection: ``{id: count}``, or an array over the sorted ids.

        Returns
        -------
        self
        """
        X, _ = self._validate_fit(X, target=None)
        result = solve_aggregate_outputs(X, collections, counts, **self._solve_kwargs())
        self._require_solution(result, "aggregate-output classifier")
        sol = result.solution
        self.classes_ = np.array([0, 1])
        self.coef_ = np.asarray(sol["w"], dtype=float)[None, :]
        self.intercept_ = np.array([-float(sol["b"])])
        self.labels_ = np.asarray(sol["labels"]).astype(int)
        self._after_fit(X, result, "aggregate-output classifier",
                        n_features=len(sol["feature_names"]),
                        accepted=(Termination.CERTIFIED_OPTIMAL, Termination.CLUSTER_OPTIMAL,
                                  Termination.NO_IMPROVEMENT, Termination.STATIONARY))
        return self

    def decision_function(self, X) -> np.ndarray:
        """``w x - b``; >= 0 means class 1."""
        X = self._check_X(X, dense=False)
        return X @ self.coef_[0] + self.intercept_[0]

    def predict(self, X) -> np.ndarray:
        """Labels 0 / 1."""
        return (self.decision_function(X) >= 0).astype(int)



def _cost(name, value):
    if value is None:
        return None
    if not (isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
            and value >= 0):
        raise ValueError(f"{name} must be a non-negative finite number, got {value!r}")
    return float(value)


@AGGOUT.door()
def solve_aggregate_outputs(X, collections, counts, *, p, **options) -> AIDResult:
    r"""Learn a linear classifier :math:`f(x) = w x - b` (class 1 where :math:`f \ge 0`) from
    class-1 counts per collection of rows.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, m)
        A scipy sparse X (CSR, CSC, COO) or a DataFrame with sparse columns stays sparse (CSR):
        SLAAG's programs and the MIQP (and its centroids under AID) are built from the stored
        entries, the big-M from the rows' norms without the n x m array, the k-means of a
        collection's rows on a random sketch (docs/aggout.md).
    collections : array-like of shape (n,)
        The collection id of every row.
    counts : mapping or array-like
        Class-1 count :math:`y_c` per collection: ``{id: count}``, or an array over the sorted
        distinct ids.
    solver : str, optional
        ``"miqp"``: as :func:`aidopt.solve_s3vm` (HiGHS for l1; Gurobi, else SCIP for l2);
        ``"slaag"``: Clarabel for the l2 QP (about ten times faster here than HiGHS's QP
        solver, even warm: docs/benchmarks.md), HiGHS for the l1 LP (warm simplex).
    aid : bool, default True
        ``"miqp"``: ``False`` solves the full MIP directly (its bound is the MIP solver's).
        Ignored by SLAAG.

    Returns
    -------
    AIDResult
        ``solution["w"], solution["b"]``, ``solution["decision"]`` (f on every training row),
        ``solution["labels"]`` (0/1 per training row: the MIP's best labelling, or SLAAG's
        predicted class). Termination: ``"miqp"`` direct: ``certified_optimal`` when the MIP gap
        is within ``tol``; AID: ``cluster_optimal`` when no cluster violates the cluster
        condition (optimal among labellings constant on the final clusters, not a global proof);
        ``"slaag"``: ``no_improvement`` (the seed's stopping rule) or ``stationary``.

    Examples
    --------
    >>> import numpy as np, aidopt
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); truth = (X[:, 0] > 0).astype(int)
    >>> collections = np.arange(200) // 5
    >>> counts = np.bincount(collections, weights=truth).astype(int)
    >>> res = aidopt.solve_aggregate_outputs(X, collections, counts, log=False)
    >>> float(((res.solution["decision"] >= 0) == truth).mean()) > 0.9
    True
    """
    if p.method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {p.method!r}")
    p.C, p.D, p.E = _cost("C", p.C), _cost("D", p.D), _cost("E", p.E)
    if p.norm not in ("l2", "l1"):
        raise ValueError(f"norm must be 'l2' or 'l1', got {p.norm!r}")
    if p.method == "miqp" and p.offset is not None:
        raise ValueError("offset is a parameter of method='slaag' (the MIQP's b is its own)")
    if p.method == "slaag" and p.big_M is not None:
        raise ValueError("big_M is a parameter of method='miqp' (SLAAG has no binaries)")
    if p.method == "slaag" and (p.E == 0 or (p.C == 0 and p.D == 0)):
        raise ValueError("SLAAG needs E > 0 and C + D > 0: with zero hinge costs every program "
                         "is min R(w) and b is arbitrary")
    data = as_aggregate_data(X, collections, counts, sparse=True)
    dimensions = {"n": data.n, "m": data.m, "collections": data.n_collections}
    if p.method == "slaag":
        config = RunConfig.from_kwargs(options, caller="solve_aggregate_outputs",
                                       solver="clarabel" if p.norm == "l2" else "highs")
        C0, D0 = class_costs(data)
        step = SLAAGStep(data, C=C0 if p.C is None else p.C, D=D0 if p.D is None else p.D, E=p.E,
                         norm=p.norm, offset="counts" if p.offset is None else p.offset)
        config.aid = False
        result = successive_linearization(step, config, dimensions=dimensions,
                                          mode="SLAAG: problem (3), then step-2 programs")
    else:
        from aidopt.api.s3vm import default_s3vm_solver

        problem = AggregateOutputProblem(C=1.0 if p.C is None else p.C,
                                         D=1.0 if p.D is None else p.D, norm=p.norm, big_M=p.big_M)
        config = RunConfig.from_kwargs(options, caller="solve_aggregate_outputs",
                                       solver=options.get("solver") or default_s3vm_solver(p.norm))
        result = _front.run_problem(problem, data, config)
    return _front.decorate(result, data)
