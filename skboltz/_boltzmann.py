"""General Boltzmann machine with visible and hidden units and any symmetric couplings."""

import warnings
import zlib
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from ._base import (
    AUTO_EXACT_MAX_STATES,
    MONITORING_CONSTRAINTS,
    MONITORING_PARAMETERS_DOC,
    TRAINING_CONSTRAINTS,
    BoltzmannBase,
    as_dense,
    make_generator,
)
from ._bm_energy import (
    BMView,
    GibbsSweep,
    bm_code_moments,
    bm_gibbs_sweep,
    bm_hidden_code_posteriors,
    bm_mean_field,
)
from ._energy import clipped_rates, logit_of_rates, sigmoid
from ._sklearn import Interval, StrOptions, check_count
from ._training import BMTrainingState, momentum_and_step, momentum_step
from .exceptions import DataRangeWarning
from .learning._base import LEARNING_STRATEGIES, BMLearningStrategy
from .partition._base import Z_ESTIMATORS

#: Hidden units coupled to each other are summed out exactly up to this many.
MAX_ENUMERATED_HIDDEN = 16

#: Hidden centring offsets move this fraction of the way to the minibatch's clamped
#: hidden means at each update (the sliding average of Melchior et al. 2016).
OFFSET_RATE = 0.01

#: ``code_entropy="auto"``: the bonus weight at the start of training, used with up to
#: ``MAX_CODE_ENTROPY_HIDDEN`` hidden units (each update enumerates 2**n_hidden states
#: per row). Measured on the encoders of ``benchmarks/bench_boltzmann.py``: exact learning
#: reached the optimum for 9/20 (4-2-4) and 0/10 (8-3-8) seeds without the bonus, 20/20
#: and 12/12 with weight 4 (1 -> 19/20 and 7/12, 2 -> 10/12, 8 -> 12/12).
AUTO_CODE_ENTROPY = 4.0
MAX_CODE_ENTROPY_HIDDEN = 12

#: The bonus decreases linearly from its weight to zero at this fraction of ``n_iter``.
CODE_ENTROPY_SPAN = 0.5

#: The z_estimator that "auto" picks for each learning method: the estimate of log Z
#: that follows the same approximation as the learning rule's negative phase.
AUTO_Z_ESTIMATOR = {"exact": "exact", "gibbs": "ais", "mean_field": "mean_field"}


def _hidden_uncoupled(view):
    """Whether no two hidden units are coupled (so P(h | v) factorises)."""
    n_visible = view.n_visible
    return not np.any(view.coupling[n_visible:, n_visible:])


def _hidden_sum_is_exact(view):
    """Whether the hidden units can be summed out exactly: uncoupled, or few enough."""
    return view.n_hidden <= MAX_ENUMERATED_HIDDEN or _hidden_uncoupled(view)


def connectivity_mask(connectivity, n_visible, n_hidden):
    """The boolean (n_units, n_units) coupling mask: symmetric, False on the diagonal."""
    n_units = n_visible + n_hidden
    if isinstance(connectivity, str):
        mask = np.ones((n_units, n_units), dtype=bool)
        hidden = slice(n_visible, None)
        if connectivity in ("no_hidden_hidden", "bipartite"):
            mask[hidden, hidden] = False
        if connectivity == "bipartite":
            mask[:n_visible, :n_visible] = False
    else:
        mask = np.array(connectivity, dtype=bool)
        if mask.shape != (n_units, n_units):
            raise ValueError(
                f"connectivity mask must have shape (n_units, n_units) = ({n_units}, "
                f"{n_units}) with the {n_visible} visible units first, got {mask.shape}."
            )
        if not np.array_equal(mask, mask.T):
            raise ValueError("connectivity mask must be symmetric.")
    np.fill_diagonal(mask, False)
    return mask


def code_entropy_gradient(view, batch, usage, usage_rate):
    """Gradient of the entropy of the hidden codes' distribution on the data, and its update.

    The codes' distribution is qbar(h) = mean over rows of P(h | v). With g(h) =
    -log qbar(h), d H(qbar) / d theta = mean over rows of Cov_{P(h | v)}(g(h), phi(v, h))
    / T, phi = s s^T the sufficient statistics: returned in the moment form of the
    learning rule (divide by T like the clamped minus free moments). ``usage`` holds
    qbar as a sliding average over minibatches; it moves ``usage_rate`` of the way to
    this minibatch's mean posterior first (in place; None starts it there).
    """
    H, Q = bm_hidden_code_posteriors(
        batch, view.coupling, view.bias, view.n_visible, view.temperature
    )
    batch_usage = Q.mean(axis=0)
    if usage is None:
        usage = batch_usage
    else:
        usage += usage_rate * (batch_usage - usage)
    surprise = -np.log(np.maximum(usage, np.finfo(np.float64).tiny))
    weights = Q * (surprise - (Q @ surprise)[:, None])
    weights /= batch.shape[0]
    return bm_code_moments(batch, H, weights), usage


class BoltzmannMachine(BoltzmannBase):
    """General Boltzmann machine with a true log-likelihood.

    Binary units s = (v, h), visible units first, with symmetric couplings W (zero
    diagonal, zero outside the ``connectivity`` mask) and biases b:
    E(s) = -1/2 s^T W s - b^T s and p(s) proportional to exp(-E(s) / T). Trained by the
    Boltzmann learning rule (Ackley, Hinton & Sejnowski 1985): each update moves W and b
    by the difference of the clamped and free second moments (divided by T), which is
    the exact log-likelihood gradient; the ``learning`` method says how both phases
    are computed.

    Parameters
    ----------
    n_hidden : int, default=8
        Number of hidden units; 0 gives a fully visible machine.
    connectivity : {"full", "no_hidden_hidden", "bipartite"} or array-like of bool, \
            default="full"
        Which pairs of units are coupled: all, all but hidden-hidden pairs, only
        visible-hidden pairs (a restricted Boltzmann machine), or a symmetric boolean
        mask of shape (n_features + n_hidden, n_features + n_hidden), visible units
        first (its diagonal is ignored).
    temperature : float, default=1.0
        T in p(s) proportional to exp(-E(s) / T).
    learning : {"gibbs", "exact", "mean_field"} or BMLearningStrategy, default="gibbs"
        How the clamped and free statistics are found: block Gibbs sampling
        (:class:`~skboltz.learning.Gibbs`, optionally with simulated annealing), exact
        enumeration (:class:`~skboltz.learning.ExactGradient`, small models only) or
        mean field (:class:`~skboltz.learning.MeanFieldGradient`, the deterministic
        Boltzmann machine); or a strategy object, which is cloned (one of these, or
        your own subclass of :class:`~skboltz.learning.BMLearningStrategy`).
    z_estimator : {"auto", "exact", "ais", "mean_field", "tap", "visited_states"} \
            or ZEstimator, default="auto"
        How log Z is found for ``score_samples``. "auto" enumerates exactly when the
        machine has at most 2**20 states; above that it follows ``learning``: gibbs ->
        "ais", mean_field -> "mean_field". The other names are the estimators of
        :mod:`skboltz.partition`, or pass an estimator object (cloned). Recorded in
        ``z_estimator_``.
    learning_rate : float, default=0.5
        Step size on the mean minibatch gradient (of the log-likelihood times the
        temperature), in the moving-average form of momentum shared with
        :class:`RBM`: a steady gradient moves the parameters by ``learning_rate``
        times the gradient per update whatever the momentum; 0.5 gives the step that
        0.05 gave with the earlier default, classic momentum 0.9.
    batch_size : int, default=10
        Rows per minibatch; reshuffled every epoch.
    n_iter : int, default=20
        Number of epochs (passes over the data) for ``fit``.
    momentum : float or (float, float), default=(0.5, 0.9)
        Momentum of the updates, as a moving average: velocity <- momentum * velocity
        + (1 - momentum) * learning_rate * gradient, then parameters += velocity. It
        smooths the updates over about 1 / (1 - momentum) of them. A pair means the
        first value for the first 5 epochs and the second afterwards.
    weight_decay : float, default=1e-4
        L2 penalty on the couplings (not the biases).
    centering : bool, default=True
        Follow the centred gradient (Montavon & Mueller 2012): each update is the
        gradient step in the parametrisation E(s) = -1/2 (s - mu)^T W (s - mu) -
        c^T (s - mu), with offsets mu = the data rates for the visible units and a
        sliding average of the clamped means for the hidden units (starting at 1/2).
        Couplings then move by the difference of clamped and free covariances about
        mu, and the biases by the difference of means minus that coupling step
        times mu. The model (``coupling_``, ``bias_``) and the fixed points of learning
        are the same; what changes is the path. Without it, binary units drift
        together (hidden units tend to turn on for every pattern as the couplings
        grow), which leaves hidden codes unused: on the 4-2-4 encoder (see
        ``benchmarks/bench_boltzmann.py``, without the ``code_entropy`` bonus) exact
        learning reached the optimum for 0 of 20 seeds uncentred and 9 of 20 centred
        (the other runs end with two patterns sharing a hidden code, a local optimum
        of the likelihood).
    code_entropy : "auto" or float, default="auto"
        Weight w of a bonus for using the hidden states evenly. Training follows the
        gradient of the log-likelihood plus w * H(qbar), where qbar(h) is the mean over
        the training rows of P(h | v) (the distribution of the data's hidden codes) and
        H its entropy; w decreases linearly from its value to 0 at half of ``n_iter``,
        so the second half of training follows the likelihood alone. Gradient ascent
        on the likelihood alone often settles with two inputs sharing one hidden code
        while another code goes unused (a local optimum); the bonus pays for moving to
        the unused code. "auto" is 4.0 with at most 12 hidden units and 0 with more
        (each update enumerates the 2**n_hidden hidden states of every row); 0 turns
        it off. On the encoders of ``benchmarks/bench_boltzmann.py``, exact learning
        reached the optimum for 9 of 20 (4-2-4) and 0 of 10 (8-3-8) seeds without the
        bonus and for every seed with it.
    n_init : int, default=1
        Number of training runs from different starting points; ``fit`` keeps the
        one with the highest mean log-likelihood of the training rows (through
        ``z_estimator``), as :class:`~sklearn.mixture.GaussianMixture` does. The runs'
        starting points, minibatch orders and samples are drawn from
        ``random_state``. ``partial_fit`` always continues a single run.
    {monitoring}
    verbose : int, default=0
        Print a progress line per epoch when positive.
    random_state : int, RandomState instance or None, default=None
        Seeds initialisation, minibatch order, sampling and the log Z estimate.

    Attributes
    ----------
    coupling_ : ndarray of shape (n_units, n_units)
        Symmetric couplings W, zero on the diagonal and outside the mask; visible units
        first (n_units = ``n_features_in_ + n_hidden``).
    bias_ : ndarray of shape (n_units,)
        Biases b, visible units first.
    connectivity_mask_ : ndarray of bool, shape (n_units, n_units)
        The coupling mask used.
    learning_ : LearningStrategy
        The learning strategy used (a clone of ``learning`` or its default object).
    z_estimator_ : ZEstimator
        The log Z estimator that ``score_samples`` uses.
    n_iter_ : int
        Epochs trained so far.
    history_ : dict of lists
        Per-epoch training records: time, reconstruction error, free energies and the
        overfitting gap, log-likelihoods when monitored (see ``history_``'s docstring).
    n_features_in_ : int
        Number of features (visible units) seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when they are all strings.

    See Also
    --------
    skboltz.RBM : The restricted special case, with block Gibbs sampling.

    Notes
    -----
    ``score_samples`` is log p(v) = -free_energy(v) - log Z. The hidden units are summed
    out exactly: in closed form when they are not coupled to each other, by enumerating
    their states when there are at most 16 of them; otherwise the sum over the hidden
    units of each row is itself a partition function, estimated with ``z_estimator_``
    on the conditional model of the hidden units given the row (seeded from the row, so
    scores stay deterministic and row-wise). ``transform`` is exact in the same cases
    and otherwise returns the mean-field magnetisations of the hidden units.

    References
    ----------
    D. H. Ackley, G. E. Hinton and T. J. Sejnowski, "A learning algorithm for Boltzmann
    machines", Cognitive Science 9, 1985.
    G. Montavon and K.-R. Mueller, "Deep Boltzmann machines and the centering trick",
    Neural Networks: Tricks of the Trade, 2nd ed., LNCS 7700, 2012.
    J. Melchior, A. Fischer and L. Wiskott, "How to center deep Boltzmann machines",
    JMLR 17, 2016.
    A. Krause, P. Perona and R. G. Gomes, "Discriminative clustering by regularized
    information maximization", NIPS 2010 (the entropy of the mean cluster posterior
    as a term that balances the clusters, the idea of ``code_entropy``).
    C. Peterson and J. R. Anderson, "A mean field theory learning algorithm for neural
    networks", Complex Systems 1, 1987.
    H. J. Kappen and F. B. Rodriguez, "Efficient learning in Boltzmann machines using
    linear response theory", Neural Computation 10, 1998.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz import BoltzmannMachine
    >>> X = np.random.default_rng(0).integers(0, 2, size=(100, 6))
    >>> bm = BoltzmannMachine(n_hidden=2, learning="exact", n_iter=5, random_state=0)
    >>> bm.fit(X).coupling_.shape
    (8, 8)
    >>> bm.transform(X).shape
    (100, 2)
    >>> bool(bm.score(X) < 0)  # mean exact log-likelihood in nats
    True
    """

    _model_kind = "bm"

    _parameter_constraints = {
        "n_hidden": [Interval(Integral, 0, None, closed="left")],
        "connectivity": [StrOptions({"full", "no_hidden_hidden", "bipartite"}), "array-like"],
        "temperature": [Interval(Real, 0, None, closed="neither")],
        "learning": [StrOptions(set(LEARNING_STRATEGIES["bm"])), BMLearningStrategy],
        "centering": ["boolean"],
        "code_entropy": [StrOptions({"auto"}), Interval(Real, 0, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        **TRAINING_CONSTRAINTS,
        **MONITORING_CONSTRAINTS,
    }

    def __init__(
        self,
        n_hidden=8,
        *,
        connectivity="full",
        temperature=1.0,
        learning="gibbs",
        z_estimator="auto",
        learning_rate=0.5,
        batch_size=10,
        n_iter=20,
        momentum=(0.5, 0.9),
        weight_decay=1e-4,
        centering=True,
        code_entropy="auto",
        n_init=1,
        validation_fraction=None,
        n_iter_no_change=None,
        tol=1e-4,
        monitor_likelihood=False,
        verbose=0,
        random_state=None,
    ):
        self.n_hidden = n_hidden
        self.connectivity = connectivity
        self.temperature = temperature
        self.learning = learning
        self.z_estimator = z_estimator
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.n_iter = n_iter
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.centering = centering
        self.code_entropy = code_entropy
        self.n_init = n_init
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.monitor_likelihood = monitor_likelihood
        self.verbose = verbose
        self.random_state = random_state

    __doc__ = __doc__.replace("{monitoring}", MONITORING_PARAMETERS_DOC)

    # -- strategy resolution -------------------------------------------------------
    def _auto_z_estimator(self, view):
        # Exact whenever it is cheap: both faster and exact for small machines. Beyond
        # that, the estimator that makes the same approximation as the learning method.
        if 2**view.n_enumerated_units <= AUTO_EXACT_MAX_STATES:
            return "exact"
        learning = self.learning
        name = learning if isinstance(learning, str) else getattr(learning, "name", "")
        name = AUTO_Z_ESTIMATOR.get(name, "ais")
        return name if name in Z_ESTIMATORS else "exact"

    # -- restarts ------------------------------------------------------------------
    def fit(self, X, y=None):
        """Fit the model to ``X`` from fresh starts, keeping the best of ``n_init`` runs.

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
        self._validate_params()
        if self.n_init == 1:
            return super().fit(X, y)
        rng = make_generator(self.random_state)
        seeds = rng.integers(np.iinfo(np.int32).max, size=self.n_init)
        best, best_score = None, -np.inf
        for k, seed in enumerate(seeds):
            run = clone(self).set_params(n_init=1, random_state=int(seed))
            with warnings.catch_warnings():
                if k:  # the first run has said what there is to say about X
                    warnings.simplefilter("ignore", DataRangeWarning)
                run.fit(X)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DataRangeWarning)  # fit has warned
                score = run.score(X)
            if best is None or score > best_score:
                best, best_score = run, score
        # Adopt the best run's fitted state; the parameters stay the user's.
        parameters = self.get_params(deep=False)
        for key, value in vars(best).items():
            if key not in parameters:
                setattr(self, key, value)
        return self

    # -- training hooks ------------------------------------------------------------
    def _training_product_size(self, X):
        n_units = X.shape[1] + self.n_hidden
        return max(self._effective_batch_size(X), 100) * n_units * n_units

    def _training_bytes(self, X):
        # ~8 coupling-sized float arrays (parameters, velocity, moments of both phases,
        # the sweep's copies) and the boolean mask.
        n_units = X.shape[1] + self.n_hidden
        return (8 * np.dtype(X.dtype).itemsize + 1) * n_units * n_units

    def _size_description(self, X):
        n_units = X.shape[1] + self.n_hidden
        return (
            f"A Boltzmann machine with {n_units} units ({X.shape[1]} visible, "
            f"{self.n_hidden} hidden; {n_units}**2 couplings)",
            "Use fewer hidden units (n_hidden), or an RBM for many hidden units.",
        )

    def _new_training_state(self, X, learning, rng):
        dtype = X.dtype
        n_visible = X.shape[1]
        n_units = n_visible + self.n_hidden
        mask = connectivity_mask(self.connectivity, n_visible, self.n_hidden)
        data_rates = np.asarray(X.mean(axis=0), dtype=np.float64).ravel()
        # params[:-1] holds the couplings W, params[-1] the biases b.
        params = np.zeros((n_units + 1, n_units), dtype=dtype)
        noise = np.triu(rng.normal(0.0, 0.01, size=(n_units, n_units)), 1)
        params[:-1] = (noise + noise.T) * mask
        params[-1, :n_visible] = logit_of_rates(data_rates)
        state = BMTrainingState(
            params=params,
            velocity=np.zeros_like(params),
            mask=mask,
            rng=rng,
            data_rates=data_rates,
            # Centring offsets mu: visible = data rates (clipped like the bias start),
            # hidden = 1/2 then a sliding mean of the clamped means.
            offset=np.concatenate([clipped_rates(data_rates), np.full(self.n_hidden, 0.5)]),
            code_entropy=self._code_entropy_weight(),
        )
        view = self._model_view_of(state)
        state.sampler = learning.init_state(view, X, self._effective_batch_size(X), rng)
        return state

    def _code_entropy_weight(self):
        if self.code_entropy == "auto":
            return AUTO_CODE_ENTROPY if self.n_hidden <= MAX_CODE_ENTROPY_HIDDEN else 0.0
        if self.code_entropy > 0 and self.n_hidden > MAX_CODE_ENTROPY_HIDDEN:
            raise ValueError(
                f"code_entropy={self.code_entropy} needs the 2**n_hidden hidden states of "
                f"every row at each update; n_hidden={self.n_hidden} is more than "
                f"{MAX_CODE_ENTROPY_HIDDEN}. Use code_entropy='auto' or 0."
            )
        return float(self.code_entropy)

    def _training_params(self, dtype):
        params = np.empty((self.coupling_.shape[0] + 1, self.coupling_.shape[0]), dtype=dtype)
        params[:-1] = self.coupling_
        params[-1] = self.bias_
        return params

    def _train_epoch(self, X, state, learning):
        params, velocity, rng = state.params, state.velocity, state.rng
        mask = state.mask
        view = self._model_view_of(state)
        momentum, lr_step = momentum_and_step(self._momentum_at(state.n_iter), self.learning_rate)
        progress = self._progress(state)
        step = lr_step / self.temperature  # the gradient of log p carries 1 / T
        decay = lr_step * self.weight_decay
        coupling, coupling_velocity = params[:-1], velocity[:-1]
        offset, n_visible = state.offset, X.shape[1]
        bonus_weight = state.code_entropy * max(0.0, 1.0 - progress / CODE_ENTROPY_SPAN)
        usage_rate = min(1.0, self.batch_size / X.shape[0])
        order = rng.permutation(X.shape[0])
        for start in range(0, X.shape[0], self.batch_size):
            batch = as_dense(X[order[start : start + self.batch_size]])
            positive = learning.positive_phase(view, batch, state.sampler, rng)
            negative = learning.negative_phase(view, batch, state.sampler, rng, progress)
            difference = positive - negative
            difference += difference.T
            difference *= 0.5  # exactly symmetric
            if bonus_weight > 0 and self.n_hidden > 0:
                bonus, state.code_usage = code_entropy_gradient(
                    view, batch, state.code_usage, usage_rate
                )
                difference += bonus_weight * bonus
            means = np.diagonal(difference).copy()
            if self.centering:
                # Covariances about the offsets: the gradient in centred coordinates.
                correction = np.outer(offset, means)
                correction += correction.T  # summed first: stays exactly symmetric
                difference -= correction
            # velocity holds the coupling step and the (centred) bias step.
            scaled_gradient = np.empty_like(velocity)
            np.multiply(step, np.where(mask, difference, 0.0), out=scaled_gradient[:-1])
            np.multiply(step, means, out=scaled_gradient[-1])
            momentum_step(velocity, scaled_gradient, momentum, coupling_velocity, coupling, decay)
            params += velocity
            if self.centering:
                # b = c - W mu: a step of W at fixed c moves b by -(step of W) mu.
                params[-1] -= coupling_velocity @ offset
                hidden_means = np.diagonal(positive)[n_visible:]
                offset[n_visible:] += OFFSET_RATE * (hidden_means - offset[n_visible:])

    def _reconstruction_error(self, view, rows):
        rows = rows.astype(np.float64, copy=False)
        return float(np.mean((rows - self._reconstruction(view, rows)) ** 2))

    def _reconstruction(self, view, V):
        """P(v_i = 1 | the other visible units, h = P(h | v)) of rows ``V`` (float64)."""
        view = view.astype(np.float64)
        V = V.astype(np.float64, copy=False)
        S = np.hstack([V, self._hidden_marginals(view, V)])
        return view.unit_probability(S)[:, : view.n_visible]

    def _fitted_attributes(self, state):
        params = state.params
        return {
            "coupling_": params[:-1].copy(),
            "bias_": params[-1].copy(),
            "connectivity_mask_": state.mask.copy(),
            "_sampling_rng": np.random.default_rng(state.sampling_seed),
        }

    def _model_view_of(self, state):
        if state is not None:
            params = state.params
            n_visible = params.shape[1] - self.n_hidden
            return BMView(params[:-1], params[-1], n_visible, float(self.temperature),
                          state.mask)
        return BMView(self.coupling_, self.bias_, self.n_features_in_, float(self.temperature),
                      self.connectivity_mask_)

    @property
    def _n_features_out(self):
        return self.coupling_.shape[0] - self.n_features_in_

    def _divergence_hint(self, X):
        if self.temperature < 1e-3:
            return (
                f"temperature={self.temperature:g} divides every update by T, which "
                "makes the steps huge; use a temperature near 1 or scale learning_rate "
                "with it."
            )
        return super()._divergence_hint(X)

    def _free_energy_is_exact(self, view):
        # Closed form, or a sum over at most 2**10 hidden states per row.
        return _hidden_uncoupled(view) or view.n_hidden <= 10

    # -- inference -----------------------------------------------------------------
    @staticmethod
    def _hidden_marginals(view, V):
        """P(h = 1 | v): exact when feasible, else mean-field magnetisations (float64)."""
        n_visible = view.n_visible
        if view.n_hidden == 0:
            return np.zeros((V.shape[0], 0))
        if _hidden_sum_is_exact(view):
            return view.hidden_probability(V)
        J, c = view.coupling_matrix(), view.bias_vector()
        start = np.empty((V.shape[0], view.n_units))
        start[:, :n_visible] = V
        start[:, n_visible:] = sigmoid(V @ J[:n_visible, n_visible:] + c[n_visible:])
        M, _ = bm_mean_field(J, c, start, n_visible)
        return M[:, n_visible:]

    def transform(self, X):
        """Hidden-unit marginals P(h_j = 1 | v) of each row.

        Exact when the hidden units are not coupled to each other or there are at most
        16 of them (enumerated); otherwise the mean-field magnetisations with the visible
        units clamped. With ``n_hidden=0`` the result has no columns.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Visible rows.

        Returns
        -------
        H : ndarray of shape (n_samples, n_hidden)
            P(h_j = 1 | v) for each row, in the dtype of ``X``.
        """
        check_is_fitted(self, "_training_state")
        X = self._validate_X(X, reset=False)
        V = as_dense(X).astype(np.float64)
        view = self._model_view().astype(np.float64)
        return self._hidden_marginals(view, V).astype(X.dtype, copy=False)

    def free_energy(self, X):
        """Free energy of each row in units of T: -log sum_h exp(-E(v, h) / T), float64.

        ``log p(v) = -free_energy(v) - log Z``. The hidden units are summed out exactly
        (closed form, or enumeration of at most 16 coupled hidden units); beyond that
        the sum is estimated per row with ``z_estimator_`` (see the class Notes).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Visible rows.

        Returns
        -------
        free_energy : ndarray of shape (n_samples,)
            F(v) / T per row, in float64.
        """
        check_is_fitted(self, "_training_state")
        X = self._validate_X(X, reset=False)
        return self._free_energy_of(self._model_view(), as_dense(X))

    def _free_energy_of(self, view, V):
        view = view.astype(np.float64)
        V = V.astype(np.float64)
        if _hidden_sum_is_exact(view):
            return view.free_energy(V)
        return -self._estimated_hidden_log_sums(view, V)

    def _estimated_hidden_log_sums(self, view, V):
        """log sum_h exp(-E(v, h)/T) per row, by the z estimator on p(h | v), seeded per row."""
        n_visible = view.n_visible
        J = view.coupling_matrix()
        c = view.bias_vector()
        visible_part = 0.5 * np.einsum("ni,ni->n", V @ J[:n_visible, :n_visible], V)
        visible_part += V @ c[:n_visible]
        # During the first fit (monitoring) nothing is published yet.
        fitted = hasattr(self, "_training_state")
        estimator = (
            self.z_estimator_ if fitted else self._resolve_z_estimator(self.z_estimator, view)
        )
        seed = self._training_state.log_z_seed if fitted else 0
        out = np.empty(V.shape[0])
        for row, v in enumerate(V):
            rng = np.random.default_rng([seed, zlib.crc32(v.tobytes())])
            conditional = view.conditional_hidden_view(v)
            out[row] = estimator.estimate(conditional, rng=rng).value
        return out + visible_part

    def reconstruct(self, X):
        """Mean-field reconstruction of each row.

        Each visible unit's probability of being on given the row's other visible
        units and the hidden units at their marginals P(h = 1 | v) (exact or mean
        field, as in :meth:`transform`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Visible rows.

        Returns
        -------
        X_reconstructed : ndarray of shape (n_samples, n_features)
            The reconstruction probabilities, in the dtype of ``X``.
        """
        check_is_fitted(self, "_training_state")
        X = self._validate_X(X, reset=False)
        return self._reconstruction(self._model_view(), as_dense(X)).astype(X.dtype, copy=False)

    def gibbs(self, v, random_state=None):
        """One Gibbs step v -> h -> v from each row of ``v``.

        The hidden units are drawn given the row (exactly when they are not coupled to
        each other; otherwise by one block Gibbs sweep over them, started from
        independent draws of their marginals), then the visible units by one
        block Gibbs sweep given the hidden units, at the model's temperature.

        Parameters
        ----------
        v : array-like of shape (n_samples, n_features)
            Starting visible states.
        random_state : int, RandomState, Generator or None, default=None
            None continues the model's own sampling stream (like ``RBM.gibbs``).

        Returns
        -------
        v_new : ndarray of shape (n_samples, n_features)
            Binary visible states after one step, in the dtype of ``v``.
        """
        check_is_fitted(self, "_training_state")
        v = as_dense(self._validate_X(v, reset=False))
        rng = self._sampling_rng if random_state is None else make_generator(random_state)
        view = self._model_view().astype(v.dtype)
        n_visible = view.n_visible
        S = np.empty((v.shape[0], view.n_units), dtype=v.dtype, order="F")
        S[:, :n_visible] = v
        marginals = self._hidden_marginals(view.astype(np.float64), v)
        S[:, n_visible:] = rng.random(marginals.shape) < marginals
        hidden, visible = np.arange(n_visible, view.n_units), np.arange(n_visible)
        mask = view.coupling_mask
        if view.n_hidden and not _hidden_uncoupled(view):
            bm_gibbs_sweep(S, view.coupling, view.bias, rng, view.temperature, hidden, mask)
        bm_gibbs_sweep(S, view.coupling, view.bias, rng, view.temperature, visible, mask)
        return np.ascontiguousarray(S[:, :n_visible])

    def sample(self, n_samples=1, random_state=None, n_steps=1000):
        """Draw visible samples by block Gibbs sampling.

        Chains start with the visible units drawn at the training data's rates and the
        hidden units at 1/2, and run ``n_steps`` block Gibbs sweeps at the temperature
        (units that share no coupling in ``connectivity_mask_`` are drawn together).

        Parameters
        ----------
        n_samples : int, default=1
            Number of samples (independent chains).
        random_state : int, RandomState, Generator or None, default=None
            None uses the estimator's ``random_state`` (an int seed gives the same
            samples on every call).
        n_steps : int, default=1000
            Gibbs steps per chain, each a sweep over all units.

        Returns
        -------
        samples : ndarray of shape (n_samples, n_features)
            Binary visible states.
        """
        check_is_fitted(self, "_training_state")
        n_samples = check_count(n_samples, "n_samples", 1)
        n_steps = check_count(n_steps, "n_steps", 0)
        rng = make_generator(self.random_state if random_state is None else random_state)
        view = self._model_view()
        probability = np.full((n_samples, view.n_units), 0.5)
        probability[:, : view.n_visible] = self._training_state.data_rates
        S = np.asfortranarray(rng.random(probability.shape) < probability, dtype=view.dtype)
        # Prepared once: block Gibbs, coloured by the connectivity mask.
        sweep = GibbsSweep(view.coupling, view.bias, None, view.dtype, view.coupling_mask)
        for _ in range(n_steps):
            sweep(S.T, sweep.noise(rng, n_samples), view.temperature)
        return np.ascontiguousarray(S[:, : view.n_visible])
