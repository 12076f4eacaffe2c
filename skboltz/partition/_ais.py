"""Annealed importance sampling (AIS) of log Z, and its reverse (RAISE) counterpart."""

import math
import time
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_array

from ..utils._capabilities import ANNEALING, Requires
from ..utils._energy import bernoulli_sample, sigmoid
from ..utils._runtime import warn_user
from ..utils._sklearn import Interval, StrOptions
from ..exceptions import DataRangeWarning, LogZAccuracyWarning
from ._base import LogZ, ZEstimator, as_generator, register

#: The clock of ``max_time`` (a module attribute, so tests can run the budget on a
#: clock of their own instead of waiting).
_clock = time.perf_counter

#: Share of the beta steps spent in [0, 0.5], [0.5, 0.9] and [0.9, 1] by the three-stage
#: schedule: Salakhutdinov & Murray (2008) used steps of 1e-3, 1e-4 and 1e-5 there,
#: i.e. 500, 4000 and 10000 steps.
THREE_STAGE = ((0.0, 0.5, 500), (0.5, 0.9, 4000), (0.9, 1.0, 10000))

#: With ``target_std_error``, the number of betas is doubled while the log weights of a
#: batch spread more than this (standard deviation, nats). Beyond it the weights are
#: heavy-tailed: for log-normal weights of spread 0.5 the standard error estimated from
#: 100 chains is itself uncertain by about 11 %, at spread 1 by about 50 %.
MAX_LOG_WEIGHT_SPREAD = 0.5

#: The base models ``base="auto"`` anneals from (those the model's view offers): the
#: data's visible rates with uniform hidden units, the same with the hidden units at
#: their response to the rates, and the model's own biases (only the couplings anneal).
AUTO_BASES = ("data", "response", "model")

#: With several bases, ``n_chains`` is shared between them, at least this many each.
#: A path that stays below the others beyond its errors, without rising, at
#: DROP_AFTER_RUNGS doublings of the betas in a row is annealed no further.
PATH_MIN_CHAINS = 8
DROP_AFTER_RUNGS = 2

#: The "rows" path's mixture (:func:`weighted_rows`): this many entries, the training
#: rows' nearest binary states in proportion to exp(ROWS_TEMPERATURE * -F).
ROWS_COMPONENTS = 64
ROWS_TEMPERATURE = 0.5

#: A batch starts only if its forecast time, times this margin, fits in the budget.
TIME_MARGIN = 1.25

#: Two estimates disagree when they differ by more than this many standard errors of
#: their difference.
DISAGREEMENT_SIGMAS = 3.0

#: A doubling of the betas is worth repeating only if it narrowed the log weights to
#: less than this fraction of their spread (1 / sqrt(2) = 0.71 when the spread comes
#: from the steps alone).
DOUBLING_GAIN = 0.8

#: Chains are added to reach CHAIN_MARGIN times the forecast the target needs, at most
#: CHAIN_GROWTH times the chains so far at a time.
CHAIN_MARGIN = 1.05
CHAIN_GROWTH = 8

#: When added chains leave the standard error this many times above the 1 / sqrt(n)
#: forecast, the weights are heavy-tailed: the betas are doubled instead.
HEAVY_TAIL_FACTOR = 1.5

#: Caps of the adaptive search: chains in the estimate, betas, and Gibbs transitions
#: in all (every path included; 2**27 took roughly ten minutes on a 64 x 256 RBM and two
#: hours on 784 x 500 on the 2-core benchmark machine).
MAX_CHAINS = 2**15
MAX_BETAS = 2**15
MAX_TRANSITIONS = 2**27

#: ``max_transitions="auto"``: a budget of AUTO_WORK units of work, within
#: AUTO_TRANSITIONS transitions, so that a default estimate costs about the same on
#: models of any size. A transition's work is its multiply-adds of the couplings
#: (n_visible x n_hidden) plus UNIT_WORK per unit (the elementwise work, which
#: dominates on small models: on the 2-core benchmark machine a transition of a
#: 16 x 256 RBM took 15 us, of 180 x 256 38 us, of 784 x 500 160 us, under load).
#: That is 123,000 transitions on a 784 x 500 RBM (about 20 s under load, 6 s on an
#: idle core) and 2**19 on small ones. Counted in work, not seconds: the same
#: estimate on any machine at any load.
AUTO_WORK = 2**36
UNIT_WORK = 128
AUTO_TRANSITIONS = (2**16, 2**19)

#: Chains simulated together are capped so that one (units x chains) buffer holds at
#: most this many numbers: on a 64 x 256 RBM, 300 chains per batch cost 10 % less per
#: transition than 1000, and 20 % less than 3000 (the working set stays in cache).
BATCH_ELEMENTS = 2**17


def beta_schedule(n_betas, schedule="three_stage"):
    """Inverse temperatures from 0 (the base model) to 1 (the model), increasing.

    Parameters
    ----------
    n_betas : int
        Number of distributions on the path, both ends included (at least 2).
    schedule : {"three_stage", "linear"}, default="three_stage"
        "linear" spaces the betas evenly; "three_stage" splits the steps between
        [0, 0.5], [0.5, 0.9] and [0.9, 1] in the proportions 500 : 4000 : 10000 of
        Salakhutdinov & Murray (2008), so the steps are finest near beta = 1.

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


class _InterpolatedChains:
    """AIS chains on any model view, through ``interpolate``, ``log_unnormalized`` and
    ``gibbs_step`` in float64: the reference the fast chains are tested against, and the
    fallback for views without their own ``annealing`` chains."""

    def __init__(self, model, base_bias, n_chains, rng):
        self._model = model.astype(np.float64)
        self._base = np.asarray(base_bias, dtype=np.float64)
        self._rng = rng
        self.n_chains = n_chains
        self._paths = {}
        self.states = None

    def _at(self, beta):
        if beta not in self._paths:
            if len(self._paths) > 2:  # only consecutive betas are ever needed
                self._paths.pop(next(iter(self._paths)))
            self._paths[beta] = self._model.interpolate(beta, self._base)
        return self._paths[beta]

    def start_from_base(self):
        probability = sigmoid(self._base[: self._model.n_state_units].copy())
        self.states = bernoulli_sample(
            np.broadcast_to(probability, (self.n_chains, probability.size)), self._rng
        )

    def set_states(self, X):
        self.states = np.array(X, dtype=np.float64)

    def add_log_ratio(self, beta, beta_next, log_w, sign=1.0, then_sample_at=None):
        log_w += sign * (self._at(beta_next).log_unnormalized(self.states)
                         - self._at(beta).log_unnormalized(self.states))

    def transition(self, beta):
        self.states = self._at(beta).gibbs_step(self.states, self._rng)


def _chains(model, base_bias, n_chains, rng):
    """The model's own fast AIS chains, or the generic float64 ones (views without
    ``annealing``, or whose ``annealing`` returns None for their units)."""
    annealing = getattr(model, "annealing", None)
    chains = None if annealing is None else annealing(base_bias, n_chains, rng)
    return chains if chains is not None else _InterpolatedChains(model, base_bias,
                                                                 n_chains, rng)


def _base_biases(model, data_rates, names):
    """Name -> biases of the base models ``names`` that ``model`` offers, duplicates
    dropped (without hidden units "response" is "data"). Views without
    ``annealing_base`` (or whose ``annealing_base`` returns None) offer one, the
    data's rates (``base_bias_from_rates``)."""
    annealing_base = getattr(model, "annealing_base", None)
    if annealing_base is None or annealing_base(data_rates, names[0]) is None:
        return {"data": model.base_bias_from_rates(data_rates)}
    biases = {}
    for name in names:
        bias = model.annealing_base(data_rates, name)
        if not any(np.array_equal(bias, other) for other in biases.values()):
            biases[name] = bias
    return biases


def anneal_forward(chains, betas, progress=None, increments=None):
    """Run forward AIS chains through ``betas``; returns their log importance weights.

    The weight of a chain is ``sum_k log p*_k(x_k) - log p*_(k-1)(x_k)`` with ``x_1``
    drawn from the base model and ``x_(k+1)`` from ``x_k`` by the transition at
    ``beta_k``: ``log mean exp`` of the weights estimates log(Z / Z_base).
    ``increments``, an array of shape (n_betas - 1, n_chains), receives each step's
    increment of each chain's log weight.
    """
    log_w = np.zeros(chains.n_chains)
    previous = np.zeros(chains.n_chains) if increments is not None else None
    chains.start_from_base()
    last = betas.size - 1
    every = max(1, last // 100)
    for k in range(1, betas.size):
        sample_at = betas[k] if k < last else None  # the last transition is unused
        chains.add_log_ratio(betas[k - 1], betas[k], log_w, then_sample_at=sample_at)
        if increments is not None:
            np.subtract(log_w, previous, out=increments[k - 1])
            previous[...] = log_w
        if sample_at is not None:
            chains.transition(sample_at)
        if progress is not None and k % every == 0:
            progress(k, last)
    return log_w


def even_variance_schedule(betas, step_variance, n_betas):
    """Space the betas so that each step adds about the same variance to the log weights.

    A step from beta to beta + d adds about ``(d * s(beta))**2`` to the variance of the
    log weights, with ``s`` the standard deviation of ``d log p*_beta / d beta`` under
    the chains; for a given number of steps the total is smallest when every step
    contributes alike, i.e. when the betas are evenly spaced in the "thermodynamic
    length" ``L(beta) = integral of s`` (Crooks, "Measuring thermodynamic length",
    Physical Review Letters 99, 2007). ``s`` is measured on chains that ran through
    ``betas`` (the variance of each step's increments), smoothed over neighbouring
    steps and kept above a tenth of its mean, so that no stretch of the path goes
    without steps. On RBMs of the digits this needed 20-30 % fewer chains than even
    spacing for the same standard error.

    Parameters
    ----------
    betas : ndarray of shape (n_steps + 1,)
        The betas the chains ran through, increasing from 0 to 1.
    step_variance : ndarray of shape (n_steps,)
        Variance over the chains of each step's increment of the log weights.
    n_betas : int
        Number of betas of the new schedule.

    Returns
    -------
    betas : ndarray of shape (n_betas,)
        Increasing from 0 to 1; even spacing when the variances say nothing.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.partition import beta_schedule, even_variance_schedule
    >>> betas = beta_schedule(5, "linear")
    >>> new = even_variance_schedule(betas, np.array([1.0, 1.0, 4.0, 4.0]), 4)
    >>> new.round(3).tolist()  # finer where the steps were noisier
    [0.0, 0.5, 0.75, 1.0]
    """
    widths = np.diff(betas)
    rate = np.sqrt(np.maximum(step_variance, 0.0)) / widths
    if rate.size >= 5:
        rate = np.convolve(np.pad(rate, 2, mode="edge"), np.full(5, 0.2), mode="valid")
    if not (np.all(np.isfinite(rate)) and rate.mean() > 0):
        return beta_schedule(n_betas, "linear")
    rate = np.maximum(rate, 0.1 * rate.mean())
    length = np.concatenate([[0.0], np.cumsum(rate * widths)])
    new = np.interp(np.linspace(0.0, length[-1], n_betas), length, betas)
    new[0], new[-1] = 0.0, 1.0
    return new


def _n_batch(model, n):
    """Chains per batch: at most n, and buffers of at most BATCH_ELEMENTS numbers."""
    width = max(model.n_hidden, model.n_state_units, 1)
    return max(2, min(n, BATCH_ELEMENTS // width))



@register("ais")
class AIS(ZEstimator):
    """Annealed importance sampling of log Z (Neal 2001; Salakhutdinov & Murray 2008).

    Chains start from an independent base model and are carried through the
    distributions ``p_beta proportional to p_base^(1 - beta) p^beta``, one Gibbs
    transition per beta. The importance weights give an unbiased estimate of
    ``Z / Z_base``; the reported log Z is therefore low on average (Jensen), with a
    standard error from the spread of the weights (delta method) and the 3-sigma
    interval as ``lower`` / ``upper``. A high estimate is improbable:
    ``P(Z_hat >= e^t Z) <= e^-t`` (Markov's inequality).

    **Several paths, the highest kept.** A path whose chains miss some of the
    model's modes gives an estimate that is low by the mass it missed, often with a
    tight error bar: on a 784 x 500 RBM trained by CD-1 the path from the data's
    rates with the hidden units at their response stayed 19 nats below the truth at
    10,000 betas, while the paths from the data's rates with uniform hidden units and
    from the model's own biases agreed within their errors. So ``base="auto"`` anneals
    from every base the model offers: the data's visible rates with uniform hidden
    units (``"data"``), the same with the hidden units at their input from the rates
    (``"response"``), and the model's own biases, so that only the couplings anneal
    (``"model"``). The chains are shared between them (on an RBM in the same batches),
    so this costs no more Gibbs transitions than one path. Given training rows
    (``data_rows``, which the estimators pass), a binary RBM is also annealed from a
    mixture of independent models centred on them (``"rows"``; the rows repeated in
    proportion to their tempered probability under the model, see
    ``skboltz.partition._ais.weighted_rows``): on RBM(500) models of real MNIST digits that path found 15
    to 43 nats more than the others, which never reached the probability the model
    keeps near its training rows. The paths that agree (within
    three standard errors of their difference, plus half the squared spread of the
    lower one's log weights, what a few chains of wide weights can miss of their upper
    tail) are kept; a path that stays below the others beyond that, without rising, at
    two doublings of the betas in a row is annealed no further (short paths are all
    low and still rising: which is highest there says little). When a path disagrees,
    the highest ones are kept, ``LogZ.converged`` is False, a
    :class:`~skboltz.exceptions.LogZAccuracyWarning` says by how much, and the
    standard error covers the disagreement: it adds a third of the largest gap between
    a disagreeing path and the highest one (measured at the same betas), so that the
    3-sigma interval reaches as far, and so does every error computed from it
    (:func:`~skboltz.partition.held_out_score`, ``cv_results_``). An estimate still
    rising at the last doubling of its betas is widened by its rise alike.
    ``LogZ.cost["bases"]`` records every path.

    **Precision is the knob.** With ``target_std_error`` (the default) the betas are
    doubled while the log weights spread more than 0.5 nats (beyond that their spread
    measures the error poorly, and the estimate is usually still rising with the
    betas), as long as the budget allows (without one: as long as a doubling clearly
    narrows the weights or raises the estimate); then the narrowest kept path runs
    fresh chains, ``n_chains`` at least, until their standard error is reached: they
    are the estimate. The first batch's chains only choose the path and its betas:
    the narrowest of a few chains per path is narrow because its chains missed the
    upper tail of the weights, so reused (or weighted by their estimated errors) they
    made the estimate low and its standard error too small (on small enumerable
    models, mean (estimate - exact) / standard error was -0.17 and its RMS 1.10,
    against -0.08 and 1.01 with fresh chains). Without a target (or when the budget
    leaves no room for fresh chains) the first batch's chains of the kept paths are
    the estimate, all weighted alike: one importance sample, unbiased for Z. With
    ``schedule="adaptive"`` the added chains follow betas spaced evenly in the path's
    measured thermodynamic length (:func:`even_variance_schedule`), which needed 15 to
    30 % fewer chains than even spacing on digits RBMs. If new chains keep bringing
    outlying weights (the standard error shrinking much slower than
    1 / sqrt(chains)), that path starts over with twice the betas.

    **Bounded work.** ``max_transitions`` stops the search: no batch starts that would
    take the Gibbs transitions (chains x betas, every path and batch counted) past it
    (the first batch always runs). By default ("auto") it is a fixed amount of work,
    ``2**36 / (n_visible * n_hidden + 128 * (n_visible + n_hidden))`` transitions
    within [2**16, 2**19]: 123,000 on a 784 x 500 RBM, a few seconds on one core. Counted
    in work, the estimate is the same on any machine at any load for a given random
    generator. ``max_time`` (None by default) adds a limit in seconds, for when the
    wall clock matters more than reproducibility: how far a run gets then depends on
    the machine's speed. An estimate that stops above its target warns with the
    standard error it reached (and whether the estimate was still rising when the
    betas were last doubled), and has ``converged=False``. The search also stops at
    2**15 betas or 2**15 chains. ``LogZ.cost`` reports what was spent and why the run
    stopped; :meth:`estimated_seconds` forecasts it.

    The elementwise work is in float32 (the log weights are summed in float64): the
    rounding it adds to a log weight is about 1e-6 nats per beta.

    :meth:`reverse_log_likelihood` anneals the other way, from data rows to the base
    model (RAISE: Burda, Grosse & Salakhutdinov, "Accurate and conservative estimates
    of MRF log-likelihood using reverse annealing", 2015), and gives a conservative
    estimate of the log-likelihood: the forward estimate tends to overstate the
    log-likelihood, the reverse one to understate it, so together they bracket it
    (see the estimators' ``estimate_log_likelihood_bounds``).

    Parameters
    ----------
    n_chains : int, default=64
        Chains of the first batch and of each doubling of the betas (importance
        samples simulated together), shared between the base models (8 each at
        least); with ``target_std_error``, the fewest fresh chains of the estimate
        (more are added as needed).
    n_betas : int, default=50
        Distributions on the path, both ends included (the cost per chain). With
        ``target_std_error`` this is where the search starts; it may be doubled.
    schedule : {"adaptive", "linear", "three_stage"}, default="adaptive"
        Spacing of the betas: fixed (see :func:`beta_schedule`), or "adaptive": even
        spacing for the first batch and the doublings, then even spacing in each
        path's measured thermodynamic length for the chains added to it.
    base : {"auto", "data", "response", "model"}, default="auto"
        The base model the paths start from: all three, combined and compared (see
        above), and a mixture centred on training rows when :meth:`estimate` is given
        ``data_rows`` (binary RBMs; the estimators pass the rows they keep); or one
        of the three. Models whose view offers no choice (a Gaussian RBM) always
        start from the data's rates.
    target_std_error : float or None, default=0.02
        Add chains (and betas) until the standard error of log Z is at most this many
        nats. None runs one batch.
    max_transitions : int, "auto" or None, default="auto"
        Stop adding chains or betas when this many Gibbs transitions in all (chains x
        betas, every path included) would be exceeded (the first batch always runs).
        "auto": ``2**36 / (n_visible * n_hidden + 128 * (n_visible + n_hidden))``
        within [2**16, 2**19]. None: the cap of 2**27.
    max_time : float or None, default=None
        Also stop when this many seconds would be exceeded (then the result depends
        on the machine's speed). None: no time limit.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.views import RBMView
    >>> from skboltz.partition import AIS, Exact
    >>> rng = np.random.default_rng(0)
    >>> model = RBMView(rng.normal(0, 0.3, (4, 6)), np.full(6, -0.5), np.zeros(4))
    >>> log_z = AIS(target_std_error=0.01).estimate(model, rng=rng)
    >>> exact = Exact().estimate(model).value
    >>> bool(log_z.std_error <= 0.01 and abs(log_z.value - exact) < 3 * log_z.std_error)
    True
    >>> log_z.cost["stopped_by"], log_z.kind, log_z.converged
    ('target_std_error', 'estimate', True)
    >>> {name: path["stage"] for name, path in log_z.cost["bases"].items()}
    {'data': 'kept', 'response': 'kept', 'model': 'kept'}
    """

    requires = Requires(operations={ANNEALING})

    _parameter_constraints = {
        "n_chains": [Interval(Integral, 2, None, closed="left")],
        "n_betas": [Interval(Integral, 2, None, closed="left")],
        "schedule": [StrOptions({"adaptive", "three_stage", "linear"})],
        "base": [StrOptions({"auto", *AUTO_BASES})],
        "target_std_error": [Interval(Real, 0, None, closed="neither"), None],
        "max_transitions": [Interval(Integral, 1, None, closed="left"),
                            StrOptions({"auto"}), None],
        "max_time": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(self, n_chains=64, n_betas=50, schedule="adaptive", base="auto",
                 target_std_error=0.02, max_transitions="auto", max_time=None):
        self.n_chains = n_chains
        self.n_betas = n_betas
        self.schedule = schedule
        self.base = base
        self.target_std_error = target_std_error
        self.max_transitions = max_transitions
        self.max_time = max_time

    def transition_budget(self, model):
        """Return the Gibbs transitions an estimate of ``model`` may make in all.

        Parameters
        ----------
        model : ModelView or a restricted model of the array API path
            The model whose size sets the "auto" budget.

        Returns
        -------
        n_transitions : int
            ``max_transitions`` resolved: "auto" is a fixed amount of work
            (AUTO_WORK multiply-adds over the cost of one transition, within
            AUTO_TRANSITIONS), None the unbudgeted search's MAX_TRANSITIONS.
        """
        if self.max_transitions is None:
            return MAX_TRANSITIONS
        if self.max_transitions == "auto":
            if hasattr(model, "n_visible"):
                n_visible, n_hidden = model.n_visible, model.n_hidden
            else:  # a model of the array API path: its weights (n_hidden, n_visible)
                n_hidden, n_visible = model.weights.shape
            work = n_visible * n_hidden + UNIT_WORK * (n_visible + n_hidden)
            return int(np.clip(AUTO_WORK // max(1, work), *AUTO_TRANSITIONS))
        return int(self.max_transitions)

    def _base_names(self):
        return AUTO_BASES if self.base == "auto" else (self.base,)

    def _fixed_schedule(self):
        return "linear" if self.schedule == "adaptive" else self.schedule

    # -- the forward estimate --------------------------------------------------------
    def estimate(self, model, *, rng=None, data_rates=None, progress=None,
                 data_rows=None):
        """Return a :class:`LogZ` for ``model``.

        Parameters
        ----------
        model : model view
            Read-only parameters and conditionals of the model.
        rng : numpy.random.Generator, int or None
            Source of randomness for the chains.
        data_rates : ndarray of shape (n_visible,) or None
            Mean activation of each visible unit on the training data (base model).
        progress : callable or None
            Called as ``progress(done, cap)`` about a hundred times per batch, with
            the Gibbs transitions done so far and the budget on them
            (``transition_budget``).
        data_rows : ndarray of shape (n_rows, n_visible) or None
            Training rows (values in [0, 1]). With ``base="auto"`` and a view that
            offers ``annealing_from_rows`` (binary RBMs), a fourth path anneals from a
            mixture of independent models centred on them (``"rows"``; the estimators
            pass the rows a fitted model keeps).

        Returns
        -------
        log_z : LogZ
            The estimate (``kind="estimate"``; ``converged`` False when it stopped
            above its target, its paths disagree or it was still rising). ``cost``
            holds ``n_chains`` and ``n_betas`` (of the estimate: the narrowest kept
            path's fresh chains, or the first batch's chains of the kept paths),
            ``base`` (the narrowest kept path), ``n_transitions`` (all paths),
            ``seconds``, ``stopped_by`` ("n_chains", "target_std_error",
            "max_transitions", "max_time" or "max_chains"), ``max_transitions`` (the
            budget, resolved), ``log_weight_spread`` (standard
            deviation of the narrowest kept path's log weights, nats),
            ``target_std_error``, ``sampling_std_error`` (the chains' own standard
            error; ``LogZ.std_error`` adds a third of ``systematic_error`` to it),
            ``systematic_error`` (nats: the largest disagreement of a path with the
            highest, or the last doubling's rise, 0 when neither),
            ``last_doubling_rise`` (nats, when the last doubling of the betas raised
            the estimate beyond its errors) and ``bases``: for each base, its stage
            ("kept", "disagrees" at the final betas, or "dropped" earlier),
            ``log_z``, ``std_error``, ``n_chains``, ``n_betas``,
            ``log_weight_spread`` and ``below_highest`` (nats below the highest path
            when last compared, at the same betas).
        """
        run = _AdaptiveRun(self, model, as_generator(rng), data_rates, progress,
                           data_rows)
        return run.result()

    def estimated_seconds(self, model, *, data_rates=None, rng=None):
        """A quick forecast of the seconds :meth:`estimate` will take on ``model``.

        Times a short pilot (32 chains through up to 64 betas, about 2,000 Gibbs
        transitions) and extrapolates: its speed gives the cost per transition, its
        spread of log weights (which shrinks like 1 / n_betas) the chains the target
        needs. Expect it within a factor of 2 or 3; for progress reports and
        warnings, not for decisions that must be reproducible. Never more than
        ``max_time``.

        Parameters
        ----------
        model : model view
            Read-only parameters and conditionals of the model.
        data_rates : ndarray of shape (n_visible,) or None
            Visible rates of the training data, for the base model.
        rng : numpy.random.Generator, int or None
            Source of randomness for the pilot.

        Returns
        -------
        seconds : float
            Forecast wall-clock time of ``estimate(model, data_rates=data_rates)``.

        Examples
        --------
        >>> import numpy as np
        >>> from skboltz.views import RBMView
        >>> from skboltz.partition import AIS
        >>> model = RBMView(np.full((16, 64), 0.05), np.zeros(64), np.zeros(16))
        >>> seconds = AIS().estimated_seconds(model, rng=0)
        >>> bool(0 < seconds < 60)
        True
        """
        rng = as_generator(rng)
        bases = _base_biases(model, data_rates, self._base_names())
        base = next(iter(bases.values()))
        n_pilot, n_pilot_betas = 32, min(self.n_betas, 64)
        start = time.perf_counter()
        log_w = anneal_forward(_chains(model, base, n_pilot, rng),
                               beta_schedule(n_pilot_betas, self._fixed_schedule()))
        per_transition = (time.perf_counter() - start) / (n_pilot * n_pilot_betas)
        n_betas, n_chains = self.n_betas, self.n_chains
        if self.target_std_error is not None:
            # var(log w) falls like 1 / n_betas; se ~ sd / sqrt(chains) when small.
            variance = np.var(log_w) * n_pilot_betas / n_betas
            while variance > MAX_LOG_WEIGHT_SPREAD**2 and n_betas < MAX_BETAS:
                n_betas *= 2
                variance /= 2
            n_chains = max(n_chains, math.ceil(variance / self.target_std_error**2))
        first = max(self.n_chains, PATH_MIN_CHAINS * len(bases)) if len(bases) > 1 else 0
        n_transitions = min((min(n_chains, MAX_CHAINS) + first) * n_betas,
                            self.transition_budget(model))
        seconds = n_transitions * per_transition
        return seconds if self.max_time is None else min(seconds, self.max_time)

    # -- reverse annealing -----------------------------------------------------------
    def reverse_log_likelihood(self, model, X, *, rng=None, data_rates=None, progress=None):
        """Conservative estimates of log p(x) per row by reverse annealing (RAISE).

        Each row starts a chain at ``x`` under the model (beta = 1) and is annealed back
        to the base model through ``n_betas`` betas; with ``x_K = x`` and ``x_{k-1}``
        drawn by the Gibbs transition at ``beta_k`` from ``x_k``,

            log p_hat(x) = log p_base(x_0) + sum_k [log p*_k(x_k) - log p*_k(x_{k-1})].

        ``p_hat(x)`` is an unbiased estimate of the likelihood of the "RAISE model" (the
        forward annealing chain read as a generative model, which tends to the model
        as ``n_betas`` grows and fits the data worse than it), so ``log p_hat`` is low on
        average (Jensen): the mean over rows is a conservative estimate of the mean
        log-likelihood (Burda, Grosse & Salakhutdinov, "Accurate and conservative
        estimates of MRF log-likelihood using reverse annealing", 2015). It is
        conservative by the RAISE model's shortfall, which shrinks as ``n_betas``
        grows: a useful bracket needs thousands of betas on large models (see the
        user guide). Single rows are noisy; average over many rows.

        Needs a model whose sampler state is the visible units (an RBM, or a
        Boltzmann machine without hidden units). Rows are checked as ``score_samples``
        checks them: a 2-D array of ``n_visible`` finite columns; values outside
        [0, 1] are clipped into it with a
        :class:`~skboltz.exceptions.DataRangeWarning`. The cost is
        ``n_rows * n_betas`` transitions; ``n_chains``, ``target_std_error`` and
        ``max_time`` are not used, and ``base="auto"`` means "data".

        Parameters
        ----------
        model : model view
            Read-only parameters and conditionals of the model.
        X : array-like of shape (n_rows, n_visible)
            Binary data rows.
        rng : numpy.random.Generator, int or None
            Source of randomness for the reverse chains.
        data_rates : ndarray of shape (n_visible,) or None
            Visible rates of the training data, for the base model.
        progress : callable or None
            Called as ``progress(done, total)`` with the betas done per batch of rows.

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
        # Counts alone cannot tell a Gaussian RBM's hidden-unit states from visible rows
        # when n_hidden == n_visible: its view says what its states are.
        state = getattr(model, "sampler_state", "visible")
        if model.n_state_units != model.n_visible or state != "visible":
            held = (f"its {state} units" if state != "visible"
                    else f"{model.n_state_units} units for {model.n_visible} visible ones")
            raise ValueError(
                "Reverse annealing needs the sampler state to be the visible units (a "
                "binary RBM or a Boltzmann machine without hidden units); this model's "
                f"state holds {held}."
            )
        X = _checked_rows(X, model.n_visible)
        rng = as_generator(rng)
        name = "data" if self.base == "auto" else self.base
        base = _base_biases(model, data_rates, (name,))
        base = next(iter(base.values()))
        betas = beta_schedule(self.n_betas, self._fixed_schedule())
        out = np.empty(X.shape[0])
        batch = _n_batch(model, X.shape[0])
        for start in range(0, X.shape[0], batch):
            rows = X[start : start + batch]
            chains = _chains(model, base, rows.shape[0], rng)
            out[start : start + batch] = self._anneal_reverse(
                model, chains, rows, betas, base, progress
            )
        return out

    @staticmethod
    def _anneal_reverse(model, chains, X, betas, base, progress):
        # log p_hat(x) = log p*_K(x) - sum_k [log p*_(k+1)(x_k) - log p*_k(x_k)]
        #                - log Z_base, with x_k drawn at beta_(k+1) from x_(k+1).
        log_w = np.asarray(model.astype(np.float64).log_unnormalized(X), dtype=np.float64)
        chains.set_states(X)
        last = betas.size - 1
        every = max(1, last // 100)
        for k in range(last - 1, -1, -1):
            chains.transition(betas[k + 1])
            chains.add_log_ratio(betas[k], betas[k + 1], log_w, sign=-1.0,
                                 then_sample_at=betas[k] if k > 0 else None)
            if progress is not None and (last - k) % every == 0:
                progress(last - k, last)
        return log_w - model.base_log_partition(base)


def _checked_rows(X, n_visible):
    """Rows for reverse annealing, checked as ``score_samples`` checks them."""
    X = check_array(X, dtype=np.float64, input_name="X")
    if X.shape[1] != n_visible:
        raise ValueError(
            f"X has {X.shape[1]} features, but the model has {n_visible} visible units."
        )
    outside = np.any((X < 0) | (X > 1), axis=1)
    if outside.any():
        warn_user(
            f"{int(outside.sum())} of {X.shape[0]} rows have values outside [0, 1], "
            "where binary units have no probability: they are annealed from their "
            "values clipped into [0, 1]. Scale the features as for fit.",
            DataRangeWarning,
        )
        X = np.clip(X, 0, 1)
    return X


def _disagree(a, b):
    """Whether two paths' estimates differ beyond their errors.

    Beyond DISAGREEMENT_SIGMAS standard errors of the difference, plus half the squared
    spread of the lower path's log weights: a path whose few chains have not yet drawn
    the upper tail of wide (log-normal) weights falls short by up to that much, with a
    standard error that does not show it (on digits RBMs, 21 chains of weights spread
    0.9 to 1.4 nats came out 0.7 to 0.8 nats low, over three of their standard errors,
    in 4 estimates of 54).
    """
    low, high = sorted((a, b), key=lambda record: record["log_z"])
    margin = (DISAGREEMENT_SIGMAS * math.hypot(a["std_error"], b["std_error"])
              + 0.5 * low["log_weight_spread"] ** 2)
    return high["log_z"] - low["log_z"] > margin


def _stop_words(stopped_by, ais, budget=MAX_TRANSITIONS):
    """Why an AIS run stopped, in words (``LogZ.cost["stopped_by"]``; ``budget``: the
    run's transitions budget)."""
    if stopped_by == "max_time":
        return f"it stopped at its time budget (max_time={ais.max_time:g} s)"
    if stopped_by == "target_std_error":
        return f"its sampling error reached target_std_error={ais.target_std_error:g}"
    if stopped_by == "n_chains":
        return "it ran one batch (target_std_error=None)"
    if stopped_by == "max_chains":
        return f"it stopped at its cap of {MAX_CHAINS:,} chains"
    return f"it stopped at its budget of {budget:,} Gibbs transitions"


def _rose(before, after):
    """Whether a path's estimate rose beyond its errors when its betas were doubled."""
    return after["log_z"] - before["log_z"] > DISAGREEMENT_SIGMAS * math.hypot(
        after["std_error"], before["std_error"])


class _RowsBase:
    """The base of the "rows" path: a mixture centred on training rows (the view's
    ``annealing_from_rows``, whose components are weighted alike), given as a multiset
    of ROWS_COMPONENTS entries (:func:`weighted_rows`)."""

    def __init__(self, rows):
        self.rows = rows


def weighted_rows(model, rows, n_entries=None):
    """The entries of the "rows" path's mixture: the nearest binary states of training
    rows, repeated in proportion to ``exp(ROWS_TEMPERATURE * -F(x))``.

    A mixture that weights its components alike sends as many chains to a row the
    model gives little probability as to its favourite ones; the chains seldom leave
    the neighbourhood they start in, so their log weights differ by the free energies
    of their rows (by 28 nats between training digits on an RBM(500) of MNIST), and a
    few chains decide the estimate. Weighted by the rows' (tempered) probability under
    the model, the chains start where its mass is. Any weights keep the base a
    normalized distribution, so the estimate stays an importance sample.

    Returns
    -------
    entries : ndarray of shape (n_entries, n_visible)
        Binary rows, duplicates allowed.
    """
    n_entries = ROWS_COMPONENTS if n_entries is None else n_entries
    states = np.unique(np.rint(np.clip(np.asarray(rows, dtype=np.float64), 0, 1)), axis=0)
    score = ROWS_TEMPERATURE * -np.asarray(model.astype(np.float64).free_energy(states),
                                           dtype=np.float64)
    share = np.exp(score - score.max())
    share *= n_entries / share.sum()
    counts = np.floor(share).astype(np.intp)  # the largest remainders get the rest
    counts[np.argsort(counts - share, kind="stable")[: n_entries - counts.sum()]] += 1
    return np.repeat(states, counts, axis=0)


def _shares(n_chains, n_paths):
    """Chains per path: ``n_chains`` shared evenly, PATH_MIN_CHAINS each at least."""
    if n_paths == 1:
        return [n_chains]
    each, extra = divmod(n_chains, n_paths)
    return [max(PATH_MIN_CHAINS, each + (k < extra)) for k in range(n_paths)]


class _AdaptiveRun:
    """One AIS estimate: every base's paths, the betas, the chains up to the target, the
    comparison of the paths, all within the budget."""

    def __init__(self, ais, model, rng, data_rates, progress, data_rows=None):
        self.ais = ais
        self.model = model
        self.rng = rng
        self.data_rates = data_rates
        self.data_rows = data_rows
        self.progress = progress
        self.start = _clock()
        self.budget = ais.transition_budget(model)
        self.n_transitions = 0
        self.seconds_per_transition = None
        self.rise = None  # (rise, betas before, betas after) of a last climbing doubling
        # base name -> how far below the highest path it was when last compared (nats,
        # at the same betas)
        self.below_highest = {}
        self.step_variance = {}  # base name -> (betas, variance of each step's increment)

    def _elapsed(self):
        return _clock() - self.start

    def _betas(self, name, n_betas):
        """The schedule of a path: even spacing in its measured thermodynamic length
        with ``schedule="adaptive"`` once its steps were measured, else the fixed one."""
        if self.ais.schedule != "adaptive":
            return beta_schedule(n_betas, self.ais.schedule)
        if name not in self.step_variance:
            return beta_schedule(n_betas, "linear")
        return even_variance_schedule(*self.step_variance[name], n_betas)

    def _run(self, bases, n_chains, n_betas, betas=None):
        """Per-chain estimates of log Z: name -> array, ``n_chains`` chains shared
        between ``bases`` (name -> biases; PATH_MIN_CHAINS each at least) through
        ``n_betas`` betas (``betas`` if given, else evenly spaced or the fixed
        schedule), in batches; a view that anneals several bases at once (an RBM's)
        runs them in the same batches. Each base's steps are measured (the variance
        of their increments) for the adaptive schedule."""
        measure = betas is None  # the runs on the fixed schedule measure the steps
        if betas is None:
            betas = (beta_schedule(n_betas, "linear") if self.ais.schedule == "adaptive"
                     else beta_schedule(n_betas, self.ais.schedule))
        names = list(bases)
        counts = _shares(n_chains, len(names))
        together = [name for name in names if not isinstance(bases[name], _RowsBase)]
        shared = getattr(self.model, "anneals_several_bases", False) and len(together) > 1
        groups = ([together] + [[name] for name in names if name not in together]
                  if shared else [[name] for name in names])
        out = {name: [] for name in names}
        moments = {name: [] for name in names}
        cap = self.budget
        start = _clock()
        for group in groups:
            owners = np.repeat(group, [counts[names.index(name)] for name in group])
            batch = _n_batch(self.model, owners.size)
            for first in range(0, owners.size, batch):
                owner = owners[first : first + batch]
                size = owner.size
                if len(group) > 1:
                    base = np.stack([bases[name] for name in owner])
                else:
                    base = bases[group[0]]
                report = None
                if self.progress is not None:
                    offset = self.n_transitions

                    def report(k, _total, offset=offset, size=size):
                        self.progress(offset + k * size, cap)

                if isinstance(base, _RowsBase):
                    chains = self.model.annealing_from_rows(base.rows, size, self.rng)
                    log_z_base = chains.base_log_partition
                else:
                    chains = _chains(self.model, base, size, self.rng)
                steps = np.empty((n_betas - 1, size)) if measure else None
                log_w = anneal_forward(chains, betas, report, steps)
                self.n_transitions += size * (n_betas - 1)
                for name in group:
                    mine = owner == name
                    if not isinstance(bases[name], _RowsBase):
                        log_z_base = self.model.base_log_partition(bases[name])
                    out[name].append(log_w[mine] + log_z_base)
                    if measure:
                        moments[name].append((steps[:, mine].sum(axis=1),
                                              np.square(steps[:, mine]).sum(axis=1),
                                              mine.sum()))
        n = sum(counts) * (n_betas - 1)
        self.seconds_per_transition = max(_clock() - start, 1e-12) / n
        for name, parts in moments.items():
            if not parts:
                continue
            total, squares, count = (sum(part) for part in zip(*parts))
            if count > 1:
                mean = total / count
                self.step_variance[name] = (betas, (squares - count * mean**2) / (count - 1))
        return {name: np.concatenate(pieces) for name, pieces in out.items()}

    def _fits(self, n_chains, n_betas):
        """How many of n_chains more chains through n_betas fit in the budgets: the
        transitions left, and the seconds left when there is a ``max_time``."""
        fit = min(n_chains, max(0, self.budget - self.n_transitions) // (n_betas - 1))
        if self.ais.max_time is not None:
            left = self.ais.max_time - self._elapsed()
            per_chain = TIME_MARGIN * self.seconds_per_transition * (n_betas - 1)
            fit = min(fit, max(0, left) // per_chain)
        return int(fit)

    def _limit(self, n_betas):
        """The budget that binds for chains through n_betas: "max_time" or
        "max_transitions"."""
        if self.ais.max_time is None:
            return "max_transitions"
        by_work = max(0, self.budget - self.n_transitions) // (n_betas - 1)
        return "max_transitions" if self._fits(by_work + 1, n_betas) > by_work else "max_time"

    @staticmethod
    def _record(estimates, n_betas):
        value, std_error = _log_mean_exp(estimates)
        return {"log_z": value, "std_error": std_error, "n_chains": int(estimates.size),
                "n_betas": int(n_betas), "log_weight_spread": float(np.std(estimates))}

    def result(self):
        ais, model = self.ais, self.model
        target = ais.target_std_error
        bases = _base_biases(model, self.data_rates, ais._base_names())
        if (ais.base == "auto" and self.data_rows is not None
                and len(self.data_rows) > 1 and hasattr(model, "annealing_from_rows")
                and model.annealing_from_rows(self.data_rows, 2, self.rng) is not None):
            bases["rows"] = _RowsBase(weighted_rows(model, self.data_rows))
        n_betas = ais.n_betas
        estimates = self._run(bases, ais.n_chains, n_betas)
        records = {name: self._record(values, n_betas) for name, values in estimates.items()}
        running = list(bases)  # the paths still annealed through more betas
        strikes = dict.fromkeys(bases, 0)  # rungs in a row a path fell out of agreement
        agreeing = self._consistent(records, running)
        best = min(agreeing, key=lambda name: records[name]["log_weight_spread"])
        # More betas narrow the weights (their variance falls like 1 / n_betas) until
        # the chains' spread comes from modes the annealing cannot equilibrate, and
        # raise the estimate while the path is too short to carry the chains to the
        # model's modes (a bias no number of chains removes: on 784 x 500 RBMs the
        # estimate still rose by 9 to 17 nats from 1,000 to 10,000 betas). So while
        # the weights spread wide, the betas are doubled as long as the budget allows;
        # without a budget, as long as a doubling clearly narrows the weights or raises
        # the estimate. Every path takes part (the chains are shared, so that costs
        # nothing more) until it has stayed below the others beyond its errors, without
        # rising, at two doublings in a row (the failure of a path that misses a mode;
        # short paths are all low and still rising, and which is highest there says
        # little about which is right).
        while (target is not None
               and records[best]["log_weight_spread"] > MAX_LOG_WEIGHT_SPREAD
               and 2 * n_betas <= MAX_BETAS
               and self._fits(ais.n_chains, 2 * n_betas) == ais.n_chains):
            longer = self._run({name: bases[name] for name in running}, ais.n_chains,
                               2 * n_betas)
            new = {name: self._record(values, 2 * n_betas) for name, values in longer.items()}
            rising = {name: _rose(records[name], new[name]) for name in running}
            old = records[best]
            narrowing = new[best]["log_weight_spread"] < DOUBLING_GAIN * old["log_weight_spread"]
            if self.ais.max_transitions is None and self.ais.max_time is None and not (
                    rising[best] or narrowing):
                break
            rise = new[best]["log_z"] - old["log_z"]
            self.rise = (rise, n_betas, 2 * n_betas) if rising[best] else None
            n_betas = 2 * n_betas
            estimates.update(longer)
            records.update(new)
            agreeing = self._consistent(records, running)
            for name in running:
                stuck_low = name not in agreeing and not rising[name]
                strikes[name] = strikes[name] + 1 if stuck_low else 0
            running = [name for name in running if strikes[name] < DROP_AFTER_RUNGS]
            best = min(agreeing, key=lambda name: records[name]["log_weight_spread"])
        explored = {name: estimates[name] for name in agreeing}
        fresh, stopped_by = self._estimate_chains(bases, best, records, n_betas)
        return self._log_z(records, agreeing, best, n_betas, explored, fresh, stopped_by)

    def _consistent(self, records, names):
        """The paths of ``names`` that do not fall below the highest beyond its errors
        (AIS errs low: a path far below another has missed some of the mass). Records
        how far below the highest each path is, at these same betas."""
        highest = max((records[name] for name in names), key=lambda record: record["log_z"])
        for name in names:
            self.below_highest[name] = highest["log_z"] - records[name]["log_z"]
        return [name for name in names if not _disagree(records[name], highest)]

    def _estimate_chains(self, bases, best, records, n_betas):
        """Fresh chains from the best path until their standard error reaches the
        target: (their log weights or None, why the run stopped).

        The first batch chose the path and its betas; its chains are not reused. The
        narrowest of a few chains per path is narrow because those chains missed the
        upper tail of the weights, so they are low, and so is their standard error:
        reused, with the other paths weighted by their own estimated precision, they
        made the estimate low by 0.16 of its standard error and that error 8 % too
        small on small enumerable models (3-sigma misses in 0.8 % of the estimates,
        2.5 % on 16 x 12 RBMs, against 0.27 % for a normal error); chains drawn after
        the choice are a plain importance sample of the path. At least ``n_chains`` of
        them, so that their spread measures the error. None (the first batch is the
        estimate) without a target or when the budget leaves no room for ``n_chains``
        more chains.
        """
        ais = self.ais
        target = ais.target_std_error
        if target is None:
            if self._fits(1, n_betas) < 1:
                return None, self._limit(n_betas)
            return None, "n_chains"
        explored = records[best]
        # The standard error falls like 1 / sqrt(chains): aim a little past the target
        # (a batch costs its steps' overhead however few its chains), forecast from
        # the first batch, adding at most CHAIN_GROWTH times the chains so far.
        wanted = math.ceil(CHAIN_MARGIN * explored["n_chains"]
                           * (explored["std_error"] / target) ** 2)
        wanted = min(max(wanted, ais.n_chains),
                     CHAIN_GROWTH * max(explored["n_chains"], ais.n_chains), MAX_CHAINS)
        if self._fits(ais.n_chains, n_betas) < ais.n_chains:
            return None, self._limit(n_betas)
        fresh = np.empty(0)
        while True:
            more = self._fits(wanted, n_betas)
            if more < 2:
                return fresh, self._limit(n_betas)
            n = fresh.size
            expected = (records[best]["std_error"] * math.sqrt(n / (n + more)) if n
                        else explored["std_error"] * math.sqrt(explored["n_chains"] / more))
            added = self._run({best: bases[best]}, more, n_betas,
                              self._betas(best, n_betas))[best]
            fresh = np.concatenate([fresh, added])
            records[best] = self._record(fresh, n_betas)
            own = records[best]["std_error"]
            if (own > HEAVY_TAIL_FACTOR * expected
                    and 2 * n_betas <= MAX_BETAS
                    and self._fits(ais.n_chains, 2 * n_betas) == ais.n_chains):
                # New chains brought weights far above the others: a heavy tail that
                # more chains only reveal slowly. Start this path over with twice the
                # betas.
                n_betas *= 2
                fresh = self._run({best: bases[best]}, ais.n_chains, n_betas,
                                  self._betas(best, n_betas))[best]
                records[best] = self._record(fresh, n_betas)
                own = records[best]["std_error"]
            if own <= target:
                return fresh, "target_std_error"
            n = fresh.size
            if n >= MAX_CHAINS:
                return fresh, "max_chains"
            wanted = math.ceil(CHAIN_MARGIN * n * ((own / target) ** 2 - 1))
            wanted = min(max(wanted, ais.n_chains // 2, 2), CHAIN_GROWTH * n,
                         MAX_CHAINS - n)

    def _log_z(self, records, alive, best, n_betas, explored, fresh, stopped_by):
        """The LogZ, with the warnings it deserves: the best path's fresh chains, or
        without them all the first batch's chains of the paths in agreement (each
        chain's weight is unbiased for Z, whatever its path: together they are one
        importance sample, weighted alike, so no weight depends on the estimates)."""
        ais = self.ais
        if fresh is not None and fresh.size:
            sources, final = [best], fresh
        else:
            sources, final = alive, np.concatenate([explored[name] for name in alive])
        value, sampling_error = _log_mean_exp(final)
        target = ais.target_std_error
        # Paths that fell out of agreement (at the final length, or at two lengths in
        # a row): the model has modes some paths miss, and the kept value may be low
        # as well.
        disagreeing = sorted(name for name in records if name not in alive)
        missed = target is not None and sampling_error > target
        # What the chains' spread cannot show: how far the paths disagreed (each
        # measured against the highest at the same betas) and how much the last
        # doubling of the betas still raised the estimate. Either says the value may
        # be off by about that much, so the standard error covers it: a third of it,
        # so that the 3-sigma interval reaches as far.
        disagreement = max((self.below_highest.get(name, 0.0) for name in disagreeing),
                           default=0.0)
        rise = self.rise[0] if self.rise is not None else 0.0
        systematic = max(disagreement, rise)
        std_error = math.hypot(sampling_error, systematic / DISAGREEMENT_SIGMAS)
        bases = {}
        for name, record in records.items():
            stage = "kept" if name in alive else (
                "disagrees" if record["n_betas"] >= n_betas else "dropped")
            bases[name] = {"stage": stage, **record,
                           "below_highest": round(self.below_highest.get(name, 0.0), 4)}
        cost = {
            "n_chains": int(final.size),
            "n_betas": int(records[best]["n_betas"]),
            "base": best,
            "n_transitions": int(self.n_transitions),
            "seconds": round(self._elapsed(), 4),
            "stopped_by": stopped_by,
            "max_transitions": self.budget,
            "log_weight_spread": round(records[best]["log_weight_spread"], 4),
            "target_std_error": target,
            "sampling_std_error": sampling_error,
            "systematic_error": round(systematic, 4),
            "last_doubling_rise": None if self.rise is None else round(self.rise[0], 4),
            "bases": bases,
        }
        caveats = []
        if disagreeing:
            others = "; ".join(
                f"{name} {records[name]['log_z']:.2f} +- {records[name]['std_error']:.2g} "
                f"at {records[name]['n_betas']} betas, {self.below_highest[name]:.2f} "
                "below the highest path" for name in disagreeing)
            caveats.append(
                f"its annealing paths disagree beyond their standard errors ({others}): "
                "a path that misses some of the model's modes errs low, so the truth is "
                "probably at or above this value, and its standard error includes a "
                f"third of the {disagreement:.3g} nats of disagreement")
        if rise > 0:
            _, before, after = self.rise
            caveats.append(
                f"it rose by {rise:.3g} nats when the betas were doubled from {before} to "
                f"{after}, so it is probably still low, and its standard error includes "
                "a third of the rise")
        if missed:
            caveats.append(f"its sampling error, {sampling_error:.3g}, is above "
                           f"target_std_error={target:g}")
        if caveats:
            stop = _stop_words(stopped_by, ais, self.budget)
            advice = ("More time (AIS(max_time=...), None for no limit)"
                      if stopped_by == "max_time" else
                      "A larger budget (AIS(max_transitions=...), None for its cap of "
                      f"{MAX_TRANSITIONS:,})" if stopped_by == "max_transitions" else
                      "More betas (AIS(n_betas=...), where every path starts)")
            warn_user(
                f"AIS estimate of log Z = {value:.2f} +- {std_error:.3g} nats (from the "
                f"{', '.join(repr(name) for name in sources)} base(s), "
                f"{cost['n_chains']} chains x {cost['n_betas']} betas, log weights spread "
                f"{records[best]['log_weight_spread']:.2g} nats; {stop}) is less accurate "
                "than asked: " + "; ".join(caveats) + f". {advice} gives a more "
                "accurate estimate; scores computed from this one carry its standard "
                "error.",
                LogZAccuracyWarning,
            )
        return LogZ(
            value, std_error, value - 3 * std_error, value + 3 * std_error,
            method=ais.name, cost=cost, kind="estimate",
            converged=not caveats, caveats=tuple(caveats),
        )


__all__ = ["AIS", "anneal_forward", "beta_schedule"]
