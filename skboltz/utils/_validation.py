"""The rows an estimator takes: validation helpers shared by the estimators.

Binary visible units have no probability outside [0, 1]:
:func:`clipped_into_unit_interval` clips such values (with a warning) so that a model is
trained and scored on the same rows; :func:`as_dense` makes rows dense.
"""

import numpy as np
import scipy.sparse as sp

from ._runtime import warn_user
from ..exceptions import DataRangeWarning

#: The float dtypes estimators keep their input in.
FLOAT_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def clipped_into_unit_interval(X):
    """``X`` with its values clipped into [0, 1], warning when any lies outside.

    Binary units have no probability outside [0, 1]: every method that takes visible
    rows (``fit``, ``partial_fit``, ``transform``, ``score_samples``, ...) takes them at
    their clipped values, so that a model is trained and scored on the same rows. A
    copy when anything is clipped; ``X`` itself otherwise.
    """
    outside = rows_outside_unit_interval(X)
    if not outside.any():
        return X
    warn_user(
        f"{int(outside.sum())} of {X.shape[0]} rows have values outside [0, 1], the "
        "range of binary units: they are used at their values clipped into [0, 1] (by "
        "fit, partial_fit, transform and the scores alike). Scale the features first, "
        "e.g. with sklearn.preprocessing.MinMaxScaler() in a Pipeline, or binarize them.",
        DataRangeWarning,
    )
    X = X.copy()
    np.clip(X.data if sp.issparse(X) else X, 0, 1, out=X.data if sp.issparse(X) else X)
    return X


def rows_outside_unit_interval(X):
    """Mask of the rows of ``X`` (dense or sparse) with a value outside [0, 1]."""
    if sp.issparse(X):
        X = X.tocsr()
        outside_value = (X.data < 0) | (X.data > 1)
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[outside_value]
        mask = np.zeros(X.shape[0], dtype=bool)
        mask[rows] = True
        return mask
    return np.any((X < 0) | (X > 1), axis=1)


def as_dense(X):
    """Dense ndarray from a dense or sparse matrix."""
    return X.toarray() if sp.issparse(X) else X
