"""The registry of the solvers aidopt knows: what each can take, and whether it is usable here.

``SOLVERS`` maps aidopt's solver name (the ``solver=`` flag) to a :class:`SolverSpec`: the backend
module that talks to it, the problem classes it solves, whether it returns duals, its pip extra,
the limits of its size-limited licence and whether a persistent handle re-solves it warm.
:func:`availability` and :func:`version` probe the installation once per process (they are
cached; :func:`refresh` clears the caches after installing or licensing a solver).
:func:`check_solver` checks a request before any model is built.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import importlib.metadata
import importlib.util
import logging
from dataclasses import dataclass
from typing import Any

from .errors import LicenceLimitError, SolverCapabilityError, SolverUnavailableError

__all__ = [
    "NATIVE_METHODS",
    "DEFAULT_SOLVER",
    "ProblemClass",
    "SOLVERS",
    "SizeLimits",
    "SolverSpec",
    "availability",
    "check_licence",
    "check_solver",
    "refresh",
    "solver_table",
    "version",
]

logger = logging.getLogger("aidopt.solvers")


class ProblemClass(enum.StrEnum):
    """Class of an optimization problem, as far as solver choice is concerned.

    The classes are ordered by what they allow: an LP is also a QP and a MILP, and all are MIQPs.
    :meth:`covers` says whether a solver routed for one class can take a model of another.
    """

    LP = "LP"
    QP = "QP"
    MILP = "MILP"
    MIQP = "MIQP"

    @property
    def integer(self) -> bool:
        """Whether the class allows integer (or binary) variables."""
        return self in (ProblemClass.MILP, ProblemClass.MIQP)

    @property
    def quadratic(self) -> bool:
        """Whether the class allows a quadratic objective."""
        return self in (ProblemClass.QP, ProblemClass.MIQP)

    @classmethod
    def of(cls, *, integer: bool, quadratic: bool) -> ProblemClass:
        """The smallest class with (or without) integer variables and a quadratic objective."""
        if integer:
            return cls.MIQP if quadratic else cls.MILP
        return cls.QP if quadratic else cls.LP

    def covers(self, other: ProblemClass) -> bool:
        """Whether a model of class ``other`` may be solved as ``self`` (e.g. ``MILP`` covers
        ``LP``, ``LP`` does not cover ``MILP``)."""
        other = ProblemClass(other)
        return (self.integer or not other.integer) and (self.quadratic or not other.quadratic)


@dataclass(frozen=True)
class SizeLimits:
    """Size limits of a restricted licence (e.g. the pip ``gurobipy`` licence).

    Attributes
    ----------
    max_vars, max_cons : int
        Variables and constraints the licence allows.
    max_quad_vars : int or None
        Variables allowed when the model has quadratic terms (Gurobi: 200), ``None`` if the same.
    max_total : int or None
        Rows plus columns allowed in total (FICO Xpress community licence: 5000).
    max_quad_total : int or None
        Rows plus columns allowed when the model has quadratic terms (Xpress community: 200).
    """

    max_vars: int
    max_cons: int
    max_quad_vars: int | None = None
    max_total: int | None = None
    max_quad_total: int | None = None

    def violations(self, n_vars: int | None, n_cons: int | None, n_quad_vars: int = 0) -> list[str]:
        """What exceeds the limits, e.g. ``["5000 variables > 2000"]`` (empty when it fits)."""
        out = []
        if n_vars is not None and n_vars > self.max_vars:
            out.append(f"{n_vars} variables > {self.max_vars}")
        if n_cons is not None and n_cons > self.max_cons:
            out.append(f"{n_cons} constraints > {self.max_cons}")
        if (n_quad_vars and self.max_quad_vars is not None and n_vars is not None
                and n_vars > self.max_quad_vars):
            out.append(f"{n_vars} variables in a model with quadratic terms > {self.max_quad_vars}")
        if self.max_total is not None and n_vars is not None and n_cons is not None \
                and n_vars + n_cons > self.max_total:
            out.append(f"{n_vars} variables + {n_cons} constraints = {n_vars + n_cons} > "
                       f"{self.max_total} in total")
        if (n_quad_vars and self.max_quad_total is not None and n_vars is not None
                and n_cons is not None and n_vars + n_cons > self.max_quad_total):
            out.append(f"{n_vars} variables + {n_cons} constraints = {n_vars + n_cons} > "
                       f"{self.max_quad_total} in total for a model with quadratic terms")
        return out


@dataclass(frozen=True)
class SolverSpec:
    """What aidopt knows about one solver.

    Attributes
    ----------
    name : str
        aidopt's name (the ``solver=`` flag).
    pyomo_name : str
        Name of the Pyomo interface used (``pyomo.contrib.solver`` factory for the ``contrib``
        backend, the legacy ``SolverFactory`` for ``cplex`` / ``xpress``; empty when aidopt reads
        the model itself).
    classes : frozenset of ProblemClass
        Problem classes the solver can solve to optimality.
    duals : bool
        Whether constraint duals are returned for LPs (and convex QPs).
    extra : str
        The aidopt pip extra that installs it.
    module : str
        The Python module that must be importable.
    limited_licence : SizeLimits or None
        Size limits that apply when only a size-limited licence is found.
    notes : str
        One line for ``aidopt solvers``.
    backend : str
        The module of :mod:`aidopt.solvers` that talks to it: ``highs``, ``clarabel``,
        ``contrib``, ``cplex`` or ``xpress``.
    warm : bool
        Whether a persistent handle (:func:`aidopt.solvers.persistent`) updates the loaded model
        in place and re-solves warm; otherwise it rebuilds transparently.
    """

    name: str
    pyomo_name: str
    classes: frozenset
    duals: bool
    extra: str
    module: str
    limited_licence: SizeLimits | None = None
    notes: str = ""
    backend: str = "contrib"
    warm: bool = False


SOLVERS: dict[str, SolverSpec] = {
    "highs": SolverSpec(
        name="highs",
        pyomo_name="highs",
        classes=frozenset({ProblemClass.LP, ProblemClass.QP, ProblemClass.MILP}),
        duals=True,
        extra="(core dependency)",
        module="highspy",
        notes="no MIQP (HiGHS cannot solve QPs with integer variables)",
        backend="highs",
        warm=True,
    ),
    "gurobi": SolverSpec(
        name="gurobi",
        pyomo_name="gurobi_persistent",
        classes=frozenset(ProblemClass),
        duals=True,
        extra="gurobi",
        module="gurobipy",
        limited_licence=SizeLimits(max_vars=2000, max_cons=2000, max_quad_vars=200),
        notes="pip licence: 2000 variables / 2000 linear constraints, 200 variables with quadratic terms",
        backend="contrib",
        warm=True,
    ),
    "clarabel": SolverSpec(
        name="clarabel",
        pyomo_name="",
        classes=frozenset({ProblemClass.LP, ProblemClass.QP}),
        duals=True,
        extra="(core dependency)",
        module="clarabel",
        notes="interior point for LP/QP (read from the Pyomo model by aidopt, not a Pyomo plugin); "
        "no vertex solutions",
        backend="clarabel",
    ),
    "scip": SolverSpec(
        name="scip",
        pyomo_name="scip_direct",
        classes=frozenset(ProblemClass),
        duals=False,
        extra="scip",
        module="pyscipopt",
        notes="Pyomo's scip_direct returns no duals: certificates use the dual LP re-solve",
        backend="contrib",
    ),
    "cplex": SolverSpec(
        name="cplex",
        pyomo_name="cplex_persistent",
        classes=frozenset(ProblemClass),
        duals=True,
        extra="cplex",
        module="cplex",
        limited_licence=SizeLimits(max_vars=1000, max_cons=1000, max_quad_vars=1000),
        notes="pip community edition: 1000 variables / 1000 constraints (CPLEX error 1016 beyond)",
        backend="cplex",
        warm=True,
    ),
    "xpress": SolverSpec(
        name="xpress",
        pyomo_name="xpress_persistent",
        classes=frozenset(ProblemClass),
        duals=True,
        extra="xpress",
        module="xpress",
        limited_licence=SizeLimits(max_vars=5000, max_cons=5000, max_total=5000, max_quad_total=200),
        notes="pip community licence: 5000 rows + columns in total, 200 with quadratic terms",
        backend="xpress",
        warm=True,
    ),
}

DEFAULT_SOLVER = "highs"


NATIVE_METHODS: dict[str, SolverSpec] = {
    "sor": SolverSpec(
        name="sor", pyomo_name="", classes=frozenset({ProblemClass.QP}), duals=True,
        extra="", module="aidopt.numerics.sor",
        notes="the modified SVM (bias='regularized', or method='sor'): successive "
              "overrelaxation sweeps (aidopt.numerics.sor)",
        backend="native"),
    "fn": SolverSpec(
        name="fn", pyomo_name="", classes=frozenset({ProblemClass.LP}), duals=True,
        extra="", module="aidopt.numerics.fn",
        notes="LAD only (default): Frisch-Newton interior point with dense normal equations "
              "(aidopt.numerics.fn)",
        backend="native"),
    "fm": SolverSpec(
        name="fm", pyomo_name="", classes=frozenset({ProblemClass.QP}), duals=True,
        extra="", module="aidopt.numerics.fm",
        notes="2-norm linear SVM (default) and kernel SVM: Ferris-Munson interior point with "
              "dense normal equations (aidopt.numerics.fm)",
        backend="native"),
    "dcd": SolverSpec(
        name="dcd", pyomo_name="", classes=frozenset({ProblemClass.QP}), duals=True,
        extra="", module="aidopt.numerics.dcd",
        notes="linear 2-norm SVM on sparse or wide data (chosen by shape): dual coordinate "
              "descent on the full data, CSR rows (aidopt.numerics.dcd)",
        backend="native"),
    "smo": SolverSpec(
        name="smo", pyomo_name="", classes=frozenset({ProblemClass.QP}), duals=True,
        extra="", module="aidopt.numerics.smo",
        notes="kernel SVM (default): warm-started SMO on the dense dual in double precision "
              "(aidopt.numerics.smo)",
        backend="native"),
    "benders": SolverSpec(
        name="benders", pyomo_name="", classes=frozenset({ProblemClass.MILP}), duals=False,
        extra="scip", module="pyscipopt",
        notes="uncapacitated facility location (default): branch-and-Benders-cut in SCIP, "
              "per-customer cuts separated lazily (aidopt.decomposition.plugins.facility_benders)",
        backend="native"),
    "libsvm": SolverSpec(
        name="libsvm", pyomo_name="", classes=frozenset({ProblemClass.QP}), duals=True,
        extra="scikit-learn", module="sklearn",
        notes="kernel SVM and SCM: LIBSVM's SMO (scikit-learn SVC) on kernel AID's "
              "precomputed mean kernel",
        backend="native"),
}
"""Methods aidopt runs itself, named as ``solver``: a run with one checks no external solver.
A plug-in offers one through
:attr:`aidopt.decomposition.protocol.AIDProblem.native_methods`; one list, never extended at
import time."""


def spec_of(name: str) -> SolverSpec | None:
    """The registered :class:`SolverSpec` of ``name`` (any case), ``None`` for other names."""
    return SOLVERS.get(name.lower())


# --------------------------------------------------------------------------- probing


def backend_module(backend: str):
    """The module of :mod:`aidopt.solvers` named ``backend`` (imported on first use)."""
    return importlib.import_module(f"{__package__}.{backend}")


def _contrib_factory():
    import pyomo.environ  # noqa: F401  (registers the contrib solvers)
    from pyomo.contrib.solver.common.factory import SolverFactory

    return SolverFactory


@contextlib.contextmanager
def quiet_pyomo():
    """Silence Pyomo's licence-handle chatter while probing availability and versions."""
    log = logging.getLogger("pyomo")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def availability(name: str) -> str:
    """Whether solver ``name`` can be used here.

    Returns
    -------
    str
        ``'full'``, ``'limited'`` (a size-limited licence: see the spec's ``limited_licence``),
        ``'not installed'`` or ``'no licence'``. Probed once per process; :func:`refresh` clears it.
    """
    return _availability(name.lower() if name.lower() in SOLVERS else name)


@functools.cache
def _availability(name: str) -> str:
    with quiet_pyomo():
        spec = SOLVERS.get(name)
        if spec is not None:
            if importlib.util.find_spec(spec.module) is None:
                return "not installed"
            if spec.backend in ("highs", "clarabel"):
                return "full"
            if spec.backend in ("cplex", "xpress"):
                return backend_module(spec.backend).licence()
        return _pyomo_availability(spec.pyomo_name if spec else name, legacy_name=name)


def _pyomo_availability(pyomo_name: str, legacy_name: str) -> str:
    try:
        opt = _contrib_factory()(pyomo_name)
    except Exception:
        opt = None
    if opt is None:  # unknown to pyomo.contrib.solver: try the legacy factory
        import pyomo.environ as pyo

        try:
            ok = pyo.SolverFactory(legacy_name).available(exception_flag=False)
        except Exception:
            return "not installed"
        return "full" if ok else "not installed"
    try:
        avail = opt.available()
    except Exception:
        return "not installed"
    label = str(getattr(avail, "name", avail))
    if label == "FullLicense":
        return "full"
    if label == "LimitedLicense":
        return "limited"
    if label == "BadLicense":
        return "no licence"
    return "full" if avail else "not installed"


def version(name: str) -> str:
    """The solver's version as a dotted string, or ``''`` when unknown (cached)."""
    return _version(name.lower() if name.lower() in SOLVERS else name)


@functools.cache
def _version(name: str) -> str:
    spec = SOLVERS.get(name)
    if spec is not None and importlib.util.find_spec(spec.module) is None:
        return ""
    if spec is not None and spec.backend != "contrib":
        try:
            return backend_module(spec.backend).solver_version()
        except Exception:  # noqa: BLE001 - a version is informative only
            return ""
    try:
        with quiet_pyomo():
            v = _contrib_factory()(spec.pyomo_name if spec else name).version()
    except Exception:
        try:
            import pyomo.environ as pyo

            with quiet_pyomo():
                v = pyo.SolverFactory(name).version()
        except Exception:
            return ""
    return ".".join(str(p) for p in v) if isinstance(v, tuple) else str(v or "")


def package_version(module: str) -> str:
    """Installed distribution version of ``module`` (``''`` if unknown)."""
    try:
        return importlib.metadata.version(module)
    except importlib.metadata.PackageNotFoundError:
        return ""


def refresh() -> None:
    """Forget the cached availability, licence and version probes (e.g. after installing or
    licensing a solver in a running process)."""
    _availability.cache_clear()
    _version.cache_clear()


def solver_table(*, native: bool = False) -> list[dict[str, Any]]:
    """One row per registered solver, then (``native``) one per method aidopt runs itself.

    Parameters
    ----------
    native : bool, default False
        Also list :data:`NATIVE_METHODS` (``fn``, ``fm``, ``dcd``, ``smo``, ``sor``, ``libsvm``,
        ``benders``: named as ``solver=``, run without a Pyomo model), after the solvers; their
        ``notes`` start with what they solve.

    Returns
    -------
    list of dict
        Keys: ``name, version, available, licence, classes, duals, persistent, install, notes``
        (``persistent`` is ``'warm'`` when a persistent handle updates the loaded model in
        place, ``'rebuild'`` otherwise, ``'native'`` for aidopt's own methods).
    """
    if not isinstance(native, bool):
        raise TypeError(f"native must be True or False, got {native!r}")
    rows = []
    for name, spec in SOLVERS.items():
        avail = availability(name)
        rows.append(
            {
                "name": name,
                "version": version(name) if avail in ("full", "limited") else "",
                "available": avail in ("full", "limited"),
                "licence": avail,
                "classes": ",".join(c.value for c in ProblemClass if c in spec.classes),
                "duals": "yes" if spec.duals else "no",
                "persistent": "warm" if spec.warm else "rebuild",
                "install": f"pip install 'aidopt[{spec.extra}]'" if spec.extra[0] != "(" else "",
                "notes": spec.notes,
            }
        )
    return rows + ([_native_row(spec) for spec in NATIVE_METHODS.values()] if native else [])


def _native_row(spec: SolverSpec) -> dict[str, Any]:
    """The :func:`solver_table` row of a native method: installed when its module is (aidopt's
    own always are); its version is aidopt's, or that of the library it runs."""
    from aidopt._version import __version__

    installed = importlib.util.find_spec(spec.module) is not None
    own = spec.module.startswith("aidopt.")
    if own or not installed:
        found = __version__ if own else ""
    else:
        found = version("scip") if spec.module == "pyscipopt" else package_version("scikit-learn")
    return {
        "name": spec.name,
        "version": found,
        "available": installed,
        "licence": "full" if installed else "not installed",
        "classes": ",".join(c.value for c in ProblemClass if c in spec.classes),
        "duals": "yes" if spec.duals else "no",
        "persistent": "native",
        "install": "" if own or spec.module == "pyscipopt" else "pip install scikit-learn",
        "notes": spec.notes,
    }


# --------------------------------------------------------------------------- checks


def check_solver(
    name: str,
    problem_class: ProblemClass,
    *,
    n_vars: int | None = None,
    n_cons: int | None = None,
    n_quad_vars: int = 0,
    need_duals: bool = False,
) -> SolverSpec | None:
    """Check, before anything is built, that ``name`` can solve this problem.

    Parameters
    ----------
    name : str
        A registered solver or any Pyomo solver name.
    problem_class : ProblemClass
        The class the model will be solved as.
    n_vars, n_cons, n_quad_vars : int, optional
        Model sizes, when known, checked against a size-limited licence (``n_quad_vars``: how
        many variables appear in quadratic terms).
    need_duals : bool
        Whether the caller needs constraint duals.

    Returns
    -------
    SolverSpec or None
        The spec (``None`` for a solver unknown to aidopt, passed through to Pyomo unchecked).

    Raises
    ------
    SolverUnavailableError
        Not installed, or no licence.
    SolverCapabilityError
        Wrong class or no duals.
    LicenceLimitError
        The sizes exceed the size-limited licence found here.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"solver must be a non-empty string, got {name!r}")
    spec = spec_of(name)
    problem_class = ProblemClass(problem_class)
    avail = availability(name)
    if spec is None:
        if avail == "not installed":
            raise SolverUnavailableError(
                f"Solver {name!r} is neither registered in aidopt ({', '.join(SOLVERS)}) "
                "nor available through Pyomo's SolverFactory."
            )
        return None
    if avail == "not installed":
        raise SolverUnavailableError(
            f"Solver {name!r} is not installed: pip install 'aidopt[{spec.extra}]' "
            f"(Python module {spec.module!r})."
        )
    if avail == "no licence":
        raise SolverUnavailableError(f"Solver {name!r} is installed but has no valid licence.")
    if problem_class not in spec.classes:
        alternatives = [s for s, sp in SOLVERS.items() if problem_class in sp.classes]
        raise SolverCapabilityError(
            f"Solver {name!r} cannot solve {problem_class.value} problems ({spec.notes}). "
            f"Use solver={' or '.join(repr(a) for a in alternatives)}."
        )
    if need_duals and not spec.duals:
        raise SolverCapabilityError(
            f"Solver {name!r} returns no duals through Pyomo; this step needs them. "
            "Use solver='highs' or solver='gurobi'."
        )
    check_licence(spec, n_vars=n_vars, n_cons=n_cons, n_quad_vars=n_quad_vars, avail=avail)
    return spec


def check_licence(spec: SolverSpec, *, n_vars: int | None, n_cons: int | None,
                  n_quad_vars: int = 0, avail: str | None = None) -> None:
    """Raise :class:`LicenceLimitError` when a size-limited licence cannot take these sizes."""
    if spec.limited_licence is None:
        return
    if (avail or availability(spec.name)) != "limited":
        return
    lim = spec.limited_licence
    too_big = lim.violations(n_vars, n_cons, n_quad_vars)
    if too_big:
        raise LicenceLimitError(
            f"Solver {spec.name!r} has a size-limited licence ({spec.notes}); this model has "
            + "; ".join(too_big)
            + ". Use a full licence, another solver (solver='highs' for LPs and MILPs), or AID "
            "(aid=True) whose aggregated models are smaller.",
            solver=spec.name,
            sizes={"variables": n_vars, "constraints": n_cons, "quadratic_variables": n_quad_vars},
            limits=lim,
        )
