"""What a fit carries from one minibatch, epoch and ``partial_fit`` call to the next.

A fitted estimator keeps its training state in ``_training_state`` so that
``partial_fit`` continues exactly where the last call stopped (and a pickle does too).
The state is a :class:`TrainingState` dataclass (each estimator's subclass lives beside
the estimator). Every field declares how a ``partial_fit``, which works on a copy and
keeps the old state if it fails, treats it (:func:`shared`, :func:`copied`,
:func:`checkpointed`, :func:`strategy_state`), so :meth:`TrainingState.begin_update`
needs no knowledge of the types. The learning strategy's own state (persistent chains,
magnetisations) is opaque here: whatever its ``init_state`` returned, copied and cast by
the strategy itself.

The divergence test :func:`diverged` and iterate averaging (:class:`IterateAverage`,
which an estimator opts into with :class:`AveragedTrainingState`) live here too; the
update rule itself (momentum, weight decay, per-block steps) in ``_update.py``.
"""

import copy
import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..exceptions import TrainingDivergedError
from ..utils._array_api import namespace_of
from ..utils._noise import Noise

#: Parameters this large (or non-finite) mean a diverged run: sigmoids saturate at ~40,
#: and float32 resolves nothing finer than ~0.1 at this magnitude.
DIVERGED_MAGNITUDE = 1e6


def diverged(params):
    """Whether any parameter is non-finite or at least DIVERGED_MAGNITUDE: ``params``
    the packed parameters, or a dispatched model's dict of arrays of any namespace."""
    if isinstance(params, dict):
        return any(diverged(array) for array in params.values())
    # Two reductions, no temporary array; NaN compares False.
    if isinstance(params, np.ndarray):
        largest, smallest = params.max(), params.min()
    else:
        xp = namespace_of(params)
        largest, smallest = float(xp.max(params)), float(xp.min(params))
    return not (largest < DIVERGED_MAGNITUDE and smallest > -DIVERGED_MAGNITUDE)


def diverged_error(estimator, epoch, hint):
    """The error of a fit whose parameters diverged in ``epoch`` (``hint``: what to
    change)."""
    return TrainingDivergedError(
        f"{type(estimator).__name__} diverged in epoch {epoch}: the parameters became "
        f"non-finite or larger than {DIVERGED_MAGNITUDE:g}. {hint} The estimator was "
        "left as it was before this call."
    )


@dataclass(eq=False)
class IterateAverage:
    """Counters of the running average of the iterates that an estimator publishes.

    The average moves towards the iterate every ``AVERAGE_INTERVAL`` updates and at the
    end of each epoch; the ``n_pending`` updates since its last move give the iterate
    weight ``n_pending / n_averaged`` (the plain mean of the iterates) or, once that is
    below ``n_pending / window``, that exponential weight (Polyak & Juditsky,
    "Acceleration of stochastic approximation by averaging", with a window).
    """

    #: Updates the average stands for (the start counts as one).
    n_averaged: int = 1
    #: Updates since the average last moved.
    n_pending: int = 0

    def take_pending(self, window):
        """The weight of the iterate in the average's move for the pending updates
        (None when there are none), counting them as averaged."""
        n = self.n_pending
        if n <= 0:
            return None
        self.n_pending = 0
        self.n_averaged += n
        return min(1.0, n / min(self.n_averaged, window))

    def move(self, average, iterate, window, scratch):
        """Move ``average`` towards ``iterate`` in place for the pending updates."""
        weight = self.take_pending(window)
        if weight is None:
            return
        difference = np.subtract(iterate, average, out=scratch)
        difference *= np.asarray(weight, dtype=average.dtype)
        average += difference

    def restart(self):
        """Forget the past iterates (the parameters were edited by hand)."""
        self.n_averaged, self.n_pending = 1, 0

    def __copy__(self):  # every partial_fit call copies it: copy.copy's protocol is slow
        return IterateAverage(self.n_averaged, self.n_pending)


#: Updates between two moves of the published average (it also moves at each epoch's
#: end): a move costs two passes over the parameters, a tenth of a small update.
AVERAGE_INTERVAL = 16


# -- how a partial_fit treats each field of the training state -----------------------
#
# A policy is called as policy(value, state, learning) and returns the value the new
# state gets and an undo function (or None) that puts the kept state back if the call
# fails.

_POLICY = "on_update"


def _share(value, state, learning):
    return value, None


def _copy(value, state, learning):
    return (value.copy() if isinstance(value, np.ndarray) else copy.copy(value)), None


def _strategy_copy(value, state, learning):
    return learning.copy_state(value), None


_TRANSIENT = "transient"


def shared(*, transient=False, **kwargs):
    """A field a ``partial_fit`` shares with the kept state: training replaces it (or
    only reads it) and never changes it in place. A ``transient`` field (buffers made
    again when needed) is left out of pickles."""
    return field(metadata={_POLICY: _share, _TRANSIENT: transient}, **kwargs)


def copied(**kwargs):
    """A field training changes in place: a ``partial_fit`` works on a copy (arrays
    copied, other objects shallow-copied)."""
    return field(metadata={_POLICY: _copy}, **kwargs)


def copied_unless_alias(other, **kwargs):
    """Like :func:`copied`, but shared when it is the very object of field ``other``
    (which then decides)."""

    def policy(value, state, learning):
        if value is getattr(state, other):
            return value, None
        return _copy(value, state, learning)

    return field(metadata={_POLICY: policy}, **kwargs)


def checkpointed(save, restore, **kwargs):
    """A field shared with the kept state, whose ``save(value)`` is taken at the start
    of a ``partial_fit`` and restored with ``restore(value, saved)`` if it fails (a
    random generator's position, say: cheaper than a copy)."""

    def policy(value, state, learning):
        if value is None:
            return value, None
        saved = save(value)
        return value, lambda: restore(value, saved)

    return field(metadata={_POLICY: policy}, **kwargs)


def strategy_state(**kwargs):
    """The learning strategy's own state: copied by the strategy
    (``LearningStrategy.copy_state``), which alone knows what it holds."""
    return field(metadata={_POLICY: _strategy_copy}, **kwargs)


def _generator_position(rng):
    return rng.bit_generator.state


def _set_generator_position(rng, position):
    rng.bit_generator.state = position


#: ``history_`` holds the records of the latest HISTORY_EPOCHS epochs: a stream of
#: one-minibatch ``partial_fit`` calls (one epoch each) would otherwise keep a record of
#: every call, its memory and every read of ``history_`` growing without end. The
#: state keeps up to twice as many and cuts back to HISTORY_EPOCHS at the start of a
#: call that finds that many: a cut of the oldest half, rarely, instead of a shift of
#: every list on every call.
HISTORY_EPOCHS = 10_000


def latest_records(history):
    """The records of the latest HISTORY_EPOCHS epochs of a history, in new lists."""
    return {key: values[-HISTORY_EPOCHS:] for key, values in history.items()}


def _trim_history(history):
    """Cut a history that holds 2 * HISTORY_EPOCHS records or more back to the latest
    HISTORY_EPOCHS; returns what was cut (key -> records), or None."""
    if not any(len(values) >= 2 * HISTORY_EPOCHS for values in history.values()):
        return None
    cut = {}
    for key, values in history.items():
        cut[key] = values[:-HISTORY_EPOCHS]
        del values[:-HISTORY_EPOCHS]
    return cut


def _history_checkpoint(history):
    """A call's start: the history cut back (``_trim_history``) and its lengths."""
    cut = _trim_history(history)
    return {key: len(values) for key, values in history.items()}, cut


def _restore_history(history, checkpoint):
    """Undo a failed call's appends to a shared history, and its cut."""
    lengths, cut = checkpoint
    for key in list(history):
        if key in lengths:
            del history[key][lengths[key]:]
        else:
            del history[key]
    for key, values in (cut or {}).items():
        history[key][:0] = values


@dataclass(eq=False, kw_only=True)
class TrainingState:
    """The state every estimator's training carries.

    ``params`` are the parameters the fit publishes (the running average of the
    iterates when the estimator averages), ``velocity`` the momentum's moving average
    of the steps, ``sampler`` the learning strategy's own state. Subclasses add their
    fields, each declaring how a ``partial_fit`` treats it (see the module docstring).
    """

    #: Rebuilt from the public attributes at the start of each ``partial_fit``.
    params: np.ndarray = shared()
    velocity: np.ndarray = copied()
    rng: np.random.Generator = checkpointed(_generator_position, _set_generator_position)
    #: Mean rate of each unit a log Z estimator's sampler keeps (float64), the base
    #: model of AIS and its kin: the visible units' means over the first call's data
    #: for binary visible units; GaussianRBM, whose samplers keep the hidden units,
    #: stores their mean P(h = 1 | v) over the training rows, renewed every epoch.
    data_rates: np.ndarray = shared()
    #: What the learning strategy's ``init_state`` returned (opaque here).
    sampler: object = strategy_state(default=None)
    #: The buffered random streams of samplers that draw from them (RBMs), or None.
    noise: Noise | None = checkpointed(Noise.checkpoint, Noise.restore, default=None)
    #: Epochs trained so far, over all calls.
    n_iter: int = shared(default=0)
    #: Updates whose weight decay has not been applied yet (it is applied
    #: ``_update.DECAY_INTERVAL`` updates' worth at a time), over all calls.
    pending_decay: int = shared(default=0)
    #: Per-epoch records (``history_``); appended to, and cut back to the latest
    #: HISTORY_EPOCHS epochs now and then (at the start of a call).
    history: dict = checkpointed(_history_checkpoint, _restore_history,
                                 default_factory=dict)
    #: Seeds of the log Z estimates and of ``sample``, drawn once per fit so that
    #: scores and samples of a fitted model do not depend on the order of calls.
    log_z_seed: int = shared(default=0)
    sampling_seed: int = shared(default=0)
    #: The fixed map of the input rows learnt at the first call (GaussianRBM's
    #: whitening), or None: the model sees ``input_transform.transform(X)``.
    input_transform: object = shared(default=None)
    #: The named ``z_estimator`` setting the published ``z_estimator_`` was made from
    #: (None: an object), which a partial_fit with the same setting keeps.
    z_estimator_setting: str | None = shared(default=None)
    #: The structural parameters (``n_components``, ...) as the first call found them;
    #: a later ``partial_fit`` refuses to continue if they changed.
    structure: dict = shared(default_factory=dict)
    #: Rows and updates of the ``partial_fit`` calls since the likelihood check last
    #: ran, and the model those calls started from (a view of the public parameters),
    #: which the check judges them against (``_divergence.DivergenceCheck.when_due``).
    unchecked_rows: int = shared(default=0)
    #: Rows trained since the degeneracy check last ran
    #: (``_degeneracy.DegeneracyCheck.when_due``).
    unchecked_degeneracy_rows: int = shared(default=0)
    #: The shares of the first call's training rows (rounded) that are all zeros and
    #: all ones: how much probability the scores' degeneracy check allows those rows.
    extreme_row_shares: tuple = shared(default=(0.0, 0.0))
    #: Up to ``_degeneracy.SAMPLING_ROWS`` evenly spaced rows of the first call's
    #: training data in 256 levels (uint8; binary units only, else None), where
    #: ``sample``'s chains start (``_degeneracy.kept_rows`` reads them).
    sampling_rows: np.ndarray | None = shared(default=None)
    unchecked_updates: int = shared(default=0)
    check_reference: object = shared(default=None)
    #: The relative weights of the call's training rows (``_weights.training_weights``;
    #: None: unweighted), which the data's statistics read; set at the start of each
    #: call and dropped before the state is published.
    row_weights: np.ndarray | None = shared(default=None, transient=True)
    #: Set by :meth:`resume` in a call's first epoch: whether the parameters the call
    #: started from were edited by hand since the last call published them (None: the
    #: state cannot tell).
    hand_edited: bool | None = shared(default=None)
    #: The completions of the call's rows with missing entries (estimators that take
    #: NaN), which training keeps drawing with the observed entries clamped: set for
    #: one call (None otherwise), never pickled.
    imputation: object = shared(default=None, transient=True)

    def begin_update(self, learning):
        """A copy to update in place, and how to undo the update if it fails.

        Returns ``(new_state, undo)``. Each field is shared, copied or checkpointed as
        it declares; the strategy's state is copied by ``learning``. ``undo()`` puts
        back what the copy shares with this state (generator positions, the history's
        length), so a failed ``partial_fit`` leaves this state as it was.
        """
        new_state = object.__new__(type(self))  # a shallow copy, without copy's protocol
        fields = new_state.__dict__
        fields.update(self.__dict__)  # what is shared stays shared
        undos = []
        for name, policy in _policies(type(self)):
            fields[name], undo = policy(fields[name], self, learning)
            if undo is not None:
                undos.append(undo)

        def undo():
            for restore in undos:
                restore()

        return new_state, undo

    def resume(self, averaging):
        """The parameters this epoch's updates move (``params``; see
        :class:`AveragedTrainingState` for averaging)."""
        self.hand_edited = None  # nothing published to compare with
        return self.params

    def count_update(self, window):
        """After each update (a no-op without iterate averaging)."""

    def end_epoch(self, window):
        """At the end of each epoch (a no-op without iterate averaging)."""

    def __getstate__(self):
        # Pickles leave the transient fields (buffers) out.
        state = self.__dict__.copy()
        for name in _transient_fields(type(self)):
            state[name] = None
        return state


_POLICIES = {}
_TRANSIENT_FIELDS = {}


def _transient_fields(state_class):
    """Names of the fields of a state class left out of pickles (computed once)."""
    names = _TRANSIENT_FIELDS.get(state_class)
    if names is None:
        names = _TRANSIENT_FIELDS[state_class] = tuple(
            item.name for item in dataclasses.fields(state_class)
            if item.metadata.get(_TRANSIENT)
        )
    return names


def _policies(state_class):
    """(field name, policy) of the fields of a state class that are not simply shared
    (computed once per class)."""
    policies = _POLICIES.get(state_class)
    if policies is None:
        policies = _POLICIES[state_class] = []
        for state_field in dataclasses.fields(state_class):
            if _POLICY not in state_field.metadata:
                raise TypeError(
                    f"{state_class.__name__}.{state_field.name} declares no policy for "
                    "partial_fit: define it with shared(), copied(), checkpointed() or "
                    "strategy_state() from skboltz.core._training."
                )
            policy = state_field.metadata[_POLICY]
            if policy is not _share:
                policies.append((state_field.name, policy))
    return policies


@dataclass(eq=False, kw_only=True)
class AveragedTrainingState(TrainingState):
    """Training state of an estimator that publishes a running average of its iterates.

    With averaging, ``iterate`` holds the parameters the updates move and ``params``
    their published running average (:class:`IterateAverage`); without, both are the
    same array and ``average`` is None. The estimator calls :meth:`resume` at the start
    of an epoch, :meth:`count_update` after each update and :meth:`end_epoch` at its
    end.
    """

    iterate: np.ndarray = copied_unless_alias("params")
    average: IterateAverage | None = copied(default=None)
    #: Scratch space of the averaging: made on first use, never pickled.
    scratch: np.ndarray | None = shared(default=None)
    #: The window ``average_window="auto"`` means, found from the first call's rows
    #: (None: the estimator has no such setting).
    auto_average_window: int | None = shared(default=None)
    #: The parameters a ``partial_fit`` call started from, to tell a hand edit of the
    #: public attributes from the published average.
    published: np.ndarray | None = shared(default=None)

    def resume(self, averaging):
        """Point ``iterate`` at the parameters the updates continue from; return it.

        ``averaging`` says whether the estimator averages now. The first epoch of a
        ``partial_fit`` finds ``params`` rebuilt from the public attributes: unchanged,
        they are the average and training continues from the saved iterate; edited by
        hand, training restarts from the edit. ``average_window`` set between calls
        starts averaging from the published parameters (None: stops it, and training
        continues from them).
        """
        params = self.params
        published, self.published = self.published, None
        self.hand_edited = None
        if not averaging:
            self.iterate, self.average = params, None
        elif self.average is None:  # averaging starts now
            self.iterate, self.average = params.copy(), IterateAverage()
        elif published is not None:
            self.hand_edited = not (params == published.astype(params.dtype, copy=False)).all()
            if not self.hand_edited:
                self.iterate = self.iterate.astype(params.dtype, copy=False)
            else:
                self.iterate = params.copy()
                self.average.restart()
        if self.iterate is not params and self.scratch is None:
            self.scratch = np.empty_like(self.iterate)
        return self.iterate

    def move_average(self, window):
        """Move the published average ``params`` towards the iterate."""
        self.average.move(self.params, self.iterate, window, self.scratch)

    def count_update(self, window):
        """After an update: the average moves every AVERAGE_INTERVAL updates."""
        average = self.average
        if average is not None:
            average.n_pending += 1
            if average.n_pending == AVERAGE_INTERVAL:
                self.move_average(window)

    def end_epoch(self, window):
        """Absorb the updates since the average last moved, so that an epoch shorter
        than AVERAGE_INTERVAL updates still shows in the published parameters; a
        diverged iterate is published as it is, for the divergence check to see."""
        if self.iterate is not self.params:
            self.move_average(window)
            if diverged(self.iterate):
                self.params[...] = self.iterate

    def prepare_publication(self):
        """Before the fit publishes: remember what it publishes (to detect hand edits
        at the next call) and drop the scratch space."""
        if self.iterate is not self.params:
            # No copy: training never changes a published state's "params" (a
            # partial_fit rebuilds them), and a pickle then holds them once.
            self.published = self.params
        self.scratch = None
