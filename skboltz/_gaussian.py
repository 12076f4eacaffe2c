"""Gaussian-Bernoulli restricted Boltzmann machine: real-valued visible units."""

import warnings
from numbers import Integral

import numpy as np
from scipy.linalg import solve_triangular
from sklearn.covariance import LedoitWolf
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import (
    MONITOR_ROWS,
    MONITORING_CONSTRAINTS,
    MONITORING_PARAMETERS_DOC,
    TRAINING_CONSTRAINTS,
    as_dense,
    make_generator,
)
from ._gaussian_energy import AugmentedGaussianRBM, GaussianRBMView
from ._rbm import RBM
from ._sklearn import Interval, StrOptions, check_count
from ._training import GaussianRBMTrainingState, momentum_step
from .exceptions import DataScaleWarning, TrainingDivergedError
from .learning._base import LEARNING_STRATEGIES, RBMLearningStrategy
from .partition import Z_ESTIMATORS, MeanField, ZEstimator

#: Features whose standard deviation is above this, or below its inverse, are "not
#: standardised" (DataScaleWarning).
SCALE_TOLERANCE = 10.0

#: Largest relative decrease of a variance in one update (sigma^2 at least halves).
MAX_VARIANCE_DECREASE = 0.5

#: A learned variance below this (on features of variance 1) has collapsed: the
#: likelihood of repeated values grows without bound as their variance shrinks.
MIN_VARIANCE = 1e-6

#: Training has run away when some hidden state's visible mean, or some standard
#: deviation, lies this many times the data's scale (largest feature standard deviation)
#: from the data: far below DIVERGED_MAGNITUDE, yet no real fit comes near it.
RUNAWAY_SCALE = 1e3

#: Log Z estimators that work with real-valued visible units (mean field needs binary).
GAUSSIAN_Z_ESTIMATORS = {
    name for name, cls in Z_ESTIMATORS.items() if not issubclass(cls, MeanField)
}


def feature_spread(X):
    """Each feature's standard deviation, and whether it is constant (to rounding)."""
    std = X.std(axis=0, dtype=np.float64)
    return std, std <= 1e-8 * (1 + np.abs(X.mean(axis=0, dtype=np.float64)))


def warn_if_unscaled(X):
    """Gaussian units with unit starting variances want standardised features."""
    if X.shape[0] < 2:
        return
    std, constant = feature_spread(X)
    off_scale = ~constant & ((std > SCALE_TOLERANCE) | (std < 1 / SCALE_TOLERANCE))
    problems = []
    if off_scale.any():
        shown = ", ".join(f"feature {i}: {std[i]:.3g}" for i in np.flatnonzero(off_scale)[:5])
        problems.append(
            f"{off_scale.sum()} feature(s) have standard deviations far from 1 ({shown}"
            f"{', ...' if off_scale.sum() > 5 else ''}). GaussianRBM models standardised "
            "features (its variances start at 1 and its learning rate assumes that "
            "scale): put sklearn.preprocessing.StandardScaler() in front of it in a "
            "Pipeline."
        )
    if constant.any():
        shown = ", ".join(str(i) for i in np.flatnonzero(constant)[:5])
        problems.append(
            f"{constant.sum()} feature(s) are constant (zero variance: {shown}"
            f"{', ...' if constant.sum() > 5 else ''}); they carry no information and "
            "make a learned variance collapse. Drop them, e.g. with "
            "sklearn.feature_selection.VarianceThreshold(), before StandardScaler()."
        )
    if problems:
        warnings.warn(" ".join(problems), DataScaleWarning, stacklevel=7)


def estimate_whitening(X):
    """Mean and lower Cholesky factor L of the Ledoit-Wolf covariance of X's rows, float64.

    z = L^-1 (x - mean) has unit covariance under that estimate. The shrinkage keeps
    the estimate positive definite with fewer rows than features too; it fails only
    with fewer than 2 rows or when every feature is constant.
    """
    n_samples = X.shape[0]
    if n_samples < 2:
        raise ValueError(
            "GaussianRBM(whiten=True) estimates the covariance of the features, which "
            f"needs at least 2 samples; got n_samples = {n_samples}. For partial_fit, "
            "make the first call a batch of rows representative of the data."
        )
    estimate = LedoitWolf().fit(X.astype(np.float64))
    try:
        factor = np.linalg.cholesky(estimate.covariance_)
    except np.linalg.LinAlgError:
        raise ValueError(
            "GaussianRBM(whiten=True) could not whiten the data: the estimated covariance "
            "is singular (are all features constant?)."
        ) from None
    return estimate.location_, factor


def _bernoulli_only_class(strategy):
    """The built-in strategy class, if any, that trains binary visible units only."""
    bernoulli = set(LEARNING_STRATEGIES["rbm"].values())
    gaussian = set(LEARNING_STRATEGIES["gaussian_rbm"].values())
    for cls in type(strategy).__mro__:
        if cls in bernoulli and cls not in gaussian:
            return cls
    return None


class GaussianRBM(RBM):
    """Gaussian-Bernoulli restricted Boltzmann machine: real-valued data, true log density.

    Visible units are real-valued (Gaussian given the hidden units), hidden units
    binary. The model is a mixture of 2**n_components Gaussians with a shared diagonal
    covariance whose means are sums of the hidden units' weight vectors; ``transform``
    returns P(h = 1 | v) and ``score_samples`` the exact (or estimated, with error
    bars) log density in nats. It shares :class:`RBM`'s training engine (momentum,
    weight decay, iterate averaging, the learning strategies, monitoring, early
    stopping, all-or-nothing fits) and its log Z estimators.

    The energy is the parametrisation of Cho, Ilin & Raiko, with per-feature
    variances sigma_i^2,

        E(v, h) = sum_i (v_i - b_i)^2 / (2 sigma_i^2) - h^T W (v / sigma^2) - c^T h,

    so p(v_i | h) = N(b_i + (W^T h)_i, sigma_i^2) and
    P(h_j = 1 | v) = sigmoid(c_j + sum_i W_ji v_i / sigma_i^2). Learned variances are
    trained as z = log sigma^2, and the steps of W and b use the model's own scale
    (their gradients times sigma^2), which keeps training stable as the variances move.

    Standardise the data first (``StandardScaler`` in a :class:`~sklearn.pipeline.Pipeline`):
    the variances start at 1, and a feature with a huge or a zero variance raises a
    :class:`~skboltz.exceptions.DataScaleWarning`.

    Parameters
    ----------
    n_components : int, default=16
        Number of hidden units. Up to 20, ``score_samples`` is exact (a sum over the
        2**n_components hidden states, each a Gaussian integral).
    learning : {"pt", "pcd", "cd"} or RBMLearningStrategy, default="pt"
        How the negative-phase statistics are estimated: parallel tempering
        (:class:`~skboltz.learning.ParallelTempering`, 10 temperatures; the visible
        units' quadratic term stays untempered, so every temperature is a proper
        distribution), persistent contrastive divergence
        (:class:`~skboltz.learning.PCD`) or CD-k (:class:`~skboltz.learning.CD`); or
        a strategy object, which is cloned (also your own subclass of
        :class:`~skboltz.learning.RBMLearningStrategy` that returns visible rows).
        Parallel tempering costs 3-5 times as much per epoch as PCD; on the
        benchmark datasets it gave held-out log densities 0.3-0.5 nats higher and
        trained stably at twice the learning rate (with PCD or CD, use a learning
        rate of about 0.02: at 0.04 PCD with 64 hidden units diverged on the
        standardised digits). The closed-form strategies of binary units ("exact",
        "tap") are not available.
    z_estimator : {"auto", "exact", "ais", "visited_states"} or ZEstimator, \
            default="auto"
        How log Z is found for ``score_samples``: "auto" enumerates the hidden states
        exactly when ``n_components <= 20`` and otherwise uses annealed importance
        sampling over the hidden units (the visible ones integrated out); or an
        estimator object of :mod:`skboltz.partition` (cloned). Mean-field estimators
        need binary units and are refused. Recorded in ``z_estimator_``.
    learning_rate : float, default=0.04
        Step size on the mean minibatch update direction (the gradients of the
        weights and visible means are taken in the model's own scale, times
        sigma^2; a variance moves as sigma^2 <- sigma^2 (1 + step)). Momentum is in
        :class:`RBM`'s moving-average form, so this is the mean step per update.
    batch_size : int, default=10
        Rows per minibatch; the minibatches are reshuffled every epoch.
    n_iter : int, default=100
        Number of epochs (passes over the data) for ``fit``. Small datasets need
        many epochs (on wine, 133 rows, 50 epochs fell 0.5 nats short of 100).
    momentum : float or (float, float), default=0.5
        Momentum of the updates, in moving-average form (see :class:`RBM`): velocity
        <- momentum * velocity + (1 - momentum) * learning_rate * update direction. A
        pair means the first value for the first 5 epochs and the second afterwards.
        Unlike :class:`RBM` (default 0), the Gaussian RBM keeps some momentum: its
        negative phase is noisier (real-valued samples), and the defaults were tuned
        with it.
    weight_decay : float, default=1e-4
        L2 penalty on the weights (not the biases or variances).
    average_window : int or None, default=100
        Iterate averaging: the fitted attributes are an exponential moving average of
        the training iterates over about this many minibatch updates (see
        :class:`RBM`); None publishes the last update's parameters.
    learn_variance : bool, default=True
        Learn each feature's variance sigma_i^2 (as its logarithm). False keeps every
        sigma_i^2 at 1, the usual choice for standardised features when only the
        features matter; learning them gives a far better density.
    whiten : bool, default=False
        Model whitened rows z = L^-1 (x - mu): ``fit`` estimates the mean mu and a
        shrunk full covariance L L^T of the training rows with
        :class:`~sklearn.covariance.LedoitWolf` (Ledoit & Wolf, "A well-conditioned
        estimator for large-dimensional covariance matrices", 2004; L is its Cholesky
        factor; with ``validation_fraction``, of all the rows given to ``fit``), and
        the RBM is trained on z. The full Gaussian then carries the correlations
        between features and the RBM models what it misses: use it for density
        estimation on correlated features. Standardise first all the same (the
        shrinkage pulls towards a multiple of the identity, which suits features of
        one scale, and the data-scale warnings judge z). Every method takes and returns
        rows in the units of x: ``transform`` is P(h = 1 | z), ``score_samples`` the
        log density of x (log p(z) - sum(log diag L), the change of variables), and
        ``sample``, ``gibbs`` and ``reconstruct`` map their rows back to x. The
        fitted parameters (``components_``, ``variance_``, ...), ``free_energy``,
        :meth:`estimate_log_partition` and the training ``history_`` are those of the
        model of z. Costs a d x d covariance and an O(d^3) factorisation once per
        ``fit`` (d features), and a triangular solve per call. ``partial_fit``
        estimates the whitening on its first call and keeps it fixed afterwards, so
        make that call a representative batch (at least 2 rows; with few rows the
        shrinkage pulls the estimate towards a multiple of the identity, and
        whitening then does little).
    {monitoring}
    verbose : int, default=0
        Print a progress line per epoch when positive.
    random_state : int, RandomState instance or None, default=None
        Seeds initialisation, minibatch order, sampling and the log Z estimate.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Weight matrix W: hidden unit j adds ``components_[j]`` to the visible mean.
    intercept_hidden_ : ndarray of shape (n_components,)
        Hidden biases c.
    intercept_visible_ : ndarray of shape (n_features,)
        Visible means b when every hidden unit is off.
    variance_ : ndarray of shape (n_features,)
        Variance sigma_i^2 of each visible unit given the hidden units.
    whitening_mean_ : ndarray of shape (n_features,) or None
        The mean mu subtracted before whitening (``whiten=True``), else None.
    whitening_factor_ : ndarray of shape (n_features, n_features) or None
        The lower-triangular Cholesky factor L of the Ledoit-Wolf covariance: rows are
        whitened as z = L^-1 (x - mu) (``whiten=True``), else None.
    learning_ : LearningStrategy
        The negative-phase strategy used (a clone of ``learning`` or its default object).
    z_estimator_ : ZEstimator
        The log Z estimator that ``score_samples`` uses.
    n_iter_ : int
        Epochs trained so far.
    history_ : dict of lists
        Per-epoch training records (see :attr:`RBM.history_`).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when they are all strings.

    See Also
    --------
    RBM : Binary visible units.
    sklearn.decomposition.FactorAnalysis : A linear-Gaussian latent model.
    sklearn.mixture.GaussianMixture : A mixture with free component means.

    References
    ----------
    K. Cho, A. Ilin and T. Raiko, "Improved learning of Gaussian-Bernoulli restricted
    Boltzmann machines", ICANN 2011.
    G. Hinton, "A Practical Guide to Training Restricted Boltzmann Machines", 2010.
    J. Melchior, N. Wang and L. Wiskott, "Gaussian-binary restricted Boltzmann
    machines for modeling natural image statistics", PLOS ONE 12(2), 2017.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skboltz import GaussianRBM
    >>> X = load_wine().data
    >>> model = make_pipeline(StandardScaler(), GaussianRBM(n_components=8, random_state=0))
    >>> model = model.fit(X)
    >>> model.transform(X).shape
    (178, 8)
    >>> log_density = model[-1].score_samples(model[0].transform(X))  # nats, exact
    >>> log_density.shape
    (178,)

    Whitening first, for the density of correlated features:

    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.model_selection import train_test_split
    >>> X_train, X_test = train_test_split(load_breast_cancer().data, random_state=0)
    >>> scaler = StandardScaler().fit(X_train)
    >>> X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    >>> plain = GaussianRBM(n_components=8, n_iter=10, random_state=0).fit(X_train)
    >>> whitened = GaussianRBM(n_components=8, n_iter=10, whiten=True, random_state=0)
    >>> whitened = whitened.fit(X_train)
    >>> whitened.whitening_factor_.shape
    (30, 30)
    >>> bool(whitened.score(X_test) > plain.score(X_test))
    True
    """

    _model_kind = "gaussian_rbm"

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "learning": [
            StrOptions(set(LEARNING_STRATEGIES["gaussian_rbm"])),
            RBMLearningStrategy,
        ],
        "average_window": [Interval(Integral, 1, None, closed="left"), None],
        "learn_variance": ["boolean"],
        "whiten": ["boolean"],
        **TRAINING_CONSTRAINTS,
        "z_estimator": [StrOptions({"auto", *GAUSSIAN_Z_ESTIMATORS}), ZEstimator],
        **MONITORING_CONSTRAINTS,
    }

    def __init__(
        self,
        n_components=16,
        *,
        learning="pt",
        z_estimator="auto",
        learning_rate=0.04,
        batch_size=10,
        n_iter=100,
        momentum=0.5,
        weight_decay=1e-4,
        average_window=100,
        learn_variance=True,
        whiten=False,
        validation_fraction=None,
        n_iter_no_change=None,
        tol=1e-4,
        monitor_likelihood=False,
        verbose=0,
        random_state=None,
    ):
        self.n_components = n_components
        self.learning = learning
        self.z_estimator = z_estimator
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.n_iter = n_iter
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.average_window = average_window
        self.learn_variance = learn_variance
        self.whiten = whiten
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.monitor_likelihood = monitor_likelihood
        self.verbose = verbose
        self.random_state = random_state

    __doc__ = __doc__.replace("{monitoring}", MONITORING_PARAMETERS_DOC)

    # -- validation and whitening ----------------------------------------------------
    def _validate_X(self, X, *, reset, check_range=False):
        """The rows the model sees: validated, dense, and whitened when it whitens.

        A fresh fit (``reset``) with ``whiten=True`` estimates the whitening of ``X``
        and keeps it aside until the fit publishes it; otherwise the fitted whitening
        (if any) is applied.
        """
        # Sparse input is accepted and densified: standardised (or centred) data are dense.
        X = as_dense(validate_data(
            self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=reset
        ))
        if reset:
            whitening = (None, None)
            if self.whiten:
                mean, factor = estimate_whitening(X)
                whitening = (mean.astype(X.dtype), factor.astype(X.dtype))
            self._new_whitening = whitening
            return self._whitened(X, *whitening)
        return self._whitened(X, self.whitening_mean_, self.whitening_factor_)

    @staticmethod
    def _whitened(X, mean, factor):
        """z = L^-1 (x - mean) for each row x of ``X``, in the dtype of ``X``."""
        if factor is None:
            return X
        centred = X - mean.astype(X.dtype, copy=False)
        # L z^T = (x - mean)^T for all rows at once, one triangular solve
        return solve_triangular(
            factor.astype(X.dtype, copy=False), centred.T, lower=True, check_finite=False
        ).T

    def _unwhitened(self, Z):
        """The rows x = mean + L z of whitened rows ``Z`` (``Z`` itself without whitening)."""
        factor = self.whitening_factor_
        if factor is None:
            return Z
        X = Z @ factor.T.astype(Z.dtype, copy=False)
        X += self.whitening_mean_.astype(Z.dtype, copy=False)
        return X

    def _log_abs_det_whitening(self):
        """log |det L| = sum(log diag L), the log-Jacobian of x = mean + L z (0 without)."""
        factor = self.whitening_factor_
        if factor is None:
            return 0.0
        return float(np.log(np.diag(factor).astype(np.float64)).sum())

    def _fit(self, X, *, partial):
        self._check_strategies()
        if partial and hasattr(self, "_training_state"):
            fitted_whiten = self.whitening_factor_ is not None
            if self.whiten != fitted_whiten:
                raise ValueError(
                    f"whiten={self.whiten} but the model was fitted with "
                    f"whiten={fitted_whiten}; partial_fit keeps the whitening of the first "
                    "call. Call fit to start again with the new setting."
                )
        try:
            return super()._fit(X, partial=partial)
        finally:
            # only a publication keeps it (_fitted_attributes)
            self.__dict__.pop("_new_whitening", None)

    def _check_strategies(self):
        """Refuse, before any training, the strategies that need binary visible units."""
        if isinstance(self.learning, RBMLearningStrategy):
            bernoulli = _bernoulli_only_class(self.learning)
            if bernoulli is not None:
                raise ValueError(
                    f"{bernoulli.__name__} computes the negative phase in closed form for "
                    "binary visible units; GaussianRBM has real-valued ones. Use learning="
                    f"{sorted(LEARNING_STRATEGIES['gaussian_rbm'])} (or their objects), "
                    "or a strategy whose negative_phase returns visible rows."
                )
        if isinstance(self.z_estimator, MeanField):
            self._refuse_mean_field(self.z_estimator)

    @staticmethod
    def _refuse_mean_field(estimator):
        raise ValueError(
            f"{type(estimator).__name__} approximates log Z of binary units; GaussianRBM "
            "has real-valued visible units. Use z_estimator='exact' (n_components up "
            "to about 25) or 'ais'."
        )

    def _resolve_z_estimator(self, spec, view):
        estimator = super()._resolve_z_estimator(spec, view)
        if isinstance(estimator, MeanField):
            self._refuse_mean_field(estimator)
        return estimator

    def _divergence_hint(self, X):
        std, constant = feature_spread(as_dense(X))
        if np.any(std[~constant] > SCALE_TOLERANCE):
            return (
                "The features are not standardised (largest standard deviation "
                f"{std.max():.3g}); put sklearn.preprocessing.StandardScaler() in front."
            )
        return (
            "The learning rate is probably too high (learning_rate="
            f"{self.learning_rate}); lower it, or raise batch_size."
        )

    def _check_likelihood(self, state, rows, previous_view=None):
        # The base's check bounds the likelihood of binary units against the uniform
        # distribution on {0, 1}^n; real-valued units have their own checks (run-away
        # values and collapsing variances, in _train_epoch).
        return

    # -- training hooks ------------------------------------------------------------
    def _new_training_state(self, X, learning, rng):
        warn_if_unscaled(X)
        dtype = X.dtype
        n_visible = X.shape[1]
        data_mean = X.mean(axis=0, dtype=np.float64)
        params = np.zeros((self.n_components + 2, n_visible + 1), dtype=dtype)
        params[1:-1, :-1] = rng.normal(0.0, 0.01, size=(self.n_components, n_visible))
        params[-1, :-1] = data_mean  # visible means start at the data's; variances at 1
        model = AugmentedGaussianRBM(params)
        return self._fresh_state(
            GaussianRBMTrainingState, model, X, learning, rng,
            data_mean=data_mean,
            data_scale=self._data_scale(X),
            # the hidden units' rates on the data: the base model of log Z samplers
            data_rates=self._hidden_rates(model.view(), X),
        )

    @staticmethod
    def _data_scale(X):
        """The largest standard deviation of a non-constant feature (1 if none)."""
        std, constant = feature_spread(X)
        return float(std[~constant].max(initial=0)) or 1.0

    @staticmethod
    def _hidden_rates(view, X):
        """Mean P(h = 1 | v) over up to MONITOR_ROWS evenly spaced rows of X, float64."""
        rows = np.linspace(0, X.shape[0] - 1, min(X.shape[0], MONITOR_ROWS)).astype(np.intp)
        return view.astype(np.float64).hidden_probability(X[rows]).mean(axis=0)

    def _training_params(self, dtype):
        params = AugmentedGaussianRBM.from_view(self._view_as(dtype)).params
        # variance_ = exp(z) does not give z back exactly: unless edited, continue from
        # the exact log variances it was published from.
        published = self._training_state.published_log_variance
        if published is not None and np.array_equal(
            np.exp(published).astype(dtype), self.variance_.astype(dtype)
        ):
            params[0, :-1] = published
        return params

    def _train_epoch(self, X, state, learning):
        super()._train_epoch(X, state, learning)
        iterate = state.iterate.astype(np.float64)
        # the farthest visible mean b + W^T h over all h, and the largest deviation
        reach = np.abs(iterate[-1, :-1] - state.data_mean) + np.abs(iterate[1:-1, :-1]).sum(
            axis=0
        )
        spread = max(reach.max(initial=0), np.exp(0.5 * iterate[0, :-1].max(initial=0)))
        if spread > RUNAWAY_SCALE * state.data_scale:
            raise TrainingDivergedError(
                f"{type(self).__name__} diverged in epoch {state.n_iter + 1}: the model "
                f"put visible values {spread:.3g} away from the data, more than "
                f"{RUNAWAY_SCALE:g} times the largest feature's standard deviation "
                f"({state.data_scale:.3g}). {self._divergence_hint(X)} The estimator "
                "was left as it was before this call."
            )
        if self.learn_variance:
            variance = np.exp(iterate[0, :-1])
            collapsed = np.flatnonzero(variance < MIN_VARIANCE)
            if collapsed.size:
                raise TrainingDivergedError(
                    f"{type(self).__name__}: the variance of feature(s) "
                    f"{collapsed[:5].tolist()} collapsed towards zero (below "
                    f"{MIN_VARIANCE:g}) in epoch {state.n_iter + 1}. Many rows share "
                    "the same value there (repeated points or (near-)constant "
                    "features), where a Gaussian's density grows without bound as its "
                    "variance shrinks. Drop constant features, remove duplicates or add a "
                    "little noise, or set learn_variance=False. The estimator was left "
                    "as it was before this call."
                )
        state.data_rates = self._hidden_rates(self._model_view_of(state), X)

    # Both of RBM's epoch loops (fused sampling hooks, plain statistics) become the one
    # below: it asks the strategy for the negative statistics of each minibatch.
    def _train_epoch_on_samples(self, X, state, learning, params, averaging):
        velocity, rng, sampler = state.velocity, state.rng, state.sampler
        noise, fused = state.noise, learning._uses_fast_loop()
        model = AugmentedGaussianRBM(params, learn_variance=self.learn_variance)
        momentum, step = self._momentum_and_step(state.n_iter)
        progress = self._progress(state)
        decay = step * self.weight_decay
        weights, weight_velocity = params[1:-1, :-1], velocity[1:-1, :-1]
        variance_velocity, log_variance = velocity[0, :-1], params[0, :-1]
        order = rng.permutation(X.shape[0])
        for start in range(0, X.shape[0], self.batch_size):
            batch = model.augment(X[order[start : start + self.batch_size]])
            positive = model.statistics(model.hidden_probability(batch), batch)
            positive /= batch.shape[0]
            if fused:  # the strategy's samplers draw from the buffered streams
                negative = learning._negative_statistics(
                    model, batch, sampler, rng, progress, noise=noise
                )
            else:
                negative = learning._negative_statistics(model, batch, sampler, rng, progress)
            positive -= negative
            positive *= step
            momentum_step(velocity, positive, momentum, weight_velocity, weights, decay)
            velocity[-1, -1] = 0  # the constant units' coupling is not learnt
            params[1:] += velocity[1:]
            if self.learn_variance:
                # The step of the variances themselves, sigma^2 <- sigma^2 (1 + step),
                # with step the gradient of log sigma^2: the same to first order, but
                # an outlying row, whose gradient grows like (v - b)^2 / sigma^2, then
                # adds to sigma^2 instead of multiplying it by exp(step).
                log_variance += np.log1p(np.maximum(variance_velocity, -MAX_VARIANCE_DECREASE))
            model.refresh()
            self._count_update(state, params)

    _train_epoch_on_statistics = _train_epoch_on_samples

    def _reconstruction_error(self, view, rows):
        view = view.astype(np.float32)
        rows = rows.astype(np.float32, copy=False)
        reconstruction = view.visible_mean(view.hidden_probability(rows))
        reconstruction -= rows
        return float(np.mean(np.square(reconstruction), dtype=np.float64))

    def _fitted_attributes(self, state):
        attributes = super()._fitted_attributes(state)
        params = state.params
        state.published_log_variance = params[0, :-1].copy()
        attributes.update(
            components_=params[1:-1, :-1].copy(),
            intercept_hidden_=params[1:-1, -1].copy(),
            intercept_visible_=params[-1, :-1].copy(),
            variance_=np.exp(params[0, :-1]),
        )
        if "_new_whitening" in self.__dict__:  # a fresh fit; partial_fit keeps its own
            attributes["whitening_mean_"], attributes["whitening_factor_"] = (
                self._new_whitening
            )
        return attributes

    def _model_view_of(self, state):
        if state is not None:
            return AugmentedGaussianRBM(state.params).view()
        return GaussianRBMView(
            self.components_, self.intercept_visible_, self.intercept_hidden_, self.variance_
        )

    # -- inference -----------------------------------------------------------------
    def gibbs(self, v, random_state=None):
        """One block-Gibbs step v -> h -> v from each row of ``v``.

        Parameters
        ----------
        v : array-like of shape (n_samples, n_features)
            Starting visible rows.
        random_state : int, RandomState, Generator or None, default=None
            None continues the model's own sampling stream.

        Returns
        -------
        v_new : ndarray of shape (n_samples, n_features)
            Real-valued visible rows after one step, in the dtype of ``v`` (with
            ``whiten=True`` the step runs on the whitened rows and returns rows in the
            units of ``v``).
        """
        check_is_fitted(self, "_training_state")
        v = self._validate_X(v, reset=False)
        rng = self._gibbs_generator(random_state)
        view = self._view_as(v.dtype)
        return self._unwhitened(view.sample_visible(view.sample_hidden(v, rng), rng))

    def sample(self, n_samples=1, random_state=None, n_steps=1000):
        """Draw visible samples by block Gibbs sampling.

        Chains start from independent normal units with the training data's means and
        the model's variances, and run ``n_steps`` steps v -> h -> v (with
        ``whiten=True``, on whitened rows, mapped back to the data's units at the end).

        Parameters
        ----------
        n_samples : int, default=1
            Number of samples (independent chains).
        random_state : int, RandomState, Generator or None, default=None
            None uses the estimator's ``random_state`` (so an int seed gives the same
            samples on every call).
        n_steps : int, default=1000
            Gibbs steps per chain.

        Returns
        -------
        samples : ndarray of shape (n_samples, n_features)
            Real-valued visible rows.
        """
        check_is_fitted(self, "_training_state")
        n_samples = check_count(n_samples, "n_samples", 1)
        n_steps = check_count(n_steps, "n_steps", 0)
        rng = make_generator(self.random_state if random_state is None else random_state)
        view = self._model_view()
        mean = self._training_state.data_mean.astype(view.dtype)
        V = rng.standard_normal((n_samples, view.n_visible), dtype=view.dtype)
        V *= np.sqrt(view.variance)
        V += mean
        for _ in range(n_steps):
            V = view.sample_visible(view.sample_hidden(V, rng), rng)
        return self._unwhitened(V)

    def free_energy(self, X):
        """Free energy F(v) of each row (hidden units summed out), in float64.

        ``log p(v) = -F(v) - log Z``. With ``whiten=True`` this is the free energy of
        the whitened row z = L^-1 (x - mu), the model's own input: ``score_samples``
        adds the whitening's log-Jacobian, -sum(log diag L).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Visible rows, in the units of the training data.

        Returns
        -------
        free_energy : ndarray of shape (n_samples,)
            F of each (whitened, with ``whiten=True``) row.
        """
        return super().free_energy(X)

    def score_samples(self, X):
        """Log density log p(x) of each row, in nats.

        The model's true log density, ``-free_energy(x) - log Z``, with log Z from
        ``z_estimator_`` (exact up to 20 hidden units), estimated once per fitted model;
        deterministic and row-wise. A density, not a probability: values above 0 are
        possible (a density narrower than 1 exceeds 1), and any real values are
        scored as they are. With ``whiten=True`` it is the density of x itself: the
        model's log density of z = L^-1 (x - mu) minus sum(log diag L).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to score, scaled as the training data were.

        Returns
        -------
        log_density : ndarray of shape (n_samples,)
            The log density log p(x) of each row, in float64.
        """
        check_is_fitted(self, "_training_state")
        log_z = self._log_z_for_scoring().value
        return -self.free_energy(X) - (log_z + self._log_abs_det_whitening())

    def _visible_given_hidden(self, H, rng, sample=True):
        """A draw from p(v | h) for each row of ``H`` (or its mean when not ``sample``)."""
        view = self._view_as(H.dtype)
        V = view.sample_visible(H, rng) if sample else view.visible_mean(H)
        return self._unwhitened(V)

    def reconstruct(self, X):
        """Mean-field reconstruction E[v | h = P(h = 1 | v)] of each row.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Visible rows.

        Returns
        -------
        X_reconstructed : ndarray of shape (n_samples, n_features)
            The visible means b + W^T h with h the hidden probabilities of each row
            (with ``whiten=True``, of the whitened row, mapped back: mu + L (b + W^T h)).
        """
        check_is_fitted(self, "_training_state")
        X = self._validate_X(X, reset=False)
        view = self._view_as(X.dtype)
        return self._unwhitened(view.visible_mean(view.hidden_probability(X)))


__all__ = ["GaussianRBM"]
