"""The base of skboltz's estimators: the fit driver and the training loop over hooks.

:class:`BoltzmannBase` owns ``fit`` and ``partial_fit`` and the epoch loop; an
estimator declares its model view and layout and implements a few hooks (its
docstring, and "Writing a new estimator" in the user guide's extending page, list
them). The other concerns are modules of their own, which the base puts together:
monitoring and early stopping (:mod:`skboltz.core._monitoring`), the divergence and
degeneracy checks (:mod:`skboltz.core._divergence`, :mod:`skboltz.core._degeneracy`),
inference (:mod:`skboltz.core._inference`), scoring with the log Z cache
(:mod:`skboltz.core._scoring`) and the pluggable strategies (:mod:`skboltz.core._strategies`).

Training is all-or-nothing: ``fit`` and ``partial_fit`` work on a private copy of the
training state and publish it only when every epoch finished with finite parameters
(:mod:`skboltz.core._transactions`), so an exception (divergence, interrupt, bad input)
never leaves a half-updated model.
"""

import copy
import time
from abc import ABCMeta, abstractmethod
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ._degeneracy import DegeneracyCheck
from ._divergence import DivergenceCheck
from ._inference import InferenceMixin
from ._monitoring import Monitor, finish_epoch, held_out_split, new_history
from ..utils._runtime import (
    NO_CALLBACKS,
    CallbackSupportMixin,
    EpochProgress,
    blas_threads_for,
    check_memory,
    fit_callback_context,
    make_generator,
)
from ._scoring import ScoringMixin
from ..utils._sklearn import Interval, _fit_context
from ._strategies import StrategiesMixin
from ._training import diverged, diverged_error, latest_records
from ._transactions import (
    _INPUT_ATTRIBUTES,
    _hold_undo,
    all_or_nothing,
    publish,
)
from ._update import ParameterUpdate, UpdateRule
from ..utils._validation import FLOAT_DTYPES, as_dense
from ..utils._weights import FIT_SAMPLE_WEIGHT_DOC, relative_weights, training_weights
from ..partition._base import ZEstimator

#: Epochs that use the initial momentum before switching to the final one (Hinton 2010).
MOMENTUM_WARMUP_EPOCHS = 5

#: A persistent chain keeps about this many rows of every unit while it trains (its
#: states, their probabilities or means, the noise, the fields of a sweep).
CHAIN_ROW_COPIES = 4


#: Constraints of the training parameters every model shares.
TRAINING_CONSTRAINTS = {
    "n_iter": [Interval(Integral, 0, None, closed="left")],
    "learning_rate": [Interval(Real, 0, None, closed="neither")],
    "batch_size": [Interval(Integral, 1, None, closed="left")],
    "momentum": [Interval(Real, 0, 1, closed="left"), tuple],
    "weight_decay": [Interval(Real, 0, None, closed="left")],
    "verbose": ["verbose"],
    "random_state": ["random_state"],
}


class BoltzmannBase(
    CallbackSupportMixin,
    ClassNamePrefixFeaturesOutMixin,
    InferenceMixin,
    ScoringMixin,
    StrategiesMixin,
    BaseEstimator,
    metaclass=ABCMeta,
):
    """Base class of skboltz estimators: the fit driver and the training loop over hooks.

    The base owns ``fit`` and ``partial_fit``: validation, the epoch loop, history,
    callbacks and all-or-nothing publication (:mod:`skboltz.core._transactions`). Each
    other concern has a module of its own: the per-epoch records and early stopping
    (:class:`~skboltz.core._monitoring.Monitor`, chosen by ``_monitor_class``), the
    divergence check (:class:`~skboltz.core._divergence.DivergenceCheck`, chosen by
    ``_divergence_check_class``), inference (``transform``, ``reconstruct``,
    ``free_energy``, ``gibbs``, ``sample``: :class:`~skboltz.core._inference.InferenceMixin`),
    scoring with the log Z cache (:class:`~skboltz.core._scoring.ScoringMixin`) and the
    ``learning`` and ``z_estimator`` parameters
    (:class:`~skboltz.core._strategies.StrategiesMixin`); the check at the end of a call
    that the model still resembles its data is its ``_degeneracy_check_class``. An
    estimator declares what it is and implements a few hooks:

    Declarations (class attributes)
        ``_view_class``: the class of its model view. The view's ``capabilities``
        decide which registered learning strategies and log Z estimators the estimator
        accepts (build its ``learning`` and ``z_estimator`` constraints with
        :func:`~skboltz.core._strategies.strategy_constraints` and its docstring's option
        lists with :func:`~skboltz.core._strategies.document_strategy_options`); a strategy
        object it cannot serve is refused at ``fit``, with a message naming both.
        ``_layout``: the named blocks of its packed parameters (at least ``weights``,
        the block weight decay acts on; :meth:`_layout_of` returns it, or a layout
        kept in the training state when the blocks depend on the model's sizes).
        ``_inference_dtype``: the dtype ``transform`` and ``reconstruct`` compute in
        (None: the input's).
        ``_structural_parameters``: the parameters a ``partial_fit`` cannot change
        (``n_components``, a connectivity, ...; changing one between calls raises an
        error that says to call ``fit``).

    Hooks every estimator implements
        ``_new_training_state(X, y, learning, rng)``: the
        :class:`~skboltz.core._training.TrainingState` of a fresh fit (parameters,
        velocity, ``learning.init_state(...)`` as ``sampler``, ...; the base adds the
        history, seeds and input transform). ``_training_params(dtype)``: the packed
        parameters rebuilt from the public attributes (``partial_fit`` continues from
        them, so hand edits take effect). ``_fitted_attributes(state)``: the public
        attributes of a finished state. ``_model_view_of(state)``: the model view of
        the state's parameters (of the fitted attributes when ``state`` is None).
        ``_reconstruction_error(view, rows)``: the monitored reconstruction error.

    The update, in one plain epoch loop
        :meth:`_train_epoch` shuffles the rows into minibatches of ``batch_size`` and,
        for each, asks ``_minibatch_gradient(model, batch, labels, state, learning,
        rule)`` for the gradient step (the ascent direction times ``rule.step``, in
        the packed layout), which the one update rule of every loop
        (:class:`~skboltz.core._update.ParameterUpdate`, made by
        :meth:`_parameter_update`) turns into the update: moving-average momentum,
        weight decay on ``_layout.weights``, and the move of the parameters (override
        :meth:`_parameter_update` for steps that are not a plain sum, like log
        variances). ``model`` is what ``_training_model(X, params, state, learning)``
        returns once per epoch (the view of the parameters by default; a training
        form, or a small object that carries what the gradient step hands to the
        update, such as the strategy's fused sampler). An estimator with a faster loop
        overrides :meth:`_train_minibatches` and keeps this one for the strategies
        without a fused sampler (as :class:`~skboltz.RBM` does). Iterate
        averaging is opt-in: return ``average_window`` from :meth:`_average_window`
        and keep the state in an :class:`~skboltz.core._training.AveragedTrainingState`.

    Training on ``(X, y)``
        ``fit(X, y)`` and ``partial_fit(X, y)`` pass ``y`` through
        :meth:`_validate_y` (which ignores it by default: density models), the
        validation split, :meth:`_new_training_state` and the minibatches (``labels``
        of the gradient hook), and its monitor sees the monitoring rows with their
        labels: a classifier's monitor records e.g. its held-out accuracy and stops on
        it, and its divergence check judges its log-loss.

    Inference and scoring
        Over the model view (``hidden_marginals``, ``reconstruct``,
        ``visible_gibbs_step``, ``draw_samples``, ``free_energy``), with the optional
        hooks ``_sampling_start_of`` (where ``sample``'s chains start),
        ``_free_energy_of`` and ``_new_input_transform`` (a fixed input map learnt at
        the first call, e.g. whitening, applied to every input and inverted on every
        visible output).
    """

    #: The class of the model view the estimator gives its strategies.
    _view_class = None
    #: Named blocks of the packed parameters (``weights``: where weight decay acts).
    _layout = None
    #: The dtype transform and reconstruct compute in (None: the input's).
    _inference_dtype = None
    #: The per-epoch records and early stopping of a call (:mod:`skboltz.core._monitoring`).
    _monitor_class = Monitor
    #: The check that a call did not make the model diverge, and the hints of its error
    #: (see :mod:`skboltz.core._divergence`).
    _divergence_check_class = DivergenceCheck
    #: The check that a fitted model still resembles its data
    #: (:mod:`skboltz.core._degeneracy`).
    _degeneracy_check_class = DegeneracyCheck
    #: The end-of-fit check that a density of binary rows beats independent columns
    #: (:mod:`skboltz.core._independence`), or None where it does not apply.
    _independence_check_class = None
    #: Attributes input validation sets before training (restored if a fit fails; see
    #: :func:`all_or_nothing`): validate_data's, and e.g. a classifier's ``classes_``.
    _input_attributes = _INPUT_ATTRIBUTES
    #: Parameters that fix the model's structure at the first call (sizes, masks, input
    #: maps): ``partial_fit`` refuses to continue a model after one of them changed.
    _structural_parameters = ()

    # -- hooks every model implements -----------------------------------------------
    @abstractmethod
    def _new_training_state(self, X, y, learning, rng):
        """The :class:`~skboltz.core._training.TrainingState` of a fresh fit (parameters,
        velocity, sampler state, ...); the caller adds the history and seeds."""

    @abstractmethod
    def _training_params(self, dtype):
        """The training-form parameter array rebuilt from the public attributes."""

    @abstractmethod
    def _fitted_attributes(self, state):
        """The fitted attributes (name -> value) of a finished training state."""

    @abstractmethod
    def _model_view_of(self, state):
        """The model view of ``state``'s parameters (of the fitted ones when None)."""

    @abstractmethod
    def _reconstruction_error(self, view, rows, weights=None):
        """Mean squared error of the mean-field reconstruction of ``rows`` (each row's
        weighted by ``weights`` in a weighted fit: :func:`~skboltz.utils._weights.mean_square`)."""

    # -- validation ----------------------------------------------------------------
    def _input_units(self):
        """The layer class of the rows ``X`` holds (its range, its clipping, whether a
        row has a probability, the checks it offers): the view's ``input_units``."""
        return self._view_class.input_units

    def _validate_X(self, X, *, reset):
        """The rows the model sees: validated (as the input layer takes them: binary
        units clip them into [0, 1] with a warning) and, after the first fit, mapped by
        the fitted input transform (if any; see :meth:`_new_input_transform`)."""
        X = self._check_rows(X, reset=reset)
        if not reset:
            transform = self._input_transform()
            if transform is not None:
                X = transform.transform(X)
        return X

    def _check_rows(self, X, *, reset):
        """``X`` validated (``validate_data``), then as the input layer takes it
        (``check_rows``: binary units clip values outside [0, 1] into it, with a
        warning)."""
        units = self._input_units()
        if not reset and self._is_valid_fitted_input(X, units.value_range):
            return X
        X = validate_data(
            self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=reset,
            ensure_all_finite="allow-nan" if self._takes_missing() else True,
        )
        self._check_missing_input(X)
        return units.check_rows(X)

    def _takes_missing(self):
        """Whether ``X`` may mark missing entries with NaN (see
        :class:`~skboltz.estimators._restricted.RestrictedBoltzmannBase`); other estimators
        refuse NaN in validation."""
        return False

    def _check_missing_input(self, X):
        """Refuse NaN in validated rows where the estimator does not take it there."""

    def _is_valid_fitted_input(self, X, value_range):
        """Whether ``X`` is an input that ``validate_data(reset=False)`` would return
        unchanged, with no warning.

        A few checks instead of validate_data's hundreds of microseconds, which would be
        most of a ``partial_fit`` call on one small minibatch: a plain float ndarray
        with rows and the fitted number of columns, all finite (and, when
        ``value_range``, within it), fitted without feature names. Anything else
        goes through ``validate_data``, which converts it or raises.
        """
        if not (
            type(X) is np.ndarray
            and X.dtype in FLOAT_DTYPES
            and X.ndim == 2
            and X.shape[0] >= 1
            and X.shape[1] == getattr(self, "n_features_in_", None)
            and not hasattr(self, "feature_names_in_")
        ):
            return False
        if value_range is not None:  # min and max are NaN when any value is NaN
            low, high = value_range
            return bool(X.min() >= low) and bool(X.max() <= high)
        return bool(np.isfinite(X.sum()))

    def _validate_y(self, X, y, *, reset, classes=None):
        """The training labels the estimator uses (None: it models ``X`` alone).

        Density models ignore ``y`` (a ``Pipeline`` passes it to every step); an
        estimator trained on ``(X, y)`` validates and encodes it here. With ``reset``
        (``fit``, or the first ``partial_fit``) it may record what it learns of the
        labels on the estimator, as ``validate_data`` records ``n_features_in_``: name
        those attributes in ``_input_attributes``, and a fit that fails puts them back.
        ``classes`` is what ``partial_fit(X, y, classes=...)`` received (a classifier's
        full set of labels, known before all of them are seen).
        """
        return None

    def _new_input_transform(self, X, row_weights=None):
        """A fixed, invertible map of the input rows learnt at the first call (an
        object with ``transform``, ``inverse_transform`` and ``log_abs_det``), or None;
        ``row_weights``: the rows' relative weights (see :mod:`skboltz.utils._weights`).

        The model is fitted to the transformed rows; every method takes and returns
        rows in the units of the input, and ``score_samples`` adds the log-Jacobian.
        """
        return None

    def _input_transform(self):
        """The fitted input transform (see :meth:`_new_input_transform`), or None.

        An estimator that publishes its transform's parameters rebuilds it from them,
        so that hand-edited attributes take effect (as for the model's parameters).
        """
        return self._training_state.input_transform

    # -- training ------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Fit the model to ``X`` from a fresh start, for the configured number of epochs.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data: values in [0, 1] for binary visible units (RBM),
            standardised features for GaussianRBM. RBM, GaussianRBM,
            CategoricalRBM and TabularRBM take NaN as a missing entry (see their Notes).
        y : None
            Ignored; present for API consistency.
        {sample_weight}

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, y, partial=False, sample_weight=sample_weight)

    fit.__doc__ = fit.__doc__.replace("{sample_weight}", FIT_SAMPLE_WEIGHT_DOC)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, sample_weight=None):
        """Train for one more epoch over ``X``, continuing the previous state.

        Continues the parameters, momentum, persistent chains and random stream of the
        previous ``fit``/``partial_fit``; the first call starts from scratch. ``X`` is
        split into minibatches of ``batch_size``, so a call with ``batch_size`` rows is
        one parameter update.

        A call that fails (e.g. :class:`~skboltz.exceptions.TrainingDivergedError`)
        leaves the estimator as it was. Every call checks that the parameters stay
        finite; whether a model of binary units became provably far worse than the
        uniform distribution is checked once the calls since the last check trained on
        256 rows, against the model the first of them started from (the check costs
        about as much as the update of a small minibatch).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data: values in [0, 1] for binary visible units (RBM),
            standardised features for GaussianRBM. RBM, GaussianRBM,
            CategoricalRBM and TabularRBM take NaN as a missing entry (see their Notes).
        y : None
            Ignored; present for API consistency.
        {sample_weight}

        Returns
        -------
        self : object
            The updated estimator.
        """
        return self._fit(X, y, partial=True, sample_weight=sample_weight)

    partial_fit.__doc__ = partial_fit.__doc__.replace("{sample_weight}",
                                                      FIT_SAMPLE_WEIGHT_DOC)

    def _fit(self, X, y, *, partial, classes=None, sample_weight=None):
        with all_or_nothing(self):
            return self._fit_unguarded(X, y, partial=partial, classes=classes,
                                       sample_weight=sample_weight)

    def _fit_unguarded(self, X, y, *, partial, classes=None, sample_weight=None):
        # Strategies the model cannot serve are refused before any work.
        learning = self._resolve_learning()
        if isinstance(self.z_estimator, ZEstimator):
            self._resolve_z_estimator(self.z_estimator, None)
        first_call = not (partial and hasattr(self, "_training_state"))
        if not first_call:
            self._check_structure_unchanged()
        X = self._validate_X(X, reset=first_call)
        # The rows of positive weight (before the labels are read: a class whose rows
        # all weigh 0 is no class), and their relative weights (None: unweighted).
        X, y, weights = training_weights(sample_weight, X, y)
        y = self._validate_y(X, y, reset=first_call, classes=classes)
        weighted = {} if weights is None else {"row_weights": weights}
        validation = None
        if first_call:
            self._check_first_rows(X, partial=partial)
            # A fixed map of the inputs (GaussianRBM's whitening), from all the rows.
            input_transform = self._new_input_transform(X, **weighted)
            if input_transform is not None:
                X = input_transform.transform(X)
            check_memory(*self._training_memory(X, learning))
            rng = make_generator(self.random_state)
            if not partial and self.validation_fraction is not None:
                X, y, validation, weights = self._split_validation(X, y, rng, weights)
                weights = relative_weights(weights)  # of mean 1 over the training rows
                weighted = {} if weights is None else {"row_weights": weights}
            state = self._new_training_state(X, y, learning, rng, **weighted)
            state.input_transform = input_transform
            state.history = new_history()
            state.log_z_seed = int(rng.integers(np.iinfo(np.int32).max))
            state.sampling_seed = int(rng.integers(np.iinfo(np.int32).max))
            state.structure = self._structure()
            undo = None
        else:
            # Work on a copy of what training changes in place, and check-point the
            # rest (all-or-nothing; see TrainingState.begin_update). The strategy that
            # made the state copies its own part.
            state, undo = self._training_state.begin_update(self.learning_)
        state.row_weights = weights
        try:
            if not first_call:
                state.params = self._training_params(X.dtype)
                state.input_transform = self._input_transform()
                self._check_continued_rows(X, state)
                if not same_strategy(learning, self.learning_):
                    # Another learning strategy (or other settings of it): its own
                    # state, started from the current parameters and this call's rows.
                    check_memory(*self._training_memory(X, learning))
                    state.sampler = learning.init_state(
                        self._model_view_of(state), self._chain_starts(X, y),
                        self._effective_batch_size(X), state.rng,
                    )
            monitor = self._monitor_class(self, X, y, validation, weights=weights)
            n_epochs = 1 if partial else self.n_iter
            # Callbacks see one task per call with one subtask per epoch (_train).
            callback_ctx = fit_callback_context(self, max_subtasks=n_epochs)
            callback_ctx.call_on_fit_task_begin(estimator=self, X=X, y=y)
            with blas_threads_for(self._training_product_size(X)):
                self._train(
                    X, y, state, learning, n_epochs, monitor, early_stopping=not partial,
                    callback_ctx=callback_ctx,
                )
                n_updates = n_epochs * -(-X.shape[0] // self._effective_batch_size(X))
                checked_rows = monitor.rows_for_checks(state)
                self._divergence_check_class(self).when_due(
                    state, learning, checked_rows, X.shape[0], n_updates, first_call)
                degeneracy_check = self._degeneracy_check_class(self)
                degeneracy_check.remember_data(state, checked_rows, first_call)
                degenerate = degeneracy_check.when_due(state, checked_rows,
                                                       n_epochs * X.shape[0], first_call)
                below = None
                # (a degenerate model's warning already says it is no density)
                if (not partial and degenerate is None
                        and self._independence_check_class is not None):
                    independence_check = self._independence_check_class(self)
                    below = independence_check.when_due(
                        state, checked_rows, n_epochs * X.shape[0], n_updates)
            state.row_weights = None  # the call's, not the model's
            z_estimator = self._fitted_z_estimator(state, first_call)
            attributes = self._fitted_attributes(state)
        except BaseException:
            if undo is not None:
                undo()  # put back what the copy shares with the kept state
            raise
        # Publish only now, all at once: every epoch finished and the model is sound.
        attributes.update(
            learning_=learning, z_estimator_=z_estimator, _training_state=state,
            _log_z_cache={},
            _sampling_rng=None,  # made on first use by gibbs (a fresh stream per fit)
        )
        publish(self, attributes)
        if undo is not None:
            _hold_undo(self, undo)  # a meta-estimator may still undo the whole call
        if degenerate is not None:
            degeneracy_check.warn(degenerate)
        if below is not None:
            independence_check.warn(below)
        callback_ctx.call_on_fit_task_end(
            estimator=self, X=X, y=y, reconstruction_attributes={}
        )
        return self

    def _fitted_z_estimator(self, state, first_call):
        """The ``z_estimator_`` a call publishes. A ``partial_fit`` with the same named
        setting keeps the last one: its choice ("auto") follows from the structure,
        which partial_fit keeps (and a view and a resolution cost a tenth of a call
        on one small minibatch)."""
        setting = self.z_estimator
        if (not first_call and type(setting) is str
                and setting == state.z_estimator_setting):
            return self.z_estimator_
        state.z_estimator_setting = setting if type(setting) is str else None
        return self._resolve_z_estimator(setting, self._model_view_of(state))

    # -- what partial_fit continues ------------------------------------------------
    def _structure(self):
        """The values of the structural parameters, as the first call found them."""
        return {name: copy.deepcopy(getattr(self, name))
                for name in self._structural_parameters}

    def _check_structure_unchanged(self):
        """Refuse to continue a model whose structure the parameters no longer describe
        (``set_params(n_components=32)`` between ``partial_fit`` calls would otherwise
        be ignored while ``get_params`` says 32)."""
        fitted = getattr(self._training_state, "structure", None) or {}
        for name, value in fitted.items():
            check_setting_unchanged(self, name, getattr(self, name), value)

    def _check_first_rows(self, X, *, partial):
        """Checks of the rows of a ``fit`` (or a first ``partial_fit`` call, which may
        be one small minibatch), before anything is trained."""

    def _check_continued_rows(self, X, state):
        """Checks of the rows of a ``partial_fit`` call after the first (which the
        fresh training state checks): cheap, every call is one."""

    def _chain_starts(self, X, y):
        """The rows a learning strategy's chains start from (the data of its
        ``init_state``, in the layout of the model's visible units): the training rows,
        unless the visible units hold more than the features."""
        return X

    def _training_product_size(self, X):
        """Multiply-adds of one typical training matrix product (sets BLAS threads)."""
        return 0

    def _training_bytes(self, X):
        """Approximate memory a fit on ``X`` allocates (checked before it starts)."""
        return 0

    def _size_description(self, X):
        """(what needs the memory, what to do) for the memory error."""
        return f"Training {type(self).__name__}", "Use a smaller model."

    def _units_per_chain(self, X):
        """Units of one state of the model (a persistent chain's row)."""
        return X.shape[1]

    def _training_memory(self, X, learning):
        """``(bytes, what, advice)`` of a fit on ``X`` with ``learning``, for
        ``check_memory``: the model's own arrays and the strategy's persistent chains
        (``PCD(n_chains=10**8)`` would otherwise end in numpy's allocation error)."""
        n_bytes = self._training_bytes(X)
        what, advice = self._size_description(X)
        n_chains = learning.n_persistent_chains(self._effective_batch_size(X))
        if n_chains:
            chain_bytes = (CHAIN_ROW_COPIES * n_chains * self._units_per_chain(X)
                           * np.dtype(X.dtype).itemsize)
            if chain_bytes < 0.1 * n_bytes:  # not worth naming (PCD's batch_size chains)
                return n_bytes + chain_bytes, what, advice
            knobs = " or ".join(name for name in ("n_chains", "n_temperatures")
                                if name in learning.get_params())
            what += f", with {n_chains:,} persistent chains ({learning!r})"
            fewer = (f"Use fewer chains: a smaller {knobs or 'setting'} of the learning "
                     "strategy.")
            # The larger part first: most often the chains.
            advice = fewer if chain_bytes >= n_bytes else f"{advice} Or: {fewer}"
            n_bytes += chain_bytes
        return n_bytes, what, advice

    def _effective_batch_size(self, X):
        """Rows per minibatch: never more than there are rows (buffers and chains are
        sized by it; ``batch_size=10**7`` on 60 rows allocated 5.8 GB)."""
        return max(1, min(self.batch_size, X.shape[0]))

    def _split_validation(self, X, y, rng, weights=None):
        """``(X_train, y_train, (X_valid, y_valid, weights_valid), weights_train)``:
        ``validation_fraction`` of the rows held out, ``y`` and the row weights split
        alike (None stays None)."""
        train, valid = held_out_split(self.validation_fraction, X.shape[0], rng)

        def split(values):
            return (None, None) if values is None else (values[train], values[valid])

        (y_train, y_valid), (w_train, w_valid) = split(y), split(weights)
        return X[train], y_train, (X[valid], y_valid, w_valid), w_train

    def _train(
        self, X, y, state, learning, n_epochs, monitor, *, early_stopping,
        callback_ctx=NO_CALLBACKS,
    ):
        history = state.history
        stopping = monitor.early_stopping() if early_stopping else None
        for _ in range(n_epochs):
            epoch_ctx = callback_ctx.subcontext(task_name="epoch")
            epoch_ctx.call_on_fit_task_begin(estimator=self, X=X, y=y)
            start = time.perf_counter()
            # Overflow in a diverging run is caught by the magnitude check below,
            # which raises a clear error instead of numpy's warnings.
            with np.errstate(over="ignore", invalid="ignore"):
                self._train_epoch(X, y, state, learning)
            if diverged(state.params):
                hint = self._divergence_check_class(self).hint(X, state, learning)
                raise diverged_error(self, state.n_iter + 1, hint)
            state.n_iter += 1
            record = {"epoch": state.n_iter, "time": time.perf_counter() - start}
            record.update(monitor.record(state, epoch_seconds=record["time"]))
            record.update(learning.pop_diagnostics(state.sampler))
            if finish_epoch(self, record, history, state.params, epoch_ctx=epoch_ctx,
                            stopping=stopping, X=X, y=y):
                break

    # -- the plain update loop -----------------------------------------------------
    def _train_epoch(self, X, y, state, learning):
        """One pass over the rows in shuffled minibatches, updating ``state`` in place.

        The parameters the epoch's updates move (:meth:`_begin_epoch`), what the
        gradient hook works with (:meth:`_training_model`), the epoch's update rule
        bound to the parameters (:meth:`_parameter_update`), the updates
        (:meth:`_train_minibatches`), then the end of the epoch of iterate averaging.
        """
        params = self._begin_epoch(state, learning)
        model = self._training_model(X, params, state, learning)
        rule = UpdateRule.of(self._momentum_at(state.n_iter),
                             self._learning_rate_of(state, learning),
                             self._weight_decay_of(state),
                             self._progress(state))
        update = self._parameter_update(model, params, state, rule)
        self._train_minibatches(X, y, state, learning, model, rule, update)
        state.pending_decay = update.finish()
        state.end_epoch(self._average_window(state))

    def _train_minibatches(self, X, y, state, learning, model, rule, update):
        """The epoch's updates: for each minibatch, the gradient step from
        ``_minibatch_gradient``, then ``update.apply``; iterate averaging (if the
        state averages) counts each update."""
        window = self._average_window(state)
        order = state.rng.permutation(X.shape[0])
        report = EpochProgress(self, state.n_iter + 1, X.shape[0]) if self.verbose else None
        weights = state.row_weights
        for start in range(0, X.shape[0], self.batch_size):
            if report is not None:
                report(start)
            rows = order[start : start + self.batch_size]
            labels = None if y is None else y[rows]
            # the rows' weights go to the hook only in a weighted fit (see _weights.py)
            weighted = {} if weights is None else {"weights": weights[rows]}
            gradient = self._minibatch_gradient(
                model, self._minibatch_rows(X, rows, state, model), labels, state,
                learning, rule, **weighted
            )
            update.apply(gradient)
            state.count_update(window)

    def _minibatch_rows(self, X, rows, state, model):
        """The dense rows of a minibatch (``rows`` of ``X``) the gradient hook sees."""
        return as_dense(X[rows])

    def _begin_epoch(self, state, learning):
        """The parameters this epoch's updates move (the iterate, when averaging)."""
        return state.resume(self._average_window(state) is not None)

    def _average_window(self, state):
        """Updates the published average spans, or None: no iterate averaging (the
        training ``state`` may hold what a setting resolved to at the first call)."""
        return None

    def _training_model(self, X, params, state, learning):
        """What the gradient hook works with for one epoch: by default the model view
        of the state's parameters (arrays shared, so it follows the updates)."""
        return self._model_view_of(state)

    def _minibatch_gradient(self, model, batch, labels, state, learning, rule):
        """The gradient step of one minibatch: ``rule.step`` times the ascent direction
        of the log-likelihood (or of the estimator's objective), shaped like the packed
        parameters. ``batch`` is dense; ``labels`` are its rows' labels (None for a
        density model). A weighted fit passes ``weights=``, the rows' relative
        weights, by which the data's statistics count each row (see
        :mod:`skboltz.utils._weights`); an estimator without it refuses weighted fits."""
        raise NotImplementedError(
            f"{type(self).__name__} implements neither _minibatch_gradient nor its own "
            "_train_epoch."
        )

    def _layout_of(self, state):
        """The named blocks of ``state``'s packed parameters: the class's ``_layout``
        (an estimator whose blocks depend on its sizes, such as a deep Boltzmann
        machine's, keeps its layout in the state and returns it here)."""
        return self._layout

    def _parameter_update(self, model, params, state, rule, **blocks):
        """The update rule (:class:`~skboltz.core._update.ParameterUpdate`: momentum, weight
        decay on the layout's ``weights``) bound to the parameters the epoch's updates
        move; an estimator whose steps are not a plain sum passes ``blocks`` (a
        log-scale block, a correction after each step)."""
        return ParameterUpdate(rule, params, state.velocity, self._layout_of(state).weights,
                               pending_decay=state.pending_decay, **blocks)

    def _momentum_at(self, epoch):
        if isinstance(self.momentum, tuple):
            if len(self.momentum) != 2 or not all(0 <= m < 1 for m in self.momentum):
                raise ValueError(
                    "momentum must be a float in [0, 1) or an (initial, final) pair of "
                    f"them, got {self.momentum!r}."
                )
            initial, final = self.momentum
            return initial if epoch < MOMENTUM_WARMUP_EPOCHS else final
        return self.momentum

    def _learning_rate_of(self, state, learning=None):
        """The learning rate of the coming epoch under ``learning`` (``learning_rate``;
        an estimator with a schedule, an adaptive step or a per-strategy default returns
        its own)."""
        return self.learning_rate

    def _weight_decay_of(self, state):
        """The weight decay of the coming epoch (``weight_decay``; an estimator with a
        data-dependent default returns its own)."""
        return self.weight_decay

    def _progress(self, state):
        """Fraction of the requested training done, for schedules (k growth, momentum)."""
        return min(1.0, state.n_iter / max(self.n_iter - 1, 1))

    # -- fitted attributes shared by all models ------------------------------------
    @property
    def n_iter_(self):
        """Number of epochs trained so far (``fit`` resets it, ``partial_fit`` adds one)."""
        check_is_fitted(self, "_training_state")
        return self._training_state.n_iter

    @property
    def history_(self):
        """Per-epoch training records, a dict of equal-length lists.

        Always: ``epoch``, ``time`` (seconds) and ``reconstruction_error`` (mean squared
        error of the mean-field reconstruction of up to 256 evenly spaced training
        rows). With ``validation_fraction``: ``free_energy_train`` (mean free energy of
        up to 1000 training rows), ``free_energy_valid`` (of the held-out rows),
        ``free_energy_gap`` (their difference: Hinton's overfitting monitor; a gap that
        keeps growing means overfitting) and ``reconstruction_error_valid``. With
        ``monitor_likelihood=True``:
        ``log_likelihood_train`` (and ``log_likelihood_valid``), the mean log p(v)
        through ``z_estimator``, ``log_z_time`` (seconds spent on log Z) and, for
        sampling estimators, ``log_z_std_error``. And the learning strategy's
        diagnostics of the epoch (its ``pop_diagnostics``): ``swap_acceptance``, the
        share of proposed swaps that parallel tempering accepted;
        ``mean_field_unconverged``, the mean-field solves of
        :class:`~skboltz.learning.MeanFieldGradient` that stopped at ``max_iter``
        before converging.

        The records of the latest 10,000 epochs (``HISTORY_EPOCHS``): a stream of
        ``partial_fit`` calls (one epoch each) keeps a bounded history, and
        ``epoch`` numbers the records kept.
        """
        check_is_fitted(self, "_training_state")
        return copy.deepcopy(latest_records(self._training_state.history))

    def __sklearn_is_fitted__(self):
        # What scikit-learn's _fit_context asks before every partial_fit call (to skip
        # the parameter validation of a fitted estimator): without this method it lists
        # every attribute ending in "_", a few microseconds each call.
        return "_training_state" in self.__dict__

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def _model_view(self):
        return self._model_view_of(None)


def same_setting(a, b):
    """Whether two parameter values are the same setting (numbers, strings, tuples,
    lists and arrays compared by value)."""
    if a is b:
        return True
    if isinstance(a, str) or isinstance(b, str):
        return type(a) is type(b) and a == b
    if isinstance(a, Real) or isinstance(b, Real):
        return isinstance(a, Real) and isinstance(b, Real) and a == b
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except (TypeError, ValueError):
        return False


def same_strategy(a, b):
    """Whether two strategy objects are the same class with the same settings (a
    strategy holds settings only, so its instance attributes are its settings)."""
    if type(a) is not type(b):
        return False
    settings, others = vars(a), vars(b)
    return settings.keys() == others.keys() and all(
        same_setting(value, others[name]) for name, value in settings.items()
    )


#: The ``_parameter_constraints`` entry of a stacked or deep model's layer sizes: a
#: sequence of sizes, or one int for a single layer (as MLPClassifier's).
LAYER_SIZES_CONSTRAINT = {
    "hidden_layer_sizes": ["array-like", Interval(Integral, 1, None, closed="left")],
}


def checked_layer_sizes(hidden_layer_sizes):
    """``hidden_layer_sizes`` as a list of ints (one int: a single layer), or a
    ValueError saying what it must be (a stacked or deep model's layer sizes)."""
    if isinstance(hidden_layer_sizes, Integral) and not isinstance(hidden_layer_sizes, bool):
        hidden_layer_sizes = [hidden_layer_sizes]
    sizes = np.asarray(hidden_layer_sizes)
    if (
        sizes.ndim != 1
        or sizes.size == 0
        or not all(isinstance(s, Integral) and s >= 1 for s in sizes.tolist())
    ):
        raise ValueError(
            "hidden_layer_sizes must be a positive integer or a non-empty sequence of "
            f"them, got {hidden_layer_sizes!r}."
        )
    return [int(s) for s in sizes.tolist()]


def check_setting_unchanged(estimator, name, current, fitted):
    """Raise the error of a structural parameter changed between ``partial_fit`` calls."""
    if not same_setting(current, fitted):
        raise ValueError(
            f"{type(estimator).__name__}: {name}={_short_repr(current)}, but the model "
            f"was fitted with {name}={_short_repr(fitted)}, and partial_fit continues "
            f"the fitted model, whose {name} cannot change. Call fit to start again "
            f"with the new setting, or set {name} back."
        )


def _short_repr(value):
    """A parameter value for a message (arrays by their shape)."""
    if isinstance(value, np.ndarray) or (isinstance(value, list) and len(value) > 8):
        return f"<array of shape {np.shape(value)}>"
    return repr(value)


__all__ = ["BoltzmannBase"]
