"""Shared plumbing of skboltz estimators.

Training is all-or-nothing: ``fit`` and ``partial_fit`` work on a private copy of the
training state and publish it only when every epoch finished with finite parameters,
so an exception (divergence, interrupt, bad input) never leaves a half-updated model.
"""

import copy
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .exceptions import DataRangeWarning, TrainingDivergedError
from .learning._base import LEARNING_STRATEGIES, LearningStrategy
from .partition._base import Z_ESTIMATORS, ZEstimator, as_generator

#: "auto" picks exact enumeration up to this many states, else AIS.
AUTO_EXACT_MAX_STATES = 2**20


def make_generator(random_state):
    """A numpy Generator drawn from an sklearn-style ``random_state``.

    An int gives the same generator every time; None or a RandomState gives a fresh
    stream (consuming from the RandomState).
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    seed = check_random_state(random_state).randint(0, np.iinfo(np.int32).max)
    return np.random.default_rng(seed)


def warn_if_outside_unit_interval(X):
    """Bernoulli units model values in [0, 1]; say how to fix other inputs."""
    values = X.data if sp.issparse(X) else X
    if values.size and (values.min() < 0 or values.max() > 1):
        warnings.warn(
            "Input values lie outside [0, 1], but Bernoulli units model probabilities. "
            "Scale the features first, e.g. sklearn.preprocessing.MinMaxScaler() in a "
            "Pipeline, or binarize them.",
            DataRangeWarning,
            stacklevel=3,
        )


def resolve_strategy(spec, registry, base_class, what):
    """A fresh strategy object from a string or a user's object (cloned, never mutated)."""
    if isinstance(spec, base_class):
        strategy = clone(spec)
    elif spec in registry:
        strategy = registry[spec]()
    else:
        raise ValueError(
            f"Unknown {what} {spec!r}; choose one of {sorted(registry)} or pass a "
            f"{base_class.__name__} object."
        )
    strategy._validate_params()
    return strategy


class BoltzmannBase(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Base class of skboltz density models.

    Subclasses define ``_model_kind`` and the hooks ``_new_training_state``,
    ``_training_params``, ``_train_epoch``, ``_publish``, ``_model_view``,
    ``free_energy``, ``transform``, ``reconstruct`` and ``_n_epochs``.
    """

    _model_kind = "rbm"

    # -- validation ----------------------------------------------------------------
    def _validate_X(self, X, *, reset, check_range=False):
        X = validate_data(
            self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=reset
        )
        if check_range:
            warn_if_outside_unit_interval(X)
        return X

    def _resolve_learning(self):
        return resolve_strategy(
            self.learning, LEARNING_STRATEGIES[self._model_kind], LearningStrategy,
            "learning strategy",
        )

    def _auto_z_estimator(self, view):
        if 2**view.n_enumerated_units <= AUTO_EXACT_MAX_STATES or "ais" not in Z_ESTIMATORS:
            return "exact"
        return "ais"

    def _resolve_z_estimator(self, spec, view):
        if isinstance(spec, str) and spec == "auto":
            spec = self._auto_z_estimator(view)
        return resolve_strategy(spec, Z_ESTIMATORS, ZEstimator, "z_estimator")

    # -- training ------------------------------------------------------------------
    def fit(self, X, y=None):
        """Fit the model to ``X`` from a fresh start, for the configured number of epochs.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, ideally with values in [0, 1].
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, partial=False)

    def partial_fit(self, X, y=None):
        """Train for one more epoch over ``X``, continuing the previous state.

        Continues the parameters, momentum, persistent chains and random stream of the
        previous ``fit``/``partial_fit``; the first call starts from scratch. ``X`` is
        split into minibatches of ``batch_size``, so a call with ``batch_size`` rows is
        one parameter update.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, ideally with values in [0, 1].
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            The updated estimator.
        """
        return self._fit(X, partial=True)

    def _fit(self, X, *, partial):
        self._validate_params()
        first_call = not (partial and hasattr(self, "_training_state"))
        X = self._validate_X(X, reset=first_call, check_range=True)
        learning = self._resolve_learning()
        if first_call:
            rng = make_generator(self.random_state)
            state = self._new_training_state(X, learning, rng)
        else:
            state = copy.deepcopy(self._training_state)
            state["params"] = self._training_params(X.dtype)
        n_epochs = 1 if partial else self._n_epochs()
        self._train(X, state, learning, n_epochs)
        view = self._model_view_of(state)
        z_estimator = self._resolve_z_estimator(self.z_estimator, view)
        # Publish only now: every epoch finished and the parameters are finite.
        self.learning_ = learning
        self.z_estimator_ = z_estimator
        self._publish(state)
        self._training_state = state
        self._log_z_cache = {}
        return self

    def _train(self, X, state, learning, n_epochs):
        history = state["history"]
        monitor = state["monitor"]
        for _ in range(n_epochs):
            start = time.perf_counter()
            self._train_epoch(X, state, learning)
            if not np.all(np.isfinite(state["params"])):
                raise TrainingDivergedError(
                    f"{type(self).__name__} diverged in epoch {state['n_iter'] + 1}: the "
                    "parameters became non-finite. The learning rate is probably too "
                    f"high (learning_rate={self.learning_rate}); lower it, or raise "
                    "batch_size. The estimator was left as it was before this call."
                )
            state["n_iter"] += 1
            history["epoch"].append(state["n_iter"])
            history["time"].append(time.perf_counter() - start)
            history["reconstruction_error"].append(
                self._reconstruction_error(state, monitor)
            )
            if self.verbose:
                print(
                    f"[{type(self).__name__}] Iteration {state['n_iter']}, "
                    f"reconstruction error = {history['reconstruction_error'][-1]:.4f}, "
                    f"time = {history['time'][-1]:.2f}s"
                )

    @staticmethod
    def _new_history():
        return {"epoch": [], "time": [], "reconstruction_error": []}

    def _progress(self, state):
        """Fraction of the requested training done, for schedules (k growth, momentum)."""
        return min(1.0, state["n_iter"] / max(self._n_epochs() - 1, 1))

    # -- fitted attributes shared by all models ------------------------------------
    @property
    def n_iter_(self):
        """Number of epochs trained so far (``fit`` resets it, ``partial_fit`` adds one)."""
        check_is_fitted(self, "_training_state")
        return self._training_state["n_iter"]

    @property
    def history_(self):
        """Per-epoch training records, a dict of equal-length lists.

        Keys: ``epoch``, ``time`` (seconds), ``reconstruction_error`` (mean squared error
        of the mean-field reconstruction of up to 1000 training rows).
        """
        check_is_fitted(self, "_training_state")
        return copy.deepcopy(self._training_state["history"])

    # -- partition function and scoring --------------------------------------------
    def estimate_log_partition(self, z_estimator=None):
        """Estimate log Z of the fitted model; the model is not changed.

        The result for a given estimator setting is computed once per fitted parameter
        set (seeded from ``random_state``) and reused, so scores are deterministic.

        Parameters
        ----------
        z_estimator : str, ZEstimator or None, default=None
            None uses the fitted ``z_estimator_``; otherwise a string ("exact", "ais",
            ...) or an estimator object from :mod:`skboltz.partition`.

        Returns
        -------
        log_z : skboltz.partition.LogZ
            The estimate with its standard error, bounds and cost.
        """
        check_is_fitted(self, "_training_state")
        view = self._model_view()
        estimator = (
            self.z_estimator_
            if z_estimator is None
            else self._resolve_z_estimator(z_estimator, view)
        )
        key = repr(estimator)
        if key not in self._log_z_cache:
            rng = np.random.default_rng(self._training_state["log_z_seed"])
            self._log_z_cache[key] = estimator.estimate(
                view, rng=rng, data_rates=self._training_state["data_rates"]
            )
        return self._log_z_cache[key]

    def score_samples(self, X):
        """Log-likelihood log p(x) of each row, in nats.

        This is the model's true log-probability, ``-free_energy(x) - log Z``, with log Z
        from ``z_estimator_`` (exact for small models), estimated once per fitted model;
        it is deterministic and row-wise. (scikit-learn's ``BernoulliRBM.score_samples``
        returns a randomised pseudo-likelihood instead.)

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to score, with values in [0, 1].

        Returns
        -------
        log_likelihood : ndarray of shape (n_samples,)
            The log-likelihood log p(x) of each row, in float64.
        """
        check_is_fitted(self, "_training_state")
        X = self._validate_X(X, reset=False, check_range=True)
        return -self.free_energy(X) - self.estimate_log_partition().value

    def score(self, X, y=None):
        """Mean log-likelihood of the rows of ``X`` (higher is better).

        Makes ``GridSearchCV`` select models by held-out likelihood with no scorer.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to score.
        y : None
            Ignored.

        Returns
        -------
        score : float
            Mean of :meth:`score_samples`.
        """
        return float(np.mean(self.score_samples(X)))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def _model_view(self):
        return self._model_view_of(None)


def as_dense(X):
    """Dense ndarray from a dense or sparse matrix."""
    return X.toarray() if sp.issparse(X) else X


__all__ = ["BoltzmannBase", "as_generator", "make_generator"]
