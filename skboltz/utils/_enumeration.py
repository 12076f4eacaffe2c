"""Exact enumeration of pairwise binary models: the split-half log weights.

Shared by the general Boltzmann machine's exact log Z and by layers whose summed-out
partner leaves pairwise couplings (Gaussian units), so it sits below both.
"""

import numpy as np

from ._energy import binary_states


def _logsumexp_rows(A):
    """Row-wise log-sum-exp of a float64 matrix, overwriting ``A``."""
    top = A.max(axis=1, keepdims=True)
    A -= top
    np.exp(A, out=A)
    return np.log(A.sum(axis=1)) + top[:, 0]


#: Joint states per block of the split-half enumeration.
SPLIT_HALF_BLOCK_STATES = 2**18


def split_half_log_weights(coupling, bias, block_states=SPLIT_HALF_BLOCK_STATES):
    """Yield log-weights whose log-sum-exp is log Z of a general Boltzmann machine.

    The model is p(s) proportional to exp(s^T W s / 2 + b^T s) over s in {0, 1}^n
    (``coupling`` W symmetric with zero diagonal, already divided by the temperature).
    The units are split into a first part A and a second part B of about n/2 units,
    and A again into A1 and A2; with a = (a1, a2) and b their states,

        log p*(a, b) = f_A(a) + f_B(b) + a1^T W_1 b + a2^T W_2 b.

    For each B-state the two parts of A contribute independent factors, so the sum
    over B is a matrix product in exp space:

        sum_b exp(log p*(a, b) - f_A(a)) = e^C sum_b X1[a1, b] X2[a2, b],
        X1 = exp(a1^T W_1 b - c(b)),   X2 = exp(a2^T W_2 b + f_B(b) + c(b) - C),

    with c(b) the largest A1-term for b and C the largest exponent: every factor is at
    most 1, the sums of positive terms are accurate to a few ulps, and only
    (2^|A1| + 2^|A2|) 2^|B| exponentials are needed instead of 2^n. A-states whose sum
    falls below 1e-250 (575 nats under the largest term, where float64 would start to
    lose digits) are recomputed in log space. All in float64.

    Parameters
    ----------
    coupling : ndarray of shape (n_units, n_units)
        Symmetric couplings with zero diagonal.
    bias : ndarray of shape (n_units,)
        Biases.
    block_states : int, default=2**18
        Bounds the memory: each matrix product covers at most this many (A-part,
        B-state) pairs (8 bytes each).

    Yields
    ------
    log_weights : ndarray of shape (n_block,)
        log sum_b p*(a, b) for each A-state a of the block.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.special import logsumexp
    >>> from skboltz.partition import split_half_log_weights
    >>> coupling = np.array([[0.0, 1.0], [1.0, 0.0]])
    >>> log_z = logsumexp(np.concatenate(list(split_half_log_weights(coupling, np.zeros(2)))))
    >>> bool(np.isclose(log_z, np.log(3 + np.e)))
    True
    """
    coupling = np.asarray(coupling, dtype=np.float64)
    bias = np.asarray(bias, dtype=np.float64)
    n_units = bias.shape[0]
    n_a = n_units // 2
    n_1 = n_a // 2
    n_b = n_units - n_a
    part_1, part_2 = binary_states(n_1), binary_states(n_a - n_1)
    coupling_1, coupling_2 = coupling[:n_1, n_a:], coupling[n_1:n_a, n_a:]
    states_a = binary_states(n_a)  # code a1 + 2^|A1| a2: the order of sums.ravel()
    log_a = _quadratic_log_weights(states_a, coupling[:n_a, :n_a], bias[:n_a])
    chunk = max(1, block_states // max(part_1.shape[0], part_2.shape[0]))
    sums = np.zeros((part_2.shape[0], part_1.shape[0]))
    top = -np.inf
    for start in range(0, 2**n_b, chunk):
        states_b = binary_states(n_b, start, min(start + chunk, 2**n_b))
        exponent_1 = part_1 @ (coupling_1 @ states_b.T)
        exponent_2 = part_2 @ (coupling_2 @ states_b.T)
        largest_1 = exponent_1.max(axis=0)
        exponent_2 += _quadratic_log_weights(states_b, coupling[n_a:, n_a:], bias[n_a:])
        exponent_2 += largest_1
        chunk_top = exponent_2.max()
        if chunk_top > top:  # rescale what was summed so far to the new largest term
            sums *= np.exp(top - chunk_top)
            top = chunk_top
        exponent_1 -= largest_1
        exponent_2 -= top
        sums += np.exp(exponent_2, out=exponent_2) @ np.exp(exponent_1, out=exponent_1).T
    sums = sums.ravel()
    with np.errstate(divide="ignore"):
        log_weights = log_a + top + np.log(sums)
    lost = np.flatnonzero(sums < 1e-250)
    if lost.size:
        projected = states_a[lost] @ coupling[:n_a, n_a:]
        log_weights[lost] = log_a[lost] + _log_sum_over_states(
            projected, coupling[n_a:, n_a:], bias[n_a:], block_states
        )
    yield log_weights


def _quadratic_log_weights(S, coupling, bias):
    """s^T W s / 2 + b^T s for each row of ``S``."""
    return 0.5 * np.einsum("ni,ni->n", S @ coupling, S) + S @ bias


def _log_sum_over_states(fields, coupling, bias, block_states):
    """log sum_s exp(f . s + s^T W s / 2 + b^T s) over all binary s, for each row f."""
    n_units = bias.shape[0]
    out = np.full(fields.shape[0], -np.inf)
    chunk = max(1, block_states // max(1, fields.shape[0]))
    for start in range(0, 2**n_units, chunk):
        states = binary_states(n_units, start, min(start + chunk, 2**n_units))
        block = fields @ states.T
        block += _quadratic_log_weights(states, coupling, bias)
        out = np.logaddexp(out, _logsumexp_rows(block))
    return out
