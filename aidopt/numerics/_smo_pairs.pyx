# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The pair-update loop of :func:`aidopt.numerics.smo.smo` (Cython, built at install: a process's first
solve does not pay numba's start-up, docs/design.md)."""

from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc

#: curvature floor of a pair (a flat direction is moved as if slightly curved)
TAU = 1e-12
cdef double _TAU = 1e-12


cdef inline double _clip_step(double d, double direction, double a, double ub) noexcept nogil:
    """The largest step ``<= d`` (d >= 0) with ``0 <= a + direction * d <= ub``."""
    if direction > 0:
        return ub - a if ub - a < d else d
    return a if a < d else d


cdef inline bint _up(double yt, double at, double ut) noexcept nogil:
    """alpha_t can move up along y_t (the set I_up)."""
    return (yt > 0 and at < ut) or (yt < 0 and at > 0)


cdef inline bint _low(double yt, double at, double ut) noexcept nogil:
    """alpha_t can move down along y_t (the set I_low)."""
    return (yt > 0 and at > 0) or (yt < 0 and at < ut)


def pairs(const double[:, ::1] Q, const double[:] y, const double[:] u, double[:] alpha,
          double[:] grad, Py_ssize_t steps, Py_ssize_t shrink_every, double target):
    """Up to ``steps`` pair updates in place; returns ``(updates done, last violation)``. The
    loop ends early when the maximal violation is at most ``target``.

    Shrinking: every ``shrink_every`` updates, a variable at a bound that can move only in the
    direction that does not violate optimality, and whose gradient lies beyond the current
    violating range, leaves the selection and the gradient updates (its gradient goes stale;
    the caller recomputes the full gradient after the call, and every variable is back at the
    next call)."""
    cdef Py_ssize_t K = y.shape[0], n_act = K, it, q, t, i, j, kept
    cdef Py_ssize_t done = steps
    cdef double violation = 0.0, gmax, gmin, best, v, b, a, d, old_i, old_j, di, dj
    cdef bint up, low
    if shrink_every < 1:
        raise ValueError(f"shrink_every must be at least 1, got {shrink_every}")
    cdef double *QD = <double *> malloc(max(K, 1) * sizeof(double))
    cdef Py_ssize_t *active = <Py_ssize_t *> malloc(max(K, 1) * sizeof(Py_ssize_t))
    if QD == NULL or active == NULL:
        free(QD)
        free(active)
        raise MemoryError()
    with nogil:
        for t in range(K):
            QD[t] = Q[t, t]
            active[t] = t
        for it in range(steps):
            # i: the largest -y_t grad_t over I_up
            gmax, i = -INFINITY, -1
            for q in range(n_act):
                t = active[q]
                if _up(y[t], alpha[t], u[t]):
                    v = -y[t] * grad[t]
                    if v > gmax:
                        gmax, i = v, t
            # j over I_low: the largest second-order decrease b^2 / a, b = gmax + y_t grad_t > 0
            gmin, j, best = INFINITY, -1, 0.0
            for q in range(n_act):
                t = active[q]
                if _low(y[t], alpha[t], u[t]):
                    v = -y[t] * grad[t]
                    if v < gmin:
                        gmin = v
                    b = gmax - v
                    if b > 0.0:
                        a = QD[i] + QD[t] - 2.0 * y[i] * y[t] * Q[i, t]
                        if a <= 0.0:
                            a = _TAU
                        if b * b / a > best:
                            best, j = b * b / a, t
            violation = gmax - gmin
            if i < 0 or j < 0 or violation <= 0.0:
                violation = 0.0 if 0.0 > violation else violation  # as max(violation, 0.0)
                done = it
                break
            if violation <= target:
                done = it
                break
            old_i, old_j = alpha[i], alpha[j]
            a = QD[i] + QD[j] - 2.0 * y[i] * y[j] * Q[i, j]
            if a <= 0.0:
                a = _TAU
            # move alpha_i by y_i * d and alpha_j by -y_j * d (keeps y'alpha), d from the
            # model, clipped so that both stay in their boxes
            d = (gmax + y[j] * grad[j]) / a
            d = _clip_step(d, y[i], alpha[i], u[i])
            d = _clip_step(d, -y[j], alpha[j], u[j])
            alpha[i] = min(max(old_i + y[i] * d, 0.0), u[i])
            alpha[j] = min(max(old_j - y[j] * d, 0.0), u[j])
            di, dj = alpha[i] - old_i, alpha[j] - old_j
            if di == 0.0 and dj == 0.0:
                done = it
                break
            for q in range(n_act):  # Q is symmetric: rows i and j, read contiguously
                t = active[q]
                grad[t] += Q[i, t] * di + Q[j, t] * dj
            if (it + 1) % shrink_every == 0:
                kept = 0
                for q in range(n_act):
                    t = active[q]
                    v = -y[t] * grad[t]
                    up, low = _up(y[t], alpha[t], u[t]), _low(y[t], alpha[t], u[t])
                    if (up and not low and v < gmin) or (low and not up and v > gmax):
                        continue  # stuck at its bound for now
                    active[kept] = t
                    kept += 1
                n_act = kept
    free(QD)
    free(active)
    return done, violation
