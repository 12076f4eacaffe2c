"""Learning strategies of the general Boltzmann machine.

The Boltzmann learning rule (Ackley, Hinton & Sejnowski 1985) moves each coupling by
<s_i s_j>_clamped - <s_i s_j>_free and each bias by <s_i>_clamped - <s_i>_free (times
1/T). A BM strategy supplies both phases as one symmetric matrix of second moments
whose diagonal holds the means (see :class:`~skboltz.learning.BMLearningStrategy`):

- ``positive_phase(model, batch, state, rng)``: the clamped statistics, visible units
  fixed to the minibatch rows and the hidden units inferred;
- ``negative_phase(model, batch, state, rng, progress)``: the free statistics.

``model`` is a :class:`skboltz.views.BMView` on the current parameters. When the
hidden units are not coupled to each other, every strategy uses the exact conditional
P(h | v) in the clamped phase (it factorises).
"""

from numbers import Integral, Real

import numpy as np

from ..models._boltzmann_energy import (
    GibbsSweep,
    bm_code_moments,
    bm_enumeration_plan,
    bm_exact_moments,
    bm_hidden_code_posteriors,
    bm_linear_response,
    bm_mean_field,
    bm_second_moments,
)
from ..utils._capabilities import BINARY, PAIRWISE, Requires
from ..utils._energy import clipped_rates, column_means, sigmoid
from ..utils._sklearn import Interval, StrOptions
from ._base import BMLearningStrategy, register


def row_shares(weights, n_rows):
    """Each row's share of a minibatch's weighted mean: its relative weight divided
    by the rows (see :mod:`skboltz.utils._weights`); None (unweighted) stays None."""
    return None if weights is None else np.asarray(weights, dtype=np.float64) / n_rows


def _factorised_clamped_moments(model, batch, weights=None):
    """Exact clamped moments when P(h | v) factorises (or there are no hidden units)."""
    shares = row_shares(weights, batch.shape[0])
    if model.n_hidden == 0:
        return bm_second_moments(batch, shares)
    n_visible = model.n_visible
    fields = batch @ model.coupling[:n_visible, n_visible:] + model.bias[n_visible:]
    hidden = sigmoid(fields / model.temperature)
    return bm_second_moments(np.hstack([batch, hidden]), shares)


def _initial_chains(model, data, n_chains, rng):
    """F-ordered binary chains: visible units from random data rows, hidden coin flips."""
    rows = data[rng.integers(0, data.shape[0], size=n_chains)]
    rows = rows.toarray() if hasattr(rows, "toarray") else np.asarray(rows)
    probability = np.full((n_chains, model.n_units), 0.5)
    probability[:, : model.n_visible] = np.clip(rows, 0, 1)
    chains = rng.random(probability.shape) < probability
    return np.asfortranarray(chains, dtype=model.dtype)


#: ``Gibbs(annealing="auto")``: (multiple of the model's temperature, sweeps) before
#: each update's measured sweeps. On the 4-2-4 encoder with the default learning rate
#: (2000 updates), Gibbs learning without annealing ended with the chains stuck in
#: one mode and the couplings run away (log-likelihood about -11, 0 of 10 seeds);
#: with this schedule it solved 10 of 10 (log-likelihood -1.46, optimum -1.39).
AUTO_ANNEALING = ((4.0, 1), (2.0, 1), (1.5, 1))


def _validate_annealing(annealing, temperature):
    """Check a simulated-annealing schedule: a list of (temperature > 0, sweeps >= 0)."""
    if annealing is None:
        return []
    if isinstance(annealing, str):  # "auto"
        return [(factor * temperature, n_steps) for factor, n_steps in AUTO_ANNEALING]
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


def exact_clamped_moments(model, batch, weights=None):
    """Exact clamped second moments: each row's 2**n_hidden hidden states enumerated.

    Uses the factorised P(h | v) when the hidden units are not coupled to each other.
    ``weights``: the rows' relative weights in a weighted fit (None: unweighted).
    """
    if model.hidden_uncoupled:
        return _factorised_clamped_moments(model, batch, weights)
    H, Q = bm_hidden_code_posteriors(
        batch, model.coupling, model.bias, model.n_visible, model.temperature
    )
    if weights is not None:
        Q = Q * np.asarray(weights, dtype=np.float64)[:, None]
    return bm_code_moments(batch, H, Q / batch.shape[0])


def exact_free_moments(model, plan=None):
    """Exact free second moments, by enumeration following ``plan`` (see
    :func:`skboltz.models._boltzmann_energy.bm_enumeration_plan`; None makes one from the couplings)."""
    if plan is None:
        plan = bm_enumeration_plan(model.coupling != 0, model.n_visible)
    return bm_exact_moments(model.coupling, model.bias, plan, model.temperature)


@register("gibbs")
class Gibbs(BMLearningStrategy):
    """Boltzmann learning with Gibbs sampling (Ackley, Hinton & Sejnowski 1985).

    The free phase runs ``n_chains`` persistent chains, all updated together by block
    Gibbs sweeps at the model's temperature: the units are coloured so that units of
    one colour share no coupling of the connectivity mask, and each colour is drawn
    at once (one matrix product), the colours in turn; a fully coupled machine has
    one unit per colour (the sequential sweep), a bipartite or layered one two
    colours. The clamped phase is exact when that is cheap: the factorised P(h | v)
    when the hidden units are not coupled to each other, or a sum over the
    2**n_hidden hidden states of each row when there are at most ``enumerate_hidden``
    hidden units (no sampling noise; for a few hidden units cheaper than sampling).
    Otherwise it runs one chain per minibatch row over the hidden units with the
    visible units fixed. Before the ``n_steps``
    measured sweeps, each sampled phase follows a simulated-annealing schedule, as in
    Ackley, Hinton & Sejnowski's procedure: heating the persistent chains and cooling
    them back lets them leave one mode of a sharply multimodal machine for another,
    which a sweep at the model's temperature almost never does.

    Parameters
    ----------
    n_steps : int, default=1
        Gibbs steps at the model's temperature per update, each a sweep over the
        units; the statistics are averaged over them.
    n_chains : int or None, default=None
        Persistent free-phase chains; None uses ``max(100, batch_size)``.
    annealing : "auto", list of (float, int) or None, default="auto"
        Simulated-annealing schedule run before the measured sweeps in both phases:
        ``[(temperature, n_steps), ...]`` (steps = sweeps) from hot to the model's
        temperature, e.g. Ackley, Hinton & Sejnowski's ``[(20, 2), (15, 2), (12, 2),
        (10, 4)]`` for a machine at T = 10. "auto" is one sweep each at 4, 2 and 1.5
        times the model's temperature; None anneals nothing (persistent chains as in
        persistent contrastive divergence).
    enumerate_hidden : int, default=8
        Up to this many coupled hidden units, the clamped phase sums P(h | v) exactly
        instead of sampling it; 0 always samples. On the 4-2-4 encoder, sampling the
        clamped phase from the 4 rows of each update (no ``code_entropy`` bonus)
        reached the optimum for 1 of 10 seeds, enumerating it for 9 of 20.

    Examples
    --------
    >>> from skboltz import BoltzmannMachine
    >>> from skboltz.learning import Gibbs
    >>> schedule = [(4.0, 2), (2.0, 2)]
    >>> bm = BoltzmannMachine(n_hidden=2, learning=Gibbs(n_steps=2, annealing=schedule))
    >>> bm.learning.annealing
    [(4.0, 2), (2.0, 2)]
    """

    requires = Requires(units={BINARY}, operations={PAIRWISE})

    _parameter_constraints = {
        "n_steps": [Interval(Integral, 1, None, closed="left")],
        "n_chains": [Interval(Integral, 1, None, closed="left"), None],
        "annealing": [StrOptions({"auto"}), list, tuple, None],
        "enumerate_hidden": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(self, n_steps=1, n_chains=None, annealing="auto", enumerate_hidden=8):
        self.n_steps = n_steps
        self.n_chains = n_chains
        self.annealing = annealing
        self.enumerate_hidden = enumerate_hidden

    def init_state(self, model, X, batch_size, rng):
        schedule = _validate_annealing(self.annealing, model.temperature)
        n_chains = self.n_persistent_chains(batch_size)
        return {"chains": _initial_chains(model, X, n_chains, rng), "schedule": schedule}

    def n_persistent_chains(self, batch_size):
        return self.n_chains or max(100, batch_size)

    def _run(self, model, S, state, rng, units, shares=None):
        """Anneal, then average the moments over ``n_steps`` sweeps at T (S F-ordered;
        ``shares``: the rows' shares of the weighted mean, None for the plain mean)."""
        sweep = GibbsSweep(model.coupling, model.bias, units, S.dtype, model.coupling_mask)
        temperatures = [t for t, n_steps in state["schedule"] for _ in range(n_steps)]
        n_annealing = len(temperatures)
        temperatures += [model.temperature] * self.n_steps
        states_t = S.T  # unit i of every chain in a contiguous row
        moments = 0.0
        for k, temperature in enumerate(temperatures):
            sweep(states_t, sweep.noise(rng, S.shape[0]), temperature)
            if k >= n_annealing:
                moments = moments + bm_second_moments(S, shares)
        return moments / self.n_steps

    def positive_phase(self, model, batch, state, rng, weights=None):
        if model.hidden_uncoupled or model.n_hidden <= self.enumerate_hidden:
            return exact_clamped_moments(model, batch, weights)
        n_visible = model.n_visible
        S = np.empty((batch.shape[0], model.n_units), dtype=model.dtype, order="F")
        S[:, :n_visible] = batch
        S[:, n_visible:] = 0
        return self._run(model, S, state, rng, np.arange(n_visible, model.n_units),
                         row_shares(weights, batch.shape[0]))

    def persistent_chains(self, state):
        return state["chains"]

    def negative_phase(self, model, batch, state, rng, progress):
        # Copies of the training state (partial_fit) may come back C-ordered.
        state["chains"] = np.asfortranarray(state["chains"])
        return self._run(model, state["chains"], state, rng, None)


@register("mean_field")
class MeanFieldGradient(BMLearningStrategy):
    """Mean-field learning: the deterministic Boltzmann machine (Peterson & Anderson 1987).

    The free phase replaces sampling by naive mean field, m_i = sigmoid((sum_j w_ij
    m_j + b_i) / T), and estimates <s_i s_j> by m_i m_j or, with
    ``linear_response=True``, by m_i m_j + C_ij with C the linear-response covariance
    (Kappen & Rodriguez 1998), much more accurate for the pair statistics. Where the
    free-phase magnetisations come from is ``free_phase``:

    - ``"data"`` (the default): every row of the minibatch starts at its clamped
      solution (visible units at the row, hidden units at their clamped means), then
      all units are freed for ``n_steps`` damped iterations, and the statistics are
      averaged over the rows (Welling & Hinton 2002). A machine whose distribution has
      several modes (each encoder pattern is one) is represented by the modes near
      the data, which one mean-field solution cannot do; like contrastive divergence,
      it is fast and slightly biased, and its steps are short: along one run on
      the 8-3-8 encoder they followed the likelihood's gradient at 0.05 to 0.4 of the
      exact step's length, so at the step of exact or Gibbs learning it needs more
      updates (2000 updates at learning rate 0.5 solved the 8-3-8 encoder for 16 of
      20 seeds, 4000 for 20 of 20); :class:`~skboltz.BoltzmannMachine`'s default
      ``learning_rate="auto"`` doubles its step to 1.0 (20 of 20 in 2000 updates). Its machines are right by their own mean-field
      inference but, sampled from, they can be too flat: a 40-10-40 encoder trained
      this way (defaults, 300 epochs) recovered 36 of its 40 patterns by mean field
      and none by sampling (see the Boltzmann machine guide).
    - ``"fixed_point"``: one damped fixed point of the whole machine, warm-started from
      the previous update's solution and iterated to convergence (Peterson & Anderson
      1987): a single mode, fine for weakly coupled machines. On the 4-2-4 encoder it
      stalls where the one-mode statistics match the data's while the machine does
      not (0 of 20 seeds); ``"data"`` solved 20 of 20 (``n_steps`` 3 or 5; 10 or more
      steps relax back into that one mode and stall too).

    The clamped phase is exact when the hidden units are not coupled to each other
    (P(h | v) factorises) or there are at most ``enumerate_hidden`` of them (their
    states are summed); otherwise it is the mean-field fixed point with the visible
    units clamped, started from P(h | v) ignoring the hidden-hidden couplings.

    Parameters
    ----------
    linear_response : bool, default=True
        Add the linear-response correction to the off-diagonal statistics (one
        n_units x n_units inverse per row with ``free_phase="data"``).
    free_phase : {"data", "fixed_point"}, default="data"
        Where the free-phase magnetisations come from (see above).
    n_steps : int, default=5
        Damped iterations of the free relaxation from the data (``free_phase="data"``).
    damping : float, default=0.5
        Weight of the old value in each fixed-point iteration.
    max_iter : int, default=200
        Iterations of the fixed-point equations to convergence (``free_phase=
        "fixed_point"`` and a clamped phase solved by mean field).
    tol : float, default=1e-7
        Stop those iterations when no magnetisation moves more than this.
    enumerate_hidden : int, default=8
        Up to this many coupled hidden units, the clamped phase sums P(h | v) exactly.

    References
    ----------
    C. Peterson and J. R. Anderson, "A mean field theory learning algorithm for neural
    networks", Complex Systems 1, 1987.
    H. J. Kappen and F. B. Rodriguez, "Efficient learning in Boltzmann machines using
    linear response theory", Neural Computation 10, 1998.
    M. Welling and G. E. Hinton, "A new learning algorithm for mean field Boltzmann
    machines", ICANN 2002.

    Examples
    --------
    >>> from skboltz import BoltzmannMachine
    >>> from skboltz.learning import MeanFieldGradient
    >>> bm = BoltzmannMachine(n_hidden=0, learning=MeanFieldGradient(linear_response=False))
    >>> bm.learning.linear_response
    False
    """

    requires = Requires(units={BINARY}, operations={PAIRWISE})

    _parameter_constraints = {
        "linear_response": ["boolean"],
        "free_phase": [StrOptions({"data", "fixed_point"})],
        "n_steps": [Interval(Integral, 1, None, closed="left")],
        "damping": [Interval(Real, 0, 1, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "enumerate_hidden": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(self, linear_response=True, free_phase="data", n_steps=5, damping=0.5,
                 max_iter=200, tol=1e-7, enumerate_hidden=8):
        self.linear_response = linear_response
        self.free_phase = free_phase
        self.n_steps = n_steps
        self.damping = damping
        self.max_iter = max_iter
        self.tol = tol
        self.enumerate_hidden = enumerate_hidden

    def init_state(self, model, X, batch_size, rng):
        m = np.full(model.n_units, 0.5)
        m[: model.n_visible] = clipped_rates(column_means(X))
        return {"magnetisation": m, "n_unconverged": 0}

    def pop_diagnostics(self, state):
        # Mean-field solves (fixed points of the free phase, mean-field clamped phases)
        # that stopped at max_iter unconverged since the last call.
        n_unconverged, state["n_unconverged"] = state["n_unconverged"], 0
        return {"mean_field_unconverged": n_unconverged}

    def _solve(self, model, M, first_free, state):
        M, converged = bm_mean_field(
            model.coupling_matrix(), model.bias_vector(), M, first_free,
            self.damping, self.max_iter, self.tol,
        )
        state["n_unconverged"] += not converged
        return M

    def _clamped_exactly(self, model):
        return model.hidden_uncoupled or model.n_hidden <= self.enumerate_hidden

    def _clamped_means(self, model, batch, state):
        """Each row with its hidden units at their clamped means (float64)."""
        n_visible = model.n_visible
        M = np.empty((batch.shape[0], model.n_units))
        M[:, :n_visible] = batch
        if self._clamped_exactly(model):
            M[:, n_visible:] = model.hidden_probability(batch)
            return M
        J = model.coupling_matrix()
        M[:, n_visible:] = sigmoid(batch @ J[:n_visible, n_visible:]
                                   + model.bias_vector()[n_visible:])
        return self._solve(model, M, n_visible, state)

    def _with_linear_response(self, moments, J, M, block, shares=None):
        """Add the mean off-diagonal linear-response covariance of ``block`` units
        (over the rows by their ``shares`` of the mean, or plainly)."""
        C = bm_linear_response(J[block, block], M[..., block])
        if C.ndim == 3:
            C = C.mean(axis=0) if shares is None else np.tensordot(shares, C, axes=1)
        np.fill_diagonal(C, 0.0)
        moments[block, block] += C
        return moments

    def positive_phase(self, model, batch, state, rng, weights=None):
        if self._clamped_exactly(model):
            return exact_clamped_moments(model, batch, weights)
        shares = row_shares(weights, batch.shape[0])
        M = self._clamped_means(model, batch, state)
        moments = bm_second_moments(M, shares)
        if self.linear_response:
            hidden = slice(model.n_visible, None)
            moments = self._with_linear_response(moments, model.coupling_matrix(), M,
                                                 hidden, shares)
        return moments

    def negative_phase(self, model, batch, state, rng, progress, weights=None):
        J = model.coupling_matrix()
        shares = None
        if self.free_phase == "data":  # runs that start at the rows count by weight
            shares = row_shares(weights, batch.shape[0])
            M = self._clamped_means(model, batch, state)
            # A fixed number of iterations (tol=0): a brief relaxation, not convergence.
            M, _ = bm_mean_field(J, model.bias_vector(), M, 0, self.damping,
                                 self.n_steps, 0.0)
            moments = bm_second_moments(M, shares)
        else:
            M = self._solve(model, state["magnetisation"][None, :], 0, state)
            state["magnetisation"] = M[0]
            moments = bm_second_moments(M)
        if self.linear_response:
            moments = self._with_linear_response(moments, J, M, slice(None), shares)
        return moments


__all__ = ["BMLearningStrategy", "Gibbs", "MeanFieldGradient", "exact_clamped_moments",
           "exact_free_moments"]
