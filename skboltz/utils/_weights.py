"""Sample weights: what a row's weight means, in one place.

A row of weight 2 counts as the row twice, a row of weight 0 as no row. Every fit
reads its weights through :func:`training_weights`, which drops the rows of weight 0
(so a zero weight is exactly the row's absence, whatever the fit draws) and makes
the others relative, of mean 1 over the call's training rows; equal weights become
None, the unweighted fit itself. The weights then act where the data enter a fit:

- the data's statistics of each update: a minibatch's rows count by their weights in
  the mean (``mean_i w_i s(x_i)``, not divided by the minibatch's own weights, so
  every update's gradient has the expectation of the full weighted data's, as with
  the rows repeated). The restricted models weight them in their training form's
  ``statistics`` (every strategy, the plain and the fused loop), the Boltzmann
  machines and DBMs in their positive phase. Negative rows that a strategy starts
  at the data (CD) count by their rows' weights too;
- the starting values learnt from the data (column means, a Gaussian layer's means and
  standardisation, the whitening);
- the monitored scores and early stopping (weighted means over the rows);
- ``score``: the weighted mean of ``score_samples``.

A ``fit`` with integer weights is then the fit on the repeated rows: exactly for a
deterministic fit over one full minibatch (exact or closed-form statistics), and in
expectation for a stochastic one (minibatches, sampled negative phases), whose epochs
pass over the given rows, not over the repeated ones.
"""

import inspect

import numpy as np

from ._sklearn import _check_sample_weight

#: The ``sample_weight`` entry of every ``fit`` and ``partial_fit`` docstring.
FIT_SAMPLE_WEIGHT_DOC = """sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows: a row of weight 2 counts as the row
            twice, a row of weight 0 as no row. They weight the data's statistics of
            every update, the starting values learnt from the data and the monitored
            scores. A deterministic fit
            over one full minibatch with integer weights is the fit on the repeated
            rows; a stochastic one equals it in expectation (see the user guide,
            "Sample weights"). None weighs every row alike."""

#: The ``sample_weight`` entry of every ``score`` docstring.
SCORE_SAMPLE_WEIGHT_DOC = """sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows: the score is their weighted mean. None
            weighs every row alike."""


def training_weights(sample_weight, X, *others):
    """The rows of a fit with their relative weights.

    Returns ``(X, *others, weights)``: the rows of positive weight (``X`` and each of
    ``others`` that is not None, indexed alike) and their weights divided by their
    mean, float64; ``weights`` is None when ``sample_weight`` is None or all positive
    weights are equal (then the fit is the unweighted one, bit for bit). Raises
    scikit-learn's errors for a wrong shape, negative weights or all weights zero.
    """
    if sample_weight is None:
        return (X, *others, None)
    weights = _check_sample_weight(sample_weight, X, dtype=np.float64,
                                   ensure_non_negative=True)
    present = weights > 0
    if not present.all():
        kept = np.flatnonzero(present)
        X = X[kept]
        others = tuple(None if other is None else np.asarray(other)[kept]
                       for other in others)
        weights = weights[kept]
    return (X, *others, relative_weights(weights))


def scaled_to_largest(weights):
    """Non-negative ``weights`` (NumPy, float64) divided by the largest: the same
    relative weights, none above 1, so that their sum cannot overflow (weights of
    1e307 summed to inf) whatever constant they were multiplied by. Every weighted
    mean and the training weights go through here."""
    largest = weights.max()
    if not largest > 0:  # all zero: let the caller's check say so
        return weights
    return weights / largest


def relative_weights(weights):
    """``weights`` divided by their mean (None stays None, and equal weights become
    None: the unweighted computation); the same for any positive multiple of
    ``weights``."""
    if weights is None or (weights == weights[0]).all():
        return None
    weights = scaled_to_largest(weights)
    return weights / weights.mean()


def weighted_mean(values, weights):
    """The mean of ``values`` (a 1-d array), weighted by ``weights`` (None: the plain
    mean), as a float; the same for any positive multiple of ``weights``."""
    if weights is None:
        return float(np.mean(values))
    return float(np.average(values, weights=scaled_to_largest(
        np.asarray(weights, dtype=np.float64))))


def weighted_phase(phase, owner, *args, weights, required=True):
    """``phase(*args, weights=weights)``: a learning strategy's phase (or an
    estimator's hook) in a weighted fit, whose statistics count the rows by their
    ``weights`` (None: ``phase(*args)``). A phase that takes no ``weights`` is called
    without them when not ``required`` (a negative phase whose runs do not start at
    the rows, a user's reconstruction error), else refused with an error that says
    why."""
    if weights is None:
        return phase(*args)
    if "weights" in inspect.signature(phase).parameters:
        return phase(*args, weights=weights)
    if not required:
        return phase(*args)
    raise TypeError(
        f"{type(owner).__name__}.{phase.__name__} takes no weights, so a fit with "
        "sample_weight cannot count the rows by them: give it a keyword argument "
        "weights=None (the rows' relative weights, by which the statistics count each "
        "row), or fit without sample_weight."
    )


def mean_square(residuals, weights):
    """The mean of the squared ``residuals`` (rows by columns), float64, each row's
    mean weighted by ``weights`` (a weighted fit's reconstruction error)."""
    squares = np.square(np.asarray(residuals, dtype=np.float64))
    return weighted_mean(squares.mean(axis=1), weights)


def weighted_percentile(values, q, weights=None):
    """The ``q``-th percentiles (0-100) of ``values`` with rows counted by ``weights``
    (None: ``np.percentile``). Linear interpolation between order statistics as
    ``np.percentile``'s default, over N = sum(weights) rows in which a value of
    weight w occupies w consecutive places: with integer weights, exactly the
    percentile of the repeated values."""
    if weights is None:
        return np.percentile(values, q)
    order = np.argsort(values, kind="stable")
    values, ends = np.asarray(values)[order], np.cumsum(np.asarray(weights)[order])
    position = (ends[-1] - 1.0) * np.asarray(q, dtype=np.float64) / 100.0
    low = np.floor(position)

    def at(place):  # the value at a 0-based place of the N weighted rows
        return values[np.minimum(np.searchsorted(ends, place, side="right"),
                                 len(values) - 1)]

    below = at(low)
    return below + (position - low) * (at(low + 1.0) - below)


def score_weights(sample_weight, X):
    """Validated weights of the rows a ``score`` averages (None: the plain mean)."""
    if sample_weight is None:
        return None
    return _check_sample_weight(sample_weight, X, dtype=np.float64,
                                ensure_non_negative=True)


__all__ = [
    "FIT_SAMPLE_WEIGHT_DOC",
    "SCORE_SAMPLE_WEIGHT_DOC",
    "mean_square",
    "relative_weights",
    "scaled_to_largest",
    "score_weights",
    "training_weights",
    "weighted_mean",
    "weighted_percentile",
    "weighted_phase",
]
