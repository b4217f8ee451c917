"""The user-facing doors, one module per problem family: its ``solve_*`` function and its
scikit-learn estimator (``lad``, ``svm``, ``s3vm``, ``fsv``, ``gsvm``, ``aggout``, ``facility``,
``lpc``, ``s2rlsc``, ``scm``), the door for a user's own plug-in (``plugin``: ``aidopt.solve``),
and what they share (``_front``, ``estimator``). Names are imported on first use."""

from aidopt._lazy import lazy_exports

_EXPORTS = {
    "solve": "aidopt.api.plugin",
    "solve_direct": "aidopt.api.plugin",
    "solve_lad": "aidopt.api.lad",
    "bootstrap_coefficients": "aidopt.api.lad",
    "LADRegressor": "aidopt.api.lad",
    "LADResult": "aidopt.api.rq",
    "QuantileResults": "aidopt.api.rq",
    "solve_svm": "aidopt.api.svm",
    "default_svm_solver": "aidopt.api.svm",
    "SVMClassifier": "aidopt.api.svm",
    "solve_s3vm": "aidopt.api.s3vm",
    "default_s3vm_solver": "aidopt.api.s3vm",
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
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
