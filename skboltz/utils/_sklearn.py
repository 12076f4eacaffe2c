"""The one place where skboltz imports scikit-learn's private API.

scikit-learn keeps ``_fit_context``, the parameter-validation helpers and the imputers'
base class and mask helpers private; if their location changes, only this module needs
to follow.
"""

import functools
from numbers import Integral

import numpy as np
from sklearn.impute._base import _BaseImputer
from sklearn import get_config
from sklearn.base import _fit_context as _sklearn_fit_context
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
from sklearn.utils._set_output import _get_output_config
from sklearn.utils.validation import _check_feature_names_in, _check_sample_weight

# Array API dispatch (skboltz/utils/_array_api.py): the namespace and device of the inputs,
# the largest float dtype a device has, and the check that a fitted model and its
# inputs share a namespace (scikit-learn 1.9; older versions get skboltz's own).
from sklearn.utils._array_api import _convert_to_numpy, _max_precision_float_dtype
from sklearn.utils._array_api import get_namespace_and_device
from sklearn.externals.array_api_compat import array_namespace

try:
    from sklearn.utils._array_api import check_same_namespace
except ImportError:  # scikit-learn < 1.9
    check_same_namespace = None


class Interval(_Interval):
    """scikit-learn's ``Interval`` constraint, refusing booleans.

    ``True`` is an ``Integral`` (and a ``Real``) in Python, so scikit-learn's interval
    accepts ``n_components=True`` as 1; a boolean is never a meant count or size.
    """

    def is_satisfied_by(self, val):
        return not isinstance(val, bool | np.bool_) and super().is_satisfied_by(val)


def _fit_context(*, prefer_skip_nested_validation):
    """scikit-learn's ``_fit_context``, refusing array API inputs an estimator does
    not compute on.

    Under ``sklearn.config_context(array_api_dispatch=True)`` scikit-learn hands
    torch, CuPy or array-api-strict arrays through ``validate_data`` unconverted; an
    estimator without array API support would then fail deep inside numpy. Its
    ``fit`` and ``partial_fit`` raise a ``TypeError`` that says so instead (never a
    silent copy to the host). Estimators with a namespace-generic path (an
    ``_array_api_model``: :class:`~skboltz.RBM`) route such inputs themselves.
    """
    fit_context = _sklearn_fit_context(
        prefer_skip_nested_validation=prefer_skip_nested_validation)

    def decorator(fit_method):
        @functools.wraps(fit_method)
        def fit(estimator, *args, **kwargs):
            X = args[0] if args else kwargs.get("X")
            if type(X) is not np.ndarray and get_config()["array_api_dispatch"]:
                _refuse_array_api_input(estimator, X, fit_method.__name__)
            return fit_method(estimator, *args, **kwargs)

        return fit_context(fit)

    return decorator


def is_array_api_array(X):
    """Whether ``X`` is an array of an array API library (torch tensors included,
    which scikit-learn handles through its copy of array_api_compat)."""
    return hasattr(X, "__array_namespace__") or type(X).__module__.split(".")[0] == "torch"


def array_library(xp):
    """The library behind a namespace: "numpy", "torch", "cupy", "array_api_strict",
    ... (scikit-learn wraps some, e.g. ``sklearn.externals.array_api_compat.torch``)."""
    return xp.__name__.rpartition("array_api_compat.")[2].split(".")[0]


def _refuse_array_api_input(estimator, X, method):
    # estimators with a generic path, and meta-estimators that pass such rows on to
    # models that have one (which then refuse what they cannot serve)
    if (getattr(estimator, "_array_api_model", None) is not None
            or getattr(estimator, "_passes_array_api_inputs", False)):
        return
    if not is_array_api_array(X):
        return  # lists, sparse matrices, frames: converted as without dispatch
    library = array_library(get_namespace_and_device(X)[0])
    if library == "numpy":
        return
    raise TypeError(
        f"{type(estimator).__name__}.{method} does not support array API dispatch: it "
        f"computes on NumPy arrays only, and got {library} arrays with "
        "array_api_dispatch=True. Pass NumPy arrays (for torch, X.cpu().numpy()), or "
        "call it with dispatch off (scikit-learn then converts what np.asarray can); "
        "skboltz.RBM, GaussianRBM, CategoricalRBM and TabularRBM compute on such arrays, "
        "and DBN and LikelihoodOutlierDetector pass them on to such models "
        "(see the GPU / array API section of the user guide)."
    )


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
    "_get_output_config",
    "is_scalar_nan",
    "HasMethods",
    "Interval",
    "InvalidParameterError",
    "StrOptions",
    "_convert_to_numpy",
    "_check_sample_weight",
    "_fit_context",
    "_max_precision_float_dtype",
    "array_library",
    "check_same_namespace",
    "get_namespace_and_device",
    "is_array_api_array",
    "array_namespace",
    "check_count",
    "validate_params",
]
