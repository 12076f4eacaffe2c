"""Deep Boltzmann machine: binary layers, each coupled only to its neighbours."""

import hashlib
import warnings
import zlib
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..core._base import (
    LAYER_SIZES_CONSTRAINT,
    TRAINING_CONSTRAINTS,
    BoltzmannBase,
    checked_layer_sizes,
)
from ._boltzmann import OFFSET_RATE
from ..models._dbm_energy import (
    MAX_HIDDEN_STATES,
    DBMLayout,
    DBMView,
    dbm_gradient,
    dbm_layout,
    positive_mean,
    uncentred_bias_step,
)
from ._dbm_pretraining import greedy_pretraining
from ..utils._energy import clipped_rates, column_means, logit_of_rates
from ..core._monitoring import MONITORING_CONSTRAINTS, MONITORING_PARAMETERS_DOC
from ..utils._runtime import RowProgress, blas_threads_for, warn_user
from ..core._scoring import parameter_fingerprint
from ..utils._sklearn import Interval, StrOptions
from ..core._strategies import document_strategy_options, strategy_constraints
from ..core._training import AveragedTrainingState, IterateAverage, copied, shared
from ..utils._validation import as_dense
from ..utils._weights import mean_square
from ..exceptions import ApproximateScoreWarning, LogZAccuracyWarning, TooManyStatesError

#: ``likelihood="auto"`` sums the hidden layers of a row exactly up to this many
#: enumerated hidden units (2**16 states per row: about a millisecond a row).
AUTO_EXACT_HIDDEN_UNITS = 16

#: learning_rate="auto" is AUTO_STEP / sqrt(the hidden units of all layers): too large
#: a step makes the hidden posteriors stop depending on the row, and the largest safe
#: step shrinks with the hidden layers' widths. Measured (bench_dbm.py
#: --learning-rates): on the same 784-pixel rows, DBM(100, 100), (256, 128) and
#: (500, 1000) lost the row at 0.2, 0.1 and 0.05 (1.9 to 2.8 / sqrt(H)) and trained
#: best near 1 / sqrt(H) (0.071, 0.051, 0.026); DBM(16, 16) on the 8 x 8 digits
#: scored best at 0.2 to 0.4 (1 / sqrt(32) = 0.18).
AUTO_STEP = 1.0


@dataclass(eq=False, kw_only=True)
class DBMTrainingState(AveragedTrainingState):
    """Training state of :class:`DBM`: the layout of its packed parameters (it depends
    on the layer sizes) and the centring offsets of every unit (float64, visible
    first: the visible ones at the data's rates, the hidden ones a sliding mean of the
    positive phase's means)."""

    layout: DBMLayout = shared()
    offsets: np.ndarray = copied()


class _EpochModel:
    """What the gradient step hands the update within an epoch: the view of the
    parameters the updates move, their layout, the offsets of every layer, and the
    minibatch's positive-phase means of the hidden layers (which the offsets follow)."""

    def __init__(self, view, layout, offsets):
        self.view, self.layout, self.offsets = view, layout, offsets
        self.positive_means = None


class DBM(BoltzmannBase):
    """Deep Boltzmann machine: binary layers coupled only to their neighbours.

    Visible units v = x_0 and hidden layers x_1, ..., x_L, each coupled only to the
    layers next to it: E(x) = -sum_k x_k^T W_k x_{k-1} - sum_k b_k^T x_k and p(x)
    proportional to exp(-E(x)) (Salakhutdinov & Hinton, "Deep Boltzmann machines",
    2009). Unlike a :class:`DBN`, every layer takes input from above and below, and
    the whole stack is one undirected model trained jointly. Training follows the
    likelihood gradient with the data's expectations from the mean-field posterior of
    the hidden layers (a variational approximation) and the model's from persistent
    block Gibbs chains (``learning``), optionally after greedy layer-wise pretraining
    and with centred updates.

    Parameters
    ----------
    hidden_layer_sizes : int or array-like of int, default=(256, 128)
        Units of each hidden layer, from the bottom up (an int: one hidden layer, as
        in :class:`~sklearn.neural_network.MLPClassifier` and
        :class:`~skboltz.DBNClassifier`).
    learning : {learning_options} or DBMLearningStrategy, default="mean_field_pcd"
        How the two phases' statistics are found: the mean-field positive phase and
        persistent chains of :class:`~skboltz.learning.MeanFieldPCD`, or a strategy
        object (cloned; e.g. ``MeanFieldPCD(n_steps=5)``, or your own subclass of
        :class:`~skboltz.learning.DBMLearningStrategy`).
    z_estimator : {z_estimator_options} or ZEstimator, default="auto"
        How log Z is found for ``score_samples``. "auto" enumerates exactly when one
        colour of the layers (the odd layers, or the even ones with the visible units)
        has at most 20 units, the other summed in closed form, and otherwise uses
        annealed importance sampling with the odd layers summed out at every
        temperature; the other names are the estimators of :mod:`skboltz.partition`,
        or pass an estimator object (cloned). Recorded in ``z_estimator_``.
    likelihood : {"auto", "exact", "bound", "estimate"}, default="auto"
        How ``score_samples`` and ``free_energy`` sum the hidden layers out of each
        row: "exact" enumerates one colour of the hidden layers (the other summed in
        closed form; at most 2**20 states per row), "bound" takes the mean-field lower
        bound on the sum (Salakhutdinov & Hinton 2009), so that ``score_samples`` is a
        lower bound on log p(v) (up to the error of log Z), and "estimate" estimates
        each row's sum by ``z_estimator`` on the machine of the hidden layers given the
        row (annealed importance sampling for large machines: an estimate of log p(v)
        without the bound's bias, much slower: about 0.03 to 0.06 s a row for a
        DBM(256, 128) on 784 pixels). The rows of one call share the estimator's
        budget (``max_transitions``, counted in Gibbs transitions, and ``max_time``
        when set, of the :class:`~skboltz.partition.AIS`), an equal share each, the
        first batch of a row always running; each row's estimate is kept for the
        fitted model, so a row scores the same in every call (where a share of a
        ``max_time`` cut an estimate short, its value depends on the machine's speed). Progress is reported as for a slow log Z: lines with
        ``verbose``, a :class:`~skboltz.exceptions.SlowEstimateWarning` past 30 s with
        the time the rest will take; rows less accurate than asked are summed up in
        one :class:`~skboltz.exceptions.LogZAccuracyWarning`. "auto" is "exact" up to
        16 enumerated hidden units and "bound" beyond; "exact" beyond 2**20 states per
        row is refused, pointing to "estimate" and "bound".
    transform_layers : {"top", "all"}, default="top"
        What ``transform`` returns: the mean-field posterior of the top hidden layer,
        or of every hidden layer side by side.
    pretraining_iter : int, default=0
        Epochs of greedy layer-wise pretraining of each layer before the joint
        training (0: none). Each pair of neighbouring layers is trained as an RBM on
        the posterior of the layer below, with the weights doubled where the deep
        machine will give a layer input from both sides (Salakhutdinov & Hinton 2009,
        2012; see :ref:`dbm`), and the RBMs are composed into the starting machine.
    centering : bool, default=True
        Follow the centred gradient (Montavon & Mueller 2012; Melchior, Fischer &
        Wiskott 2016): each update is the gradient step in the parametrisation E(x) =
        -sum_k (x_k - mu_k)^T W_k (x_{k-1} - mu_{k-1}) - sum_k c_k^T (x_k - mu_k), with
        offsets mu the data's rates for the visible units and a sliding average of the
        positive phase's means for the hidden ones. The model (``weights_``,
        ``biases_``) is the same; the path is better conditioned.
    learning_rate : float or "auto", default="auto"
        Step size on the mean minibatch gradient, in the moving-average form of
        momentum shared with :class:`RBM` (a steady gradient moves the parameters by
        ``learning_rate`` times the gradient per update whatever the momentum); also
        the step of the pretraining. "auto" is ``1 / sqrt(sum(hidden_layer_sizes))``
        (recorded in ``learning_rate_``): too large a step makes the hidden posteriors
        stop depending on the row, and the largest safe step shrinks with the hidden
        layers' widths. Measured (see :ref:`dbm`): "auto" is 0.18 for a DBM(16, 16), whose exact held-out
        likelihood on the 8 x 8 digits was best at 0.2 to 0.4 (0.05: 1.6 nats lower);
        on 784-pixel digits, 0.071 for a DBM(100, 100), 0.051 for a DBM(256, 128) and
        0.026 for a DBM(500, 1000), which lost the row at 0.2, 0.1 and 0.05
        respectively and trained best near their "auto" step.
    batch_size : int, default=100
        Rows per minibatch; reshuffled every epoch.
    n_iter : int, default=20
        Number of epochs of joint training for ``fit``.
    momentum : float or (float, float), default=(0.5, 0.9)
        Momentum of the updates, as a moving average (see :class:`RBM`); a pair means
        the first value for the first 5 epochs and the second afterwards.
    weight_decay : float, default=1e-4
        L2 penalty on the weights (not the biases), in the pretraining too. As in
        every estimator, its gradient enters the velocity every 16 updates, 16
        updates' worth at a time.
    average_window : int or None, default=100
        Iterate averaging, as for :class:`RBM`: the fitted attributes are a moving
        average of the parameters over about this many updates; None publishes the
        last update's.
    {monitoring}
    verbose : int, default=0
        Print a progress line per epoch when positive.
    random_state : int, RandomState instance or None, default=None
        Seeds initialisation, pretraining, minibatch order, sampling and the log Z
        estimate.

    Attributes
    ----------
    weights_ : list of ndarray
        W_1, ..., W_L; ``weights_[k - 1]`` of shape (n_k, n_{k-1}) couples layer k to
        layer k - 1 (the orientation of ``RBM.components_``).
    biases_ : list of ndarray
        b_0 (visible), b_1, ..., b_L.
    learning_rate_ : float
        The learning rate used (``learning_rate``, or what "auto" resolved to).
    learning_ : LearningStrategy
        The learning strategy used (a clone of ``learning`` or its default object).
    z_estimator_ : ZEstimator
        The log Z estimator that ``score_samples`` uses.
    n_iter_ : int
        Epochs of joint training so far.
    history_ : dict of lists
        Per-epoch training records: time, reconstruction error, free energies and the
        overfitting gap, log-likelihoods when monitored, and the learning strategy's
        diagnostics (see ``history_``'s docstring).
    n_features_in_ : int
        Number of features (visible units) seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when they are all strings.

    See Also
    --------
    skboltz.DBN : A greedy stack of RBMs (no joint training, no likelihood).
    skboltz.RBM : One hidden layer (a DBM with one hidden layer is an RBM).
    skboltz.BoltzmannMachine : Any connectivity, for small machines.

    Notes
    -----
    ``score_samples`` is log p(v) = -F(v) - log Z with F(v) = -log sum_h exp(-E(v, h))
    summed as ``likelihood`` says: exactly for small machines, otherwise the mean-field
    bound by default, a lower bound on log p(v) (Salakhutdinov & Hinton report it
    about half a nat below the estimate of the true value on MNIST). log Z is exact
    or an AIS estimate (``estimate_log_partition`` gives its standard error).
    ``transform``, ``reconstruct`` and ``gibbs`` use the mean-field posterior of the
    hidden layers; ``sample`` runs two-colour block Gibbs chains (the odd layers,
    then the even ones).

    References
    ----------
    R. Salakhutdinov and G. Hinton, "Deep Boltzmann machines", AISTATS 2009.
    R. Salakhutdinov and G. Hinton, "An efficient learning procedure for deep
    Boltzmann machines", Neural Computation 24, 2012.
    G. Montavon and K.-R. Mueller, "Deep Boltzmann machines and the centering trick",
    Neural Networks: Tricks of the Trade, 2nd ed., LNCS 7700, 2012.
    J. Melchior, A. Fischer and L. Wiskott, "How to center deep Boltzmann machines",
    JMLR 17, 2016.
    R. Salakhutdinov and I. Murray, "On the quantitative analysis of deep belief
    networks", ICML 2008 (annealed importance sampling).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skboltz import DBM
    >>> X = (load_digits().data > 7).astype(float)
    >>> dbm = DBM(hidden_layer_sizes=(16, 8), n_iter=5, random_state=0).fit(X)
    >>> [w.shape for w in dbm.weights_]
    [(16, 64), (8, 16)]
    >>> dbm.transform(X).shape  # the top layer's mean-field posterior
    (1797, 8)
    >>> bool(dbm.score(X) < 0)  # exact: 2**8 states of the odd layer, per row too
    True
    >>> dbm.sample(2, n_steps=10).shape
    (2, 64)
    """

    _view_class = DBMView
    _structural_parameters = ("hidden_layer_sizes",)

    _parameter_constraints = {
        **LAYER_SIZES_CONSTRAINT,
        **strategy_constraints(DBMView),
        "likelihood": [StrOptions({"auto", "exact", "bound", "estimate"})],
        "transform_layers": [StrOptions({"top", "all"})],
        "pretraining_iter": [Interval(Integral, 0, None, closed="left")],
        "centering": ["boolean"],
        "average_window": [Interval(Integral, 1, None, closed="left"), None],
        **TRAINING_CONSTRAINTS,
        "learning_rate": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        **MONITORING_CONSTRAINTS,
    }

    def __init__(
        self,
        hidden_layer_sizes=(256, 128),
        *,
        learning="mean_field_pcd",
        z_estimator="auto",
        likelihood="auto",
        transform_layers="top",
        pretraining_iter=0,
        centering=True,
        learning_rate="auto",
        batch_size=100,
        n_iter=20,
        momentum=(0.5, 0.9),
        weight_decay=1e-4,
        average_window=100,
        validation_fraction=None,
        n_iter_no_change=None,
        tol=1e-4,
        monitor_likelihood=False,
        verbose=0,
        random_state=None,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.learning = learning
        self.z_estimator = z_estimator
        self.likelihood = likelihood
        self.transform_layers = transform_layers
        self.pretraining_iter = pretraining_iter
        self.centering = centering
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.n_iter = n_iter
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.average_window = average_window
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.monitor_likelihood = monitor_likelihood
        self.verbose = verbose
        self.random_state = random_state

    __doc__ = document_strategy_options(
        __doc__.replace("{monitoring}", MONITORING_PARAMETERS_DOC), DBMView, "mean_field_pcd"
    )

    # -- sizes -----------------------------------------------------------------------
    def _hidden_sizes(self):
        return checked_layer_sizes(self.hidden_layer_sizes)

    def _layer_sizes(self, n_features):
        return (int(n_features), *self._hidden_sizes())

    def _learning_rate_of(self, state, learning=None):
        """``learning_rate``, with "auto" resolved from the hidden layers' widths."""
        if self.learning_rate != "auto":
            return float(self.learning_rate)
        return AUTO_STEP / np.sqrt(sum(self._hidden_sizes()))

    # -- training hooks ------------------------------------------------------------
    def _training_product_size(self, X):
        sizes = self._layer_sizes(X.shape[1])
        pairs = sum(sizes[k] * sizes[k - 1] for k in range(1, len(sizes)))
        return self._effective_batch_size(X) * pairs

    def _training_bytes(self, X):
        # ~6 parameter-sized arrays (parameters, iterate, velocity, gradient, scratch,
        # published copy) and a few rows of every unit per minibatch and chain.
        sizes = self._layer_sizes(X.shape[1])
        n_params = dbm_layout(sizes).size
        rows = 4 * self._effective_batch_size(X)
        return np.dtype(X.dtype).itemsize * (6 * n_params + rows * sum(sizes))

    def _units_per_chain(self, X):
        return sum(self._layer_sizes(X.shape[1]))

    def _size_description(self, X):
        sizes = self._layer_sizes(X.shape[1])
        return (
            f"A deep Boltzmann machine with layers {' - '.join(map(str, sizes))}",
            "Use smaller hidden layers (hidden_layer_sizes) or a smaller batch_size.",
        )

    def _new_training_state(self, X, y, learning, rng, row_weights=None):
        dtype = X.dtype
        sizes = self._layer_sizes(X.shape[1])
        layout = dbm_layout(sizes)
        # float64 sums for either dtype, so float32 and float64 fits start alike
        data_rates = column_means(X, row_weights)
        if self.pretraining_iter:
            # BLAS threads as for the training products (one for small ones): the
            # products' rounding, hence the fit, then does not depend on the count.
            with blas_threads_for(self._training_product_size(X)):
                weights, biases = greedy_pretraining(
                    X, sizes, n_iter=self.pretraining_iter,
                    learning_rate=self._learning_rate_of(None),
                    batch_size=self._effective_batch_size(X), momentum=self._momentum_at,
                    weight_decay=self.weight_decay, rng=rng, verbose=self.verbose,
                    row_weights=row_weights,
                )
        else:
            weights = [rng.normal(0.0, 0.01, size=(sizes[k], sizes[k - 1]))
                       for k in range(1, len(sizes))]
            biases = [logit_of_rates(data_rates), *(np.zeros(n) for n in sizes[1:])]
        params = layout.pack(weights, biases, dtype)
        averaging = self.average_window is not None
        state = DBMTrainingState(
            params=params,
            iterate=params.copy() if averaging else params,
            average=IterateAverage() if averaging else None,
            velocity=np.zeros_like(params),
            rng=rng,
            data_rates=data_rates,
            layout=layout,
            # Centring offsets: visible = the data rates (clipped like the bias start),
            # hidden = 1/2, then a sliding mean of the positive phase's means.
            offsets=np.concatenate([clipped_rates(data_rates),
                                    np.full(sum(sizes[1:]), 0.5)]),
        )
        state.sampler = learning.init_state(
            layout.view(params), X, self._effective_batch_size(X), rng
        )
        return state

    def _training_params(self, dtype):
        layout = dbm_layout(tuple(b.shape[0] for b in self.biases_))
        return layout.pack(self.weights_, self.biases_, dtype)

    def _layout_of(self, state):
        return state.layout

    def _average_window(self, state):
        return self.average_window

    def _begin_epoch(self, state, learning):
        # A partial_fit with data of another dtype continues in that dtype.
        dtype = state.params.dtype
        if state.velocity.dtype != dtype:
            state.velocity = state.velocity.astype(dtype)
            state.scratch = None
            state.sampler = learning.cast_state(state.sampler, dtype)
        return super()._begin_epoch(state, learning)

    def _training_model(self, X, params, state, learning):
        layout = state.layout
        return _EpochModel(layout.view(params), layout, layout.layers_of(state.offsets))

    def _minibatch_gradient(self, model, batch, labels, state, learning, rule,
                            weights=None):
        view, rng = model.view, state.rng
        positive = learning.positive_phase(view, batch, state.sampler, rng)
        negative = learning.negative_phase(view, batch, state.sampler, rng, rule.progress)
        self._check_phase_rows(learning, "positive_phase", positive, batch.shape[0], view)
        self._check_phase_rows(learning, "negative_phase", negative, None, view)
        # the positive rows count by their weights in a weighted fit
        gradient = dbm_gradient(
            positive, negative, model.layout, np.empty_like(state.velocity),
            model.offsets if self.centering else None, weights,
        )
        if self.centering:
            column = None if weights is None else weights[:, None]
            model.positive_means = [positive_mean(layer, column) for layer in positive[1:]]
        gradient *= rule.step
        return gradient

    @staticmethod
    def _check_phase_rows(learning, phase, layers, n_rows, view):
        """Refuse a strategy's phase that does not return rows of every layer."""
        sizes = view.layer_sizes
        shapes = [getattr(layer, "shape", None) for layer in layers]
        rows = n_rows if n_rows is not None else (shapes[0][0] if shapes[0] else None)
        expected = [(rows, n) for n in sizes]
        if shapes != expected or not rows:
            raise ValueError(
                f"{type(learning).__name__}.{phase} must return a list of {len(sizes)} "
                f"arrays, one per layer with the same rows (shapes {expected}"
                f"{'' if n_rows is not None else ', any number of rows'}); got shapes "
                f"{shapes}."
            )

    def _parameter_update(self, model, params, state, rule):
        if not self.centering:
            return super()._parameter_update(model, params, state, rule)
        layout, offsets = model.layout, model.offsets

        def recentre(update):
            # b_k = c_k - W_k mu_{k-1} - W_{k+1}^T mu_{k+1}: a step of W at fixed c
            # moves b too.
            for bias, correction in zip(layout.biases_of(params),
                                        uncentred_bias_step(update, offsets, layout)):
                bias += correction
            for offset, mean in zip(offsets[1:], model.positive_means):
                offset += OFFSET_RATE * (mean - offset)

        return super()._parameter_update(model, params, state, rule, after_step=recentre)

    def _reconstruction_error(self, view, rows, weights=None):
        # Run every epoch: float32 (mean-field reconstructions of a few hundred rows).
        rows = rows.astype(np.float32, copy=False)
        residuals = rows - view.astype(np.float32).reconstruct(rows)
        if weights is not None:
            return mean_square(residuals, weights)
        return float(np.mean(residuals ** 2, dtype=np.float64))

    def _fitted_attributes(self, state):
        state.prepare_publication()
        layout, params = state.layout, state.params
        return {
            "learning_rate_": self._learning_rate_of(state),
            "weights_": [W.copy() for W in layout.weights_of(params)],
            "biases_": [b.copy() for b in layout.biases_of(params)],
        }

    def _model_view_of(self, state):
        if state is not None:
            return state.layout.view(state.params)
        return DBMView(self.weights_, self.biases_)

    # -- inference -------------------------------------------------------------------
    @property
    def _n_features_out(self):
        if self.transform_layers == "top":
            return self.biases_[-1].shape[0]
        return sum(b.shape[0] for b in self.biases_[1:])

    def transform(self, X):
        """Mean-field posterior of the top hidden layer (or of every hidden layer).

        The magnetisations mu_k of the variational posterior of the hidden layers
        given each row, iterated to convergence from the recognition pass (the same
        inference as the positive phase of training): the top layer's, or, with
        ``transform_layers="all"``, every hidden layer's side by side (layer 1 first).
        A DBM in a :class:`~sklearn.pipeline.Pipeline` before a classifier hands it
        these features.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Visible rows.

        Returns
        -------
        H : ndarray of shape (n_samples, n_features_out)
            The magnetisations, in the dtype of ``X``.
        """
        check_is_fitted(self, "_training_state")
        X = self._validate_X(X, reset=False)
        view = self._inference_view(X.dtype)
        magnetisations = view.inference_mean_field(X)
        if self.transform_layers == "top":
            return magnetisations[-1].astype(X.dtype, copy=False)
        return np.hstack(magnetisations).astype(X.dtype, copy=False)

    # -- scoring ---------------------------------------------------------------------
    def _hidden_sum(self, view):
        """How the hidden layers of a row are summed: "exact", "bound" or "estimate"."""
        if self.likelihood != "auto":
            return self.likelihood
        return "exact" if view.n_hidden_enumerated <= AUTO_EXACT_HIDDEN_UNITS else "bound"

    def _log_weight_kind(self):
        return {"exact": "exact", "bound": "lower_bound", "estimate": "estimate"}[
            self._hidden_sum(self._model_view())]

    def _free_energy_of(self, view, rows):
        # F(v) = -log sum_h exp(-E(v, h)): exact, its mean-field upper bound, or a
        # per-row estimate (see ``likelihood``).
        view = view.astype(np.float64)
        V = as_dense(rows).astype(np.float64)
        method = self._hidden_sum(view)
        if method == "exact":
            self._check_exact_sum(view)
            return view.free_energy(V)
        if method == "bound":
            return -view.mean_field_log_bound(V, view.inference_mean_field(V))
        return -self._estimated_hidden_log_sums(view, V)

    def _check_exact_sum(self, view):
        n_enumerated = view.n_hidden_enumerated
        if 2**n_enumerated > MAX_HIDDEN_STATES:
            raise TooManyStatesError(
                f"{type(self).__name__}(likelihood='exact') sums the hidden layers of "
                f"each row exactly, which needs 2**{n_enumerated} states per row here, "
                f"more than 2**{MAX_HIDDEN_STATES.bit_length() - 1}. Use "
                "likelihood='estimate' (an estimate of log p(v) row by row, by "
                "annealed importance sampling: slow) or likelihood='bound' (the "
                "mean-field lower bound: fast); 'auto' chooses exact up to "
                f"{AUTO_EXACT_HIDDEN_UNITS} enumerated hidden units and the bound beyond."
            )

    def _estimated_hidden_log_sums(self, view, V):
        """log sum_h exp(-E(v, h)) per row, by the z estimator on the machine of the
        hidden layers given the row, seeded per row (scores stay row-wise).

        The rows of one call share the estimator's budget (``max_transitions``, and
        ``max_time`` when set), an equal share each (the first batch of a row always runs); each row's value is kept for
        the fitted model, so a row scores the same in every call even where its share
        of the budget cut its estimate short. Progress as for a slow log Z: lines with
        ``verbose``, a SlowEstimateWarning past 30 s. Rows less accurate than asked are
        summed up in one warning (not one per row that reads as the model's log Z).
        """
        # Each row's visible term summed on its own: a matrix-vector product rounds a
        # row differently by its place in the batch (1e-15 nats), and scores must not
        # depend on the other rows.
        out = np.sum(V * view.biases[0], axis=1)
        if len(view.weights) == 0:
            return out
        # During the first fit (monitoring) nothing is published yet.
        fitted = hasattr(self, "_training_state")
        seed = self._training_state.log_z_seed if fitted else 0
        known = self._known_hidden_sums(view) if fitted else {}
        keys = [hashlib.blake2b(v.tobytes(), digest_size=16).digest() for v in V]
        todo = [row for row, key in enumerate(keys) if key not in known]
        for row, key in enumerate(keys):
            if key in known:
                out[row] += known[key]
        if not todo:
            return out
        # The base model of each row's annealing: layer 1 at the row's mean field.
        first_layer = view.inference_mean_field(V[todo])[0]
        progress = RowProgress(
            self, "estimating each row's hidden sum (likelihood='estimate')", len(todo),
            "likelihood='bound' is fast (a lower bound on log p(v)); a smaller budget "
            "or precision per row (z_estimator=AIS(max_time=..., target_std_error=...)) "
            "or fewer rows make it shorter.",
        )
        short = []  # rows whose estimate is less accurate than asked
        with warnings.catch_warnings():
            # each row's own warning would read as the model's log Z: summed up below
            warnings.simplefilter("ignore", LogZAccuracyWarning)
            for done, row in enumerate(todo):
                v = V[row]
                conditional = view.conditional_hidden_view(v)
                # a fresh estimator (a user's object is cloned): its budget can change
                estimator = self._resolve_z_estimator(self.z_estimator, conditional)
                budget = getattr(estimator, "max_time", None)
                if budget is not None:
                    estimator.set_params(max_time=budget / len(todo))
                if getattr(estimator, "max_transitions", None) is not None:
                    # the work budget shared alike (the first batch always runs)
                    work = estimator.transition_budget(conditional)
                    estimator.set_params(max_transitions=max(1, work // len(todo)))
                rng = np.random.default_rng([seed, zlib.crc32(v.tobytes())])
                log_sum = estimator.estimate(conditional, rng=rng,
                                             data_rates=first_layer[done])
                if not log_sum.converged:
                    short.append(log_sum)
                known[keys[row]] = log_sum.value
                out[row] += log_sum.value
                progress(done + 1)
        if short:
            worst = max(short, key=lambda log_sum: log_sum.std_error or 0.0)
            warn_user(
                f"{type(self).__name__}: the hidden sums of {len(short)} of {len(todo)} "
                "rows (likelihood='estimate': each row's log sum_h exp(-E(v, h)), "
                f"estimated by {worst.method or 'the z_estimator'} on the machine of the "
                "hidden layers given the row) are less accurate than asked; e.g. "
                f"log sum = {worst.value:.2f} +- {worst.std_error or 0:.3g}: "
                + "; ".join(worst.caveats or ("it did not meet its accuracy criterion",))
                + ". Those rows' scores carry that error. A larger budget for the "
                "rows (they share z_estimator=AIS(max_time=...)) or fewer rows per "
                "call give more accurate sums.",
                LogZAccuracyWarning,
            )
        return out

    def _known_hidden_sums(self, view):
        """The per-row estimates made so far under these parameters (row digest ->
        log sum); one parameter set at a time."""
        key = (repr(self.z_estimator), parameter_fingerprint(view))
        slot = self._log_z_cache.get("hidden_sums")
        if slot is None or slot[0] != key:
            slot = self._log_z_cache["hidden_sums"] = (key, {})
        return slot[1]

    def free_energy(self, X):
        """Free energy F(v) = -log sum_h exp(-E(v, h)) of each row, in float64.

        Summed as ``likelihood`` says: exactly (small machines), or its mean-field
        upper bound -(the variational lower bound on the sum), or a per-row estimate.
        ``log p(v) = -F(v) - log Z``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Visible rows.

        Returns
        -------
        free_energy : ndarray of shape (n_samples,)
            F(v) of each row (an upper bound on it with ``likelihood="bound"``).
        """
        return super().free_energy(X)

    def score_samples(self, X):
        """Log-likelihood log p(v) of each row, in nats: exact, a bound or an estimate.

        ``-free_energy(v) - log Z``, with log Z from ``z_estimator_`` (exact for small
        machines, else an AIS estimate with a standard error, see
        :meth:`estimate_log_partition`), computed once per fitted model, and the
        hidden layers summed out as ``likelihood`` says. With the default
        ``likelihood="auto"``, a machine with more than 16 enumerated hidden units is
        scored by the **mean-field lower bound**: the values are lower bounds on
        log p(v) (up to the error of log Z), not estimates of it, and the first score
        of each fitted model says so with an
        :class:`~skboltz.exceptions.ApproximateScoreWarning` (as a score on a bound of
        log Z does: models compared on bounds can be ranked wrongly, since the gap
        differs between models). Set ``likelihood="estimate"`` for a per-row
        estimate of log p(v) itself (slow: one annealing run per row; pass an
        :class:`~skboltz.partition.AIS` object as ``z_estimator`` to choose its
        precision). Deterministic and row-wise; values outside [0, 1] are clipped into
        it with a :class:`~skboltz.exceptions.DataRangeWarning`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        log_likelihood : ndarray of shape (n_samples,)
            The log p(v) of each row in float64: exact (``likelihood="exact"``, with an
            exact log Z; with an AIS log Z an estimate whose error, shared by every
            row, is ``estimate_log_partition().std_error``), a **lower bound**
            (``likelihood="bound"``) or a per-row estimate
            (``likelihood="estimate"``), as ``likelihood`` says.
        """
        check_is_fitted(self, "_training_state")
        view = self._model_view()
        if self._hidden_sum(view) == "exact":
            self._check_exact_sum(view)  # before log Z, which may take a while
        log_likelihood = super().score_samples(X)
        if self._hidden_sum(view) == "bound":
            flag = ("warned_bound", parameter_fingerprint(view))
            if flag not in self._log_z_cache:
                self._log_z_cache[flag] = True
                warn_user(
                    f"{type(self).__name__}: the scores are the mean-field lower bound on "
                    "log p(v) (likelihood='bound'; 'auto' chooses it beyond "
                    f"{AUTO_EXACT_HIDDEN_UNITS} enumerated hidden units), not "
                    "log-probabilities: the bound's gap differs between models, so "
                    "models scored this way are not measured as models scored exactly "
                    "or by an estimate, and can be ranked wrongly even among "
                    "themselves. likelihood='estimate' estimates log p(v) row by row "
                    "(slow).",
                    ApproximateScoreWarning,
                    once_per=(type(self).__name__, "bound"),
                )
        return log_likelihood


__all__ = ["DBM"]
