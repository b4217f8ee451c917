"""aidopt: exact large-scale machine-learning optimization on Pyomo with AID and certificates.

The package is layered (docs/design.md has the map):

* ``aidopt.models`` — one Pyomo formulation per module;
* ``aidopt.decomposition`` — the engine (plug-in contract, run framework, AID / SLA / LPC loops)
  and, in ``aidopt.decomposition.plugins``, one plug-in per problem;
* ``aidopt.api`` — one module per family: its ``solve_*`` function and its estimator;
* ``aidopt.cli`` and ``aidopt.bench`` — the ``aidopt`` command and its benchmarks;
* ``aidopt.numerics``, ``aidopt.data``, ``aidopt.solvers`` — numerical methods, input
  validation and readers, the solver layer; ``aidopt.testing`` — the plug-in conformance check.

The names below are imported on first use, so ``import aidopt`` loads no solver, Pyomo, numba,
scikit-learn or dask.
"""

import logging

from aidopt._lazy import lazy_exports
from aidopt._version import __version__  # noqa: F401 (public)

logging.getLogger("aidopt").addHandler(logging.NullHandler())

_EXPORTS = {
    "solve": "aidopt.api.plugin",
    "solve_direct": "aidopt.api.plugin",
    "solve_lad": "aidopt.api.lad",
    "bootstrap_coefficients": "aidopt.api.lad",
    "LADRegressor": "aidopt.api.lad",
    "solve_svm": "aidopt.api.svm",
    "SVMClassifier": "aidopt.api.svm",
    "solve_s3vm": "aidopt.api.s3vm",
    "S3VMClassifier": "aidopt.api.s3vm",
    "solve_fsv": "aidopt.api.fsv",
    "FSVClassifier": "aidopt.api.fsv",
    "solve_gsvm": "aidopt.api.gsvm",
    "GSVMClassifier": "aidopt.api.gsvm",
    "solve_aggregate_outputs": "aidopt.api.aggout",
    "AggregateOutputClassifier": "aidopt.api.aggout",
    "solve_facility_location": "aidopt.api.facility",
    "solve_lp_chunked": "aidopt.api.lpc",
    "solve_lsvm_lpc": "aidopt.api.lpc",
    "solve_s2rlsc": "aidopt.api.s2rlsc",
    "S2RLSCClassifier": "aidopt.api.s2rlsc",
    "solve_scm": "aidopt.api.scm",
    "SCMClassifier": "aidopt.api.scm",
    "AIDResult": "aidopt.results",
    "Certificate": "aidopt.results",
    "Termination": "aidopt.results",
    "RankWarning": "aidopt.data.validate",
    "SolverCapabilityError": "aidopt.solvers.errors",
    "SolverError": "aidopt.solvers.errors",
    "SolverUnavailableError": "aidopt.solvers.errors",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted([*_EXPORTS, "__version__"], key=str.lower)
