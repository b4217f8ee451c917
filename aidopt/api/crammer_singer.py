r"""The Crammer–Singer multi-class SVM: :func:`solve_crammer_singer`, one joint QP (2-norm) or LP
(1-norm) over all k classes, certified on the original rows (docs/multiclass.md,
"Crammer–Singer"). ``SVMClassifier(multi_class="crammer_singer")`` fits it.

Validate -> :class:`~aidopt.decomposition.plugins.crammer_singer.CrammerSingerProblem` -> AID or
the direct solve (chosen by the data's shape, as the binary SVM's door) -> decorate, through
:mod:`aidopt.api._front` like every other door.
"""

from __future__ import annotations

import dataclasses
import logging

from aidopt.api import _front, _shape
from aidopt.data.validate import as_multiclass_data
from aidopt.decomposition.plugins.crammer_singer import (
    NORMS,
    CrammerSingerProblem,
    default_sample_size,
)
from aidopt.decomposition.run import RunConfig, clocked
from aidopt.log import run_logging
from aidopt.results import AIDResult

__all__ = ["solve_crammer_singer", "default_solver", "NORMS", "DIRECT_SAMPLES"]

#: the direct solve when n is at most this many times AID's initial sample
#: (:func:`~aidopt.decomposition.plugins.crammer_singer.default_sample_size`): AID first solves
#: the joint model on the sample, then aggregated models that grow towards n on overlapping
#: classes. Indicative, one run each on the shared machine (covertype-like, 54 features, 7
#: classes, Clarabel, load average about 5): 300 rows, direct 3.4 s against AID 12.1 s (272
#: clusters at the end; the sample was every row); 2,000 rows, direct 25.3 s against AID 80-88 s
#: (1,365 clusters at the end).
DIRECT_SAMPLES = 10


def default_solver(norm: str) -> str:
    """Clarabel for the QP (2-norm), HiGHS for the LP (1-norm): the binary SVMs' Pyomo solvers
    (HiGHS's QP solver fails on the primal of overlapping data, docs/svm.md)."""
    return "clarabel" if norm == "l2" else "highs"


@clocked  # the input's checks count against time_limit
def solve_crammer_singer(X, y, *, C: float = 1.0, norm: str = "l2", sample_weight=None,
                         **options) -> AIDResult:
    r"""The Crammer–Singer multi-class SVM, certified:
    :math:`\min_w R(w) + C \sum_i s_i \max(0, \max_{r \ne y_i} 1 + (w_r - w_{y_i})' x_i)`.

    One problem over all k classes (k >= 2), so one result and one certificate.
    :math:`R(w) = \tfrac12 \sum_r \|w_r\|^2` (``norm="l2"``, a QP: LIBLINEAR's ``-s 4``,
    scikit-learn's ``LinearSVC(multi_class="crammer_singer", fit_intercept=False)``) or
    :math:`\sum_r \|w_r\|_1` (``norm="l1"``, an LP). No offset (an offset is a constant
    feature, regularized with the rest, as LIBLINEAR's ``-B``).

    Parameters
    ----------
    X : array-like or scipy sparse matrix of shape (n, m)
        A sparse X is kept as CSR: the models hold its stored entries (no n x m array), and AID's
        centroids are CSR too.
    y : array-like of shape (n,)
        Two or more classes, any labels (sorted: ``solution["classes"]``).
    C : float
        Misclassification cost.
    norm : {"l2", "l1"}
    sample_weight : array-like of shape (n,), optional
        Non-negative; zero-weight rows are left out of the model (their ``alpha`` rows are 0).
    **options
        The common options (:class:`~aidopt.decomposition.run.RunConfig`). ``solver`` defaults to
        ``"clarabel"`` (2-norm) or ``"highs"`` (1-norm) and must return duals. ``aid``: with no
        solver given, the direct solve when n is at most :data:`DIRECT_SAMPLES` times AID's
        initial sample, else the binary SVM's rule (:func:`aidopt.api._shape.linear_method`):
        AID on tall, narrow, dense X and the direct solve on sparse or wide X (the choice is
        logged and ends ``result.message``). A solver given: AID as ``aid`` says;
        ``aid=False`` is always the direct solve.

    Returns
    -------
    AIDResult
        ``solution["w"]`` (k, m) (no offset ``b``), ``solution["alpha"]`` (n, k): the
        lifted duals of the margin rows (0 in each row's own class), ``classes`` and
        ``feature_names``. ``certificate`` is checked on all rows.
    """
    if norm not in NORMS:
        raise ValueError(f"multi_class='crammer_singer' takes norm 'l2' (QP) or 'l1' (LP), got "
                         f"norm={norm!r}")
    problem = CrammerSingerProblem(C=C, norm=norm)  # checks C before the data are read
    config = RunConfig.from_kwargs(options, caller="solve_crammer_singer",
                                   solver=default_solver(norm))
    data = as_multiclass_data(X, y, sample_weight, sparse=True)
    config, note = _method(data, options, config)
    result = _front.decorate(_front.run_rows(problem, data, config), data)
    result.solution["classes"] = data.classes.tolist()
    if note:
        result.message = f"{result.message}; {note}" if result.message else note
    return result


def _method(data, options: dict, config: RunConfig) -> tuple[RunConfig, str]:
    """AID or the direct solve by the data's shape (:func:`_shape.linear_method`) when no
    solver was given and ``aid`` is on; the configured path otherwise."""
    from scipy import sparse

    n, m = data.X.shape
    if options.get("solver") is not None or not config.aid:
        what = "AID" if config.aid else "the direct solve"
        why = f"solver={options['solver']!r} given" if options.get("solver") else "aid=False given"
        note = f"{what} with {config.solver}: {why}"
    elif n <= DIRECT_SAMPLES * default_sample_size(m, data.k):
        config = dataclasses.replace(config, aid=False)
        note = (f"the direct solve with {config.solver}: n = {n} <= {DIRECT_SAMPLES} x AID's "
                f"initial sample of {default_sample_size(m, data.k)} rows")
    else:
        nnz, memory = _shape._entries_and_memory(data.X)
        choice = _shape.linear_method(n, m, nnz, memory=memory)
        if choice.method == "dcd":  # sparse or wide: the joint model on the full data
            config = dataclasses.replace(config, aid=False)
            note = f"the direct solve with {config.solver}: {choice.reason}"
        else:
            note = f"AID with {config.solver}: {choice.reason}"
    rows = (f"; X kept sparse (CSR, {int(data.X.nnz)} stored entries)"
            if sparse.issparse(data.X) else "")
    note = f"Crammer-Singer ({data.k} classes), {note}{rows}"
    with run_logging(config.log):
        logging.getLogger("aidopt.svm" if config.log else "aidopt.quiet").info("%s", note)
    return config, note
