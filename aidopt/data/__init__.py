"""Inputs: validation of every user array before any model is built (``validate``), out-of-core
matrices (``chunked``), row blocks (``rowblocks``), and facility-location inputs and readers
(``facility``: cost matrices from coordinates or graphs, OR-Library and TSPLIB files). Names are
imported on first use."""

from aidopt._lazy import lazy_exports

_EXPORTS = {name: "aidopt.data.validate" for name in (
    "RankWarning", "RegressionData", "ClassificationData", "SemiSupervisedData", "AggregateData",
    "as_regression_data", "as_classification_data", "as_semisupervised_data", "as_aggregate_data",
    "load_table", "read_svmlight", "store_inputs", "resolve_engine")}
_EXPORTS.update({name: "aidopt.data.facility" for name in (
    "FacilityData", "EuclideanCosts", "GraphCosts", "as_facility_data", "euclidean_costs", "graph_costs",
    "read_orlib_pmed", "read_tsplib", "tsplib_costs", "read_orlib_cap", "auto_fixed_costs")})
_EXPORTS["ChunkedMatrix"] = "aidopt.data.chunked"
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
