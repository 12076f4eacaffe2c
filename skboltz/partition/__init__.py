"""Partition-function estimators: pluggable strategies returning a :class:`LogZ`.

Pass a string or one of these objects as ``z_estimator`` to any skboltz model, or call
``model.estimate_log_partition(z_estimator)``.
"""

from ._base import Z_ESTIMATORS, LogZ, ZEstimator
from ._exact import Exact

__all__ = ["Exact", "LogZ", "ZEstimator", "Z_ESTIMATORS"]
