"""What a fit carries from one minibatch, epoch and ``partial_fit`` call to the next.

A fitted estimator keeps its training state in ``_training_state`` so that
``partial_fit`` continues exactly where the last call stopped (and a pickle does too).
The state is one of the dataclasses below; the strategies' own state (persistent chains,
magnetisations) is the ``sampler`` dict their ``init_state`` returns.

The update rule shared by every estimator lives here too: :func:`momentum_and_step`
(moving-average momentum) and :class:`IterateAverage` (the published running average
of the iterates).
"""

import copy
import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ._noise import Noise


def momentum_and_step(momentum, learning_rate):
    """The velocity update's two weights: velocity <- momentum * velocity + step * gradient.

    ``step = (1 - momentum) * learning_rate``: the velocity is a moving average of the
    gradient steps, so a steady gradient moves the parameters by ``learning_rate *
    gradient`` per update at any momentum (as an optimiser without momentum does at the
    same learning rate), and momentum only smooths the updates, over about ``1 / (1 -
    momentum)`` of them. (Classic momentum, velocity <- momentum * velocity +
    learning_rate * gradient, multiplies the step by 1 / (1 - momentum).)
    """
    return momentum, learning_rate * (1.0 - momentum)


def momentum_step(velocity, scaled_gradient, momentum, weight_velocity=None, weights=None,
                  decay_step=0.0):
    """One velocity update, in place: velocity <- momentum * velocity + scaled_gradient,
    then the weight decay's step on the weights' block of the velocity.

    ``scaled_gradient`` is the ascent direction times ``step`` of
    :func:`momentum_and_step`, ``decay_step`` the weight decay times that step;
    ``weight_velocity`` and ``weights`` are the matching blocks of the velocity and the
    parameters. The caller then adds the velocity to the parameters. (The RBM's fused
    sampling loop computes the same update with the step folded into its products.)
    """
    velocity *= momentum
    velocity += scaled_gradient
    if decay_step:
        weight_velocity -= decay_step * weights
    return velocity


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

    def move(self, average, iterate, window, scratch):
        """Move ``average`` towards ``iterate`` in place for the pending updates."""
        n = self.n_pending
        if n <= 0:
            return
        self.n_pending = 0
        self.n_averaged += n
        weight = min(1.0, n / min(self.n_averaged, window))
        difference = np.subtract(iterate, average, out=scratch)
        difference *= np.asarray(weight, dtype=average.dtype)
        average += difference

    def restart(self):
        """Forget the past iterates (the parameters were edited by hand)."""
        self.n_averaged, self.n_pending = 1, 0


#: Updates between two moves of the published average (it also moves at each epoch's
#: end): a move costs two passes over the parameters, a tenth of a small update.
AVERAGE_INTERVAL = 16


@dataclass(eq=False, kw_only=True)
class TrainingState:
    """The state every estimator's training carries.

    ``params`` are the parameters the fit publishes (the running average of the
    iterates when the estimator averages), ``velocity`` the momentum's moving average
    of the steps, ``sampler`` the learning strategy's own state.
    """

    params: np.ndarray
    velocity: np.ndarray
    rng: np.random.Generator
    #: Mean of each visible unit over the first call's data (float64): base models of
    #: the log Z estimators and the visible-bias start.
    data_rates: np.ndarray
    sampler: dict | None = None
    #: Epochs trained so far, over all calls.
    n_iter: int = 0
    #: Per-epoch records (``history_``); appended to, never rewritten.
    history: dict = field(default_factory=dict)
    #: Seeds of the log Z estimates and of ``sample``, drawn once per fit so that
    #: scores and samples of a fitted model do not depend on the order of calls.
    log_z_seed: int = 0
    sampling_seed: int = 0

    #: Fields a ``partial_fit`` may share with the kept state instead of copying them:
    #: training replaces them rather than changing them in place, or only reads them.
    shared_fields = ("history", "data_rates")

    def begin_update(self, shared=()):
        """A copy to update in place, and how to undo the update if it fails.

        Returns ``(new_state, undo)``. Arrays (also inside the sampler's dict) are
        copied, unless their field is in ``shared_fields`` or ``shared``. Random
        generators, noise streams and the history are shared, with a checkpoint
        instead of a copy: ``undo()`` sets the generators and streams back and removes
        what was appended to the history, so a failed ``partial_fit`` leaves this state
        as it was. (Copying a Generator costs a reseeding, ~10 us; its checkpoint
        ~2 us.) Other objects are deep-copied.
        """
        shared = {*self.shared_fields, *shared}
        new_state = copy.copy(self)
        checkpoints = []
        for name, value in vars(self).items():
            if isinstance(value, np.random.Generator):
                checkpoints.append((_set_generator_state, value, value.bit_generator.state))
            elif isinstance(value, Noise):
                checkpoints.append((Noise.restore, value, value.checkpoint()))
            elif name == "history":
                lengths = {k: len(values) for k, values in value.items()}
                checkpoints.append((_truncate_history, value, lengths))
            elif name in shared or isinstance(value, _IMMUTABLE):
                pass
            elif isinstance(value, IterateAverage):  # two counters
                setattr(new_state, name, copy.copy(value))
            elif isinstance(value, np.ndarray):
                setattr(new_state, name, value.copy())
            elif type(value) is dict and all(
                isinstance(v, (np.ndarray, *_IMMUTABLE)) for v in value.values()
            ):
                setattr(new_state, name, {
                    k: v.copy() if isinstance(v, np.ndarray) else v for k, v in value.items()
                })
            else:
                setattr(new_state, name, copy.deepcopy(value))

        def undo():
            for restore, target, checkpoint in checkpoints:
                restore(target, checkpoint)

        return new_state, undo

    def without(self, *names):
        """A shallow copy with the given fields set to None (for pickling)."""
        return dataclasses.replace(self, **dict.fromkeys(names))


_IMMUTABLE = (int, float, str, bytes, type(None))


def _set_generator_state(rng, state):
    rng.bit_generator.state = state


def _truncate_history(history, lengths):
    """Undo a failed call's appends to a shared history."""
    for key in list(history):
        if key in lengths:
            del history[key][lengths[key]:]
        else:
            del history[key]


@dataclass(eq=False, kw_only=True)
class RBMTrainingState(TrainingState):
    """Training state of the RBMs (binary and Gaussian visible units).

    With averaging, ``iterate`` holds the parameters the updates move and ``params``
    their published running average; without, both are the same array.
    """

    iterate: np.ndarray
    average: IterateAverage | None = None
    noise: Noise | None = None
    #: Updates whose weight decay has not been added to the velocity yet (it is added
    #: DECAY_INTERVAL updates' worth at a time).
    pending_decay: int = 0
    #: Scratch space of the averaging and the minibatch buffers: made on first use,
    #: never pickled.
    scratch: np.ndarray | None = None
    minibatches: object = None
    #: The parameters a ``partial_fit`` call started from, to tell a hand edit of the
    #: public attributes from the published average.
    published: np.ndarray | None = None

    shared_fields = (*TrainingState.shared_fields, "params", "published", "scratch",
                     "minibatches")


@dataclass(eq=False, kw_only=True)
class GaussianRBMTrainingState(RBMTrainingState):
    """Training state of :class:`~skboltz.GaussianRBM`: the data's location and scale
    (the run-away check) and the log variances last published."""

    data_mean: np.ndarray
    data_scale: float
    published_log_variance: np.ndarray | None = None

    shared_fields = (*RBMTrainingState.shared_fields, "data_mean", "published_log_variance")


@dataclass(eq=False, kw_only=True)
class BMTrainingState(TrainingState):
    """Training state of :class:`~skboltz.BoltzmannMachine`."""

    #: Which couplings exist (the ``connectivity``), as a 0/1 matrix.
    mask: np.ndarray
    #: Centring offsets: visible = clipped data rates, hidden = a sliding mean of the
    #: clamped means.
    offset: np.ndarray
    #: Weight of the code-entropy bonus at the start, and the data's mean P(h | v) it
    #: tracks (None until the bonus first runs).
    code_entropy: float = 0.0
    code_usage: np.ndarray | None = None

    shared_fields = (*TrainingState.shared_fields, "mask")
