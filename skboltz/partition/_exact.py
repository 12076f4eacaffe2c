"""Exact log Z by enumeration."""

from numbers import Integral

from scipy.special import logsumexp

from .._sklearn import Interval
from ..exceptions import TooManyStatesError
from ._base import LogZ, ZEstimator, register


@register("exact")
class Exact(ZEstimator):
    """Exact log Z by enumerating the states of the smallest sufficient set of units.

    For an RBM the smaller layer is enumerated and the other summed in closed form, so
    the cost is ``2 ** min(n_visible, n_hidden)`` free-energy evaluations, in chunks, in
    float64.

    Parameters
    ----------
    max_states : int, default=2**25
        Refuse (with :class:`~skboltz.exceptions.TooManyStatesError`) models that need
        more states than this.
    chunk_size : int, default=4096
        States evaluated per matrix product; bounds the memory used.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz._energy import RBMView
    >>> from skboltz.partition import Exact
    >>> model = RBMView(np.zeros((2, 3)), np.zeros(3), np.zeros(2))
    >>> log_z = Exact().estimate(model)
    >>> bool(np.isclose(log_z.value, 5 * np.log(2)))  # 2**5 states of energy 0
    True
    """

    _parameter_constraints = {
        "max_states": [Interval(Integral, 1, None, closed="left")],
        "chunk_size": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, max_states=2**25, chunk_size=4096):
        self.max_states = max_states
        self.chunk_size = chunk_size

    def is_feasible(self, model):
        return 2**model.n_enumerated_units <= self.max_states

    def estimate(self, model, *, rng=None, data_rates=None):
        n_states = 2**model.n_enumerated_units
        if n_states > self.max_states:
            raise TooManyStatesError(
                f"Exact log Z needs 2**{model.n_enumerated_units} = {n_states:.3g} states, "
                f"more than max_states={self.max_states}. Use z_estimator='ais' "
                "(annealed importance sampling, with error bars) or 'mean_field' / 'tap' "
                "(fast approximations), or raise Exact(max_states=...) if you can wait."
            )
        chunks = [logsumexp(w) for w in model.enumerate_log_weights(self.chunk_size)]
        value = float(logsumexp(chunks))
        return LogZ(value, None, value, value, method=self.name, cost={"n_states": n_states})
