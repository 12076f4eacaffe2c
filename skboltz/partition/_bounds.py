"""A bracket on the mean log-likelihood: forward AIS from above, reverse AIS from below."""

import math
import time
from dataclasses import dataclass, field
from numbers import Real

import numpy as np
from scipy.special import logsumexp

from ..utils._runtime import warn_user
from ..utils._sklearn import check_count
from ._ais import AIS, _checked_rows

#: RAISE's betas to start from and their ceiling when ``n_betas="auto"`` (the user
#: guide's table gives the widths measured on digit-image RBMs).
AUTO_START_BETAS = 1000
AUTO_MAX_BETAS = 2**15

#: Doubling the betas goes on while it changes the bracket's width by at least this
#: fraction, and by more than the noise of the width.
NARROWING = 0.2


def log_z_floor(negative_free_energy, rows):
    """A lower bound on log Z of a model over binary visible states, from rows in
    [0, 1]^n and their ``-F(v)``: Z is at least the sum of exp(-F) over distinct binary
    rows (each is a state), and at least the largest exp(-F) of any row (-F is convex
    in v, so its largest value on the cube is at one of the states)."""
    rows = np.asarray(rows)
    negative_free_energy = np.asarray(negative_free_energy, dtype=np.float64)
    if not np.all((rows == 0) | (rows == 1)):
        return float(np.max(negative_free_energy))
    _, first = np.unique(rows, axis=0, return_index=True)
    return float(logsumexp(negative_free_energy[first]))


@dataclass(frozen=True)
class LogLikelihoodBounds:
    """A bracket on the mean log-likelihood of some rows (nats per row).

    Parameters
    ----------
    lower : float
        Conservative (low on average) estimate of the mean log-likelihood, by reverse
        annealing (RAISE) on up to ``max_rows`` of the rows, corrected to all of them.
    upper : float
        The model's own score, ``mean(-F(x)) - log Z``, with log Z from its
        ``z_estimator_``: high on average when log Z is an AIS estimate (AIS errs
        low), exact when log Z is.
    lower_std_error, upper_std_error : float
        Standard errors of each end: the test set's sampling error, plus log Z's for
        ``upper`` (``lower`` does not use log Z).
    n_betas : int
        Betas of the reverse annealing that gave ``lower``.
    n_rows_reversed : int
        Rows the reverse annealing ran on.
    gaps : dict
        Betas -> (gap, its standard error): ``upper - lower`` at each number of betas
        tried, on the reversed rows. A gap still shrinking at the last doubling says
        that more betas would tighten the bracket.
    log_z : LogZ
        The forward estimate ``upper`` used.
    seconds : float
        Time spent on the reverse annealing.
    note : str or None, default=None
        What to make of ends that cross (``lower > upper``), "" when they do not; None
        writes it from ``width`` and its standard error: within twice that error the
        two ends agree (the bracket is no wider than its noise), beyond it the reverse
        end is not conservative yet.

    Examples
    --------
    >>> from skboltz.partition import LogLikelihoodBounds
    >>> b = LogLikelihoodBounds(-105.0, -104.0, 0.4, 0.3, 4000, 100, {4000: (1.0, 0.1)})
    >>> b.width, b.note
    (1.0, '')
    >>> crossed = LogLikelihoodBounds(-103.95, -104.0, 0.4, 0.3, 4000, 100,
    ...                               {4000: (-0.05, 0.1)})
    >>> print(crossed.note)
    lower is above upper by 0.05 nats, within the noise of the width (standard error 0.1): the ends agree, and the bracket is no wider than its noise.
    """

    lower: float
    upper: float
    lower_std_error: float
    upper_std_error: float
    n_betas: int
    n_rows_reversed: int
    gaps: dict = field(default_factory=dict)
    log_z: object = None
    seconds: float = 0.0
    note: str | None = None

    def __post_init__(self):
        if self.note is None:  # frozen: set through object
            object.__setattr__(self, "note", self._crossing_note())

    def _crossing_note(self):
        if self.width >= 0:
            return ""
        error = self.width_std_error
        if error is not None and -self.width <= 2 * error:
            return (f"lower is above upper by {-self.width:.3g} nats, within the noise of "
                    f"the width (standard error {error:.3g}): the ends agree, and the "
                    "bracket is no wider than its noise.")
        return (f"lower is above upper by {-self.width:.3g} nats, beyond the noise of the "
                "width: the reverse (RAISE) end is not conservative yet; more betas "
                "(n_betas) would settle it.")

    @property
    def width(self):
        """``upper - lower``: how far apart the two ends are."""
        return self.upper - self.lower

    @property
    def width_std_error(self):
        """The standard error of ``width`` (measured on the reversed rows), or None."""
        measured = self.gaps.get(self.n_betas)
        return None if measured is None else measured[1]


def log_likelihood_bounds(model, X, log_z, *, data_rates=None, n_betas="auto",
                          max_rows=100, max_time=120.0, rng=None):
    """Bracket the mean log-likelihood of ``X``: forward AIS above, RAISE below.

    ``upper`` is ``mean(-F(x)) - log Z`` with the given (forward) log Z. ``lower``
    anneals up to ``max_rows`` evenly spaced rows back to the base model (RAISE, see
    :meth:`AIS.reverse_log_likelihood`); the gap between the two ends is measured on
    those rows, paired, and subtracted from ``upper``, so the bracket covers all the
    rows at the cost of a few. With ``n_betas="auto"`` RAISE starts at 1,000 betas and
    doubles them while that changes the width by a fifth or more, or while the
    reverse end is above the forward one (RAISE is not conservative yet), as long as
    the next run fits in ``max_time``. A reverse end still above the forward one at
    the end warns, and so does a width still changing.

    Parameters
    ----------
    model : model view
        Read-only parameters of a model whose sampler state is its visible units.
    X : array-like of shape (n_rows, n_visible)
        Rows (binary, or in [0, 1]).
    log_z : LogZ
        The forward estimate of log Z (the model's ``estimate_log_partition()``).
    data_rates : ndarray of shape (n_visible,) or None
        Visible rates of the training data (base model).
    n_betas : int or "auto", default="auto"
        RAISE's betas, or doubled from 1,000 as described.
    max_rows : int, default=100
        Rows the reverse annealing runs on (at least 1).
    max_time : float or None, default=120.0
        Seconds after which no further doubling starts.
    rng : numpy.random.Generator, int or None
        Source of randomness.

    Returns
    -------
    bounds : LogLikelihoodBounds
        ``lower``, ``upper``, their standard errors, ``n_betas``, ``gaps`` and
        ``note`` (what ends that cross mean).

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.views import RBMView
    >>> from skboltz.partition import Exact, log_likelihood_bounds
    >>> rng = np.random.default_rng(0)
    >>> model = RBMView(rng.normal(0, 0.5, (3, 6)), np.zeros(6), np.zeros(3))
    >>> X = (rng.random((50, 6)) < 0.5).astype(float)
    >>> bounds = log_likelihood_bounds(model, X, Exact().estimate(model), n_betas=500,
    ...                                rng=0)
    >>> bool(bounds.lower <= bounds.upper + 3 * bounds.lower_std_error)
    True
    """
    max_rows = check_count(max_rows, "max_rows", 1)
    if not (isinstance(n_betas, str) and n_betas == "auto"):
        n_betas = check_count(n_betas, "n_betas", 2)
    if max_time is not None and not (isinstance(max_time, Real) and max_time > 0):
        raise ValueError(f"max_time must be a positive number of seconds or None, got "
                         f"{max_time!r}.")
    X = _checked_rows(X, model.n_visible)
    rng = np.random.default_rng(rng)
    forward = -np.asarray(model.astype(np.float64).free_energy(X), dtype=np.float64)
    forward -= log_z.value
    n_rows = X.shape[0]
    rows = np.unique(np.linspace(0, n_rows - 1, min(max_rows, n_rows)).astype(np.intp))
    base = log_z.cost.get("base", "data") if isinstance(log_z.cost, dict) else "data"
    rows_error = float(np.std(forward, ddof=1) / math.sqrt(n_rows)) if n_rows > 1 else 0.0
    log_z_error = log_z.std_error or 0.0
    upper = float(np.mean(forward))
    betas = AUTO_START_BETAS if n_betas == "auto" else int(n_betas)
    gaps, start = {}, time.perf_counter()
    moving = False
    while True:
        run_start = time.perf_counter()
        reverse = AIS(n_betas=betas, base=base).reverse_log_likelihood(
            model, X[rows], rng=rng, data_rates=data_rates)
        run_seconds = time.perf_counter() - run_start
        gap_rows = forward[rows] - reverse
        gap = float(np.mean(gap_rows))
        gap_error = (float(np.std(gap_rows, ddof=1) / math.sqrt(rows.size))
                     if rows.size > 1 else 0.0)
        previous = gaps.get(betas // 2)
        gaps[betas] = (gap, gap_error)
        if n_betas != "auto":
            break
        # Worth another doubling while the last one moved the reverse estimate clearly,
        # and while it is above the forward one (not a bracket yet).
        moving = previous is None or (
            abs(previous[0] - gap) >= max(NARROWING * abs(previous[0]), 2 * gap_error))
        if not moving and gap >= -2 * gap_error:
            break
        elapsed = time.perf_counter() - start
        if 2 * betas > AUTO_MAX_BETAS or (
                max_time is not None and elapsed + 2 * run_seconds > max_time):
            break
        betas *= 2
    advice = "more betas (n_betas, or a longer max_time) would settle it"
    if gap < -2 * gap_error:
        warn_user(
            f"The reverse (RAISE) estimate is {-gap:.3g} nats above the forward one at "
            f"{betas} betas: it is not conservative yet. RAISE bounds the likelihood of "
            "its annealing chain read as a model, which fits the data better than the "
            "model itself until the annealing is long enough (a model with modes far "
            f"from the data, e.g. one trained by CD-1, needs many betas); {advice}.",
            UserWarning,
        )
    elif moving and len(gaps) > 1:
        warn_user(
            f"The log-likelihood bracket was still changing when its budget ran out "
            f"(width {gap:.3g} nats at {betas} betas, {previous[0]:.3g} at {betas // 2}): "
            f"{advice}.",
            UserWarning,
        )
    lower_error = math.hypot(rows_error, gaps[betas][1])
    return LogLikelihoodBounds(
        lower=upper - gaps[betas][0],
        upper=upper,
        lower_std_error=lower_error,
        upper_std_error=math.hypot(rows_error, log_z_error),
        n_betas=betas,
        n_rows_reversed=int(rows.size),
        gaps=gaps,
        log_z=log_z,
        seconds=round(time.perf_counter() - start, 4),
    )


__all__ = ["LogLikelihoodBounds", "log_likelihood_bounds"]
