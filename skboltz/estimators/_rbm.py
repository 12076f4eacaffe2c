"""Bernoulli restricted Boltzmann machine."""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from ..utils._array_api import ArrayAPIMixin
from ._array_api_rbm import RBMArrayAPI
from ..core._base import TRAINING_CONSTRAINTS
from ..units._layers import BinaryUnits
from ..core._independence import BelowIndependentCheck, rows_are_binary
from ..utils._energy import column_means, logit_of_rates, sigmoid_of_negated
from ..core._monitoring import MONITORING_CONSTRAINTS, MONITORING_PARAMETERS_DOC
from ..models._rbm_energy import AugmentedRBM, RBMLayout, RBMView
from ._restricted import MISSING_ENTRIES_DOC, RestrictedBoltzmannBase
from ..utils._sklearn import Interval, StrOptions
from ..core._strategies import document_strategy_options, strategy_constraints
from ..core._training import AVERAGE_INTERVAL, AveragedTrainingState, shared
from ..utils._weights import mean_square

#: learning_rate="auto" is AUTO_STEP * sqrt(AUTO_STEP_FEATURES / n_features), and at
#: most AUTO_STEP: BernoulliRBM's 0.1 on the 64-pixel digits, smaller on wider rows,
#: whose hidden units sum more weights that one update moves together (measured on
#: real 784-pixel images, see the Notes of RBM: persistent chains lose the model at 0.1
#: and their samples come out too bright).
AUTO_STEP = 0.1
AUTO_STEP_FEATURES = 64
#: ...and at most BINARY_STEP when the first call's rows are all 0/1 (binary tables,
#: binarized images): on the binary density suite (``bench_density.py``; 3 seeds) the
#: wider step overshot five of six tables (test log-likelihood 1.0 to 3.3 nats per row
#: below 0.02, with twice the spread between seeds; DNA's 0.06 was 0.6 nats better);
#: 0.01 was no better on average and its samples were further off on NLTCS. Grey rows
#: (the digits' ``X / 16``) keep the step their features were measured with.
BINARY_STEP = 0.02
#: weight_decay="auto": BINARY_WEIGHT_DECAY when the training rows are all 0/1 (binary
#: tables, binarized images) and the model has at least as many weights as training
#: rows, GREY_WEIGHT_DECAY otherwise (grey levels; small models of many rows). Measured on
#: the binary density suite (``benchmarks/bench_density.py``) and real images
#: (``benchmarks/bench_real_images.py``), see the weight_decay parameter.
BINARY_WEIGHT_DECAY = 1e-2
GREY_WEIGHT_DECAY = 1e-3


#: dtype of the elementwise part of the training loop's hidden probabilities (negate,
#: exp, + 1, the persistent chains' draw, the row-weight division), whatever the
#: model's dtype: on an AVX2 CPU numpy's float64 exp costs ~6 ns per element against
#: ~1.3 ns in float32, the largest cost of a float64 update beyond its matrix products.
#: Its rounding (relative 6e-8 on a probability) is far below the sampling noise of
#: the gradient; the products, parameters, velocity and averaging stay in the model's
#: dtype, and every inference path (transform, scores, free energies) in float64.
SIGMOID_DTYPE = np.dtype(np.float32)


@dataclass(eq=False, kw_only=True)
class RBMTrainingState(AveragedTrainingState):
    """Training state of :class:`RBM`: the averaged iterates, and the fused loop's own."""

    #: The fused loop's minibatch buffers: made on first use, reused by later calls
    #: with as many rows, never pickled.
    minibatches: object = shared(default=None, transient=True)
    #: Whether the first call's rows were all 0/1, and how many there were (what
    #: weight_decay="auto" follows).
    rows_are_binary: bool = shared(default=False)
    n_first_rows: int = shared(default=0)


class RBM(ArrayAPIMixin, RestrictedBoltzmannBase):
    """Bernoulli restricted Boltzmann machine with a true log-likelihood.

    A drop-in replacement for :class:`sklearn.neural_network.BernoulliRBM` (same
    parameter and attribute names where they exist, and the same batch size and
    starting values by default) whose defaults, measured on real images, make features
    that beat the raw pixels for a linear classifier (and ``BernoulliRBM``'s on four
    of five image sets) and a density that is not degenerate (see Notes). It adds weight decay, iterate
    averaging, optional momentum and pluggable negative phases, keeps float32 data in
    float32, and scores with the exact (or estimated, with error bars) log-likelihood
    instead of a pseudo-likelihood.

    The model is p(v, h) proportional to exp(h^T W v + b^T v + c^T h) over binary
    visible v and hidden h units; ``transform`` returns P(h = 1 | v).

    Parameters
    ----------
    n_components : int, default=256
        Number of hidden units.
    learning : {learning_options} or RBMLearningStrategy, \
            default="pcd"
        How the negative-phase statistics are estimated: persistent contrastive
        divergence (:class:`~skboltz.learning.PCD`, the default, with ``batch_size``
        persistent chains), CD-k (:class:`~skboltz.learning.CD`), parallel tempering
        (:class:`~skboltz.learning.ParallelTempering`), the exact gradient by
        enumeration (:class:`~skboltz.learning.ExactGradient`, small models) or the
        TAP free energy (:class:`~skboltz.learning.TAPGradient`); or a strategy object,
        which is cloned (e.g. ``CD(n_steps=(1, 10))``, or your own subclass of
        :class:`~skboltz.learning.RBMLearningStrategy`). The sampling strategies use
        the visible units' means p(v = 1 | h) in the negative statistics by default
        (``negative_visible="auto"`` means ``"mean"`` for an RBM);
        ``PCD(negative_visible="sample")`` is ``BernoulliRBM``'s algorithm. CD-1
        starts its chains at the data and never visits the states far from it, so
        nothing pushes down a mode there: on real handwritten digits a CD-1 model put
        most of its probability on the blank image (see Notes).
    z_estimator : {z_estimator_options} \
            or ZEstimator, default="auto"
        How log Z is found for ``score_samples``: "auto" enumerates exactly when
        ``2 ** min(n_features, n_components) <= 2**20`` and otherwise uses annealed
        importance sampling; the other names are the estimators of
        :mod:`skboltz.partition`, or pass an estimator object (cloned). Recorded in
        ``z_estimator_``.
    learning_rate : float or "auto", default="auto"
        Step size: an update moves the parameters by ``learning_rate`` times the mean
        minibatch gradient (with momentum, once the velocity has built up), which is
        what ``BernoulliRBM``'s ``learning_rate`` means. "auto" is
        ``0.1 * sqrt(64 / n_features)``, at most 0.1, and at most 0.02 when the first
        call's rows are all 0/1 (recorded in ``learning_rate_``): ``BernoulliRBM``'s
        0.1 on the 64-pixel grey digits, 0.029 on 784-pixel grey images, where a hidden
        unit sums 12 times as many weights that each update moves together and
        persistent chains at 0.1 fell behind the model (see Notes); on binary tables
        the wider step overshot, and 0.02 gave held-out log-likelihoods 1.0 to 3.3
        nats per row better on five of six (0.6 worse on DNA; the density user guide
        has the table).
    batch_size : int, default=10
        Rows per minibatch; the minibatches are reshuffled every epoch.
    n_iter : int, default=50
        Number of epochs (passes over the data) for ``fit``.
    momentum : float or (float, float), default=0.0
        Momentum of the updates, in moving-average form: velocity <- momentum *
        velocity + (1 - momentum) * learning_rate * gradient, then parameters +=
        velocity. A steady gradient therefore moves the parameters by ``learning_rate``
        times the gradient whatever the momentum, which only smooths the updates (over
        about 1 / (1 - momentum) of them), so it can be tuned without retuning
        ``learning_rate``. (The classic form adds the undamped ``learning_rate *
        gradient``, which multiplies the step by 1 / (1 - momentum).) A pair means the
        first value for the first 5 epochs and the second afterwards, as in Hinton's
        practical guide. The default is plain steps, as ``BernoulliRBM`` takes them:
        on the digits a momentum of 0.5 gave neither a better held-out likelihood nor
        better features (see Notes).
    weight_decay : float or "auto", default="auto"
        L2 penalty on the weights (not the biases). As in every estimator, its
        gradient enters the velocity every 16 updates, 16 updates' worth at a time.
        "auto" (recorded in ``weight_decay_``) is 1e-2 when the rows of the first call
        are all 0 or 1 (binary tables, binarized images) and the model has at least as
        many weights as rows (``n_components * n_features >= n_samples``), and 1e-3
        otherwise (grey levels; small models of many rows), ten times the 1e-4 of
        Hinton's practical guide or a hundred. On 3000
        binary 784-pixel digit images, a 500-hidden-unit model's held-out
        log-likelihood fell by 17 nats from 10 to 30 epochs with 1e-4 and rose by 6
        with 1e-3. On binary rows 1e-3 still let the 256 default hidden units grow
        sharp modes that the persistent chains lost: on the binary density suite
        (``benchmarks/bench_density.py``) ``RBM()`` with 1e-3 scored below
        independent columns on DNA (-138.9 nats against -100.4) and Jester (-82.6
        against -63.9), and with 1e-2 above them on all six sets; on 4,000 binarized
        MNIST digits (500 hidden units) 1e-2 kept the features (0.941 against 0.942
        test accuracy) and raised the held-out log-likelihood from -140.6 to -108.1
        nats, with samples 1.12 times as bright as the data instead of 1.77. Small
        models of many rows overfit little and lose by the stronger decay (20 hidden
        units: Plants -15.6 against -14.0, Accidents -34.6 against -32.6); on grey
        levels 1e-2 cost the digits' features 0.007 of accuracy (three splits), so
        they keep 1e-3.
    average_window : int or None, default=100
        Iterate averaging (Polyak averaging). Training updates its parameters as
        usual, but the fitted attributes are an exponential moving average of them
        over about this many minibatch updates. The updates are noisy (a constant
        learning rate, few chains), and their average is a better and steadier model:
        on the digits (16 hidden units, 15-20 epochs) it raised the exact held-out
        log-likelihood by 0.1-0.2 nats with the default negative phase and cut the
        epoch-to-epoch drops from about 0.25 nats to 0.05; with PCD's visible samples
        (noisier) it gained 1.2 (scaled) to 3 nats (binarized) over 20-40 epochs.
        While fewer than ``average_window`` updates have been made, the average is the
        plain mean of the parameters so far. It moves every 16 updates, counted across
        ``partial_fit`` calls, and at the end of each epoch, so streaming one minibatch
        per call averages in effect the same way; parameters edited by hand restart
        it. None publishes the last update's parameters, as ``BernoulliRBM`` does.
    visible_bias_init : {"zero", "data_rates"}, default="zero"
        Starting visible biases. "zero" is ``BernoulliRBM``'s start: the pixel rates
        are learnt along with the rest, and on the digits the hidden units came out
        less saturated and made better features for a linear classifier at every
        learning rate tried. "data_rates" is Hinton's practical guide: the logit of
        each feature's mean over the training data (clipped away from 0 and 1), so the
        hidden units start without having to explain the pixel rates; it gave a better
        held-out likelihood (by 0.1-0.3 nats per image on the digits, with PCD) but
        features up to a point less accurate (by 0.002-0.004 with the current
        defaults). The weights start from N(0, 0.01) and the hidden biases at 0 either
        way.
    {monitoring}
    verbose : int, default=0
        Print a progress line per epoch when positive.
    random_state : int, RandomState instance or None, default=None
        Seeds initialisation, minibatch order, sampling and the log Z estimate.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Weight matrix W.
    intercept_hidden_ : ndarray of shape (n_components,)
        Hidden biases c.
    intercept_visible_ : ndarray of shape (n_features,)
        Visible biases b.
    learning_rate_ : float
        The learning rate used (``learning_rate``, or what "auto" resolved to).
    weight_decay_ : float
        The weight decay used (``weight_decay``, or what "auto" resolved to).
    learning_ : LearningStrategy
        The negative-phase strategy used (a clone of ``learning`` or its default object).
    z_estimator_ : ZEstimator
        The log Z estimator that ``score_samples`` uses.
    n_iter_ : int
        Epochs trained so far.
    history_ : dict of lists
        Per-epoch training records: time, reconstruction error, free energies and the
        overfitting gap, log-likelihoods when monitored (see ``history_``'s docstring).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when they are all strings.

    See Also
    --------
    sklearn.neural_network.BernoulliRBM : The RBM of scikit-learn (pseudo-likelihood score).

    Notes
    -----
    The defaults were chosen on real images for both uses at once, features and
    density (``benchmarks/bench_real_images.py``, ``benchmarks/bench_rbm_features.py``;
    the RBM user guide has the tables): persistent chains (PCD, Tieleman 2008) whose
    negative statistics use the visible units' probabilities P(v = 1 | h) instead of
    binary draws (Hinton's practical guide, section 3), 50 epochs, a weight decay of
    1e-3, iterate averaging, and a learning rate of 0.1 on 64 features, smaller on
    wider rows and at most 0.02 on binary rows (``learning_rate="auto"``; on binarized
    MNIST the cap traded 0.006 of the features' accuracy for a better density). On the
    digits (``X / 16``, three stratified
    75/25 splits, ``LogisticRegressionCV`` on top) the features reached 0.978 test
    accuracy against 0.968 for the raw pixels, and with only 300 or 100 labelled rows
    (the RBM trained on all of them) 0.956 and 0.912 against 0.938 and 0.896. On 5,000
    real MNIST digits (28 x 28 grey levels, 500 hidden units) they reached 0.950
    against 0.899 for the pixels and 0.948 for ``BernoulliRBM`` at its best learning
    rate, with a held-out log-likelihood of -119 nats per image against its -143, and
    samples whose mean pixel was the data's. The previous default, CD-1 with the same
    visible means, made features as good on the digits but on real handwritten digits
    put 75 % of its probability on the blank image (every sample blank; a
    :class:`~skboltz.exceptions.DegenerateModelWarning` now says so): CD's chains
    start at the data and never visit such a mode. ``learning="cd"`` remains
    available, and ``learning=PCD(negative_visible="sample")`` is ``BernoulliRBM``'s
    algorithm. The visible means are not better everywhere: on the digits
    ``BernoulliRBM`` at a learning rate of 0.1 keeps a held-out log-likelihood 0.5 nats
    per image better, and in scikit-learn's own RBM example (the digits with shifted
    copies, 100 hidden units, 10 epochs, learning rate 0.06,
    ``LogisticRegression(C=6000)``) features trained with CD-1 and means were less
    accurate than ``BernoulliRBM``'s (0.919 against 0.944), where visible samples
    (``CD(negative_visible="sample")``) matched them. Hinton's data-rate start of the
    visible biases and momentum remain available (``visible_bias_init``,
    ``momentum``).

    Training draws its random numbers in float32 whatever the dtype, and computes the
    elementwise part of the hidden probabilities (the exponential, the sampling
    comparison, the scaling of each row) in float32 too: with AVX2 but no AVX-512,
    numpy's float64 ``exp`` cost about 6 ns per element against 1.3 ns in float32, the
    largest cost of a float64 update beyond its matrix products. The rounding (a
    relative 6e-8 on each probability) is far below the sampling noise of a minibatch
    gradient, and a float32 and a float64 fit with the same ``random_state`` agree to
    float32 precision until one sampled unit comes out differently (a random number
    falls between the two runs' probabilities of a unit, which rounding moves apart
    slowly); from then on they are two fits, no longer the same fit. On the digits
    that happened within 10 epochs: CD-1 starts its chains at the data,
    so a flip changes one update, and the weights then differed by 1e-3 (1e-2 after
    50 epochs; 16 hidden units, 20 epochs: the same held-out log-likelihood to 1e-3
    nat); PCD's persistent chains carry a flip on, and its fits differed by 0.03 in
    the weights after 5 epochs and 0.4 after 30 (16 hidden units, 20 epochs: 0.18
    nat apart in held-out log-likelihood). The matrix products, the parameters, the
    velocity and the average stay in the data's dtype, and ``transform``, ``score_samples``,
    ``free_energy`` and the monitoring compute in it (or in float64) as before.

    {missing}

    References
    ----------
    G. Hinton, "A Practical Guide to Training Restricted Boltzmann Machines", 2010.
    T. Tieleman, "Training restricted Boltzmann machines using approximations to the
    likelihood gradient", ICML 2008.
    B. Polyak and A. Juditsky, "Acceleration of stochastic approximation by
    averaging", SIAM J. Control Optim. 30(4), 1992.
    K. Swersky, B. Chen, B. Marlin and N. de Freitas, "A tutorial on stochastic
    approximation algorithms for training restricted Boltzmann machines and deep
    belief nets", ITA 2010.
    D. Kingma and J. Ba, "Adam: A method for stochastic optimization", ICLR 2015
    (momentum as a moving average of the gradient: their first moment).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skboltz import RBM
    >>> X = load_digits().data / 16
    >>> rbm = RBM(n_components=16, n_iter=5, random_state=0).fit(X)
    >>> rbm.transform(X).shape
    (1797, 16)
    >>> bool(rbm.score(X) < 0)  # mean exact log-likelihood in nats
    True

    Missing entries (NaN) are left out of the model, not filled in:

    >>> import numpy as np
    >>> X_missing = X.copy()
    >>> X_missing[::5, 10:20] = np.nan
    >>> rbm = RBM(n_components=16, n_iter=5, random_state=0).fit(X_missing)
    >>> log_p = rbm.score_samples(X_missing[:1])  # log p(observed entries): exact here
    >>> bool(log_p[0] > rbm.score_samples(X[:1])[0])  # fewer entries, more probable
    True
    """

    _view_class = RBMView
    _independence_check_class = BelowIndependentCheck
    _layout = RBMLayout
    _training_form = AugmentedRBM
    _structural_parameters = ("n_components",)
    _accepts_missing = True
    #: The namespace-generic path under array API dispatch (skboltz/estimators/_array_api_restricted.py, skboltz/estimators/_array_api_rbm.py).
    _array_api_model = RBMArrayAPI

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        **strategy_constraints(RBMView),
        "average_window": [Interval(Integral, 1, None, closed="left"), None],
        "visible_bias_init": [StrOptions({"data_rates", "zero"})],
        **TRAINING_CONSTRAINTS,
        "learning_rate": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "weight_decay": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        **MONITORING_CONSTRAINTS,
    }

    def __init__(
        self,
        n_components=256,
        *,
        learning="pcd",
        z_estimator="auto",
        learning_rate="auto",
        batch_size=10,
        n_iter=50,
        momentum=0.0,
        weight_decay="auto",
        average_window=100,
        visible_bias_init="zero",
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
        self.visible_bias_init = visible_bias_init
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.monitor_likelihood = monitor_likelihood
        self.verbose = verbose
        self.random_state = random_state

    __doc__ = document_strategy_options(
        __doc__.replace("{monitoring}", MONITORING_PARAMETERS_DOC).replace(
            "{missing}", MISSING_ENTRIES_DOC), RBMView, "pcd"
    )

    # -- training hooks ------------------------------------------------------------
    def _training_bytes(self, X):
        # ~6 parameter-sized arrays (parameters, iterate, velocity, gradient, scratch,
        # published copy) and minibatch buffers: a chunk of stacked blocks (at most
        # _Minibatches.CHUNK_BYTES, or one block) and the last, shorter minibatch's,
        # each with positive, negative and (persistent chains with means) chain rows.
        itemsize = np.dtype(X.dtype).itemsize
        rows = 3 * self._effective_batch_size(X)
        n_visible, n_hidden = X.shape[1] + 1, self.n_components + 1
        blocks = 1 + _Minibatches.blocks_per_chunk(rows, n_visible - 1, X.dtype, X.shape[0])
        return itemsize * (6 * n_hidden * n_visible + blocks * rows * n_visible
                           + 4 * rows * n_hidden)

    def _new_training_state(self, X, y, learning, rng, row_weights=None):
        binary = rows_are_binary(np, X)  # before the missing entries are filled in
        # missing values at their columns' (weighted) means
        X = self._with_missing_filled(X, weights=row_weights)
        dtype = X.dtype
        # float64 sums for either dtype, so float32 and float64 fits start alike
        data_rates = column_means(X, row_weights)
        n_visible = X.shape[1]
        params = np.zeros((self.n_components + 1, n_visible + 1), dtype=dtype)
        params[RBMLayout.weights] = rng.normal(0.0, 0.01, size=(self.n_components, n_visible))
        if self.visible_bias_init == "data_rates":
            params[RBMLayout.visible_bias] = logit_of_rates(data_rates)
        return self._fresh_state(RBMTrainingState, AugmentedRBM(params), X, learning, rng,
                                 data_rates=data_rates, rows_are_binary=binary,
                                 n_first_rows=X.shape[0])

    def _training_params(self, dtype):
        """Augmented parameters assembled from the public attributes."""
        return AugmentedRBM(RBMLayout.pack(
            self.components_, self.intercept_visible_, self.intercept_hidden_, dtype
        )).params

    def _learning_rate_of(self, state, learning=None):
        """``learning_rate``, with "auto" resolved from the features and the first rows."""
        if self.learning_rate != "auto":
            return float(self.learning_rate)
        step = AUTO_STEP * min(1.0, np.sqrt(AUTO_STEP_FEATURES / self.n_features_in_))
        return float(min(step, BINARY_STEP) if state.rows_are_binary else step)

    def _weight_decay_of(self, state):
        """``weight_decay``, with "auto" resolved from the first call's rows."""
        if self.weight_decay != "auto":
            return float(self.weight_decay)
        many_weights = self.n_components * self.n_features_in_ >= state.n_first_rows
        return (BINARY_WEIGHT_DECAY if state.rows_are_binary and many_weights
                else GREY_WEIGHT_DECAY)

    def _fitted_attributes(self, state):
        return {**super()._fitted_attributes(state),
                "learning_rate_": self._learning_rate_of(state),
                "weight_decay_": self._weight_decay_of(state)}

    def _minibatches(self, X, state, model, sampler, step):
        # Buffers and views are made once and reused by every epoch and by later
        # partial_fit calls with as many rows; pickles leave them out (a transient field).
        layout = _Minibatches.layout(
            X, self._effective_batch_size(X), sampler.n_negative, sampler.n_chain_rows,
            model,
        )
        data = state.minibatches
        if data is None or data.layout != layout:
            data = state.minibatches = _Minibatches(layout)
        data.source = X
        data.set_step(step)  # a momentum schedule changes it between epochs
        data.set_weights(state.row_weights, sampler.starts_at_data)
        return data

    def _train_minibatches(self, X, y, state, learning, model, rule, update):
        # The built-in samplers run the fused loop below; other strategies (exact,
        # TAP, users' own) and rows with missing entries the base's plain loop, which
        # computes the same update.
        if model.sampler is None or state.imputation is not None:
            super()._train_minibatches(X, y, state, learning, model, rule, update)
            return
        self._train_epoch_on_samples(X, state, model, rule, update)
        model.sampler.release()

    def _train_epoch_on_samples(self, X, state, epoch, rule, update):
        """The stacked-row loop of sampling strategies: ``epoch`` holds the training
        form of the iterate and the strategy's fused sampler, ``update`` the update
        rule bound to the iterate."""
        params = update.params  # the iterate
        averaging = params is not state.params
        model, sampler = epoch
        data = self._minibatches(X, state, model, sampler, rule.step)
        one, gradient = data.one, data.gradient
        apply_update = update.apply
        pending_average = state.average.n_pending if averaging else 0
        sample_negative, observe = sampler.sample, sampler.observe
        starts_at_data = sampler.starts_at_data
        cast = params.dtype != SIGMOID_DTYPE
        params_t = params.T
        for (stacked, positive, negative, hidden, inverse, inverse_negative, row_weights,
             inverse_weighted, weighted, weighted_rows, hidden_positive,
             hidden_negative) in data.epoch(state.rng):
            # Rows `positive` of `stacked` hold the minibatch, rows `negative` the
            # negative phase's visible rows (and below them the chain rows of strategies
            # that have them): one product gives every hidden input x (in `hidden`) ...
            if starts_at_data:
                # ... or two, when the chains start at the minibatch (CD): its hidden
                # inputs come first, and the chains' first hidden draw reuses them.
                np.dot(positive, params_t, out=hidden_positive)
                sample_negative(positive, negative, hidden_positive)
                np.dot(negative, params_t, out=hidden_negative)
            else:
                sample_negative(positive, negative)
                np.dot(stacked, params_t, out=hidden)
            # ... 1 + exp(-x) = 1 / sigmoid(x) in SIGMOID_DTYPE (float32) for either
            # dtype (`inverse` is `hidden` itself for float32 models) ...
            if cast:  # a plain casting copy costs less than a casting ufunc
                inverse[...] = hidden
            np.negative(inverse, out=inverse)
            np.exp(inverse, out=inverse)
            inverse += one
            observe(inverse_negative)
            # ... then r * sigmoid(x), with the row weight r = +step / n_positive for
            # data and -step / n_negative for negative rows, so that one more product
            # gives step * (positive - negative) for W, b and c at once (step =
            # (1 - momentum) * learning_rate). Chain rows get no weight: the
            # statistics stop above them (the `weighted` rows).
            np.divide(row_weights, inverse_weighted, out=weighted)
            np.dot(weighted.T, weighted_rows, out=gradient)
            apply_update(gradient)  # momentum, weight decay, then the parameters move
            if averaging:  # the published average follows the iterate
                pending_average += 1
                if pending_average == AVERAGE_INTERVAL:
                    state.average.n_pending, pending_average = pending_average, 0
                    state.move_average(self.average_window)
        if averaging:
            state.average.n_pending = pending_average

    @staticmethod
    def _reconstruction_error(view, rows, weights=None):
        # Run every epoch and every partial_fit call: float32, and few numpy calls. The
        # weights are cast negated (one call): -(W v + c) feeds exp directly, and
        # h @ (-W) - b is -(W^T h + b), so each sigmoid is three passes. Negation is
        # exact, so the result is the same as with sigmoid(W v + c), bit for bit (the
        # biases stay in their own dtype, as in that formula).
        negated = np.negative(view.weights, dtype=np.float32)
        rows = rows.astype(np.float32, copy=False)
        hidden = rows @ negated.T
        hidden -= view.hidden_bias
        with np.errstate(over="ignore"):  # exp(-x) = inf is the limit sigmoid(x) = 0
            reconstruction = sigmoid_of_negated(hidden) @ negated
            reconstruction -= view.visible_bias
            sigmoid_of_negated(reconstruction)
        reconstruction -= rows
        if weights is not None:
            return mean_square(reconstruction, weights)
        np.square(reconstruction, out=reconstruction)
        return float(np.add.reduce(reconstruction.ravel(), dtype=np.float64)) / rows.size

    def _below_independent_hint(self):
        """What to change when the fitted model is below independent columns."""
        fewer = (f"fewer hidden units (n_components={self.n_components} now; 20 or "
                 "fewer are scored exactly, so GridSearchCV can choose among them), "
                 if self.n_components > 20 else "")
        return (f"Try {fewer}a smaller learning_rate (e.g. 0.01), or "
                "learning='pt' (parallel tempering), whose chains follow a sharp model "
                "that persistent chains lose; the density guide says how to choose.")

    def _model_view_of(self, state):
        if state is None:
            return RBMView(self.components_, self.intercept_visible_, self.intercept_hidden_)
        # No training form (a call makes two of these views), but its corner: the
        # published average keeps the constant units' coupling a form gives it, which
        # the next call's comparison with the public attributes reads.
        p = state.params
        p[RBMLayout.constant] = AugmentedRBM.ALWAYS_ON
        return RBMView.of_layers(p[RBMLayout.weights], BinaryUnits(p[RBMLayout.visible_bias]),
                                 BinaryUnits(p[RBMLayout.hidden_bias]))


class _Minibatches:
    """Shuffled minibatches of one fit / partial_fit call, laid out for the training loop.

    Each minibatch lives in the top rows of its own "stacked" block of augmented rows,
    the negative phase writing the rows below, so no minibatch is ever copied: an epoch
    shuffles X into the blocks a chunk of blocks at a time, with a couple of calls per
    chunk. Sparse X is densified chunk by chunk the same way.
    """

    #: Bytes of blocks filled per chunk: enough minibatches to amortise the calls, few
    #: enough that they are still in the CPU's cache when their updates run.
    CHUNK_BYTES = 2**17

    @staticmethod
    def layout(X, batch_size, n_negative, n_chain, model):
        """What the buffers depend on: equal layouts can share buffers.

        ``n_negative(n_positive)`` is the number of negative rows of a minibatch,
        ``n_chain`` that of the chain rows below them (outside the statistics): the
        fused sampler's ``n_negative`` and ``n_chain_rows``.
        """
        n_full, n_rest = divmod(X.shape[0], batch_size)
        return (
            batch_size, n_negative(batch_size), n_full, n_rest,
            n_negative(n_rest) if n_rest else 0, n_chain, model.n_visible, model.n_hidden,
            model.params.dtype,
        )

    def __init__(self, layout):
        (batch_size, n_negative, self.n_full, self.n_rest, n_rest_negative, n_chain,
         n_visible, n_hidden, dtype) = self.layout = layout
        self.source = None
        self.batch_size = batch_size
        self.gradient = np.empty((n_hidden + 1, n_visible + 1), dtype)
        self.one = np.asarray(1.0, SIGMOID_DTYPE)
        self._row_weights, self.step = [], None
        # a weighted fit's relative row weights (see set_weights), None unweighted
        self.weights, self.weigh_negative, self.weighted_step = None, False, None

        def buffers(n_positive, n_negative, n_blocks):
            n_weighted = n_positive + n_negative  # the rows of the statistics
            n_rows = n_weighted + n_chain
            stacked = np.empty((n_blocks, n_rows, n_visible + 1), dtype)
            stacked[..., -1] = 1
            hidden = np.empty((n_rows, n_hidden + 1), dtype)
            # 1 / sigmoid of the hidden inputs, in SIGMOID_DTYPE (in place for float32)
            inverse = (hidden if dtype == SIGMOID_DTYPE
                       else np.empty((n_rows, n_hidden + 1), SIGMOID_DTYPE))
            # the row weights r of r * sigmoid(x) (see RBM._train_epoch_on_samples and
            # set_step), full shape: a same-shape operand is cheaper than a broadcast
            # column
            row_weights = np.empty((n_weighted, n_hidden + 1), SIGMOID_DTYPE)
            self._row_weights.append((row_weights, n_positive))
            # the views each update needs, made once
            batches = [
                (block, block[:n_positive], block[n_positive:], hidden, inverse,
                 inverse[n_positive:], row_weights, inverse[:n_weighted],
                 hidden[:n_weighted], block[:n_weighted], hidden[:n_positive],
                 hidden[n_positive:])
                for block in stacked
            ]
            return stacked, batches

        self.blocks, self.block_batches = buffers(
            batch_size, n_negative,
            self.blocks_per_chunk(batch_size + n_negative + n_chain, n_visible, dtype,
                                  self.n_full),
        )
        self.rest_batch = None
        if self.n_rest:
            rest_blocks, (self.rest_batch,) = buffers(self.n_rest, n_rest_negative, 1)
            self.rest_rows = rest_blocks[0]

    @classmethod
    def blocks_per_chunk(cls, n_rows, n_visible, dtype, n_full):
        """Minibatch blocks filled per chunk (at least one)."""
        block_bytes = n_rows * (n_visible + 1) * np.dtype(dtype).itemsize
        return max(1, min(n_full, cls.CHUNK_BYTES // block_bytes))

    def set_step(self, step):
        """Row weights r for a gradient step of ``step * (positive - negative)``."""
        if step == self.step:
            return
        self.step = step
        for row_weights, n_positive in self._row_weights:
            row_weights[:n_positive] = step / n_positive
            row_weights[n_positive:] = -step / (len(row_weights) - n_positive)

    def set_weights(self, weights, weigh_negative):
        """The relative weights of the source's rows (None: unweighted) and whether
        the negative rows count by them too (chains that start at the minibatch).

        A weighted epoch multiplies each minibatch's row weights r by its rows'
        weights (:meth:`_weigh`), so the data's statistics count each row by its
        weight (see :mod:`skboltz.utils._weights`); the next :meth:`set_step` writes them
        afresh."""
        self.weights, self.weigh_negative = weights, weigh_negative
        if weights is not None:
            self.weighted_step, self.step = self.step, None

    def _weigh(self, batch, weights):
        """Row weights r of ``batch`` (a tuple :meth:`epoch` yields) for rows of these
        weights: step * w_i / n_positive for data, and -step * w_i / n_negative for
        the negative rows of chains that start at them."""
        row_weights, n_positive = batch[6], weights.shape[0]
        column = weights[:, None]
        np.multiply(column, self.weighted_step / n_positive, out=row_weights[:n_positive])
        if self.weigh_negative:
            n_negative = row_weights.shape[0] - n_positive
            np.multiply(column, -self.weighted_step / n_negative,
                        out=row_weights[n_positive:])

    def _fill(self, destination, rows):
        rows = self.source[rows] if rows is not None else self.source
        if sp.issparse(rows):
            rows = rows.toarray()
        destination[...] = rows.reshape(destination.shape)

    def epoch(self, rng):
        """Yield, per minibatch: the stacked rows, their positive and negative parts
        (the negative part with the chain rows, if any), the hidden buffer, the
        SIGMOID_DTYPE buffer of 1 / sigmoid and its negative part, the row weights r,
        the parts of the 1 / sigmoid buffer, the hidden buffer and the stacked rows
        that the statistics use (all rows but the chain rows), and the positive and
        negative parts of the hidden buffer (for a negative phase that starts at the
        minibatch). A weighted fit's minibatches carry their rows' weights in their
        row weights (:meth:`_weigh`)."""
        if self.weights is None:
            for batches, _ in self._filled_blocks(rng):
                yield from batches
            return
        b = self.batch_size
        for batches, rows in self._filled_blocks(rng):
            for k, batch in enumerate(batches):
                self._weigh(batch, self.weights if rows is None
                            else self.weights[rows[k * b : (k + 1) * b]])
                yield batch

    def _filled_blocks(self, rng):
        """Fill the minibatch buffers block by block, in a fresh order of the rows;
        yield each block's minibatches and the source rows they hold, in order (None:
        every row, as stored)."""
        b = self.batch_size
        if self.n_full + (self.n_rest > 0) == 1:
            # One minibatch (a partial_fit on one minibatch): its order is irrelevant
            self._fill(self.blocks[0, :b, :-1] if self.n_full else
                       self.rest_rows[: self.n_rest, :-1], None)
            yield (self.block_batches[:1] if self.n_full else [self.rest_batch]), None
            return
        order = rng.permutation(self.source.shape[0])
        for first in range(0, self.n_full, len(self.blocks)):
            n_blocks = min(len(self.blocks), self.n_full - first)
            rows = order[first * b : (first + n_blocks) * b]
            self._fill(self.blocks[:n_blocks, :b, :-1], rows)
            yield self.block_batches[:n_blocks], rows
        if self.n_rest:
            rows = order[self.n_full * b :]
            self._fill(self.rest_rows[: self.n_rest, :-1], rows)
            yield [self.rest_batch], rows
