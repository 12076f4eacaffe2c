"""Annealed importance sampling (AIS) of log Z, and its reverse (RAISE) counterpart."""

import math
import time
from numbers import Integral, Real

import numpy as np

from .._capabilities import ANNEALING, Requires
from .._energy import bernoulli_sample, sigmoid
from .._sklearn import Interval, StrOptions
from ._base import LogZ, ZEstimator, as_generator, register

#: Share of the beta steps spent in [0, 0.5], [0.5, 0.9] and [0.9, 1] by the three-stage
#: schedule: Salakhutdinov & Murray (2008) used steps of 1e-3, 1e-4 and 1e-5 there,
#: i.e. 500, 4000 and 10000 steps.
THREE_STAGE = ((0.0, 0.5, 500), (0.5, 0.9, 4000), (0.9, 1.0, 10000))

#: With ``target_std_error``, the number of betas is doubled while the log weights of a
#: batch spread more than this (standard deviation, nats). Beyond it the weights are
#: heavy-tailed: for log-normal weights of spread 0.5 the standard error estimated from
#: 100 chains is itself uncertain by about 11 %, at spread 1 by about 50 %.
MAX_LOG_WEIGHT_SPREAD = 0.5

#: With ``hidden_base="auto"``, each candidate base runs a pilot of half of
#: ``n_chains`` through this fraction (1 / PILOT_SHARE) of ``n_betas``, at least
#: PILOT_MIN_CHAINS and PILOT_MIN_BETAS.
PILOT_SHARE = 4
PILOT_MIN_CHAINS = 8
PILOT_MIN_BETAS = 16

#: A doubling of the betas is worth repeating only if it narrowed the log weights to
#: less than this fraction of their spread (1 / sqrt(2) = 0.71 when the spread comes
#: from the steps alone).
DOUBLING_GAIN = 0.8

#: When added chains leave the standard error this many times above the 1 / sqrt(n)
#: forecast, the weights are heavy-tailed: the betas are doubled instead.
HEAVY_TAIL_FACTOR = 1.5

#: Caps of the adaptive search: chains in the estimate, betas, and Gibbs transitions
#: in all (pilots included; 2**27 took roughly ten minutes on a 64 x 256 RBM and two
#: hours on 784 x 500 on the 2-core benchmark machine).
MAX_CHAINS = 2**15
MAX_BETAS = 2**15
MAX_TRANSITIONS = 2**27

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
    """The model's own fast AIS chains, or the generic float64 ones."""
    if hasattr(model, "annealing"):
        return model.annealing(base_bias, n_chains, rng)
    return _InterpolatedChains(model, base_bias, n_chains, rng)


def _base_bias(model, data_rates, hidden):
    if hasattr(model, "annealing_base"):
        return model.annealing_base(data_rates, hidden)
    return model.base_bias_from_rates(data_rates)


def anneal_forward(chains, betas, progress=None):
    """Run forward AIS chains through ``betas``; returns their log importance weights.

    The weight of a chain is ``sum_k log p*_k(x_k) - log p*_(k-1)(x_k)`` with ``x_1``
    drawn from the base model and ``x_(k+1)`` from ``x_k`` by the transition at
    ``beta_k``: ``log mean exp`` of the weights estimates log(Z / Z_base).
    """
    log_w = np.zeros(chains.n_chains)
    chains.start_from_base()
    last = betas.size - 1
    every = max(1, last // 100)
    for k in range(1, betas.size):
        sample_at = betas[k] if k < last else None  # the last transition is unused
        chains.add_log_ratio(betas[k - 1], betas[k], log_w, then_sample_at=sample_at)
        if sample_at is not None:
            chains.transition(sample_at)
        if progress is not None and k % every == 0:
            progress(k, last)
    return log_w


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
    ``Z / Z_base``; the reported log Z is therefore slightly low on average (Jensen),
    with a standard error from the spread of the weights (delta method) and the
    3-sigma interval as ``lower`` / ``upper``.

    **Precision is the knob.** With ``target_std_error`` (the default) chains are
    added until the standard error is reached. First the number of betas is doubled
    while the first batch's log weights spread more than 0.5 nats (beyond that their
    spread measures the error poorly) and a doubling still narrows them; a model
    whose weights stay wide (modes the annealing cannot balance) gets more chains
    instead, and more betas again if new chains keep bringing outlying weights (the
    standard error then shrinks much slower than 1 / sqrt(chains)).
    ``LogZ.cost["log_weight_spread"]`` above 1 says to read the standard error with
    care. The search stops at 2**15 betas, 2**15 chains or 2**27 Gibbs transitions
    in all (roughly ten minutes for a 64 x 256 RBM, two hours for 784 x 500), or at
    ``max_time`` seconds: set it for large models. With ``target_std_error=None``
    one batch of ``n_chains`` chains runs through ``n_betas`` betas. Results are
    deterministic for a given random generator unless ``max_time`` stops the run
    (how far it gets then depends on the machine's speed). ``LogZ.cost`` reports what
    was spent and why the run stopped; :meth:`estimated_seconds` forecasts it.

    **Base model.** Visible units start at the training data's visible rates (stored
    at fit time). Hidden units start either uniform, or at the probabilities the data
    rates give them (``hidden_base="response"``). Which one needs fewer chains depends
    on the model: on RBMs trained on the digits "response" needed 15x fewer for 256
    hidden units and 2x more for 20, on a 784 x 500 RBM of MNIST-like data the uniform
    base left log weights spread over 60 nats and "response" 2. So ``"auto"`` runs a
    short pilot from each (half of ``n_chains`` through a quarter of ``n_betas``)
    and keeps the one whose log weights spread less.

    The elementwise work is in float32 (the log weights are summed in float64): the
    rounding it adds to a log weight is about 1e-6 nats per beta.

    :meth:`reverse_log_likelihood` anneals the other way, from data rows to the base
    model (RAISE, Burda et al. 2015), and gives a conservative estimate of the
    log-likelihood: the forward estimate tends to overstate the log-likelihood, the
    reverse one to understate it, so together they bracket it.

    Parameters
    ----------
    n_chains : int, default=64
        Chains of the first batch (importance samples simulated together); with
        ``target_std_error`` more are added as needed.
    n_betas : int, default=300
        Distributions on the path, both ends included (the cost per chain). With
        ``target_std_error`` this is where the search starts; it may be doubled.
    schedule : {"linear", "three_stage"}, default="linear"
        Spacing of the betas, see :func:`beta_schedule`.
    hidden_base : {"auto", "uniform", "response"}, default="auto"
        Hidden units of the base model: uniform, at their input from the data rates,
        or chosen per model by a pilot (see above).
    target_std_error : float or None, default=0.02
        Add chains (and betas) until the standard error of log Z is at most this many
        nats. None runs one batch.
    max_time : float or None, default=None
        Stop adding chains or betas when this many seconds would be exceeded (the
        pilot and the first batch always run). Makes the result depend on the
        machine's speed.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.views import RBMView
    >>> from skboltz.partition import AIS, Exact
    >>> rng = np.random.default_rng(0)
    >>> model = RBMView(rng.normal(0, 0.3, (4, 6)), np.zeros(6), np.zeros(4))
    >>> log_z = AIS(target_std_error=0.01).estimate(model, rng=rng)
    >>> exact = Exact().estimate(model).value
    >>> bool(log_z.std_error <= 0.01 and abs(log_z.value - exact) < 3 * log_z.std_error)
    True
    >>> log_z.cost["stopped_by"]
    'target_std_error'
    """

    requires = Requires(operations={ANNEALING})

    _parameter_constraints = {
        "n_chains": [Interval(Integral, 2, None, closed="left")],
        "n_betas": [Interval(Integral, 2, None, closed="left")],
        "schedule": [StrOptions({"three_stage", "linear"})],
        "hidden_base": [StrOptions({"auto", "uniform", "response"})],
        "target_std_error": [Interval(Real, 0, None, closed="neither"), None],
        "max_time": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(self, n_chains=64, n_betas=300, schedule="linear", hidden_base="auto",
                 target_std_error=0.02, max_time=None):
        self.n_chains = n_chains
        self.n_betas = n_betas
        self.schedule = schedule
        self.hidden_base = hidden_base
        self.target_std_error = target_std_error
        self.max_time = max_time

    # -- the forward estimate --------------------------------------------------------
    def estimate(self, model, *, rng=None, data_rates=None, progress=None):
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
            Called as ``progress(done, total)`` about a hundred times per batch, with
            the Gibbs transitions done and planned so far (``total`` grows when
            batches are added).

        Returns
        -------
        log_z : LogZ
            The estimate; ``cost`` holds ``n_chains`` and ``n_betas`` (of the final
            estimate), ``n_transitions`` (all chains and pilots), ``hidden_base``,
            ``seconds``, ``stopped_by`` ("n_chains", "target_std_error", "max_time",
            "max_chains" or "max_transitions") and ``log_weight_spread`` (standard
            deviation of the log weights, nats).
        """
        run = _AdaptiveRun(self, model, as_generator(rng), data_rates, progress)
        return run.result()

    def estimated_seconds(self, model, *, data_rates=None, rng=None):
        """A quick forecast of the seconds :meth:`estimate` will take on ``model``.

        Times a short pilot (32 chains through up to 64 betas, about 2,000 Gibbs
        transitions) and extrapolates: its speed gives the cost per transition, its
        spread of log weights (which shrinks like 1 / n_betas) the chains the target
        needs. Expect it within a factor of 2 or 3; for progress reports and
        warnings, not for decisions that must be reproducible.

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
        hidden = "response" if self.hidden_base == "response" else "uniform"
        base = _base_bias(model, data_rates, hidden)
        n_pilot, n_pilot_betas = 32, min(self.n_betas, 64)
        start = time.perf_counter()
        log_w = anneal_forward(_chains(model, base, n_pilot, rng),
                               beta_schedule(n_pilot_betas, self.schedule))
        per_transition = (time.perf_counter() - start) / (n_pilot * n_pilot_betas)
        n_betas, n_chains = self.n_betas, self.n_chains
        if self.target_std_error is not None:
            # var(log w) falls like 1 / n_betas; se ~ sd / sqrt(chains) when small.
            variance = np.var(log_w) * n_pilot_betas / n_betas
            while variance > MAX_LOG_WEIGHT_SPREAD**2 and n_betas < MAX_BETAS:
                n_betas *= 2
                variance /= 2
            n_chains = max(n_chains, math.ceil(variance / self.target_std_error**2))
        n_transitions = min(n_chains, MAX_CHAINS) * n_betas
        if self.hidden_base == "auto":  # the two pilots
            n_transitions += 2 * (max(PILOT_MIN_CHAINS, self.n_chains // 2)
                                  * max(PILOT_MIN_BETAS, self.n_betas // PILOT_SHARE))
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
        log-likelihood (Burda, Grosse & Salakhutdinov 2015). Single rows are noisy;
        average over many rows.

        Needs a model whose sampler state is the visible units (an RBM, or a
        Boltzmann machine without hidden units). The cost is ``n_rows * n_betas``
        transitions; ``n_chains``, ``target_std_error`` and ``max_time`` are not used,
        and ``hidden_base="auto"`` means "uniform".

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
        rng = as_generator(rng)
        X = np.asarray(X, dtype=np.float64)
        hidden = "response" if self.hidden_base == "response" else "uniform"
        base = _base_bias(model, data_rates, hidden)
        betas = beta_schedule(self.n_betas, self.schedule)
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


class _AdaptiveRun:
    """One AIS estimate: the base-model pilot, the betas, then batches up to the target."""

    def __init__(self, ais, model, rng, data_rates, progress):
        self.ais = ais
        self.model = model
        self.rng = rng
        self.data_rates = data_rates
        self.progress = progress
        self.start = time.perf_counter()
        self.n_transitions = 0
        self.planned = 0
        self.seconds_per_transition = None

    def _elapsed(self):
        return time.perf_counter() - self.start

    def _run(self, base, n_chains, n_betas):
        """Log weights of n_chains forward chains (run in batches) from base."""
        betas = beta_schedule(n_betas, self.ais.schedule)
        self.planned += n_chains * (n_betas - 1)
        done_before = self.n_transitions
        pieces = []
        batch = _n_batch(self.model, n_chains)
        start = time.perf_counter()
        for first in range(0, n_chains, batch):
            size = min(batch, n_chains - first)
            report = None
            if self.progress is not None:
                offset = done_before + first * (n_betas - 1)

                def report(k, _total, offset=offset, size=size):
                    self.progress(offset + k * size, self.planned)

            chains = _chains(self.model, base, size, self.rng)
            pieces.append(anneal_forward(chains, betas, report))
        n = n_chains * (n_betas - 1)
        self.n_transitions += n
        self.seconds_per_transition = (time.perf_counter() - start) / n
        return np.concatenate(pieces)

    def _fits_in_time(self, n_chains, n_betas):
        """How many of n_chains more chains fit in max_time (all when no budget)."""
        if self.ais.max_time is None:
            return n_chains
        left = self.ais.max_time - self._elapsed()
        per_chain = self.seconds_per_transition * (n_betas - 1)
        return int(min(n_chains, max(0, left) // per_chain))

    def _choose_base(self, n_betas):
        """The hidden base's name and biases, from a short pilot when it is "auto"."""
        ais, model = self.ais, self.model
        candidates = ["uniform", "response"] if ais.hidden_base == "auto" else [ais.hidden_base]
        bases = {name: _base_bias(model, self.data_rates, name) for name in candidates}
        if len(candidates) > 1 and np.array_equal(*bases.values()):  # no hidden units
            candidates = candidates[:1]
        if len(candidates) > 1:
            # Half the chains through a quarter of the betas each: the spreads of the
            # log weights rank the bases as they would at full length (16 chains
            # each picked the worse base of a digits RBM one time in five).
            n_pilot = max(PILOT_MIN_CHAINS, ais.n_chains // 2)
            pilot_betas = max(PILOT_MIN_BETAS, ais.n_betas // PILOT_SHARE)
            spreads = {name: np.std(self._run(bases[name], n_pilot, pilot_betas))
                       for name in candidates}
            candidates = [min(candidates, key=spreads.get)]
        return candidates[0], bases[candidates[0]]

    def result(self):
        ais, model = self.ais, self.model
        target = ais.target_std_error
        n_betas = ais.n_betas
        hidden, base = self._choose_base(n_betas)
        log_w = self._run(base, ais.n_chains, n_betas)
        spread = np.std(log_w)
        # More betas narrow the weights (their variance falls like 1 / n_betas) until
        # the chains' spread comes from modes the annealing cannot equilibrate: stop
        # doubling when a doubling no longer narrows them by a fifth, and keep the
        # cheaper betas then.
        while (target is not None and spread > MAX_LOG_WEIGHT_SPREAD
               and 2 * n_betas <= MAX_BETAS
               and self._fits_in_time(ais.n_chains, 2 * n_betas) == ais.n_chains):
            candidate = self._run(base, ais.n_chains, 2 * n_betas)
            if np.std(candidate) >= DOUBLING_GAIN * spread:
                break
            n_betas, log_w, spread = 2 * n_betas, candidate, np.std(candidate)
        _, std_error = _log_mean_exp(log_w)
        stopped_by = "n_chains"
        while target is not None:
            stopped_by = "target_std_error"
            if std_error <= target:
                break
            if log_w.size >= MAX_CHAINS:
                stopped_by = "max_chains"
                break
            # The standard error falls like 1 / sqrt(chains): aim 20 % past the target
            # (a batch costs its steps' overhead however few its chains), adding at
            # most three times the chains so far before looking again.
            wanted = math.ceil(1.2 * log_w.size * ((std_error / target) ** 2 - 1))
            wanted = min(max(wanted, ais.n_chains // 2, 2), 3 * log_w.size,
                         MAX_CHAINS - log_w.size)
            more = self._fits_in_time(wanted, n_betas)
            if more < 1:
                stopped_by = "max_time"
                break
            if self.n_transitions + more * (n_betas - 1) > MAX_TRANSITIONS:
                stopped_by = "max_transitions"
                break
            expected = std_error * math.sqrt(log_w.size / (log_w.size + more))
            log_w = np.concatenate([log_w, self._run(base, more, n_betas)])
            _, std_error = _log_mean_exp(log_w)
            if (std_error > HEAVY_TAIL_FACTOR * expected and 2 * n_betas <= MAX_BETAS
                    and self._fits_in_time(ais.n_chains, 2 * n_betas) == ais.n_chains):
                # New chains brought weights far above the others: a heavy tail that
                # more chains only reveal slowly. Start over with twice the betas.
                n_betas *= 2
                log_w = self._run(base, ais.n_chains, n_betas)
                _, std_error = _log_mean_exp(log_w)
        if target is None and ais.max_time is not None and log_w.size < ais.n_chains:
            stopped_by = "max_time"
        ratio, std_error = _log_mean_exp(log_w)
        value = model.base_log_partition(base) + ratio
        return LogZ(
            value, std_error, value - 3 * std_error, value + 3 * std_error,
            method=ais.name,
            cost={
                "n_chains": int(log_w.size),
                "n_betas": int(n_betas),
                "n_transitions": int(self.n_transitions),
                "hidden_base": hidden,
                "seconds": round(self._elapsed(), 4),
                "stopped_by": stopped_by,
                "log_weight_spread": round(float(np.std(log_w)), 4),
            },
        )


__all__ = ["AIS", "anneal_forward", "beta_schedule"]
