"""General Boltzmann machine with visible and hidden units and any symmetric couplings."""

import warnings
import zlib
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone

from ..core._base import TRAINING_CONSTRAINTS, BoltzmannBase
from ..models._boltzmann_energy import (
    BMLayout,
    BMView,
    bm_code_moments,
    bm_hidden_code_posteriors,
)
from ..core._divergence import DivergenceCheck
from ..core._independence import BelowIndependentCheck
from ..utils._energy import clipped_rates, column_means, logit_of_rates
from ..core._monitoring import MONITORING_CONSTRAINTS, MONITORING_PARAMETERS_DOC
from ..utils._runtime import make_generator
from ..utils._sklearn import Interval, StrOptions
from ..core._strategies import document_strategy_options, strategy_constraints
from ..core._training import TrainingState, copied, shared
from ..utils._validation import as_dense
from ..utils._weights import FIT_SAMPLE_WEIGHT_DOC, mean_square, weighted_phase
from ..exceptions import DataRangeWarning
from ..learning import MeanFieldGradient

#: Hidden centring offsets move this fraction of the way to the minibatch's clamped
#: hidden means at each update (the sliding average of Melchior et al. 2016).
OFFSET_RATE = 0.01

#: ``code_entropy="auto"``: the bonus weight at the start of training, used with up to
#: ``MAX_CODE_ENTROPY_HIDDEN`` hidden units (each update enumerates 2**n_hidden states
#: per row). Measured on the encoders of ``benchmarks/bench_boltzmann.py``: exact learning
#: reached the optimum for 9/20 (4-2-4) and 0/10 (8-3-8) seeds without the bonus, 20/20
#: and 12/12 with weight 4 (1 -> 19/20 and 7/12, 2 -> 10/12, 8 -> 12/12).
#: learning_rate="auto": the step of exact and Gibbs learning, and of mean-field learning,
#: whose short steps (a fraction of the likelihood gradient's length) need twice it.
AUTO_STEP = 0.5
AUTO_STEP_MEAN_FIELD = 1.0
AUTO_CODE_ENTROPY = 4.0
MAX_CODE_ENTROPY_HIDDEN = 12

#: The bonus decreases linearly from its weight to zero at this fraction of ``n_iter``.
CODE_ENTROPY_SPAN = 0.5

@dataclass(eq=False, kw_only=True)
class BMTrainingState(TrainingState):
    """Training state of :class:`BoltzmannMachine`."""

    #: Which couplings exist (the ``connectivity``).
    mask: np.ndarray = shared()
    #: Centring offsets: visible = clipped data rates, hidden = a sliding mean of the
    #: clamped means (updated in place).
    offset: np.ndarray = copied()
    #: Weight of the code-entropy bonus at the start, and the data's mean P(h | v) it
    #: tracks (None until the bonus first runs; updated in place).
    code_entropy: float = shared(default=0.0)
    code_usage: np.ndarray | None = copied(default=None)


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
        np.fill_diagonal(mask, False)
        return mask
    return _checked_mask(connectivity, n_visible, n_hidden)


def _checked_mask(connectivity, n_visible, n_hidden):
    """A user's connectivity mask as booleans, refusing anything but a symmetric 0/1
    (or boolean) matrix of the right shape with a zero diagonal.

    ``np.array(mask, dtype=bool)`` alone would turn 0.5, NaN or any string into True
    (full connectivity) without a word.
    """
    n_units = n_visible + n_hidden
    values = np.asarray(connectivity)
    if values.shape != (n_units, n_units):
        raise ValueError(
            f"connectivity mask must have shape (n_units, n_units) = ({n_units}, "
            f"{n_units}) with the {n_visible} visible units first, got {values.shape}."
        )
    if values.dtype != bool:
        numeric = values.dtype.kind in "iuf"
        if not numeric or not np.all((values == 0) | (values == 1)):
            raise ValueError(
                "connectivity mask must hold booleans or 0/1 values (True or 1: the two "
                f"units are coupled); got entries of dtype {values.dtype} such as "
                f"{_first_bad_entry(values, numeric)!r}."
            )
    mask = values.astype(bool)
    if np.any(np.diagonal(mask)):
        raise ValueError(
            "connectivity mask must have a zero (False) diagonal: a unit is never coupled "
            f"to itself; unit(s) {np.flatnonzero(np.diagonal(mask))[:5].tolist()} are."
        )
    if not np.array_equal(mask, mask.T):
        raise ValueError("connectivity mask must be symmetric.")
    return mask


def _first_bad_entry(values, numeric):
    """The first entry of a would-be mask that is not 0 or 1, for the error message."""
    if numeric:
        return values[~((values == 0) | (values == 1))].ravel()[0].item()
    return values.ravel()[0] if values.size else None


def code_entropy_gradient(view, batch, usage, usage_rate, weights=None):
    """Gradient of the entropy of the hidden codes' distribution on the data, and its update.

    The codes' distribution is qbar(h) = mean over rows of P(h | v). With g(h) =
    -log qbar(h), d H(qbar) / d theta = mean over rows of Cov_{P(h | v)}(g(h), phi(v, h))
    / T, phi = s s^T the sufficient statistics: returned in the moment form of the
    learning rule (divide by T like the clamped minus free moments). ``usage`` holds
    qbar as a sliding average over minibatches; it moves ``usage_rate`` of the way to
    this minibatch's mean posterior first (in place; None starts it there). In a
    weighted fit the rows count by their relative ``weights`` in every mean.
    """
    H, Q = bm_hidden_code_posteriors(
        batch, view.coupling, view.bias, view.n_visible, view.temperature
    )
    row_shares = None if weights is None else weights[:, None] / batch.shape[0]
    batch_usage = Q.mean(axis=0) if weights is None else (Q * row_shares).sum(axis=0)
    if usage is None:
        usage = batch_usage
    else:
        usage += usage_rate * (batch_usage - usage)
    surprise = -np.log(np.maximum(usage, np.finfo(np.float64).tiny))
    code_weights = Q * (surprise - (Q @ surprise)[:, None])
    if weights is None:
        code_weights /= batch.shape[0]
    else:
        code_weights *= row_shares
    return bm_code_moments(batch, H, code_weights), usage


class BMDivergenceCheck(DivergenceCheck):
    """:class:`BoltzmannMachine`'s divergence check: a tiny temperature comes first
    among the hints."""

    def hint(self, X, state=None, learning=None):
        temperature = self.estimator.temperature
        if temperature < 1e-3:
            return (
                f"temperature={temperature:g} divides every update by T, which "
                "makes the steps huge; use a temperature near 1 or scale learning_rate "
                "with it."
            )
        return super().hint(X, state, learning)


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
        first, with a False diagonal (0/1 values are accepted too).
    temperature : float, default=1.0
        T in p(s) proportional to exp(-E(s) / T).
    learning : {learning_options} or BMLearningStrategy, default="gibbs"
        How the clamped and free statistics are found: block Gibbs sampling
        (:class:`~skboltz.learning.Gibbs`, optionally with simulated annealing), exact
        enumeration (:class:`~skboltz.learning.ExactGradient`, small models only) or
        mean field (:class:`~skboltz.learning.MeanFieldGradient`, the deterministic
        Boltzmann machine); or a strategy object, which is cloned (one of these, or
        your own subclass of :class:`~skboltz.learning.BMLearningStrategy`).
    z_estimator : {z_estimator_options} \
            or ZEstimator, default="auto"
        How log Z is found for ``score_samples``. "auto" chooses by the machine's size
        only, whatever the ``learning`` method, so that every candidate of a grid
        search is measured the same way: exact enumeration up to 2**20 states, else
        annealed importance sampling (:class:`~skboltz.partition.AIS`, an unbiased
        estimate with a standard error, at most about a minute). The other names are
        the estimators of :mod:`skboltz.partition`, or pass an estimator object
        (cloned). Recorded in ``z_estimator_``. The pairing of the original
        deterministic Boltzmann machine, mean-field learning with a mean-field log Z,
        is ``learning="mean_field", z_estimator="mean_field"``: naive mean field
        bounds log Z from below, so its scores are upper bounds on the
        log-likelihood (optimistic, by an amount that differs between models: 0.8
        to 2.3 nats on 20-unit machines of the digits), and they warn on first use
        (:class:`~skboltz.exceptions.ApproximateScoreWarning`).
    learning_rate : float or "auto", default="auto"
        Step size on the mean minibatch gradient (of the log-likelihood times the
        temperature), in the moving-average form of momentum shared with
        :class:`RBM`: a steady gradient moves the parameters by ``learning_rate``
        times the gradient per update whatever the momentum. ``"auto"`` is 0.5 (the
        step that 0.05 gave with the earlier default, classic momentum 0.9), and 1.0
        under mean-field learning, whose steps follow the likelihood's gradient at a
        fraction of its length (see :class:`~skboltz.learning.MeanFieldGradient`):
        on the 8-3-8 encoder, 2000 mean-field updates at 0.5 solved 16 of 20 seeds
        and at 1.0 all 20, while on a 20-unit machine of the digits 1.0 cost Gibbs
        learning 0.05 nat of held-out log-likelihood and mean-field learning 0.015.
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
        L2 penalty on the couplings (not the biases). As in every estimator, its
        gradient enters the velocity every 16 updates, 16 updates' worth at a time.
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

    _view_class = BMView
    _independence_check_class = BelowIndependentCheck
    _layout = BMLayout
    _structural_parameters = ("n_hidden", "connectivity")
    _inference_dtype = np.float64  # transform and reconstruct compute in float64
    _divergence_check_class = BMDivergenceCheck

    _parameter_constraints = {
        "n_hidden": [Interval(Integral, 0, None, closed="left")],
        "connectivity": [StrOptions({"full", "no_hidden_hidden", "bipartite"}), "array-like"],
        "temperature": [Interval(Real, 0, None, closed="neither")],
        **strategy_constraints(BMView),
        "centering": ["boolean"],
        "code_entropy": [StrOptions({"auto"}), Interval(Real, 0, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        **TRAINING_CONSTRAINTS,
        "learning_rate": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
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
        learning_rate="auto",
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

    __doc__ = document_strategy_options(
        __doc__.replace("{monitoring}", MONITORING_PARAMETERS_DOC), BMView, "gibbs"
    )

    # -- restarts ------------------------------------------------------------------
    def fit(self, X, y=None, sample_weight=None):
        """Fit the model to ``X`` from fresh starts, keeping the best of ``n_init`` runs.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, ideally with values in [0, 1].
        y : None
            Ignored; present for API consistency.
        {sample_weight} The runs are compared by their weighted score.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        if self.n_init == 1:
            return super().fit(X, y, sample_weight=sample_weight)
        rng = make_generator(self.random_state)
        seeds = rng.integers(np.iinfo(np.int32).max, size=self.n_init)
        best, best_score = None, -np.inf
        for k, seed in enumerate(seeds):
            run = clone(self).set_params(n_init=1, random_state=int(seed))
            with warnings.catch_warnings():
                if k:  # the first run has said what there is to say about X
                    warnings.simplefilter("ignore", DataRangeWarning)
                run.fit(X, sample_weight=sample_weight)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DataRangeWarning)  # fit has warned
                score = run.score(X, sample_weight=sample_weight)
            if best is None or score > best_score:
                best, best_score = run, score
        # Adopt the best run's fitted state; the parameters stay the user's.
        parameters = self.get_params(deep=False)
        for key, value in vars(best).items():
            if key not in parameters:
                setattr(self, key, value)
        return self

    fit.__doc__ = fit.__doc__.replace("{sample_weight}", FIT_SAMPLE_WEIGHT_DOC)

    # -- training hooks ------------------------------------------------------------
    def _training_product_size(self, X):
        n_units = X.shape[1] + self.n_hidden
        return max(self._effective_batch_size(X), 100) * n_units * n_units

    def _training_bytes(self, X):
        # ~8 coupling-sized float arrays (parameters, velocity, moments of both phases,
        # the sweep's copies) and the boolean mask.
        n_units = X.shape[1] + self.n_hidden
        return (8 * np.dtype(X.dtype).itemsize + 1) * n_units * n_units

    def _units_per_chain(self, X):
        return X.shape[1] + self.n_hidden

    def _size_description(self, X):
        n_units = X.shape[1] + self.n_hidden
        return (
            f"A Boltzmann machine with {n_units} units ({X.shape[1]} visible, "
            f"{self.n_hidden} hidden; {n_units}**2 couplings)",
            "Use fewer hidden units (n_hidden), or an RBM for many hidden units.",
        )

    def _new_training_state(self, X, y, learning, rng, row_weights=None):
        dtype = X.dtype
        n_visible = X.shape[1]
        n_units = n_visible + self.n_hidden
        mask = connectivity_mask(self.connectivity, n_visible, self.n_hidden)
        data_rates = column_means(X, row_weights)
        params = np.zeros((n_units + 1, n_units), dtype=dtype)  # BMLayout's blocks
        noise = np.triu(rng.normal(0.0, 0.01, size=(n_units, n_units)), 1)
        params[BMLayout.coupling] = (noise + noise.T) * mask
        params[BMLayout.bias][:n_visible] = logit_of_rates(data_rates)
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

    def _learning_rate_of(self, state, learning=None):
        if self.learning_rate != "auto":
            return self.learning_rate
        learning = self.learning_ if learning is None else learning
        return AUTO_STEP_MEAN_FIELD if isinstance(learning, MeanFieldGradient) else AUTO_STEP

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
        return BMLayout.pack(self.coupling_, self.bias_, dtype)

    def _training_model(self, X, params, state, learning):
        return _EpochModel(
            view=self._model_view_of(state),
            # the code-entropy bonus decreases linearly to 0 at CODE_ENTROPY_SPAN
            bonus_weight=state.code_entropy
            * max(0.0, 1.0 - self._progress(state) / CODE_ENTROPY_SPAN),
            usage_rate=min(1.0, self.batch_size / X.shape[0]),
        )

    def _minibatch_gradient(self, model, batch, labels, state, learning, rule,
                            weights=None):
        view, rng = model.view, state.rng
        if weights is None:
            positive = learning.positive_phase(view, batch, state.sampler, rng)
            negative = learning.negative_phase(view, batch, state.sampler, rng,
                                               rule.progress)
        else:  # the rows count by their weights (negative runs that start at them too)
            positive = weighted_phase(learning.positive_phase, learning, view, batch,
                                      state.sampler, rng, weights=weights)
            negative = weighted_phase(learning.negative_phase, learning, view, batch,
                                      state.sampler, rng, rule.progress, weights=weights,
                                      required=False)
        difference = positive - negative
        difference += difference.T
        difference *= 0.5  # exactly symmetric
        if model.bonus_weight > 0 and self.n_hidden > 0:
            bonus, state.code_usage = code_entropy_gradient(
                view, batch, state.code_usage, model.usage_rate, weights
            )
            difference += model.bonus_weight * bonus
        means = np.diagonal(difference).copy()
        if self.centering:
            # Covariances about the offsets: the gradient in centred coordinates.
            correction = np.outer(state.offset, means)
            correction += correction.T  # summed first: stays exactly symmetric
            difference -= correction
            model.clamped_hidden_means = np.diagonal(positive)[view.n_visible :]
        # The gradient step of the couplings and the (centred) biases; the gradient of
        # log p carries 1 / T.
        step = rule.step / self.temperature
        scaled_gradient = np.empty_like(state.velocity)
        np.multiply(step, np.where(state.mask, difference, 0.0),
                    out=scaled_gradient[BMLayout.coupling])
        np.multiply(step, means, out=scaled_gradient[BMLayout.bias])
        return scaled_gradient

    def _parameter_update(self, model, params, state, rule):
        if not self.centering:
            return super()._parameter_update(model, params, state, rule)
        hidden = slice(model.view.n_visible, None)

        def recentre(update):
            # b = c - W mu: a step of W at fixed c moves b by -(step of W) mu.
            offset = state.offset
            params[BMLayout.bias] -= update[BMLayout.coupling] @ offset
            offset[hidden] += OFFSET_RATE * (model.clamped_hidden_means - offset[hidden])

        return super()._parameter_update(model, params, state, rule, after_step=recentre)

    def _reconstruction_error(self, view, rows, weights=None):
        rows = rows.astype(np.float64, copy=False)
        residuals = rows - view.astype(np.float64).reconstruct(rows)
        if weights is not None:
            return mean_square(residuals, weights)
        return float(np.mean(residuals ** 2))

    def _fitted_attributes(self, state):
        params = state.params
        return {
            "coupling_": params[BMLayout.coupling].copy(),
            "bias_": params[BMLayout.bias].copy(),
            "connectivity_mask_": state.mask.copy(),
        }

    def _below_independent_hint(self):
        """What to change when the fitted model is below independent columns."""
        return ("Try a smaller learning_rate, more epochs (n_iter), or fewer hidden "
                f"units (n_hidden={self.n_hidden} now); the density guide says how to "
                "choose.")

    def _model_view_of(self, state):
        if state is not None:
            params = state.params
            n_visible = params.shape[1] - self.n_hidden
            return BMLayout.view(params, n_visible, float(self.temperature), state.mask)
        return BMView(self.coupling_, self.bias_, self.n_features_in_, float(self.temperature),
                      self.connectivity_mask_)

    @property
    def _n_features_out(self):
        return self.coupling_.shape[0] - self.n_features_in_

    def _free_energy_of(self, view, V):
        # F(v) / T: the hidden units summed out exactly where feasible, else estimated
        # per row by the z estimator (see the class Notes).
        view = view.astype(np.float64)
        V = as_dense(V).astype(np.float64)
        if view.hidden_sum_is_exact:
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


class _EpochModel:
    """What the gradient step hands the update within an epoch: the view of the
    parameters, the code-entropy bonus settings, and the minibatch's clamped hidden
    means (which the centring offsets follow)."""

    def __init__(self, view, bonus_weight, usage_rate):
        self.view, self.bonus_weight, self.usage_rate = view, bonus_weight, usage_rate
        self.clamped_hidden_means = None
