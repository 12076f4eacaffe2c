"""Partition-function estimators: pluggable strategies returning a :class:`LogZ`.

Pass a string or one of these objects as ``z_estimator`` to any skboltz model, or call
``model.estimate_log_partition(z_estimator)``.

=================  ==================================  ==========================
strategy           what it gives                       trust
=================  ==================================  ==========================
``Exact``          log Z by enumeration                exact (small models only)
``AIS``            annealed importance sampling        standard error, 3-sigma
                                                       interval; reverse (RAISE)
                                                       log-likelihood brackets it
``MeanField``      naive mean field (``order=1``)      lower bound
``TAP``            second-order mean field             approximation, no bound
``VisitedStates``  sum over Gibbs-visited states       lower bound
=================  ==================================  ==========================
"""

from ._ais import AIS, beta_schedule
from ._base import Z_ESTIMATORS, LogZ, ZEstimator
from ._exact import Exact, split_half_log_partition, split_half_log_weights
from ._mean_field import TAP, MeanField, mean_field_fixed_point, mean_field_free_energy
from ._visited import VisitedStates

__all__ = [
    "AIS",
    "Exact",
    "LogZ",
    "MeanField",
    "TAP",
    "VisitedStates",
    "ZEstimator",
    "Z_ESTIMATORS",
    "beta_schedule",
    "mean_field_fixed_point",
    "mean_field_free_energy",
    "split_half_log_partition",
    "split_half_log_weights",
]
