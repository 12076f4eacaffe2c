"""Sampling-based negative phases for RBMs: CD-k, persistent CD and parallel tempering."""

from numbers import Integral, Real

import numpy as np

from .._noise import Noise
from .._sklearn import Interval
from ._base import RBMLearningStrategy, register, steps_at, validate_steps

_N_STEPS_DOC = """n_steps : int or (int, int), default=1
        Gibbs steps k per update. A pair ``(start, stop)`` makes k grow linearly from
        ``start`` in the first epoch to ``stop`` in the last one."""


def _initial_chains(model, data, n_chains, rng):
    """Visible states started from random training rows (augmented rows).

    The model's training form turns the rows into states: binary draws for Bernoulli
    visible units, the rows themselves for Gaussian ones.
    """
    rows = data[rng.integers(0, data.shape[0], size=n_chains)]
    rows = rows.toarray() if hasattr(rows, "toarray") else np.asarray(rows)
    return model._training_form().chains_from_rows(rows, rng)


@register("cd")
class CD(RBMLearningStrategy):
    __doc__ = f"""Contrastive divergence, CD-k (Hinton 2002).

    Each update starts k steps of block Gibbs sampling at the minibatch itself. Cheap
    and good for features; biased as a likelihood gradient for small k.

    Parameters
    ----------
    {_N_STEPS_DOC}

    Examples
    --------
    >>> from skboltz import RBM
    >>> from skboltz.learning import CD
    >>> rbm = RBM(n_components=8, learning=CD(n_steps=(1, 5)), n_iter=2, random_state=0)
    >>> rbm.set_params(learning__n_steps=3).learning.n_steps
    3
    """

    _parameter_constraints = {"n_steps": [Interval(Integral, 1, None, closed="left"), tuple]}

    def __init__(self, n_steps=1):
        self.n_steps = n_steps

    def init_state(self, model, X, batch_size, rng):
        validate_steps(self.n_steps)
        return None

    def _n_negative(self, state, n_positive):
        return n_positive

    def _sample_negative(self, model, positive, state, noise, progress, out):
        H = model.empty_hidden(positive.shape[0])
        V = positive
        for _ in range(steps_at(self.n_steps, progress)):
            model.draw_hidden(V, noise, H)
            V = model.draw_visible(H, noise, out)


@register("pcd")
class PCD(RBMLearningStrategy):
    __doc__ = f"""Persistent contrastive divergence (Tieleman 2008).

    Negative statistics come from Markov chains that persist across updates (and
    across ``partial_fit`` calls), so they follow the model instead of restarting at the
    data: a much better likelihood gradient than CD at the same cost.

    Parameters
    ----------
    {_N_STEPS_DOC}
    n_chains : int or None, default=None
        Number of persistent chains; None uses the estimator's ``batch_size``.

    Examples
    --------
    >>> from skboltz import RBM
    >>> from skboltz.learning import PCD
    >>> rbm = RBM(n_components=8, learning=PCD(n_chains=50), n_iter=2, random_state=0)
    >>> rbm.learning
    PCD(n_chains=50)
    """

    _parameter_constraints = {
        "n_steps": [Interval(Integral, 1, None, closed="left"), tuple],
        "n_chains": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, n_steps=1, n_chains=None):
        self.n_steps = n_steps
        self.n_chains = n_chains

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

    def _n_negative(self, state, n_positive):
        return state["hidden"].shape[0]

    def _sample_negative(self, model, positive, state, noise, progress, out):
        H = state["hidden"]
        for _ in range(steps_at(self.n_steps, progress) - 1):
            model.draw_hidden(model.draw_visible(H, noise, out), noise, H)
        state["chains"] = model.draw_visible(H, noise, out)

    def _observe(self, state, inverse_probability, noise):
        hidden = state["hidden"]
        np.less(inverse_probability, noise.reciprocal_uniform(hidden.shape), out=hidden)

    def _release_buffers(self, state):
        chains = state["chains"]
        if chains.base is not None:  # the last negative rows, in the loop's buffer
            state["chains"] = chains.copy()

    def persistent_chains(self, state):
        return state["chains"]


@register("pt")
class ParallelTempering(RBMLearningStrategy):
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

    Examples
    --------
    >>> from skboltz import RBM
    >>> from skboltz.learning import ParallelTempering
    >>> rbm = RBM(n_components=8, learning=ParallelTempering(n_temperatures=5))
    >>> rbm.learning.n_temperatures
    5
    """

    _parameter_constraints = {
        "n_temperatures": [Interval(Integral, 2, None, closed="left")],
        "n_steps": [Interval(Integral, 1, None, closed="left"), tuple],
        "n_chains": [Interval(Integral, 1, None, closed="left"), None],
        "min_beta": [Interval(Real, 0, 1, closed="left")],
    }

    def __init__(self, n_temperatures=10, n_steps=1, n_chains=None, min_beta=0.0):
        self.n_temperatures = n_temperatures
        self.n_steps = n_steps
        self.n_chains = n_chains
        self.min_beta = min_beta

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

    def _n_negative(self, state, n_positive):
        return state["n_chains"]

    def persistent_chains(self, state):
        return state["chains"]

    def pop_diagnostics(self, state):
        # The share of the swaps proposed since the last call that were accepted.
        accepted, proposed = state["n_swaps_accepted"], state["n_swaps_proposed"]
        state["n_swaps_accepted"] = state["n_swaps_proposed"] = 0
        return {"swap_acceptance": accepted / proposed if proposed else float("nan")}

    def _sample_negative(self, model, positive, state, noise, progress, out):
        V, row_betas, n_chains = state["chains"], state["row_betas"], state["n_chains"]
        H = model.empty_hidden(V.shape[0])
        for _ in range(steps_at(self.n_steps, progress)):
            model.draw_hidden(V, noise, H, row_betas)
            model.draw_visible(H, noise, V, row_betas)
        model.draw_hidden(V, noise, H, row_betas)
        self._swap(model, V, H, state, noise.rng)
        out[...] = V[:n_chains]

    @staticmethod
    def _swap(model, V, H, state, rng):
        """Metropolis swaps between neighbouring temperatures, alternating even/odd pairs."""
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
        return V, H
