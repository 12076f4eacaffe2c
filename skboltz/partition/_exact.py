"""Exact log Z by enumeration."""

from numbers import Integral

import numpy as np
from scipy.special import logsumexp

from .._energy import binary_states

from .._sklearn import Interval
from ..exceptions import TooManyStatesError
from ._base import LogZ, ZEstimator, register


#: Joint states per block of the split-half enumeration (a float64 block of 32 MB).
SPLIT_HALF_BLOCK_STATES = 2**22


def split_half_log_weights(coupling, bias, block_states=SPLIT_HALF_BLOCK_STATES):
    """Yield log-weights whose log-sum-exp is log Z of a general Boltzmann machine.

    The model is p(s) proportional to exp(s^T W s / 2 + b^T s) over s in {0, 1}^n
    (``coupling`` W symmetric with zero diagonal, already divided by the temperature).
    The units are split into a first part A and a second part B of about n/2 units;
    with a, b their states,

        log p*(a, b) = f_A(a) + f_B(b) + a^T W_AB b,

    so a block of A-states against all 2^|B| B-states is one matrix product. Each
    yielded array holds, for one block of A-states, the log-sum over all B-states
    (float64). Measured ~60x faster than evaluating E(s) chunk by chunk.

    Parameters
    ----------
    coupling : ndarray of shape (n_units, n_units)
        Symmetric couplings with zero diagonal.
    bias : ndarray of shape (n_units,)
        Biases.
    block_states : int, default=2**22
        Joint states evaluated per block (bounds the memory: 8 bytes each).

    Yields
    ------
    log_weights : ndarray of shape (n_block,)
        log sum_b p*(a, b) for each A-state a of the block.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.special import logsumexp
    >>> from skboltz.partition._exact import split_half_log_weights
    >>> coupling = np.array([[0.0, 1.0], [1.0, 0.0]])
    >>> log_z = logsumexp(np.concatenate(list(split_half_log_weights(coupling, np.zeros(2)))))
    >>> bool(np.isclose(log_z, np.log(3 + np.e)))
    True
    """
    coupling = np.asarray(coupling, dtype=np.float64)
    bias = np.asarray(bias, dtype=np.float64)
    n_units = bias.shape[0]
    n_a = n_units // 2
    states_b = binary_states(n_units - n_a)
    coupling_ab = coupling[:n_a, n_a:]
    # f_B(b) = b^T W_BB b / 2 + bias_B^T b for all B-states, once.
    log_b = 0.5 * np.einsum(
        "ni,ni->n", states_b @ coupling[n_a:, n_a:], states_b
    ) + states_b @ bias[n_a:]
    # (W_AB B^T) once: each block is then (block, n_a) @ (n_a, 2^|B|).
    projected_b = coupling_ab @ states_b.T
    rows = max(1, block_states // states_b.shape[0])
    for start in range(0, 2**n_a, rows):
        states_a = binary_states(n_a, start, min(start + rows, 2**n_a))
        log_a = 0.5 * np.einsum(
            "ni,ni->n", states_a @ coupling[:n_a, :n_a], states_a
        ) + states_a @ bias[:n_a]
        block = states_a @ projected_b
        block += log_b
        shift = block.max(axis=1, keepdims=True)
        block -= shift
        np.exp(block, out=block)
        yield log_a + shift[:, 0] + np.log(block.sum(axis=1))


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

    def __init__(self, max_states=2**28, chunk_size=4096):
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
