"""Partition-function estimators: pluggable strategies returning a :class:`LogZ`.

Pass a string or one of these objects as ``z_estimator`` to any skboltz model, or call
``model.estimate_log_partition(z_estimator)``.

=================  ==================================  ==========================
strategy           what it gives                       trust (``LogZ.kind``)
=================  ==================================  ==========================
``Exact``          log Z by enumeration                exact (small models only)
``AIS``            annealed importance sampling        estimate: standard error,
                   from several base models            3-sigma interval; reverse
                                                       (RAISE) log-likelihood
                                                       brackets it
``MeanField``      naive mean field (``order=1``)      lower bound
``TAP``            second-order mean field             approximation, no bound
``VisitedStates``  sum over Gibbs-visited states       lower bound
=================  ==================================  ==========================

:func:`held_out_score` and :func:`paired_score_difference` give a held-out score's two
errors (log Z's and the test set's); :func:`log_likelihood_bounds` (the estimators'
``estimate_log_likelihood_bounds``) brackets the log-likelihood.
"""

from ._ais import AIS, beta_schedule, even_variance_schedule
from ._base import Z_ESTIMATORS, LogZ, ZEstimator
from ._bounds import LogLikelihoodBounds, log_likelihood_bounds
from ._exact import Exact, split_half_log_partition, split_half_log_weights
from ._held_out import (
    HeldOutScore,
    ScoreDifference,
    held_out_score,
    held_out_scoring,
    paired_score_difference,
)
from ._mean_field import TAP, MeanField, mean_field_fixed_point, mean_field_free_energy
from ._visited import VisitedStates

__all__ = [
    "AIS",
    "Exact",
    "HeldOutScore",
    "LogLikelihoodBounds",
    "LogZ",
    "MeanField",
    "ScoreDifference",
    "TAP",
    "VisitedStates",
    "ZEstimator",
    "Z_ESTIMATORS",
    "beta_schedule",
    "even_variance_schedule",
    "held_out_score",
    "held_out_scoring",
    "log_likelihood_bounds",
    "mean_field_fixed_point",
    "mean_field_free_energy",
    "paired_score_difference",
    "split_half_log_partition",
    "split_half_log_weights",
]
