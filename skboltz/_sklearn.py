"""The one place where skboltz imports scikit-learn's private API.

scikit-learn keeps ``_fit_context`` and the parameter-validation helpers private; if
their location changes, only this module needs to follow.
"""

from sklearn.base import _fit_context
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    StrOptions,
    validate_params,
)

__all__ = ["HasMethods", "Interval", "StrOptions", "_fit_context", "validate_params"]
