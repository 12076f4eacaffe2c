"""Scoring: log Z once per fitted parameter set, and the scores built on it.

:class:`ScoringMixin` gives the estimators ``estimate_log_partition`` (the log Z cache,
keyed by the estimator's setting and a :func:`parameter_fingerprint` of the
parameters, so hand-edited parameters are never scored against a stale log Z),
``score_samples``, ``score`` and ``estimate_log_likelihood_bounds``, with the checks
that make a score trustworthy or say why it is not: the warning when log Z is an
approximation or a bound, the refusal of a log Z that the rows prove too low, and the
check of the states a log Z shows the model favours. The estimators of log Z are in
:mod:`skboltz.partition`; this module asks them, over the estimator's hooks
(``_model_view``, ``_free_energy_of``, ``_validate_X``, ``_input_units``,
``_input_transform``).
"""

import hashlib
import inspect
import math
import warnings

import numpy as np
from sklearn.utils.validation import check_is_fitted

from . import _degeneracy as degeneracy
from ..utils._runtime import _LogZProgress, warn_user
from ._transactions import reads_one_publication
from ..utils._validation import as_dense
from ..utils._weights import SCORE_SAMPLE_WEIGHT_DOC, score_weights, weighted_mean
from ..exceptions import (
    ApproximateScoreWarning,
    DegenerateModelWarning,
    LogZAccuracyWarning,
    SlowEstimateWarning,
)
from ..partition._base import KINDS, LogZ
from ..partition._bounds import log_likelihood_bounds, log_z_floor


def parameter_fingerprint(view):
    """A digest of every parameter array of a model view: those its
    ``parameter_arrays()`` lists (a view over layers), else its fields that hold an
    array or a tuple or list of arrays (a deep machine's layers)."""
    digest = hashlib.blake2b(digest_size=16)
    arrays_of = getattr(view, "parameter_arrays", None)
    if arrays_of is not None:
        arrays = arrays_of()
    else:
        arrays = [array for value in vars(view).values()
                  for array in (value if isinstance(value, (tuple, list)) else (value,))
                  if isinstance(array, np.ndarray)]
    for array in arrays:
        digest.update(np.ascontiguousarray(array).tobytes())
        digest.update(str((array.dtype, array.shape)).encode())
    return digest.hexdigest()


class ScoringMixin:
    """The log Z cache and the scores of a fitted model (see the module docstring)."""

    @reads_one_publication
    def estimate_log_partition(self, z_estimator=None):
        """Estimate log Z of the fitted model; the model is not changed.

        The result for a given estimator setting is computed once per fitted parameter
        set (seeded from ``random_state``) and reused, so scores are deterministic.

        Parameters
        ----------
        z_estimator : str, ZEstimator or None, default=None
            None uses the fitted ``z_estimator_``; otherwise a string ("exact", "ais",
            ...) or an estimator object from :mod:`skboltz.partition`.

        Returns
        -------
        log_z : skboltz.partition.LogZ
            The estimate with its standard error, bounds and cost.
        """
        check_is_fitted(self, "_training_state")
        view = self._model_view()
        estimator = (
            self.z_estimator_
            if z_estimator is None
            else self._resolve_z_estimator(z_estimator, view)
        )
        # Keyed by the parameters too, so hand-edited parameters are never scored
        # against a stale log Z.
        key = (repr(estimator), parameter_fingerprint(view))
        if key not in self._log_z_cache:
            rng = np.random.default_rng(self._training_state.log_z_seed)
            progress = {}
            if "progress" in inspect.signature(estimator.estimate).parameters:
                # users' own estimators may not take it
                progress["progress"] = _LogZProgress(self, estimator)
            parameters = inspect.signature(estimator.estimate).parameters
            if "data_rows" in parameters:  # AIS anneals from them too
                progress["data_rows"] = degeneracy.kept_rows(self._training_state,
                                                             np.dtype(np.float64))
            by_default = z_estimator is None and self._z_estimator_is_default()
            with warnings.catch_warnings():
                if by_default:
                    # A default estimate has a bounded budget and one short warning of
                    # its own (below) instead of the estimator's long ones.
                    warnings.simplefilter("ignore", LogZAccuracyWarning)
                    warnings.simplefilter("ignore", SlowEstimateWarning)
                log_z = estimator.estimate(
                    view, rng=rng, data_rates=self._training_state.data_rates, **progress
                )
            if not isinstance(log_z, LogZ):  # LogZ itself refuses non-finite values
                raise TypeError(
                    f"z_estimator {type(estimator).__name__}.estimate returned "
                    f"{type(log_z).__name__} {log_z!r}; it must return a "
                    "skboltz.partition.LogZ, e.g. LogZ(value, std_error, method=...)."
                )
            if by_default:
                log_z = self._default_log_z(log_z, view)
            self._log_z_cache[key] = log_z
        return self._log_z_cache[key]

    def _z_estimator_is_default(self):
        """Whether ``z_estimator`` is a named setting ("auto", "ais", ...: an estimator
        with its default budget), whose estimates are never refused: one that the
        training rows prove too low is raised to what they prove and its error
        widened (:meth:`_widened`). An estimator object is the user's explicit
        setting: an impossible estimate of it raises."""
        return isinstance(self.z_estimator, str)

    def _log_z_floor(self, view):
        """A lower bound on log Z from the training rows the model keeps (binary units,
        :func:`~skboltz.partition._bounds.log_z_floor`), or None."""
        rows = degeneracy.kept_rows(self._training_state, np.dtype(np.float64))
        if (rows is None or not self._input_units().discrete
                or not getattr(view, "free_energy_is_cheap", True)):
            return None
        return log_z_floor(-self._free_energy_of(view, rows), rows)

    def _default_log_z(self, log_z, view):
        """A default setting's estimate: raised to the training rows' bound with its
        error widened when they prove it too low, and one short warning when it did
        not converge."""
        if log_z.kind != "estimate":
            return log_z
        floor = self._log_z_floor(view)
        if floor is not None and floor - log_z.value > 3 * log_z.std_error:
            log_z = self._widened(log_z, floor, "the training rows")
        if not log_z.converged:
            self._warn_not_converged(log_z, view)
        return log_z

    @staticmethod
    def _widened(log_z, floor, rows):
        """``log_z`` raised to ``floor``, a lower bound on log Z that it falls below
        beyond its errors: the estimate missed at least ``floor - value`` nats of the
        model's probability, so its error is widened by that much (the truth is at
        least ``floor``, and an annealing estimate that missed so much may be low by
        more)."""
        missed = floor - log_z.value
        std_error = math.hypot(log_z.std_error, missed)
        caveat = (f"it was {missed:.3g} nats below what {rows} prove (log Z >= "
                  f"{floor:.6g}): it is raised to that bound and its standard error "
                  f"widened by {missed:.3g} nats")
        return LogZ(floor, std_error, floor, floor + 3 * std_error, method=log_z.method,
                    cost={**log_z.cost, "raised_to_data_bound": round(missed, 4)},
                    kind="estimate", converged=False, caveats=(*log_z.caveats, caveat))

    def _warn_not_converged(self, log_z, view):
        """The one warning of a default estimate that did not converge."""
        self._log_z_cache[("warned", log_z.method, parameter_fingerprint(view))] = True
        name = type(self).__name__
        warn_user(
            f"{name}: log Z = {log_z.value:.2f} +- {log_z.std_error:.2g} nats by "
            f"{log_z.method or 'the z_estimator'} did not converge within its default "
            "budget; the scores carry that error (estimate_log_partition().describe() "
            "says why). A larger budget gives a better one: "
            + ("z_estimator=AIS(max_transitions=10**7)." if log_z.method == "ais" else
               "pass the estimator object with more work."),
            ApproximateScoreWarning, once_per=(name, log_z.method, "default budget"),
        )

    def _log_normalizer(self, log_z=None):
        """What ``score_samples`` subtracts from -F(v): log Z (by default the fitted
        one, from :meth:`_log_z_for_scoring`), plus the input transform's
        log-Jacobian, if any."""
        value = (self._log_z_for_scoring() if log_z is None else log_z).value
        transform = self._input_transform()
        return value if transform is None else value + transform.log_abs_det

    def _log_z_for_scoring(self):
        """The fitted log Z, warning once per fitted model when it is not reliable
        (and once per search or loop: the warning is about the setting)."""
        log_z = self.estimate_log_partition()
        if not log_z.is_reliable:
            # (a default estimate that did not converge warned when it was made)
            flag = ("warned", log_z.method, parameter_fingerprint(self._model_view()))
            if flag not in self._log_z_cache:
                self._log_z_cache[flag] = True
                name, method = type(self).__name__, log_z.method or "the z_estimator"
                if log_z.kind == "estimate":
                    message = (
                        f"{name}: the scores use an estimate of log Z by {method} that "
                        "is less accurate than asked (its own warning says how; "
                        "estimate_log_partition().describe() repeats it). Its standard "
                        "error covers what the estimator found wrong, and the scores' "
                        "errors computed from it (held_out_score) carry it. "
                        + ("A larger budget or more betas (z_estimator=AIS("
                           "max_transitions=None), or AIS(n_betas=...)) give a more "
                           "accurate estimate."
                           if log_z.method == "ais" else
                           "A more accurate setting of the estimator gives a better one.")
                    )
                else:
                    message = (
                        f"{name}: the scores use log Z by {method}, {KINDS[log_z.kind]}: "
                        "they are not log-likelihoods. Models scored this way and models "
                        "scored by an exact log Z or an AIS estimate are not measured "
                        "alike, and a search or comparison across them can rank them "
                        "wrongly. z_estimator='auto' (exact, or an AIS estimate with an "
                        "error bar) measures every model the same way; "
                        "estimate_log_partition() gives each model's log Z and what it is."
                    )
                warn_user(message, ApproximateScoreWarning,
                          once_per=(name, log_z.method, log_z.kind))
        self._check_favoured_states(log_z)
        return log_z

    def _check_favoured_states(self, log_z):
        """Warn, once per fitted model, when the blank or the all-ones row holds more
        of the probability than :func:`~skboltz.core._degeneracy.favoured_extreme_row`
        allows (1 %, or ten times its share of the training rows or its probability
        under independent units at the data's rates, when that is more).

        The Gibbs chains of the check at the end of ``fit`` start near the data and may
        never reach such a mode (a CD-1 model of real digits put 94 % of its
        probability on the blank image while its chains wandered elsewhere); log Z
        sees it, so the scores that need log Z check it, for two free energies."""
        # Keyed by the estimate (hand-edited parameters get a new one), not by a
        # second digest of the parameters on every score call.
        flag = ("favoured states checked", log_z.method, log_z.value, log_z.std_error)
        units = self._input_units()
        if (flag in self._log_z_cache or log_z.kind not in ("exact", "estimate")
                or units.extreme_states(0) is None):
            return
        self._log_z_cache[flag] = True
        view = self._model_view()
        if not getattr(view, "free_energy_is_cheap", True):
            return
        state = self._training_state
        # the view's own free energy (an estimator's scoring path may estimate each
        # row's, which two rows' check is not worth)
        favoured = degeneracy.favoured_extreme_row(
            view.astype(np.float64), log_z.value, self._sampling_start_of(state),
            state.extreme_row_shares, units)
        if favoured is not None:
            name, log_probability = favoured
            warn_user(
                f"{type(self).__name__} looks degenerate: by its log Z "
                f"({log_z.value:.6g}) it puts {np.exp(log_probability):.0%} of its "
                f"probability on the {name} row: unless the training data are mostly "
                "that row, its samples and scores describe that mode, not the data. "
                f"{self._degeneracy_check_class(self).hint()}",
                DegenerateModelWarning,
            )

    @reads_one_publication
    def score_samples(self, X):
        """Log-likelihood log p(x) of each row, in nats.

        ``-free_energy(x) - log Z``, with log Z from ``z_estimator_``, estimated once
        per fitted model; deterministic and row-wise. (scikit-learn's
        ``BernoulliRBM.score_samples`` returns a randomised pseudo-likelihood
        instead.) With the default ``z_estimator="auto"`` it is the model's true
        log-probability (or log density, for real-valued visible units): exact for
        models small enough to enumerate, otherwise with an annealed-importance-sampling
        estimate of log Z whose standard error (``estimate_log_partition().std_error``,
        shared by every row) is reported. With a bound or an approximation of log Z
        (``"mean_field"``, ``"visited_states"``, ``"tap"``), or an estimate that
        stopped short of its target, the values are upper bounds or approximations,
        not log-probabilities: the first call warns
        (:class:`~skboltz.exceptions.ApproximateScoreWarning`) and the
        :class:`~skboltz.partition.LogZ` says which (``kind``, ``converged``).

        For binary visible units, values outside [0, 1] are clipped into it, with a
        :class:`~skboltz.exceptions.DataRangeWarning` (a held-out row scaled by a
        scaler fitted on other rows often falls slightly outside), and a value is
        never positive: log Z >= -F(x) for every row, so an estimate below a row's
        -F(x) within its error (or a lower bound) is taken as that row's bound, and
        one below it beyond its error raises a ``ValueError`` (a broken estimator)
        when ``z_estimator`` is an object; with a named setting ("auto", "ais") the
        estimate is raised to the bound and its standard error widened by what it
        missed, with one warning (so are estimates below the kept training rows'
        bound, when they are made). A
        density of real values may exceed 1 (a positive log density); with an input
        transform (``GaussianRBM(whiten=True)``) it is the density of the input rows,
        the log-Jacobian included.

        A row with missing entries (NaN; RBM, GaussianRBM, CategoricalRBM, TabularRBM) scores
        log p(x_observed), the missing entries summed out: exactly where the hidden
        states or the row's completions are few enough to list, otherwise by
        importance sampling, whose standard error ``score_samples_std_error`` gives
        (see the estimators' Notes).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        log_likelihood : ndarray of shape (n_samples,)
            The log-likelihood log p(x) of each row, in float64.
        """
        check_is_fitted(self, "_training_state")
        if not self._input_units().discrete:  # a density, not a probability
            normalizer = self._log_normalizer()
            X = self._validate_X(X, reset=False)
            return self._log_weights_of(self._model_view(), X)[0] - normalizer
        X = self._validate_X(X, reset=False)
        log_z = self._log_z_for_scoring()
        log_weight, std_error = self._log_weights_of(self._model_view(), X)
        log_z = self._check_below_zero(log_weight, log_z, std_error)
        log_likelihood = log_weight - self._log_normalizer(log_z)
        return np.minimum(log_likelihood, 0.0, out=log_likelihood)

    def _log_weights_of(self, view, X):
        """-F(x) of each validated row of ``X`` under ``view`` and its standard error
        (None: exact), what ``score_samples`` subtracts log Z from."""
        return -self._free_energy_of(view, X), None

    def _check_below_zero(self, log_weight, log_z, std_error=None):
        """Refuse a log Z that the rows prove too low, beyond its error.

        A point of [0, 1]^n never has a positive log-probability (-F is convex in v, so
        its maximum is at a binary state, whose probability is at most 1): log Z >=
        -F(x) for every row. A sampling estimate may fall below that within its error
        (the row's score is then capped at 0), and a lower bound may (the row's own
        weight is a better bound); anything else is a broken estimate, which capping
        would hide by scoring every row 0. A default setting's estimate is not
        refused: it is raised to the rows' bound with its error widened
        (:meth:`_widened`), and that is the model's log Z from then on. Returns the
        log Z to score with.
        """
        if std_error is not None:  # rows estimated on their own: within 3 of their errors
            log_weight = log_weight - 3 * std_error
        highest = float(np.max(log_weight, initial=-np.inf))  # the largest -F(x)
        excess = highest - log_z.value
        if excess <= 0 or not getattr(self._model_view(), "free_energy_is_cheap", True):
            return log_z
        allowed = 1e-9 * (1.0 + abs(log_z.value))  # rounding
        if log_z.kind == "estimate":
            allowed += 3 * log_z.std_error
        elif log_z.kind == "lower_bound":
            allowed = np.inf
        if excess <= allowed:
            return log_z
        if log_z.kind == "estimate" and self._z_estimator_is_default():
            widened = self._widened(log_z, highest, "the rows scored")
            view = self._model_view()
            for key, cached in list(self._log_z_cache.items()):
                if cached is log_z:  # the model's log Z from now on
                    self._log_z_cache[key] = widened
            if ("warned", log_z.method, parameter_fingerprint(view)) not in self._log_z_cache:
                self._warn_not_converged(widened, view)
            return widened
        if excess > allowed:
            raise ValueError(
                f"{type(self).__name__}: log Z = {log_z.value:.6g} from "
                f"{log_z.method or 'the z_estimator'} ({log_z.kind}) is impossible: a row "
                f"scored has -F(x) = {highest:.6g}, and log Z >= -F(x) for every row, so "
                f"log Z is at least {excess:.4g} nats higher"
                + (f" (beyond 3 standard errors, {3 * log_z.std_error:.3g})"
                   if log_z.kind == "estimate" else "")
                + ". The estimator is wrong or far from converged; "
                + ("give it a larger budget or more betas (z_estimator=AIS("
                   "max_transitions=None), or AIS(n_betas=...))." if log_z.method == "ais" else
                   "use z_estimator='auto' (exact when feasible, else AIS with an "
                   "error bar).")
            )

    def score(self, X, y=None, sample_weight=None):
        """Mean log-likelihood of the rows of ``X`` (higher is better).

        Makes ``GridSearchCV`` select models by held-out likelihood with no scorer;
        with ``z_estimator="auto"`` every candidate is measured the same way (exact,
        or an estimate of log Z with a standard error and a budget of work), whatever
        its learning method. The default budget is counted in work, so the score is
        the same on any machine. See :meth:`score_samples` for what the values are, and
        :func:`skboltz.partition.held_out_score` for the score's two errors (log Z's,
        shared by every row, and the test set's).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to score.
        y : None
            Ignored.
        {sample_weight}

        Returns
        -------
        score : float
            Mean of :meth:`score_samples` (weighted by ``sample_weight``).
        """
        weights = score_weights(sample_weight, X)
        return weighted_mean(self.score_samples(X), weights)

    score.__doc__ = score.__doc__.replace("{sample_weight}", SCORE_SAMPLE_WEIGHT_DOC)

    @reads_one_publication
    def estimate_log_likelihood_bounds(self, X, *, n_betas="auto", max_rows=100,
                                       max_time=120.0):
        """Bracket the mean log-likelihood of ``X``: an estimate from above and below.

        ``upper`` is the mean of :meth:`score_samples` (``mean(-F(x)) - log Z``),
        high on average when log Z is an annealed-importance-sampling estimate (AIS
        errs low). ``lower`` is conservative: reverse annealing (RAISE: Burda, Grosse & Salakhutdinov,
        "Accurate and conservative estimates of MRF log-likelihood using reverse
        annealing", AISTATS 2015) from up to ``max_rows`` evenly spaced rows back to
        the base model of the forward estimate, low on average; the gap between the
        two is measured on those rows and applies to all. A narrow bracket means both
        are right; a wide one that the annealing needs more betas. RAISE is only as
        good as its betas: it bounds the likelihood of its annealing chain read as a
        model, which can fit the data *better* than the model itself when the
        annealing is too short (on 784 x 500 RBMs trained by CD-1 it came out above
        the forward estimate at thousands of betas; a warning says so). With
        ``n_betas="auto"`` it starts at 1,000 betas and doubles them while that
        changes the bracket by a fifth or more, or while the reverse end is above the
        forward one, until ``max_time`` (``gaps`` records each step). Needs a model
        whose sampler state is its visible units (an RBM, or a Boltzmann machine
        without hidden units).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to bracket the mean log-likelihood of (binary, or in [0, 1]).
        n_betas : int or "auto", default="auto"
            Betas of the reverse annealing.
        max_rows : int, default=100
            Rows the reverse annealing runs on (its cost is rows x betas Gibbs
            transitions).
        max_time : float or None, default=120.0
            Seconds after which no further doubling of the betas starts.

        Returns
        -------
        bounds : skboltz.partition.LogLikelihoodBounds
            ``lower``, ``upper``, their standard errors, ``width``, ``n_betas`` and
            ``gaps`` (the bracket's width at each number of betas tried).

        Examples
        --------
        >>> from sklearn.datasets import load_digits
        >>> from skboltz import RBM
        >>> X = (load_digits().data > 7).astype(float)
        >>> rbm = RBM(n_components=16, n_iter=5, random_state=0).fit(X[:1400])
        >>> bounds = rbm.estimate_log_likelihood_bounds(X[1400:], n_betas=2000)
        >>> exact = rbm.score(X[1400:])  # exact log Z: upper is the log-likelihood
        >>> bool(bounds.lower <= exact + 3 * bounds.lower_std_error and bounds.width < 2)
        True
        """
        check_is_fitted(self, "_training_state")
        X = as_dense(self._validate_X(X, reset=False))
        self._check_complete(X, "estimate_log_likelihood_bounds")
        log_z = self._log_z_for_scoring()
        return log_likelihood_bounds(
            self._model_view(), X, log_z, data_rates=self._training_state.data_rates,
            n_betas=n_betas, max_rows=max_rows, max_time=max_time,
            rng=np.random.default_rng(self._training_state.log_z_seed),
        )

    def _log_weight_kind(self):
        """What -F(v) of a row is, as a ``LogZ.kind`` says of log Z: "exact" (a DBM's
        may be its mean-field "lower_bound" or a per-row "estimate")."""
        return "exact"


__all__ = ["ScoringMixin", "parameter_fingerprint"]
