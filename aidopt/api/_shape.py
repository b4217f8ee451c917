r"""The method of the linear 2-norm SVM and of LAD / regression quantiles, chosen once by the
data's shape (n rows, m columns, nnz stored entries): AID on dense centroids, or a method on the
full data's sparse rows (the SVM: dual coordinate descent; LAD: the dual LP built from the
stored entries, solved by Clarabel's interior point).

AID (Park & Klabjan) pays off on tall, narrow, dense data: its aggregated problems have a few
times m clusters, each solved by an interior point in :math:`O(K m^2)` per step, and most rows
never leave their cluster. Where m is large relative to n the aggregated problems are about as
large as the data (:math:`r_0 = 1.1\,m/n`), and the interior point's :math:`m \times m` systems
cost :math:`m^3`; where X is sparse, AID's centroids and the interior point would densify it.
Dual coordinate descent (:mod:`aidopt.numerics.dcd`) costs :math:`O(\mathrm{nnz})` per pass.
The rule and the measurements that set its constants are in docs/svm.md ("Sparse and wide
data").
"""

from __future__ import annotations

import dataclasses
import logging

from aidopt.decomposition.run import RunConfig
from aidopt.log import run_logging

__all__ = ["Choice", "linear_method", "lad_method", "SMALL", "DENSITY", "WIDE", "MEMORY", "prepare",
           "prepare_fsv", "prepare_lad", "prepare_lp_svm", "lp_svm_method", "COLGEN_WIDE",
           "LAD_LP_SOLVER"]

#: AID (today's path) when n m is at most this: the interior point solves such problems in
#: milliseconds, to a gap far below ``tol``
SMALL = 1_000_000
#: DCD when at most this share of the n x m entries is stored (nonzero)
DENSITY = 0.1
#: DCD when m is at least this share of n (wide data: AID's aggregated problems are the data)
WIDE = 0.1
#: DCD for a sparse X whose dense copy would take more than this share of the physical memory
MEMORY = 0.25
#: the 2-norm SVM's native methods that :func:`prepare` hands a dense X (a sparse X densified,
#: as before): the Ferris-Munson interior point (dense m x m systems) and SOR through this door
DENSE_METHODS = ("fm", "sor")


@dataclasses.dataclass(frozen=True)
class Choice:
    """``method`` ``"dcd"`` (dual coordinate descent on the full data) or ``"aid"`` (today's
    path: AID with ``fm``, on dense X), and why, in words for the log and the result."""

    method: str
    reason: str


def linear_method(n: int, m: int, nnz: int, *, memory: float | None = None) -> Choice:
    """The method for the linear 2-norm SVM (free offset) on an n x m X with nnz stored entries.

    AID when ``n m <= SMALL``; else DCD when ``memory`` (the bytes of physical memory, given for
    a sparse X) is below ``8 n m / MEMORY`` (its dense copy would not fit comfortably), when
    ``nnz <= DENSITY n m`` (sparse) or when ``m >= WIDE n`` (wide); else AID.
    """
    density = nnz / max(1, n * m)
    if n * m <= SMALL:
        return Choice("aid", f"small X ({n} x {m} <= {SMALL:g} entries)")
    if memory is not None and 8.0 * n * m > MEMORY * memory:
        return Choice("dcd", f"sparse X whose dense copy ({8e-9 * n * m:.3g} GB) would exceed "
                             f"{MEMORY:g} of the memory ({1e-9 * memory:.3g} GB)")
    if density <= DENSITY:
        return Choice("dcd", f"sparse X ({100 * density:.3g} % of the {n} x {m} entries stored "
                             f"<= {100 * DENSITY:g} %)")
    if m >= WIDE * n:
        return Choice("dcd", f"wide X (m = {m} >= {WIDE:g} n = {WIDE * n:g})")
    return Choice("aid", f"tall, narrow, dense X (m = {m} < {WIDE:g} n, "
                         f"{100 * density:.3g} % of the entries stored)")


def prepare(data, options: dict, config: RunConfig, *, what: str = "linear 2-norm SVM"
            ) -> tuple[object, RunConfig, str]:
    """Choose the method for validated ``data`` (X dense, or CSR from a sparse input) and put
    the data and the run configuration in its form: ``(data, config, note)``.

    The same rule serves the free offset (``bias="free"``) and the modified SVM (1.35)
    (``bias="regularized"``, ``what="modified SVM (1.35)"``): DCD solves both
    (:func:`aidopt.numerics.dcd.dcd`'s ``bias``), the run's problem says which.

    ``solver="dcd"`` runs DCD whatever the shape; another solver runs today's path (AID, or the
    direct solve with ``aid=False``); no solver: :func:`linear_method`. DCD gets X as CSR (a
    dense X is converted once) and ``aid=False`` (it works on the full data). AID (its
    centroids) and the native dense methods :data:`DENSE_METHODS` get a sparse X densified; the
    direct solve with a QP solver (Clarabel, HiGHS, Gurobi, ...) keeps it sparse: its Pyomo QP
    holds the stored entries only (:mod:`aidopt.models.svm`). ``note`` (also logged) says which
    and why.
    """
    from scipy import sparse

    given = options.get("solver")
    n, m = data.X.shape
    nnz = int(data.X.nnz) if sparse.issparse(data.X) else int(_count_nonzero(data.X))
    if given is None:
        memory = None
        if sparse.issparse(data.X):
            from aidopt.data.machine import physical_memory

            memory = physical_memory()
        choice = linear_method(n, m, nnz, memory=memory)
    elif str(given).lower() == "dcd":
        choice = Choice("dcd", "solver='dcd' given")
    else:
        choice = Choice("aid", f"solver={given!r} given")
    X = data.X
    if choice.method == "dcd":
        X = X if sparse.issparse(X) else sparse.csr_matrix(X)
        config = dataclasses.replace(config, solver="dcd", aid=False)
        note = f"dual coordinate descent on the full data: {choice.reason}"
    else:
        if sparse.issparse(X) and (config.aid or str(config.solver).lower() in DENSE_METHODS):
            X = X.toarray()  # AID's centroids, the dense interior point (fm) and SOR
        what = "AID" if config.aid else "the direct solve"
        note = f"{what} with {config.solver}: {choice.reason}"
    if X is not data.X:
        data = type(data)(X, data.y, data.s, data.feature_names, data.classes)
    with run_logging(config.log):
        logging.getLogger("aidopt.svm" if config.log else "aidopt.quiet").info(
            "%s, %s", what, note)
    return data, config, note


def _entries_and_memory(X) -> tuple[int, float | None]:
    """``(nnz, memory)`` for the shape rules: X's stored (sparse) or nonzero (dense) entries, and
    the machine's physical memory in bytes for a sparse X (None for a dense one)."""
    from scipy import sparse

    if not sparse.issparse(X):
        return int(_count_nonzero(X)), None
    from aidopt.data.machine import physical_memory

    return int(X.nnz), physical_memory()


def _count_nonzero(X) -> int:
    """The nonzeros of a dense X, counted in row blocks (no n x m temporary)."""
    import numpy as np

    block = max(1, (1 << 22) // max(1, X.shape[1]))
    return sum(int(np.count_nonzero(X[i:i + block])) for i in range(0, X.shape[0], block))


#: the solver of LAD's direct dual LP on sparse or wide data (docs/lad.md, "Sparse and wide data")
LAD_LP_SOLVER = "clarabel"


def lad_method(n: int, m: int, nnz: int, *, memory: float | None = None) -> Choice:
    r"""The method for LAD / a regression quantile on an n x m X with nnz stored entries:
    ``"lp"`` (the dual LP on the full data, built from the stored entries) or ``"aid"``
    (AID with Frisch-Newton on dense centroids).

    The LP when ``n <= m`` (Frisch-Newton's normal equations :math:`X^\top D X` are singular
    there); else AID when ``n m <= SMALL``; else the LP for a sparse X whose dense copy would
    exceed ``MEMORY`` of ``memory``, for ``nnz <= DENSITY n m`` (sparse) or ``m >= WIDE n``
    (wide); else AID.
    """
    if n <= m:
        return Choice("lp", f"wide X (n = {n} <= m = {m}: more columns than rows)")
    choice = linear_method(n, m, nnz, memory=memory)
    return Choice("lp" if choice.method == "dcd" else "aid", choice.reason)


def prepare_lad(data, options: dict, config: RunConfig) -> tuple[object, RunConfig, str]:
    """Choose LAD's method for validated ``data`` (X dense, or CSR from a sparse input) and put
    the data and the configuration in its form: ``(data, config, note)``.

    No solver given: :func:`lad_method`. Where it chooses the full data over AID, a sparse X
    with more rows than columns gets Frisch-Newton on the full data with sparse normal
    equations (:mod:`aidopt.numerics.normal`, CHOLMOD); other cases the dual LP with
    :data:`LAD_LP_SOLVER`, built from the stored entries (CSR stays CSR); AID gets a sparse X
    densified. A solver given: that solver, with AID or not as configured, on X as given
    (Pyomo's models hold a sparse X's stored entries only); Frisch-Newton (``"fn"``) needs
    n > m and works on a sparse X without AID, on a dense copy with AID.
    """
    from scipy import sparse

    from aidopt.numerics.normal import sparse_cholesky_available

    given = options.get("solver")
    n, m = data.X.shape
    is_sparse = sparse.issparse(data.X)
    X = data.X
    if given is None:
        nnz, memory = _entries_and_memory(X)
        choice = lad_method(n, m, nnz, memory=memory)
        if choice.method == "lp" and is_sparse and n > m and sparse_cholesky_available():
            config = dataclasses.replace(config, solver="fn", aid=False)
            note = (f"Frisch-Newton on the full data, sparse normal equations: "
                    f"{choice.reason}")
        elif choice.method == "lp":
            config = dataclasses.replace(config, solver=LAD_LP_SOLVER, aid=False)
            note = f"the dual LP on the full data with {LAD_LP_SOLVER}: {choice.reason}"
        else:
            X = X.toarray() if is_sparse else X
            what = "AID" if config.aid else "the direct solve"
            note = f"{what} with {config.solver}: {choice.reason}"
    else:
        if str(given).lower() == "fn":
            if n <= m:
                raise ValueError(f"solver='fn' (Frisch-Newton) needs more rows than columns, X is "
                                 f"{n} x {m}: leave solver unset (the dual LP by shape) or give "
                                 "an LP solver ('clarabel', 'highs', ...)")
            if config.aid or not sparse_cholesky_available():
                X = X.toarray() if is_sparse else X  # AID's centroids are dense
        what = "AID" if config.aid else "the direct solve"
        note = f"{what} with {config.solver}: solver={given!r} given"
    if X is not data.X:
        data = type(data)(X, data.y, data.s, data.feature_names)
    with run_logging(config.log):
        logging.getLogger("aidopt.lad" if config.log else "aidopt.quiet").info("LAD, %s", note)
    return data, config, note


#: column generation over features for the 1-norm SVM when m is at least this many times n
#: (docs/svm.md, "Column generation over features"): a vertex optimum has at most about n
#: nonzero w_j, so at m >= 4 n at least three quarters of the LP's columns are 0 at the optimum
COLGEN_WIDE = 4.0


def lp_svm_method(n: int, m: int, nnz: int, *, norm: str = "l1",
                  memory: float | None = None) -> Choice:
    """The method of an LP SVM on an n x m X with nnz stored entries, when no solver is named:
    ``"colgen"`` (column generation over features, :mod:`aidopt.decomposition.colgen`) for the
    1-norm SVM when ``m >= COLGEN_WIDE n``; else :func:`linear_method`'s rule, ``"lp"`` (the
    LP on the full data) where it says ``"dcd"``, or ``"aid"``."""
    if norm == "l1" and m >= COLGEN_WIDE * n:
        return Choice("colgen", f"wide X for the 1-norm SVM (m = {m} >= {COLGEN_WIDE:g} n = "
                                f"{COLGEN_WIDE * n:g}: most w_j are 0 at the optimum)")
    choice = linear_method(n, m, nnz, memory=memory)
    return Choice("lp" if choice.method == "dcd" else "aid", choice.reason)


def prepare_lp_svm(data, options: dict, config: RunConfig, *, norm: str = "l1",
                   method: str = "aid") -> tuple[object, RunConfig, str, bool]:
    """The method of the LP SVMs (1-norm, infinity-norm, RLP) for validated ``data``:
    ``(data, config, note, colgen)``.

    ``method="colgen"``: column generation over features (1-norm only, checked by the door),
    whatever the shape, with the configured solver. Else, with no solver named and ``aid`` on,
    :func:`lp_svm_method`: column generation for the 1-norm SVM on wide X (``m >= COLGEN_WIDE
    n``); the LP on the full data (``aid=False``), built from X's stored entries, on sparse or
    wide X; AID (X densified) on tall, narrow, dense X. A solver given by name, or
    ``aid=False``, keeps ``aid`` as configured and never runs column generation (``aid=False``
    is how to refuse it: the LP on the full data); AID's centroids need X dense, the direct LP
    and column generation do not (a sparse X stays CSR)."""
    from scipy import sparse

    n, m = data.X.shape
    is_sparse = sparse.issparse(data.X)
    X = data.X
    colgen = False
    if method == "colgen":
        config = dataclasses.replace(config, aid=False)
        colgen = True
        note = f"column generation over features with {config.solver}: method='colgen' given"
    elif options.get("solver") is None and config.aid:
        nnz, memory = _entries_and_memory(X)
        choice = lp_svm_method(n, m, nnz, norm=norm, memory=memory)
        if choice.method == "colgen":
            config = dataclasses.replace(config, aid=False)
            colgen = True
            note = f"column generation over features with {config.solver}: {choice.reason}"
        elif choice.method == "lp":
            config = dataclasses.replace(config, aid=False)
            note = f"the LP on the full data with {config.solver}: {choice.reason}"
        else:
            note = f"AID with {config.solver}: {choice.reason}"
    else:
        what = "AID" if config.aid else "the LP on the full data"
        note = f"{what} with {config.solver}: " + (
            f"solver={options['solver']!r} given" if options.get("solver") else "aid=False given")
    if config.aid and is_sparse:
        X = X.toarray()  # AID's centroids
    if X is not data.X:
        data = type(data)(X, data.y, data.s, data.feature_names, data.classes)
    with run_logging(config.log):
        logging.getLogger("aidopt.svm" if config.log else "aidopt.quiet").info(
            "LP SVM, %s", note)
    return data, config, note, colgen


def prepare_fsv(data, aid: bool | None, aid_above: int, log: bool) -> tuple[object, bool, str]:
    """Whether FSV solves its linearized LPs by AID, for validated ``data`` (X dense, or CSR
    from a sparse input), and X in that method's form: ``(data, aid, note)``.

    ``aid`` given: as given; AID's centroids need X dense (a sparse X is densified, as the LP
    SVMs' AID), the LP on the full data keeps the stored entries. ``aid=None``: the LP on the
    full data up to ``aid_above`` rows; above, :func:`linear_method`'s rule as for the LP SVMs
    (:func:`prepare_lp_svm`): the LP on the full data for sparse or wide X, AID on tall, narrow,
    dense X. ``note`` (also logged) says which and why.
    """
    from scipy import sparse

    n, m = data.X.shape
    if aid is not None:
        note = f"{'AID' if aid else 'the LP on the full data'}: aid={aid} given"
    elif n <= aid_above:
        aid, note = False, f"the LP on the full data: n = {n} <= {aid_above}"
    else:
        nnz, memory = _entries_and_memory(data.X)
        choice = linear_method(n, m, nnz, memory=memory)
        aid = choice.method == "aid"
        note = f"{'AID' if aid else 'the LP on the full data'}: {choice.reason}"
    if aid and sparse.issparse(data.X):  # AID's centroids
        data = type(data)(data.X.toarray(), data.y, data.s, data.feature_names, data.classes)
    with run_logging(log):
        logging.getLogger("aidopt.fsv" if log else "aidopt.quiet").info(
            "FSV, each linearized LP by %s", note)
    return data, aid, note
