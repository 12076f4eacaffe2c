"""Interface of learning strategies (how the negative-phase statistics are estimated)."""

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator

#: model kind ("rbm", "bm") -> {string name -> strategy class}. Filled on import.
LEARNING_STRATEGIES = {"rbm": {}, "bm": {}}


def register(name, *kinds):
    """Class decorator adding a strategy to the string registry of each model kind."""

    def decorator(cls):
        cls.name = name
        for kind in kinds:
            LEARNING_STRATEGIES[kind][name] = cls
        return cls

    return decorator


class LearningStrategy(BaseEstimator):
    """Base class of learning strategies.

    A strategy holds settings only. The training state it needs between minibatches
    (persistent chains, temperatures, ...) is created by :meth:`init_state`, owned by the
    estimator and handed back on every call, together with the estimator's generator.

    Examples
    --------
    >>> from skboltz import RBM
    >>> from skboltz.learning import PCD, LearningStrategy
    >>> isinstance(PCD(), LearningStrategy)
    True
    >>> RBM(learning=PCD(n_steps=5)).get_params()["learning__n_steps"]
    5
    """

    name = ""

    def init_state(self, model, data, batch_size, rng):
        """Create the sampler state for ``model`` (None when there is none).

        Parameters
        ----------
        model : training-time model (e.g. ``AugmentedRBM``)
            The model at the start of training.
        data : {ndarray, sparse matrix}
            The training data, e.g. to start persistent chains at data rows.
        batch_size : int
            The estimator's minibatch size.
        rng : numpy.random.Generator
            The estimator's source of randomness.

        Returns
        -------
        state : object
            Whatever :meth:`negative_phase` needs between minibatches, or None.
        """
        return None

    def negative_phase(self, model, positive, state, rng, progress):
        """Negative-phase statistics for one minibatch.

        Parameters
        ----------
        model : training-time model (e.g. ``AugmentedRBM``)
            The model with its current parameters.
        positive : ndarray
            The minibatch's augmented visible rows (the clamped data).
        state : object
            What :meth:`init_state` returned, updated in place.
        rng : numpy.random.Generator
            The estimator's source of randomness.
        progress : float
            Fraction of the requested training done, in [0, 1], for schedules.

        Returns
        -------
        statistics : ndarray
            Mean of the sufficient statistics under the model's estimate, the same
            shape as ``model.statistics(...)`` divided by its number of rows.
        """
        raise NotImplementedError


def validate_steps(n_steps):
    """Check an ``n_steps`` setting: a positive int or a (start, stop) pair."""
    pair = n_steps if isinstance(n_steps, tuple | list) else (n_steps, n_steps)
    if len(pair) != 2 or not all(
        isinstance(k, Integral) and not isinstance(k, bool) and k >= 1 for k in pair
    ):
        raise ValueError(
            "n_steps must be a positive int or a (start, stop) pair of positive ints, "
            f"got {n_steps!r}."
        )
    return pair


def steps_at(n_steps, progress):
    """The number of Gibbs steps at ``progress`` in [0, 1] of training.

    ``n_steps=(start, stop)`` grows k linearly from ``start`` at the first epoch to
    ``stop`` at the last one (CD-k with k growing, as the seed suggests).
    """
    start, stop = validate_steps(n_steps)
    return int(round(start + (stop - start) * float(np.clip(progress, 0.0, 1.0))))
