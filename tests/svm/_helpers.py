"""Seeded SVM instances and an independent evaluation of the SVM objective for tests/svm."""

from __future__ import annotations

import numpy as np
from aidopt.instances import svm_instance


def instance(kind: str, n: int, m: int, seed: int):
    """``(X, y)`` with y in {-1, +1} for the kinds the issue names.

    * ``separable``: classes 12 standard deviations apart (linearly separable in practice);
    * ``overlapping``: the default overlap of :func:`aidopt.instances.svm_instance`;
    * ``imbalanced``: one positive for every 50 negatives;
    * ``duplicated``: every row appears three times.
    """
    if kind == "separable":
        return svm_instance(n, m, seed, separation=6.0)
    if kind == "overlapping":
        return svm_instance(n, m, seed)
    if kind == "imbalanced":
        return svm_instance(n, m, seed, separation=2.0, positive_fraction=1 / 51)
    if kind == "duplicated":
        X, y = svm_instance(n // 3, m, seed)
        return np.vstack([X, X, X]), np.concatenate([y, y, y])
    raise ValueError(kind)


def regularizer(w, norm: str) -> float:
    w = np.asarray(w, dtype=float)
    return {
        "l2": 0.5 * float(w @ w),
        "l1": float(np.abs(w).sum()),
        "linf": float(np.abs(w).max(initial=0.0)),
        "none": 0.0,
    }[norm]


def svm_objective(X, y, w, b, C, norm="l2", s=None) -> float:
    """E(w, b) = R(w) + C sum_i s_i max(0, 1 - y_i (w x_i + b)), computed here from scratch."""
    y = np.asarray(y, dtype=float)
    s = np.ones(len(y)) if s is None else np.asarray(s, dtype=float)
    hinge = np.maximum(0.0, 1.0 - y * (np.asarray(X) @ np.asarray(w) + b))
    return regularizer(w, norm) + C * float(s @ hinge)


def svc_kernel_objective(clf, X, y, C, kernel, s=None) -> float:
    """Primal objective of a fitted SVC: 1/2 ||w||^2 in feature space + C sum s_i hinge_i,
    from its dual_coef_ (alpha_i y_i), support_vectors_ and intercept_."""
    s = np.ones(len(y)) if s is None else s
    coef, sv = clf.dual_coef_[0], clf.support_vectors_
    f = kernel(X, sv) @ coef + clf.intercept_[0]
    return 0.5 * float(coef @ kernel(sv, sv) @ coef) + C * float(s @ np.maximum(0.0, 1.0 - y * f))


def close(a: float, b: float, rel: float) -> bool:
    """|a - b| <= rel * max(1, |a|, |b|): the scale the certificates' relative gap uses."""
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))
