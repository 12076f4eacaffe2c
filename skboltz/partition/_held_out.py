"""Held-out log-likelihoods with their whole error: log Z's part and the test set's part.

The mean log-likelihood of held-out rows, ``mean(-F(x)) - log Z``, has two errors:

- log Z's (its standard error, zero when exact), one number shared by every row: it
  moves the whole score up or down, and does not shrink with more rows;
- the test set's: the rows are a sample, and their mean varies from sample to sample
  (the standard deviation of the rows' scores over the square root of their number).

Two models scored on the same rows are compared on the paired differences of their
rows' scores, whose spread is usually much smaller than each model's; their log Z
errors add, since each model has its own.

A score that is a bound (a deep Boltzmann machine's mean-field bound on each row's
hidden sum, or a mean-field bound on log Z) or an approximation is not a log-likelihood:
its distance to the log-likelihood is unknown, so it has no standard error as one, and
a difference involving one is not a difference of log-likelihoods.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..utils._runtime import warn_user
from ..exceptions import ApproximateScoreWarning
from ._base import score_kind

#: The kinds of score that are the log-likelihood itself (exact, or estimated with the
#: error reported); the others are bounds or approximations.
LOG_LIKELIHOOD_KINDS = ("exact", "estimate")


def _log_z_std_error(log_z):
    """0 for an exact log Z, its standard error for an estimate, None otherwise."""
    if log_z.kind == "exact":
        return 0.0
    if log_z.kind == "estimate":
        return float(log_z.std_error)
    return None  # a bound or an approximation: its error is unknown


def _checked_model(model, caller):
    """Refuse, clearly, an object that is not a fitted skboltz density model."""
    missing = [name for name in ("score_samples", "estimate_log_partition")
               if not callable(getattr(model, name, None))]
    if missing:
        hint = ""
        if type(model).__name__ == "BernoulliRBM":
            hint = (" scikit-learn's BernoulliRBM scores a randomised pseudo-likelihood "
                    "and has no log Z; skboltz.RBM is its drop-in replacement with a "
                    "true log-likelihood.")
        raise TypeError(
            f"{caller} needs a fitted skboltz density model, one with score_samples and "
            "estimate_log_partition (RBM, GaussianRBM, BoltzmannMachine, DBM, "
            f"RBMClassifier); {type(model).__name__} has no "
            f"{' and no '.join(missing)}.{hint}"
        )
    return model


def _log_z_and_kind(model, caller):
    """The model's log Z and what its scores are (see score_kind)."""
    _checked_model(model, caller)
    log_z = model.estimate_log_partition()
    # What each row's -F(x) is: exact, except a DBM's bound or per-row estimate.
    log_weight_kind = getattr(model, "_log_weight_kind", None)
    return log_z, score_kind(log_z.kind, log_weight_kind() if log_weight_kind else "exact")


def _score_parts(model, X, caller):
    """The rows' scores, the model's log Z and what the scores are."""
    _checked_model(model, caller)
    scores = np.asarray(model.score_samples(X), dtype=np.float64)
    return (scores, *_log_z_and_kind(model, caller))


def _sampling_error(values):
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2:
        return math.inf
    return float(np.std(values, ddof=1) / math.sqrt(values.size))


@dataclass(frozen=True)
class HeldOutScore:
    """The mean log-likelihood of held-out rows, with both parts of its error.

    Parameters
    ----------
    mean : float
        Mean log-likelihood of the rows (nats), as ``model.score(X)``.
    rows_std_error : float
        The test set's sampling error: standard deviation of the rows' scores over
        the square root of their number.
    log_z_std_error : float or None
        The standard error of log Z (0 when exact), shared by every row; None when
        log Z is a bound or an approximation, whose error is unknown.
    n_rows : int
        Number of rows scored.
    log_z_kind : str
        What log Z is (see :class:`LogZ`).
    kind : str or None, default=None
        What ``mean`` is, said of the log-likelihood: "exact", "estimate",
        "lower_bound", "upper_bound" or "approximation" (a deep Boltzmann machine
        scored by its mean-field bound gives "lower_bound" even with an exact log Z;
        a mean-field log Z gives "upper_bound"). None infers it from ``log_z_kind``.

    Examples
    --------
    >>> from skboltz.partition import HeldOutScore
    >>> score = HeldOutScore(-20.0, 0.3, 0.04, 500, "estimate")
    >>> round(score.std_error, 4), score.kind
    (0.3027, 'estimate')
    >>> bound = HeldOutScore(-20.0, 0.3, 0.0, 500, "exact", kind="lower_bound")
    >>> bound.is_log_likelihood, bound.std_error  # a bound: its gap is unknown
    (False, None)
    """

    mean: float
    rows_std_error: float
    log_z_std_error: float | None
    n_rows: int
    log_z_kind: str = "exact"
    kind: str | None = None

    def __post_init__(self):
        if self.kind is None:  # frozen: set through object
            object.__setattr__(self, "kind", score_kind(self.log_z_kind))

    @property
    def is_log_likelihood(self):
        """Whether ``mean`` is the log-likelihood itself.

        True for an exact value or an estimate with its error, False for a bound or an
        approximation.
        """
        return self.kind in LOG_LIKELIHOOD_KINDS

    @property
    def std_error(self):
        """Both errors combined, ``sqrt(rows^2 + log_z^2)``.

        None when the score is a bound or an approximation, or log Z's error is
        unknown.
        """
        if self.log_z_std_error is None or not self.is_log_likelihood:
            return None
        return math.hypot(self.rows_std_error, self.log_z_std_error)


@dataclass(frozen=True)
class ScoreDifference:
    """The difference of two models' mean log-likelihoods on the same rows.

    Parameters
    ----------
    difference : float
        ``mean(score_a) - mean(score_b)`` (nats per row); positive when model a is
        better.
    rows_std_error : float
        The test set's part, from the paired differences of the rows' scores.
    log_z_std_error : float or None
        The two log Z estimates' part, ``sqrt(se_a^2 + se_b^2)``; None when either is a
        bound or an approximation.
    n_rows : int
        Number of rows scored.
    kinds : tuple of str, default=()
        What each model's scores are (``HeldOutScore.kind``: "exact", "estimate",
        "lower_bound", ...), model a's first; empty when not known.

    Examples
    --------
    >>> from skboltz.partition import ScoreDifference
    >>> d = ScoreDifference(0.5, 0.1, 0.05, 450)
    >>> round(d.std_error, 4), round(d.z, 2)
    (0.1118, 4.47)
    >>> ScoreDifference(0.5, 0.1, 0.0, 450, ("lower_bound", "exact")).comparable
    False
    """

    difference: float
    rows_std_error: float
    log_z_std_error: float | None
    n_rows: int
    kinds: tuple = ()

    @property
    def comparable(self):
        """Whether the difference is one of log-likelihoods.

        True when both scores are log-likelihoods (exact, or estimates with their
        errors). A bound's gap to the log-likelihood is unknown and differs between
        models, so a bound compared with an estimate, or with another bound, is not.
        """
        return all(kind in LOG_LIKELIHOOD_KINDS for kind in self.kinds)

    @property
    def std_error(self):
        """Both errors combined.

        None when the scores are not comparable or a log Z error is unknown.
        """
        if self.log_z_std_error is None or not self.comparable:
            return None
        return math.hypot(self.rows_std_error, self.log_z_std_error)

    @property
    def z(self):
        """``difference / std_error``: beyond about 2 (or 3), the better model is clear.

        None when there is no standard error (scores not comparable, or a log Z error
        unknown).
        """
        if self.std_error is None or self.std_error == 0:
            return None
        return self.difference / self.std_error


def held_out_score(model, X):
    """The mean log-likelihood of ``X`` under a fitted model, with both parts of its error.

    Parameters
    ----------
    model : fitted skboltz density model
        Any model with ``score_samples`` and ``estimate_log_partition``.
    X : array-like of shape (n_rows, n_features)
        Held-out rows.

    Returns
    -------
    score : HeldOutScore
        ``mean`` (``model.score(X)``), ``rows_std_error`` (the test set's),
        ``log_z_std_error`` (log Z's, shared by every row) and ``kind`` (what the
        mean is: a deep Boltzmann machine scored by its mean-field bound gives a lower
        bound, and then ``std_error`` is None).

    Raises
    ------
    TypeError
        When ``model`` is not a skboltz density model (e.g. scikit-learn's
        ``BernoulliRBM``, which has no log Z).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skboltz import RBM
    >>> from skboltz.partition import held_out_score
    >>> X = load_digits().data / 16
    >>> rbm = RBM(n_components=16, n_iter=5, random_state=0).fit(X[:1400])
    >>> score = held_out_score(rbm, X[1400:])  # exact log Z: only the rows' error
    >>> score.log_z_std_error, bool(0 < score.rows_std_error < 1)
    (0.0, True)
    """
    scores, log_z, kind = _score_parts(model, X, "held_out_score")
    return HeldOutScore(float(np.mean(scores)), _sampling_error(scores),
                        _log_z_std_error(log_z), int(scores.size), log_z.kind, kind)


def paired_score_difference(model_a, model_b, X):
    """Compare two fitted models on the same rows: the difference and its error.

    The rows' part of the error comes from the paired differences ``score_a(x) -
    score_b(x)``, which vary far less than either model's scores (both models find
    the same rows easy or hard); the log Z part adds the two models' standard errors.

    Parameters
    ----------
    model_a, model_b : fitted skboltz density models
        Models with ``score_samples`` and ``estimate_log_partition``.
    X : array-like of shape (n_rows, n_features)
        Held-out rows, scored by both.

    Returns
    -------
    difference : ScoreDifference
        ``difference`` (a minus b), ``rows_std_error``, ``log_z_std_error``,
        ``std_error``, ``z`` and ``kinds`` (what each model's scores are). When either
        score is a bound or an approximation (``comparable`` is False), the difference
        is not one of log-likelihoods: ``std_error`` and ``z`` are None, and an
        :class:`~skboltz.exceptions.ApproximateScoreWarning` says so.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skboltz import RBM
    >>> from skboltz.partition import paired_score_difference
    >>> X = load_digits().data / 16
    >>> a = RBM(n_components=16, n_iter=10, random_state=0).fit(X[:1400])
    >>> b = RBM(n_components=4, n_iter=10, random_state=0).fit(X[:1400])
    >>> d = paired_score_difference(a, b, X[1400:])
    >>> bool(d.difference > 0 and d.z > 3)  # 16 hidden units clearly better than 4
    True
    """
    parts = [_score_parts(model, X, "paired_score_difference")
             for model in (model_a, model_b)]
    paired = parts[0][0] - parts[1][0]
    errors = [_log_z_std_error(log_z) for _, log_z, _ in parts]
    log_z_error = None if None in errors else math.hypot(*errors)
    difference = ScoreDifference(float(np.mean(paired)), _sampling_error(paired),
                                 log_z_error, int(paired.size),
                                 tuple(kind for _, _, kind in parts))
    if not difference.comparable:
        said = [f"model {name}'s are {_KIND_WORDS[kind]}"
                for name, kind in zip("ab", difference.kinds)]
        warn_user(
            f"paired_score_difference: the two models' scores are not comparable "
            f"({'; '.join(said)}): a bound's gap to the log-likelihood is unknown and "
            "differs between models, so their difference is not a difference of "
            "log-likelihoods, and it has no standard error or z (None). Score both "
            "models as log-likelihoods (z_estimator='auto'; a DBM with "
            "likelihood='exact' or 'estimate').",
            ApproximateScoreWarning,
        )
    return difference


#: What each kind of score is, in words.
_KIND_WORDS = {
    "exact": "exact log-likelihoods",
    "estimate": "estimates of the log-likelihood",
    "lower_bound": "lower bounds on the log-likelihood",
    "upper_bound": "upper bounds on the log-likelihood",
    "approximation": "approximations of the log-likelihood",
}


def _mean_score(estimator, X, y=None):
    return float(np.mean(_score_parts(estimator, X, "held_out_scoring")[0]))


def _rows_std_error(estimator, X, y=None):
    return _sampling_error(_score_parts(estimator, X, "held_out_scoring")[0])


def _log_z_error(estimator, X, y=None):
    error = _log_z_std_error(_log_z_and_kind(estimator, "held_out_scoring")[0])
    return math.nan if error is None else error


def _is_log_likelihood(estimator, X, y=None):
    kind = _log_z_and_kind(estimator, "held_out_scoring")[1]
    return float(kind in LOG_LIKELIHOOD_KINDS)


def held_out_scoring():
    """Return scorers that bring both parts of the error into ``cv_results_``.

    Pass as ``GridSearchCV(..., scoring=held_out_scoring(), refit="log_likelihood")``:
    ``cv_results_`` then holds ``mean_test_log_likelihood`` (as with no scorer),
    ``mean_test_rows_std_error`` (each fold's sampling error),
    ``mean_test_log_z_std_error`` (log Z's, NaN when log Z is a bound) and
    ``mean_test_is_log_likelihood``: 1.0 where the scores are log-likelihoods (exact,
    or estimates with their errors), 0.0 where they are bounds or approximations (a
    mean-field log Z, a deep Boltzmann machine's mean-field bound); a candidate with
    0.0 is not measured as the others are, and its score cannot be ranked against
    theirs. The log Z is computed once per fitted model and shared by the four.

    Returns
    -------
    scoring : dict
        Name -> scorer callable ``(estimator, X, y=None) -> float``.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.model_selection import GridSearchCV
    >>> from skboltz import RBM
    >>> from skboltz.partition import held_out_scoring
    >>> X = load_digits().data[:600] / 16
    >>> search = GridSearchCV(RBM(n_iter=3, random_state=0), {"n_components": [4, 8]},
    ...                       scoring=held_out_scoring(), refit="log_likelihood", cv=2)
    >>> results = search.fit(X).cv_results_
    >>> results["mean_test_log_z_std_error"].tolist()  # exact log Z here
    [0.0, 0.0]
    >>> results["mean_test_is_log_likelihood"].tolist()
    [1.0, 1.0]
    """
    return {"log_likelihood": _mean_score, "rows_std_error": _rows_std_error,
            "log_z_std_error": _log_z_error, "is_log_likelihood": _is_log_likelihood}


__all__ = ["HeldOutScore", "ScoreDifference", "held_out_score", "held_out_scoring",
           "paired_score_difference"]
