"""What the two restricted Boltzmann machines, RBM and GaussianRBM, share.

Both have ``n_components`` binary hidden units in one layer, coupled to the visible
units only, and train by the restricted learning rule: the data's statistics in closed
form, the model's from a learning strategy, in a packed parameter array whose blocks
the model's layout names (``_rbm_energy.RBMLayout``, ``_gaussian_rbm_energy.
GaussianRBMLayout``). Both average their iterates (``average_window``). The two
estimators are siblings on this base; each keeps its own parameters, layout, training
form and checks.
"""

from typing import NamedTuple

import numpy as np

from ._base import BoltzmannBase
from ._noise import Noise
from ._rbm_energy import AugmentedRBM
from ._training import IterateAverage


class RestrictedEpoch(NamedTuple):
    """What a restricted estimator's updates work with in one epoch (the ``model`` of
    its gradient hook)."""

    #: The training form of the parameters the updates move.
    form: object
    #: The learning strategy's fused sampler bound to ``form`` (a
    #: :class:`~skboltz.learning._base.FusedSampler`), or None: the strategy's
    #: ``_negative_statistics`` (rows of its ``negative_phase``, or a closed form).
    sampler: object


class RestrictedBoltzmannBase(BoltzmannBase):
    """Base of :class:`~skboltz.RBM` and :class:`~skboltz.GaussianRBM`.

    On top of :class:`~skboltz._base.BoltzmannBase`'s hooks a subclass declares
    ``_training_form`` (the class holding the packed parameters the learning
    strategies' fused samplers work on, e.g. ``AugmentedRBM``; override
    :meth:`_training_form_of` when it takes more than the parameters) and ``_layout``
    (the blocks ``weights``, ``hidden_bias``, ``visible_bias`` and ``constant``), and
    keeps its training state in an :class:`~skboltz._training.AveragedTrainingState`
    made by :meth:`_fresh_state`. Each epoch's ``model`` (:class:`RestrictedEpoch`) is
    the training form of the parameters the updates move and the strategy's fused
    sampler bound to it.
    """

    #: The training form of the packed parameters (see the class docstring).
    _training_form = AugmentedRBM

    # -- training --------------------------------------------------------------------
    def _average_window(self):
        return self.average_window

    def _training_product_size(self, X):
        return self._effective_batch_size(X) * X.shape[1] * self.n_components

    def _training_bytes(self, X):
        # ~6 parameter-sized arrays (parameters, iterate, velocity, gradient, scratch,
        # published copy) and a few minibatch-sized ones.
        rows = 2 * self._effective_batch_size(X)
        n_visible, n_hidden = X.shape[1] + 1, self.n_components + 2
        return np.dtype(X.dtype).itemsize * (6 * n_hidden * n_visible
                                             + 4 * rows * (n_visible + n_hidden))

    def _units_per_chain(self, X):
        return X.shape[1] + self.n_components

    def _size_description(self, X):
        return (
            f"An RBM with {self.n_components} hidden units on {X.shape[1]} features",
            "Use fewer hidden units (n_components) or a smaller batch_size.",
        )

    def _fresh_state(self, state_class, model, X, learning, rng, **fields):
        """A new training state of ``state_class`` around ``model.params`` (the
        iterate, average, velocity, strategy state and noise both RBMs start with)."""
        params = model.params
        averaging = self.average_window is not None
        return state_class(
            params=params,
            iterate=params.copy() if averaging else params,
            average=IterateAverage() if averaging else None,
            velocity=np.zeros_like(params),
            sampler=learning.init_state(model.view(), X, self._effective_batch_size(X), rng),
            rng=rng,
            noise=Noise.seeded_from(rng),
            **fields,
        )

    @staticmethod
    def _match_dtype(state, learning):
        """Cast the training state to the parameters' dtype (partial_fit may switch it)."""
        dtype = state.params.dtype
        if state.velocity.dtype != dtype:
            state.velocity = state.velocity.astype(dtype)
            state.scratch = None
            state.sampler = learning.cast_state(state.sampler, dtype)

    def _begin_epoch(self, state, learning):
        self._match_dtype(state, learning)
        # The constant units' coupling is not learnt: its gradient is zero up to
        # rounding (both units are always on), and it starts each epoch afresh.
        state.params[self._layout.constant] = self._training_form.ALWAYS_ON
        state.velocity[self._layout.constant] = 0
        return state.resume(self.average_window is not None)

    def _training_model(self, X, params, state, learning):
        form = self._training_form_of(params, state)
        sampler = learning._fused_sampler(form, state.sampler, state.noise,
                                          self._progress(state))
        return RestrictedEpoch(form, sampler)

    def _training_form_of(self, params, state):
        """The training form of ``params`` (the class's ``_training_form``)."""
        return self._training_form(params)

    def _train_minibatches(self, X, y, state, learning, model, rule, update):
        super()._train_minibatches(X, y, state, learning, model, rule, update)
        if model.sampler is not None:
            model.sampler.release()

    def _minibatch_gradient(self, model, batch, labels, state, learning, rule,
                            weights=None):
        # The data's statistics in closed form (each row counting by its weight in a
        # weighted fit), minus the strategy's estimate of the model's, in the packed
        # layout (one matrix product gives every block).
        form, sampler = model
        batch = form.augment(batch)
        positive = form.statistics(form.hidden_probability(batch), batch, weights=weights)
        positive /= batch.shape[0]
        if sampler is not None:  # the strategy's samplers draw buffered noise
            negative = sampler.negative_statistics(batch, weights)
        else:
            negative = learning._negative_statistics(
                form, batch, state.sampler, state.rng, rule.progress
            )
        positive -= negative
        positive *= rule.step
        return positive

    # -- fitted attributes -----------------------------------------------------------
    def _fitted_attributes(self, state):
        state.prepare_publication()
        params, layout = state.params, self._layout
        return {
            "components_": params[layout.weights].copy(),
            "intercept_hidden_": params[layout.hidden_bias].copy(),
            "intercept_visible_": params[layout.visible_bias].copy(),
        }

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    # -- the down pass of a deep belief net ------------------------------------------
    def _visible_given_hidden(self, H, rng, sample=True):
        """A draw from p(v | h) for each row of ``H`` (or its mean when not ``sample``),
        in the units of the input."""
        view = self._model_view().astype(H.dtype)
        V = view.sample_visible(H, rng) if sample else view.visible_mean(H)
        return self._visible_out(V)


__all__ = ["RestrictedBoltzmannBase", "RestrictedEpoch"]
