r"""Kernel functions of the generalized SVMs (Mangasarian §2): every name of :data:`KERNELS`
with its parameters, made into a callable ``K(A, B) -> len(A) x len(B)`` by
:func:`kernel_function`, and :func:`kernel_matrix`, which computes and checks such a matrix
(shape, real, finite). No assumption on the kernel: not symmetric, not positive semidefinite."""

from __future__ import annotations

import numbers

import numpy as np

from aidopt.data.validate import _check_finite

__all__ = ['KERNELS', 'kernel_function', 'kernel_matrix']
KERNELS = {
    "linear": {},
    "poly": {"d": 2, "mu": 1.0},
    "shifted_poly": {"d": 6, "lam": 100.0, "rho": 1.0, "mu": 0.5},
    "step": {"mu": 0.0},
    "rbf": {"gamma": 1.0},
}
"""Kernel names and their parameters with defaults (``shifted_poly``'s are the seed's Fig. 1.2)."""


def kernel_function(kernel="poly", **params):
    """``K(A, B) -> len(A) x len(B)`` for a kernel name of :data:`KERNELS` with its parameters, or
    the callable ``kernel`` itself (``params`` must then be empty)."""
    if callable(kernel):
        if params:
            raise ValueError("parameters are for named kernels; bind them in your callable")
        return kernel
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}; choose from {sorted(KERNELS)} or pass a "
                         "callable K(A, B)")
    unknown = set(params) - set(KERNELS[kernel])
    if unknown:
        raise ValueError(f"kernel {kernel!r} takes {sorted(KERNELS[kernel])}, not {sorted(unknown)}")
    p = {**KERNELS[kernel], **params}
    for name, value in p.items():
        if not (isinstance(value, numbers.Real) and np.isfinite(value)):
            raise ValueError(f"kernel parameter {name} must be a finite number, got {value!r}")
    if kernel in ("poly", "shifted_poly") and not (float(p["d"]).is_integer() and p["d"] >= 1):
        raise ValueError(f"the polynomial degree d must be a positive integer, got {p['d']!r}")
    if kernel == "shifted_poly" and p["lam"] == 0:
        raise ValueError("lam must be nonzero")
    if kernel == "linear":
        return lambda A, B: A @ B.T
    if kernel == "poly":
        return lambda A, B: (A @ B.T + p["mu"]) ** int(p["d"])
    if kernel == "shifted_poly":
        def shifted(A, B):
            return ((A / p["lam"] - p["rho"]) @ (B / p["lam"] - p["rho"]).T - p["mu"]) ** int(p["d"])
        return shifted
    if kernel == "step":
        return lambda A, B: (A @ B.T + p["mu"] > 0).astype(float)
    if p["gamma"] <= 0:
        raise ValueError(f"rbf gamma must be positive, got {p['gamma']!r}")

    def rbf(A, B):
        sq = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
        return np.exp(-p["gamma"] * np.maximum(sq, 0.0))
    return rbf


def kernel_matrix(kfun, A, B) -> np.ndarray:
    """``kfun(A, B)`` checked: a finite real ``len(A) x len(B)`` array."""
    K = np.asarray(kfun(A, B))
    if K.shape != (A.shape[0], B.shape[0]):
        raise ValueError(f"the kernel returned shape {K.shape}, expected ({A.shape[0]}, "
                         f"{B.shape[0]}) for K(A, B) with A {A.shape}, B {B.shape}")
    if K.dtype.kind not in "biuf":
        raise ValueError(f"the kernel returned dtype {K.dtype}, expected real numbers")
    K = np.ascontiguousarray(K, dtype=float)
    _check_finite(K, "the kernel matrix")
    return K
