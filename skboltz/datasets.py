"""Small data generators: bars-and-stripes, and exact samples of a known RBM.

Both give data whose true distribution is known exactly, so a learnt model can be
judged against the truth rather than only against other models:

- :func:`make_bars_and_stripes` lists (or draws uniformly from) the bars-and-stripes
  patterns of a small grid, a classic test of whether a Boltzmann machine captures
  higher-order structure (MacKay, 2003).
- :func:`make_boltzmann_samples` builds a random RBM and draws exact samples from its
  visible distribution by enumeration; it can return that RBM as a fitted
  :class:`~skboltz.RBM` whose ``score`` is the true log-likelihood.
"""

from numbers import Integral, Real

import numpy as np
from scipy.special import softmax
from sklearn.utils import check_random_state

from .utils._energy import binary_states, states_of_codes
from .estimators._rbm import RBM
from .models._rbm_energy import RBMView
from .utils._sklearn import Interval, validate_params
from .exceptions import TooManyStatesError

__all__ = ["make_bars_and_stripes", "make_boltzmann_samples"]

#: Longest side of a bars-and-stripes grid: pattern codes must fit in an int64.
MAX_SIDE = 62
#: Most patterns that ``make_bars_and_stripes(n_samples=None)`` lists.
MAX_LISTED_PATTERNS = 2**20
#: Most visible units ``make_boltzmann_samples`` enumerates (2**20 states).
MAX_VISIBLE = 20
#: Visible states whose probabilities are computed per matrix product.
_CHUNK_STATES = 2**16


def _check_dtype(dtype):
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise ValueError(f"dtype must be float64 or float32, got {dtype}.")
    return dtype


def _check_shape(shape):
    if (
        len(shape) != 2
        or not all(isinstance(n, Integral) and not isinstance(n, bool) for n in shape)
        or not all(1 <= n <= MAX_SIDE for n in shape)
    ):
        raise ValueError(
            f"shape must be a pair of integers (n_rows, n_cols), each from 1 to {MAX_SIDE}; "
            f"got {shape!r}."
        )
    return int(shape[0]), int(shape[1])


def _bars_and_stripes(codes, n_rows, n_cols, dtype):
    """Patterns with the given indices (see ``make_bars_and_stripes``) and their labels."""
    codes = np.asarray(codes, dtype=np.int64)
    is_stripes = codes >= 2**n_cols
    X = np.empty((codes.size, n_rows, n_cols), dtype=dtype)
    # bars: the bits of the code say which columns are on
    X[~is_stripes] = states_of_codes(codes[~is_stripes], n_cols, dtype)[:, None, :]
    # stripes: row codes 1 .. 2**n_rows - 2 (all-off and all-on are among the bars)
    row_codes = codes[is_stripes] - 2**n_cols + 1
    X[is_stripes] = states_of_codes(row_codes, n_rows, dtype)[:, :, None]
    return X.reshape(codes.size, n_rows * n_cols), is_stripes.astype(np.int64)


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left"), None],
        "shape": [tuple, list],
        "random_state": ["random_state"],
        "dtype": "no_validation",
    },
    prefer_skip_nested_validation=True,
)
def make_bars_and_stripes(n_samples=None, *, shape=(4, 4), random_state=None,
                          dtype=np.float64):
    """Generate bars-and-stripes patterns on a small binary grid.

    A pattern on an ``n_rows`` x ``n_cols`` grid is either a *bars* pattern (each
    column independently all on or all off: vertical bars) or a *stripes* pattern
    (each row independently on or off: horizontal stripes). The all-off and all-on
    grids are both, so there are ``2**n_cols + 2**n_rows - 2`` distinct patterns.
    A model of these rows must capture the constraint that pixels on a line agree
    and that lines run one way only, which no independent (or pairwise-only visible)
    model can.

    Parameters
    ----------
    n_samples : int or None, default=None
        None returns every distinct pattern once, in a fixed order: the bars first
        (the bits of 0, 1, 2, ... say which columns are on, column 0 the lowest bit),
        then the stripes likewise by rows, without repeating the all-off and all-on
        patterns. An int draws that many patterns independently and uniformly from
        the distinct patterns (so each has probability
        ``1 / (2**n_cols + 2**n_rows - 2)``).
    shape : tuple of int (n_rows, n_cols), default=(4, 4)
        Size of the grid, each side from 1 to 62.
    random_state : int, RandomState instance or None, default=None
        Seeds the draw when ``n_samples`` is an int; unused otherwise.
    dtype : {np.float64, np.float32}, default=np.float64
        Data type of ``X``.

    Returns
    -------
    X : ndarray of shape (n_patterns or n_samples, n_rows * n_cols)
        The 0/1 patterns, each grid flattened row by row (reshape a row to ``shape``
        to see it).
    y : ndarray of int64 of shape (n_patterns or n_samples,)
        0 for a bars pattern, 1 for a stripes pattern. The all-off and all-on
        patterns, which are both, are labelled 0 (bars), so the labels are a
        function of the pattern and a classifier can reach 100% accuracy.

    Raises
    ------
    ValueError
        If ``shape`` is not a pair of integers from 1 to 62, if ``dtype`` is not a
        float type, or if ``n_samples=None`` would list more than 2**20 patterns.

    References
    ----------
    D. MacKay, "Information Theory, Inference, and Learning Algorithms", Cambridge
    University Press, 2003, section 43 (Boltzmann machines).

    Examples
    --------
    >>> from skboltz.datasets import make_bars_and_stripes
    >>> X, y = make_bars_and_stripes(shape=(2, 3))
    >>> X.shape  # 2**3 + 2**2 - 2 distinct patterns of 2 x 3 pixels
    (10, 6)
    >>> X[9].reshape(2, 3)  # the last stripes pattern: bottom row on
    array([[0., 0., 0.],
           [1., 1., 1.]])
    >>> y
    array([0, 0, 0, 0, 0, 0, 0, 0, 1, 1])
    >>> X, y = make_bars_and_stripes(1000, random_state=0)  # 4 x 4, drawn uniformly
    >>> X.shape
    (1000, 16)
    """
    n_rows, n_cols = _check_shape(shape)
    dtype = _check_dtype(dtype)
    n_patterns = 2**n_cols + 2**n_rows - 2
    if n_samples is None:
        if n_patterns > MAX_LISTED_PATTERNS:
            raise ValueError(
                f"A {n_rows} x {n_cols} grid has {n_patterns} bars-and-stripes patterns, "
                f"too many to list (at most {MAX_LISTED_PATTERNS}); pass n_samples to "
                "draw some of them at random instead."
            )
        codes = np.arange(n_patterns, dtype=np.int64)
    else:
        rng = check_random_state(random_state)
        codes = rng.randint(0, n_patterns, size=n_samples, dtype=np.int64)
    return _bars_and_stripes(codes, n_rows, n_cols, dtype)


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_visible": [Interval(Integral, 1, None, closed="left")],
        "n_hidden": [Interval(Integral, 1, None, closed="left")],
        "coupling_scale": [Interval(Real, 0, None, closed="left")],
        "bias_scale": [Interval(Real, 0, None, closed="left")],
        "return_model": ["boolean"],
        "random_state": ["random_state"],
        "dtype": "no_validation",
    },
    prefer_skip_nested_validation=True,
)
def make_boltzmann_samples(n_samples=100, *, n_visible=8, n_hidden=4, coupling_scale=1.0,
                           bias_scale=1.0, return_model=False, random_state=None,
                           dtype=np.float64):
    """Draw exact samples from the visible units of a random RBM with known parameters.

    The RBM's weights are drawn from a normal distribution with mean 0 and standard
    deviation ``coupling_scale``, its visible and hidden biases likewise with
    ``bias_scale`` (see :class:`~skboltz.RBM` for the model). Its visible distribution
    p(v) is computed exactly, by listing all ``2**n_visible`` visible states with the
    hidden units summed out and normalising over them, and the
    samples are independent draws from it: no Markov chain, no burn-in, no correlation
    between rows. With ``return_model=True`` the generating RBM is returned too, so a
    learnt model's held-out log-likelihood can be compared with the best achievable
    one.

    Parameters
    ----------
    n_samples : int, default=100
        Number of rows to draw.
    n_visible : int, default=8
        Number of visible units (features), from 1 to 20: the exact distribution
        lists ``2**n_visible`` states.
    n_hidden : int, default=4
        Number of hidden units; they are summed out exactly, so any number works.
    coupling_scale : float, default=1.0
        Standard deviation of the weights. Larger values give a more structured,
        multi-modal distribution; 0 gives independent visible units.
    bias_scale : float, default=1.0
        Standard deviation of the visible and hidden biases.
    return_model : bool, default=False
        Whether to return the generating RBM as well.
    random_state : int, RandomState instance or None, default=None
        Seeds the parameters (drawn first, so they do not depend on ``n_samples``)
        and then the samples.
    dtype : {np.float64, np.float32}, default=np.float64
        Data type of ``X`` and of the returned model's parameters. The parameters
        are rounded to ``dtype`` before p(v) is computed (in float64), so the
        samples follow exactly the returned model.

    Returns
    -------
    X : ndarray of shape (n_samples, n_visible)
        The 0/1 samples.
    model : RBM
        Only with ``return_model=True``: a fitted :class:`~skboltz.RBM` with
        ``components_``, ``intercept_visible_`` and ``intercept_hidden_`` set to the
        true parameters and ``z_estimator="exact"``, so ``model.score_samples`` is the
        true log p(v). It was never trained (``n_iter_ == 0``); its data statistics
        (used to start ``sample``'s chains) are those of ``X``.

    Raises
    ------
    skboltz.exceptions.TooManyStatesError
        If ``n_visible`` is above 20 (a subclass of ValueError).

    See Also
    --------
    skboltz.RBM.sample : Approximate samples (Gibbs chains) from any fitted RBM,
        for models too large to enumerate.

    Examples
    --------
    >>> from skboltz import RBM
    >>> from skboltz.datasets import make_boltzmann_samples
    >>> X, true_model = make_boltzmann_samples(
    ...     2000, n_visible=8, n_hidden=3, return_model=True, random_state=0)
    >>> X.shape
    (2000, 8)
    >>> X_train, X_test = X[:1000], X[1000:]
    >>> rbm = RBM(n_components=3, n_iter=20, random_state=0).fit(X_train)
    >>> # nats per row the learnt model is short of the truth (>= 0 on average)
    >>> bool(0 <= true_model.score(X_test) - rbm.score(X_test) < 0.5)
    True
    """
    dtype = _check_dtype(dtype)
    if not (np.isfinite(coupling_scale) and np.isfinite(bias_scale)):
        raise ValueError(
            f"coupling_scale and bias_scale must be finite, got {coupling_scale} and "
            f"{bias_scale}."
        )
    if n_visible > MAX_VISIBLE:
        raise TooManyStatesError(
            f"make_boltzmann_samples draws exact samples by listing all 2**n_visible "
            f"visible states; n_visible={n_visible} would need {2**n_visible:.3g} states "
            f"(at most 2**{MAX_VISIBLE} are allowed). Use n_visible <= {MAX_VISIBLE}, or "
            "build a larger RBM and draw approximate samples with RBM.sample (Gibbs "
            "chains)."
        )
    rng = check_random_state(random_state)
    view = RBMView(
        rng.normal(0.0, coupling_scale, (n_hidden, n_visible)).astype(dtype),
        rng.normal(0.0, bias_scale, n_visible).astype(dtype),
        rng.normal(0.0, bias_scale, n_hidden).astype(dtype),
    )
    exact = view.astype(np.float64)
    n_states = 2**n_visible
    log_p = np.concatenate([
        exact.log_unnormalized(binary_states(n_visible, start, min(start + _CHUNK_STATES,
                                                                   n_states)))
        for start in range(0, n_states, _CHUNK_STATES)
    ])
    # Every visible state is listed anyway, so their softmax is p(v): log Z is implied.
    probabilities = softmax(log_p)
    X = states_of_codes(rng.choice(n_states, size=n_samples, p=probabilities), n_visible,
                        dtype)
    if not return_model:
        return X
    model = RBM(n_components=n_hidden, n_iter=0, z_estimator="exact",
                random_state=int(rng.randint(np.iinfo(np.int32).max)))
    model.fit(X)
    model.components_ = view.weights.copy()
    model.intercept_visible_ = view.visible_bias.copy()
    model.intercept_hidden_ = view.hidden_bias.copy()
    return X, model
