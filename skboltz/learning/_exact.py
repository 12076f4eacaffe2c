"""Exact learning for small models: the model's expectations by enumeration."""

import time
from numbers import Integral

import numpy as np
from scipy.special import logsumexp

from ..models._boltzmann_energy import BMView, bm_enumeration_plan, bm_enumeration_size
from ..utils._capabilities import (
    BINARY,
    ENUMERATION,
    PAIRWISE,
    RESTRICTED,
    Requires,
    capabilities_of,
)
from ..utils._energy import binary_states
from ..models._rbm_energy import AugmentedRBM, RBMLayout, RBMView, rbm_hidden_free_energy
from ..utils._sklearn import Interval
from ..exceptions import TooManyStatesError
from ._base import BMLearningStrategy, RBMLearningStrategy, register
from ._boltzmann import exact_clamped_moments, exact_free_moments


def exact_statistics(model, chunk_size=4096):
    """The model's mean sufficient statistics, exactly, in the augmented layout.

    Enumerates the smaller layer of the RBM in chunks and sums the other in closed
    form: with the visible layer enumerated, ``E[h v^T] = sum_v p(v) P(h=1|v) v^T``;
    with the hidden one, ``E[h v^T] = sum_h p(h) h P(v=1|h)^T``. Accumulated in float64.

    Parameters
    ----------
    model : AugmentedRBM
    chunk_size : int, default=4096
        States per chunk.

    Returns
    -------
    statistics : ndarray of shape (n_hidden + 1, n_visible + 1), float64
        In :class:`~skboltz.models._rbm_energy.RBMLayout`'s blocks: E[h v^T] in ``weights``,
        E[h] in ``hidden_bias``, E[v] in ``visible_bias``, 1 in ``constant``.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.models._rbm_energy import AugmentedRBM, RBMLayout
    >>> from skboltz.learning._exact import exact_statistics
    >>> stats = exact_statistics(AugmentedRBM(np.zeros((3, 4))))
    >>> bool(np.allclose(stats[RBMLayout.weights], 0.25)
    ...      and np.allclose(stats[RBMLayout.visible_bias], 0.5))
    True
    """
    model = AugmentedRBM(np.asarray(model.params, dtype=np.float64))
    view = model.view()
    enumerate_visible = model.n_visible <= model.n_hidden
    n_units = view.n_enumerated_units

    def chunks():
        for start in range(0, 2**n_units, chunk_size):
            states = model.augment(
                binary_states(n_units, start, min(start + chunk_size, 2**n_units))
            )
            if enumerate_visible:
                yield states, view.log_unnormalized(states[RBMLayout.units])
            else:
                yield states, -rbm_hidden_free_energy(
                    states[RBMLayout.units], view.weights, view.visible_bias, view.hidden_bias
                )

    log_z = logsumexp([logsumexp(log_w) for _, log_w in chunks()])
    statistics = np.zeros_like(model.params)
    for states, log_w in chunks():
        weights = np.exp(log_w - log_z)[:, None]
        if enumerate_visible:
            statistics += model.hidden_probability(states).T @ (weights * states)
        else:
            statistics += (weights * states).T @ model.visible_probability(states)
    return statistics


#: The forecast of an enumeration's time runs a smaller one of at most this many states.
PROBE_STATES = 2**15


def _forecast_seconds_per_update(model, n_states):
    """Seconds of one exact update of ``model`` (``n_states`` states), from a probe.

    Times the exact statistics of the same model with fewer units (the first ones,
    enough that the probe visits at most PROBE_STATES states) and scales by the
    number of states. Machine-dependent; for messages, not decisions.
    """
    view = model.astype(np.float64)
    if not _pairwise(model):
        n_probe = min(model.n_visible, model.n_hidden, int(np.log2(PROBE_STATES)))
        if model.n_visible <= model.n_hidden:
            probe = AugmentedRBM.from_view(RBMView(
                view.weights[:, :n_probe], view.visible_bias[:n_probe], view.hidden_bias))
        else:
            probe = AugmentedRBM.from_view(RBMView(
                view.weights[:n_probe], view.visible_bias, view.hidden_bias[:n_probe]))
        return _best_time(lambda: exact_statistics(probe)) * n_states / 2**n_probe
    for n_units in range(model.n_units - 1, 0, -1):
        probe = BMView(view.coupling[:n_units, :n_units], view.bias[:n_units],
                       min(model.n_visible, n_units), view.temperature)
        plan = bm_enumeration_plan(probe.coupling != 0, probe.n_visible)
        size = bm_enumeration_size(plan)
        if size <= PROBE_STATES:
            break
    return _best_time(lambda: exact_free_moments(probe, plan)) * n_states / size


def _best_time(run, repeats=2):
    """The shortest of a few timings of ``run()`` (the first pays for warming up)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def _duration(seconds):
    """A duration for a message: 0.12 s, 45 s, 12 min, 3.5 h, 2.1 days."""
    if seconds < 100:
        return f"{seconds:.2g} s"
    if seconds < 6000:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.2g} h"
    return f"{seconds / 86400:.2g} days"


@register("exact")
class ExactGradient(RBMLearningStrategy, BMLearningStrategy):
    """The exact likelihood gradient, by enumeration: for small models and as a reference.

    For an RBM the negative phase enumerates the smaller layer
    (``2 ** min(n_visible, n_components)`` states) and sums the other in closed form.
    For a general Boltzmann machine the free phase sums over the states of the
    hidden (or the visible) units and, given those, over the states of each group of
    the other units that are coupled among themselves (independent given the first;
    without such structure, all ``2 ** n_units`` states); the clamped phase sums over
    each row's ``2 ** n_hidden`` hidden states (or uses the factorised P(h | v) when
    hidden units are not coupled to each other).
    Either way the gradient is the true maximum-likelihood gradient, free of sampling
    noise and bias; each update costs one pass over the states.

    Parameters
    ----------
    max_states : int, default=2**16
        Refuse (with :class:`~skboltz.exceptions.TooManyStatesError`) models that need
        more states than this per update.
    chunk_size : int, default=4096
        States evaluated per matrix product (RBM).

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz import RBM
    >>> X = (np.random.default_rng(0).random((40, 6)) < 0.3).astype(float)
    >>> rbm = RBM(n_components=4, learning="exact", n_iter=3, random_state=0).fit(X)
    >>> rbm.learning_
    ExactGradient()
    """

    #: Either learning rule, on binary units whose states it can enumerate.
    requires = Requires(units={BINARY}, operations={ENUMERATION},
                        any_of={RESTRICTED, PAIRWISE})

    _parameter_constraints = {
        "max_states": [Interval(Integral, 1, None, closed="left")],
        "chunk_size": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, max_states=2**16, chunk_size=4096):
        self.max_states = max_states
        self.chunk_size = chunk_size

    def init_state(self, model, X, batch_size, rng):
        is_rbm = not _pairwise(model)
        if is_rbm:
            n_states = 2 ** min(model.n_visible, model.n_hidden)
        else:
            # Couplings outside the connectivity mask stay zero, so the plan made from
            # the starting couplings holds for the whole fit.
            plan = bm_enumeration_plan(model.coupling != 0, model.n_visible)
            n_states = bm_enumeration_size(plan)
        if n_states > self.max_states:
            alternatives = (
                "learning='pcd' (persistent contrastive divergence) or 'pt' (parallel "
                "tempering)"
                if is_rbm
                else "learning='gibbs' (Gibbs sampling) or 'mean_field' "
                "(deterministic Boltzmann machine)"
            )
            n_batches = -(-X.shape[0] // max(1, batch_size))
            per_update = _forecast_seconds_per_update(model, n_states)
            raise TooManyStatesError(
                f"learning='exact' enumerates {n_states:,} states per update, more than "
                f"max_states={self.max_states:,}: about {_duration(per_update)} per "
                f"update here (timed on a smaller enumeration), "
                f"{_duration(per_update * n_batches)} per epoch of {n_batches:,} "
                f"minibatches. Use {alternatives} for this model, or raise "
                "ExactGradient(max_states=...) if you can wait (verbose=1 reports the "
                "progress of each epoch)."
            )
        return None if is_rbm else {"plan": plan}

    def positive_phase(self, model, batch, state, rng, weights=None):
        return exact_clamped_moments(model, batch, weights)

    def negative_phase(self, model, batch, state, rng, progress):
        if _pairwise(model):
            return exact_free_moments(model, state["plan"])
        return super().negative_phase(model, batch, state, rng, progress)

    def _negative_statistics(self, model, positive, state, rng, progress):
        statistics = exact_statistics(model, self.chunk_size)
        return statistics.astype(model.params.dtype, copy=False)


def _pairwise(model):
    """Whether ``model`` is trained by the general learning rule (its clamped and free
    moments) rather than the restricted one (the negative statistics of visible rows)."""
    return PAIRWISE in capabilities_of(model).operations


__all__ = ["ExactGradient", "exact_statistics"]
