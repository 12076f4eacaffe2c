"""Inference: what a fitted model says of rows, and the samples it draws.

:class:`InferenceMixin` gives the estimators ``transform`` (the hidden units' marginals),
``reconstruct``, ``free_energy``, ``gibbs`` and ``sample``, over the estimator's model
view (``_model_view``) and input hooks (``_validate_X``, ``_input_transform``): the
view's ``hidden_marginals``, ``reconstruct``, ``free_energy``,
``visible_gibbs_step`` and ``draw_samples``. A fixed input map (GaussianRBM's
whitening) is applied to every input and inverted on every visible output.
"""

import numpy as np
from sklearn.base import TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._degeneracy import kept_rows
from ..utils._runtime import make_generator
from ..utils._sklearn import check_count
from ._transactions import reads_one_publication
from ..utils._validation import as_dense


class InferenceMixin(TransformerMixin):
    """Inference and sampling of a fitted model (see the module docstring); a
    scikit-learn transformer, whose ``transform`` ``set_output`` wraps."""

    def _inference_view(self, dtype):
        """The fitted model's view in the dtype ``transform`` and ``reconstruct`` use
        for inputs of ``dtype``."""
        return self._model_view().astype(self._inference_dtype or dtype)

    def _visible_out(self, V):
        """Visible rows of the model in the units of the input (the input transform,
        if any, inverted)."""
        transform = self._input_transform()
        return V if transform is None else transform.inverse_transform(V)

    def _sampling_start(self):
        """Where ``sample``'s chains start their visible units: the data's rates."""
        return self._sampling_start_of(self._training_state)

    def _sampling_start_of(self, state):
        """Where ``sample``'s chains start for the model of ``state``."""
        return state.data_rates

    def _sample_starts_of(self, state, view, n_samples, rng):
        """Where ``sample``'s ``n_samples`` chains start their visible units: training
        rows (those the state keeps, binary units; in an order drawn from ``rng``), as
        probabilities of the first states; else :meth:`_sampling_start_of`.

        Chains from independent units at the data's rates can settle in a region
        far from the data that holds little of the probability: on RBM(500) models of
        real MNIST digits, 10,000 Gibbs steps from such starts had mean pixel 0.23
        (the data's: 0.13), while chains from training rows kept 0.13, and an
        annealing estimate of log Z from the training rows found tens of nats more
        probability near the data than near the chains from the rates.
        """
        rows = kept_rows(state, np.dtype(view.dtype))
        if rows is None or rows.shape[1] != view.n_visible:
            return self._sampling_start_of(state)
        return rows[np.resize(rng.permutation(rows.shape[0]), n_samples)]

    def _free_energy_of(self, view, rows):
        """F(v) of each row (dense or sparse) under ``view``, in float64."""
        return view.astype(np.float64).free_energy(rows.astype(np.float64))

    def _hidden_marginals_of(self, view, X):
        """P(h = 1 | v) of the validated rows ``X`` under ``view`` (``transform``)."""
        return view.hidden_marginals(X)

    def _check_complete(self, X, method):
        """Refuse rows with missing entries in a method that needs complete ones (a
        no-op where validation already refuses NaN)."""

    @reads_one_publication
    def transform(self, X):
        """Hidden-unit marginals P(h_j = 1 | v) of each row.

        Exact, except where the model's class says otherwise (a
        :class:`~skboltz.BoltzmannMachine` with many coupled hidden units gives their
        mean-field magnetisations). A row with missing entries (NaN; RBM, GaussianRBM,
        CategoricalRBM, TabularRBM) gives P(h_j = 1 | x_observed): exact where the hidden
        states or the row's completions are few enough to list, else the mean-field
        fixed point with the observed entries clamped.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Visible rows.

        Returns
        -------
        H : ndarray of shape (n_samples, n_hidden)
            P(h_j = 1 | v) for each row (``n_hidden`` is ``n_components`` for the
            RBMs), in the dtype of ``X``.
        """
        check_is_fitted(self, "_training_state")
        X = self._validate_X(X, reset=False)
        view = self._inference_view(X.dtype)
        return self._hidden_marginals_of(view, X).astype(X.dtype, copy=False)

    @reads_one_publication
    def reconstruct(self, X):
        """Mean-field reconstruction of each row.

        The expected visible values given the hidden units at their marginals
        P(h = 1 | v).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Visible rows.

        Returns
        -------
        X_reconstructed : ndarray of shape (n_samples, n_features)
            The reconstructed rows (probabilities for binary units, means for
            Gaussian ones), in the dtype of ``X``.
        """
        check_is_fitted(self, "_training_state")
        X = self._validate_X(X, reset=False)
        self._check_complete(X, "reconstruct")
        view = self._inference_view(X.dtype)
        return self._visible_out(view.reconstruct(X).astype(X.dtype, copy=False))

    @reads_one_publication
    def free_energy(self, X):
        """Free energy F(v) of each row (hidden units summed out), in float64.

        ``log p(v) = -F(v) - log Z``; comparing the mean free energy of training and
        held-out rows is Hinton's overfitting monitor.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Visible rows.

        Returns
        -------
        free_energy : ndarray of shape (n_samples,)
            F(v) of each row.
        """
        check_is_fitted(self, "_training_state")
        X = self._validate_X(X, reset=False)
        self._check_complete(X, "free_energy")
        return self._free_energy_of(self._model_view(), X)

    @reads_one_publication
    def gibbs(self, v, random_state=None):
        """One Gibbs step v -> h -> v from each row of ``v``.

        Parameters
        ----------
        v : array-like of shape (n_samples, n_features)
            Starting visible rows.
        random_state : int, RandomState, Generator or None, default=None
            None continues the model's own sampling stream (like ``BernoulliRBM``).

        Returns
        -------
        v_new : ndarray of shape (n_samples, n_features)
            Visible rows after one step, in the dtype of ``v``.
        """
        check_is_fitted(self, "_training_state")
        v = as_dense(self._validate_X(v, reset=False))
        self._check_complete(v, "gibbs")
        rng = self._gibbs_generator(random_state)
        view = self._model_view().astype(v.dtype)
        return self._visible_out(view.visible_gibbs_step(v, rng))

    def _gibbs_generator(self, random_state):
        """``random_state``'s generator, or the model's own sampling stream for None
        (made on first use from the fit's sampling seed: a fresh stream per fit)."""
        if random_state is not None:
            return make_generator(random_state)
        if self._sampling_rng is None:
            self._sampling_rng = np.random.default_rng(self._training_state.sampling_seed)
        return self._sampling_rng

    @reads_one_publication
    def sample(self, n_samples=1, random_state=None, n_steps=1000, return_means=False):
        """Draw visible samples by Gibbs sampling.

        Chains start at training rows (binary units: up to 256 evenly spaced rows
        of the data the model was first fitted on, each chain at one of them drawn
        at random, the row's values as the probabilities of its first state), or
        from independent units at the data's means (other units), and run
        ``n_steps`` Gibbs steps. Started far from the data, chains of a model of
        real images can stay for thousands of steps in a bright region that holds
        little of its probability.

        Parameters
        ----------
        n_samples : int, default=1
            Number of samples (independent chains).
        random_state : int, RandomState, Generator or None, default=None
            None uses the estimator's ``random_state`` (so an int seed gives the same
            samples on every call).
        n_steps : int, default=1000
            Gibbs steps per chain.
        return_means : bool, default=False
            Return the last step's conditional means of the visible units instead of
            the states drawn from them: P(v = 1 | h) for binary units, the grey images
            papers display as an RBM's samples (Hinton, "A Practical Guide to Training
            Restricted Boltzmann Machines", 2010, shows probabilities, not binary
            states), E[v | h] for Gaussian units, and for a
            :class:`~skboltz.BoltzmannMachine` each visible unit's P(v_i = 1 | the
            other units) in the chain's last state. With the same ``random_state`` the
            chains are the same: the states would be drawn from these means. They are
            smoother than states, and not themselves samples of the model.

        Returns
        -------
        samples : ndarray of shape (n_samples, n_features)
            Visible rows (their means with ``return_means=True``).

        Examples
        --------
        >>> from sklearn.datasets import load_digits
        >>> from skboltz import RBM
        >>> X = load_digits().data / 16
        >>> rbm = RBM(n_components=16, n_iter=5, random_state=0).fit(X)
        >>> states = rbm.sample(4, n_steps=100)
        >>> sorted(set(states.ravel().tolist()))  # binary states
        [0.0, 1.0]
        >>> means = rbm.sample(4, n_steps=100, return_means=True)  # P(v = 1 | h)
        >>> bool(((means > 0) & (means < 1)).any())
        True
        """
        check_is_fitted(self, "_training_state")
        n_samples = check_count(n_samples, "n_samples", 1)
        n_steps = check_count(n_steps, "n_steps", 0)
        if not isinstance(return_means, (bool, np.bool_)):
            raise TypeError(f"return_means must be True or False, got {return_means!r}.")
        rng = make_generator(self.random_state if random_state is None else random_state)
        view = self._model_view()
        # The option is only passed when asked for: a user's view may lack it.
        means = {"means": True} if return_means else {}
        starts = self._sample_starts_of(self._training_state, view, n_samples, rng)
        return self._visible_out(view.draw_samples(n_samples, n_steps, starts, rng, **means))


__all__ = ["InferenceMixin"]
