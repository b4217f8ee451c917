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
from aidopt.api import _EXPORTS as _DOORS

logging.getLogger("aidopt").addHandler(logging.NullHandler())

#: the doors of aidopt.api (every solve_* and estimator, aidopt.solve for any plug-in), then the
#: result types and the errors users catch
_EXPORTS = {name: module for name, module in _DOORS.items() if not name.startswith("default_")}
_EXPORTS.update({
    "AIDResult": "aidopt.results",
    "Certificate": "aidopt.results",
    "RunResult": "aidopt.results",
    "Termination": "aidopt.results",
    "RankWarning": "aidopt.data.validate",
    "SolverCapabilityError": "aidopt.solvers.errors",
    "SolverError": "aidopt.solvers.errors",
    "SolverUnavailableError": "aidopt.solvers.errors",
})
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted([*_EXPORTS, "__version__"], key=str.lower)
