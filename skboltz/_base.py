"""The base of skboltz's estimators: training loop, inference and scoring over hooks.

:class:`BoltzmannBase` owns ``fit`` and ``partial_fit``, the epoch loop, ``transform``,
``reconstruct``, ``free_energy``, ``gibbs``, ``sample`` and the scores; an estimator
declares its model view and layout and implements a few hooks (its docstring, and
"Writing a new estimator" in the user guide's extending page, list them). The
strategies an estimator accepts follow from its view's capabilities
(:func:`strategy_constraints`).

Training is all-or-nothing: ``fit`` and ``partial_fit`` work on a private copy of the
training state and publish it only when every epoch finished with finite parameters,
so an exception (divergence, interrupt, bad input) never leaves a half-updated model.
"""

import contextlib
import contextvars
import copy
import functools
import hashlib
import inspect
import time
import warnings
from abc import ABCMeta, abstractmethod
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    clone,
)
from sklearn.utils.validation import check_is_fitted, validate_data

from ._capabilities import BINARY, check_supported, supports
from ._energy import binary_entropy_row_sums
from ._runtime import (
    NO_CALLBACKS,
    CallbackSupportMixin,
    EpochProgress,
    _LogZProgress,
    blas_threads_for,
    check_memory,
    fit_callback_context,
    make_generator,
    warn_user,
)
from ._sklearn import Interval, StrOptions, _fit_context, check_count
from ._training import DIVERGED_MAGNITUDE, EarlyStopping, diverged
from ._update import ParameterUpdate, UpdateRule
from . import _degeneracy as degeneracy
from .exceptions import (
    ApproximateScoreWarning,
    DataRangeWarning,
    DegenerateModelWarning,
    LogZAccuracyWarning,
    TrainingDivergedError,
)
from .learning._base import LEARNING_STRATEGIES, LearningStrategy
from .partition._base import KINDS, Z_ESTIMATORS, LogZ, ZEstimator
from .partition._bounds import log_likelihood_bounds

#: A weight decay whose step (learning rate times weight_decay) reaches this shrinks
#: the weights to nothing within 16 updates (the RBMs apply 16 updates' decay at once,
#: so it overshoots zero there): the likely cause of a diverged fit. Usual settings
#: make it 1e-2 at most.
DECAY_STEP_LIMIT = 1 / 16

#: A model whose log-likelihood on its own training rows is provably lower than the
#: uniform distribution's by more than this fraction has diverged (see
#: ``BoltzmannBase._check_likelihood``). Healthy fits score far above uniform.
DIVERGED_BELOW_UNIFORM = 0.25


#: Epochs that use the initial momentum before switching to the final one (Hinton 2010).
MOMENTUM_WARMUP_EPOCHS = 5

#: Training rows used for the per-epoch monitoring records.
MONITOR_ROWS = 1000

#: Of those, rows whose reconstruction error is recorded every epoch (cheap enough to
#: stay a few percent of a digits epoch, enough for a smooth curve).
RECONSTRUCTION_ROWS = 256

#: Of those, rows on which the end of each fit / partial_fit is checked for divergence.
LIKELIHOOD_CHECK_ROWS = 32

#: The divergence check's bound on log Z takes this many mean-field steps from its best
#: candidate (see ``BoltzmannBase._likelihood_upper_bound``) when the calls it checks
#: made at least this many minibatch updates: the steps cost about as much as a small
#: model's update, so a check of a few partial_fit calls on one minibatch each (a hot
#: path) goes without them.
MEAN_FIELD_STEPS = 2
MEAN_FIELD_CHECK_UPDATES = 10

#: partial_fit calls are checked for divergence together once they have trained on
#: this many rows (see BoltzmannBase._check_divergence_when_due).
PARTIAL_FIT_CHECK_ROWS = 256

#: A persistent chain keeps about this many rows of every unit while it trains (its
#: states, their probabilities or means, the noise, the fields of a sweep).
CHAIN_ROW_COPIES = 4

#: "auto" picks exact enumeration up to this many states, else AIS.
AUTO_EXACT_MAX_STATES = 2**20


#: Likelihood monitoring with a default z_estimator gives each epoch's log Z estimate
#: the epoch's training time, and at least this many seconds.
MONITOR_LOG_Z_SECONDS = 1.0


_FLOAT_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


#: What validate_data(reset=True) sets on an estimator before any training happens (an
#: estimator adds what its own validation sets, e.g. a classifier's ``classes_``, in its
#: class attribute ``_input_attributes``).
_INPUT_ATTRIBUTES = ("n_features_in_", "feature_names_in_")


#: Counts an estimator's publications (tells a failed fit from one that finished).
_GENERATION = "_fit_generation"


def publish(estimator, attributes):
    """Set an estimator's fitted attributes all at once.

    The new ``__dict__`` is built aside and stored in one assignment. A
    ``KeyboardInterrupt`` (or any signal handler's exception) arrives between
    bytecodes, so it lands before the store (nothing changed) or after it (everything
    new), never with some attributes from the old fit and some from the new one.
    """
    attributes[_GENERATION] = estimator.__dict__.get(_GENERATION, 0) + 1
    estimator.__dict__ = {**estimator.__dict__, **attributes}


@contextlib.contextmanager
def all_or_nothing(estimator):
    """Undo validate_data's input bookkeeping if the fit in the block does not publish.

    Fits publish their results only at the end (:func:`publish`), but
    ``validate_data(reset=True)`` records ``n_features_in_`` (and ``feature_names_in_``)
    at the start, and an estimator's own validation may record more (its class
    attribute ``_input_attributes``, e.g. a classifier's ``classes_``); restoring them
    keeps a failed or interrupted fit from leaving them out of step with the kept
    model. The restore is one store, like the publication.
    """
    names = getattr(estimator, "_input_attributes", _INPUT_ATTRIBUTES)
    saved = {k: estimator.__dict__[k] for k in names if k in estimator.__dict__}
    generation = estimator.__dict__.get(_GENERATION, 0)
    try:
        yield
    except BaseException:
        if estimator.__dict__.get(_GENERATION, 0) == generation:  # nothing published
            restored = {
                k: v for k, v in estimator.__dict__.items() if k not in names
            }
            restored.update(saved)
            estimator.__dict__ = restored
        raise


#: The update journal of the innermost ``held_updates`` block of this thread, if any.
_HELD_UPDATES = contextvars.ContextVar("skboltz_held_updates", default=None)


class _UpdateJournal:
    """What ``held_updates`` needs to put its estimators back: their attributes when
    the block began, and the undo of every update made in it (see
    :meth:`~skboltz._training.TrainingState.begin_update`)."""

    def __init__(self, estimators):
        self.held = {id(estimator) for estimator in estimators}
        self.saved = [(estimator, dict(estimator.__dict__)) for estimator in estimators]
        self.undos = []

    def holds(self, estimator):
        return id(estimator) in self.held

    def roll_back(self):
        for undo in reversed(self.undos):  # the latest update first
            undo()
        for estimator, attributes in self.saved:
            estimator.__dict__ = attributes


@contextlib.contextmanager
def held_updates(estimators):
    """Make every ``fit`` and ``partial_fit`` of ``estimators`` in the block one update
    that happens entirely or not at all.

    Each call publishes as usual, but what its training shares with the state it
    replaced (random generators' positions, the history) stays undoable until the block
    ends: if the block raises, every estimator is put back exactly as it was when the
    block began (attributes, random streams, history), as one failed call of its own
    would leave it; if the block finishes, the updates stand. A meta-estimator whose
    one call trains several models (a DBN's ``partial_fit``, one epoch of each layer)
    holds them across all of them. A block inside another joins it (the outer block
    decides). Only the thread that opened the block is held.
    """
    outer = _HELD_UPDATES.get()
    if outer is not None:
        outer.held.update(id(estimator) for estimator in estimators)
        outer.saved.extend((estimator, dict(estimator.__dict__)) for estimator in estimators
                           if not any(estimator is kept for kept, _ in outer.saved))
        yield
        return
    journal = _UpdateJournal(estimators)
    token = _HELD_UPDATES.set(journal)
    try:
        yield
    except BaseException:
        journal.roll_back()
        raise
    finally:
        _HELD_UPDATES.reset(token)


def _hold_undo(estimator, undo):
    """Keep ``undo`` of a finished update while a ``held_updates`` block holds the
    estimator (it is dropped otherwise: the update stands)."""
    journal = _HELD_UPDATES.get()
    if journal is not None and journal.holds(estimator):
        journal.undos.append(undo)


def reads_one_publication(method):
    """Run ``method`` on one publication of the estimator's attributes.

    A fit publishes its attributes in one store (:func:`publish`); a method that reads
    several of them (parameters, log Z cache, training state) could otherwise read some
    from one fit and some from another fit running in another thread (a score made of
    one fit's free energies and the other's log Z). The method runs on a shallow
    instance over the ``__dict__`` the estimator has when the call starts: one read,
    and an object allocation per call. What the method stores (log Z estimates, the
    sampling stream) lands in that fit's attributes, as before.
    """

    @functools.wraps(method)
    def on_one_publication(self, *args, **kwargs):
        published = object.__new__(type(self))
        published.__dict__ = self.__dict__  # the same dict object: one read
        return method(published, *args, **kwargs)

    return on_one_publication


def clipped_into_unit_interval(X):
    """``X`` with its values clipped into [0, 1], warning when any lies outside.

    Binary units have no probability outside [0, 1]: every method that takes visible
    rows (``fit``, ``partial_fit``, ``transform``, ``score_samples``, ...) takes them at
    their clipped values, so that a model is trained and scored on the same rows. A
    copy when anything is clipped; ``X`` itself otherwise.
    """
    outside = rows_outside_unit_interval(X)
    if not outside.any():
        return X
    warn_user(
        f"{int(outside.sum())} of {X.shape[0]} rows have values outside [0, 1], the "
        "range of binary units: they are used at their values clipped into [0, 1] (by "
        "fit, partial_fit, transform and the scores alike). Scale the features first, "
        "e.g. with sklearn.preprocessing.MinMaxScaler() in a Pipeline, or binarize them.",
        DataRangeWarning,
    )
    X = X.copy()
    np.clip(X.data if sp.issparse(X) else X, 0, 1, out=X.data if sp.issparse(X) else X)
    return X


def rows_outside_unit_interval(X):
    """Mask of the rows of ``X`` (dense or sparse) with a value outside [0, 1]."""
    if sp.issparse(X):
        X = X.tocsr()
        outside_value = (X.data < 0) | (X.data > 1)
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[outside_value]
        mask = np.zeros(X.shape[0], dtype=bool)
        mask[rows] = True
        return mask
    return np.any((X < 0) | (X > 1), axis=1)


@functools.cache
def accepted_strategies(view_class):
    """The registered learning strategies and log Z estimators a model view class
    supports: two dicts, name -> class (see :mod:`skboltz._capabilities`)."""
    return (
        {name: cls for name, cls in LEARNING_STRATEGIES.items() if supports(view_class, cls)},
        {name: cls for name, cls in Z_ESTIMATORS.items() if supports(view_class, cls)},
    )


@functools.cache
def _binary_visible_units(view_class):
    return view_class.capabilities.units_of("visible") == BINARY


def strategy_constraints(view_class):
    """The ``learning`` and ``z_estimator`` constraints of a model whose view class is
    ``view_class``: the registered names its view supports, or an object."""
    learning, z_estimators = accepted_strategies(view_class)
    return {
        "learning": [StrOptions(set(learning)), LearningStrategy],
        "z_estimator": [StrOptions({"auto", *z_estimators}), ZEstimator],
    }


def document_strategy_options(doc, view_class, default_learning):
    """Fill ``{learning_options}`` and ``{z_estimator_options}`` in a model's docstring
    with the names it accepts (the default first)."""
    learning, z_estimators = accepted_strategies(view_class)

    def names(first, others):
        ordered = [first, *sorted(set(others) - {first})]
        return "{" + ", ".join(f'"{name}"' for name in ordered) + "}"

    return doc.replace("{learning_options}", names(default_learning, learning)).replace(
        "{z_estimator_options}", names("auto", z_estimators)
    )


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

#: Constraints of the monitoring and early-stopping parameters every model shares.
MONITORING_CONSTRAINTS = {
    "validation_fraction": [Interval(Real, 0, 1, closed="neither"), None],
    "n_iter_no_change": [Interval(Integral, 1, None, closed="left"), None],
    "tol": [Interval(Real, 0, None, closed="left")],
    "monitor_likelihood": ["boolean"],
}

#: numpydoc text of those parameters, shared by the models' docstrings.
MONITORING_PARAMETERS_DOC = """validation_fraction : float or None, default=None
        Fraction of the rows ``fit`` holds out (not trained on) to monitor
        overfitting: each epoch records the held-out reconstruction error and mean
        free energy, and the free-energy gap. Ignored by ``partial_fit``.
    n_iter_no_change : int or None, default=None
        Early stopping: ``fit`` stops when the criterion has not improved by more
        than ``tol`` for this many epochs. The criterion is the held-out
        log-likelihood when ``monitor_likelihood=True``, else the held-out
        reconstruction error (on training rows when ``validation_fraction`` is
        None). With a validation set, the best epoch's parameters are kept.
    tol : float, default=1e-4
        Minimum improvement of the early-stopping criterion.
    monitor_likelihood : bool, default=False
        Record the mean log-likelihood of the monitoring rows every epoch (through
        ``z_estimator``; costs one log Z estimate per epoch). With a default
        ``z_estimator`` each epoch's estimate gets a cheap time budget, the epoch's
        own training time (at least one second), and its time and standard error are
        recorded (``log_z_time``, ``log_z_std_error``) and printed with ``verbose``;
        pass an estimator object (e.g. ``AIS(max_time=None)``) for another budget."""


#: Parameters whose value is a strategy: a string names a default object.
STRATEGY_PARAMETERS = ("learning", "z_estimator")


@dataclass(eq=False)
class MonitoringRows:
    """The rows each epoch's records are computed on (dense).

    ``train``: up to MONITOR_ROWS evenly spaced training rows; ``valid``: the rows
    ``validation_fraction`` held out of ``fit`` (None without); and, for an estimator
    trained on ``(X, y)``, their labels.
    """

    train: np.ndarray
    valid: np.ndarray | None = None
    train_labels: np.ndarray | None = None
    valid_labels: np.ndarray | None = None

    def splits(self):
        """``(name, rows)`` of the training rows, then of the held-out ones if any."""
        yield "train", self.train
        if self.valid is not None:
            yield "valid", self.valid


class BoltzmannBase(
    CallbackSupportMixin,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
    BaseEstimator,
    metaclass=ABCMeta,
):
    """Base class of skboltz estimators: training loop, inference and scoring over hooks.

    The base owns ``fit`` and ``partial_fit`` (validation, all-or-nothing publication,
    the epoch loop with its divergence check, history, callbacks and early stopping),
    ``transform``, ``reconstruct``, ``free_energy``, ``gibbs``, ``sample``, the log Z
    cache, ``score_samples`` and ``score``. An estimator declares what it is and
    implements a few hooks:

    Declarations (class attributes)
        ``_view_class``: the class of its model view. The view's ``capabilities``
        decide which registered learning strategies and log Z estimators the estimator
        accepts (build its ``learning`` and ``z_estimator`` constraints with
        :func:`strategy_constraints` and its docstring's option lists with
        :func:`document_strategy_options`); a strategy object it cannot serve is
        refused at ``fit``, with a message naming both. ``_layout``: the named blocks
        of its packed parameters (at least ``weights``, the block weight decay acts
        on; :meth:`_layout_of` returns it, or a layout kept in the training state
        when the blocks depend on the model's sizes). ``_inference_dtype``: the dtype
        ``transform`` and ``reconstruct`` compute in (None: the input's).
        ``_structural_parameters``: the parameters a ``partial_fit`` cannot change
        (``n_components``, a connectivity, ...; changing one between calls raises an
        error that says to call ``fit``).

    Hooks every estimator implements
        ``_new_training_state(X, y, learning, rng)``: the
        :class:`~skboltz._training.TrainingState` of a fresh fit (parameters,
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
        (:class:`~skboltz._update.ParameterUpdate`, made by
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
        and keep the state in an :class:`~skboltz._training.AveragedTrainingState`.

    Training on ``(X, y)``
        ``fit(X, y)`` and ``partial_fit(X, y)`` pass ``y`` through
        :meth:`_validate_y` (which ignores it by default: density models), the
        validation split, :meth:`_new_training_state` and the minibatches (``labels``
        of the gradient hook). Early stopping follows one per-epoch score: a
        :class:`~skboltz._training.EarlyStopping` monitor fed the record that
        :meth:`_monitor_epoch` computes on the :class:`MonitoringRows` (with their
        labels), under the key :meth:`_stopping_criterion` names; a classifier records
        e.g. its held-out accuracy and stops on it.

    Inference
        ``transform``, ``reconstruct``, ``gibbs`` and ``sample`` call the view's
        ``hidden_marginals``, ``reconstruct``, ``visible_gibbs_step`` and
        ``draw_samples`` (``sample`` starts its chains at :meth:`_sampling_start`);
        ``free_energy`` and ``score_samples`` use :meth:`_free_energy_of`. A fixed
        input map learnt at the first call (:meth:`_new_input_transform`, e.g.
        whitening) is applied to every input and inverted on every visible output.
    """

    #: The class of the model view the estimator gives its strategies.
    _view_class = None
    #: Named blocks of the packed parameters (``weights``: where weight decay acts).
    _layout = None
    #: The dtype transform and reconstruct compute in (None: the input's).
    _inference_dtype = None
    #: Attributes input validation sets before training (restored if a fit fails; see
    #: :func:`all_or_nothing`): validate_data's, and e.g. a classifier's ``classes_``.
    _input_attributes = _INPUT_ATTRIBUTES
    #: Parameters that fix the model's structure at the first call (sizes, masks, input
    #: maps): ``partial_fit`` refuses to continue a model after one of them changed.
    _structural_parameters = ()

    # -- hooks every model implements -----------------------------------------------
    @abstractmethod
    def _new_training_state(self, X, y, learning, rng):
        """The :class:`~skboltz._training.TrainingState` of a fresh fit (parameters,
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
    def _reconstruction_error(self, view, rows):
        """Mean squared error of the mean-field reconstruction of ``rows``."""

    # -- parameters ------------------------------------------------------------------
    def set_params(self, **params):
        """Set the parameters of this estimator (see scikit-learn's ``set_params``).

        Settings of a strategy (``learning__n_steps``, ``z_estimator__n_chains``, ...)
        can only be set when that parameter holds a strategy object; a string names a
        default object, which has nothing to set.

        Parameters
        ----------
        **params : dict
            Estimator parameters.

        Returns
        -------
        self : estimator instance
            Estimator instance.
        """
        for key in params:
            name, _, setting = key.partition("__")
            value = params.get(name, getattr(self, name, None))
            if setting and name in STRATEGY_PARAMETERS and isinstance(value, str):
                raise ValueError(
                    f"Cannot set {key!r}: {name}={value!r} is a string naming a default "
                    f"strategy, which has no {setting!r} to set. Pass the strategy "
                    f"object instead, e.g. {name}={self._strategy_class_name(name, value)}"
                    f"({setting}=...), or search over objects: "
                    f"{{'{name}': [{self._strategy_class_name(name, value)}(...), ...]}}."
                )
        return super().set_params(**params)

    def _strategy_class_name(self, name, value):
        registry = LEARNING_STRATEGIES if name == "learning" else Z_ESTIMATORS
        cls = registry.get(value)
        return cls.__name__ if cls is not None else "<StrategyClass>"

    # -- validation ----------------------------------------------------------------
    def _binary_visible(self):
        """Whether the visible units are binary (values in [0, 1] are their support)."""
        return _binary_visible_units(self._view_class)

    def _validate_X(self, X, *, reset):
        """The rows the model sees: validated (for binary visible units, clipped into
        [0, 1] with a warning) and, after the first fit, mapped by the fitted input
        transform (if any; see :meth:`_new_input_transform`)."""
        X = self._check_rows(X, reset=reset)
        if not reset:
            transform = self._input_transform()
            if transform is not None:
                X = transform.transform(X)
        return X

    def _check_rows(self, X, *, reset):
        """``X`` validated (``validate_data``); for binary visible units, values
        outside [0, 1] are clipped into it with a warning
        (:func:`clipped_into_unit_interval`)."""
        binary = self._binary_visible()
        if not reset and self._is_valid_fitted_input(X, binary):
            return X
        X = validate_data(
            self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=reset
        )
        return clipped_into_unit_interval(X) if binary else X

    def _is_valid_fitted_input(self, X, in_unit_interval):
        """Whether ``X`` is an input that ``validate_data(reset=False)`` would return
        unchanged, with no warning.

        A few checks instead of validate_data's hundreds of microseconds, which would be
        most of a ``partial_fit`` call on one small minibatch: a plain float ndarray
        with rows and the fitted number of columns, all finite (and, when
        ``in_unit_interval``, in [0, 1]), fitted without feature names. Anything else
        goes through ``validate_data``, which converts it or raises.
        """
        if not (
            type(X) is np.ndarray
            and X.dtype in _FLOAT_DTYPES
            and X.ndim == 2
            and X.shape[0] >= 1
            and X.shape[1] == getattr(self, "n_features_in_", None)
            and not hasattr(self, "feature_names_in_")
        ):
            return False
        if in_unit_interval:  # min and max are NaN when any value is NaN
            return bool(X.min() >= 0) and bool(X.max() <= 1)
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

    def _new_input_transform(self, X):
        """A fixed, invertible map of the input rows learnt at the first call (an
        object with ``transform``, ``inverse_transform`` and ``log_abs_det``), or None.

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

    # -- strategies ----------------------------------------------------------------
    def _resolve_learning(self):
        learning = self.learning
        if type(learning) is str:  # every partial_fit call: the short path
            cls = accepted_strategies(self._view_class)[0].get(learning)
            if cls is not None:
                return cls()
        return self._resolve_strategy(learning, "learning")

    def _auto_z_estimator(self, view):
        if 2**view.n_enumerated_units <= AUTO_EXACT_MAX_STATES or "ais" not in Z_ESTIMATORS:
            return "exact"
        return "ais"

    def _resolve_z_estimator(self, spec, view):
        if isinstance(spec, str) and spec == "auto":
            spec = self._auto_z_estimator(view)
        return self._resolve_strategy(spec, "z_estimator")

    def _resolve_strategy(self, spec, parameter):
        """A fresh strategy from a name or a user's object (cloned, never mutated),
        refused unless the model's view meets what it requires."""
        learning, z_estimators = accepted_strategies(self._view_class)
        accepted, registry, base_class = (
            (learning, LEARNING_STRATEGIES, LearningStrategy) if parameter == "learning"
            else (z_estimators, Z_ESTIMATORS, ZEstimator)
        )
        if isinstance(spec, str) and spec in accepted:
            # Default parameters: their validation (a test checks them) would cost as
            # much as a partial_fit's update.
            return accepted[spec]()
        if isinstance(spec, base_class):
            strategy = clone(spec)
            strategy._validate_params()
        elif isinstance(spec, str) and spec in registry:
            strategy = registry[spec]()
        else:
            what = "learning strategy" if parameter == "learning" else parameter
            raise ValueError(
                f"Unknown {what} {spec!r}; choose one of {sorted(accepted)} or pass a "
                f"{base_class.__name__} object."
            )
        check_supported(strategy, self._view_class, owner=type(self).__name__,
                        parameter=parameter, options=self._options_to_suggest(parameter))
        return strategy

    def _options_to_suggest(self, parameter):
        """The names ``parameter`` accepts, its default first (for error messages)."""
        default = inspect.signature(type(self)).parameters[parameter].default
        learning, z_estimators = accepted_strategies(self._view_class)
        accepted = learning if parameter == "learning" else {"auto", *z_estimators}
        return [default, *sorted(set(accepted) - {default})]

    # -- training ------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the model to ``X`` from a fresh start, for the configured number of epochs.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data: values in [0, 1] for binary visible units (RBM),
            standardised features for GaussianRBM.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, y, partial=False)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None):
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
            standardised features for GaussianRBM.
        y : None
            Ignored; present for API consistency.

        Returns
        -------
        self : object
            The updated estimator.
        """
        return self._fit(X, y, partial=True)

    def _fit(self, X, y, *, partial, classes=None):
        with all_or_nothing(self):
            return self._fit_unguarded(X, y, partial=partial, classes=classes)

    def _fit_unguarded(self, X, y, *, partial, classes=None):
        # Strategies the model cannot serve are refused before any work.
        learning = self._resolve_learning()
        if isinstance(self.z_estimator, ZEstimator):
            self._resolve_z_estimator(self.z_estimator, None)
        first_call = not (partial and hasattr(self, "_training_state"))
        if not first_call:
            self._check_structure_unchanged()
        X = self._validate_X(X, reset=first_call)
        y = self._validate_y(X, y, reset=first_call, classes=classes)
        validation = None
        if first_call:
            self._check_first_rows(X, partial=partial)
            # A fixed map of the inputs (GaussianRBM's whitening), from all the rows.
            input_transform = self._new_input_transform(X)
            if input_transform is not None:
                X = input_transform.transform(X)
            check_memory(*self._training_memory(X, learning))
            rng = make_generator(self.random_state)
            if not partial and self.validation_fraction is not None:
                X, y, validation = self._split_validation(X, y, rng)
            state = self._new_training_state(X, y, learning, rng)
            state.input_transform = input_transform
            state.history = self._new_history()
            state.log_z_seed = int(rng.integers(np.iinfo(np.int32).max))
            state.sampling_seed = int(rng.integers(np.iinfo(np.int32).max))
            state.structure = self._structure()
            undo = None
        else:
            # Work on a copy of what training changes in place, and check-point the
            # rest (all-or-nothing; see TrainingState.begin_update). The strategy that
            # made the state copies its own part.
            state, undo = self._training_state.begin_update(self.learning_)
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
            monitor = self._monitoring_rows(X, y, validation)
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
                self._check_divergence_when_due(state, learning, monitor, X.shape[0],
                                                n_updates, first_call)
                degenerate = self._check_degeneracy_when_due(state, monitor,
                                                             n_epochs * X.shape[0],
                                                             first_call)
            view = self._model_view_of(state)
            z_estimator = self._resolve_z_estimator(self.z_estimator, view)
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
            self._warn_degenerate(degenerate)
        callback_ctx.call_on_fit_task_end(
            estimator=self, X=X, y=y, reconstruction_attributes={}
        )
        return self

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

    def _split_validation(self, X, y, rng):
        """``(X_train, y_train, (X_valid, y_valid))``: ``validation_fraction`` of the
        rows held out, ``y`` split alike (None stays None)."""
        n_valid = int(round(self.validation_fraction * X.shape[0]))
        if n_valid < 1 or n_valid >= X.shape[0]:
            raise ValueError(
                f"validation_fraction={self.validation_fraction} leaves no rows for "
                f"{'validation' if n_valid < 1 else 'training'} out of {X.shape[0]} "
                "samples; use more samples or set validation_fraction=None."
            )
        order = rng.permutation(X.shape[0])
        train, valid = np.sort(order[n_valid:]), np.sort(order[:n_valid])
        if y is None:
            return X[train], None, (X[valid], None)
        return X[train], y[train], (X[valid], y[valid])

    @staticmethod
    def _monitoring_rows(X, y, validation):
        """The :class:`MonitoringRows` of a call: evenly spaced training rows
        (deterministic, and no draw from the training stream, so repeated
        ``partial_fit`` calls follow exactly the path of one fit) and the held-out
        ``validation`` pair, if any."""
        n_samples = X.shape[0]
        if n_samples <= MONITOR_ROWS:
            monitor = MonitoringRows(as_dense(X), train_labels=y)
        else:  # at least one row apart: the truncated positions are distinct
            rows = np.linspace(0, n_samples - 1, MONITOR_ROWS).astype(np.intp)
            monitor = MonitoringRows(as_dense(X[rows]),
                                     train_labels=None if y is None else y[rows])
        if validation is not None:
            monitor.valid, monitor.valid_labels = as_dense(validation[0]), validation[1]
        return monitor

    def _train(
        self, X, y, state, learning, n_epochs, monitor, *, early_stopping,
        callback_ctx=NO_CALLBACKS,
    ):
        history = state.history
        stopping = self._early_stopping(monitor) if early_stopping else None
        for _ in range(n_epochs):
            epoch_ctx = callback_ctx.subcontext(task_name="epoch")
            epoch_ctx.call_on_fit_task_begin(estimator=self, X=X, y=y)
            start = time.perf_counter()
            # Overflow in a diverging run is caught by the magnitude check below,
            # which raises a clear error instead of numpy's warnings.
            with np.errstate(over="ignore", invalid="ignore"):
                self._train_epoch(X, y, state, learning)
            if diverged(state.params):
                raise TrainingDivergedError(
                    f"{type(self).__name__} diverged in epoch {state.n_iter + 1}: the "
                    "parameters became non-finite or larger than "
                    f"{DIVERGED_MAGNITUDE:g}. {self._divergence_hint(X, state, learning)} "
                    "The estimator was left as it was before this call."
                )
            state.n_iter += 1
            record = {"epoch": state.n_iter, "time": time.perf_counter() - start}
            record.update(self._monitor_epoch(state, monitor, epoch_seconds=record["time"]))
            record.update(learning.pop_diagnostics(state.sampler))
            for key, value in record.items():
                history.setdefault(key, []).append(value)
            if self.verbose:
                self._print_progress(record)
            if epoch_ctx.call_on_fit_task_end(estimator=self, X=X, y=y):
                break  # a callback asked to stop; the parameters are this epoch's
            if stopping is not None and stopping.update(record, state.params):
                if self.verbose:
                    print(
                        f"[{type(self).__name__}] {stopping.key} did not improve by more "
                        f"than tol={self.tol} for {self.n_iter_no_change} epochs; "
                        "stopping."
                    )
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
                             self._learning_rate_of(state, learning), self.weight_decay,
                             self._progress(state))
        update = self._parameter_update(model, params, state, rule)
        self._train_minibatches(X, y, state, learning, model, rule, update)
        state.pending_decay = update.finish()
        state.end_epoch(self._average_window())

    def _train_minibatches(self, X, y, state, learning, model, rule, update):
        """The epoch's updates: for each minibatch, the gradient step from
        ``_minibatch_gradient``, then ``update.apply``; iterate averaging (if the
        state averages) counts each update."""
        window = self._average_window()
        order = state.rng.permutation(X.shape[0])
        report = EpochProgress(self, state.n_iter + 1, X.shape[0]) if self.verbose else None
        for start in range(0, X.shape[0], self.batch_size):
            if report is not None:
                report(start)
            rows = order[start : start + self.batch_size]
            labels = None if y is None else y[rows]
            gradient = self._minibatch_gradient(
                model, as_dense(X[rows]), labels, state, learning, rule
            )
            update.apply(gradient)
            state.count_update(window)

    def _begin_epoch(self, state, learning):
        """The parameters this epoch's updates move (the iterate, when averaging)."""
        return state.resume(self._average_window() is not None)

    def _average_window(self):
        """Updates the published average spans, or None: no iterate averaging."""
        return None

    def _training_model(self, X, params, state, learning):
        """What the gradient hook works with for one epoch: by default the model view
        of the state's parameters (arrays shared, so it follows the updates)."""
        return self._model_view_of(state)

    def _minibatch_gradient(self, model, batch, labels, state, learning, rule):
        """The gradient step of one minibatch: ``rule.step`` times the ascent direction
        of the log-likelihood (or of the estimator's objective), shaped like the packed
        parameters. ``batch`` is dense; ``labels`` are its rows' labels (None for a
        density model)."""
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
        """The update rule (:class:`~skboltz._update.ParameterUpdate`: momentum, weight
        decay on the layout's ``weights``) bound to the parameters the epoch's updates
        move; an estimator whose steps are not a plain sum passes ``blocks`` (a
        log-scale block, a correction after each step)."""
        return ParameterUpdate(rule, params, state.velocity, self._layout_of(state).weights,
                               pending_decay=state.pending_decay, **blocks)

    # -- divergence ----------------------------------------------------------------
    def _divergence_hint(self, X, state=None, learning=None):
        """The likely cause of a diverged fit, and what to do about it (``state`` and
        ``learning`` give the step an "auto" learning rate resolved to)."""
        hint = self._data_hint(X)
        if hint is not None:
            return hint
        step = self.learning_rate
        if state is not None:
            step = self._learning_rate_of(state, learning)
        if isinstance(step, str):
            return (f"The learning rate is probably too high (learning_rate={step!r}); "
                    "lower it, or raise batch_size.")
        shown = (f"learning_rate={self.learning_rate!r}, a step of {step:.3g} here"
                 if isinstance(self.learning_rate, str) else f"learning_rate={step:g}")
        return self._settings_hint(step) or (
            f"The learning rate is probably too high ({shown}); lower it, or raise "
            "batch_size."
        )

    def _settings_hint(self, step):
        """A setting other than the learning rate that makes training at ``step``
        diverge, and the fix (None: none): a weight decay beyond the usual range
        (above 1e-2) whose updates overshoot."""
        if self.weight_decay > 1e-2 and step * self.weight_decay >= DECAY_STEP_LIMIT:
            return (
                f"weight_decay={self.weight_decay:g} is far too strong for the step "
                f"{step:.3g}: an update shrinks the weights by weight_decay times the "
                "step, which overshoots zero here. Use a weight_decay below "
                f"{DECAY_STEP_LIMIT / step:.3g} (usual values are 1e-5 to 1e-2)."
            )
        return None

    def _data_hint(self, X):
        """What in the data could make training diverge, and the fix (None: nothing).

        Binary visible units see their rows clipped into [0, 1] (with a warning), so
        their data never does; real-valued units name the scale they find."""
        return None

    def _check_divergence_when_due(self, state, learning, monitor, n_rows, n_updates,
                                   first_call):
        """Run :meth:`_check_divergence` at the end of every ``fit``, and of
        ``partial_fit`` calls once the calls since it last ran have trained on
        PARTIAL_FIT_CHECK_ROWS rows.

        The likelihood check costs about as much as the update of a minibatch of 32
        rows (a free-energy pass over LIKELIHOOD_CHECK_ROWS rows and their roundings),
        whatever the call's size: on every ``partial_fit`` call it was a tenth of a call
        at batch 100, a quarter at batch 10. Calls are therefore checked together (at
        batch 100 every third call, at batch 10 every 26th), on the last call's rows,
        against the model the first of them started from, so that a model a run of
        unchecked calls made poor is still blamed on them; ``n_updates`` counts the
        updates of the calls checked. A hand edit of the parameters starts a new run,
        judged against the edit; where the training state cannot tell edits (no iterate
        averaging) every call is checked. Every call still checks the parameters' size
        (``_train``).
        """
        if first_call:
            state.unchecked_rows, state.unchecked_updates = 0, 0
            state.check_reference = None
            self._check_divergence(state, learning, monitor, n_updates=n_updates)
            return
        if state.unchecked_rows == 0 or state.hand_edited is not False:
            # a new run of calls: judged against the public model before this call
            state.unchecked_rows, state.unchecked_updates = 0, 0
            state.check_reference = self._model_view()
        state.unchecked_rows += n_rows
        state.unchecked_updates += n_updates
        if state.unchecked_rows < PARTIAL_FIT_CHECK_ROWS and state.hand_edited is False:
            return
        try:
            self._check_divergence(state, learning, monitor, state.check_reference,
                                   n_updates=state.unchecked_updates)
        except TrainingDivergedError as error:
            earlier = state.unchecked_rows - n_rows
            if not earlier:
                raise
            raise TrainingDivergedError(
                f"{error} The partial_fit calls since the last check ({earlier} rows "
                "before this call's) were checked with it; their updates stay applied."
            ) from None
        state.unchecked_rows, state.unchecked_updates = 0, 0
        state.check_reference = None

    def _check_degeneracy_when_due(self, state, monitor, n_rows_trained, first_call):
        """The :mod:`~skboltz._degeneracy` check's :class:`Diagnosis` of the trained
        model if it is degenerate, else None.

        Run at the end of every ``fit``, and of ``partial_fit`` calls once the calls
        since it last ran have trained on enough rows to pay for its shortest run (its
        chains cost about ``CHECK_COST_FRACTION`` of the training they check). Its
        random stream is its own (from the fit's sampling seed and the epoch count),
        so training and ``sample`` draw the same numbers with or without it.
        """
        if first_call and self._binary_visible() and monitor.train.shape[0]:
            # what the scores' check of the extreme rows allows them
            state.extreme_row_shares = degeneracy.extreme_row_shares(monitor.train)
        if n_rows_trained == 0:
            return None  # nothing trained (n_iter=0): the starting model
        if first_call:
            state.unchecked_degeneracy_rows = 0
        state.unchecked_degeneracy_rows += n_rows_trained
        if not first_call and not degeneracy.is_due(state.unchecked_degeneracy_rows):
            return None
        n_steps = degeneracy.check_steps(state.unchecked_degeneracy_rows)
        state.unchecked_degeneracy_rows = 0
        if monitor.train.shape[0] == 0:
            return None
        view = self._model_view_of(state)
        rng = np.random.default_rng([state.sampling_seed, state.n_iter])
        with np.errstate(over="ignore", invalid="ignore"):
            diagnosis = degeneracy.diagnose(
                view, monitor.train, self._sampling_start_of(state), rng, n_steps,
                binary=self._binary_visible(),
                free_energy=getattr(view, "free_energy_is_cheap", True),
            )
        return diagnosis if diagnosis.is_degenerate(view.n_visible) else None

    def _warn_degenerate(self, diagnosis):
        warn_user(
            f"{type(self).__name__} looks degenerate: "
            f"{diagnosis.describe(self.n_features_in_)}. Its samples and scores describe "
            "a distribution unlike the training data (its features may still be "
            f"useful). {self._degeneracy_hint()}",
            DegenerateModelWarning,
        )

    def _degeneracy_hint(self):
        """What to try when the fitted model is degenerate (estimators refine it)."""
        return ("Try a smaller learning_rate, more weight_decay, or a learning strategy "
                "whose chains explore the model (persistent chains or parallel "
                "tempering).")

    def _sampling_start_of(self, state):
        """Where ``sample``'s chains start for the model of ``state``."""
        return state.data_rates

    def _check_divergence(self, state, learning, monitor, previous_view=None, *,
                          n_updates):
        """Raise TrainingDivergedError if this call made the model provably far worse.

        Run at the end of every ``fit`` and of runs of ``partial_fit`` calls (see
        :meth:`_check_divergence_when_due`; the parameters' magnitude is checked after
        every epoch). ``monitor`` holds the call's monitoring rows (and their labels),
        ``previous_view`` the model the calls started from (None for a fresh fit),
        ``n_updates`` the updates the calls made. Density models bound their
        log-likelihood (:meth:`_check_likelihood`; with mean-field steps only after
        enough updates to have moved the model); an estimator with another objective
        checks that.
        """
        self._check_likelihood(
            state, learning, monitor.train, previous_view,
            mean_field_steps=(MEAN_FIELD_STEPS
                              if n_updates >= MEAN_FIELD_CHECK_UPDATES else 0),
        )

    def _check_likelihood(self, state, learning, rows, previous_view=None,
                          mean_field_steps=MEAN_FIELD_STEPS):
        """Raise TrainingDivergedError if training made the model provably far worse.

        Diverged means: the bound of :meth:`_likelihood_upper_bound` on the training
        log-likelihood ends far below the uniform distribution's, and (for
        ``partial_fit`` calls continuing ``previous_view``) far below where the calls
        started, so a model that was already poor (e.g. edited by hand) is not blamed
        on them. A healthy fit is never flagged: the bound is an upper bound. Only
        for binary visible units with a cheap exact free energy (real-valued units
        have their own checks). ``mean_field_steps`` tightens the bound (0 for the
        cheap bound of a call that made few updates).
        """
        view = self._model_view_of(state)
        if (rows.shape[0] == 0 or not self._binary_visible()
                or not getattr(view, "free_energy_is_cheap", True)):
            return
        # float32 whatever the model's dtype: the bound's rounding (about 1e-5 nats per
        # nat of free energy) is far below the margin, and float64 exp and log cost 3-5
        # times as much on CPUs without AVX-512 (partial_fit calls pay for this)
        if view.dtype != np.float32:
            view = view.astype(np.float32)
        step = max(1, rows.shape[0] // LIKELIHOOD_CHECK_ROWS)
        rows = rows[::step]
        chains = learning.persistent_chains(state.sampler)
        upper = self._likelihood_upper_bound(view, rows, chains, mean_field_steps)
        uniform = -rows.shape[1] * np.log(2.0)
        margin = DIVERGED_BELOW_UNIFORM * -uniform
        if upper >= uniform - margin:
            return
        if previous_view is not None:
            if previous_view.dtype != np.float32:
                previous_view = previous_view.astype(np.float32)
            before = self._likelihood_upper_bound(previous_view, rows, chains,
                                                  mean_field_steps)
            if upper >= before - margin:
                return
        raise TrainingDivergedError(
            f"{type(self).__name__} diverged: on its own training rows it scores at "
            f"most {upper:.4g} nats per row (an upper bound on the log-likelihood), far "
            f"below the {uniform:.4g} of the uniform distribution. "
            f"{self._divergence_hint(rows, state, learning)} The estimator was left as "
            "it was before this call."
        )

    @staticmethod
    def _likelihood_upper_bound(view, rows, chains=None, mean_field_steps=MEAN_FIELD_STEPS):
        """An upper bound on the mean log-likelihood of ``rows`` (values in [0, 1]).

        For any m in [0, 1]^n, log Z >= -F(m) + H(m): Gibbs' inequality with the
        independent distribution of means m, then Jensen's inequality (the hidden
        log-sum in -F is convex in v; pairwise visible terms with a zero diagonal have
        the same mean under that distribution as at m). The best of a few candidates
        (the rows, their roundings, the persistent chains' states, which sit near the
        model's modes, and ``mean_field_steps`` mean-field steps from the best of
        them) bounds log Z from below, so mean(-F(v)) - bound is an upper bound on the log-likelihood.
        Without the mean-field steps the bound missed much of log Z on models trained
        at huge learning rates (31-40 nats on 64 x 16 RBMs of the digits, whose
        candidates all sat away from the modes); one step from the best candidate found
        all of it.
        Computed in the view's dtype: float32 rounding is far below the margins it is
        compared with.
        """
        rows = rows.astype(view.dtype, copy=False)
        n_rows, n_visible = rows.shape
        rounded = np.rint(rows)
        fractional = bool((rounded != rows).any())
        n_chains = 0
        if isinstance(chains, np.ndarray):  # persistent chains: states near the modes
            chains = chains[:: max(1, chains.shape[0] // LIKELIHOOD_CHECK_ROWS), :n_visible]
            n_chains = chains.shape[0]
        # One array, filled in place (a partial_fit on one small minibatch pays for
        # every call here).
        candidates = np.empty((n_rows * (1 + fractional) + n_chains, n_visible), view.dtype)
        candidates[:n_rows] = rows
        if fractional:
            candidates[n_rows : 2 * n_rows] = rounded
        if n_chains:
            np.clip(chains, 0, 1, out=candidates[candidates.shape[0] - n_chains :])
        with np.errstate(over="ignore", invalid="ignore"):
            log_weights = -np.asarray(view.free_energy(candidates), dtype=np.float64)
            mean_log_weight = float(log_weights[:n_rows].sum()) / n_rows
            if fractional:  # binary candidates have zero entropy
                log_weights[:n_rows] += binary_entropy_row_sums(rows)
            best = int(np.argmax(log_weights))
            log_z_bound = float(log_weights[best])
            if mean_field_steps:
                # Mean-field steps m <- E[v | P(h | m)] from the best candidate climb
                # towards the mode it is nearest.
                means = candidates[best : best + 1]
                for _ in range(mean_field_steps):
                    means = view.reconstruct(means)
                log_z_bound = max(log_z_bound, float(
                    -view.free_energy(means)[0] + binary_entropy_row_sums(means)[0]))
            return mean_log_weight - log_z_bound

    # -- monitoring and early stopping ---------------------------------------------
    def _early_stopping(self, monitor):
        """The early-stopping monitor of a ``fit`` (None without ``n_iter_no_change``);
        with held-out rows it keeps the best epoch's parameters."""
        if self.n_iter_no_change is None:
            return None
        sign, key = self._stopping_criterion(monitor)
        return EarlyStopping(key, sign, self.n_iter_no_change, self.tol,
                             keep_best=monitor.valid is not None, owner=type(self).__name__)

    def _stopping_criterion(self, monitor):
        """(sign, history key) of the early-stopping criterion, larger sign*value better."""
        split = "valid" if monitor.valid is not None else "train"
        if self.monitor_likelihood:
            return 1.0, f"log_likelihood_{split}"
        return -1.0, "reconstruction_error" + ("_valid" if split == "valid" else "")

    def _monitor_epoch(self, state, monitor, *, epoch_seconds=0.0):
        """The per-epoch records computed on the monitoring rows."""
        view = self._model_view_of(state)
        train = monitor.train
        step = -(-train.shape[0] // RECONSTRUCTION_ROWS)  # at most that many rows
        record = {"reconstruction_error": self._reconstruction_error(view, train[::step])}
        if monitor.valid is not None:
            # Free energies only matter as a gap to held-out rows: computed only then.
            record["free_energy_train"] = float(np.mean(self._free_energy_of(view, train)))
            valid = monitor.valid
            record["reconstruction_error_valid"] = self._reconstruction_error(view, valid)
            record["free_energy_valid"] = float(np.mean(self._free_energy_of(view, valid)))
            record["free_energy_gap"] = record["free_energy_valid"] - record["free_energy_train"]
        if self.monitor_likelihood:
            start = time.perf_counter()
            estimator = self._monitoring_z_estimator(view, epoch_seconds)
            with warnings.catch_warnings():
                # Its standard error is recorded instead: a warning every epoch would
                # bury the one that matters.
                warnings.simplefilter("ignore", LogZAccuracyWarning)
                log_z = estimator.estimate(
                    view,
                    rng=np.random.default_rng(state.log_z_seed),
                    data_rates=state.data_rates,
                )
            for split, rows in monitor.splits():
                record[f"log_likelihood_{split}"] = float(
                    np.mean(-self._free_energy_of(view, rows)) - log_z.value
                )
            if log_z.std_error is not None:
                record["log_z_std_error"] = log_z.std_error
            record["log_z_time"] = time.perf_counter() - start
        return record

    def _monitoring_z_estimator(self, view, epoch_seconds):
        """The log Z estimator of ``monitor_likelihood``: ``z_estimator``, with a cheap
        time budget when it is a default one (the epoch's own time, at least
        MONITOR_LOG_Z_SECONDS), so that monitoring a large model costs about as much
        as training it; an estimator object passed by the user is used as it is."""
        estimator = self._resolve_z_estimator(self.z_estimator, view)
        if isinstance(self.z_estimator, str) and "max_time" in estimator.get_params():
            budget = max(MONITOR_LOG_Z_SECONDS, epoch_seconds)
            if estimator.max_time is None or estimator.max_time > budget:
                estimator = clone(estimator).set_params(max_time=budget)
        return estimator

    def _free_energy_of(self, view, rows):
        """F(v) of each row (dense or sparse) under ``view``, in float64."""
        return view.astype(np.float64).free_energy(rows.astype(np.float64))

    def _log_weight_kind(self):
        """What -F(v) of a row is, as a ``LogZ.kind`` says of log Z: "exact" (a DBM's
        may be its mean-field "lower_bound" or a per-row "estimate")."""
        return "exact"

    def _print_progress(self, record):
        shown = ", ".join(
            f"{key.replace('_', ' ').replace('log z', 'log Z')} = "
            + (f"{value:.2f}s" if key.endswith("_time") else f"{value:.4f}")
            for key, value in record.items()
            if key not in ("epoch", "time")
        )
        print(
            f"[{type(self).__name__}] Iteration {record['epoch']}, {shown}, "
            f"time = {record['time']:.2f}s"
        )

    @staticmethod
    def _new_history():
        return {"epoch": [], "time": []}

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
        """
        check_is_fitted(self, "_training_state")
        return copy.deepcopy(self._training_state.history)

    # -- inference -----------------------------------------------------------------
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

    @reads_one_publication
    def transform(self, X):
        """Hidden-unit marginals P(h_j = 1 | v) of each row.

        Exact, except where the model's class says otherwise (a
        :class:`~skboltz.BoltzmannMachine` with many coupled hidden units gives their
        mean-field magnetisations).

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
        return view.hidden_marginals(X).astype(X.dtype, copy=False)

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

        Chains start from independent units at the training data's rates (binary
        units) or means (Gaussian units) and run ``n_steps`` Gibbs steps.

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
        return self._visible_out(
            view.draw_samples(n_samples, n_steps, self._sampling_start(), rng, **means)
        )

    # -- partition function and scoring --------------------------------------------
    @reads_one_publication
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
        # Keyed by the parameters too, so hand-edited parameters are never scored
        # against a stale log Z.
        key = (repr(estimator), parameter_fingerprint(view))
        if key not in self._log_z_cache:
            rng = np.random.default_rng(self._training_state.log_z_seed)
            progress = {}
            if "progress" in inspect.signature(estimator.estimate).parameters:
                # users' own estimators may not take it
                progress["progress"] = _LogZProgress(self, estimator)
            log_z = estimator.estimate(
                view, rng=rng, data_rates=self._training_state.data_rates, **progress
            )
            if not isinstance(log_z, LogZ):  # LogZ itself refuses non-finite values
                raise TypeError(
                    f"z_estimator {type(estimator).__name__}.estimate returned "
                    f"{type(log_z).__name__} {log_z!r}; it must return a "
                    "skboltz.partition.LogZ, e.g. LogZ(value, std_error, method=...)."
                )
            self._log_z_cache[key] = log_z
        return self._log_z_cache[key]

    def _log_normalizer(self, log_z=None):
        """What ``score_samples`` subtracts from -F(v): log Z (by default the fitted
        one, from :meth:`_log_z_for_scoring`), plus the input transform's
        log-Jacobian, if any."""
        value = (self._log_z_for_scoring() if log_z is None else log_z).value
        transform = self._input_transform()
        return value if transform is None else value + transform.log_abs_det

    def _log_z_for_scoring(self):
        """The fitted log Z, warning once per fitted model when it is not reliable
        (and once per search or loop: the warning is about the setting)."""
        log_z = self.estimate_log_partition()
        if not log_z.is_reliable:
            flag = ("warned", log_z.method, parameter_fingerprint(self._model_view()))
            if flag not in self._log_z_cache:
                self._log_z_cache[flag] = True
                name, method = type(self).__name__, log_z.method or "the z_estimator"
                if log_z.kind == "estimate":
                    message = (
                        f"{name}: the scores use an estimate of log Z by {method} that "
                        "is less accurate than asked (its own warning says how; "
                        "estimate_log_partition().describe() repeats it). Its standard "
                        "error covers what the estimator found wrong, and the scores' "
                        "errors computed from it (held_out_score) carry it. "
                        + ("More time or betas (z_estimator=AIS(max_time=None), or "
                           "AIS(n_betas=...)) give a more accurate estimate."
                           if log_z.method == "ais" else
                           "A more accurate setting of the estimator gives a better one.")
                    )
                else:
                    message = (
                        f"{name}: the scores use log Z by {method}, {KINDS[log_z.kind]}: "
                        "they are not log-likelihoods. Models scored this way and models "
                        "scored by an exact log Z or an AIS estimate are not measured "
                        "alike, and a search or comparison across them can rank them "
                        "wrongly. z_estimator='auto' (exact, or an AIS estimate with an "
                        "error bar) measures every model the same way; "
                        "estimate_log_partition() gives each model's log Z and what it is."
                    )
                warn_user(message, ApproximateScoreWarning,
                          once_per=(name, log_z.method, log_z.kind))
        self._check_favoured_states(log_z)
        return log_z

    def _check_favoured_states(self, log_z):
        """Warn, once per fitted model, when the blank or the all-ones row holds more
        of the probability than :func:`~skboltz._degeneracy.favoured_extreme_row`
        allows (1 %, or ten times its share of the training rows or its probability
        under independent units at the data's rates, when that is more).

        The Gibbs chains of the check at the end of ``fit`` start near the data and may
        never reach such a mode (a CD-1 model of real digits put 94 % of its
        probability on the blank image while its chains wandered elsewhere); log Z
        sees it, so the scores that need log Z check it, for two free energies."""
        # Keyed by the estimate (hand-edited parameters get a new one), not by a
        # second digest of the parameters on every score call.
        flag = ("favoured states checked", log_z.method, log_z.value, log_z.std_error)
        if (flag in self._log_z_cache or log_z.kind not in ("exact", "estimate")
                or not self._binary_visible()):
            return
        self._log_z_cache[flag] = True
        view = self._model_view()
        if not getattr(view, "free_energy_is_cheap", True):
            return
        state = self._training_state
        # the view's own free energy (an estimator's scoring path may estimate each
        # row's, which two rows' check is not worth)
        favoured = degeneracy.favoured_extreme_row(
            view.astype(np.float64), log_z.value, self._sampling_start_of(state),
            state.extreme_row_shares)
        if favoured is not None:
            name, log_probability = favoured
            warn_user(
                f"{type(self).__name__} looks degenerate: by its log Z "
                f"({log_z.value:.6g}) it puts {np.exp(log_probability):.0%} of its "
                f"probability on the {name} row: unless the training data are mostly "
                "that row, its samples and scores describe that mode, not the data. "
                f"{self._degeneracy_hint()}",
                DegenerateModelWarning,
            )

    @reads_one_publication
    def score_samples(self, X):
        """Log-likelihood log p(x) of each row, in nats.

        ``-free_energy(x) - log Z``, with log Z from ``z_estimator_``, estimated once
        per fitted model; deterministic and row-wise. (scikit-learn's
        ``BernoulliRBM.score_samples`` returns a randomised pseudo-likelihood
        instead.) With the default ``z_estimator="auto"`` it is the model's true
        log-probability (or log density, for real-valued visible units): exact for
        models small enough to enumerate, otherwise with an annealed-importance-sampling
        estimate of log Z whose standard error (``estimate_log_partition().std_error``,
        shared by every row) is reported. With a bound or an approximation of log Z
        (``"mean_field"``, ``"visited_states"``, ``"tap"``), or an estimate that
        stopped short of its target, the values are upper bounds or approximations,
        not log-probabilities: the first call warns
        (:class:`~skboltz.exceptions.ApproximateScoreWarning`) and the
        :class:`~skboltz.partition.LogZ` says which (``kind``, ``converged``).

        For binary visible units, values outside [0, 1] are clipped into it, with a
        :class:`~skboltz.exceptions.DataRangeWarning` (a held-out row scaled by a
        scaler fitted on other rows often falls slightly outside), and a value is
        never positive: log Z >= -F(x) for every row, so an estimate below a row's
        -F(x) within its error (or a lower bound) is taken as that row's bound, and
        one below it beyond its error raises a ``ValueError`` (a broken estimator). A
        density of real values may exceed 1 (a positive log density); with an input
        transform (``GaussianRBM(whiten=True)``) it is the density of the input rows,
        the log-Jacobian included.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        log_likelihood : ndarray of shape (n_samples,)
            The log-likelihood log p(x) of each row, in float64.
        """
        check_is_fitted(self, "_training_state")
        if not self._binary_visible():
            normalizer = self._log_normalizer()
            X = self._validate_X(X, reset=False)
            return -self._free_energy_of(self._model_view(), X) - normalizer
        X = self._validate_X(X, reset=False)
        log_z = self._log_z_for_scoring()
        log_weight = -self._free_energy_of(self._model_view(), X)
        self._check_below_zero(log_weight, log_z)
        log_likelihood = log_weight - self._log_normalizer(log_z)
        return np.minimum(log_likelihood, 0.0, out=log_likelihood)

    def _check_below_zero(self, log_weight, log_z):
        """Refuse a log Z that the rows prove too low, beyond its error.

        A point of [0, 1]^n never has a positive log-probability (-F is convex in v, so
        its maximum is at a binary state, whose probability is at most 1): log Z >=
        -F(x) for every row. A sampling estimate may fall below that within its error
        (the row's score is then capped at 0), and a lower bound may (the row's own
        weight is a better bound); anything else is a broken estimate, which capping
        would hide by scoring every row 0.
        """
        highest = float(np.max(log_weight, initial=-np.inf))  # the largest -F(x)
        excess = highest - log_z.value
        if excess <= 0 or not getattr(self._model_view(), "free_energy_is_cheap", True):
            return
        allowed = 1e-9 * (1.0 + abs(log_z.value))  # rounding
        if log_z.kind == "estimate":
            allowed += 3 * log_z.std_error
        elif log_z.kind == "lower_bound":
            allowed = np.inf
        if excess > allowed:
            raise ValueError(
                f"{type(self).__name__}: log Z = {log_z.value:.6g} from "
                f"{log_z.method or 'the z_estimator'} ({log_z.kind}) is impossible: a row "
                f"scored has -F(x) = {highest:.6g}, and log Z >= -F(x) for every row, so "
                f"log Z is at least {excess:.4g} nats higher"
                + (f" (beyond 3 standard errors, {3 * log_z.std_error:.3g})"
                   if log_z.kind == "estimate" else "")
                + ". The estimator is wrong or far from converged; "
                + ("give it more time or betas (z_estimator=AIS(max_time=None), or "
                   "AIS(n_betas=...))." if log_z.method == "ais" else
                   "use z_estimator='auto' (exact when feasible, else AIS with an "
                   "error bar).")
            )

    def score(self, X, y=None):
        """Mean log-likelihood of the rows of ``X`` (higher is better).

        Makes ``GridSearchCV`` select models by held-out likelihood with no scorer;
        with ``z_estimator="auto"`` every candidate is measured the same way (exact,
        or an estimate of log Z with a standard error and a time budget), whatever
        its learning method. See :meth:`score_samples` for what the values are, and
        :func:`skboltz.partition.held_out_score` for the score's two errors (log Z's,
        shared by every row, and the test set's).

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

    @reads_one_publication
    def estimate_log_likelihood_bounds(self, X, *, n_betas="auto", max_rows=100,
                                       max_time=120.0):
        """Bracket the mean log-likelihood of ``X``: an estimate from above and below.

        ``upper`` is the mean of :meth:`score_samples` (``mean(-F(x)) - log Z``),
        high on average when log Z is an annealed-importance-sampling estimate (AIS
        errs low). ``lower`` is conservative: reverse annealing (RAISE: Burda, Grosse & Salakhutdinov,
        "Accurate and conservative estimates of MRF log-likelihood using reverse
        annealing", AISTATS 2015) from up to ``max_rows`` evenly spaced rows back to
        the base model of the forward estimate, low on average; the gap between the
        two is measured on those rows and applies to all. A narrow bracket means both
        are right; a wide one that the annealing needs more betas. RAISE is only as
        good as its betas: it bounds the likelihood of its annealing chain read as a
        model, which can fit the data *better* than the model itself when the
        annealing is too short (on 784 x 500 RBMs trained by CD-1 it came out above
        the forward estimate at thousands of betas; a warning says so). With
        ``n_betas="auto"`` it starts at 1,000 betas and doubles them while that
        changes the bracket by a fifth or more, or while the reverse end is above the
        forward one, until ``max_time`` (``gaps`` records each step). Needs a model
        whose sampler state is its visible units (an RBM, or a Boltzmann machine
        without hidden units).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to bracket the mean log-likelihood of (binary, or in [0, 1]).
        n_betas : int or "auto", default="auto"
            Betas of the reverse annealing.
        max_rows : int, default=100
            Rows the reverse annealing runs on (its cost is rows x betas Gibbs
            transitions).
        max_time : float or None, default=120.0
            Seconds after which no further doubling of the betas starts.

        Returns
        -------
        bounds : skboltz.partition.LogLikelihoodBounds
            ``lower``, ``upper``, their standard errors, ``width``, ``n_betas`` and
            ``gaps`` (the bracket's width at each number of betas tried).

        Examples
        --------
        >>> from sklearn.datasets import load_digits
        >>> from skboltz import RBM
        >>> X = (load_digits().data > 7).astype(float)
        >>> rbm = RBM(n_components=16, n_iter=5, random_state=0).fit(X[:1400])
        >>> bounds = rbm.estimate_log_likelihood_bounds(X[1400:], n_betas=2000)
        >>> exact = rbm.score(X[1400:])  # exact log Z: upper is the log-likelihood
        >>> bool(bounds.lower <= exact + 3 * bounds.lower_std_error and bounds.width < 2)
        True
        """
        check_is_fitted(self, "_training_state")
        X = as_dense(self._validate_X(X, reset=False))
        log_z = self._log_z_for_scoring()
        return log_likelihood_bounds(
            self._model_view(), X, log_z, data_rates=self._training_state.data_rates,
            n_betas=n_betas, max_rows=max_rows, max_time=max_time,
            rng=np.random.default_rng(self._training_state.log_z_seed),
        )

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


def parameter_fingerprint(view):
    """A digest of every parameter array of a model view (fields that hold an array or
    a tuple or list of arrays)."""
    digest = hashlib.blake2b(digest_size=16)
    for value in vars(view).values():
        # a field may hold one array or a sequence of them (a deep machine's layers)
        for array in (value if isinstance(value, (tuple, list)) else (value,)):
            if isinstance(array, np.ndarray):
                digest.update(np.ascontiguousarray(array).tobytes())
                digest.update(str((array.dtype, array.shape)).encode())
    return digest.hexdigest()


def as_dense(X):
    """Dense ndarray from a dense or sparse matrix."""
    return X.toarray() if sp.issparse(X) else X


__all__ = ["BoltzmannBase", "all_or_nothing", "held_updates", "publish"]
