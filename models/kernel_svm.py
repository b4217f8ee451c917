r"""The aggregated kernel SVM dual (Park & Klabjan 2016, Appendix B, eq. 21) as a Pyomo QP.

With clusters :math:`C_k` (weights :math:`c_k`), labels :math:`y_k` and the mean kernel
:math:`\bar K_{kq} = \sum_{i \in C_k} \sum_{j \in C_q} s_i s_j K(x_i, x_j) / (c_k c_q)`::

    max   sum_k alpha[k] - 1/2 sum_{k,q} alpha[k] alpha[q] y[k] y[q] Kbar[k,q]
    s.t.  sum_k y[k] alpha[k] = 0,   0 <= alpha[k] <= M c[k]

A dense |K| x |K| Hessian is slow to build in Pyomo (one expression node per entry), so the model
is written with a factor :math:`\bar K = L L^\top` (eigen-decomposition, eigenvalues below
``rank_tol`` times the largest dropped): :math:`v = L^\top D \alpha` are auxiliary variables and
the objective is :math:`\sum_k \alpha_k - \tfrac12 \|v\|^2`. That is exactly the 2-norm SVM dual
of :mod:`aidopt.models.svm` on the rows of L, so this module builds that model. Dropping tiny
eigenvalues can only change the aggregated problem by a relative ``rank_tol``; the certificate is
computed with exact kernel values on the full data, so it stays rigorous.
"""

from __future__ import annotations

import numpy as np

from . import svm

__all__ = ["factor", "create_instance"]


def __getattr__(name: str):
    """The kernel evaluators' old names here (``kernel_function``, ``KERNELS``): they live in
    :mod:`aidopt.numerics.kernels` (``svc_kernel``, ``SVC_KERNELS``); ``aidopt.models.*`` import
    paths keep working."""
    from aidopt.numerics import kernels

    old = {"kernel_function": kernels.svc_kernel, "KERNELS": kernels.SVC_KERNELS}
    if name in old:
        return old[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")




def factor(Kbar, rank_tol: float = 1e-12) -> np.ndarray:
    """``L`` with ``L L' = Kbar`` up to eigenvalues below ``rank_tol * max eigenvalue``."""
    Kbar = 0.5 * (Kbar + Kbar.T)
    lam, U = np.linalg.eigh(Kbar)
    top = max(float(lam[-1]), 0.0)
    keep = lam > rank_tol * max(top, 1e-300)
    return U[:, keep] * np.sqrt(lam[keep])


def create_instance(Kbar, y, c=None, M: float = 1.0, rank_tol: float = 1e-12):
    """The aggregated kernel dual (21) as the 2-norm dual QP on the factor rows of ``Kbar``."""
    L = factor(np.asarray(Kbar, dtype=float), rank_tol)
    if L.shape[1] == 0:
        L = np.zeros((L.shape[0], 1))
    return svm.create_instance(L, y, c, M, form="dual")
