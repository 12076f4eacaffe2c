"""A deterministic lower bound on Z from the distinct states Gibbs chains visit."""

from numbers import Integral

import numpy as np
from scipy.special import logsumexp

from ..utils._capabilities import ANNEALING, Requires
from ..utils._energy import bernoulli_sample, sigmoid
from ..utils._sklearn import Interval
from ._base import LogZ, ZEstimator, as_generator, register


def _unique_rows(states):
    """Distinct rows of a 0/1 matrix (packed to bytes for the comparison)."""
    packed = np.packbits(states.astype(np.uint8), axis=1)
    _, index = np.unique(packed, axis=0, return_index=True)
    return states[np.sort(index)]


@register("visited_states")
class VisitedStates(ZEstimator):
    """Lower bound on log Z: the sum of p*(s) over the distinct states Gibbs chains visit.

    Z is a sum of ``p*(s) = exp(-E(s)/T)`` over all states; summing it over any set of
    distinct states gives less, so whatever the chains visit, the result is a true
    lower bound on Z (deterministic given the visited set, and exact once every state
    has been visited). The low-energy states carry most of Z and are the ones Gibbs
    dynamics visits, which makes the bound useful on small or sharply peaked models; on
    large flat models it is very loose. For an RBM the states are visible vectors and
    ``p*(v) = exp(-F(v))`` has the hidden units summed out.

    Chains start from the independent base model (the training data's visible rates)
    and run ``n_steps`` Gibbs transitions of the model each; every state along the way
    counts.

    Parameters
    ----------
    n_chains : int, default=100
        Chains simulated together.
    n_steps : int, default=1000
        Gibbs transitions per chain.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.views import RBMView
    >>> from skboltz.partition import Exact, VisitedStates
    >>> model = RBMView(np.full((2, 4), 0.5), np.zeros(4), np.zeros(2))
    >>> bound = VisitedStates(n_chains=20, n_steps=50).estimate(model, rng=0)
    >>> bool(bound.lower <= Exact().estimate(model).value + 1e-12)
    True
    """

    requires = Requires(operations={ANNEALING})

    _parameter_constraints = {
        "n_chains": [Interval(Integral, 1, None, closed="left")],
        "n_steps": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(self, n_chains=100, n_steps=1000):
        self.n_chains = n_chains
        self.n_steps = n_steps

    def estimate(self, model, *, rng=None, data_rates=None, progress=None):
        rng = as_generator(rng)
        model = model.astype(np.float64)
        base_bias = model.base_bias_from_rates(data_rates)
        # States of the base model: binary units, unless the view draws its own (a
        # softmax group's states have one category on, which a unit-wise draw breaks)
        draw_base_states = getattr(model, "draw_base_states", None)
        if draw_base_states is not None:
            states = draw_base_states(base_bias, self.n_chains, rng)
        else:
            states = bernoulli_sample(
                np.broadcast_to(sigmoid(base_bias), (self.n_chains, base_bias.size)), rng
            )
        visited = [states]
        n_buffered = states.shape[0]
        every = max(1, self.n_steps // 100)
        for step in range(self.n_steps):
            states = model.gibbs_step(states, rng)
            if progress is not None and (step + 1) % every == 0:
                progress(step + 1, self.n_steps)
            visited.append(states)
            n_buffered += states.shape[0]
            if n_buffered > 200_000:  # keep memory bounded: deduplicate as we go
                visited = [_unique_rows(np.concatenate(visited))]
                n_buffered = visited[0].shape[0]
        distinct = _unique_rows(np.concatenate(visited))
        value = float(logsumexp(model.log_unnormalized(distinct)))
        return LogZ(
            value, None, value, None, method=self.name,
            cost={"n_chains": self.n_chains, "n_steps": self.n_steps,
                  "n_distinct_states": int(distinct.shape[0])},
            kind="lower_bound",
        )


__all__ = ["VisitedStates"]
