"""Classifiers of k >= 3 classes from binary fits: one-vs-rest and one-vs-one.

Every model aidopt certifies (the SVMs, FSV, the generalized SVMs, SCM) separates two classes.
A classifier of k classes is made of binary *subproblems*, each an ordinary binary fit with its
own result and certificate (docs/multiclass.md):

* **one-vs-rest** (``multi_class="ovr"``, LIBLINEAR's convention): k subproblems, class c (+1)
  against all other rows (-1), on every row. The decision function has one column per class and
  ``predict`` is its argmax.
* **one-vs-one** (``"ovo"``, LIBSVM's): k(k-1)/2 subproblems, class i (+1) against class j (-1)
  for i < j in the order of ``classes_``, each on the rows of its two classes. ``predict`` is the
  class with the most votes (ties go to the class whose pairwise values sum highest), and
  ``decision_function`` follows scikit-learn's ``SVC``: ``decision_function_shape="ovr"`` gives the
  votes plus a confidence below 1/3 in absolute value, shape (n, k), and ``"ovo"`` the
  subproblems' own values, shape (n, k(k-1)/2), positive for the pair's first class.

``multi_class="auto"`` is one-vs-rest for linear models and one-vs-one for kernel models (whose
subproblems then hold fewer rows, and whose kernels are quadratic in them), except SCM, which is
one-vs-rest with every kernel (its subproblems are then the imbalanced problems it is made for).
Two classes are one binary fit whatever ``multi_class`` says (but ``"crammer_singer"``, below):
the estimators behave exactly as binary classifiers.

* **Crammer–Singer** (``"crammer_singer"``, ``SVMClassifier`` with a linear 2-norm or 1-norm
  only): not subproblems but *one* joint problem over all classes, one result and one
  certificate (:mod:`aidopt.api.crammer_singer`). It is fitted for two classes too, as LIBLINEAR
  does; the binary attributes then hold the difference of the two classes' weights.

What depends on X alone is done once: the structure of X is validated once (the subproblems'
fits skip scikit-learn's validation), and ``gamma="scale"`` is resolved on all rows (as ``SVC``
does) rather than on each pair's rows. ``n_jobs`` solves subproblems in parallel in separate
processes (joblib's loky backend), never threads: HiGHS's thread scheduler is global to a
process and not safe for concurrent solves, Pyomo keeps process-wide state while it writes and
solves models, and a run pauses Python's garbage collector for the whole process.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
import warnings
from typing import Any

import numpy as np
from scipy.sparse import issparse

from aidopt.api._params import Family, Param
from aidopt.api.estimator import ConvergenceWarning, _BinaryClassifierMixin
from aidopt.log import run_logging
from aidopt.results import RunResult, Termination, json_text, pyplot

__all__ = ["MULTICLASS", "MulticlassResult", "describe", "subproblem_classes"]

STRATEGIES = ("ovr", "ovo")
#: multi-class models that are one joint problem (an estimator offers them by ``_fit_joint``)
JOINT = ("crammer_singer",)

#: the multi-class options of every classifier of :mod:`aidopt.api` that takes k classes (the
#: estimators' parameters and ``aidopt svm``'s flags; the ``solve_*`` functions are binary)
MULTICLASS = Family(
    "multi-class",
    Param("multi_class", "auto",
          "More than two classes: ``\"ovr\"`` fits one binary subproblem per class against the "
          "rest (LIBLINEAR's convention), ``\"ovo\"`` one per pair of classes (LIBSVM's); "
          "``\"auto\"`` is ``\"ovr\"`` for the linear models and SCM, ``\"ovo\"`` for the kernel "
          "SVMs and the GSVMs. Two classes are one binary fit with either. "
          "``\"crammer_singer\"`` (``SVMClassifier``, linear, ``norm`` \"l2\" or \"l1\"): the "
          "joint model of Crammer and Singer, one problem over all classes with one certificate, "
          "fitted for two classes too, as LIBLINEAR's ``-s 4`` (docs/multiclass.md).",
          choices=("auto", "ovr", "ovo", "crammer_singer")),
    Param("decision_function_shape", "ovr",
          "One-vs-one fits only, as scikit-learn's SVC: ``\"ovr\"`` returns the votes of the "
          "pairwise subproblems plus a confidence (shape (n, k)), ``\"ovo\"`` their own values "
          "(shape (n, k(k-1)/2), positive for the pair's first class).",
          choices=("ovr", "ovo"), flag=""),
    Param("n_jobs", 1,
          "Subproblems solved at once, each in its own process (joblib; -1: one per core; None: "
          "1). Each process imports aidopt and receives X (a memory map when X is large); their "
          "runs' logs are not shown (``log``), their results are.",
          kind="int or None", parse=int),
)


def subproblem_classes(classes, strategy: str) -> list[tuple]:
    """The classes of each subproblem, in order: ``(c,)`` for class c against the rest
    (``"ovr"``), ``(c_i, c_j)`` for i < j (``"ovo"``); the first class is the +1 side."""
    if strategy == "ovr":
        return [(c,) for c in classes]
    return list(itertools.combinations(classes, 2))


def _plain(label):
    """A class label as a plain Python value (for messages and JSON)."""
    return label.item() if hasattr(label, "item") else label


def describe(classes: tuple) -> str:
    """A subproblem's classes in words: ``"3 vs rest"`` (one-vs-rest), ``"'a' vs 'b'"``."""
    first, *second = (repr(c) if isinstance(c, str) else str(c) for c in map(_plain, classes))
    return f"{first} vs {second[0] if second else 'rest'}"


@dataclasses.dataclass
class MulticlassResult(RunResult):
    """The result of a multi-class fit: one binary result per subproblem, each with its own
    certificate.

    Attributes
    ----------
    strategy : {"ovr", "ovo"}
    classes : list
        The k class labels, sorted.
    subproblems : list of tuple
        The classes of each subproblem (:func:`subproblem_classes`): ``(c,)`` is class c (+1)
        against the rest (-1), ``(c_i, c_j)`` class c_i (+1) against c_j (-1).
    results : list
        The binary result of each subproblem (its ``solution["classes"]`` is ``[-1, 1]``).
    seconds : float
        Wall-clock time of all subproblems (in parallel with ``n_jobs``).
    n_jobs : int
    message : str
    """

    strategy: str
    classes: list
    subproblems: list
    results: list
    seconds: float
    n_jobs: int = 1
    message: str = ""

    @property
    def certified(self) -> bool:
        """True only when every subproblem's certificate passed."""
        return all(r.certified for r in self.results)

    @property
    def certificate(self):
        """None: each subproblem has its own (``results[p].certificate``)."""
        return None

    @property
    def termination(self):
        """``certified_optimal`` when every subproblem is certified, else the termination of the
        first subproblem that is not."""
        for r in self.results:
            if not r.certified:
                return r.termination
        return Termination.CERTIFIED_OPTIMAL

    @property
    def gap(self) -> float:
        """The largest relative gap of the subproblems (NaN when none reports one)."""
        gaps = [float(r.gap) for r in self.results if isinstance(getattr(r, "gap", None), float | int)]
        return max(gaps) if gaps else math.nan

    def label(self, p: int) -> str:
        """Subproblem ``p`` in words: ``"3 vs rest"`` or ``"1 vs 2"`` (:func:`describe`)."""
        return describe(self.subproblems[p])

    def lines(self) -> list[str]:
        """One line per subproblem: its classes, termination, objective and relative gap."""
        width = max(len(self.label(p)) for p in range(len(self.results)))
        out = []
        for p, r in enumerate(self.results):
            termination = getattr(r.termination, "value", r.termination)
            objective = getattr(r, "objective", None)
            gap = getattr(r, "gap", None)
            out.append(
                f"  {self.label(p):<{width}}  {termination:<17}"
                + (f"  objective {objective:.10g}" if isinstance(objective, float | int) else "")
                + (f"  relative gap {gap:.3e}" if isinstance(gap, float | int) else "")
                + ("" if r.certified else "  (not certified)"))
        return out

    def summary(self) -> str:
        """The strategy, one line per subproblem and whether every one is certified."""
        name = {"ovr": "one-vs-rest", "ovo": "one-vs-one"}[self.strategy]
        done = sum(r.certified for r in self.results)
        head = (f"{name}: {len(self.classes)} classes, {len(self.results)} subproblems, "
                f"{self.seconds:.2f} s" + (f" ({self.n_jobs} processes)" if self.n_jobs != 1 else ""))
        tail = (f"certified: all {done} subproblems" if done == len(self.results) else
                f"certified: {done} of {len(self.results)} subproblems (the fit is not certified)")
        return "\n".join([head, *self.lines(), tail] + ([self.message] if self.message else []))

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy, "classes": [_plain(c) for c in self.classes],
            "termination": getattr(self.termination, "value", self.termination),
            "certified": self.certified, "seconds": self.seconds, "n_jobs": self.n_jobs,
            "message": self.message,
            "subproblems": [{"classes": [_plain(c) for c in classes], "result": r.to_dict()}
                            for classes, r in zip(self.subproblems, self.results, strict=True)],
        }

    def to_json(self, path=None) -> str:
        return json_text(self.to_dict(), path)

    def history_rows(self) -> list[dict[str, Any]]:
        """The subproblems' history rows, each with its ``subproblem`` index first."""
        return [{"subproblem": p, **row} for p, r in enumerate(self.results)
                for row in r.history_rows()]

    def plot(self, path=None):
        """The relative gap against the iteration, one line per subproblem."""
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(6, 4))
        for p, r in enumerate(self.results):
            frame = r.history_frame()
            if "gap" in frame:
                ax.semilogy(np.arange(len(frame)), np.maximum(frame.gap.to_numpy(float), 1e-16),
                            "o-", label=self.label(p))
        ax.set_xlabel("iteration")
        ax.set_ylabel("relative gap")
        if len(self.results) <= 12:
            ax.legend(fontsize="small")
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=120)
            plt.close(fig)
        return fig

    def __repr__(self) -> str:
        return (f"MulticlassResult(strategy={self.strategy!r}, classes={len(self.classes)}, "
                f"subproblems={len(self.results)}, certified={self.certified})")



def _take(X, rows):
    """Rows of an array, a sparse matrix or a DataFrame (all of them when ``rows`` is None)."""
    if rows is None:
        return X
    return X.iloc[rows] if hasattr(X, "iloc") else X[rows]


def _fit_subproblem(template, X, y, sample_weight, rows, deadline):
    """Fit a copy of ``template`` (parameters only) on one subproblem: the rows ``rows`` of X
    (all when None) with binary labels ``y`` (+1 / -1). Runs in a worker process with
    ``n_jobs``. ``deadline`` (``time.time()``, or None) ends the subproblem's share of
    ``time_limit`` (:func:`_deadlines`).

    Returns the fitted estimator and the messages of the ConvergenceWarnings it raised (the
    multi-class fit reports them once)."""
    est = type(template)(**template.get_params())
    if deadline is not None:
        est.time_limit = max(deadline - time.time(), 1e-3)
    weights = None if sample_weight is None else _take(sample_weight, rows)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est._fit_binary(_take(X, rows), y, weights)
    messages = []
    for w in caught:
        if issubclass(w.category, ConvergenceWarning):
            messages.append(str(w.message))
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return est, messages


def _rows_and_weights(X, y, classes, sample_weight):
    """X in a form whose rows can be taken (csr for sparse formats without row selection, an
    array for lists), and the sample weights as an array, with every class weighted."""
    if issparse(X) and X.format not in ("csr", "csc"):
        X = X.tocsr()
    elif not (issparse(X) or hasattr(X, "iloc") or isinstance(X, np.ndarray)):
        X = np.asarray(X, dtype=float)  # lists, without scikit-learn's validation
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=float)
        if sample_weight.shape != y.shape:
            raise ValueError(f"sample_weight has shape {sample_weight.shape}, expected {y.shape} "
                             "(one weight per row)")
        for c in classes:
            if not (sample_weight[y == c] > 0).any():
                raise ValueError(f"every row of class {_plain(c)!r} has zero sample weight")
    return X, sample_weight


def _deadlines(time_limit, count: int, n_jobs: int) -> list:
    """When each of ``count`` subproblems must end (``time.time()``; None without a limit):
    ``time_limit`` is for the whole fit, the subproblems run in waves of ``n_jobs`` (in order),
    and wave w of W ends by ``time_limit (w + 1) / W`` from now. Each subproblem so has at least
    ``time_limit / W``, plus what the waves before it left."""
    if time_limit is None:
        return [None] * count
    workers = n_jobs
    if n_jobs < 0:  # one per core, and so on: joblib's count
        from joblib import effective_n_jobs

        workers = effective_n_jobs(n_jobs)
    waves = math.ceil(count / workers)
    now = time.time()
    return [now + float(time_limit) * (p // workers + 1) / waves for p in range(count)]


def _check_n_jobs(n_jobs) -> int:
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int | np.integer) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero integer or None, got {n_jobs!r}")
    return int(n_jobs)


def _labels(y) -> np.ndarray:
    """y as a 1-d array of labels without missing values (aidopt's checks where scikit-learn's
    did not run)."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-d, got shape {y.shape}")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError(f"y contains {int((~np.isfinite(y)).sum())} NaN or infinite label(s)")
    if y.dtype.kind == "O" and any(v is None or (isinstance(v, float) and math.isnan(v)) for v in y):
        raise ValueError("y contains missing labels (None or NaN)")
    return y


def _ovo_votes(scores, k: int) -> np.ndarray:
    """scikit-learn's aggregation of one-vs-one values (``SVC`` with
    ``decision_function_shape="ovr"``): per class, the votes it won (a value >= 0 votes for
    the pair's first class) plus its summed values scaled into (-1/3, 1/3), which breaks ties."""
    pairs = list(itertools.combinations(range(k), 2))
    first = np.zeros((len(pairs), k))
    second = np.zeros((len(pairs), k))
    for p, (i, j) in enumerate(pairs):
        first[p, i] = second[p, j] = 1.0
    wins = scores >= 0
    votes = wins @ first + (~wins) @ second
    confidence = scores @ (first - second)
    return votes + confidence / (3 * (np.abs(confidence) + 1))


class _MulticlassMixin(_BinaryClassifierMixin):
    """A classifier of two or more classes from binary fits (see the module docstring).

    A subclass implements the binary model: ``_fit_binary(X, y, sample_weight)`` (on validated
    two-class data: solve and set the fitted attributes), ``_decision(X)`` (the binary decision
    values on validated X, > 0 for ``classes_[1]``), ``_linear`` (the model is linear:
    ``multi_class="auto"`` is then one-vs-rest; ``_default_strategy`` overrides the rule) and
    ``_dense_input`` (the decision needs dense X). Its
    ``fit`` calls :meth:`_fit_classes`. :meth:`_combine` sets the multi-class attributes from
    the subproblems' estimators; a subclass extends it with its own.
    """

    _extra_families = (MULTICLASS,)
    _linear = False
    _dense_input = True

    @property
    def _default_strategy(self) -> str:
        """What ``multi_class="auto"`` means: one-vs-rest for a linear model, else one-vs-one."""
        return "ovr" if self._linear else "ovo"

    # ------------------------------------------------------------------ fit

    def _solve_kwargs(self) -> dict:
        """The parameters of the binary ``solve_*`` function (without the multi-class ones)."""
        return {k: v for k, v in super()._solve_kwargs().items() if k not in MULTICLASS.params}

    def _strategy(self) -> str:
        """``multi_class`` with ``"auto"`` resolved; the multi-class options checked."""
        if self.multi_class not in ("auto", *STRATEGIES, *JOINT):
            raise ValueError("multi_class must be 'auto', 'ovr', 'ovo' or 'crammer_singer', got "
                             f"{self.multi_class!r}")
        if self.multi_class in JOINT and not hasattr(self, "_fit_joint"):
            raise ValueError(f"multi_class={self.multi_class!r} is the joint multi-class model of "
                             f"the linear SVM: SVMClassifier only; {type(self).__name__} takes "
                             "'auto', 'ovr' or 'ovo'")
        if self.decision_function_shape not in STRATEGIES:
            raise ValueError("decision_function_shape must be 'ovr' or 'ovo', got "
                             f"{self.decision_function_shape!r}")
        strategy = self.multi_class
        if strategy == "auto":
            strategy = self._default_strategy
        if strategy in ("ovr", *JOINT) and self.decision_function_shape == "ovo":
            raise ValueError("decision_function_shape='ovo' gives the values of one-vs-one "
                             "subproblems: set multi_class='ovo' (this fit is "
                             f"{'one-vs-rest' if strategy == 'ovr' else strategy})")
        return strategy

    def _shared_params(self, X) -> dict:
        """Parameters resolved once on all rows: ``gamma="scale"`` of an rbf or poly kernel is
        1 / (m Var(X)) over every row, as scikit-learn's SVC and each binary fit resolve it (a
        one-vs-one pair would otherwise get its own)."""
        kernel = getattr(self, "kernel", None)
        if not (isinstance(getattr(self, "gamma", None), str) and self.gamma == "scale"
                and isinstance(kernel, str) and kernel in ("rbf", "poly")):
            return {}
        Xs = X.to_numpy(dtype=float) if hasattr(X, "iloc") else X
        if issparse(Xs):
            var = float(Xs.multiply(Xs).mean() - Xs.mean() ** 2)
        else:
            var = float(np.asarray(Xs, dtype=float).var())
        return {"gamma": 1.0 / (Xs.shape[1] * var) if var > 0 else 1.0}

    def _fit_classes(self, X, y, sample_weight=None):
        """``fit``: validate once; two classes are one binary fit, more are the subproblems of
        ``multi_class``, solved ``n_jobs`` at a time."""
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("_")]:
            delattr(self, name)  # nothing of an earlier fit survives (binary or multi-class)
        strategy = self._strategy()
        n_jobs = _check_n_jobs(self.n_jobs)
        X, y = self._validate_fit(X, y, target="classes")
        y = _labels(y)
        classes = np.unique(y)
        if classes.size < 2:
            raise ValueError(f"{type(self).__name__} needs at least two classes, got 1 class: "
                             f"{classes.tolist()}")
        if strategy in JOINT:  # one joint problem, for two classes too (LIBLINEAR's -s 4)
            self._fit_joint(X, y, sample_weight)
            return self
        if classes.size == 2:
            self._fit_binary(X, y, sample_weight)
            self.results_ = [self.result_]
            self.certified_ = bool(self.result_.certified)
            return self
        X, sample_weight = _rows_and_weights(X, y, classes, sample_weight)
        template = type(self)(**{**self.get_params(), **self._shared_params(X),
                                 "n_jobs": 1, "log": self.log and n_jobs == 1})
        subproblems = subproblem_classes(classes, strategy)
        tasks = []  # (rows or None for all, labels +1 / -1 of those rows)
        for labels in subproblems:
            rows = None if strategy == "ovr" else np.flatnonzero(np.isin(y, labels))
            tasks.append((rows, np.where(_take(y, rows) == labels[0], 1, -1)))
        start = time.perf_counter()
        deadlines = _deadlines(self.time_limit, len(tasks), n_jobs)
        fitted = self._run(template, X, sample_weight, tasks, deadlines, n_jobs, subproblems)
        estimators = [est for est, _ in fitted]
        self.classes_ = classes
        self.estimators_ = estimators
        self.results_ = [est.result_ for est in estimators]
        self.certified_ = all(r.certified for r in self.results_)
        self.result_ = MulticlassResult(strategy=strategy, classes=classes.tolist(),
                                        subproblems=subproblems, results=self.results_,
                                        seconds=time.perf_counter() - start, n_jobs=n_jobs)
        self.n_iter_ = max(est.n_iter_ for est in estimators)
        self._record_features(X, X.shape[1])
        for est in estimators:
            for name in ("n_features_in_", "feature_names_in_"):
                if hasattr(self, name):
                    setattr(est, name, getattr(self, name))
        self._combine(estimators, [rows for rows, _ in tasks])
        warned = [(p, m) for p, (_, messages) in enumerate(fitted) for m in messages]
        if warned:
            shown = "; ".join(f"{describe(subproblems[p])}: {m}" for p, m in warned[:3])
            warnings.warn(f"{len({p for p, _ in warned})} of {len(estimators)} subproblems ended "
                          f"with a warning: {shown}" + (" ..." if len(warned) > 3 else ""),
                          ConvergenceWarning, stacklevel=3)
        return self

    def _run(self, template, X, sample_weight, tasks, deadlines, n_jobs, subproblems):
        """Fit every subproblem (:func:`_fit_subproblem`), in this process or in ``n_jobs``."""
        if n_jobs == 1:
            fitted = []
            for p, (rows, yb) in enumerate(tasks):
                with run_logging(template.log) as log:
                    log.info("subproblem %d of %d: %s, %d rows", p + 1, len(tasks),
                             describe(subproblems[p]), yb.size)
                fitted.append(_fit_subproblem(template, X, yb, sample_weight, rows, deadlines[p]))
                if getattr(fitted[-1][0].result_.termination, "value", None) == "interrupted":
                    raise KeyboardInterrupt(f"interrupted in subproblem {p + 1} of {len(tasks)} "
                                            f"({describe(subproblems[p])})")
            return fitted
        try:
            from joblib import Parallel, delayed
        except ImportError as exc:  # pragma: no cover - joblib comes with scikit-learn
            raise ImportError("n_jobs other than 1 needs joblib (pip install joblib; "
                              "scikit-learn installs it)") from exc
        return Parallel(n_jobs=n_jobs, backend="loky")(
            delayed(_fit_subproblem)(template, X, yb, sample_weight, rows, deadline)
            for (rows, yb), deadline in zip(tasks, deadlines, strict=True))

    def _combine(self, estimators, rows) -> None:
        """The multi-class attributes from the subproblems' estimators (``rows[p]``: the rows
        of subproblem p, None for all): ``intercept_`` (one per subproblem) and, when every
        subproblem is linear, ``coef_`` (one row per subproblem)."""
        self.intercept_ = np.array([float(est.intercept_[0]) for est in estimators])
        if all(hasattr(est, "coef_") for est in estimators):
            self.coef_ = np.vstack([est.coef_ for est in estimators])

    # ------------------------------------------------------------------ pickling

    def __getstate__(self):
        """``results_`` is left out and rebuilt on unpickling: its results are pickled once, as
        ``result_`` or with the subproblems' estimators (which leave out what they cannot
        pickle, e.g. kernel functions)."""
        state = super().__getstate__()
        state.pop("results_", None)
        if "estimators_" in state:
            state["result_"] = dataclasses.replace(state["result_"], results=[])
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "estimators_" in state:
            self.results_ = [est.result_ for est in self.estimators_]
            self.result_.results = self.results_
        elif "result_" in state:
            self.results_ = [self.result_]

    # ------------------------------------------------------------------ predict

    def _scores(self, X) -> np.ndarray:
        """The subproblems' decision values on validated X, shape (n, subproblems)."""
        if hasattr(self, "coef_"):
            return np.asarray(X @ self.coef_.T) + self.intercept_
        return np.column_stack([est._decision(X) for est in self.estimators_])

    def decision_function(self, X) -> np.ndarray:
        """Binary: the decision values, shape (n,), > 0 for ``classes_[1]``. One-vs-rest and
        Crammer–Singer: one column per class, shape (n, k). One-vs-one: by ``decision_function_shape``, the votes
        plus confidences (n, k) or the pairwise values (n, k(k-1)/2), positive for the pair's
        first class (docs/multiclass.md)."""
        X = self._check_X(X, dense=self._dense_input)
        if len(self.classes_) == 2:
            return self._decision(X)
        scores = self._scores(X)
        if getattr(self.result_, "strategy", None) == "ovo" and self.decision_function_shape == "ovr":
            return _ovo_votes(scores, len(self.classes_))
        return scores

    def predict(self, X) -> np.ndarray:
        """Class labels: binary, ``classes_[1]`` where the decision function is positive;
        one-vs-rest, the class of the largest value; one-vs-one, the class with the most votes
        (ties broken by the summed pairwise values)."""
        if len(getattr(self, "classes_", ())) == 2 or not self.__sklearn_is_fitted__():
            f = self.decision_function(X)  # checks that the classifier is fitted
            return self.classes_[self._positive(f).astype(int)]
        scores = self._scores(self._check_X(X, dense=self._dense_input))
        if getattr(self.result_, "strategy", None) == "ovo":
            scores = _ovo_votes(scores, len(self.classes_))
        return self.classes_[np.argmax(scores, axis=1)]

    def _positive(self, f) -> np.ndarray:
        """Where a binary decision value means ``classes_[1]``."""
        return f > 0

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags
