"""The engine: the plug-in contract (``protocol``), the run framework (``run``), the AID loop
(``aid``), the successive-linearization loop (``sla``), LP chunking (``lpc``), partitions,
initial clustering and what MIP plug-ins share (``mip``). One plug-in per problem lives in
:mod:`aidopt.decomposition.plugins`. Names are imported on first use."""

from aidopt._lazy import lazy_exports

_EXPORTS = {
    "AIDProblem": "aidopt.decomposition.protocol",
    "Iterate": "aidopt.decomposition.protocol",
    "Lifted": "aidopt.decomposition.protocol",
    "Split": "aidopt.decomposition.protocol",
    "Stop": "aidopt.decomposition.protocol",
    "Partition": "aidopt.decomposition.partition",
    "SIGN_PURE": "aidopt.decomposition.partition",
    "one_step_kmeans": "aidopt.decomposition.clustering",
    "solve_own": "aidopt.decomposition.protocol",
    "relative_gap": "aidopt.decomposition.protocol",
    "solve": "aidopt.decomposition.aid",
    "solve_direct": "aidopt.decomposition.aid",
    "Run": "aidopt.decomposition.run",
    "RunConfig": "aidopt.decomposition.run",
    "AIDConfig": "aidopt.decomposition.run",  # the old name of RunConfig (an old import path)
    "AggregateOutputProblem": "aidopt.decomposition.plugins.aggout",
    "LADProblem": "aidopt.decomposition.plugins.lad",
    "ModifiedSVMProblem": "aidopt.decomposition.plugins.modified_svm",
    "S3VMProblem": "aidopt.decomposition.plugins.s3vm",
    "SVMProblem": "aidopt.decomposition.plugins.svm",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
