"""Math shared by every model: logistic functions, binary states, data rates, the view protocol.

Everything here is a pure function of numpy arrays; no scikit-learn objects. The
functions the layers' formulas call on arrays of any namespace (``sigmoid``,
``softplus_row_sums``, ``bernoulli_sample``) take the standard's path for arrays of
another library and keep NumPy's in-place one for ndarrays. Each model
family has its own math module beside it (``_rbm_energy``, ``_gaussian_rbm_energy``,
``_boltzmann_energy``), which defines its model view and the layout of its packed
parameters; :class:`ModelView` is the protocol those views follow.
"""

from typing import Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp

from ._array_api import foreign_namespace, xp_sigmoid, xp_softplus


def sigmoid(x, out=None):
    """Logistic function ``1 / (1 + exp(-x))``. Works in place with ``out=x``.

    Built on ``exp`` rather than ``tanh``: numpy's float64 ``tanh`` is fast only with
    AVX-512 (on an AVX2 CPU it measured 13-21 ns per element against 5 ns for ``exp``;
    float32 2.6 and 1.3 ns). For very negative x, exp(-x) overflows to inf and
    1 / inf is the exact limit 0.
    """
    xp = foreign_namespace(x)
    if xp is not None:
        return xp_sigmoid(xp, x)
    x = np.asarray(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    out = np.negative(x, out=out)
    with np.errstate(over="ignore"):
        return sigmoid_of_negated(out)


def sigmoid_in_place(x):
    """:func:`sigmoid` of a float array into itself, in four ufunc calls.

    For the training loops, which run under ``np.errstate(over="ignore")`` (an
    ``errstate`` context costs about as much as the four calls on a minibatch).
    """
    return sigmoid_of_negated(np.negative(x, out=x))


def sigmoid_of_negated(t):
    """``1 / (1 + exp(t))`` in place: sigmoid(x) for t = -x."""
    np.exp(t, out=t)
    t += 1
    return np.divide(1, t, out=t)  # np.reciprocal: the same bits, twice the time


def softplus(x):
    """``log(1 + exp(x))`` without overflow."""
    return np.logaddexp(0, x)


def softplus_row_sums(x, overwrite=False):
    """``softplus(x).sum(axis=1)`` for a 2-D array, several times faster.

    Uses softplus(x) = max(x, 0) + log(1 + exp(-|x|)) with vectorised ufuncs in place
    (``np.logaddexp`` is a slow scalar loop); the hot part of RBM free energies and of
    exact enumeration. ``log(1 + t)`` rather than ``log1p(t)``: for t in (0, 1] it is
    off by at most half an ulp of 1 per term, and numpy's ``log1p`` is a scalar loop on
    AVX2 (12-14 ns per element against 2-4 ns for ``log``). Agrees with
    ``np.logaddexp(0, x).sum(1)`` to ~1e-13. With ``overwrite=True`` the array ``x`` is
    used as scratch space (no allocation). Arrays of other namespaces: their library's
    ``logaddexp``.
    """
    xp = foreign_namespace(x)
    if xp is not None:
        return xp.sum(xp_softplus(xp, x), axis=1)
    x = np.asarray(x)
    if overwrite and x.dtype == np.float32 and x.size and x.max() <= _DIRECT_SOFTPLUS_MAX:
        # float32 (the divergence check's free energies): log(1 + exp(x)) directly,
        # half the passes. exp cannot overflow below the threshold; a term below 6e-8
        # (where 1 + t rounds to 1) is lost, less than float32 rounds a sum of them.
        np.exp(x, out=x)
        x += 1
        return np.log(x, out=x).sum(axis=1)
    row_sums = x.sum(axis=1)
    t = np.abs(x, out=x if overwrite else None)
    positive_part = 0.5 * (row_sums + t.sum(axis=1))  # sum of max(x, 0)
    np.negative(t, out=t)
    np.exp(t, out=t)
    t += 1
    np.log(t, out=t)
    return positive_part + t.sum(axis=1)


#: float32 inputs up to this value take softplus_row_sums' direct formula (exp(88.7)
#: is float32's largest).
_DIRECT_SOFTPLUS_MAX = 80.0


def binary_entropy_row_sums(m):
    """Sum over each row of the entropies -m log m - (1 - m) log(1 - m) of binary
    units with means ``m`` in [0, 1] (a 2-D array), in ``m``'s dtype.

    Six numpy calls (0 log 0 taken as 0): the divergence check runs this at the end
    of every ``partial_fit`` call.
    """
    both = np.empty((2,) + m.shape, dtype=m.dtype)
    both[0] = m
    np.subtract(1, m, out=both[1])
    logs = np.maximum(both, np.finfo(m.dtype).tiny)
    np.log(logs, out=logs)
    logs *= both
    return -logs.sum(axis=(0, 2))


def sum_log(x, max_factors):
    """``np.log(x).sum(axis=0)`` for positive ``x``, overwriting ``x``, with fewer logarithms.

    Multiplies the rows pairwise (the first half by the second, repeatedly) until each
    remaining entry is a product of up to ``max_factors`` entries, then takes one
    logarithm per product. The caller picks ``max_factors`` so that no product can
    leave the floating-point range (e.g. 64 for factors in (1/2, 2) in float32). Each
    product adds at most one rounding per factor, as many as the sum of logarithms.
    Small arrays skip the halving (a call costs more than the logarithms it saves).
    """
    height = x.shape[0]
    factors = 1
    while 2 * factors <= max_factors and height > 1 and x[:height].size > 4096:
        half = height // 2
        # An odd height leaves the middle row alone until the next round.
        np.multiply(x[:half], x[height - half : height], out=x[:half])
        height -= half
        factors *= 2
    return np.log(x[:height], out=x[:height]).sum(axis=0)


def bernoulli_sample(probability, rng, out=None):
    """Draw 0/1 units with the given probabilities, in the probabilities' dtype.

    ``rng`` is a ``numpy.random.Generator``, or for arrays of another namespace its
    random source (:func:`skboltz.utils._array_api.random_source`)."""
    uniform = rng.random(tuple(probability.shape), probability.dtype)
    xp = foreign_namespace(probability)
    if xp is not None:
        return xp.astype(uniform < probability, probability.dtype)
    return np.less(uniform, probability, out=out if out is not None else uniform)


def binary_states(n_units, start=0, stop=None, dtype=np.float64):
    """Rows ``start`` to ``stop`` of the 2**n_units binary states, unit 0 lowest bit."""
    stop = 2**n_units if stop is None else stop
    return states_of_codes(np.arange(start, stop, dtype=np.int64), n_units, dtype)


def states_of_codes(codes, n_units, dtype=np.float64):
    """The binary states with the given integer codes (row k of ``binary_states`` has code k)."""
    codes = np.asarray(codes, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n_units)) & 1).astype(dtype)


#: Data rates are clipped to [RATE_CLIP, 1 - RATE_CLIP] wherever they start a bias or a
#: magnetisation: a unit that is always (or never) on in the data would otherwise get an
#: infinite logit.
RATE_CLIP = 1e-3


def column_means(X, weights=None):
    """Each column's mean (a binary unit's rate in the data), float64.

    The same numbers for dense (C-ordered) and CSR rows of either dtype: float64 sums
    over the rows in their order (the zeros a sparse matrix leaves out add nothing),
    then divided by the count. scipy sums float32 sparse data in float32 whatever
    dtype is asked for (its mean was 6e-6 off the dense one on the digits), hence the
    cast of the stored values. ``weights`` (one per row, or None) weights the mean.
    """
    if sp.issparse(X):
        X = X.astype(np.float64)
    if weights is not None:
        return np.asarray(X.T @ weights, dtype=np.float64).ravel() / weights.sum()
    return np.asarray(X.sum(axis=0, dtype=np.float64)).ravel() / X.shape[0]


def clipped_rates(rates):
    """Data rates (means of binary units) as float64, clipped into [RATE_CLIP, 1 - RATE_CLIP]."""
    return np.clip(np.asarray(rates, dtype=np.float64).ravel(), RATE_CLIP, 1 - RATE_CLIP)


def logit_of_rates(rates):
    """log(p / (1 - p)) of the clipped data rates: the biases of independent units that
    match them (float64)."""
    rates = clipped_rates(rates)
    return np.log(rates) - np.log1p(-rates)


def base_bias_from_rates(data_rates, n_visible, n_state_units):
    """Bias of the independent base model over the state units, from visible data rates.

    Visible units get the logit of their clipped data rate (zero when ``data_rates`` is
    None); any other state units (hidden units of a general BM) get zero. Used as the
    ``beta = 0`` end of annealing paths (AIS, reverse AIS, the visited-states bound).
    """
    bias = np.zeros(n_state_units, dtype=np.float64)
    if data_rates is not None:
        bias[:n_visible] = logit_of_rates(data_rates)
    return bias


@runtime_checkable
class ModelView(Protocol):
    """The interface of a read-only model view (a :class:`typing.Protocol`).

    Learning strategies and log Z estimators see a model only through a view: its
    parameter arrays and these operations; the estimators' ``transform``,
    ``reconstruct``, ``gibbs`` and ``sample`` use the inference members at the end. A
    view class declares its ``capabilities`` (a :class:`~skboltz.views.Capabilities`):
    the unit type of each layer (binary 0/1 units, real-valued Gaussian units, ...)
    and the operations it supports, which decide the strategies a model accepts.

    A view describes p(s) proportional to exp(-E(s) / T) over the *state units* s a
    log Z sampler keeps, which are binary: for an RBM the visible units (the hidden
    ones are summed out in closed form), for a Gaussian RBM the hidden units (the
    real-valued visible ones integrated out), for a general Boltzmann machine all
    units. ``isinstance(obj, ModelView)`` checks that the members exist;
    :class:`RBMView`, :class:`GaussianRBMView` and :class:`BMView` implement it.

    Attributes
    ----------
    n_visible : int
        Number of visible units (the data's features), the first units.
    n_hidden : int
        Number of hidden units.
    n_units : int
        ``n_visible + n_hidden``.
    n_state_units : int
        Units of a sampler state (see above).
    n_enumerated_units : int
        Units whose 2**n states exact enumeration lists (the rest summed in closed
        form).
    temperature : float
        T in p(s) proportional to exp(-E(s) / T).
    dtype : numpy.dtype
        Floating-point type of the parameter arrays.
    capabilities : Capabilities
        The unit type of each layer and the operations the view supports (a class
        attribute).

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.views import BMView, ModelView, RBMView
    >>> rbm = RBMView(np.zeros((2, 3)), np.zeros(3), np.zeros(2))
    >>> bm = BMView(np.zeros((4, 4)), np.zeros(4), n_visible=3)
    >>> isinstance(rbm, ModelView) and isinstance(bm, ModelView)
    True
    >>> rbm.n_state_units, bm.n_state_units  # an RBM's sampler keeps the visible units
    (3, 4)
    """

    n_visible: int
    n_hidden: int
    n_units: int
    n_state_units: int
    n_enumerated_units: int
    temperature: float
    dtype: np.dtype
    capabilities: object

    def astype(self, dtype):
        """Return the same model with its parameters in another floating-point type.

        Parameters
        ----------
        dtype : numpy dtype
            The new type, e.g. ``np.float64``.

        Returns
        -------
        view : model view
            A view of the same kind over converted copies of the arrays.
        """
        ...

    def hidden_probability(self, V):
        """Compute P(h_j = 1 | v) for each row of visible states.

        Exact for an RBM; for a general Boltzmann machine exact in closed form when the
        hidden units are not coupled to each other, else by enumerating their states.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_visible)
            Visible states (or probabilities).

        Returns
        -------
        probability : ndarray of shape (n_rows, n_hidden)
            The hidden units' conditional probabilities of being on.
        """
        ...

    def free_energy(self, V):
        """Compute the free energy F(v) of each row, hidden units summed out.

        ``log p(v) = -F(v) - log Z``, with F in units of the temperature.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_visible)
            Visible states.

        Returns
        -------
        free_energy : ndarray of shape (n_rows,)
            F(v) of each row.
        """
        ...

    def log_unnormalized(self, S):
        """Compute log p*(s), the unnormalised log-probability of each state.

        ``p(s) = p*(s) / Z``; for an RBM the states are visible vectors and
        log p*(v) = -F(v).

        Parameters
        ----------
        S : ndarray of shape (n_rows, n_state_units)
            Binary states of the state units.

        Returns
        -------
        log_p : ndarray of shape (n_rows,)
            The value log p*(s) of each row, in float64.
        """
        ...

    def gibbs_step(self, S, rng):
        """Run one Gibbs transition from each row; it leaves p(s) invariant.

        An RBM does one block step v -> h -> v; a general Boltzmann machine one
        block Gibbs sweep over all units (uncoupled units together, coupled ones in
        turn), at the model's temperature.

        Parameters
        ----------
        S : ndarray of shape (n_rows, n_state_units)
            Binary starting states (one chain per row).
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        S_new : ndarray of shape (n_rows, n_state_units)
            The new binary states.
        """
        ...

    def interpolate(self, beta, base_bias):
        """Return the model of the annealing path at inverse temperature ``beta``.

        Its unnormalised log-probability is ``(1 - beta) log p_base(s) + beta log p*(s)``
        (up to a constant), with ``p_base`` the independent model with biases
        ``base_bias``: the path of annealed importance sampling (Neal, "Annealed
        importance sampling", 2001; Salakhutdinov & Murray, "On the quantitative
        analysis of deep belief networks", 2008).

        Parameters
        ----------
        beta : float
            From 0 (the base model) to 1 (this model).
        base_bias : ndarray of shape (n_state_units,)
            Biases of the independent base model (an RBM view also takes all
            ``n_units``, giving its hidden units base biases too).

        Returns
        -------
        view : model view
            The intermediate model, at temperature 1.
        """
        ...

    def base_bias_from_rates(self, data_rates):
        """Return the biases of an independent base model matching the data's rates.

        Visible units get the logit of their (clipped) rate; other state units 0.

        Parameters
        ----------
        data_rates : ndarray of shape (n_visible,) or None
            Mean of each visible unit over the training data; None gives all zeros.

        Returns
        -------
        base_bias : ndarray of shape (n_state_units,)
            The base model's biases, in float64.
        """
        ...

    def base_log_partition(self, base_bias):
        """Compute log Z of ``interpolate(0, base_bias)`` in closed form.

        Parameters
        ----------
        base_bias : ndarray of shape (n_state_units,)
            Biases of the independent base model (or ``n_units``, as for
            :meth:`interpolate`).

        Returns
        -------
        log_z : float
            Its log-partition function.
        """
        ...

    def coupling_matrix(self):
        """Return the symmetric couplings of all units divided by T.

        Returns
        -------
        coupling : ndarray of shape (n_units, n_units)
            Visible units first, zero diagonal, in float64.
        """
        ...

    def bias_vector(self):
        """Return the biases of all units divided by T.

        Returns
        -------
        bias : ndarray of shape (n_units,)
            Visible units first, in float64.
        """
        ...

    def enumerate_log_weights(self, chunk_size):
        """Yield arrays of log-weights whose overall log-sum-exp is log Z.

        Parameters
        ----------
        chunk_size : int
            States evaluated per chunk (bounds the memory used).

        Yields
        ------
        log_weights : ndarray
            Unnormalised log-probabilities (or partial log-sums) of a chunk of states,
            in float64.
        """
        ...

    # -- inference (the estimators' transform, reconstruct, gibbs and sample) --------
    def hidden_marginals(self, V):
        """Compute P(h_j = 1 | v) for each row.

        Exact, or an approximation the view documents.

        Parameters
        ----------
        V : {ndarray, sparse matrix} of shape (n_rows, n_visible)
            Visible rows.

        Returns
        -------
        probability : ndarray of shape (n_rows, n_hidden)
            The hidden units' marginals.
        """
        ...

    def reconstruct(self, V):
        """Compute the mean-field reconstruction of each visible row.

        Parameters
        ----------
        V : {ndarray, sparse matrix} of shape (n_rows, n_visible)
            Visible rows.

        Returns
        -------
        reconstruction : ndarray of shape (n_rows, n_visible)
            The expected visible values given the rows' hidden marginals.
        """
        ...

    def visible_gibbs_step(self, V, rng):
        """Run one Gibbs step v -> h -> v from each visible row.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_visible)
            Visible rows.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        V_new : ndarray of shape (n_rows, n_visible)
            The new visible rows.
        """
        ...

    def draw_samples(self, n_samples, n_steps, start, rng, means=False):
        """Run Gibbs chains from independent units and return their visible rows.

        Parameters
        ----------
        n_samples : int
            Number of chains.
        n_steps : int
            Gibbs steps per chain.
        start : ndarray of shape (n_visible,)
            Where the visible units start: the training data's rates (binary units)
            or means (Gaussian units); a general Boltzmann machine's hidden units
            start on with probability 1/2.
        rng : numpy.random.Generator
            Source of randomness.
        means : bool, default=False
            Return the visible units' conditional means in the last step (P(v = 1 |
            ...) for binary units) instead of the states drawn from them; with
            ``n_steps=0``, the means of the start. Only passed when True, so a view
            without the option still samples.

        Returns
        -------
        V : ndarray of shape (n_samples, n_visible)
            The chains' visible rows (or means) after ``n_steps`` steps.
        """
        ...


#: The base models of annealing paths an RBM or BM view offers (see ``annealing_base``).
ANNEALING_BASES = ("data", "response", "model")


def _annealing_base(view, data_rates, kind, hidden_input):
    """Biases of the base model ``kind`` (see ``RBMView.annealing_base``), float64."""
    if kind not in ANNEALING_BASES:
        raise ValueError(f"kind must be one of {ANNEALING_BASES}, got {kind!r}.")
    if kind == "model":  # the model's own biases (divided by T): only couplings anneal
        return np.asarray(view.bias_vector(), dtype=np.float64).copy()
    base = np.zeros(view.n_units)
    base[: view.n_visible] = base_bias_from_rates(data_rates, view.n_visible, view.n_visible)
    if kind == "response" and view.n_hidden:
        if data_rates is None:
            rates = np.full(view.n_visible, 0.5)
        else:
            rates = clipped_rates(data_rates)
        base[view.n_visible :] = hidden_input(rates)
    return base
