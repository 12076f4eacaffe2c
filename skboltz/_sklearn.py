"""The one place where skboltz imports scikit-learn's private API.

scikit-learn keeps ``_fit_context``, the parameter-validation helpers and the imputers'
base class and mask helpers private; if their location changes, only this module needs
to follow.
"""

from numbers import Integral

import numpy as np
from sklearn.base import _fit_context
from sklearn.impute._base import _BaseImputer
from sklearn.utils import check_scalar
from sklearn.utils._mask import _get_mask
from sklearn.utils._missing import is_scalar_nan
from sklearn.utils._param_validation import (
    HasMethods,
    InvalidParameterError,
    StrOptions,
    validate_params,
)
from sklearn.utils._param_validation import Interval as _Interval
from sklearn.utils.validation import _check_feature_names_in, _check_sample_weight


class Interval(_Interval):
    """scikit-learn's ``Interval`` constraint, refusing booleans.

    ``True`` is an ``Integral`` (and a ``Real``) in Python, so scikit-learn's interval
    accepts ``n_components=True`` as 1; a boolean is never a meant count or size.
    """

    def is_satisfied_by(self, val):
        return not isinstance(val, bool | np.bool_) and super().is_satisfied_by(val)


def check_count(value, name, min_value):
    """Check a count argument of a method (not a constructor parameter): an int >= min.

    Raises a ``TypeError`` (not an integer, or a boolean) or ``ValueError`` (too small)
    that names the argument, instead of an error from deep inside numpy.
    """
    if isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be an int, not a boolean ({value!r}).")
    check_scalar(value, name, Integral, min_val=min_value)
    return int(value)

__all__ = [
    "_BaseImputer",
    "_check_feature_names_in",
    "_get_mask",
    "is_scalar_nan",
    "HasMethods",
    "Interval",
    "InvalidParameterError",
    "StrOptions",
    "_check_sample_weight",
    "_fit_context",
    "check_count",
    "validate_params",
]
