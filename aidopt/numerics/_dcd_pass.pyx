# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""One pass of coordinate steps of :func:`aidopt.numerics.dcd.dcd` on CSR rows (Cython, built at
install: a process's first solve does not pay numba's start-up, 0.5 s against LIBLINEAR's 0.1-0.3 s
for a whole fit of 2·10^4 documents; docs/design.md)."""

from libc.math cimport INFINITY

ctypedef fused index_t:
    int
    long long


def one_pass(const long long[::1] indptr, const index_t[::1] indices, const double[::1] data,
             const double[::1] y, const double[::1] u, const double[::1] sq, double[::1] alpha,
             double[::1] w, long long[::1] active, Py_ssize_t n_active, double lam, double rho,
             double sigma, bint shrink, double pg_hi, double pg_lo):
    """Coordinate steps over the rows ``active[:n_active]``, in that order, in place.

    Row ``i``: gradient ``G = y_i (x_i w + lam + rho sigma) - 1``, projected gradient ``PG``
    (``G`` when ``0 < alpha_i < u_i``; ``min(G, 0)`` at 0, ``max(G, 0)`` at ``u_i``), step
    ``alpha_i <- clip(alpha_i - G / (||x_i||^2 + rho), 0, u_i)``, then ``w += d y_i x_i`` and
    ``sigma += d y_i`` for the change ``d`` of ``alpha_i``. With ``shrink``, a row at 0 with
    ``G > pg_hi`` or at ``u_i`` with ``G < pg_lo`` is swapped behind ``active[:n_active]`` and
    not visited. Returns ``(n_active, max PG, min PG, sigma)``."""
    cdef Py_ssize_t k = 0, p
    cdef long long i
    cdef double hi = -INFINITY, lo = INFINITY, G, a, pg, new, d, f
    with nogil:
        while k < n_active:
            i = active[k]
            f = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                f = f + data[p] * w[indices[p]]
            G = y[i] * (f + lam + rho * sigma) - 1.0
            a = alpha[i]
            pg = G
            if a <= 0.0:
                if shrink and G > pg_hi:
                    n_active -= 1
                    active[k] = active[n_active]
                    active[n_active] = i
                    continue
                if G > 0.0:
                    pg = 0.0
            elif a >= u[i]:
                if shrink and G < pg_lo:
                    n_active -= 1
                    active[k] = active[n_active]
                    active[n_active] = i
                    continue
                if G < 0.0:
                    pg = 0.0
            if pg > hi:
                hi = pg
            if pg < lo:
                lo = pg
            if pg != 0.0:
                new = a - G / (sq[i] + rho)
                if new < 0.0:
                    new = 0.0
                elif new > u[i]:
                    new = u[i]
                d = (new - a) * y[i]
                if d != 0.0:
                    alpha[i] = new
                    sigma = sigma + d
                    for p in range(indptr[i], indptr[i + 1]):
                        w[indices[p]] += d * data[p]
            k += 1
    return n_active, hi, lo, sigma
