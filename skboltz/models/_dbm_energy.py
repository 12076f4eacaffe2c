"""Deep Boltzmann machines: energies, exact sums, two-colour block Gibbs, mean field, AIS.

A deep Boltzmann machine (Salakhutdinov & Hinton, "Deep Boltzmann machines", AISTATS
2009) has binary layers x_0 = v (visible), x_1, ..., x_L (hidden), each coupled only to
the layers next to it, with ``weights`` W_k of shape (n_k, n_{k-1}) (the orientation of
``RBM.components_``: the upper layer's units are rows) and ``biases`` b_k:

    E(x) = -sum_{k=1..L} x_k^T W_k x_{k-1} - sum_{k=0..L} b_k^T x_k,    p(x) = exp(-E(x)) / Z.

Given its neighbours a layer's units are independent, on with probability sigmoid(u_k),
u_k = b_k + W_k x_{k-1} + W_{k+1}^T x_{k+1} (the terms of missing neighbours left out).
The even layers (v, x_2, ...) share no coupling, nor do the odd ones: the machine has
two colours. Given the even layers the odd ones are independent units and sum out in
closed form,

    log p*(x_even) = sum_{k even} b_k^T x_k + sum_{k odd} sum_j softplus(u_k)_j,

and the same holds with the parities swapped. That is the view's sampler state (the
even layers, visible first; an RBM's visible units are the case L = 1), its Gibbs step
(odd layers given the even ones, then the even ones given the odd ones), its exact log Z
(the smaller of the two sets enumerated, the other summed) and its AIS path (the odd
layers summed out at every temperature, as Salakhutdinov & Hinton do). Pure functions
of numpy arrays and the read-only :class:`DBMView`.
"""

import functools
from dataclasses import dataclass

import numpy as np
from scipy.special import entr

from ..utils._capabilities import ANNEALING, BINARY, ENUMERATION, LAYERED, MEAN_FIELD, Capabilities
from ..utils._energy import (
    ANNEALING_BASES,
    ModelView,
    base_bias_from_rates,
    binary_states,
    clipped_rates,
    sigmoid,
    softplus,
    softplus_row_sums,
)
from ..units._layers import BinaryUnits
from ..utils._noise import Noise, logistic_noise
from ..exceptions import TooManyStatesError

#: ``free_energy`` and ``hidden_probability`` enumerate at most this many hidden states
#: per row (the hidden layers of one parity; the others are summed in closed form).
MAX_HIDDEN_STATES = 2**20

#: Elements of the (rows x enumerated states x layer units) blocks of the hidden sums.
_BLOCK_ELEMENTS = 2**22

#: Mean-field updates of every layer at most, for inference (transform, reconstruct,
#: gibbs): rows converge in a few dozen.
INFERENCE_MAX_ITER = 200


def layer_input(layers, weights, biases, k, n_rows=1):
    """Input u_k = b_k + W_k x_{k-1} + W_{k+1}^T x_{k+1} of layer k, rows aligned.

    ``layers`` lists the states (or magnetisations) of every layer, shape (n_rows,
    n_k) each; only the neighbours of layer k are read (the others may be None). A
    layer without neighbours gets ``n_rows`` copies of its bias.
    """
    below = layers[k - 1] @ weights[k - 1].T if k > 0 else None
    above = layers[k + 1] @ weights[k] if k + 1 < len(biases) else None
    if below is None and above is None:
        return np.tile(biases[k], (n_rows, 1))
    total = below if above is None else (above if below is None else below + above)
    total += biases[k]
    return total


def _n_rows(layers):
    """Rows of the given layers (1 when every layer is None: one empty state)."""
    return next((layer.shape[0] for layer in layers if layer is not None), 1)


def dbm_energy(layers, weights, biases):
    """Energy E(x) of each row, ``layers`` the states of every layer (rows aligned)."""
    energy = -sum(layer @ bias for layer, bias in zip(layers, biases))
    for k in range(1, len(biases)):
        energy -= np.einsum("nj,nj->n", layers[k] @ weights[k - 1], layers[k - 1])
    return energy


def parity_log_weights(layers, weights, biases, parity):
    """log p*(x_P) of each row: the layers of ``parity`` P given, the others summed out.

    ``sum_{k in P} b_k^T x_k + sum_{k not in P} sum_j softplus(u_k)_j`` in float64
    (``layers[k]`` may be None for the summed layers).
    """
    n_rows = _n_rows(layers)
    out = np.zeros(n_rows)
    for k in range(len(biases)):
        if k % 2 == parity:
            out += layers[k] @ biases[k]
        else:
            inputs = layer_input(layers, weights, biases, k, n_rows)
            out += softplus_row_sums(inputs, overwrite=True)
    return out


def dbm_gibbs_sweep(layers, weights, biases, rng, clamp_visible=False, noise=None):
    """One two-colour block Gibbs sweep, in place: the odd layers, then the even ones.

    Each layer's units are drawn at once given their neighbours (one or two matrix
    products and one comparison with logistic noise per layer): the odd layers are
    independent given the even ones and vice versa, so both half-sweeps are exact
    block updates and p(x) is left invariant. With ``clamp_visible`` the visible layer
    keeps its values (the clamped phase: the hidden layers given v). ``noise``, a
    callable ``noise(shape)`` of logistic numbers (e.g. ``Noise.logistic``), replaces
    draws from ``rng``. Returns ``layers``.
    """
    draw = noise or (lambda shape: logistic_noise(rng, shape, layers[0].dtype))
    n_layers = len(biases)
    for parity in (1, 0):
        for k in range(parity, n_layers, 2):
            if k == 0 and clamp_visible:
                continue
            field = layer_input(layers, weights, biases, k, layers[0].shape[0])
            np.greater(field, draw(field.shape), out=layers[k])
    return layers


def dbm_mean_field(layers, weights, biases, *, damping=0.0, max_iter=200, tol=1e-7):
    """Mean-field posterior of the hidden layers given the visible rows, in place.

    ``layers[0]`` holds the visible rows (clamped); ``layers[1:]`` the starting
    magnetisations mu_k (float arrays, updated in place, in their own dtype). Each
    iteration updates the odd layers and then the even hidden layers, mu_k <- damping
    mu_k + (1 - damping) sigmoid(u_k(mu)): a layer's units do not interact, so each
    update maximises the variational bound (:func:`dbm_mean_field_log_bound`) over that
    layer given the others (with damping, moves part of the way to that maximum, where
    the bound is still higher: it is concave in each magnetisation). The bound never
    decreases, so no damping is needed for convergence.

    Each row stops on its own, once none of its magnetisations moved more than ``tol``
    in an iteration, so a row's result does not depend on the other rows (and
    converged rows cost nothing more). Layer 1's input from the clamped visible
    units is computed once. Returns ``(n_iter, n_unconverged)``: the iterations the
    slowest row took, and the rows still moving after ``max_iter``.
    """
    n_layers = len(biases)
    n_rows = layers[0].shape[0]
    if n_layers == 1 or n_rows == 0:
        return 0, 0
    from_visible = layers[0] @ weights[0].T
    from_visible += biases[1]
    active = None  # rows still moving (None: all of them, no copies)
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        rows = [layer if active is None else layer[active] for layer in layers]
        change = None
        for first in (1, 2):  # the odd layers, then the even hidden ones
            for k in range(first, n_layers, 2):
                if k == 1:
                    target = from_visible if active is None else from_visible[active]
                    target = target + rows[2] @ weights[1] if n_layers > 2 else target.copy()
                else:
                    target = layer_input(rows, weights, biases, k)
                sigmoid(target, out=target)
                moved = np.max(np.abs(target - rows[k]), axis=1)
                change = moved if change is None else np.maximum(change, moved)
                if damping:
                    target *= 1.0 - damping
                    target += damping * rows[k]
                rows[k][...] = target
                if active is not None:
                    layers[k][active] = target
        still = change >= tol
        if not still.any():
            return n_iter, 0
        if not still.all():
            active = np.flatnonzero(still) if active is None else active[still]
    return n_iter, int(active.size) if active is not None else n_rows


def dbm_mean_field_log_bound(layers, weights, biases):
    """The variational lower bound on log p*(v) of each row: -F_MF(v), in float64.

    With q(h | v) the product of independent units with means mu_k = ``layers[k]``
    (``layers[0]`` the visible rows): E_q[-E(v, h)] + H(q) = sum_k b_k^T mu_k +
    sum_k mu_k^T W_k mu_{k-1} + sum_{k >= 1} H(mu_k), H the binary entropy. It is at
    most log sum_h exp(-E(v, h)) for any mu (Gibbs' inequality), so subtracting log Z
    gives a lower bound on log p(v).
    """
    bound = -dbm_energy(layers, weights, biases)
    for mu in layers[1:]:
        bound += (entr(mu) + entr(1.0 - mu)).sum(axis=1)
    return bound


def bottom_up_magnetisations(V, weights, biases, dtype=np.float64, doubled=False):
    """Starting magnetisations of the hidden layers: one pass up from the visible rows.

    ``mu_k = sigmoid(c W_k mu_{k-1} + b_k)`` with c = 1, or with ``doubled`` c = 2 for
    every layer below the top: the input from below counted twice stands in for the
    input from above, which a layer under the top also receives (the recognition pass
    of Salakhutdinov & Hinton, "An efficient learning procedure for deep Boltzmann
    machines", 2012). Returns ``[V, mu_1, ..., mu_L]`` in ``dtype``.
    """
    layers = [np.asarray(V, dtype=dtype)]
    top = len(biases) - 1
    for k in range(1, top + 1):
        inputs = layers[-1] @ np.asarray(weights[k - 1], dtype=dtype).T
        if doubled and k < top:
            inputs *= 2
        inputs += np.asarray(biases[k], dtype=dtype)
        layers.append(sigmoid(inputs, out=inputs))
    return layers


def dbm_hidden_log_sums(V, weights, biases, max_states=MAX_HIDDEN_STATES):
    """log sum_h exp(-E(v, h)) for each row of ``V``, exactly, in float64.

    Given v the hidden layers form a deep Boltzmann machine of their own (layer 1's
    bias shifted by W_1 v); one parity of its layers is enumerated and the other summed
    in closed form: the odd hidden layers (then the row enters through one matrix
    product) unless enumerating the even ones costs less (then layer 1 is summed once
    per row and state). Raises :class:`~skboltz.exceptions.TooManyStatesError` beyond
    ``max_states`` states per row.
    """
    return _hidden_enumeration(V, weights, biases, max_states, marginals=False)


def dbm_hidden_marginals(V, weights, biases, max_states=MAX_HIDDEN_STATES):
    """P(h_j = 1 | v) of every hidden unit for each row of ``V``, exactly, in float64.

    Enumerates one parity of the hidden layers as :func:`dbm_hidden_log_sums` does;
    returns the layers' marginals side by side, shape (n_rows, n_hidden).
    """
    return _hidden_enumeration(V, weights, biases, max_states, marginals=True)


def hidden_enumeration_plan(sizes):
    """How the exact hidden sums of a row enumerate: ``(enumerate_odd, n_enumerated)``.

    Enumerating the odd hidden layers (h_1, h_3, ...) costs 2**n_odd states per row
    (the row enters through one product); the even ones 2**n_even * n_1 (h_1 summed
    per row and state). The cheaper is taken; ``n_enumerated`` is its number of units.
    """
    n_odd = sum(sizes[1::2])  # h_1, h_3, ...: the hidden machine's even layers
    n_even = sum(sizes[2::2])
    enumerate_odd = len(sizes) < 2 or 2**n_odd <= 2**n_even * sizes[1]
    return enumerate_odd, (n_odd if enumerate_odd else n_even)


def _hidden_enumeration(V, weights, biases, max_states, marginals):
    V = np.asarray(V, dtype=np.float64)
    weights = [np.asarray(w, dtype=np.float64) for w in weights]
    biases = [np.asarray(b, dtype=np.float64) for b in biases]
    sizes = [b.size for b in biases]
    n_layers = len(sizes)
    if n_layers == 1:
        return np.zeros((V.shape[0], 0)) if marginals else V @ biases[0]
    # Hidden layers h_1..h_L as a machine of their own: its layer j is layer j + 1.
    hidden_weights, hidden_biases = weights[1:], biases[1:]
    bottom = V @ weights[0].T  # W_1 v: row-dependent bias of h_1
    enumerate_odd, n_enumerated = hidden_enumeration_plan(sizes)
    if 2**n_enumerated > max_states:
        raise TooManyStatesError(
            f"Summing out the hidden layers exactly needs 2**{n_enumerated} states per "
            f"row, more than {max_states}. Use the mean-field bound or a per-row "
            "estimate of the hidden sum (annealed importance sampling on "
            "DBMView.conditional_hidden_view)."
        )
    parity = 0 if enumerate_odd else 1  # parity of the enumerated layers, hidden numbering
    H = binary_states(n_enumerated)
    hidden_layers = _split_columns(H, sizes[1:], parity)
    # The terms of each hidden state without W_1 v (log p* of the hidden machine).
    state_terms = parity_log_weights(hidden_layers, hidden_weights, hidden_biases, parity)
    if not enumerate_odd:  # h_1 is summed per row and state below: take it out here
        inner = layer_input(hidden_layers, hidden_weights, hidden_biases, 0, H.shape[0])
        state_terms -= softplus_row_sums(inner)
    out = V @ biases[0]
    n_hidden = sum(sizes[1:])
    result = np.empty((V.shape[0], n_hidden)) if marginals else out
    joint = None
    rows = max(1, _BLOCK_ELEMENTS // (H.shape[0] * (1 if enumerate_odd else sizes[1])))
    for start in range(0, V.shape[0], rows):
        chunk = slice(start, start + rows)
        if enumerate_odd:  # h_1 enumerated: its row term is h_1 . W_1 v
            log_w = bottom[chunk] @ hidden_layers[0].T
        else:  # h_1 summed: softplus(W_1 v + b_1 + W_2^T h_2), per row and state
            joint = bottom[chunk][:, None, :] + inner[None, :, :]
            log_w = softplus_row_sums(joint.reshape(-1, sizes[1])).reshape(joint.shape[:2])
        log_w += state_terms
        top = log_w.max(axis=1, keepdims=True)
        q = np.exp(log_w - top)
        total = q.sum(axis=1, keepdims=True)
        if not marginals:
            result[chunk] += np.log(total[:, 0]) + top[:, 0]
            continue
        q /= total
        result[chunk] = _posterior_marginals(q, hidden_layers, hidden_weights, hidden_biases,
                                             parity, joint)
    return result


def _posterior_marginals(q, hidden_layers, weights, biases, parity, joint_h1):
    """Marginals of all hidden units given each row's posterior ``q`` over the states."""
    pieces = []
    for j in range(len(biases)):
        if j % 2 == parity:  # enumerated: the posterior mean of the listed states
            pieces.append(q @ hidden_layers[j])
        elif j == 0:  # h_1 summed, its input depends on the row: (rows, states, n_1)
            pieces.append(np.einsum("rs,rsj->rj", q, sigmoid(joint_h1)))
        else:  # summed, input from enumerated layers only
            inputs = layer_input(hidden_layers, weights, biases, j, q.shape[1])
            pieces.append(q @ sigmoid(inputs))
    return np.hstack(pieces)


def _split_columns(S, sizes, parity):
    """The layers of ``parity`` as column blocks of ``S`` (None for the others)."""
    layers, start = [], 0
    for k, size in enumerate(sizes):
        if k % 2 == parity:
            layers.append(S[:, start : start + size])
            start += size
        else:
            layers.append(None)
    return layers


@dataclass(frozen=True, eq=False)
class DBMView(ModelView):
    """Read-only view of a deep Boltzmann machine: its :class:`ModelView`.

    Binary layers x_0 = v, x_1, ..., x_L, each coupled only to its neighbours:
    E(x) = -sum_k x_k^T W_k x_{k-1} - sum_k b_k^T x_k (Salakhutdinov & Hinton, "Deep
    Boltzmann machines", 2009). The layers fall into two colours, even (v, x_2, ...)
    and odd (x_1, x_3, ...): given one colour, the other's units are independent.
    Sampler states are the **even layers** side by side, visible first, the odd layers
    summed out in closed form (for one hidden layer, an RBM's visible vectors); a
    Gibbs step draws the odd layers given the even ones, then the even ones. Exact
    enumeration lists the states of the smaller colour. Annealing base biases are laid
    out with the state units first: the even layers, then the odd ones.

    Parameters
    ----------
    weights : sequence of ndarray
        W_1, ..., W_L, W_k of shape (n_k, n_{k-1}).
    biases : sequence of ndarray
        The biases b_0 (visible), b_1, ..., b_L, b_k of shape (n_k,).

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.partition import Exact
    >>> from skboltz.views import DBMView
    >>> rng = np.random.default_rng(0)
    >>> sizes = (6, 4, 3)
    >>> view = DBMView([rng.normal(0, 0.5, (4, 6)), rng.normal(0, 0.5, (3, 4))],
    ...                [np.zeros(n) for n in sizes])
    >>> view.n_state_units, view.n_enumerated_units  # v and x_2; x_1 enumerated
    (9, 4)
    >>> log_z = Exact().estimate(view).value
    >>> V = (rng.random((5, 6)) < 0.5).astype(float)
    >>> bool(np.all(view.mean_field_log_bound(V) - log_z <= -view.free_energy(V) - log_z))
    True
    """

    weights: tuple
    biases: tuple

    #: What a sampler state holds (see the class docstring).
    sampler_state = "even-layer"

    #: Binary layers coupled only to their neighbours: the layered learning rule, exact
    #: enumeration of one colour, annealing with the odd layers summed out, and the
    #: mean-field equations over all units (``coupling_matrix``, ``bias_vector``).
    #: The layer class of the rows an estimator's ``X`` holds.
    input_units = BinaryUnits

    capabilities = Capabilities(
        units=(("visible", BINARY), ("hidden", BINARY)),
        operations={LAYERED, ENUMERATION, ANNEALING, MEAN_FIELD},
    )

    def __post_init__(self):
        weights = tuple(np.asarray(w) for w in self.weights)
        biases = tuple(np.asarray(b) for b in self.biases)
        if len(biases) != len(weights) + 1:
            raise ValueError(
                f"A deep Boltzmann machine with {len(weights)} weight matrices has "
                f"{len(weights) + 1} layers and needs as many bias vectors, got {len(biases)}."
            )
        for k, W in enumerate(weights, start=1):
            expected = (biases[k].shape[0], biases[k - 1].shape[0])
            if W.shape != expected:
                raise ValueError(
                    f"weights[{k - 1}] (W_{k}) must have shape (n_{k}, n_{k - 1}) = "
                    f"{expected} to match the biases, got {W.shape}."
                )
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "biases", biases)

    # -- sizes -------------------------------------------------------------------------
    @property
    def layer_sizes(self):
        """Units per layer, visible first."""
        return tuple(int(b.shape[0]) for b in self.biases)

    @property
    def n_visible(self):
        """Number of visible units."""
        return self.layer_sizes[0]

    @property
    def n_hidden(self):
        """Number of hidden units, all layers."""
        return sum(self.layer_sizes[1:])

    @property
    def n_units(self):
        """Number of units, visible and hidden."""
        return sum(self.layer_sizes)

    @property
    def n_state_units(self):
        """Units of a sampler state: the even layers (the odd ones are summed out)."""
        return sum(self.layer_sizes[0::2])

    @property
    def n_enumerated_units(self):
        """Units whose states exact enumeration lists: the smaller colour."""
        return min(sum(self.layer_sizes[0::2]), sum(self.layer_sizes[1::2]))

    @property
    def temperature(self):
        """The temperature T (1 for a deep Boltzmann machine)."""
        return 1.0

    @property
    def dtype(self):
        """Floating-point type of the parameters."""
        return self.biases[0].dtype

    def astype(self, dtype):
        return DBMView([w.astype(dtype) for w in self.weights],
                       [b.astype(dtype) for b in self.biases])

    def _float64(self):
        return ([np.asarray(w, dtype=np.float64) for w in self.weights],
                [np.asarray(b, dtype=np.float64) for b in self.biases])

    def split_state(self, S):
        """Split sampler states into their layers.

        Parameters
        ----------
        S : ndarray of shape (n_rows, n_state_units)
            The even layers side by side, visible first.

        Returns
        -------
        layers : list
            ``layers[k]`` the column block of even layer k (a view), None for the odd
            layers.
        """
        return _split_columns(np.asarray(S), self.layer_sizes, 0)

    # -- energies, free energies, conditionals -----------------------------------------
    def energy(self, layers):
        """Compute the energy E(x) of each row from the states of every layer.

        Parameters
        ----------
        layers : sequence of ndarray
            ``layers[k]`` of shape (n_rows, n_k): the states of layer k, visible first.

        Returns
        -------
        energy : ndarray of shape (n_rows,)
            E(x) of each row.
        """
        return dbm_energy(layers, self.weights, self.biases)

    def free_energy(self, V):
        """Compute F(v) = -log sum_h exp(-E(v, h)) of each row, exactly.

        One colour of the hidden layers is enumerated (at most 2**20 states per row)
        and the other summed in closed form; beyond that a
        :class:`~skboltz.exceptions.TooManyStatesError` says what to use instead.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_visible)
            Visible states.

        Returns
        -------
        free_energy : ndarray of shape (n_rows,)
            F(v) of each row, in float64.
        """
        return -dbm_hidden_log_sums(V, self.weights, self.biases)

    def hidden_probability(self, V):
        """Compute P(h_j = 1 | v) of every hidden unit, exactly (small machines).

        Enumerates as :meth:`free_energy` does; :meth:`mean_field` is the
        approximation for large machines.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_visible)
            Visible states.

        Returns
        -------
        probability : ndarray of shape (n_rows, n_hidden)
            The hidden layers' marginals side by side (layer 1 first), in float64.
        """
        return dbm_hidden_marginals(V, self.weights, self.biases)

    def conditional_hidden_view(self, v):
        """Return the deep Boltzmann machine of the hidden layers given one visible row.

        Its layers are x_1, ..., x_L (x_1 in the visible place), x_1's bias shifted by
        W_1 v, so its partition function is sum_h exp(-E(v, h)) / exp(b_0^T v): any
        log Z estimator (annealed importance sampling for large machines) estimates
        one row's hidden sum, and log p(v) = b_0^T v + log Z(conditional) - log Z.

        Parameters
        ----------
        v : ndarray of shape (n_visible,)
            The visible row.

        Returns
        -------
        view : DBMView
            The machine of the hidden layers.
        """
        if len(self.weights) == 0:
            raise ValueError("A machine without hidden layers has no conditional view.")
        first = self.biases[1] + self.weights[0] @ np.asarray(v, dtype=self.dtype)
        return DBMView(self.weights[1:], (first.astype(self.dtype), *self.biases[2:]))

    @property
    def n_hidden_enumerated(self):
        """Hidden units whose 2**n states the exact sum over one row's hidden layers lists.

        One colour of the hidden layers (the one whose enumeration costs less); the
        other is summed in closed form. :meth:`free_energy` and
        :meth:`hidden_probability` cost about 2**n_hidden_enumerated per row.
        """
        return hidden_enumeration_plan(self.layer_sizes)[1]

    @property
    def free_energy_is_cheap(self):
        """Whether :meth:`free_energy` is exact and cheap.

        True for at most 2**10 hidden states per row (the estimators' divergence check
        then uses it).
        """
        return self.n_hidden_enumerated <= 10

    # -- inference: what the estimators' transform, reconstruct, gibbs and sample use --
    def inference_mean_field(self, V):
        """The mean-field posterior of every hidden layer, for inference.

        :meth:`mean_field` from the recognition pass, in the view's dtype, each row to
        convergence (``tol`` 1e-8 in float64, 2e-6 in float32; at most
        ``INFERENCE_MAX_ITER`` updates).

        Parameters
        ----------
        V : {ndarray, sparse matrix} of shape (n_rows, n_visible)
            Visible rows.

        Returns
        -------
        magnetisations : list of ndarray
            The means mu_1, ..., mu_L, in the view's dtype.
        """
        V = V.toarray() if hasattr(V, "toarray") else V
        dtype = self.dtype
        tol = max(1e-8, 16 * float(np.finfo(dtype).eps))
        magnetisations, _ = self.mean_field(V, max_iter=INFERENCE_MAX_ITER, tol=tol,
                                            dtype=dtype)
        return magnetisations

    def hidden_marginals(self, V):
        """Compute the mean-field posterior of the hidden layers for each row.

        The magnetisations of :meth:`inference_mean_field` (an approximation of
        P(h_j = 1 | v); :meth:`hidden_probability` is exact for small machines).

        Parameters
        ----------
        V : {ndarray, sparse matrix} of shape (n_rows, n_visible)
            Visible rows.

        Returns
        -------
        probability : ndarray of shape (n_rows, n_hidden)
            Every hidden layer's magnetisations side by side, layer 1 first, in the
            view's dtype.
        """
        magnetisations = self.inference_mean_field(V)
        if not magnetisations:
            return np.zeros((V.shape[0], 0), dtype=self.dtype)
        return np.hstack(magnetisations)

    def reconstruct(self, V):
        # E[v | h_1] at h_1's mean-field magnetisations.
        if len(self.weights) == 0:
            return np.broadcast_to(sigmoid(self.biases[0].copy()), V.shape).copy()
        mu_1 = self.inference_mean_field(V)[0]
        visible = mu_1 @ self.weights[0]
        visible += self.biases[0]
        return sigmoid(visible, out=visible)

    def visible_gibbs_step(self, V, rng):
        """Run one Gibbs step v -> h -> v from each visible row.

        The hidden layers start at draws from their mean-field magnetisations given
        the row and take one two-colour sweep with the row clamped (odd layers, then
        even hidden ones: an approximate draw from p(h | v)); the visible units are
        then drawn given layer 1.

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
        dtype = V.dtype
        view = self.astype(dtype)
        layers = [np.array(V, dtype=dtype)]
        for mu in view.inference_mean_field(V):
            layers.append((rng.random(mu.shape, dtype=dtype) < mu).astype(dtype))
        if len(layers) > 1:
            dbm_gibbs_sweep(layers, view.weights, view.biases, rng, clamp_visible=True)
            field = layer_input(layers, view.weights, view.biases, 0)
            np.greater(field, logistic_noise(rng, field.shape, dtype), out=layers[0])
        return layers[0]

    def draw_samples(self, n_samples, n_steps, start, rng, means=False):
        # Visible units start on at the rates `start`, the hidden layers at a draw of
        # the bottom-up pass from them; then n_steps two-colour sweeps.
        dtype = self.dtype
        if means and n_steps == 0:
            return np.broadcast_to(np.asarray(start, dtype=dtype),
                                   (n_samples, self.n_visible)).copy()
        V = (rng.random((n_samples, self.n_visible)) < start).astype(dtype)
        layers = [V]
        for mu in bottom_up_magnetisations(V, self.weights, self.biases, dtype)[1:]:
            layers.append((rng.random(mu.shape, dtype=dtype) < mu).astype(dtype))
        for _ in range(n_steps):
            dbm_gibbs_sweep(layers, self.weights, self.biases, rng)
        if means:  # P(v = 1 | x_1) of the last sweep, which v was drawn from
            field = layer_input(layers, self.weights, self.biases, 0, n_samples)
            return sigmoid(field).astype(dtype, copy=False)
        return layers[0]

    # -- mean field ----------------------------------------------------------------------
    def mean_field(self, V, *, damping=0.0, max_iter=200, tol=1e-7, start="recognition",
                   dtype=np.float64):
        """Compute the mean-field (variational) posterior of the hidden layers given v.

        Starts from a bottom-up pass (``start``) and updates the odd, then the even
        hidden layers until no magnetisation of a row moves more than ``tol`` (each row
        on its own, so its result does not depend on the other rows).

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_visible)
            Visible rows (states or probabilities).
        damping : float, default=0.0
            Weight of the old magnetisations in each update, in [0, 1).
        max_iter : int, default=200
            Maximum number of updates of all layers.
        tol : float, default=1e-7
            Convergence threshold on the largest change of a row's magnetisations.
        start : {"recognition", "bottom_up"}, default="recognition"
            The starting pass: sigmoid(W_k mu_{k-1} + b_k) layer by layer
            ("bottom_up"), or with the input from below doubled for the layers under
            the top, standing in for their input from above ("recognition",
            Salakhutdinov & Hinton 2012).
        dtype : float32 or float64, default=float64
            Type of the computation and of the result.

        Returns
        -------
        magnetisations : list of ndarray
            The means mu_1, ..., mu_L, of shape (n_rows, n_k), in ``dtype``.
        converged : bool
            Whether every row converged within ``max_iter`` updates.
        """
        if start not in ("recognition", "bottom_up"):
            raise ValueError(f"start must be 'recognition' or 'bottom_up', got {start!r}.")
        weights = [np.asarray(w, dtype=dtype) for w in self.weights]
        biases = [np.asarray(b, dtype=dtype) for b in self.biases]
        layers = bottom_up_magnetisations(V, weights, biases, dtype,
                                          doubled=start == "recognition")
        _, n_unconverged = dbm_mean_field(layers, weights, biases, damping=damping,
                                          max_iter=max_iter, tol=tol)
        return layers[1:], n_unconverged == 0

    def mean_field_log_bound(self, V, magnetisations=None, **mean_field_params):
        """Compute the variational lower bound -F_MF(v) <= log sum_h exp(-E(v, h)).

        ``log p(v) >= mean_field_log_bound(v) - log Z`` (Salakhutdinov & Hinton 2009):
        a true bound for any magnetisations, tightest at the mean-field fixed point.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_visible)
            Visible rows.
        magnetisations : list of ndarray or None, default=None
            The means mu_1, ..., mu_L; None runs :meth:`mean_field` with
            ``mean_field_params``.
        **mean_field_params
            ``damping``, ``max_iter``, ``tol`` of :meth:`mean_field`.

        Returns
        -------
        bound : ndarray of shape (n_rows,)
            The bound of each row, in float64.
        """
        if magnetisations is None:
            magnetisations, _ = self.mean_field(V, **mean_field_params)
        weights, biases = self._float64()
        layers = [np.asarray(V, dtype=np.float64), *magnetisations]
        return dbm_mean_field_log_bound(layers, weights, biases)

    def coupling_matrix(self):
        # All units in layer order, visible first.
        edges = np.cumsum([0, *self.layer_sizes])
        coupling = np.zeros((self.n_units, self.n_units))
        for k, W in enumerate(self.weights, start=1):
            upper, lower = slice(edges[k], edges[k + 1]), slice(edges[k - 1], edges[k])
            coupling[upper, lower] = W
            coupling[lower, upper] = W.T
        return coupling

    def bias_vector(self):
        return np.concatenate(self.biases).astype(np.float64)

    # -- sampling protocol -----------------------------------------------------------
    def log_unnormalized(self, S):
        weights, biases = self._float64()
        layers = self.split_state(np.asarray(S, dtype=np.float64))
        return parity_log_weights(layers, weights, biases, 0)

    def gibbs_step(self, S, rng):
        S = np.asarray(S, dtype=self.dtype)
        layers = [x.copy() if x is not None else np.empty((S.shape[0], n), dtype=self.dtype)
                  for x, n in zip(self.split_state(S), self.layer_sizes)]
        dbm_gibbs_sweep(layers, self.weights, self.biases, rng)
        return np.hstack(layers[0::2])

    def _split_base(self, base_bias):
        """Per-layer base biases from the state-first layout (odd layers 0 if absent)."""
        base_bias = np.asarray(base_bias, dtype=np.float64)
        if base_bias.shape not in ((self.n_units,), (self.n_state_units,)):
            raise ValueError(
                f"base_bias must have {self.n_units} entries (all units, the even layers "
                f"first) or {self.n_state_units} (the even layers), got {base_bias.shape}."
            )
        sizes = self.layer_sizes
        order = [*range(0, len(sizes), 2), *range(1, len(sizes), 2)]
        edges = np.cumsum([0, *(sizes[k] for k in order)])
        per_layer = [None] * len(sizes)
        for position, k in enumerate(order):
            piece = base_bias[edges[position] : edges[position + 1]]
            per_layer[k] = piece if piece.size == sizes[k] else np.zeros(sizes[k])
        return per_layer

    def _join_base(self, per_layer):
        return np.concatenate([per_layer[k] for k in range(0, len(per_layer), 2)]
                              + [per_layer[k] for k in range(1, len(per_layer), 2)])

    def interpolate(self, beta, base_bias):
        base = self._split_base(base_bias)
        return DBMView(
            [(beta * w).astype(self.dtype) for w in self.weights],
            [((1.0 - beta) * a + beta * b).astype(self.dtype)
             for a, b in zip(base, self.biases)],
        )

    def base_bias_from_rates(self, data_rates):
        return base_bias_from_rates(data_rates, self.n_visible, self.n_state_units)

    def base_log_partition(self, base_bias):
        return float(sum(softplus(a).sum() for a in self._split_base(base_bias)))

    def annealing_base(self, data_rates, kind="data"):
        """Return the biases of an independent base model for annealing, all units.

        ``kind="data"``: visible units at the logits of the clipped data rates, hidden
        units 0 (uniform). ``"response"``: the same visible units, hidden units at their
        input from the layer below in a bottom-up pass from the clipped data rates r,
        a_k = W_k r_{k-1} + b_k with r_k = sigmoid(a_k) (r_0 = 1/2 without data).
        ``"model"``: the machine's own biases, so that the path anneals the couplings
        only. Laid out with the state units first: the even layers, then the odd ones.
        An optional member of the view protocol, used by
        :class:`~skboltz.partition.AIS` when present.

        Parameters
        ----------
        data_rates : ndarray of shape (n_visible,) or None
            Mean of each visible unit over the training data.
        kind : {"data", "response", "model"}, default="data"
            Which base model.

        Returns
        -------
        base_bias : ndarray of shape (n_units,)
            The base model's biases, in float64.
        """
        if kind not in ANNEALING_BASES:
            raise ValueError(f"kind must be one of {ANNEALING_BASES}, got {kind!r}.")
        weights, biases = self._float64()
        if kind == "model":
            return self._join_base([b.copy() for b in biases])
        base = [np.zeros(n) for n in self.layer_sizes]
        base[0] = base_bias_from_rates(data_rates, self.n_visible, self.n_visible)
        if kind == "response":
            rates = np.full(self.n_visible, 0.5) if data_rates is None else clipped_rates(
                data_rates)
            for k in range(1, len(biases)):
                base[k] = weights[k - 1] @ rates + biases[k]
                rates = sigmoid(base[k].copy())
        return self._join_base(base)

    def annealing(self, base_bias, n_chains, rng, dtype=np.float32):
        """Return annealed-importance-sampling chains from a base model to this one.

        The odd layers are summed out at every beta (``DBMAnnealing``). An
        optional member of the view protocol: :class:`~skboltz.partition.AIS` runs
        these chains when present.

        Parameters
        ----------
        base_bias : ndarray of shape (n_units,) or (n_state_units,)
            Biases of the independent base model, state units first.
        n_chains : int
            Number of chains.
        rng : numpy.random.Generator
            Seeds the chains' random numbers.
        dtype : float32 or float64, default=float32
            Type of the matrix products and draws (log weights in float64).

        Returns
        -------
        chains : DBMAnnealing
            With ``start_from_base``, ``set_states``, ``add_log_ratio`` and
            ``transition``.
        """
        return DBMAnnealing(self, base_bias, n_chains, rng, dtype)

    # -- exact enumeration -------------------------------------------------------------
    def enumerate_log_weights(self, chunk_size):
        # The smaller colour is enumerated, the other summed: log p*(x_P) per state.
        weights, biases = self._float64()
        sizes = self.layer_sizes
        parity = 0 if sum(sizes[0::2]) <= sum(sizes[1::2]) else 1
        n_units = self.n_enumerated_units
        chunk = max(1, int(chunk_size))
        for start in range(0, 2**n_units, chunk):
            states = binary_states(n_units, start, min(start + chunk, 2**n_units))
            layers = _split_columns(states, sizes, parity)
            yield parity_log_weights(layers, weights, biases, parity)


class DBMLayout:
    """Named blocks of a deep Boltzmann machine's packed parameters (and velocity).

    One flat array: the weights W_1, ..., W_L (each of shape (n_k, n_{k-1}), row
    after row), then the biases b_0, ..., b_L. ``params[layout.weights]`` holds every
    weight (the block weight decay acts on), ``params[layout.biases]`` every bias;
    :meth:`weights_of` and :meth:`biases_of` give each W_k and b_k as views, and
    :meth:`view` the :class:`DBMView` over them (no copies, so it follows in-place
    updates). The blocks depend on the layer sizes: get the layout of a machine with
    :func:`dbm_layout`.

    Parameters
    ----------
    layer_sizes : tuple of int
        Units per layer, visible first.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.models._dbm_energy import dbm_layout
    >>> layout = dbm_layout((3, 2, 2))
    >>> params = np.arange(layout.size, dtype=float)
    >>> [w.shape for w in layout.weights_of(params)], params[layout.weights].size
    ([(2, 3), (2, 2)], 10)
    >>> [b.tolist() for b in layout.biases_of(params)]
    [[10.0, 11.0, 12.0], [13.0, 14.0], [15.0, 16.0]]
    """

    def __init__(self, layer_sizes):
        sizes = tuple(int(n) for n in layer_sizes)
        self.layer_sizes = sizes
        weight_edges = np.cumsum([0, *(sizes[k] * sizes[k - 1] for k in range(1, len(sizes)))])
        bias_edges = int(weight_edges[-1]) + np.cumsum([0, *sizes])
        self._weight_blocks = [
            (slice(int(weight_edges[k - 1]), int(weight_edges[k])), (sizes[k], sizes[k - 1]))
            for k in range(1, len(sizes))
        ]
        self._bias_blocks = [slice(int(bias_edges[k]), int(bias_edges[k + 1]))
                             for k in range(len(sizes))]
        unit_edges = np.cumsum([0, *sizes])
        self._unit_blocks = [slice(int(unit_edges[k]), int(unit_edges[k + 1]))
                             for k in range(len(sizes))]
        #: Every weight, W_1 first (where weight decay acts).
        self.weights = slice(0, int(weight_edges[-1]))
        #: Every bias, b_0 (visible) first.
        self.biases = slice(int(weight_edges[-1]), int(bias_edges[-1]))
        #: Length of the packed array.
        self.size = int(bias_edges[-1])

    def weights_of(self, params):
        """The weight matrices W_1, ..., W_L of packed ``params``, as views."""
        return [params[block].reshape(shape) for block, shape in self._weight_blocks]

    def biases_of(self, params):
        """The biases b_0, ..., b_L of packed ``params``, as views."""
        return [params[block] for block in self._bias_blocks]

    def layers_of(self, units):
        """A vector over all units (visible first) split into its layers, as views."""
        return [units[block] for block in self._unit_blocks]

    def view(self, params):
        """The :class:`DBMView` of packed ``params`` (views into it, no copies)."""
        return DBMView(self.weights_of(params), self.biases_of(params))

    def pack(self, weights, biases, dtype):
        """A new packed array holding ``weights`` (W_1 first) and ``biases`` (b_0 first)."""
        params = np.empty(self.size, dtype=dtype)
        for block, W in zip(self.weights_of(params), weights):
            block[...] = W
        for block, b in zip(self.biases_of(params), biases):
            block[...] = b
        return params


@functools.lru_cache(maxsize=32)
def dbm_layout(layer_sizes):
    """The :class:`DBMLayout` of a machine with these layer sizes (made once per sizes)."""
    return DBMLayout(tuple(layer_sizes))


def dbm_gradient(positive, negative, layout, out, offsets=None, weights=None):
    """The log-likelihood gradient of a deep Boltzmann machine, packed, into ``out``.

    ``positive`` and ``negative`` hold rows of every layer (visible first): the data
    with the hidden layers at their (approximate) posterior means, and states drawn
    from the model. The gradient is <x_k x_{k-1}^T>_+ - <x_k x_{k-1}^T>_- for W_k and
    <x_k>_+ - <x_k>_- for b_k, the expectations the means over the rows (for rows of
    means, exact when the posterior factorises over the units, as mean field's does).
    With per-layer ``offsets`` mu_k it is the gradient in centred coordinates, E(x) =
    -sum_k (x_k - mu_k)^T W_k (x_{k-1} - mu_{k-1}) - sum_k c_k^T (x_k - mu_k)
    (Montavon & Mueller, "Deep Boltzmann machines and the centering trick", 2012):
    W_k moves by the difference of the covariances about the offsets, c_k by that of
    the means (:func:`uncentred_bias_step` turns a step of it into one of b).

    Parameters
    ----------
    positive, negative : list of ndarray
        Rows of each layer, shape (n_rows, n_k); the same rows in every layer.
    layout : DBMLayout
        The blocks of ``out``.
    out : ndarray of shape (layout.size,)
        Where the gradient goes.
    offsets : list of ndarray or None, default=None
        The offsets mu_k of every layer (centring); None: the plain gradient.
    weights : ndarray of shape (n_rows,) or None, default=None
        The positive rows' relative weights in a weighted fit: each counts by its
        weight in the data's expectations (see :mod:`skboltz.utils._weights`).

    Returns
    -------
    out : ndarray
        The gradient.
    """
    n_positive, n_negative = positive[0].shape[0], negative[0].shape[0]
    column = None if weights is None else np.asarray(weights, positive[0].dtype)[:, None]
    mean_differences = []
    for bias, P, N in zip(layout.biases_of(out), positive, negative):
        np.subtract(positive_mean(P, column), N.mean(axis=0), out=bias)
        mean_differences.append(bias)
    for k, W in enumerate(layout.weights_of(out), start=1):
        below = positive[k - 1] if column is None else positive[k - 1] * column
        np.matmul(positive[k].T, below, out=W)
        W *= 1.0 / n_positive
        W -= (negative[k].T @ negative[k - 1]) * (1.0 / n_negative)
        if offsets is not None:
            W -= np.outer(offsets[k], mean_differences[k - 1])
            W -= np.outer(mean_differences[k], offsets[k - 1])
    return out


def positive_mean(rows, column=None):
    """The mean of a layer's positive rows, each counting by its weight in
    ``column`` (an (n_rows, 1) array of relative weights, or None: the plain mean)."""
    return rows.mean(axis=0) if column is None else (rows * column).mean(axis=0)


def uncentred_bias_step(step, offsets, layout):
    """The step of the biases b that a step of the centred parameters makes, per layer.

    With offsets mu the biases are b_k = c_k - W_k mu_{k-1} - W_{k+1}^T mu_{k+1}, so a
    step (dW, dc) in centred coordinates moves b_k by dc_k - dW_k mu_{k-1} -
    dW_{k+1}^T mu_{k+1}; returned here is the part from the weights, to add to
    ``step``'s bias blocks.

    Parameters
    ----------
    step : ndarray of shape (layout.size,)
        A packed step of the centred parameters.
    offsets : list of ndarray
        The offsets mu_k.
    layout : DBMLayout
        The blocks of ``step``.

    Returns
    -------
    corrections : list of ndarray
        What each layer's biases move by besides dc_k.
    """
    corrections = [np.zeros(n) for n in layout.layer_sizes]
    for k, dW in enumerate(layout.weights_of(step), start=1):
        corrections[k] -= dW @ offsets[k - 1]
        corrections[k - 1] -= offsets[k] @ dW
    return corrections


class DBMAnnealing:
    """The chains of annealed importance sampling (AIS) on a deep Boltzmann machine.

    The path runs from the independent model with biases a (per layer) at beta = 0 to
    the machine at beta = 1, p_beta(x) proportional to exp(-beta E(x) + (1 - beta) a.x),
    with the odd layers summed out at every beta (Salakhutdinov & Hinton, "Deep
    Boltzmann machines", 2009):

        log p*_beta(x_even) = sum_{k even} (beta b_k + (1 - beta) a_k) . x_k
                              + sum_{k odd} sum_j softplus(beta u_k + (1 - beta) a_k)_j,

    u_k = b_k + W_k x_{k-1} + W_{k+1}^T x_{k+1}. The states are the even layers of
    ``n_chains`` chains; a transition at beta draws the odd layers given the even ones
    and then the even ones, both at beta. The matrix products and the draws are in
    ``dtype``; the softplus terms of the log weights in float64, whose increments at
    consecutive betas then differ by no more than the step's own rounding.

    Parameters
    ----------
    view : DBMView
    base_bias : ndarray of shape (n_units,) or (n_state_units,)
        Biases of the base model, state units (even layers) first.
    n_chains : int
    rng : numpy.random.Generator
        Seeds the chains' own (SFC64) stream of random numbers.
    dtype : float32 or float64, default=float32
    """

    def __init__(self, view, base_bias, n_chains, rng, dtype=np.float32):
        self.dtype = np.dtype(dtype)
        self.n_chains = n_chains
        self._sizes = view.layer_sizes
        self._weights = [np.ascontiguousarray(w, dtype=self.dtype) for w in view.weights]
        self._biases = [np.asarray(b, dtype=self.dtype) for b in view.biases]
        self._base = view._split_base(base_bias)
        self._slope = [np.asarray(b, dtype=np.float64) - a
                       for a, b in zip(self._base, view.biases)]
        self._noise = Noise.seeded_from(rng)
        self._layers = [np.zeros((n_chains, n), dtype=self.dtype) for n in self._sizes]
        self._ready = None  # (beta, odd-layer inputs at beta) for the next transition

    @property
    def states(self):
        """The chains' even layers side by side, shape (n_chains, n_state_units)."""
        return np.hstack(self._layers[0::2])

    def start_from_base(self):
        """Draw every chain's state from the base model."""
        for k in range(0, len(self._sizes), 2):
            field = np.broadcast_to(self._base[k].astype(self.dtype), self._layers[k].shape)
            np.greater(field, self._noise.logistic(field.shape), out=self._layers[k])
        self._ready = None

    def set_states(self, X):
        """Start the chains at the even-layer rows ``X`` (one row per chain)."""
        for k, layer in enumerate(_split_columns(np.asarray(X), self._sizes, 0)):
            if layer is not None:
                self._layers[k][...] = layer
        self._ready = None

    def _odd_inputs(self):
        """u_k of each odd layer for the current states (float64)."""
        return [layer_input(self._layers, self._weights, self._biases, k, self.n_chains)
                .astype(np.float64) for k in range(1, len(self._sizes), 2)]

    def add_log_ratio(self, beta, beta_next, log_w, sign=1.0, then_sample_at=None):
        """``log_w += sign * (log p*_beta_next(x) - log p*_beta(x))`` for the states.

        ``then_sample_at`` (``beta`` or ``beta_next``) names the beta of the next
        :meth:`transition`, which then reuses this step's odd-layer inputs.
        """
        step = beta_next - beta
        increment = np.zeros(self.n_chains)
        for k in range(0, len(self._sizes), 2):
            increment += step * (self._layers[k] @ self._slope[k])
        ready = []
        for k, inputs in zip(range(1, len(self._sizes), 2), self._odd_inputs()):
            low = beta * inputs + (1.0 - beta) * self._base[k]
            high = beta_next * inputs + (1.0 - beta_next) * self._base[k]
            keep = {beta: low, beta_next: high}.get(then_sample_at)
            if keep is not None:
                ready.append(keep.copy())
            increment += softplus_row_sums(high, overwrite=True)
            increment -= softplus_row_sums(low, overwrite=True)
        log_w += sign * increment if sign != 1.0 else increment
        self._ready = None if then_sample_at is None else (then_sample_at, ready)

    def transition(self, beta):
        """One two-colour block Gibbs step of every chain at ``beta``."""
        if beta == 0:  # the base model: independent units
            self.start_from_base()
            return
        if self._ready is not None and self._ready[0] == beta:
            odd_fields = self._ready[1]
        else:
            odd_fields = [beta * inputs + (1.0 - beta) * self._base[k] for k, inputs in
                          zip(range(1, len(self._sizes), 2), self._odd_inputs())]
        self._ready = None
        for k, field in zip(range(1, len(self._sizes), 2), odd_fields):
            np.greater(field.astype(self.dtype), self._noise.logistic(field.shape),
                       out=self._layers[k])
        for k in range(0, len(self._sizes), 2):
            field = layer_input(self._layers, self._weights, self._biases, k, self.n_chains)
            field *= self.dtype.type(beta)
            field += ((1.0 - beta) * self._base[k]).astype(self.dtype)
            np.greater(field, self._noise.logistic(field.shape), out=self._layers[k])
