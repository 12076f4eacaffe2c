"""Interface of learning strategies (how the negative-phase statistics are estimated)."""

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator

from .._energy import Noise

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
    estimator and handed back on every call, together with the estimator's random
    stream.

    The training loop calls three methods per minibatch, so that the estimator can
    compute the positive and negative statistics in one matrix product over stacked
    rows: :meth:`n_negative` (how many negative rows), :meth:`sample_negative` (write
    them) and :meth:`observe` (the hidden conditionals of those rows, which persistent
    chains reuse to draw their next hidden state without another product).
    :meth:`negative_phase` is the same computation for one minibatch on its own,
    returning the mean statistics; it is the reference the fast loop must agree with.

    Strategies that give the negative statistics directly rather than as sampled rows
    (exact enumeration, TAP) override :meth:`negative_phase` only; the estimator then
    uses it, one minibatch at a time (see :attr:`samples_rows`).

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

    @property
    def samples_rows(self):
        """Whether the strategy samples negative rows (the fast, stacked training loop).

        False for strategies that only override :meth:`negative_phase`.
        """
        return type(self).sample_negative is not LearningStrategy.sample_negative

    def n_negative(self, state, n_positive):
        """Number of negative-phase rows for a minibatch of ``n_positive`` rows.

        Parameters
        ----------
        state : object
            What :meth:`init_state` returned.
        n_positive : int
            Rows in the minibatch.

        Returns
        -------
        n_negative : int
            Rows :meth:`sample_negative` will write.
        """
        raise NotImplementedError

    def sample_negative(self, model, positive, state, noise, progress, out):
        """Write the negative-phase visible states into ``out``.

        Parameters
        ----------
        model : training-time model (e.g. ``AugmentedRBM``)
            The model with its current parameters.
        positive : ndarray
            The minibatch's augmented visible rows (the clamped data).
        state : object
            What :meth:`init_state` returned, updated in place.
        noise : skboltz._energy.Noise
            The estimator's random stream (``noise.rng`` is its generator).
        progress : float
            Fraction of the requested training done, in [0, 1], for schedules.
        out : ndarray of shape (n_negative, n_visible + 1)
            Augmented rows to fill with binary visible states (constant unit 1). The
            negative statistics are the mean over these rows of P(h | v) v^T, which
            the caller computes. A strategy may keep a reference to ``out`` (it stays
            valid until the caller's next call).
        """
        raise NotImplementedError

    def observe(self, state, hidden_tanh, noise):
        """Receive tanh(x / 2) = 2 P(h = 1 | v) - 1 of the rows just written to ``out``.

        ``x`` is ``model.hidden_input`` (shape (n_negative, n_hidden + 1)) under the
        parameters of the coming update, before it. Persistent chains draw their next
        hidden state from it (``hidden_tanh > noise.signed_uniform(...)``) without
        another product.

        Parameters
        ----------
        state : object
            What :meth:`init_state` returned, updated in place.
        hidden_tanh : ndarray of shape (n_negative, n_hidden + 1)
            The values tanh(x / 2) of the hidden inputs of the rows just written.
        noise : skboltz._energy.Noise
            The estimator's random stream.
        """

    def negative_phase(self, model, positive, state, rng, progress):
        """Negative-phase statistics for one minibatch (the reference computation).

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
        noise = Noise(rng, model.params.dtype, block_size=0)
        out = model.empty_visible(self.n_negative(state, positive.shape[0]))
        self.sample_negative(model, positive, state, noise, progress, out)
        x = model.hidden_input(out)
        x *= 0.5
        np.tanh(x, out=x)
        self.observe(state, x, noise)
        x += 1  # (tanh(x/2) + 1) / 2 = sigmoid(x)
        x *= 0.5
        return model.statistics(x, out) / out.shape[0]


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
    if type(n_steps) is int:  # the common case, called once per minibatch: keep it cheap
        return n_steps
    start, stop = validate_steps(n_steps)
    return int(round(start + (stop - start) * float(np.clip(progress, 0.0, 1.0))))
