"""aidopt: exact large-scale machine-learning optimization on Pyomo with AID and certificates."""

import logging

__version__ = "0.1.0"

logging.getLogger("aidopt").addHandler(logging.NullHandler())

from aidopt.aggout import solve_aggregate_outputs  # noqa: E402
from aidopt.api import (  # noqa: E402
    bootstrap_coefficients,
    solve_fsv,
    solve_lad,
    solve_s3vm,
    solve_svm,
)
from aidopt.data import RankWarning  # noqa: E402
from aidopt.estimators import (  # noqa: E402
    AggregateOutputClassifier,
    FSVClassifier,
    GSVMClassifier,
    LADRegressor,
    S3VMClassifier,
    SVMClassifier,
)
from aidopt.facility import solve_facility_location  # noqa: E402
from aidopt.gsvm import solve_gsvm  # noqa: E402
from aidopt.lpc import solve_lp_chunked, solve_lsvm_lpc  # noqa: E402
from aidopt.results import AIDResult, Certificate, Termination  # noqa: E402
from aidopt.s2rlsc import solve_s2rlsc  # noqa: E402
from aidopt.s2rlsc_estimator import S2RLSCClassifier  # noqa: E402
from aidopt.scm import SCMClassifier, solve_scm  # noqa: E402
from aidopt.solvers import SolverCapabilityError, SolverError, SolverUnavailableError  # noqa: E402

__all__ = [
    "AggregateOutputClassifier",
    "AIDResult",
    "Certificate",
    "FSVClassifier",
    "GSVMClassifier",
    "LADRegressor",
    "RankWarning",
    "S2RLSCClassifier",
    "S3VMClassifier",
    "SCMClassifier",
    "SVMClassifier",
    "SolverCapabilityError",
    "SolverError",
    "SolverUnavailableError",
    "Termination",
    "__version__",
    "bootstrap_coefficients",
    "solve_aggregate_outputs",
    "solve_facility_location",
    "solve_fsv",
    "solve_gsvm",
    "solve_lad",
    "solve_lp_chunked",
    "solve_lsvm_lpc",
    "solve_s2rlsc",
    "solve_s3vm",
    "solve_scm",
    "solve_svm",
]
