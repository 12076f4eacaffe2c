"""General Boltzmann machines: energies, exact moments, Gibbs sweeps and mean field.

Pure functions of numpy arrays and the read-only :class:`BMView`, as in ``_energy``
(which holds what RBMs and BMs share).
"""

import functools
from dataclasses import dataclass

import numpy as np

from ..utils._capabilities import (
    ANNEALING,
    BINARY,
    ENUMERATION,
    MEAN_FIELD,
    PAIRWISE,
    Capabilities,
)
from ..utils._energy import (
    ModelView,
    _annealing_base,
    base_bias_from_rates,
    binary_states,
    sigmoid,
    softplus,
)
from ..utils._enumeration import (
    SPLIT_HALF_BLOCK_STATES,
    _logsumexp_rows,
    split_half_log_weights,
)
from ..units._layers import BinaryUnits
from ..utils._noise import logistic_noise

# -- general Boltzmann machines ------------------------------------------------------
#
# A BM over units s = (v, h), visible units first, with a symmetric ``coupling`` W
# (zero diagonal) and ``bias`` b, at temperature T:
#
#     E(s) = -1/2 s^T W s - b^T s,        p(s) = exp(-E(s) / T) / Z.
#
# p(s_i = 1 | rest) = sigmoid((W s + b)_i / T).

#: Runs of one-unit colours of consecutive units (all of a fully coupled machine)
#: compute the local fields of this many units with one matrix product; inside a run
#: each unit adds the run's earlier units (one short dot product). Measured with 1000
#: chains at 64 units (a prepared ``GibbsSweep``, ratios to 16 in one process): 8 ->
#: 0.92 (float32) / 0.92 (float64), 32 -> 1.01 / 0.96; at 128 units, 1 (a
#: matrix-vector product per unit, what colouring alone gives) -> 0.7 with 100 chains,
#: about 1.0 with 1000 (``benchmarks/bench_boltzmann.py``). Comparing
#: u < sigmoid(field / T) per unit instead of the field with T logit(u) drawn for the
#: whole sweep was 0.6x as fast (a sigmoid per unit call).
SWEEP_BLOCK = 16

#: Hidden units coupled to each other are summed out exactly up to this many.
MAX_ENUMERATED_HIDDEN = 16


def bm_energy(S, coupling, bias):
    """Energy E(s) of each row of ``S`` (float64 arithmetic not forced)."""
    return -0.5 * np.einsum("ni,ni->n", S @ coupling, S) - S @ bias


def bm_second_moments(S, weights=None):
    """The symmetric matrix of mean s s^T over rows, its diagonal holding mean s.

    One matrix product gives every statistic of the Boltzmann learning rule: the
    off-diagonal entries are <s_i s_j>, the diagonal <s_i> (also correct when ``S``
    holds probabilities rather than binary states). ``weights`` (each row's share
    of the mean: summing to 1, or to about 1 for a weighted fit's minibatch) weight
    the rows; None is the plain mean.
    """
    if weights is None:
        moments = S.T @ S
        moments /= S.shape[0]
        means = S.mean(axis=0)
    else:
        moments = S.T @ (S * weights[:, None])
        means = weights @ S
    np.fill_diagonal(moments, means)
    return moments


def bm_enumeration_plan(coupled, n_visible):
    """How to enumerate a BM cheaply: (conditioned units, list of component unit arrays).

    Given the conditioned units A, the other units fall apart into the connected
    components of their coupling graph (``coupled``: boolean (n, n), True where
    w_ij != 0), which are independent of each other, so the states to visit number
    2^|A| (1 + sum_C 2^|C|) instead of 2^n. A is the cheapest of: no unit, the hidden
    units, the visible units. On an encoder (two groups of visible units joined only
    through the hidden units) conditioning on the hidden units visits
    2^n_hidden * 2 * 2^group states.
    """
    n_units = coupled.shape[0]
    best = None
    for conditioned in (np.arange(0), np.arange(n_visible, n_units), np.arange(n_visible)):
        rest = np.setdiff1d(np.arange(n_units), conditioned)
        components = _connected_components(coupled[np.ix_(rest, rest)])
        plan = (conditioned, [rest[c] for c in components])
        cost = bm_enumeration_size(plan)
        if best is None or cost < best[0]:
            best = (cost, plan)
    return best[1]


def bm_enumeration_size(plan):
    """Number of states a plan visits: each conditioned state, with each component's."""
    conditioned, components = plan
    return 2**conditioned.size * (1 + sum(2**c.size for c in components))


def _connected_components(adjacency):
    """Connected components of a small undirected graph, as sorted index arrays."""
    n = adjacency.shape[0]
    label = np.full(n, -1)
    components = []
    for start in range(n):
        if label[start] >= 0:
            continue
        label[start] = len(components)
        frontier = [start]
        members = [start]
        while frontier:
            neighbours = np.flatnonzero(adjacency[frontier].any(axis=0) & (label < 0))
            label[neighbours] = len(components)
            frontier = list(neighbours)
            members.extend(frontier)
        components.append(np.sort(np.array(members)))
    return components


def bm_exact_moments(coupling, bias, plan, temperature=1.0):
    """Exact second moments <s s^T> (diagonal <s>) of a BM, by enumeration, float64.

    Follows ``plan`` from :func:`bm_enumeration_plan`: every state a of the
    conditioned units A, and for each component C the states c of C given a, with
    log q(c | a) = c^T (b_C + W_CA a) / T + c^T W_CC c / (2T) - log Z_C(a). Then
    p(a) is proportional to exp(a^T W_AA a / (2T) + b_A^T a / T) prod_C Z_C(a); pairs
    in different components (or one in A) are independent given a, so their moments
    are sums over a of p(a) times products of conditional means, and pairs in one
    component sum over that component's states.
    """
    J = np.asarray(coupling, dtype=np.float64) / temperature
    b = np.asarray(bias, dtype=np.float64) / temperature
    conditioned, components = plan
    A = binary_states(conditioned.size)
    log_p = 0.5 * np.einsum("ki,ki->k", A @ J[np.ix_(conditioned, conditioned)], A)
    log_p += A @ b[conditioned]
    M = np.empty((A.shape[0], J.shape[0]))  # conditional means E[s | a]
    M[:, conditioned] = A
    within = []
    for units in components:
        C = binary_states(units.size)
        log_q = (A @ J[np.ix_(conditioned, units)] + b[units]) @ C.T
        log_q += 0.5 * np.einsum("ki,ki->k", C @ J[np.ix_(units, units)], C)
        top = log_q.max(axis=1, keepdims=True)
        q = np.exp(log_q - top)
        z = q.sum(axis=1, keepdims=True)
        q /= z
        log_p += np.log(z[:, 0]) + top[:, 0]
        M[:, units] = q @ C
        within.append((units, C, q))
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    moments = M.T @ (p[:, None] * M)
    for units, C, q in within:
        r = p @ q  # marginal probability of each state of the component
        moments[np.ix_(units, units)] = C.T @ (r[:, None] * C)
    np.fill_diagonal(moments, p @ M)
    return moments


def greedy_colouring(coupled):
    """Colour classes of a coupling graph, coloured greedily in index order.

    Unit i gets the smallest colour that none of its coupled units before it has, so
    the units of one colour share no coupling: given all other units they are
    independent, and one matrix product draws them together. A fully coupled graph
    gives every unit its own colour, in index order (the sequential sweep); a bipartite
    one two colours; hidden units coupled only to visible ones share one colour.

    Parameters
    ----------
    coupled : ndarray of bool, shape (n_units, n_units)
        Symmetric; True where two units are coupled (the diagonal is ignored).

    Returns
    -------
    classes : tuple of ndarray of int
        The units of each colour, in increasing order, colours in the order of their
        first unit (read-only arrays, shared between calls with the same graph).

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.models._boltzmann_energy import greedy_colouring
    >>> bipartite = np.zeros((4, 4), dtype=bool)
    >>> bipartite[:2, 2:] = bipartite[2:, :2] = True
    >>> [c.tolist() for c in greedy_colouring(bipartite)]
    [[0, 1], [2, 3]]
    >>> [c.tolist() for c in greedy_colouring(np.ones((3, 3), dtype=bool))]
    [[0], [1], [2]]
    """
    coupled = np.asarray(coupled, dtype=bool)
    # Cached by the graph's bits: Gibbs learning prepares a sweep at every update.
    return _greedy_colouring(coupled.shape[0], np.packbits(coupled).tobytes())


@functools.lru_cache(maxsize=32)
def _greedy_colouring(n_units, packed):
    bits = np.frombuffer(packed, dtype=np.uint8)
    coupled = np.unpackbits(bits, count=n_units * n_units).reshape(n_units, n_units)
    colour = np.full(n_units, -1)
    for unit in range(n_units):
        earlier = coupled[unit, :unit].astype(bool)
        taken = np.zeros(unit + 1, dtype=bool)  # unit + 1 colours always suffice
        taken[colour[:unit][earlier]] = True
        colour[unit] = np.argmin(taken)
    classes = tuple(np.flatnonzero(colour == c) for c in range(colour.max(initial=-1) + 1))
    for members in classes:
        members.flags.writeable = False
    return classes


class GibbsSweep:
    """Block (chromatic) Gibbs sweeps prepared for one set of parameters.

    The units to update (``units``; the others stay clamped, e.g. the visible units in
    a clamped phase) are coloured greedily in index order (:func:`greedy_colouring`
    of the coupling graph ``coupled`` among them), and the colours are visited in
    turn. Units of one colour share no coupling, so given the rest they are
    independent and all of them, for every chain, are drawn at once: one matrix
    product gives their fields (W s + b)_i, and unit i turns on when its field exceeds
    T * L with L standard logistic noise (``logistic_noise``), i.e. with probability
    sigmoid((W s + b)_i / T). Each colour is a block update from the exact
    conditional, so p(s) proportional to exp(-E(s)/T) is left invariant, whatever
    the colouring (Geman & Geman, "Stochastic relaxation, Gibbs distributions, and
    the Bayesian restoration of images", 1984). A bipartite machine takes two
    products per sweep, like an RBM's block sampler.

    Colours of one unit that follow each other in index order (all of them for a
    fully coupled machine, which is then the sequential single-unit sweep in index
    order) are drawn as before: for a run of up to ``SWEEP_BLOCK`` consecutive units,
    one matrix product gives each unit's threshold T L - b_i - (field from the units
    outside the run and the run's later units); inside the run a unit then needs one
    short dot product (the run's earlier, already updated units) and one comparison.

    The matrices are prepared once (``__init__``), so several sweeps with the same
    parameters (annealing, repeated steps) pay for that once.

    Parameters
    ----------
    coupling : ndarray of shape (n_units, n_units)
    bias : ndarray of shape (n_units,)
    units : array-like of int or None, default=None
        The units to update.
    dtype : dtype or None, default=None
        Dtype of the chains (default: that of ``coupling``).
    coupled : ndarray of bool, shape (n_units, n_units), or None, default=None
        Which units may be coupled (the model's connectivity mask; the couplings
        outside it must be zero). None takes the non-zero couplings. The mask rather
        than the values keeps the colouring the same while training moves the
        couplings.
    """

    def __init__(self, coupling, bias, units=None, dtype=None, coupled=None):
        coupling = np.asarray(coupling)
        self.dtype = np.dtype(coupling.dtype if dtype is None else dtype)
        # C order: the row pieces W[i, first:i] used inside a run are contiguous views.
        W = np.ascontiguousarray(coupling, dtype=self.dtype)
        n_units = W.shape[0]
        units = np.arange(n_units) if units is None else np.unique(units)
        coupled = (W != 0) if coupled is None else np.asarray(coupled, dtype=bool)
        classes = [units[c] for c in greedy_colouring(coupled[np.ix_(units, units)])]
        self.units = np.concatenate(classes) if classes else units  # the visiting order
        self.negative_bias = -np.asarray(bias).astype(self.dtype)[self.units, None]
        self.steps = []
        for members in _merge_single_runs(classes):
            if isinstance(members, tuple):  # (first, size): a run of single units
                first, size = members
                block = slice(first, first + size)
                # w_ij except for j an earlier unit of i's run (added one by one).
                outer = W[block].copy()
                outer[:, block] = np.triu(outer[:, block])
                earlier = [W[first + k, first : first + k] for k in range(size)]
                self.steps.append((first, size, outer, earlier))
                continue
            # A colour: its units' couplings to the span of their neighbours.
            neighbours = np.flatnonzero(coupled[members].any(axis=0))
            span = slice(neighbours[0], neighbours[-1] + 1) if neighbours.size else None
            rows = None if span is None else W[members, span].copy()
            consecutive = members[-1] - members[0] == members.size - 1
            target = slice(members[0], members[-1] + 1) if consecutive else members
            self.steps.append((target, members.size, rows, span))
        self._largest = max((members.size for members in classes), default=0)

    def noise(self, rng, n_chains, n_sweeps=None):
        """Logistic noise for ``n_sweeps`` sweeps (one sweep when None), drawn at once."""
        shape = (self.units.size, n_chains)
        return logistic_noise(rng, shape if n_sweeps is None else (n_sweeps, *shape),
                              self.dtype)

    def __call__(self, states_t, noise, temperature=1.0, bias=None):
        """One sweep over ``states_t`` (n_units, n_chains), in place; ``noise`` is consumed.

        ``states_t[i]`` holds unit i of every chain (the transpose of the usual layout:
        a view of a Fortran-ordered (n_chains, n_units) array). ``noise`` is one
        sweep's logistic noise from :meth:`noise` (a row per unit, in the visiting
        order ``units``); it is overwritten. ``bias``, if given, replaces the prepared
        biases for this sweep (an annealing path changes them at every step; the
        prepared couplings stay).
        """
        thresholds = noise
        if temperature != 1.0:
            thresholds *= self.dtype.type(temperature)
        if bias is None:
            thresholds += self.negative_bias
        else:
            thresholds -= np.asarray(bias).astype(self.dtype)[self.units, None]
        n_chains = states_t.shape[1]
        field = np.empty(n_chains, dtype=self.dtype)
        fields = np.empty((self._largest, n_chains), dtype=self.dtype)
        done = 0
        for step in self.steps:
            if isinstance(step[0], int):  # a run of single units, in order
                first, size, outer, earlier = step
                threshold = thresholds[done : done + size]
                threshold -= outer @ states_t
                np.less(threshold[0], 0, out=states_t[first])
                for k in range(1, size):
                    np.dot(earlier[k], states_t[first : first + k], out=field)
                    np.less(threshold[k], field, out=states_t[first + k])
            else:  # a colour: all its units at once
                target, size, rows, span = step
                threshold = thresholds[done : done + size]
                if rows is None:  # no neighbours: the field is the bias alone
                    product = 0
                else:
                    product = np.matmul(rows, states_t[span], out=fields[:size])
                if isinstance(target, slice):
                    np.less(threshold, product, out=states_t[target])
                else:
                    states_t[target] = np.less(threshold, product)
            done += size
        return states_t


def _merge_single_runs(classes):
    """The sweep's steps: each colour of several units, and runs of up to
    ``SWEEP_BLOCK`` one-unit colours with consecutive indices as (first, size)."""
    steps, run = [], []
    for members in classes:
        if members.size == 1 and (not run or members[0] == run[-1] + 1):
            run.append(int(members[0]))
            continue
        steps.extend(_runs(run))
        run = []
        if members.size == 1:
            run.append(int(members[0]))
        else:
            steps.append(members)
    steps.extend(_runs(run))
    return steps


def _runs(run):
    return [(run[start], min(SWEEP_BLOCK, len(run) - start))
            for start in range(0, len(run), SWEEP_BLOCK)]


def bm_gibbs_sweep(S, coupling, bias, rng, temperature=1.0, units=None, coupled=None):
    """One block Gibbs sweep, in place, over all rows (chains) of ``S``.

    See :class:`GibbsSweep` (``units`` the ones to update, coloured by the coupling
    graph ``coupled``). Pass a Fortran-ordered ``S`` (``np.asfortranarray``) to avoid
    two transposing copies. Returns ``S``.
    """
    n_chains = S.shape[0]
    if n_chains == 0 or (units is not None and np.size(units) == 0):
        return S
    sweep = GibbsSweep(coupling, bias, units, S.dtype, coupled)
    # states_t[i] is unit i over all chains, contiguous (a view when S is F-ordered).
    states_t = S.T if S.flags.f_contiguous else np.ascontiguousarray(S.T)
    sweep(states_t, sweep.noise(rng, n_chains), temperature)
    if not np.shares_memory(states_t, S):
        S[...] = states_t.T
    return S


class BMAnnealing:
    """The chains of annealed importance sampling (AIS) on a general Boltzmann machine.

    The path runs from the independent model with biases ``base_bias`` (a) at
    beta = 0 to the model at beta = 1, over all units:
    ``log p*_beta(s) = beta (s^T W s / 2 + b^T s) / T + (1 - beta) a^T s``. Same
    interface as :class:`RBMAnnealing`; the transitions are block Gibbs sweeps in
    ``dtype`` (set up once, coloured by the view's coupling mask: the same colours at
    every beta), the log weights are accumulated in float64.
    """

    def __init__(self, view, base_bias, n_chains, rng, dtype=np.float32):
        dtype = np.dtype(dtype)
        self.dtype = dtype
        self.n_chains = n_chains
        self._coupling = view.coupling_matrix()
        self._bias = view.bias_vector()
        self._base = np.asarray(base_bias, dtype=np.float64)
        # Prepared once; each beta passes its own bias (see transition).
        self._sweep = GibbsSweep(self._coupling, np.zeros(self._base.size), None, dtype,
                                 view.coupling_mask)
        seed = int(rng.integers(np.iinfo(np.int64).max))
        self._rng = np.random.Generator(np.random.SFC64(seed))
        self.states = np.empty((n_chains, self._base.size), dtype=dtype, order="F")

    def start_from_base(self):
        """Draw every chain's state from the base model."""
        noise = logistic_noise(self._rng, self.states.shape, self.dtype)
        np.greater(self._base.astype(self.dtype), noise, out=self.states)

    def set_states(self, X):
        """Start the chains at the rows ``X`` (one row per chain)."""
        self.states[...] = X

    def add_log_ratio(self, beta, beta_next, log_w, sign=1.0, then_sample_at=None):
        """``log_w += sign * (log p*_beta_next(s) - log p*_beta(s))`` for the states."""
        S = self.states.astype(np.float64)
        slope = 0.5 * np.einsum("ni,ni->n", S @ self._coupling, S) + S @ (self._bias - self._base)
        log_w += (sign * (beta_next - beta)) * slope

    def transition(self, beta):
        """One block Gibbs sweep of every chain at ``beta``."""
        if beta == 0:  # the base model: independent units
            self.start_from_base()
            return
        # Field beta (W s + b) / T + (1 - beta) a, i.e. temperature 1 / beta.
        bias = self._bias + ((1.0 - beta) / beta) * self._base
        noise = self._sweep.noise(self._rng, self.n_chains)
        self._sweep(self.states.T, noise, 1.0 / beta, bias=bias)  # F order: .T is a view


def bm_hidden_log_sums(V, coupling, bias, n_visible, temperature=1.0, chunk_elements=2**20):
    """log sum_h exp(-E(v, h) / T) for each row of ``V``, hidden units summed exactly.

    Closed form (softplus) when the hidden units are not coupled to each other,
    otherwise by enumerating the 2**n_hidden hidden states in chunks of rows. float64.
    """
    V = np.asarray(V, dtype=np.float64)
    J = np.asarray(coupling, dtype=np.float64) / temperature
    c = np.asarray(bias, dtype=np.float64) / temperature
    vis, hid = slice(0, n_visible), slice(n_visible, None)
    out = 0.5 * np.einsum("ni,ni->n", V @ J[vis, vis], V) + V @ c[vis]
    n_hidden = J.shape[0] - n_visible
    if n_hidden == 0:
        return out
    fields = V @ J[vis, hid] + c[hid]
    J_hh = J[hid, hid]
    if not J_hh.any():
        return out + softplus(fields).sum(axis=1)
    H = binary_states(n_hidden)
    pair_terms = 0.5 * np.einsum("ki,ki->k", H @ J_hh, H)
    rows = max(1, chunk_elements // H.shape[0])
    for start in range(0, V.shape[0], rows):
        log_w = fields[start : start + rows] @ H.T
        log_w += pair_terms
        out[start : start + rows] += _logsumexp_rows(log_w)
    return out


def bm_hidden_marginals(V, coupling, bias, n_visible, temperature=1.0, chunk_elements=2**20):
    """P(h_j = 1 | v) for each row of ``V``, exact (closed form or enumeration), float64."""
    V = np.asarray(V, dtype=np.float64)
    n_hidden = np.shape(coupling)[0] - n_visible
    if not np.any(np.asarray(coupling)[n_visible:, n_visible:]):
        J = np.asarray(coupling, dtype=np.float64)[:n_visible, n_visible:]
        c = np.asarray(bias, dtype=np.float64)[n_visible:]
        return sigmoid((V @ J + c) / temperature)
    out = np.empty((V.shape[0], n_hidden))
    rows = max(1, chunk_elements >> n_hidden)
    for start in range(0, V.shape[0], rows):
        H, Q = bm_hidden_code_posteriors(
            V[start : start + rows], coupling, bias, n_visible, temperature
        )
        out[start : start + rows] = Q @ H
    return out


def bm_hidden_code_posteriors(V, coupling, bias, n_visible, temperature=1.0):
    """Every hidden state and its exact probability given each row of ``V``: (H, Q).

    ``H`` (2**n_hidden, n_hidden) lists the hidden states (``binary_states``), ``Q``
    (n_rows, 2**n_hidden) holds P(h = H[k] | v) for each row (rows sum to 1). float64.
    """
    V = np.asarray(V, dtype=np.float64)
    J = np.asarray(coupling, dtype=np.float64) / temperature
    c = np.asarray(bias, dtype=np.float64) / temperature
    vis, hid = slice(0, n_visible), slice(n_visible, None)
    H = binary_states(J.shape[0] - n_visible)
    Q = (V @ J[vis, hid] + c[hid]) @ H.T
    Q += 0.5 * np.einsum("ki,ki->k", H @ J[hid, hid], H)
    Q -= Q.max(axis=1, keepdims=True)
    np.exp(Q, out=Q)
    Q /= Q.sum(axis=1, keepdims=True)
    return H, Q


def bm_code_moments(V, H, weights):
    """Weighted second moments of the joint states (v_n, h_k): one matrix, float64.

    Returns sum over rows n and hidden states k of ``weights[n, k]`` s s^T with
    s = (v_n, H[k]), the diagonal holding the weighted sums of s (so, as in
    :func:`bm_second_moments`, also right for visible values in [0, 1]). Done block by
    block, never forming the n_rows * 2**n_hidden joint states.
    """
    V = np.asarray(V, dtype=np.float64)
    n_visible = V.shape[1]
    row_weights = weights.sum(axis=1)
    state_weights = weights.sum(axis=0)
    hidden_given_rows = weights @ H  # sum_k weights[n, k] H[k]
    moments = np.empty((n_visible + H.shape[1],) * 2)
    vis, hid = slice(0, n_visible), slice(n_visible, None)
    moments[vis, vis] = V.T @ (row_weights[:, None] * V)
    moments[vis, hid] = V.T @ hidden_given_rows
    moments[hid, vis] = moments[vis, hid].T
    moments[hid, hid] = H.T @ (state_weights[:, None] * H)
    np.fill_diagonal(moments, np.concatenate([row_weights @ V, state_weights @ H]))
    return moments


@dataclass(frozen=True, eq=False)
class BMView(ModelView):
    """Read-only view of a general Boltzmann machine: its :class:`ModelView`.

    The model is p(s) proportional to exp(-E(s) / T) with E(s) = -s^T W s / 2 - b^T s
    over binary units s = (v, h), visible units first. Sampler states hold all units
    (a step is one block Gibbs sweep, coloured by the coupling mask: units that share
    no coupling are drawn together), and exact enumeration lists all 2**n_units
    states (split in two halves, one matrix product per block).

    Parameters
    ----------
    coupling : ndarray of shape (n_units, n_units)
        Symmetric couplings W with zero diagonal, visible units first
        (``BoltzmannMachine.coupling_``).
    bias : ndarray of shape (n_units,)
        Biases b (``BoltzmannMachine.bias_``).
    n_visible : int
        The first ``n_visible`` units are visible.
    temperature : float, default=1.0
        T in p(s) proportional to exp(-E(s) / T).
    mask : ndarray of bool, shape (n_units, n_units), or None, default=None
        Which pairs of units may be coupled (``BoltzmannMachine.connectivity_mask_``);
        the couplings outside it must be zero. The Gibbs sampler colours the units by
        it; None takes the non-zero couplings.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.partition import Exact
    >>> from skboltz.views import BMView
    >>> view = BMView(np.array([[0.0, 1.0], [1.0, 0.0]]), np.zeros(2), n_visible=1)
    >>> bool(np.isclose(Exact().estimate(view).value, np.log(3 + np.e)))
    True
    """

    coupling: np.ndarray
    bias: np.ndarray
    n_visible: int
    temperature: float = 1.0
    mask: np.ndarray | None = None

    #: Binary units with any symmetric couplings: the general learning rule, and every
    #: log Z estimator.
    #: The layer class of the rows an estimator's ``X`` holds.
    input_units = BinaryUnits

    capabilities = Capabilities(
        units=(("visible", BINARY), ("hidden", BINARY)),
        operations={PAIRWISE, ENUMERATION, ANNEALING, MEAN_FIELD},
    )

    @property
    def n_units(self):
        """Number of units, visible and hidden."""
        return self.coupling.shape[0]

    @property
    def coupling_mask(self):
        """Which units may be coupled: ``mask``, or the non-zero couplings without one.

        A boolean array of shape (n_units, n_units); the Gibbs sweeps colour by it.
        """
        return self.coupling != 0 if self.mask is None else self.mask

    @property
    def n_hidden(self):
        """Number of hidden units."""
        return self.n_units - self.n_visible

    @property
    def dtype(self):
        """Floating-point type of the parameters."""
        return self.coupling.dtype

    def astype(self, dtype):
        return BMView(
            self.coupling.astype(dtype), self.bias.astype(dtype), self.n_visible,
            self.temperature, self.mask,
        )

    # -- energies and conditionals ---------------------------------------------------
    def energy(self, S):
        """Compute the energy E(s) = -s^T W s / 2 - b^T s of each row (all units).

        Parameters
        ----------
        S : ndarray of shape (n_rows, n_units)
            States of all units, visible first.

        Returns
        -------
        energy : ndarray of shape (n_rows,)
            E(s) of each row.
        """
        return bm_energy(S, self.coupling, self.bias)

    def unit_probability(self, S):
        """Compute P(s_i = 1 | all other units) for every unit of every row.

        Parameters
        ----------
        S : ndarray of shape (n_rows, n_units)
            States (or probabilities) of all units, visible first.

        Returns
        -------
        probability : ndarray of shape (n_rows, n_units)
            The value sigmoid((W s + b)_i / T) of each unit i.
        """
        return sigmoid((S @ self.coupling + self.bias) / self.temperature)

    def hidden_probability(self, V):
        return bm_hidden_marginals(
            V, self.coupling, self.bias, self.n_visible, self.temperature
        )

    def free_energy(self, V):
        return -bm_hidden_log_sums(
            V, self.coupling, self.bias, self.n_visible, self.temperature
        )

    def conditional_hidden_view(self, v):
        """Return the Boltzmann machine of the hidden units given one visible row.

        Its partition function is sum_h exp(-E(v, h) / T) up to the visible-only terms,
        so any log Z estimator can sum out the hidden units of a row.

        Parameters
        ----------
        v : ndarray of shape (n_visible,)
            The visible row.

        Returns
        -------
        view : BMView
            The machine over the hidden units (all of them counted as visible units).
        """
        hid = slice(self.n_visible, None)
        bias = self.bias[hid] + v @ self.coupling[: self.n_visible, hid]
        mask = None if self.mask is None else self.mask[hid, hid]
        return BMView(self.coupling[hid, hid], bias, self.n_hidden, self.temperature, mask)

    # -- inference: what the estimators' transform, reconstruct, gibbs and sample use --
    @property
    def hidden_uncoupled(self):
        """Whether no two hidden units are coupled (so P(h | v) factorises)."""
        n_visible = self.n_visible
        return not np.any(self.coupling[n_visible:, n_visible:])

    @property
    def hidden_sum_is_exact(self):
        """Whether the hidden units are summed out exactly.

        True when they are not coupled to each other (closed form) or there are at
        most ``MAX_ENUMERATED_HIDDEN`` of them (enumerated).
        """
        return self.n_hidden <= MAX_ENUMERATED_HIDDEN or self.hidden_uncoupled

    @property
    def free_energy_is_cheap(self):
        """Whether :meth:`free_energy` is exact and cheap.

        True in closed form, or for a sum over at most 2**10 hidden states per row.
        """
        return self.hidden_uncoupled or self.n_hidden <= 10

    def hidden_marginals(self, V):
        """Compute P(h_j = 1 | v) for each row: exact when feasible, else mean field.

        Exact when the hidden units are not coupled to each other or there are at most
        ``MAX_ENUMERATED_HIDDEN`` of them; otherwise the mean-field magnetisations of
        the hidden units with the visible units clamped.

        Parameters
        ----------
        V : {ndarray, sparse matrix} of shape (n_rows, n_visible)
            Visible rows.

        Returns
        -------
        probability : ndarray of shape (n_rows, n_hidden)
            The hidden units' marginals, in float64.
        """
        V = np.asarray(V.toarray() if hasattr(V, "toarray") else V, dtype=np.float64)
        n_visible = self.n_visible
        if self.n_hidden == 0:
            return np.zeros((V.shape[0], 0))
        if self.hidden_sum_is_exact:
            return self.hidden_probability(V)
        J, c = self.coupling_matrix(), self.bias_vector()
        start = np.empty((V.shape[0], self.n_units))
        start[:, :n_visible] = V
        start[:, n_visible:] = sigmoid(V @ J[:n_visible, n_visible:] + c[n_visible:])
        M, _ = bm_mean_field(J, c, start, n_visible)
        return M[:, n_visible:]

    def reconstruct(self, V):
        # Each visible unit's P(v_i = 1 | the row's other visible units, the hidden
        # units at their marginals), in float64 through a float64 view.
        V = np.asarray(V.toarray() if hasattr(V, "toarray") else V, dtype=np.float64)
        S = np.hstack([V, self.hidden_marginals(V)])
        return self.unit_probability(S)[:, : self.n_visible]

    def visible_gibbs_step(self, V, rng):
        """Run one Gibbs step v -> h -> v from each visible row.

        The hidden units are drawn given the row (exactly when they are not coupled to
        each other; otherwise by one block Gibbs sweep over them, started from
        independent draws of their :meth:`hidden_marginals`), then the visible units
        by one block Gibbs sweep given the hidden units, at the model's temperature.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_visible)
            Visible states.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        V_new : ndarray of shape (n_rows, n_visible)
            Binary visible states, in the dtype of ``V``.
        """
        n_visible, n_units = self.n_visible, self.n_units
        S = np.empty((V.shape[0], n_units), dtype=V.dtype, order="F")
        S[:, :n_visible] = V
        marginals = self.hidden_marginals(V)
        S[:, n_visible:] = rng.random(marginals.shape) < marginals
        hidden, visible = np.arange(n_visible, n_units), np.arange(n_visible)
        mask = self.coupling_mask
        if self.n_hidden and not self.hidden_uncoupled:
            bm_gibbs_sweep(S, self.coupling, self.bias, rng, self.temperature, hidden, mask)
        bm_gibbs_sweep(S, self.coupling, self.bias, rng, self.temperature, visible, mask)
        return np.ascontiguousarray(S[:, :n_visible])

    def draw_samples(self, n_samples, n_steps, start, rng, means=False):
        # Visible units start on at the rates `start`, hidden units at 1/2; then
        # block Gibbs sweeps over all units at the temperature (coloured by the
        # coupling mask: units that share no coupling are drawn together).
        probability = np.full((n_samples, self.n_units), 0.5)
        probability[:, : self.n_visible] = start
        if means and n_steps == 0:
            return probability[:, : self.n_visible].astype(self.dtype)
        S = np.asfortranarray(rng.random(probability.shape) < probability, dtype=self.dtype)
        sweep = GibbsSweep(self.coupling, self.bias, None, self.dtype,
                           self.coupling_mask)  # prepared once
        for _ in range(n_steps):
            sweep(S.T, sweep.noise(rng, n_samples), self.temperature)
        if means:  # each visible unit's P(v_i = 1 | the other units) in the last state
            return np.ascontiguousarray(self.unit_probability(S)[:, : self.n_visible])
        return np.ascontiguousarray(S[:, : self.n_visible])

    # -- sampling protocol -----------------------------------------------------------
    @property
    def n_state_units(self):
        """Units of a sampler state."""
        return self.n_units

    def log_unnormalized(self, S):
        S = np.asarray(S, dtype=np.float64)
        return -bm_energy(S, self.coupling.astype(np.float64), self.bias.astype(np.float64)) / (
            self.temperature
        )

    def gibbs_step(self, S, rng):
        return bm_gibbs_sweep(
            np.array(S, dtype=self.dtype, order="F"), self.coupling, self.bias, rng,
            self.temperature, coupled=self.coupling_mask,
        )

    def interpolate(self, beta, base_bias):
        T = self.temperature
        return BMView(
            (beta / T) * self.coupling,
            ((1.0 - beta) * np.asarray(base_bias) + (beta / T) * self.bias).astype(self.dtype),
            self.n_visible,
            1.0,
            self.mask,
        )

    def base_bias_from_rates(self, data_rates):
        return base_bias_from_rates(data_rates, self.n_visible, self.n_state_units)

    def base_log_partition(self, base_bias):
        return float(softplus(np.asarray(base_bias, dtype=np.float64)).sum())

    def annealing_base(self, data_rates, kind="data"):
        """Return the biases of an independent base model for annealing, all units.

        ``kind="data"``: visible units at the logits of the clipped data rates, hidden
        units 0. ``"response"``: the same visible units, hidden units at their input
        from the visible units at the clipped data rates r, ``(W_hv r + b_h) / T``
        (r = 1/2 without data). ``"model"``: the machine's own biases ``b / T``, so
        that the path anneals the couplings only. An optional member of the view
        protocol, used by :class:`~skboltz.partition.AIS` when present.

        Parameters
        ----------
        data_rates : ndarray of shape (n_visible,) or None
            Mean of each visible unit over the training data.
        kind : {"data", "response", "model"}, default="data"
            Which base model.

        Returns
        -------
        base_bias : ndarray of shape (n_units,)
            The base model's biases, visible units first, in float64.
        """
        hid, vis = slice(self.n_visible, None), slice(0, self.n_visible)
        return _annealing_base(self, data_rates, kind, lambda rates: (
            self.coupling_matrix()[hid, vis] @ rates + self.bias_vector()[hid]
        ))

    def annealing(self, base_bias, n_chains, rng, dtype=np.float32):
        """Return annealed-importance-sampling chains from a base model to this one.

        An optional member of the view protocol: :class:`~skboltz.partition.AIS`
        runs these chains when present.

        Parameters
        ----------
        base_bias : ndarray of shape (n_units,)
            Biases of the independent base model.
        n_chains : int
            Number of chains.
        rng : numpy.random.Generator
            Seeds the chains' random numbers.
        dtype : float32 or float64, default=float32
            Type of the sweeps (log weights are accumulated in float64).

        Returns
        -------
        chains : BMAnnealing
            With ``start_from_base``, ``set_states``, ``add_log_ratio`` and
            ``transition``.
        """
        return BMAnnealing(self, base_bias, n_chains, rng, dtype)

    # -- mean field ------------------------------------------------------------------
    def coupling_matrix(self):
        return np.asarray(self.coupling, dtype=np.float64) / self.temperature

    def bias_vector(self):
        return np.asarray(self.bias, dtype=np.float64) / self.temperature

    # -- exact enumeration -----------------------------------------------------------
    @property
    def n_enumerated_units(self):
        """Units whose states exact enumeration lists."""
        return self.n_units

    def with_fewer_enumerated_units(self, n_units):
        """Return the machine of the first ``n_units`` units (the others removed).

        An optional member of the view protocol, as for
        :meth:`RBMView.with_fewer_enumerated_units`.

        Parameters
        ----------
        n_units : int
            Units to keep, visible units first.

        Returns
        -------
        view : BMView
            A view over slices of the same arrays.
        """
        mask = None if self.mask is None else self.mask[:n_units, :n_units]
        return BMView(self.coupling[:n_units, :n_units], self.bias[:n_units],
                      min(self.n_visible, n_units), self.temperature, mask)

    def enumerate_log_weights(self, chunk_size):
        yield from split_half_log_weights(
            self.coupling_matrix(), self.bias_vector(), max(chunk_size, SPLIT_HALF_BLOCK_STATES)
        )


class BMLayout:
    """Named blocks of a general Boltzmann machine's packed parameters (and velocity).

    The array has shape (n_units + 1, n_units), visible units first::

        [ W  (n_units, n_units): symmetric couplings, zero diagonal ]
        [ b  (n_units,): biases                                    ]

    Each block is an index: ``params[BMLayout.coupling]`` is W, a view.
    """

    coupling = np.s_[:-1]
    bias = np.s_[-1]
    #: The block weight decay acts on.
    weights = coupling

    @staticmethod
    def pack(coupling, bias, dtype):
        """A new packed array holding the couplings and the biases."""
        coupling = np.asarray(coupling)
        params = np.empty((coupling.shape[0] + 1, coupling.shape[0]), dtype=dtype)
        params[BMLayout.coupling] = coupling
        params[BMLayout.bias] = bias
        return params

    @staticmethod
    def view(params, n_visible, temperature=1.0, mask=None):
        """The :class:`BMView` of packed parameters (views into ``params``, no copies)
        with the connectivity ``mask`` (None: the non-zero couplings)."""
        return BMView(params[BMLayout.coupling], params[BMLayout.bias], n_visible,
                      temperature, mask)


def bm_mean_field(coupling, bias, M, first_free=0, damping=0.5, max_iter=500, tol=1e-7):
    """Damped mean-field fixed point m = sigmoid(J m + c) for each row of ``M``.

    ``coupling`` J and ``bias`` c are already divided by T. Units before ``first_free``
    keep their values in ``M`` (clamped); the others start from ``M`` and are iterated
    synchronously, m <- damping m + (1 - damping) sigmoid(J m + c), until no unit moves
    more than ``tol``. Returns ``(M, converged)`` with ``M`` a new float64 array.
    """
    J = np.asarray(coupling, dtype=np.float64)
    c = np.asarray(bias, dtype=np.float64)
    M = np.array(M, dtype=np.float64)
    free = slice(first_free, None)
    if M.shape[1] == first_free or M.shape[0] == 0:
        return M, True
    fixed_field = M[:, :first_free] @ J[:first_free, free] + c[free]
    J_free = J[free, free]
    m = M[:, free]
    for _ in range(max_iter):
        target = sigmoid(m @ J_free + fixed_field)
        change = np.abs(target - m).max()
        m *= damping
        m += (1.0 - damping) * target
        if change < tol:
            return M, True
    return M, False


def bm_linear_response(coupling, m, clip=1e-9):
    """Linear-response covariances C = A^-1, A = diag(1 / (m (1 - m))) - J (Kappen 1998).

    ``coupling`` J is already divided by T; ``m`` has shape (n,) or (n_rows, n) (one
    covariance matrix per row). Computed as D^1/2 (I - D^1/2 J D^1/2)^-1 D^1/2 with
    D = m (1 - m), which stays finite when units saturate. float64.
    """
    m = np.clip(np.asarray(m, dtype=np.float64), clip, 1 - clip)
    root = np.sqrt(m * (1 - m))
    A = np.eye(m.shape[-1]) - root[..., :, None] * coupling * root[..., None, :]
    return root[..., :, None] * np.linalg.inv(A) * root[..., None, :]
