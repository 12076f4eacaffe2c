"""The RBM on any array namespace (array API dispatch; see :mod:`skboltz.utils._array_api`).

:class:`~skboltz.RBM`'s part of the generic restricted path
(:mod:`skboltz.estimators._array_api_restricted`): binary visible units, its rows validated in
their namespace and clipped into [0, 1] as the NumPy path clips them.
"""

import numpy as np

from ..utils._array_api import dispatched_namespace, validated_rows
from ._array_api_restricted import VISIBLE_BIAS, RestrictedArrayAPI
from ..units._layers import BinaryUnits
from ..utils._runtime import warn_user
from ..exceptions import DataRangeWarning


def clipped_into_unit_interval(xp, X):
    """``X`` with values outside [0, 1] clipped there, with the NumPy path's warning."""
    outside = xp.logical_or(X < 0, X > 1)
    n_rows = int(xp.sum(xp.astype(xp.any(outside, axis=1), xp.int64)))
    if n_rows:
        warn_user(
            f"{n_rows} of {X.shape[0]} rows have values outside [0, 1], the range of "
            "binary units: they are used at their values clipped into [0, 1] (by fit, "
            "partial_fit, transform and the scores alike). Scale the features first, "
            "e.g. with sklearn.preprocessing.MinMaxScaler() in a Pipeline, or "
            "binarize them.",
            DataRangeWarning,
        )
        X = xp.clip(X, 0.0, 1.0)
    return X


class RBMArrayAPI(RestrictedArrayAPI):
    """The namespace-generic methods of :class:`~skboltz.RBM`."""

    @classmethod
    def resolved_settings(cls, estimator, state):
        return {"weight_decay_": estimator._weight_decay_of(state)}

    @classmethod
    def visible_rows(cls, estimator, X, *, reset, state=None):
        xp, _ = dispatched_namespace(X)
        return clipped_into_unit_interval(xp, validated_rows(estimator, X, reset=reset))

    @classmethod
    def starting_visible_bias(cls, estimator, visible_rates):
        if estimator.visible_bias_init == "data_rates":
            return super().starting_visible_bias(estimator, visible_rates)
        return np.zeros_like(visible_rates)

    @classmethod
    def visible_layer(cls, estimator, params, state=None):
        return BinaryUnits(params[VISIBLE_BIAS])


__all__ = ["RBMArrayAPI", "clipped_into_unit_interval"]
