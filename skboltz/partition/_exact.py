"""Exact log Z by enumeration."""

import time
from numbers import Integral

import numpy as np
from scipy.special import logsumexp

from ..utils._capabilities import ENUMERATION, Requires
from ..utils._enumeration import SPLIT_HALF_BLOCK_STATES, split_half_log_weights
from ..utils._sklearn import Interval
from ..exceptions import TooManyStatesError
from ._base import LogZ, ZEstimator, register


def split_half_log_partition(coupling, bias, block_states=SPLIT_HALF_BLOCK_STATES):
    """Exact log Z of a general Boltzmann machine by split-half enumeration.

    See :func:`split_half_log_weights` for the model and the method.

    Parameters
    ----------
    coupling : ndarray of shape (n_units, n_units)
        Symmetric couplings with zero diagonal, already divided by the temperature.
    bias : ndarray of shape (n_units,)
        Biases, already divided by the temperature.
    block_states : int
        Joint states evaluated per matrix product (bounds the memory used).

    Returns
    -------
    log_z : float
        The log-partition function, accumulated in float64.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.partition._exact import split_half_log_partition
    >>> bool(np.isclose(split_half_log_partition(np.zeros((3, 3)), np.zeros(3)),
    ...                 3 * np.log(2)))
    True
    """
    return float(logsumexp(np.concatenate(list(
        split_half_log_weights(coupling, bias, block_states)
    ))))


@register("exact")
class Exact(ZEstimator):
    """Exact log Z by enumerating the states of the smallest sufficient set of units.

    For an RBM the smaller layer is enumerated and the other summed in closed form, so
    the cost is ``2 ** min(n_visible, n_hidden)`` free-energy evaluations, in chunks, in
    float64. For a general Boltzmann machine all ``2 ** n_units`` states are summed by
    split-half enumeration (:func:`split_half_log_weights`), one matrix product per
    block.

    Parameters
    ----------
    max_states : int, default=2**28
        Refuse (with :class:`~skboltz.exceptions.TooManyStatesError`) models that need
        more states than this.
    chunk_size : int, default=4096
        States evaluated per matrix product; bounds the memory used.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.views import RBMView
    >>> from skboltz.partition import Exact
    >>> model = RBMView(np.zeros((2, 3)), np.zeros(3), np.zeros(2))
    >>> log_z = Exact().estimate(model)
    >>> bool(np.isclose(log_z.value, 5 * np.log(2)))  # 2**5 states of energy 0
    True
    """

    requires = Requires(operations={ENUMERATION})

    _parameter_constraints = {
        "max_states": [Interval(Integral, 1, None, closed="left")],
        "chunk_size": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, max_states=2**28, chunk_size=4096):
        self.max_states = max_states
        self.chunk_size = chunk_size

    def is_feasible(self, model):
        return 2**model.n_enumerated_units <= self.max_states

    def check_states(self, n_enumerated_units):
        """Refuse a model whose exact log Z sums over more than ``max_states`` states.

        Every array namespace's enumeration asks this first, so the limit is one check.

        Parameters
        ----------
        n_enumerated_units : int
            The number of binary units the enumeration sums over (the other layer is
            summed out analytically).

        Raises
        ------
        TooManyStatesError
            If ``2**n_enumerated_units`` exceeds ``max_states``; the message names the
            estimators that scale.
        """
        n_states = 2**n_enumerated_units
        if n_states > self.max_states:
            raise TooManyStatesError(
                f"Exact log Z needs 2**{n_enumerated_units} = {n_states:.3g} states, "
                f"more than max_states={self.max_states}. Use z_estimator='ais' "
                "(annealed importance sampling, with error bars) or 'mean_field' / 'tap' "
                "(fast approximations), or raise Exact(max_states=...) if you can wait."
            )

    def estimate(self, model, *, rng=None, data_rates=None, progress=None):
        self.check_states(model.n_enumerated_units)
        n_states = 2**model.n_enumerated_units
        # Each chunk as (largest log weight, sum of exp(w - largest)); one log-sum-exp
        # at the end (scipy's costs ~0.1 ms a call, as much as a chunk's own work).
        tops, sums = [], []
        done = 0
        for log_weights in model.enumerate_log_weights(self.chunk_size):
            top = log_weights.max()
            tops.append(top)
            sums.append(np.exp(log_weights - top).sum())
            if progress is not None:  # one weight per state, or per block of states
                done = min(n_states - 1, done + log_weights.size)
                progress(done, n_states)
        value = float(logsumexp(tops, b=sums))
        if progress is not None:
            progress(n_states, n_states)
        return LogZ(value, None, value, value, method=self.name, cost={"n_states": n_states},
                    kind="exact")

    def estimated_seconds(self, model, *, data_rates=None, rng=None):
        """A rough forecast of the seconds :meth:`estimate` will take (None: quick).

        Times the enumeration of a smaller model (the same parameters with fewer
        enumerated units, at most 2**24 states) and scales by the number of states.
        Machine-dependent; for progress reports.

        Parameters
        ----------
        model : model view
            Read-only parameters of the model.
        data_rates : ndarray of shape (n_visible,) or None
            Ignored.
        rng : numpy.random.Generator, int or None
            Ignored.

        Returns
        -------
        seconds : float or None
            The forecast; None for models of at most 2**18 states (milliseconds).

        Examples
        --------
        >>> import numpy as np
        >>> from skboltz.views import RBMView
        >>> from skboltz.partition import Exact
        >>> model = RBMView(np.full((22, 30), 0.01), np.zeros(30), np.zeros(22))
        >>> bool(Exact().estimated_seconds(model) > 0)
        True
        """
        n_units = model.n_enumerated_units
        fewer = getattr(model, "with_fewer_enumerated_units", None)  # optional member
        if n_units <= 18 or fewer is None:
            return None
        probe = fewer(min(n_units - 2, 24))
        start = time.perf_counter()
        self.estimate(probe)
        return (time.perf_counter() - start) * 2.0 ** (n_units - probe.n_enumerated_units)

