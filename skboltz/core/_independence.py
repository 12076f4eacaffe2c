"""Is a fitted density of binary rows better than independent columns?

A density model that scores its own training rows lower than independent columns (each
column its own Bernoulli variable at the column's frequency) has learnt nothing worth
its parameters, however its training curves look: on the binary density suite an
``RBM`` with 256 hidden units trained with persistent chains at the old default step
scored Mushrooms' held-out rows at -35.8 nats against -34.2 for independent columns
and -18.9 for 20 hidden units. The check at the end of ``fit`` compares the two on the
monitoring rows (up to a few thousand training rows), only when the rows are binary,
and only as far as it costs little:

- **log Z by enumeration** when the model has at most ``2 ** EXACT_UNITS`` states to
  sum over (an RBM's smaller layer, a Boltzmann machine's units): the comparison is
  then exact, up to ``MARGIN`` nats;
- otherwise, where the view anneals, **a short AIS run** (one path from the data's
  rates, a few chains, betas in proportion to the fit's own work). Its estimate of Z
  is unbiased, so log Z comes out low far more often than high:
  ``P(log Z_hat >= log Z + t) <= exp(-t)`` (Markov's inequality). A short run makes
  the model look better than it is, never much worse, so with the margin of ``MARGIN``
  nats a warning is wrong less than once in ``exp(MARGIN)`` fits. The estimate is
  raised to the log of the summed unnormalised probabilities of the distinct rows
  when that is higher (Z is at least that sum). A short run misses a model that is
  only somewhat worse than independent columns: it catches gross failures only.

The independent columns are fitted to the same rows (by frequency, with add-one
smoothing, as the benchmarks' baseline), so an overfitted model is not excused: the
comparison is on training rows, where a sound model has the advantage.
"""

import numpy as np
import scipy.sparse as sp

from ..utils._capabilities import supports
from ..utils._runtime import warn_user
from ..exceptions import BelowIndependentWarning
from ..partition import AIS, Exact
from ..partition._bounds import log_z_floor

#: Fits of fewer parameter updates are not judged: their visible biases may not have
#: reached the columns' rates yet (a model a few updates from its start is below
#: independent columns for that reason alone; the cure is more epochs, not another
#: model).
MIN_UPDATES = 1000
#: log Z is enumerated when the model has at most 2 ** EXACT_UNITS states to sum over
#: (65,536 free energies: milliseconds to a second on 784 visible units).
EXACT_UNITS = 16
#: Warn when the model's mean log-likelihood of the rows is this many nats per row
#: below the independent columns' (with an estimated log Z: a false warning needs
#: log Z overestimated by as much, which has probability at most exp(-MARGIN)).
MARGIN = 3.0
#: The short AIS run: chains, and Gibbs transitions in all as a share of the fit's row
#: updates, within bounds on the betas.
AIS_CHAINS = 16
AIS_COST_FRACTION = 0.02
MIN_BETAS, MAX_BETAS = 100, 2000


def independent_log_likelihood(rows, weights=None, scored=None):
    """Mean log-likelihood (nats per row) of binary ``rows`` under independent columns
    at their add-one smoothed frequencies fitted to ``rows``; of ``scored`` rows
    instead (unweighted), when given (held-out rows)."""
    n_rows = rows.shape[0] if weights is None else float(np.sum(weights))
    ones = rows.sum(axis=0) if weights is None else weights @ rows
    rates = (ones + 1.0) / (n_rows + 2.0)
    if scored is not None:
        rows, weights = scored, None
    per_row = rows @ np.log(rates) + (1.0 - rows) @ np.log1p(-rates)
    return float(np.average(per_row, weights=weights))


def rows_are_binary(xp, X, allow_missing=True):
    """Whether every entry of ``X`` (arrays of namespace ``xp``, or a SciPy sparse
    matrix: its stored values) is 0 or 1; missing entries (NaN) aside unless
    ``allow_missing`` is False."""
    values = X.data if sp.issparse(X) else X
    binary = (values == 0) | (values == 1)
    return bool(xp.all(binary | xp.isnan(values) if allow_missing else binary))


class BelowIndependentCheck:
    """An estimator's check, at the end of ``fit``, that its density of binary rows is
    better than independent columns (made by the estimator:
    ``_independence_check_class``).

    Parameters
    ----------
    estimator : BoltzmannBase
        The estimator being trained (its hooks and training state).
    """

    def __init__(self, estimator):
        self.estimator = estimator

    def when_due(self, state, monitoring, n_rows_trained, n_updates):
        """``(model, independent, how)`` mean log-likelihoods of the monitoring rows if
        the model is below independent columns beyond the margin, else None.

        Run at the end of ``fit`` (not ``partial_fit``) of at least ``MIN_UPDATES``
        updates, on binary rows, when log Z is cheap to enumerate or to estimate with
        a short run; its random stream is its own (from the fit's sampling seed), so
        training and ``sample`` draw the same numbers with or without it.
        """
        rows, weights = monitoring.train, monitoring.train_weights
        if n_updates < MIN_UPDATES or rows.shape[0] == 0 or not rows_are_binary(
                np, rows, allow_missing=False):
            return None
        view = self.estimator._model_view_of(state).astype(np.float64)
        if not getattr(view, "free_energy_is_cheap", True):
            return None
        rows = np.asarray(rows, dtype=np.float64)
        independent = independent_log_likelihood(rows, weights)
        free_energies = view.free_energy(rows)
        free_energy = np.average(free_energies, weights=weights)
        if 2**view.n_enumerated_units <= 2**EXACT_UNITS:
            log_z, how = Exact().estimate(view).value, "exact log Z"
        elif supports(view, AIS):
            n_betas = int(AIS_COST_FRACTION * n_rows_trained / AIS_CHAINS)
            ais = AIS(n_chains=AIS_CHAINS, n_betas=min(MAX_BETAS, max(MIN_BETAS, n_betas)),
                      schedule="linear", base="data", target_std_error=None,
                      max_time=None)
            rng = np.random.default_rng([state.sampling_seed, state.n_iter, 1])
            with np.errstate(over="ignore", invalid="ignore"):
                log_z = ais.estimate(view, rng=rng, data_rates=rows.mean(axis=0)).value
            # the rows' own bound on log Z lifts a short run's low estimate for free
            log_z = max(log_z, log_z_floor(-free_energies, rows))
            how = (f"log Z from a short AIS run ({ais.n_betas} betas), which flatters "
                   "the model")
        else:
            return None
        model = float(-free_energy - log_z)
        if not model < independent - MARGIN:
            return None
        return model, independent, how

    def warn(self, found):
        """Warn that the fitted model is below independent columns (``found``: what
        :meth:`when_due` returned)."""
        model, independent, how = found
        estimator = self.estimator
        warn_user(
            f"{type(estimator).__name__} scores its own training rows at {model:.4g} "
            f"nats per row ({how}), below independent columns at the rows' frequencies "
            f"({independent:.4g}): as a density it is worse than no model at all. "
            f"{estimator._below_independent_hint()}",
            BelowIndependentWarning,
        )
