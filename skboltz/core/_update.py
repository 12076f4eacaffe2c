"""The update rule of every training loop: momentum, weight decay, per-block steps.

Every estimator's loop (the base's plain loop, the RBM's and the classification RBM's
fused loops, the DBM's greedy pretraining) computes a minibatch's gradient step, the
ascent direction times :attr:`UpdateRule.step`, in its packed parameter layout, and
hands it to one :class:`ParameterUpdate` per epoch, which applies:

1. moving-average momentum: velocity <- momentum * velocity + gradient step, and the
   update is the velocity (without momentum the update is the step itself);
2. weight decay on the weights' block, through the update: every DECAY_INTERVAL-th
   update subtracts DECAY_INTERVAL updates' worth, ``DECAY_INTERVAL * decay *
   weights`` (so with momentum it enters the velocity and decays with it);
3. the move of the parameters: ``params += update``, or per block, with a log-scale
   block stepped as a ratio (a Gaussian RBM's log variances), then an estimator's
   correction after the step (a centred machine's biases, derived arrays).
"""

from typing import NamedTuple

import numpy as np

#: Updates whose weight decay is applied together: every DECAY_INTERVAL-th update
#: takes DECAY_INTERVAL updates' worth. The decay's gradient changes slowly, and its
#: two strided calls on every update would cost a tenth of a small RBM's update.
DECAY_INTERVAL = 16


class UpdateRule(NamedTuple):
    """One epoch's settings of the update: ``velocity <- momentum * velocity + step *
    gradient``, the weight decay's step ``decay`` (weight decay times ``step``), and
    ``progress``, the fraction of the requested training done (for schedules).

    Momentum is a moving average (:meth:`of`): ``step = (1 - momentum) *
    learning_rate``, so a steady gradient moves the parameters by ``learning_rate *
    gradient`` per update at any momentum (as an optimiser without momentum does at
    the same learning rate), and momentum only smooths the updates, over about ``1 /
    (1 - momentum)`` of them. (Classic momentum, velocity <- momentum * velocity +
    learning_rate * gradient, multiplies the step by 1 / (1 - momentum).) A named
    tuple, cheap to make: one is made every epoch, and a ``partial_fit`` call is an
    epoch.
    """

    momentum: float
    step: float
    decay: float
    progress: float

    @classmethod
    def of(cls, momentum, learning_rate, weight_decay, progress=0.0):
        """The rule of an epoch with these settings (moving-average momentum)."""
        step = learning_rate * (1.0 - momentum)
        # (tuple.__new__ skips the named tuple's own __new__, a Python call per epoch)
        return tuple.__new__(cls, (momentum, step, step * weight_decay, progress))


class ParameterUpdate:
    """The update rule (see the module docstring) bound to the parameters one epoch's
    updates move.

    Parameters
    ----------
    rule : UpdateRule
        The epoch's momentum and weight decay.
    params, velocity : ndarray
        The packed parameters the updates move and their velocity (the same shape),
        changed in place.
    weights : index
        The block of the packed arrays that weight decay acts on.
    pending_decay : int, default=0
        Updates since the weight decay was last applied (:meth:`finish` returns the
        count to carry into the next epoch).
    additive : index or None, default=None
        With ``log_scale``: the block moved by the update itself (the rest is not
        learnt). None moves every parameter by the update.
    log_scale : (index, float) or None, default=None
        A block of logarithms z of positive parameters s = exp(z), stepped as a
        ratio, s <- s (1 + update), i.e. z += log1p(max(update, -largest_decrease)):
        the same as z += update to first order, but a large step (an outlying row's)
        adds to s instead of multiplying it by exp(update).
    after_step : callable or None, default=None
        ``after_step(update)``, called after each move (a correction of other
        parameters, or arrays derived from them).
    """

    __slots__ = ("has_momentum", "momentum", "params", "velocity", "weights",
                 "decay_step", "pending_decay", "last_step", "plain_move", "additive",
                 "log_scale", "after_step")

    def __init__(self, rule, params, velocity, weights, *, pending_decay=0,
                 additive=None, log_scale=None, after_step=None):
        self.has_momentum = bool(rule.momentum)
        # A 0-d array of the parameters' dtype: numpy's cheapest operand.
        self.momentum = (np.asarray(rule.momentum, dtype=velocity.dtype)
                         if self.has_momentum else None)
        self.params, self.velocity, self.weights = params, velocity, weights
        self.decay_step = DECAY_INTERVAL * rule.decay
        self.pending_decay = pending_decay
        self.last_step = None
        self.plain_move = additive is None and log_scale is None and after_step is None
        self.additive, self.log_scale, self.after_step = additive, log_scale, after_step

    def apply(self, gradient):
        """One update from a minibatch's gradient step (which it may change)."""
        if self.has_momentum:
            update = self.velocity
            update *= self.momentum
            update += gradient
        else:  # the velocity is the step itself, copied at the end of the epoch
            update = self.last_step = gradient
        self.pending_decay += 1
        if self.pending_decay == DECAY_INTERVAL:
            self.pending_decay = 0
            if self.decay_step:
                weights = self.weights
                update[weights] -= self.decay_step * self.params[weights]
        if self.plain_move:
            self.params += update
        else:
            self._move_by_block(update)

    def _move_by_block(self, update):
        params, additive = self.params, self.additive
        if additive is None:
            params += update
        else:
            params[additive] += update[additive]
        if self.log_scale is not None:
            block, largest_decrease = self.log_scale
            params[block] += np.log1p(np.maximum(update[block], -largest_decrease))
        if self.after_step is not None:
            self.after_step(update)

    def finish(self):
        """End the epoch: without momentum the velocity becomes the last step (what
        momentum continues from if a schedule turns it on). Returns the updates since
        the weight decay was last applied."""
        if self.last_step is not None:
            self.velocity[...] = self.last_step
        return self.pending_decay


__all__ = ["DECAY_INTERVAL", "ParameterUpdate", "UpdateRule"]
