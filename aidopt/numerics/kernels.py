r"""Generalized support vector machines (Mangasarian, "Generalized Support Vector Machines" §2):
SVMs that need no assumption on the kernel — not symmetric, not positive semidefinite, not even
continuous.

Decision function (1.2): class 1 where :math:`K(x', A')Du - \gamma \ge 0`. Three formulations,
each solved directly on the precomputed m x m kernel matrix :math:`K(A, A')` with a full
certificate (docs/gsvm.md):

* ``"lp_u"`` — the LP (1.11), :math:`\min \nu e'y + \|u\|_1`;
* ``"lp_Ku"`` — the LP (1.12), :math:`\min \nu e'y + \|K(A, A')Du\|_1`;
* ``"qp"`` — the QP (1.10) with :math:`H = I`, whose Hessian :math:`DKK'D` is positive
  semidefinite for any K.

Kernels (:func:`kernel_function`): the seed's polynomial :math:`(AB' + \mu ab')^d`, the shifted
polynomial of its Fig. 1.2 :math:`((A/\lambda - \rho)(B/\lambda - \rho)' - \mu)^d`, the
neural-network step kernel :math:`(AB' + \mu ab')_*` (1 where positive, else 0: discontinuous),
RBF, linear, or any callable ``K(A, B)``.
"""

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
