"""Learning strategies of the general Boltzmann machine.

The Boltzmann learning rule (Ackley, Hinton & Sejnowski 1985) moves each coupling by
<s_i s_j>_clamped - <s_i s_j>_free and each bias by <s_i>_clamped - <s_i>_free (times
1/T). A BM strategy supplies both phases as one symmetric matrix of second moments
whose diagonal holds the means (see ``skboltz._energy.bm_second_moments``):

- ``positive_phase(model, batch, state, rng)``: the clamped statistics, visible units
  fixed to the minibatch rows and the hidden units inferred;
- ``negative_phase(model, batch, state, rng, progress)``: the free statistics.

``model`` is a :class:`skboltz._energy.BMView` on the current parameters. When the
hidden units are not coupled to each other, every strategy uses the exact conditional
P(h | v) in the clamped phase (it factorises).
"""

from numbers import Integral, Real

import numpy as np

from .._energy import (
    bm_code_moments,
    bm_hidden_code_posteriors,
    bm_enumeration_plan,
    bm_exact_moments,
    bm_gibbs_sweep,
    bm_linear_response,
    bm_mean_field,
    bm_second_moments,
    sigmoid,
)
from .._sklearn import Interval
from ._base import LearningStrategy, register


class BMLearningStrategy(LearningStrategy):
    """Base class of Boltzmann-machine strategies: a clamped and a free phase.

    Subclasses implement :meth:`positive_phase` (visible units clamped to the data,
    hidden units inferred) and :meth:`negative_phase` (the free-running model). Both
    return second moments in one symmetric matrix whose diagonal holds the means.

    Examples
    --------
    >>> from skboltz.learning import BMLearningStrategy, Gibbs, MeanFieldGradient
    >>> issubclass(Gibbs, BMLearningStrategy) and issubclass(MeanFieldGradient, BMLearningStrategy)
    True
    """

    def positive_phase(self, model, batch, state, rng):
        """Clamped second moments (mean s s^T, diagonal = mean s) for ``batch``.

        Parameters
        ----------
        model : BMView
            Read-only view of the machine's current parameters.
        batch : ndarray of shape (n_rows, n_visible)
            Visible rows (values in [0, 1]).
        state : object
            What :meth:`init_state` returned.
        rng : numpy.random.Generator
            Source of randomness for sampling strategies.

        Returns
        -------
        moments : ndarray of shape (n_units, n_units)
            Mean of s s^T with the visible units clamped to the rows.
        """
        raise NotImplementedError

    def negative_phase(self, model, batch, state, rng, progress):
        """Free second moments (mean s s^T, diagonal = mean s) under the model.

        Parameters
        ----------
        model : BMView
            Read-only view of the machine's current parameters.
        batch : ndarray of shape (n_rows, n_visible)
            The minibatch (used by strategies that start chains at the data).
        state : object
            What :meth:`init_state` returned, updated in place.
        rng : numpy.random.Generator
            Source of randomness for sampling strategies.
        progress : float
            Fraction of the requested training done, in [0, 1].

        Returns
        -------
        moments : ndarray of shape (n_units, n_units)
            Mean of s s^T under the model's free-running distribution.
        """
        raise NotImplementedError


def _hidden_uncoupled(model):
    """True when no two hidden units are coupled, so P(h | v) factorises."""
    n_visible = model.n_visible
    return not np.any(model.coupling[n_visible:, n_visible:])


def _factorised_clamped_moments(model, batch):
    """Exact clamped moments when P(h | v) factorises (or there are no hidden units)."""
    if model.n_hidden == 0:
        return bm_second_moments(batch)
    n_visible = model.n_visible
    fields = batch @ model.coupling[:n_visible, n_visible:] + model.bias[n_visible:]
    hidden = sigmoid(fields / model.temperature)
    return bm_second_moments(np.hstack([batch, hidden]))


def _initial_chains(model, data, n_chains, rng):
    """F-ordered binary chains: visible units from random data rows, hidden coin flips."""
    rows = data[rng.integers(0, data.shape[0], size=n_chains)]
    rows = rows.toarray() if hasattr(rows, "toarray") else np.asarray(rows)
    probability = np.full((n_chains, model.n_units), 0.5)
    probability[:, : model.n_visible] = np.clip(rows, 0, 1)
    chains = rng.random(probability.shape) < probability
    return np.asfortranarray(chains, dtype=model.dtype)


def _validate_annealing(annealing):
    """Check a simulated-annealing schedule: a list of (temperature > 0, sweeps >= 0)."""
    if annealing is None:
        return []
    schedule = []
    for pair in annealing:
        if (
            not isinstance(pair, tuple | list)
            or len(pair) != 2
            or not isinstance(pair[0], Real)
            or not pair[0] > 0
            or not isinstance(pair[1], Integral)
            or pair[1] < 0
        ):
            raise ValueError(
                "annealing must be a list of (temperature, n_steps) pairs with "
                f"temperature > 0 and integer n_steps >= 0, got {annealing!r}."
            )
        schedule.append((float(pair[0]), int(pair[1])))
    return schedule


def exact_clamped_moments(model, batch):
    """Exact clamped second moments: each row's 2**n_hidden hidden states enumerated.

    Uses the factorised P(h | v) when the hidden units are not coupled to each other.
    """
    if _hidden_uncoupled(model):
        return _factorised_clamped_moments(model, batch)
    H, Q = bm_hidden_code_posteriors(
        batch, model.coupling, model.bias, model.n_visible, model.temperature
    )
    return bm_code_moments(batch, H, Q / batch.shape[0])


def exact_free_moments(model, plan=None):
    """Exact free second moments, by enumeration following ``plan`` (see
    :func:`skboltz._energy.bm_enumeration_plan`; None makes one from the couplings)."""
    if plan is None:
        plan = bm_enumeration_plan(model.coupling != 0, model.n_visible)
    return bm_exact_moments(model.coupling, model.bias, plan, model.temperature)


@register("gibbs", "bm")
class Gibbs(BMLearningStrategy):
    """Boltzmann learning with sequential Gibbs sampling (Ackley, Hinton & Sejnowski 1985).

    The free phase runs ``n_chains`` persistent chains, all updated together by
    sequential single-unit Gibbs sweeps at the model's temperature. The clamped phase
    is exact when that is cheap: the factorised P(h | v) when the hidden units are not
    coupled to each other, or a sum over the 2**n_hidden hidden states of each row when
    there are at most ``enumerate_hidden`` hidden units (no sampling noise; for a few
    hidden units cheaper than sampling). Otherwise it runs one chain per minibatch row
    over the hidden units with the visible units fixed. Before the ``n_steps``
    measured sweeps, each sampled phase can follow a simulated-annealing schedule to
    approach equilibrium.

    Parameters
    ----------
    n_steps : int, default=1
        Gibbs steps at the model's temperature per update, each a sequential sweep
        over the units; the statistics are averaged over them.
    n_chains : int or None, default=None
        Persistent free-phase chains; None uses ``max(100, batch_size)``.
    annealing : list of (float, int) or None, default=None
        Simulated-annealing schedule run before the measured sweeps in both phases:
        ``[(temperature, n_steps), ...]`` (steps = sweeps), e.g. ``[(20, 2), (15, 2), (12, 2), (10, 4)]``
        from hot to the model's temperature.
    enumerate_hidden : int, default=8
        Up to this many coupled hidden units, the clamped phase sums P(h | v) exactly
        instead of sampling it; 0 always samples. On the 4-2-4 encoder, sampling the
        clamped phase from the 4 rows of each update reached the optimum for 1 of 10
        seeds, enumerating it for 9 of 20.

    Examples
    --------
    >>> from skboltz import BoltzmannMachine
    >>> from skboltz.learning import Gibbs
    >>> schedule = [(4.0, 2), (2.0, 2)]
    >>> bm = BoltzmannMachine(n_hidden=2, learning=Gibbs(n_steps=2, annealing=schedule))
    >>> bm.learning.annealing
    [(4.0, 2), (2.0, 2)]
    """

    _parameter_constraints = {
        "n_steps": [Interval(Integral, 1, None, closed="left")],
        "n_chains": [Interval(Integral, 1, None, closed="left"), None],
        "annealing": [list, tuple, None],
        "enumerate_hidden": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(self, n_steps=1, n_chains=None, annealing=None, enumerate_hidden=8):
        self.n_steps = n_steps
        self.n_chains = n_chains
        self.annealing = annealing
        self.enumerate_hidden = enumerate_hidden

    def init_state(self, model, data, batch_size, rng):
        schedule = _validate_annealing(self.annealing)
        n_chains = self.n_chains or max(100, batch_size)
        return {"chains": _initial_chains(model, data, n_chains, rng), "schedule": schedule}

    def _run(self, model, S, state, rng, units):
        """Anneal, then average the moments over ``n_steps`` sweeps at T."""
        coupling, bias = model.coupling, model.bias
        for temperature, n_steps in state["schedule"]:
            for _ in range(n_steps):
                bm_gibbs_sweep(S, coupling, bias, rng, temperature, units)
        moments = 0.0
        for _ in range(self.n_steps):
            bm_gibbs_sweep(S, coupling, bias, rng, model.temperature, units)
            moments = moments + bm_second_moments(S)
        return moments / self.n_steps

    def positive_phase(self, model, batch, state, rng):
        if _hidden_uncoupled(model) or model.n_hidden <= self.enumerate_hidden:
            return exact_clamped_moments(model, batch)
        n_visible = model.n_visible
        S = np.empty((batch.shape[0], model.n_units), dtype=model.dtype, order="F")
        S[:, :n_visible] = batch
        S[:, n_visible:] = 0
        return self._run(model, S, state, rng, np.arange(n_visible, model.n_units))

    def negative_phase(self, model, batch, state, rng, progress):
        return self._run(model, state["chains"], state, rng, None)


@register("mean_field", "bm")
class MeanFieldGradient(BMLearningStrategy):
    """Mean-field learning: the deterministic Boltzmann machine (Peterson & Anderson 1987).

    Both phases replace sampling by the naive mean-field fixed point
    m_i = sigmoid((sum_j w_ij m_j + b_i) / T) (damped iteration; the free phase starts
    from the previous update's solution, the clamped phase from P(h | v) ignoring the
    hidden-hidden couplings) and estimate <s_i s_j> by m_i m_j, or, with
    ``linear_response=True``, by m_i m_j + C_ij with C the linear-response covariance
    (Kappen & Rodriguez 1998), which is much more accurate for the pair statistics.

    Parameters
    ----------
    linear_response : bool, default=True
        Add the linear-response correction to the off-diagonal statistics.
    damping : float, default=0.5
        Weight of the old value in each fixed-point iteration.
    max_iter : int, default=200
        Iterations of the fixed-point equations per phase.
    tol : float, default=1e-7
        Stop when no magnetisation moves more than this.

    Examples
    --------
    >>> from skboltz import BoltzmannMachine
    >>> from skboltz.learning import MeanFieldGradient
    >>> bm = BoltzmannMachine(n_hidden=0, learning=MeanFieldGradient(linear_response=False))
    >>> bm.learning.linear_response
    False
    """

    _parameter_constraints = {
        "linear_response": ["boolean"],
        "damping": [Interval(Real, 0, 1, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, linear_response=True, damping=0.5, max_iter=200, tol=1e-7):
        self.linear_response = linear_response
        self.damping = damping
        self.max_iter = max_iter
        self.tol = tol

    def init_state(self, model, data, batch_size, rng):
        rates = np.clip(np.asarray(data.mean(axis=0), dtype=np.float64).ravel(), 0.01, 0.99)
        m = np.full(model.n_units, 0.5)
        m[: model.n_visible] = rates
        return {"magnetisation": m, "n_unconverged": 0}

    def _solve(self, model, M, first_free, state):
        M, converged = bm_mean_field(
            model.coupling_matrix(), model.bias_vector(), M, first_free,
            self.damping, self.max_iter, self.tol,
        )
        state["n_unconverged"] += not converged
        return M

    def _add_linear_response(self, moments, J, m, block):
        """Add the mean off-diagonal linear-response covariance of ``block`` units."""
        C = bm_linear_response(J[block, block], m[..., block])
        if C.ndim == 3:
            C = C.mean(axis=0)
        np.fill_diagonal(C, 0.0)
        moments[block, block] += C
        return moments

    def positive_phase(self, model, batch, state, rng):
        if _hidden_uncoupled(model):
            return _factorised_clamped_moments(model, batch)
        n_visible = model.n_visible
        J = model.coupling_matrix()
        start = np.empty((batch.shape[0], model.n_units))
        start[:, :n_visible] = batch
        start[:, n_visible:] = sigmoid(batch @ J[:n_visible, n_visible:]
                                       + model.bias_vector()[n_visible:])
        M = self._solve(model, start, n_visible, state)
        moments = bm_second_moments(M)
        if self.linear_response:
            hidden = slice(n_visible, None)
            moments = self._add_linear_response(moments, J, M, hidden)
        return moments

    def negative_phase(self, model, batch, state, rng, progress):
        M = self._solve(model, state["magnetisation"][None, :], 0, state)
        m = M[0]
        state["magnetisation"] = m
        moments = np.outer(m, m)
        np.fill_diagonal(moments, m)
        if self.linear_response:
            moments = self._add_linear_response(moments, model.coupling_matrix(), m,
                                                slice(None))
        return moments


__all__ = ["BMLearningStrategy", "Gibbs", "MeanFieldGradient", "exact_clamped_moments",
           "exact_free_moments"]
