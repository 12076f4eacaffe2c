"""Sampling-based negative phases for RBMs: CD-k, persistent CD and parallel tempering."""

from numbers import Integral, Real

import numpy as np

from ..utils._array_api import namespace_of
from ..utils._energy import bernoulli_sample
from ..utils._noise import Noise
from ..models._rbm_energy import RBMLayout
from ..utils._sklearn import Interval, StrOptions
from ._base import FusedSampler, RBMLearningStrategy, register, steps_at, validate_steps

_N_STEPS_DOC = """n_steps : int or (int, int), default=1
        Gibbs steps k per update. A pair ``(start, stop)`` makes k grow linearly from
        ``start`` in the first epoch to ``stop`` in the last one."""

_NEGATIVE_VISIBLE_DOC = """negative_visible : {"auto", "mean", "sample"}, default="auto"
        The visible rows of the negative statistics. ``"sample"``: the visible state
        the Gibbs chain draws from p(v | h), with its hidden probabilities P(h = 1 | v)
        (at equilibrium an unbiased estimate of the model's expectations).
        ``"mean"``: the mean of p(v | h) given the chain's hidden state instead (the
        probabilities P(v = 1 | h) for binary units, b + W^T h for Gaussian ones), with
        the hidden probabilities of that mean (Hinton, "A Practical Guide to Training
        Restricted Boltzmann Machines", section 3). This mean-field estimate is biased
        as a likelihood gradient, but much less noisy, and on grey-level data it makes
        far better features (see the RBM user guide). The mean enters only the
        statistics: the chains still draw binary (or Gaussian) visible states, so
        persistent chains remain samplers of the model. ``"auto"``: the means for
        binary visible units (:class:`~skboltz.RBM`), the draws for Gaussian ones
        (:class:`~skboltz.GaussianRBM`, where the means gave lower held-out
        densities) and for softmax groups (:class:`~skboltz.CategoricalRBM`)."""

_NEGATIVE_VISIBLE_CONSTRAINT = {
    "negative_visible": [StrOptions({"auto", "mean", "sample"})],
}


class _GibbsNegativePhase(RBMLearningStrategy):
    """What the block-Gibbs strategies share: the ``negative_visible`` setting, and
    their negative phase and statistics computed by their fused sampler."""

    #: The strategy's sampler class (a :class:`_GibbsChains`).
    _sampler = None

    def negative_phase(self, model, batch, state, rng, progress):
        sampler = self._fused_sampler(model._training_form(), state,
                                      Noise(rng, block_size=0), progress)
        return sampler.negative_rows(batch)[RBMLayout.units]

    def _negative_statistics(self, model, positive, state, rng, progress, noise=None):
        if noise is None:
            noise = Noise(rng, block_size=0)
        return self._fused_sampler(model, state, noise, progress).negative_statistics(
            positive)

    def _fused_sampler(self, model, state, noise, progress):
        choice = self.negative_visible
        if choice == "auto":  # the training form says what suits its visible units
            choice = model.auto_negative_visible
        return self._sampler(model, state, noise, steps_at(self.n_steps, progress),
                             rows_are_means=choice == "mean")

    # -- any array namespace (the dispatched path; see RBMLearningStrategy) ------------
    @staticmethod
    def _last_visible_input(model, H, source, n_steps):
        """What the hidden units send the visible ones in the last of ``n_steps``
        block Gibbs steps h -> v -> h from hidden states ``H`` (the steps before it
        drawn in full)."""
        for _ in range(n_steps - 1):
            V = model.visible.sample(model.visible_input(H), source)
            H = bernoulli_sample(model.hidden_probability(V), source)
        return model.visible_input(H)


class _GibbsChains(FusedSampler):
    """A block-Gibbs strategy's sampler: ``n_steps`` Gibbs steps per update, and
    whether the negative rows are the visible means."""

    def __init__(self, model, state, noise, n_steps, rows_are_means):
        # (every partial_fit call makes one: no super().__init__ chain)
        self.model, self.state, self.noise = model, state, noise
        self.n_steps, self.rows_are_means = n_steps, rows_are_means


class _ContrastiveDivergence(_GibbsChains):
    """CD-k's sampler: chains started at the minibatch, k steps each update."""

    starts_at_data = True

    def n_negative(self, n_positive):
        return n_positive

    def sample(self, positive, out, positive_input=None):
        model, noise, n_steps = self.model, self.noise, self.n_steps
        H = model.empty_hidden(positive.shape[0])
        V = positive
        for step in range(1, n_steps + 1):
            if step == 1 and positive_input is not None:
                model.draw_hidden_from_input(positive_input, noise, H)
            else:
                model.draw_hidden(V, noise, H)
            if step == n_steps and self.rows_are_means:
                model.visible_mean(H, out)
            else:
                V = model.draw_visible(H, noise, out)


class _PersistentChains(_GibbsChains):
    """PCD's sampler: the chains' hidden states persist; each update starts at h."""

    def __init__(self, model, state, noise, n_steps, rows_are_means):
        _GibbsChains.__init__(self, model, state, noise, n_steps, rows_are_means)
        self.hidden = state["hidden"]
        # With means, the chains' visible states follow the means in ``out``: their
        # hidden inputs give the chains' next hidden states, not statistics.
        self.n_chain_rows = self.hidden.shape[0] if rows_are_means else 0

    def n_negative(self, n_positive):
        return self.hidden.shape[0]

    def sample(self, positive, out, positive_input=None):
        model, noise, H = self.model, self.noise, self.hidden
        n_chains = H.shape[0]
        for _ in range(self.n_steps - 1):
            model.draw_hidden(model.draw_visible(H, noise, out[:n_chains]), noise, H)
        if self.rows_are_means:
            self.state["chains"] = model.draw_visible_and_mean(H, noise, out[n_chains:],
                                                               out[:n_chains])
        else:
            self.state["chains"] = model.draw_visible(H, noise, out)

    def observe(self, inverse_probability):
        # the chains' rows are the last ones (after the means, if any)
        hidden = self.hidden
        np.less(inverse_probability[-hidden.shape[0] :],
                self.noise.reciprocal_uniform(hidden.shape), out=hidden)

    def release(self):
        chains = self.state["chains"]
        if chains.base is not None:  # the last negative rows, in the loop's buffer
            self.state["chains"] = chains.copy()


class _TemperedChains(_GibbsChains):
    """Parallel tempering's sampler: the beta = 1 chains give the negative rows."""

    def n_negative(self, n_positive):
        return self.state["n_chains"]

    def sample(self, positive, out, positive_input=None):
        model, noise, state = self.model, self.noise, self.state
        V, row_betas, n_chains = state["chains"], state["row_betas"], state["n_chains"]
        H = model.empty_hidden(V.shape[0])
        for _ in range(self.n_steps):
            model.draw_hidden(V, noise, H, row_betas)
            model.draw_visible(H, noise, V, row_betas)
        model.draw_hidden(V, noise, H, row_betas)
        self._swap(V, H)
        if self.rows_are_means:
            model.visible_mean(H[:n_chains], out)
        else:
            out[...] = V[:n_chains]

    def _swap(self, V, H):
        """Metropolis swaps between neighbouring temperatures, alternating even/odd pairs."""
        model, state, rng = self.model, self.state, self.noise.rng
        betas, n_chains = state["betas"], state["n_chains"]
        n_temps = len(betas)
        energy = model.energy(V, H).reshape(n_temps, n_chains).astype(np.float64)
        pairs = np.arange(state["n_rounds"] % 2, n_temps - 1, 2)
        state["n_rounds"] += 1
        # accept with probability min(1, exp((beta_t - beta_{t+1}) (E_t - E_{t+1})))
        log_ratio = (betas[pairs] - betas[pairs + 1])[:, None] * (
            energy[pairs] - energy[pairs + 1]
        )
        accept = np.log(rng.random(log_ratio.shape)) < log_ratio
        V3 = V.reshape(n_temps, n_chains, -1)
        H3 = H.reshape(n_temps, n_chains, -1)
        for t, accepted in zip(pairs, accept):
            for states in (V3, H3):
                colder = states[t, accepted].copy()
                states[t, accepted] = states[t + 1, accepted]
                states[t + 1, accepted] = colder
        state["n_swaps_accepted"] += int(accept.sum())
        state["n_swaps_proposed"] += accept.size


def _initial_chains(model, data, n_chains, rng):
    """Visible states started from random training rows (augmented rows).

    The model's training form turns the rows into states: binary draws for Bernoulli
    visible units, the rows themselves for Gaussian ones.
    """
    rows = data[rng.integers(0, data.shape[0], size=n_chains)]
    rows = rows.toarray() if hasattr(rows, "toarray") else np.asarray(rows)
    return model._training_form().chains_from_rows(rows, rng)


@register("cd")
class CD(_GibbsNegativePhase):
    __doc__ = f"""Contrastive divergence, CD-k (Hinton 2002).

    Each update starts k steps of block Gibbs sampling at the minibatch itself. Cheap
    and good for features; biased as a likelihood gradient for small k. With
    visible means (``negative_visible``, below) the last step's visible units give
    their means, the k - 1 steps before it draw states.

    Parameters
    ----------
    {_N_STEPS_DOC}
    {_NEGATIVE_VISIBLE_DOC}

    Examples
    --------
    >>> from skboltz import RBM
    >>> from skboltz.learning import CD
    >>> rbm = RBM(n_components=8, learning=CD(n_steps=(1, 5)), n_iter=2, random_state=0)
    >>> rbm.set_params(learning__n_steps=3).learning.n_steps
    3
    """

    _sampler = _ContrastiveDivergence

    _parameter_constraints = {
        "n_steps": [Interval(Integral, 1, None, closed="left"), tuple],
        **_NEGATIVE_VISIBLE_CONSTRAINT,
    }

    def __init__(self, n_steps=1, negative_visible="auto"):
        self.n_steps = n_steps
        self.negative_visible = negative_visible

    def init_state(self, model, X, batch_size, rng):
        validate_steps(self.n_steps)
        return None

    #: The negative rows start at the minibatch's, so they carry its rows' weights.
    negative_rows_start_at_batch = True

    def negative_sample(self, model, chains, positive, positive_hidden, source, n_steps,
                        rows_are_means):
        # k steps from the minibatch, the first from its hidden probabilities
        input = self._last_visible_input(model, bernoulli_sample(positive_hidden, source),
                                         source, n_steps)
        negative = (model.visible.mean(input) if rows_are_means
                    else model.visible.sample(input, source))
        return negative, model.hidden_probability(negative)



@register("pcd")
class PCD(_GibbsNegativePhase):
    __doc__ = f"""Persistent contrastive divergence (Tieleman 2008).

    Negative statistics come from Markov chains that persist across updates (and
    across ``partial_fit`` calls), so they follow the model instead of restarting at the
    data: a much better likelihood gradient than CD at the same cost. With visible
    means (``negative_visible``, below) each update costs one more matrix product (the
    hidden inputs of the means, beside those of the chains' visible states).

    Parameters
    ----------
    {_N_STEPS_DOC}
    n_chains : int or None, default=None
        Number of persistent chains; None uses the estimator's default: its
        ``batch_size`` (:class:`~skboltz.CategoricalRBM`: ``max(100, batch_size)``).
    {_NEGATIVE_VISIBLE_DOC}

    Examples
    --------
    >>> from skboltz import RBM
    >>> from skboltz.learning import PCD
    >>> rbm = RBM(n_components=8, learning=PCD(n_chains=50), n_iter=2, random_state=0)
    >>> rbm.learning
    PCD(n_chains=50)
    """

    _sampler = _PersistentChains

    _parameter_constraints = {
        "n_steps": [Interval(Integral, 1, None, closed="left"), tuple],
        "n_chains": [Interval(Integral, 1, None, closed="left"), None],
        **_NEGATIVE_VISIBLE_CONSTRAINT,
    }

    def __init__(self, n_steps=1, n_chains=None, negative_visible="auto"):
        self.n_steps = n_steps
        self.n_chains = n_chains
        self.negative_visible = negative_visible

    def init_state(self, model, X, batch_size, rng):
        validate_steps(self.n_steps)
        chains = _initial_chains(model, X, self.n_chains or batch_size, rng)
        noise = Noise(rng, block_size=0)
        model = model._training_form()
        # The chains' state is the hidden draw given their last visible rows: each
        # update then starts with h -> v, and the caller's P(h | v) of the new visible
        # rows (needed for the statistics anyway) gives the next h.
        hidden = model.draw_hidden(chains, noise, model.empty_hidden(chains.shape[0]))
        return {"chains": chains, "hidden": hidden}

    def n_persistent_chains(self, batch_size):
        return self.n_chains or batch_size


    def persistent_chains(self, state):
        return state["chains"]

    def start_chains(self, model, rows, source):
        # the chains' hidden draws given their first visible rows (as on NumPy)
        return {"hidden": bernoulli_sample(model.hidden_probability(rows), source)}

    def negative_sample(self, model, chains, positive, positive_hidden, source, n_steps,
                        rows_are_means):
        # k steps of the chains, which keep their last hidden draws
        input = self._last_visible_input(model, chains["hidden"], source, n_steps)
        V = model.visible.sample(input, source)
        chains_hidden = model.hidden_probability(V)
        chains["hidden"] = bernoulli_sample(chains_hidden, source)
        if rows_are_means:
            negative = model.visible.mean(input)
            return negative, model.hidden_probability(negative)
        return V, chains_hidden


@register("pt")
class ParallelTempering(_GibbsNegativePhase):
    __doc__ = f"""Parallel tempering (Desjardins et al. 2010; Cho et al. 2010).

    Persistent chains run at inverse temperatures ``beta`` evenly spaced from 1 down to
    ``min_beta``; after each round of Gibbs steps, neighbouring temperatures propose to
    swap states (Metropolis rule). Hot chains cross energy barriers and pass good states
    down, so the beta = 1 chains, which give the statistics, mix far better than PCD's.

    Parameters
    ----------
    n_temperatures : int, default=10
        Number of temperatures, including beta = 1.
    {_N_STEPS_DOC}
    n_chains : int or None, default=None
        Chains per temperature; None uses the estimator's ``batch_size``.
    min_beta : float, default=0.0
        The hottest inverse temperature (0 is the uniform distribution).
    {_NEGATIVE_VISIBLE_DOC}
        With means, they are those given the beta = 1 chains' hidden states, one more
        matrix product per update.

    Examples
    --------
    >>> from skboltz import RBM
    >>> from skboltz.learning import ParallelTempering
    >>> rbm = RBM(n_components=8, learning=ParallelTempering(n_temperatures=5))
    >>> rbm.learning.n_temperatures
    5
    """

    _sampler = _TemperedChains

    _parameter_constraints = {
        "n_temperatures": [Interval(Integral, 2, None, closed="left")],
        "n_steps": [Interval(Integral, 1, None, closed="left"), tuple],
        "n_chains": [Interval(Integral, 1, None, closed="left"), None],
        "min_beta": [Interval(Real, 0, 1, closed="left")],
        **_NEGATIVE_VISIBLE_CONSTRAINT,
    }

    def __init__(self, n_temperatures=10, n_steps=1, n_chains=None, min_beta=0.0,
                 negative_visible="auto"):
        self.n_temperatures = n_temperatures
        self.n_steps = n_steps
        self.n_chains = n_chains
        self.min_beta = min_beta
        self.negative_visible = negative_visible

    def init_state(self, model, X, batch_size, rng):
        validate_steps(self.n_steps)
        n_chains = self.n_chains or batch_size
        betas = np.linspace(1.0, self.min_beta, self.n_temperatures)
        # Rows are temperature-major: rows [t * n_chains, (t + 1) * n_chains) run at betas[t].
        row_betas = np.repeat(betas, n_chains)[:, None].astype(model.dtype)
        chains = _initial_chains(model, X, n_chains * self.n_temperatures, rng)
        return {"chains": chains, "betas": betas, "row_betas": row_betas,
                "n_chains": n_chains, "n_rounds": 0, "n_swaps_accepted": 0,
                "n_swaps_proposed": 0}

    def n_persistent_chains(self, batch_size):
        return (self.n_chains or batch_size) * self.n_temperatures

    def persistent_chains(self, state):
        return state["chains"]

    def pop_diagnostics(self, state):
        # The share of the swaps proposed since the last call that were accepted (a
        # count on the chains' device under dispatch: read once an epoch).
        accepted, proposed = float(state["n_swaps_accepted"]), state["n_swaps_proposed"]
        state["n_swaps_accepted"] = state["n_swaps_proposed"] = 0
        return {"swap_acceptance": accepted / proposed if proposed else float("nan")}

    # -- any array namespace (the dispatched path; see RBMLearningStrategy) ------------
    def start_chains(self, model, rows, source):
        # rows [t n_chains, (t + 1) n_chains) run at betas[t], their betas as a column
        n_chains = rows.shape[0] // self.n_temperatures
        betas = np.linspace(1.0, self.min_beta, self.n_temperatures)
        row_betas = namespace_of(rows).asarray(np.repeat(betas, n_chains)[:, None],
                                               dtype=rows.dtype, device=rows.device)
        return {"chains": rows, "row_betas": row_betas, "betas": betas,
                "n_chains": n_chains, "n_rounds": 0, "n_swaps_accepted": 0,
                "n_swaps_proposed": 0}

    def negative_sample(self, model, chains, positive, positive_hidden, source, n_steps,
                        rows_are_means):
        # every temperature's chains take n_steps block Gibbs steps, then neighbouring
        # temperatures propose swaps; the beta = 1 chains give the negative rows
        visible, hidden = model.visible, model.hidden
        V, row_betas = chains["chains"], chains["row_betas"]
        for _ in range(n_steps):
            H = hidden.sample(hidden.tempered_input(model.hidden_input(V), row_betas),
                              source)
            V = visible.sample(visible.tempered_input(model.visible_input(H), row_betas),
                               source)
        H = hidden.sample(hidden.tempered_input(model.hidden_input(V), row_betas), source)
        V, H = self._swapped(model, source, chains, V, H)
        chains["chains"] = V
        n_chains = chains["n_chains"]
        if rows_are_means:
            negative = visible.mean(model.visible_input(H[:n_chains, ...]))
        else:
            negative = V[:n_chains, ...]
        return negative, model.hidden_probability(negative)

    @staticmethod
    def _swapped(model, source, chains, V, H):
        """The chains after Metropolis swaps of neighbouring temperatures: the pairs
        (t, t + 1) with t of this round's parity swap with probability min(1,
        exp((beta_t - beta_{t+1}) (E_t - E_{t+1}))), E the tempered energy. All on the
        device: the accepted swaps become one gather of the rows."""
        xp = namespace_of(V)
        betas, n_chains = chains["betas"], chains["n_chains"]
        n_temperatures = len(betas)
        parity = chains["n_rounds"] % 2
        chains["n_rounds"] += 1
        energy = xp.reshape(model.tempered_energy(V, H), (n_temperatures, n_chains))
        device, dtype = V.device, energy.dtype
        gaps = xp.asarray((betas[:-1] - betas[1:])[:, None], dtype=dtype, device=device)
        log_ratio = gaps * (energy[:-1, ...] - energy[1:, ...])
        proposed = np.arange(n_temperatures - 1) % 2 == parity  # this round's pairs
        active = xp.asarray(proposed[:, None], device=device)
        uniform = source.random(tuple(log_ratio.shape), dtype)
        accepted = xp.logical_and(xp.log(uniform) < log_ratio, active)
        steps = xp.astype(accepted, xp.int64)
        chains["n_swaps_accepted"] = chains["n_swaps_accepted"] + xp.sum(steps)
        chains["n_swaps_proposed"] += int(np.count_nonzero(proposed)) * n_chains
        # row t moves to t + 1 where the pair (t, t + 1) swapped, to t - 1 where (t - 1, t)
        none = xp.zeros((1, n_chains), dtype=xp.int64, device=device)
        shift = xp.concat([steps, none], axis=0) - xp.concat([none, steps], axis=0)
        rows = xp.reshape(xp.arange(n_temperatures * n_chains, dtype=xp.int64,
                                    device=device), (n_temperatures, n_chains))
        order = xp.reshape(rows + n_chains * shift, (-1,))
        return xp.take(V, order, axis=0), xp.take(H, order, axis=0)
