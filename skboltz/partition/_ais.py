"""Annealed importance sampling (AIS) of log Z, and its reverse (RAISE) counterpart."""

from numbers import Integral

import numpy as np

from .._energy import bernoulli_sample, sigmoid
from .._sklearn import Interval, StrOptions
from ._base import LogZ, ZEstimator, as_generator, register

#: Share of the beta steps spent in [0, 0.5], [0.5, 0.9] and [0.9, 1] by the three-stage
#: schedule: Salakhutdinov & Murray (2008) used steps of 1e-3, 1e-4 and 1e-5 there,
#: i.e. 500, 4000 and 10000 steps.
THREE_STAGE = ((0.0, 0.5, 500), (0.5, 0.9, 4000), (0.9, 1.0, 10000))


def beta_schedule(n_betas, schedule="three_stage"):
    """Inverse temperatures from 0 (the base model) to 1 (the model), increasing.

    Parameters
    ----------
    n_betas : int
        Number of distributions on the path, both ends included (at least 2).
    schedule : {"three_stage", "linear"}, default="three_stage"
        "linear" spaces the betas evenly; "three_stage" splits the steps between
        [0, 0.5], [0.5, 0.9] and [0.9, 1] in the proportions 500 : 4000 : 10000 of
        Salakhutdinov & Murray (2008), so the steps are finest near beta = 1, where the
        distributions change fastest.

    Returns
    -------
    betas : ndarray of shape (n_betas,)
        Increasing inverse temperatures from 0 to 1.

    Examples
    --------
    >>> from skboltz.partition._ais import beta_schedule
    >>> beta_schedule(5, "linear").tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    >>> b = beta_schedule(14501)
    >>> float(b[500]), float(b[4500]), float(b[-1])
    (0.5, 0.9, 1.0)
    """
    if n_betas < 2:
        raise ValueError(f"n_betas must be at least 2, got {n_betas}.")
    if schedule == "linear":
        return np.linspace(0.0, 1.0, n_betas)
    if schedule != "three_stage":
        raise ValueError(f"schedule must be 'three_stage' or 'linear', got {schedule!r}.")
    n_steps = n_betas - 1
    total = sum(share for _, _, share in THREE_STAGE)
    counts = [max(1, round(n_steps * share / total)) for _, _, share in THREE_STAGE]
    counts[-1] = max(1, n_steps - sum(counts[:-1]))
    pieces = [np.linspace(lo, hi, count, endpoint=False)
              for (lo, hi, _), count in zip(THREE_STAGE, counts)]
    betas = np.concatenate(pieces + [np.ones(1)])
    if betas.size != n_betas:  # very short schedules: fall back to even spacing
        return np.linspace(0.0, 1.0, n_betas)
    return betas


def _log_mean_exp(log_w):
    """log mean exp(log_w) and its delta-method standard error, computed stably."""
    n = log_w.size
    shift = log_w.max()
    w = np.exp(log_w - shift)
    mean_w = w.mean()
    value = float(shift + np.log(mean_w))
    std_error = float(w.std(ddof=1) / (mean_w * np.sqrt(n))) if n > 1 else np.inf
    return value, std_error


@register("ais")
class AIS(ZEstimator):
    """Annealed importance sampling of log Z (Neal 2001; Salakhutdinov & Murray 2008).

    Chains start from an independent base model whose visible biases are the logits of
    the training data's visible rates (stored at fit time), and are carried through the
    distributions ``p_beta proportional to p_base^(1 - beta) p^beta`` by one Gibbs
    transition per beta. The importance weights give an unbiased estimate of
    ``Z / Z_base``; the reported log Z is therefore slightly low on average (Jensen),
    with a standard error from the spread of the weights (delta method) and the
    3-sigma interval as ``lower`` / ``upper``. Heavy-tailed weights (too few betas on a
    sharply peaked model) make the standard error itself unreliable: raise
    ``n_betas`` until the estimate stops moving.

    :meth:`reverse_log_likelihood` anneals the other way, from data rows to the base
    model (RAISE, Burda et al. 2015), and gives a conservative estimate of the
    log-likelihood: the forward estimate tends to overstate the log-likelihood, the
    reverse one to understate it, so together they bracket it.

    Parameters
    ----------
    n_chains : int, default=100
        Independent annealing runs (importance samples), simulated together.
    n_betas : int, default=10000
        Number of distributions on the path, both ends included; the cost is
        ``n_chains * n_betas`` Gibbs transitions.
    schedule : {"linear", "three_stage"}, default="linear"
        Spacing of the betas, see :func:`beta_schedule`. With the base model fitted
        to the data's rates, even spacing gave 3-4x smaller standard errors than the
        three-stage schedule of Salakhutdinov & Murray (2008) on every model of
        ``benchmarks/bench_partition.py`` (trained digits RBMs, random RBMs and BMs);
        the three-stage schedule spends its steps near beta = 1 and may still win on
        sharply peaked models.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.views import RBMView
    >>> from skboltz.partition import AIS, Exact
    >>> rng = np.random.default_rng(0)
    >>> model = RBMView(rng.normal(0, 0.3, (4, 6)), np.zeros(6), np.zeros(4))
    >>> log_z = AIS(n_chains=50, n_betas=500).estimate(model, rng=rng)
    >>> exact = Exact().estimate(model).value
    >>> bool(abs(log_z.value - exact) < 3 * log_z.std_error + 1e-3)
    True
    """

    _parameter_constraints = {
        "n_chains": [Interval(Integral, 2, None, closed="left")],
        "n_betas": [Interval(Integral, 2, None, closed="left")],
        "schedule": [StrOptions({"three_stage", "linear"})],
    }

    def __init__(self, n_chains=100, n_betas=10000, schedule="linear"):
        self.n_chains = n_chains
        self.n_betas = n_betas
        self.schedule = schedule

    def _prepare(self, model, data_rates):
        model = model.astype(np.float64)
        base_bias = model.base_bias_from_rates(data_rates)
        return model, base_bias, beta_schedule(self.n_betas, self.schedule)

    def estimate(self, model, *, rng=None, data_rates=None):
        rng = as_generator(rng)
        model, base_bias, betas = self._prepare(model, data_rates)
        states = bernoulli_sample(
            np.broadcast_to(sigmoid(base_bias), (self.n_chains, base_bias.size)), rng
        )
        log_w = np.zeros(self.n_chains)
        previous = model.interpolate(betas[0], base_bias)
        for k in range(1, betas.size):
            current = model.interpolate(betas[k], base_bias)
            log_w += current.log_unnormalized(states) - previous.log_unnormalized(states)
            if k < betas.size - 1:  # the last transition would not change the weights
                states = current.gibbs_step(states, rng)
            previous = current
        ratio, std_error = _log_mean_exp(log_w)
        value = model.base_log_partition(base_bias) + ratio
        return LogZ(
            value, std_error, value - 3 * std_error, value + 3 * std_error,
            method=self.name,
            cost={"n_chains": self.n_chains, "n_betas": int(betas.size),
                  "n_transitions": self.n_chains * (int(betas.size) - 2)},
        )

    def reverse_log_likelihood(self, model, X, *, rng=None, data_rates=None):
        """Conservative estimates of log p(x) per row by reverse annealing (RAISE).

        Each row starts a chain at ``x`` under the model (beta = 1) and is annealed back
        to the base model through the same betas; with ``x_K = x`` and ``x_{k-1}`` drawn
        by the Gibbs transition at ``beta_k`` from ``x_k``,

            log p_hat(x) = log p_base(x_0) + sum_k [log p*_k(x_k) - log p*_k(x_{k-1})].

        ``p_hat(x)`` is an unbiased estimate of the likelihood of the "RAISE model" (the
        forward annealing chain read as a generative model, which tends to the model
        as ``n_betas`` grows and fits the data worse than it), so ``log p_hat`` is low on
        average (Jensen): the mean over rows is a conservative estimate of the mean
        log-likelihood (Burda, Grosse & Salakhutdinov 2015). Single rows are noisy;
        average over many rows.

        Needs a model whose sampler state is the visible units (an RBM, or a
        Boltzmann machine without hidden units). The cost is
        ``n_rows * n_betas`` transitions; ``n_chains`` is not used.

        Parameters
        ----------
        model : model view
            Read-only parameters and conditionals of the model.
        X : ndarray of shape (n_rows, n_visible)
            Binary data rows.
        rng : numpy.random.Generator, int or None
            Source of randomness for the reverse chains.
        data_rates : ndarray of shape (n_visible,) or None
            Visible rates of the training data, for the base model.

        Returns
        -------
        log_likelihood : ndarray of shape (n_rows,)
            A stochastic lower estimate of log p(x) for each row, in float64.

        Examples
        --------
        >>> import numpy as np
        >>> from skboltz.views import RBMView
        >>> from skboltz.partition import AIS
        >>> model = RBMView(np.zeros((2, 3)), np.zeros(3), np.zeros(2))
        >>> ll = AIS(n_betas=10).reverse_log_likelihood(model, np.ones((4, 3)), rng=0)
        >>> bool(np.allclose(ll, 3 * np.log(0.5)))
        True
        """
        if model.n_state_units != model.n_visible:
            raise ValueError(
                "Reverse annealing needs the sampler state to be the visible units (an "
                "RBM or a Boltzmann machine without hidden units); this model's state "
                f"holds {model.n_state_units} units for {model.n_visible} visible ones."
            )
        rng = as_generator(rng)
        model, base_bias, betas = self._prepare(model, data_rates)
        states = np.array(X, dtype=np.float64)
        log_w = np.zeros(states.shape[0])
        for k in range(betas.size - 1, 0, -1):
            current = model.interpolate(betas[k], base_bias)
            log_w += current.log_unnormalized(states)
            states = current.gibbs_step(states, rng)
            log_w -= current.log_unnormalized(states)
        base = model.interpolate(0.0, base_bias)
        log_w += base.log_unnormalized(states) - model.base_log_partition(base_bias)
        return log_w


__all__ = ["AIS", "beta_schedule"]
