r"""The one kernels module: every kernel is a callable ``K(A, B) -> len(A) x len(B)``, made by one
adapter per paper's parameterisation.

* :func:`kernel_function` — Mangasarian's generalized SVMs (§2): a name of :data:`KERNELS` with
  its parameters (the seed's polynomial, the shifted polynomial of Fig. 1.2, a step, rbf); no
  assumption on the kernel: not symmetric, not positive semidefinite.
* :func:`svc_kernel` — scikit-learn's SVC parameters (``gamma``, ``degree``, ``coef0``): kernel
  AID (Park & Klabjan Appendix B) and Support Cluster Machines.
* :func:`rlsc_kernel` — Gieseke et al.'s linear (17) and rbf (18) with width ``sigma``
  (default a tenth of their distance scale :func:`rbf_scale`).

:func:`kernel_matrix` computes and checks such a matrix (shape, real, finite); :func:`sqdist` is
the squared distance all rbf kernels share. The named kernels take scipy sparse rows too
(:func:`gram`, :func:`sq_norms`: products and norms from the stored entries; the result, a
kernel block, is dense).
"""

from __future__ import annotations

import numbers

import numpy as np

from aidopt.data.validate import _check_finite

__all__ = ["KERNELS", "SVC_KERNELS", "RLSC_KERNELS", "DEFAULT_SIGMA_FACTOR", "kernel_function",
           "svc_kernel", "rlsc_kernel", "rbf_scale", "kernel_matrix", "sqdist", "gram", "sq_norms"]
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
        return gram
    if kernel == "poly":
        return lambda A, B: (gram(A, B) + p["mu"]) ** int(p["d"])
    if kernel == "shifted_poly":
        def shifted(A, B):
            return ((A / p["lam"] - p["rho"]) @ (B / p["lam"] - p["rho"]).T - p["mu"]) ** int(p["d"])
        return shifted
    if kernel == "step":
        return lambda A, B: (gram(A, B) + p["mu"] > 0).astype(float)
    if p["gamma"] <= 0:
        raise ValueError(f"rbf gamma must be positive, got {p['gamma']!r}")

    return lambda A, B: np.exp(-p["gamma"] * sqdist(A, B))


def gram(A, B) -> np.ndarray:
    """The inner products ``A B'`` of the rows of ``A`` and ``B`` as a dense ``len(A) x len(B)``
    array; either may be a scipy sparse matrix, whose stored entries are all that is read (the
    product of two sparse matrices is sparse and densified here: it is the kernel block, not X)."""
    from scipy import sparse

    P = A @ B.T
    if sparse.issparse(P):
        P = P.toarray()
    return np.asarray(P, dtype=float)


def sq_norms(A) -> np.ndarray:
    """The squared norms of the rows of ``A`` (dense, or sparse: from its stored entries)."""
    from scipy import sparse

    if sparse.issparse(A):
        return np.asarray(A.multiply(A).sum(axis=1), dtype=float).ravel()
    return np.einsum("ij,ij->i", A, A)


def sqdist(A, B) -> np.ndarray:
    """Squared Euclidean distances between the rows of ``A`` and ``B`` (rounding below 0
    clipped); either may be scipy sparse (row norms from the stored entries, :func:`gram`)."""
    d = sq_norms(A)[:, None] + sq_norms(B)[None, :] - 2.0 * gram(A, B)
    return np.maximum(d, 0.0)


#: the kernels :func:`svc_kernel` names
SVC_KERNELS = ("linear", "rbf", "poly")


def svc_kernel(kernel, gamma: float, degree: int = 3, coef0: float = 1.0):
    """``K(A, B)`` with scikit-learn SVC's parameters: ``"linear"`` :math:`AB'`, ``"rbf"``
    :math:`\\exp(-\\gamma \\|a - b\\|^2)`, ``"poly"`` :math:`(\\gamma a'b + c_0)^d`, or a
    callable (returned as it is). The named kernels take dense or scipy sparse rows (the
    products and row norms read the stored entries only, :func:`gram`, :func:`sq_norms`) and
    return a dense array; a callable gets the rows as they are."""
    if callable(kernel):
        return kernel
    if kernel == "linear":
        return gram
    if kernel == "rbf":
        return lambda A, B: np.exp(-gamma * sqdist(A, B))
    if kernel == "poly":
        return lambda A, B: (gamma * gram(A, B) + coef0) ** degree
    raise ValueError(f"kernel must be 'linear', 'rbf', 'poly' or a callable, got {kernel!r}")


#: the kernels :func:`rlsc_kernel` names
RLSC_KERNELS = ("linear", "rbf")
#: default RBF width of :func:`rlsc_kernel`: ``DEFAULT_SIGMA_FACTOR * rbf_scale(X)`` (one of
#: Gieseke et al.'s grid values)
DEFAULT_SIGMA_FACTOR = 0.1


def rbf_scale(X) -> float:
    r"""Gieseke et al.'s scale s: :math:`\sqrt{\sum_k (\max_i x_{ik} - \min_i x_{ik})^2}`, a
    rough estimate of the largest distance between two points (their section 4.2.1.1)."""
    X = np.asarray(X, dtype=float)
    return float(np.sqrt(((X.max(axis=0) - X.min(axis=0)) ** 2).sum()))


def rlsc_kernel(kernel="linear", sigma: float | None = None, X=None):
    r"""``K(A, B)`` in Gieseke et al.'s notation: ``"linear"`` (17), ``"rbf"`` (18)
    :math:`\exp(-\|a - b\|^2 / (2\sigma^2))`, or a callable.

    ``sigma=None`` with ``"rbf"`` is ``DEFAULT_SIGMA_FACTOR * rbf_scale(X)`` (0.1 s, the
    smallest value of their grid {0.1, 0.5, 1, 5, 10} s).
    """
    if callable(kernel):
        if sigma is not None:
            raise ValueError("sigma is the width of kernel='rbf'; bind the parameters of a "
                             "callable kernel yourself")
        return kernel
    if kernel == "linear":
        if sigma is not None:
            raise ValueError("sigma is the width of kernel='rbf'; the linear kernel has none")
        return kernel_function("linear")
    if kernel == "rbf":
        if sigma is None:
            sigma = DEFAULT_SIGMA_FACTOR * rbf_scale(X)
            if not sigma > 0:
                raise ValueError("all points coincide: the default RBF width 0.1 s is 0; pass sigma")
        return kernel_function("rbf", gamma=1.0 / (2.0 * float(sigma) ** 2))
    raise ValueError(f"kernel must be one of {RLSC_KERNELS} or a callable K(A, B), got {kernel!r}")


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
