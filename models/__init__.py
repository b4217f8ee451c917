"""Formulations: one module per model, each a Pyomo AbstractModel plus data adapter and evaluator."""
