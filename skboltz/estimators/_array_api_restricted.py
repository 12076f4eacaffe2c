"""Restricted models on any array namespace (array API dispatch; see :mod:`skboltz.utils._array_api`).

The namespace-generic path of the restricted estimators (:class:`~skboltz.RBM`,
:class:`~skboltz.GaussianRBM`, :class:`~skboltz.CategoricalRBM`,
:class:`~skboltz.TabularRBM`): one restricted model, a visible layer of any unit type
and a binary hidden layer coupled by weights W, trained and scored with the array API
standard's functions only, so that torch (CPU or CUDA), CuPy and array-api-strict
arrays are computed on in their own namespace and on their own device. The unit types'
formulas are the layers' own (:mod:`skboltz.units._layers`, written once for every
namespace), the negative phases the learning strategies' (their ``negative_sample``
and ``start_chains``, :mod:`skboltz.learning`), the records and early stopping those
of :mod:`skboltz.core._monitoring`; this module holds what every restricted model
shares besides: the minibatch loop, the update rule, the scores and log Z (exact
enumeration of the countable layer with fewer states, or annealed importance
sampling). An estimator's subclass of :class:`RestrictedArrayAPI` says what is its
own: how rows become visible units, its starting parameters, its fitted attributes
and its checks.

It is a separate driver, so that the NumPy path keeps its fused loop: one plain
minibatch loop, a handful of matrix products and elementwise calls per update, which
on an accelerator is what runs fast.

What it covers: ``fit`` and ``partial_fit`` with every learning strategy that has a
``negative_sample`` (CD-k, PCD and parallel tempering, with their ``n_steps``, a
schedule of them, ``n_chains``, ``n_temperatures``, ``min_beta`` and
``negative_visible``; a user's own), the learning rate, moving-average momentum (a
schedule too), weight decay every :data:`~skboltz.core._update.DECAY_INTERVAL`
updates and iterate averaging every :data:`~skboltz.core._training.AVERAGE_INTERVAL`
updates, as the NumPy path applies them; ``validation_fraction``,
``monitor_likelihood``, ``n_iter_no_change`` and callbacks; ``transform``,
``reconstruct``, ``free_energy``, ``score_samples``, ``score``, ``sample`` and
``estimate_log_partition`` with log Z exact or by annealed importance sampling;
``sample_weight`` in ``fit``, ``partial_fit`` and ``score`` (rows of weight 0
dropped, the others relative, weighting every update's data statistics and the
starting rates, as :mod:`skboltz.utils._weights` says). The rest of the NumPy path's
options (other learning strategies and log Z estimators, missing entries, the
degeneracy check at the end of a fit) are refused with an error that says to pass
NumPy arrays.
"""

import copy
import math
import numbers
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..utils._array_api import (
    ArrayAPIState,
    check_input_namespace,
    dispatched_namespace,
    foreign_namespace,
    namespace_of,
    random_source,
    score_dtype,
    to_numpy,
)
from ..utils._energy import bernoulli_sample, logit_of_rates
from ..core._base import same_strategy
from ..core._independence import rows_are_binary
from ..core._monitoring import (
    RECONSTRUCTION_ROWS,
    EarlyStopping,
    MonitoringRows,
    finish_epoch,
    held_out_split,
    monitoring_positions,
    stopping_criterion,
    with_monitoring_budget,
)
from ._layered_rbm import auto_average_window
from ..units._layers import BinaryUnits
from ..utils._runtime import fit_callback_context, make_generator, warn_user
from ..utils._sklearn import _check_sample_weight, check_count
from ..core._strategies import AUTO_EXACT_MAX_STATES, accepted_strategies
from ..core._training import (
    AVERAGE_INTERVAL,
    IterateAverage,
    diverged,
    diverged_error,
    latest_records,
)
from ..core._transactions import all_or_nothing, publish
from ..core._update import DECAY_INTERVAL, UpdateRule
from ..utils._weights import relative_weights, scaled_to_largest
from ..exceptions import ApproximateScoreWarning, LogZAccuracyWarning
from ..learning._base import samples_on_any_namespace, steps_at
from ..partition import AIS, Exact, LogZ
from ..partition._ais import MAX_BETAS, MAX_LOG_WEIGHT_SPREAD, beta_schedule

#: The fewest betas of annealed importance sampling under dispatch when the AIS object
#: asks for the adaptive schedule: its search starts from this many betas of the
#: three-stage schedule of Salakhutdinov & Murray (2008) (see ais_log_partition).
AIS_BETAS = 1000

#: The most chains the adaptive search of annealed importance sampling takes.
MAX_AIS_CHAINS = 2**14

#: The AIS bases the dispatched path runs ("auto" runs the data's base there).
DISPATCHED_AIS_BASES = ("auto", "data")

#: States enumerated per matrix product by the exact log Z.
EXACT_CHUNK = 2**14

#: Most binary digits of the states ``z_estimator="exact"`` lists under dispatch.
EXACT_MAX_UNITS = 30

#: The parameters every restricted model has, in W, b, c order.
WEIGHTS, VISIBLE_BIAS, HIDDEN_BIAS = "weights", "visible_bias", "hidden_bias"


# -- the model of a parameter set ------------------------------------------------------

class Model:
    """The restricted model of a parameter set (arrays of ``xp`` by name): its layers
    and the formulas that couple them."""

    def __init__(self, xp, visible, params):
        self.xp = xp
        self.weights = params[WEIGHTS]
        self.visible = visible
        self.hidden = BinaryUnits(params[HIDDEN_BIAS])

    def hidden_input(self, V):
        """What the visible rows send the hidden units: (v as seen) W^T."""
        return self.visible.seen_states(V) @ self.weights.T

    def visible_input(self, H):
        return H @ self.weights

    def tempered_energy(self, V, H):
        """The part of E(v, h) that tempering scales, of paired rows: all of it but
        the visible biases of a layer that keeps them (a Gaussian one's quadratic
        term), as the NumPy training form's ``energy``."""
        xp = self.xp
        energy = -xp.sum(H * self.hidden_input(V), axis=1) - H @ self.hidden.bias
        if self.visible.tempers_bias:
            energy = energy + self.visible.energy(V)
        return energy

    def hidden_probability(self, V):
        return self.hidden.mean(self.hidden_input(V))

    def free_energy(self, V):
        """F(v) = E_visible(v) - log sum_h exp(h . (c + W seen(v)))."""
        return self.visible.energy(V) - self.hidden.log_partition(self.hidden_input(V),
                                                                  overwrite=True)

    def gibbs_from_visible(self, source, V, n_steps):
        """``n_steps`` block Gibbs steps from visible rows: the last visible inputs
        (what the hidden units sent) and rows."""
        input = None
        for _ in range(n_steps):
            H = self.hidden.sample(self.hidden_input(V), source)
            input = self.visible_input(H)
            V = self.visible.sample(input, source)
        return input, V


@dataclass(eq=False)
class RestrictedArrayState(ArrayAPIState):
    """Training state of a restricted model fitted on the generic path (arrays of
    ``xp``)."""

    xp: object
    device: object
    source: object
    #: The parameters the updates move, by name, and their published average (the
    #: same dict without averaging).
    iterate: dict
    params: dict
    velocity: dict
    #: The learning strategy's chains (``start_chains``: PCD's hidden states,
    #: parallel tempering's chains at every beta), else None.
    chains: dict = None
    #: Whether the first call's rows were all 0/1 (what RBM's weight_decay="auto"
    #: follows).
    rows_are_binary: bool = False
    n_first_rows: int = 0
    #: The published average's counters (the NumPy path's).
    average: IterateAverage = field(default_factory=IterateAverage)
    pending_decay: int = 0
    n_iter: int = 0
    #: The visible units' means on the training rows (float64 NumPy, on the host):
    #: where ``sample`` starts.
    visible_rates: np.ndarray = None
    #: The annealed layer's means on the training rows (the visible ones, or the
    #: hidden ones where the visible layer is not countable): the base model of AIS.
    data_rates: np.ndarray = None
    log_z_seed: int = 0
    sampling_seed: int = 0
    history: dict = field(default_factory=dict)
    structure: dict = field(default_factory=dict)
    #: What an estimator keeps besides (its input transform, its data's scale, ...).
    extra: dict = field(default_factory=dict)
    #: Whether the call that made the state was a ``partial_fit`` (its first call, which
    #: may be one small minibatch: the checks of the rows are milder).
    partial: bool = False

    def __setstate__(self, state):
        super().__setstate__(state)
        if "n_averaged" in self.__dict__:  # pickled before the counters were shared
            self.average = IterateAverage(self.__dict__.pop("n_averaged"),
                                          self.__dict__.pop("n_pending_average"))
        # a model pickled before its learning strategy kept the chains: PCD's hidden
        # states and parallel tempering's chains were fields of their own
        hidden, tempered = self.__dict__.pop("hidden", None), self.__dict__.pop("tempered", None)
        if tempered is not None:
            tempered["n_swaps_accepted"] = tempered.pop("n_accepted", 0)
            tempered["n_swaps_proposed"] = tempered.pop("n_proposed", 0)
            self.chains = tempered
        elif hidden is not None:
            self.chains = {"hidden": hidden}


def refuse(estimator, setting, why=""):
    raise ValueError(
        f"{type(estimator).__name__}({setting}) is not available under array API "
        f"dispatch{why}: pass NumPy arrays (or turn dispatch off) to use it, or use "
        "the settings the dispatched path supports (see the GPU / array API section "
        "of the user guide)."
    )


def _is_one_of(spec, names, classes):
    return spec in names if isinstance(spec, str) else type(spec) in classes


def unsupported_restricted_setting(estimator):
    """``(setting, why)`` of the first setting of a restricted estimator the generic
    path does not implement, or None (cheap: no strategy is made)."""
    learning = estimator.learning
    strategy = (accepted_strategies(estimator._view_class)[0].get(learning)
                if isinstance(learning, str) else type(learning))
    if strategy is None or not samples_on_any_namespace(strategy):
        return (f"learning={learning!r}",
                ": its negative phase is NumPy's only (a learning strategy runs there "
                "when it implements negative_sample, as 'cd', 'pcd' and 'pt' do)")
    if not _is_one_of(estimator.z_estimator, ("auto", "exact", "ais"), (Exact, AIS)):
        return (f"z_estimator={estimator.z_estimator!r}",
                ": only 'auto', 'exact' and 'ais' (Exact and AIS objects) run there")
    return None


# -- training ------------------------------------------------------------------------
class _Update:
    """The update rule of :mod:`skboltz.core._update` on a dict of arrays: moving-average
    momentum, weight decay on W every DECAY_INTERVAL updates (that many updates'
    worth), then the move: added, or for the parameters in ``log_scale`` (name ->
    largest decrease) the ratio step z += log1p(max(update, -largest decrease)); the
    parameters named in ``fixed`` stay exactly as they are."""

    def __init__(self, xp, rule, log_scale, fixed=()):
        self.xp, self.rule, self.log_scale, self.fixed = xp, rule, log_scale, fixed
        self.decay_step = DECAY_INTERVAL * rule.decay
        self.last_step = None

    def apply(self, state, gradient):
        momentum = self.rule.momentum
        if momentum:
            update = {k: momentum * state.velocity[k] + g for k, g in gradient.items()}
        else:
            update = gradient
        state.pending_decay += 1
        if state.pending_decay == DECAY_INTERVAL:
            state.pending_decay = 0
            if self.decay_step:
                update = {**update, WEIGHTS: update[WEIGHTS]
                          - self.decay_step * state.iterate[WEIGHTS]}
        if momentum:
            state.velocity = update
        else:  # the velocity is the last step, set at the end of the epoch
            self.last_step = update
        xp, moved = self.xp, {}
        for name, value in state.iterate.items():
            if name in self.fixed:  # not learnt: left exactly as it is
                moved[name] = value
                continue
            step = update[name]
            if name in self.log_scale:
                step = xp.log1p(xp.maximum(step, xp.full_like(step, -self.log_scale[name])))
            moved[name] = value + step
        state.iterate = moved

    def finish(self, state):
        if self.last_step is not None:
            state.velocity = self.last_step


def _move_average(state, window):
    """Move the published average towards the iterate (see ``IterateAverage``)."""
    if state.params is state.iterate:
        return
    weight = state.average.take_pending(window)
    if weight is not None:
        state.params = {k: a + weight * (state.iterate[k] - a)
                        for k, a in state.params.items()}


class RestrictedArrayAPI:
    """The namespace-generic methods of a restricted estimator (see the module
    docstring); each takes the estimator first. A subclass per estimator overrides
    the hooks in the first section."""

    # -- an estimator's own: override these --------------------------------------------
    @classmethod
    def unsupported_setting(cls, estimator):
        """``(setting, why)`` of the first setting the generic path refuses, or None."""
        return unsupported_restricted_setting(estimator)

    @classmethod
    def visible_rows(cls, estimator, X, *, reset, state=None):
        """``X`` validated in its namespace and turned into visible units' rows (by
        the estimator's input transform, when it has one; ``state`` is the state a
        fit makes or continues, None when scoring a fitted model)."""
        raise NotImplementedError

    @classmethod
    def new_state_extra(cls, estimator, V):
        """What a first fit keeps in ``state.extra``, from its visible rows."""
        return {}

    @classmethod
    def starting_visible_bias(cls, estimator, visible_rates):
        """The visible biases a fit starts from (host float64): the independent
        layer's with the data's means, so the hidden units start on what the means
        miss (Hinton's practical guide)."""
        return logit_of_rates(visible_rates)

    @classmethod
    def starting_extra_params(cls, estimator, V, state):
        """The extra parameters a fit starts from, by name (arrays of ``xp``)."""
        return {}

    @classmethod
    def visible_layer(cls, estimator, params, state=None):
        """The visible layer over ``params`` (arrays of ``xp`` by name)."""
        raise NotImplementedError

    @classmethod
    def log_scale(cls, estimator):
        """The parameters stepped as ratios, name -> largest decrease."""
        return {}

    @classmethod
    def fixed_parameters(cls, estimator):
        """The names of the extra parameters the updates leave exactly as they are
        (settings that do not learn them)."""
        return ()

    @classmethod
    def fitted_attributes(cls, estimator, params, state):
        """The public attributes of a parameter set."""
        return {"components_": params[WEIGHTS],
                "intercept_visible_": params[VISIBLE_BIAS],
                "intercept_hidden_": params[HIDDEN_BIAS]}

    @classmethod
    def resolved_settings(cls, estimator, state):
        """Fitted attributes recording what settings such as "auto" resolved to
        (beyond ``learning_rate_``), as the NumPy path publishes them."""
        return {}

    @classmethod
    def params_of(cls, estimator):
        """The parameters by name, from the public attributes (so edits count)."""
        return {WEIGHTS: estimator.components_,
                VISIBLE_BIAS: estimator.intercept_visible_,
                HIDDEN_BIAS: estimator.intercept_hidden_}

    @classmethod
    def check_epoch(cls, estimator, state, V):
        """Checks after each epoch beyond the divergence of the parameters; raise a
        TrainingDivergedError to leave the estimator as it was."""

    @classmethod
    def visible_out(cls, estimator, V):
        """Visible rows as the user's data (``sample``, ``reconstruct``)."""
        return V

    @classmethod
    def log_density_offset(cls, estimator):
        """What the input transform adds to a row's log-density (a float)."""
        return 0.0

    @classmethod
    def training_log_density_offset(cls, estimator, state):
        """:meth:`log_density_offset` of the transform of a fit under way (``state``'s,
        before it is published): what the monitoring records add."""
        return 0.0

    # -- shared: the supported settings ---------------------------------------------
    @classmethod
    def supports(cls, estimator):
        return cls.unsupported_setting(estimator) is None

    @classmethod
    def _check_settings(cls, estimator):
        unsupported = cls.unsupported_setting(estimator)
        if unsupported is not None:
            refuse(estimator, *unsupported)

    @classmethod
    def _resolve_z_estimator(cls, estimator, spec, model):
        if isinstance(spec, str) and spec == "auto":
            n_bits = _enumerated(model)[0].n_bits
            spec = "exact" if 2**n_bits <= AUTO_EXACT_MAX_STATES else "ais"
        resolved = estimator._resolve_strategy(spec, "z_estimator")
        if type(resolved) not in (Exact, AIS):
            refuse(estimator, f"z_estimator={spec!r}",
                   ": only 'auto', 'exact' and 'ais' (Exact and AIS objects) run there")
        if type(resolved) is AIS and resolved.base not in DISPATCHED_AIS_BASES:
            refuse(estimator, f"z_estimator=AIS(base={resolved.base!r})",
                   ": its paths start at independent units with the data's rates "
                   "(base='data'; 'auto' runs that one there)")
        return resolved

    @classmethod
    def model(cls, estimator, params, state=None, dtype=None):
        xp = (state or estimator._training_state).xp
        if dtype is not None:
            params = {k: xp.astype(p, dtype) for k, p in params.items()}
        return Model(xp, cls.visible_layer(estimator, params, state), params)

    # -- fit -------------------------------------------------------------------------
    @classmethod
    def fit(cls, estimator, X, y=None, *, partial, **kwargs):
        with all_or_nothing(estimator):
            return cls._fit(estimator, X, partial=partial, **kwargs)

    @classmethod
    def _fit(cls, estimator, X, *, partial, sample_weight=None, **kwargs):
        given = {k: v for k, v in kwargs.items() if v is not None}
        if given:
            refuse(estimator, ", ".join(f"{k}=..." for k in given),
                   f": {', '.join(given)} not supported there")
        cls._check_settings(estimator)
        learning = estimator._resolve_learning()
        first_call = not (partial and hasattr(estimator, "_training_state"))
        if not first_call:
            check_input_namespace(estimator, X, estimator._training_state, "partial_fit")
        X, weights = _weighted_rows(X, sample_weight)
        validation = None
        if first_call:
            xp, device = dispatched_namespace(X)
            state, V, validation, weights = cls._new_state(
                estimator, X, xp, device, learning, partial=partial, weights=weights)
        else:
            state = cls._continued_state(estimator, learning)
            V = cls.visible_rows(estimator, X, reset=False, state=state)
            cls._as_dtype(state, V.dtype)
            if not same_strategy(learning, estimator.learning_):
                # set_params(learning=...) between calls: the parameters continue, the
                # new strategy's chains start at this call's rows (as on NumPy)
                cls._start_chains(estimator, state, learning, V)
        xp = state.xp
        row_weights = None if weights is None else xp.asarray(
            weights, dtype=V.dtype, device=state.device)
        # a Python float: the automatic step is a NumPy scalar, which other namespaces'
        # arrays refuse to be multiplied by
        learning_rate = float(estimator._learning_rate_of(state))
        n_epochs = 1 if partial else estimator.n_iter
        monitor = _MonitoringRows.of(xp, state.device, V, weights, validation)
        stopping = None
        if not partial and estimator.n_iter_no_change is not None:
            sign, key = stopping_criterion(estimator, validation is not None)
            stopping = EarlyStopping(key, sign, estimator.n_iter_no_change, estimator.tol,
                                     keep_best=validation is not None,
                                     owner=type(estimator).__name__)
        # callbacks see one task per call with one subtask per epoch, as on NumPy
        callback_ctx = fit_callback_context(estimator, max_subtasks=n_epochs)
        callback_ctx.call_on_fit_task_begin(estimator=estimator, X=X, y=None)
        for _ in range(n_epochs):
            epoch_ctx = callback_ctx.subcontext(task_name="epoch")
            epoch_ctx.call_on_fit_task_begin(estimator=estimator, X=X, y=None)
            start = time.perf_counter()
            # the NumPy path's momentum schedule and progress (for a schedule of k)
            rule = UpdateRule.of(float(estimator._momentum_at(state.n_iter)),
                                 learning_rate, estimator._weight_decay_of(state))
            cls._train_epoch(estimator, V, state, learning, rule,
                             estimator._progress(state), row_weights)
            if diverged(state.params) or diverged(state.iterate):
                raise diverged_error(estimator, state.n_iter + 1,
                                     "Use a smaller learning_rate.")
            cls.check_epoch(estimator, state, V)
            state.n_iter += 1
            record = {"epoch": state.n_iter, "time": time.perf_counter() - start}
            record.update(cls._epoch_record(estimator, state, monitor, record["time"]))
            if state.chains is not None:  # the strategy's (the share of swaps accepted)
                record.update(learning.pop_diagnostics(state.chains))
            if finish_epoch(estimator, record, state.history, state.params,
                            epoch_ctx=epoch_ctx, stopping=stopping, X=X, y=None):
                break
        model = cls.model(estimator, state.params, state)
        if not model.visible.discrete:  # AIS anneals the hidden units: their rates
            state.data_rates = _host_means(xp, model.hidden_probability(V))
        z_estimator = cls._resolve_z_estimator(estimator, estimator.z_estimator, model)
        attributes = cls.fitted_attributes(estimator, state.params, state)
        state.extra["published"] = attributes
        publish(estimator, {
            **attributes,
            "learning_rate_": learning_rate, "learning_": learning,
            **cls.resolved_settings(estimator, state),
            "z_estimator_": z_estimator, "_training_state": state, "_log_z_cache": {},
            "_sampling_rng": None,
        })
        callback_ctx.call_on_fit_task_end(estimator=estimator, X=X, y=None,
                                          reconstruction_attributes={})
        return estimator

    @classmethod
    def _epoch_record(cls, estimator, state, monitor, epoch_seconds):
        """An epoch's records on the monitoring rows, as the NumPy path's
        :class:`~skboltz.core._monitoring.Monitor` makes them: the reconstruction
        error; with held-out rows theirs, both mean free energies and their gap; with
        ``monitor_likelihood`` each split's mean log-likelihood under a log Z estimate
        on a monitoring budget."""
        xp, train = state.xp, monitor.train
        record = {"reconstruction_error": cls._reconstruction_error(estimator, state, train)}
        dtype = score_dtype(xp, state.device)
        model = cls.model(estimator, state.params, state, dtype=dtype)
        free_energies = {}
        if monitor.valid is not None or estimator.monitor_likelihood:
            free_energies = {split: model.free_energy(xp.astype(rows, dtype))
                             for split, rows, _ in monitor.splits()}
        if monitor.valid is not None:
            record["free_energy_train"] = monitor.mean(free_energies["train"], "train")
            record["reconstruction_error_valid"] = cls._reconstruction_error(
                estimator, state, monitor.valid, every_row=True)
            record["free_energy_valid"] = monitor.mean(free_energies["valid"], "valid")
            record["free_energy_gap"] = (record["free_energy_valid"]
                                         - record["free_energy_train"])
        if estimator.monitor_likelihood:
            start = time.perf_counter()
            spec = estimator.z_estimator
            z_estimator = with_monitoring_budget(
                spec, cls._resolve_z_estimator(estimator, spec, model), epoch_seconds)
            if not model.visible.discrete:  # AIS anneals the hidden units: their rates
                state.data_rates = _host_means(xp, model.hidden_probability(
                    xp.astype(train, dtype)))
            with warnings.catch_warnings():
                # its standard error is recorded instead: a warning every epoch would
                # bury the one that matters
                warnings.simplefilter("ignore", LogZAccuracyWarning)
                log_z = cls._log_partition_of(model, state, z_estimator)
            offset = cls.training_log_density_offset(estimator, state)
            for split, rows, _ in monitor.splits():
                record[f"log_likelihood_{split}"] = (
                    -monitor.mean(free_energies[split], split) - log_z.value + offset)
            if log_z.std_error is not None:
                record["log_z_std_error"] = log_z.std_error
            record["log_z_time"] = time.perf_counter() - start
        return record

    @classmethod
    def _train_epoch(cls, estimator, V, state, learning, rule, progress,
                     row_weights=None):
        xp, source = state.xp, state.source
        n_rows = V.shape[0]
        batch_size = max(1, min(estimator.batch_size, n_rows))
        n_steps = steps_at(getattr(learning, "n_steps", 1), progress)
        update = _Update(xp, rule, cls.log_scale(estimator), cls.fixed_parameters(estimator))
        window = state.extra["average_window"]
        averaging = window is not None
        step = rule.step
        order = source.permutation(n_rows) if n_rows > batch_size else None
        for start in range(0, n_rows, batch_size):
            stop = min(start + batch_size, n_rows)
            rows = None if order is None else order[start:stop]
            positive = V if rows is None else xp.take(V, rows, axis=0)
            weights = (row_weights if rows is None or row_weights is None
                       else xp.take(row_weights, rows, axis=0))
            model = cls.model(estimator, state.iterate, state)
            gradient = cls._gradient(model, state, learning, positive, n_steps, step,
                                     weights)
            update.apply(state, gradient)
            if averaging:
                state.average.n_pending += 1
                if state.average.n_pending == AVERAGE_INTERVAL:
                    _move_average(state, window)
            else:
                state.params = state.iterate
        update.finish(state)
        if averaging:
            _move_average(state, window)

    @classmethod
    def _gradient(cls, model, state, learning, positive, n_steps, step, weights=None):
        """One update's step times the gradient: the data's statistics minus the
        negative phase's (CD-k from the minibatch, or PCD's chains, which it moves).

        ``weights`` (of the minibatch's rows, or None) weight the data's statistics,
        and CD's negative rows started at them, in a mean over the minibatch's rows
        (not divided by its weights: every update's gradient then has the
        expectation of the whole weighted data's, see :mod:`skboltz.utils._weights`)."""
        xp, visible = model.xp, model.visible
        positive_hidden = model.hidden_probability(positive)
        choice = getattr(learning, "negative_visible", "auto")
        if choice == "auto":
            choice = visible.auto_negative_visible
        rows_are_means = choice == "mean"
        negative, negative_hidden = learning.negative_sample(
            model, state.chains, positive, positive_hidden, state.source, n_steps,
            rows_are_means)
        n_pos, n_neg = positive.shape[0], negative.shape[0]
        negative_weights = weights if learning.negative_rows_start_at_batch else None
        weighted_positive, weighted_hidden = _weighted(positive, positive_hidden, weights)
        weighted_negative, weighted_negative_hidden = _weighted(negative, negative_hidden,
                                                                negative_weights)
        gradient = {
            WEIGHTS: step * (positive_hidden.T @ weighted_positive / n_pos
                             - negative_hidden.T @ weighted_negative / n_neg),
            VISIBLE_BIAS: step * (xp.mean(weighted_positive, axis=0)
                                  - xp.mean(weighted_negative, axis=0)),
            HIDDEN_BIAS: step * (xp.mean(weighted_hidden, axis=0)
                                 - xp.mean(weighted_negative_hidden, axis=0)),
        }
        W = model.weights
        data = visible.extra_gradients(positive, positive_hidden, W, False, weights)
        if data:
            free = visible.extra_gradients(negative, negative_hidden, W, rows_are_means,
                                           negative_weights)
            for name in data:
                gradient[name] = step * (data[name] - free[name])
        for name in state.iterate:  # parameters that are not learnt stay
            gradient.setdefault(name, xp.zeros_like(state.iterate[name]))
        return gradient

    @classmethod
    def _reconstruction_error(cls, estimator, state, V, every_row=False):
        """The mean squared error of the rows' one-step mean reconstructions: of at
        most RECONSTRUCTION_ROWS evenly spaced rows of ``V`` (every row with
        ``every_row``), as the NumPy path's monitor."""
        rows = V if every_row else V[:: -(-V.shape[0] // RECONSTRUCTION_ROWS), ...]
        model = cls.model(estimator, state.params, state)
        means = model.visible.mean(model.visible_input(model.hidden_probability(rows)))
        return float(state.xp.mean((means - rows) ** 2))

    @classmethod
    def _new_state(cls, estimator, X, xp, device, learning, *, partial=False,
                   weights=None):
        """The state of a first fit, its visible training rows, the held-out ``(rows,
        weights)`` of ``validation_fraction`` (None without) and the training rows'
        relative weights."""
        rng = make_generator(estimator.random_state)
        # the held-out rows: the generator's first draw, as on the NumPy path
        held_out = (None if partial or estimator.validation_fraction is None
                    else held_out_split(estimator.validation_fraction, X.shape[0], rng))
        source = random_source(xp, device, int(rng.integers(np.iinfo(np.int32).max)))
        state = RestrictedArrayState(
            xp=xp, device=device, source=source, iterate={}, params={}, velocity={},
            history={"epoch": [], "time": [], "reconstruction_error": []},
            structure=estimator._structure(), partial=partial,
        )
        V = cls.visible_rows(estimator, X, reset=True, state=state)
        validation = None
        if held_out is not None:  # the input transform is of every row, as on NumPy
            train, valid = held_out
            V, validation = (
                xp.take(V, xp.asarray(train, device=device), axis=0),
                (xp.take(V, xp.asarray(valid, device=device), axis=0),
                 None if weights is None else weights[valid]))
            weights = None if weights is None else relative_weights(weights[train])
        dtype = V.dtype
        state.extra.update(cls.new_state_extra(estimator, V))
        window = estimator.average_window
        if isinstance(window, str):  # "auto": a fifth of the fit's updates, as in NumPy
            window = auto_average_window(estimator.n_iter, V.shape[0],
                                         max(1, min(estimator.batch_size, V.shape[0])))
        state.extra["average_window"] = window
        state.visible_rates = _host_means(xp, V, weights)
        state.rows_are_binary = rows_are_binary(xp, V)
        state.n_first_rows = V.shape[0]
        n_visible, n_hidden = V.shape[1], estimator.n_components
        params = {
            WEIGHTS: 0.01 * source.standard_normal((n_hidden, n_visible), dtype),
            VISIBLE_BIAS: xp.asarray(cls.starting_visible_bias(
                estimator, state.visible_rates), dtype=dtype, device=device),
            HIDDEN_BIAS: xp.zeros(n_hidden, dtype=dtype, device=device),
        }
        params.update(cls.starting_extra_params(estimator, V, state))
        state.iterate = state.params = params
        state.velocity = {k: xp.zeros_like(p) for k, p in params.items()}
        if cls.model(estimator, params, state).visible.discrete:
            state.data_rates = state.visible_rates
        cls._start_chains(estimator, state, learning, V)
        state.log_z_seed = int(rng.integers(np.iinfo(np.int32).max))
        state.sampling_seed = int(rng.integers(np.iinfo(np.int32).max))
        return state, V, validation, weights

    @classmethod
    def _start_chains(cls, estimator, state, learning, V):
        """The negative phase's state of ``learning`` (its ``start_chains``: persistent
        chains, or tempered ones at every beta), started at training rows ``V``; none
        for a strategy without persistent chains (CD)."""
        xp, source = state.xp, state.source
        model = cls.model(estimator, state.iterate, state)
        n_rows = learning.n_persistent_chains(max(1, min(estimator.batch_size, V.shape[0])))
        state.chains = None
        if n_rows:
            starts = xp.take(V, source.integers(V.shape[0], n_rows), axis=0)
            state.chains = learning.start_chains(
                model, cls._chain_starts(estimator, model, source, starts), source)

    @classmethod
    def _chain_starts(cls, estimator, model, source, rows):
        """Persistent chains' first visible states from training rows: binary units
        drawn with the rows' values as probabilities, other types as they are."""
        if isinstance(model.visible, BinaryUnits):
            return bernoulli_sample(rows, source)
        return rows

    @classmethod
    def _continued_state(cls, estimator, learning):
        """The state a ``partial_fit`` continues: the last one, its parameters replaced
        by the public attributes when they were edited (set) by hand."""
        # A copy: the published state is left as it is until this call publishes (the
        # arrays are replaced, never changed in place, so a shallow copy is enough).
        state = copy.copy(estimator._training_state)
        state.history = latest_records(state.history)  # new lists, bounded
        state.extra = dict(state.extra)
        state.average = copy.copy(state.average)
        if state.chains is not None:
            state.chains = dict(state.chains)
        estimator._check_structure_unchanged()
        if any(getattr(estimator, name) is not value
               for name, value in state.extra["published"].items()):
            # edited by hand: continue from the public attributes
            state.iterate = state.params = cls.params_of(estimator)
            state.average = IterateAverage()
        return state

    @staticmethod
    def _as_dtype(state, dtype):
        """The state's arrays in the dtype of a ``partial_fit`` call's rows."""
        xp = state.xp
        if state.params[WEIGHTS].dtype == dtype and state.iterate[WEIGHTS].dtype == dtype:
            return
        state.iterate = {k: xp.astype(p, dtype) for k, p in state.iterate.items()}
        state.params = {k: xp.astype(p, dtype) for k, p in state.params.items()}
        state.velocity = {k: xp.astype(p, dtype) for k, p in state.velocity.items()}
        if state.chains is not None:  # their float arrays (not counts, nor host arrays)
            state.chains = {
                name: xp.astype(value, dtype)
                if foreign_namespace(value) is not None
                and xp.isdtype(value.dtype, "real floating") else value
                for name, value in state.chains.items()}

    # -- inference -----------------------------------------------------------------
    @classmethod
    def _rows(cls, estimator, X):
        check_is_fitted(estimator, "_training_state")
        return cls.visible_rows(estimator, X, reset=False)

    @classmethod
    def _fitted_model(cls, estimator, dtype):
        return cls.model(estimator, cls.params_of(estimator), dtype=dtype)

    @classmethod
    def transform(cls, estimator, X):
        V = cls._rows(estimator, X)
        return cls._fitted_model(estimator, V.dtype).hidden_probability(V)

    @classmethod
    def reconstruct(cls, estimator, X):
        V = cls._rows(estimator, X)
        model = cls._fitted_model(estimator, V.dtype)
        input = model.visible_input(model.hidden_probability(V))
        return cls.visible_out(estimator, model.visible.mean(input))

    @classmethod
    def free_energy(cls, estimator, X):
        V = cls._rows(estimator, X)
        state = estimator._training_state
        dtype = score_dtype(state.xp, state.device)
        return cls._fitted_model(estimator, dtype).free_energy(state.xp.astype(V, dtype))

    @classmethod
    def score_samples(cls, estimator, X):
        V = cls._rows(estimator, X)
        state = estimator._training_state
        xp = state.xp
        log_z = cls.estimate_log_partition(estimator)
        if not log_z.is_reliable:
            warn_user(
                f"{type(estimator).__name__}: the scores use an estimate of log Z by "
                f"{log_z.method} that is less accurate than asked "
                "(estimate_log_partition().describe() says how); more chains or betas "
                "(z_estimator=AIS(n_chains=..., n_betas=..., schedule='three_stage')) "
                "give a more accurate one.",
                ApproximateScoreWarning, once_per=(type(estimator).__name__, "ais"))
        dtype = score_dtype(xp, state.device)
        model = cls._fitted_model(estimator, dtype)
        log_likelihood = (-model.free_energy(xp.astype(V, dtype)) - log_z.value
                          + cls.log_density_offset(estimator))
        if model.visible.discrete:
            # -F(x) <= log Z for every state: an AIS estimate below it is capped
            log_likelihood = xp.minimum(log_likelihood, xp.zeros_like(log_likelihood))
        return log_likelihood

    @classmethod
    def score_samples_std_error(cls, estimator, X):
        """Zeros: rows are complete under dispatch, and a complete row's score has no
        error of its own (that of log Z, shared by every row, is apart)."""
        V = cls._rows(estimator, X)
        state = estimator._training_state
        return state.xp.zeros(V.shape[0], dtype=score_dtype(state.xp, state.device),
                              device=state.device)

    @classmethod
    def score(cls, estimator, X, y=None, sample_weight=None):
        scores = cls.score_samples(estimator, X)
        xp = estimator._training_state.xp
        if sample_weight is None:
            return float(xp.mean(scores))
        weights = xp.asarray(
            scaled_to_largest(host_weights(sample_weight, scores.shape[0])),
            dtype=scores.dtype, device=scores.device)
        return float(xp.sum(scores * weights) / xp.sum(weights))

    @classmethod
    def sample(cls, estimator, n_samples=1, random_state=None, n_steps=1000,
               return_means=False):
        check_is_fitted(estimator, "_training_state")
        n_samples = check_count(n_samples, "n_samples", 1)
        n_steps = check_count(n_steps, "n_steps", 0)
        if not isinstance(return_means, (bool, np.bool_)):
            raise TypeError(f"return_means must be True or False, got {return_means!r}.")
        state = estimator._training_state
        xp, device = state.xp, state.device
        rng = make_generator(estimator.random_state if random_state is None
                             else random_state)
        source = random_source(xp, device, int(rng.integers(np.iinfo(np.int32).max)))
        W = estimator.components_
        model = cls._fitted_model(estimator, W.dtype)
        # independent visible units with the data's means, then n_steps Gibbs steps
        base = model.visible.base_bias_from_rates(state.visible_rates)
        independent = model.visible.replace(bias=xp.asarray(base, dtype=W.dtype,
                                                            device=device))
        V = independent.sample(xp.zeros((n_samples, W.shape[1]), dtype=W.dtype,
                                        device=device), source)
        input, V = model.gibbs_from_visible(source, V, n_steps)
        if return_means:
            means = (model.visible.mean(input) if input is not None
                     else xp.asarray(V, copy=True))
            return cls.visible_out(estimator, means)
        return cls.visible_out(estimator, V)

    @classmethod
    def gibbs(cls, estimator, v, random_state=None):
        """One block Gibbs step v -> h -> v' from each row, in the rows' namespace."""
        V = cls._rows(estimator, v)
        state = estimator._training_state
        if random_state is not None:
            seed = int(make_generator(random_state).integers(np.iinfo(np.int32).max))
            source = random_source(state.xp, state.device, seed)
        else:  # the model's own stream, made on first use from the fit's sampling seed
            if estimator._sampling_rng is None:
                estimator._sampling_rng = random_source(state.xp, state.device,
                                                        state.sampling_seed)
            source = estimator._sampling_rng
        model = cls._fitted_model(estimator, V.dtype)
        return cls.visible_out(estimator, model.gibbs_from_visible(source, V, 1)[1])

    @classmethod
    def estimate_log_partition(cls, estimator, z_estimator=None):
        check_is_fitted(estimator, "_training_state")
        state = estimator._training_state
        xp, device = state.xp, state.device
        params = cls.params_of(estimator)
        dtype = score_dtype(xp, device)
        model = cls.model(estimator, params, dtype=dtype)
        estimator_ = (estimator.z_estimator_ if z_estimator is None else
                      cls._resolve_z_estimator(estimator, z_estimator, model))
        key = (repr(estimator_), tuple(to_numpy(p, xp).tobytes() for p in params.values()))
        cache = estimator._log_z_cache
        if key not in cache:
            cache[key] = cls._log_partition_of(model, state, estimator_)
        return cache[key]

    @staticmethod
    def _log_partition_of(model, state, z_estimator):
        """log Z of ``model`` by ``z_estimator`` (Exact or AIS), on the model's device;
        AIS draws from the fit's log Z stream."""
        if type(z_estimator) is Exact:
            z_estimator.check_states(_enumerated(model)[0].n_bits)
            return exact_log_partition(model, state.device)
        source = random_source(state.xp, state.device, state.log_z_seed)
        return ais_log_partition(model, source, state.data_rates, z_estimator)


def _host_means(xp, rows, weights=None):
    """The column means of ``rows`` (weighted by the host's ``weights``, of mean 1) as
    float64 NumPy on the host."""
    dtype = score_dtype(xp, rows.device)
    rows = xp.astype(rows, dtype)
    if weights is not None:
        rows = rows * xp.asarray(weights[:, None], dtype=dtype, device=rows.device)
    return to_numpy(xp.mean(rows, axis=0), xp).astype(np.float64)


def _weighted(V, H, weights):
    """Rows and their hidden states times the rows' weights (as they are for None)."""
    if weights is None:
        return V, H
    return V * weights[:, None], H * weights[:, None]


def host_weights(sample_weight, n_rows):
    """``sample_weight`` of any namespace (or a list) validated as scikit-learn does,
    float64 NumPy on the host."""
    if not isinstance(sample_weight, (np.ndarray, list, tuple, numbers.Number)):
        sample_weight = to_numpy(sample_weight, namespace_of(sample_weight))
    return _check_sample_weight(sample_weight, np.empty((n_rows, 0)), dtype=np.float64,
                                ensure_non_negative=True)


@dataclass(eq=False)
class _MonitoringRows(MonitoringRows):
    """The NumPy path's :class:`~skboltz.core._monitoring.MonitoringRows` of a
    dispatched fit: the same rows, in its namespace, with their relative weights on
    its device (None: unweighted), and the records' weighted means."""

    xp: object = None

    @classmethod
    def of(cls, xp, device, V, weights, validation):
        rows = monitoring_positions(V.shape[0])
        if rows is not None:
            V = xp.take(V, xp.asarray(rows, device=device), axis=0)
            weights = None if weights is None else weights[rows]

        def on_device(values):
            return None if values is None else xp.asarray(values, dtype=V.dtype,
                                                           device=device)

        monitor = cls(V, train_weights=on_device(weights), xp=xp)
        if validation is not None:
            monitor.valid, monitor.valid_weights = validation[0], on_device(validation[1])
        return monitor

    def mean(self, values, split):
        """The mean of per-row ``values`` of a split, weighted as its rows are."""
        xp, weights = self.xp, getattr(self, f"{split}_weights")
        if weights is None:
            return float(xp.mean(values))
        weights = xp.astype(weights, values.dtype)
        return float(xp.sum(values * weights) / xp.sum(weights))


def _weighted_rows(X, sample_weight):
    """The rows of a fit (those of positive weight) and their relative weights on the
    host (None: unweighted), as :func:`skboltz.utils._weights.training_weights` makes
    them."""
    if sample_weight is None:
        return X, None
    weights = host_weights(sample_weight, X.shape[0])
    present = weights > 0
    if not present.all():  # a row of weight 0 is no row
        xp, device = dispatched_namespace(X)
        X = xp.take(X, xp.asarray(np.flatnonzero(present), device=device), axis=0)
        weights = weights[present]
    return X, relative_weights(weights)


# -- log Z in the input's namespace ---------------------------------------------------
def _logsumexp(xp, values):
    largest = float(xp.max(values))
    return largest + math.log(float(xp.sum(xp.exp(values - largest))))


def _enumerated(model):
    """(enumerated layer, summed-out layer, whether the enumerated one is visible):
    the countable layer with fewer states is listed, the visible one on a tie."""
    visible, hidden = model.visible, model.hidden
    if visible.discrete and visible.n_bits <= hidden.n_bits:
        return visible, hidden, True
    return hidden, visible, False


def exact_log_partition(model, device):
    """log Z by enumerating the states of the countable layer with fewer of them,
    EXACT_CHUNK per product, the other layer summed out in closed form."""
    xp = model.xp
    listed, summed, listed_is_visible = _enumerated(model)
    n_bits = listed.n_bits
    if n_bits > EXACT_MAX_UNITS:
        raise ValueError(
            f"Exact log Z enumerates 2**{n_bits} states, more than the "
            f"2**{EXACT_MAX_UNITS} allowed under array API dispatch; use "
            "z_estimator='ais'.")
    partial_sums = []
    for start in range(0, listed.n_states, EXACT_CHUNK):
        states = listed.xp_states(xp, device, start, min(start + EXACT_CHUNK,
                                                         listed.n_states))
        input = (model.hidden_input(states) if listed_is_visible
                 else model.visible_input(states))
        log_weights = -listed.energy(states) + summed.log_partition(input, overwrite=True)
        partial_sums.append(_logsumexp(xp, log_weights))
    value = float(np.logaddexp.reduce(np.asarray(partial_sums)))
    return LogZ(value, lower=value, upper=value, method="exact",
                cost={"n_states": listed.n_states})


def ais_log_partition(model, source, data_rates, ais):
    """log Z by annealed importance sampling (Neal, "Annealed importance sampling",
    2001; Salakhutdinov & Murray, "On the quantitative analysis of deep belief
    networks", 2008), one Gibbs transition per beta.

    The annealed layer A is the visible one when it is countable, else the hidden one;
    the other layer O is summed out. The path is
    p_beta(a) proportional to exp(-(1 - beta) E_base(a) - beta E_A(a)
    + log_partition_O(fields of O at beta)), from independent units A with the data's
    means (the base) to the model.

    A fixed schedule (``ais.schedule`` "linear", "three_stage", ...) runs once:
    ``ais.n_chains`` chains, ``ais.n_betas`` betas. The adaptive one (the default) runs
    the three-stage schedule from at least AIS_BETAS betas and, until the standard
    error is at most ``ais.target_std_error`` or the next run would pass the budget
    (``ais.max_transitions`` Gibbs transitions in all, resolved as on the NumPy path
    by ``AIS.transition_budget``, and ``ais.max_time`` seconds when set): doubles the betas while the log weights spread more than
    MAX_LOG_WEIGHT_SPREAD nats (a longer path narrows them; the paths are run anew),
    then adds as many chains on that schedule as the spread needs for the target
    (chains run side by side: on an accelerator they cost little). The estimate pools
    the paths of the last schedule.
    """
    start = time.perf_counter()
    if ais.schedule != "adaptive":
        betas = beta_schedule(ais.n_betas, ais.schedule)
        run = _annealing_run(model, source, data_rates, betas, ais.n_chains)
        return _log_z_of(run, betas, ais, start, adaptive=False)
    n_betas, n_new = max(AIS_BETAS, ais.n_betas), ais.n_chains
    target, budget = ais.target_std_error, ais.max_time
    work_budget = ais.transition_budget(model)
    run, pool, last, spent = None, False, False, 0
    while True:
        run_start = time.perf_counter()
        betas = beta_schedule(n_betas, "three_stage")
        new = _annealing_run(model, source, data_rates, betas, n_new)
        spent += n_new * (n_betas - 1)
        run = _pooled(run, new) if pool else new
        seconds_per_chain = (time.perf_counter() - run_start) / n_new
        if last or target is None or run["std_error"] <= target:
            break
        n_chains = run["n_chains"]
        if run["spread"] > MAX_LOG_WEIGHT_SPREAD and 2 * n_betas <= MAX_BETAS:
            # a longer schedule, its paths anew
            plan = (2 * n_betas, n_chains, False)
        else:  # narrow enough: more chains, as many as the spread asks (and half more)
            needed = min(math.ceil(1.5 * n_chains * (run["std_error"] / target) ** 2),
                         MAX_AIS_CHAINS)
            if needed <= n_chains:
                break
            plan = (n_betas, needed - n_chains, True)
        # the budgets, counted in chains of the current schedule
        work_left = (work_budget - spent) / (n_betas - 1)
        time_left = (math.inf if budget is None else
                     (budget - (time.perf_counter() - start)) / seconds_per_chain)
        planned = plan[1] * (plan[0] - 1) / (n_betas - 1)
        if planned > min(work_left, time_left):
            # the budget's last run: as many more chains on this schedule as fit
            n_fit = min(int(min(work_left, time_left)), MAX_AIS_CHAINS - n_chains)
            if n_fit < max(1, n_chains // 4):  # too few to be worth a run
                break
            plan, last = (n_betas, n_fit, True), True
        n_betas, n_new, pool = plan
    return _log_z_of(run, betas, ais, start, adaptive=True)


def _pooled(run, new):
    """The estimate of two batches of paths on the same schedule taken together."""
    log_weights = np.concatenate([run["log_weights"], new["log_weights"]])
    return _estimate(log_weights, run["log_z_base"])


def _estimate(log_weights, log_z_base):
    """log Z, its standard error and the log weights' spread from paths' log weights."""
    largest = log_weights.max()
    weights = np.exp(log_weights - largest)
    n_chains = len(log_weights)
    return {
        "value": log_z_base + largest + math.log(weights.mean()),
        "std_error": float(weights.std(ddof=1) / weights.mean() / math.sqrt(n_chains)
                           if n_chains > 1 else 0.0),
        "spread": float(log_weights.std()), "n_chains": n_chains,
        "log_weights": log_weights, "log_z_base": log_z_base,
    }


def _annealing_run(model, source, data_rates, betas, n_chains):
    """One batch of annealing paths: their log Z estimate (see :func:`_estimate`)."""
    xp = model.xp
    visible_annealed = model.visible.discrete
    annealed, other = ((model.visible, model.hidden) if visible_annealed
                       else (model.hidden, model.visible))
    dtype, device = model.weights.dtype, model.weights.device
    base_bias = annealed.base_bias_from_rates(data_rates)
    base = annealed.replace(bias=xp.asarray(base_bias, dtype=dtype, device=device))

    def input_to_other(S):
        return model.hidden_input(S) if visible_annealed else model.visible_input(S)

    def input_to_annealed(O):
        return model.visible_input(O) if visible_annealed else model.hidden_input(O)

    def log_weight(S, beta):  # log p*_beta(S), up to what cancels
        other_input = other.tempered_input(input_to_other(S), beta)
        return (-(1 - beta) * base.energy(S) - beta * annealed.energy(S)
                + other.log_partition(other_input, overwrite=True))

    S = base.sample(xp.zeros((n_chains, annealed.n_units), dtype=dtype, device=device),
                    source)
    log_weights = xp.zeros(n_chains, dtype=dtype, device=device)
    for previous, beta in zip(betas[:-1], betas[1:]):
        previous, beta = float(previous), float(beta)
        log_weights = log_weights + log_weight(S, beta) - log_weight(S, previous)
        if beta < 1.0:  # a transition at beta (none after the last)
            O = other.sample(other.tempered_input(input_to_other(S), beta), source)
            # the annealed layer at beta: its bias between the base's and its own
            between = annealed.replace(bias=(1 - beta) * base.bias + beta * annealed.bias)
            S = between.sample(beta * input_to_annealed(O), source)
    log_weights = to_numpy(log_weights, xp).astype(np.float64)
    # at beta = 0: the independent base layer, and the other layer at its beta-0 fields
    zero_input = xp.zeros((1, other.n_units), dtype=dtype, device=device)
    other_at_zero = float(other.log_partition(other.tempered_input(zero_input, 0.0))[0])
    log_z_base = base.replace(bias=base_bias).independent_log_partition() + other_at_zero
    return _estimate(log_weights, log_z_base)


def _log_z_of(run, betas, ais, start, adaptive):
    value, std_error = run["value"], run["std_error"]
    converged = ais.target_std_error is None or std_error <= ais.target_std_error
    why = ("its budget (max_transitions, max_time) or the largest schedule ran out first"
           if adaptive
           else "the schedule is fixed: more chains or betas lower it")
    return LogZ(
        value, std_error, lower=value - 3 * std_error, upper=value + 3 * std_error,
        method="ais",
        cost={"n_chains": run["n_chains"], "n_betas": len(betas),
              "seconds": time.perf_counter() - start,
              "log_weight_spread": run["spread"]},
        converged=converged,
        caveats=() if converged else (
            f"its standard error {std_error:.3g} is above target_std_error "
            f"{ais.target_std_error:g} ({why})",),
    )


__all__ = ["RestrictedArrayAPI", "RestrictedArrayState", "ais_log_partition",
           "exact_log_partition", "refuse", "unsupported_restricted_setting"]
