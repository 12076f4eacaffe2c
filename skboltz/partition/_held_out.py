"""Held-out log-likelihoods with their whole error: log Z's part and the test set's part.

The mean log-likelihood of held-out rows, ``mean(-F(x)) - log Z``, has two errors:

- log Z's (its standard error, zero when exact), one number shared by every row: it
  moves the whole score up or down, and does not shrink with more rows;
- the test set's: the rows are a sample, and their mean varies from sample to sample
  (the standard deviation of the rows' scores over the square root of their number).

Two models scored on the same rows are compared on the paired differences of their
rows' scores, whose spread is usually much smaller than each model's; their log Z
errors add, since each model has its own.
"""

import math
from dataclasses import dataclass

import numpy as np


def _log_z_std_error(log_z):
    """0 for an exact log Z, its standard error for an estimate, None otherwise."""
    if log_z.kind == "exact":
        return 0.0
    if log_z.kind == "estimate":
        return float(log_z.std_error)
    return None  # a bound or an approximation: its error is unknown


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

    Examples
    --------
    >>> from skboltz.partition import HeldOutScore
    >>> score = HeldOutScore(-20.0, 0.3, 0.04, 500, "estimate")
    >>> round(score.std_error, 4)
    0.3027
    """

    mean: float
    rows_std_error: float
    log_z_std_error: float | None
    n_rows: int
    log_z_kind: str = "exact"

    @property
    def std_error(self):
        """Both errors combined, ``sqrt(rows^2 + log_z^2)``; None when log Z's is unknown."""
        if self.log_z_std_error is None:
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

    Examples
    --------
    >>> from skboltz.partition import ScoreDifference
    >>> d = ScoreDifference(0.5, 0.1, 0.05, 450)
    >>> round(d.std_error, 4), round(d.z, 2)
    (0.1118, 4.47)
    """

    difference: float
    rows_std_error: float
    log_z_std_error: float | None
    n_rows: int

    @property
    def std_error(self):
        """Both errors combined; None when a log Z error is unknown."""
        if self.log_z_std_error is None:
            return None
        return math.hypot(self.rows_std_error, self.log_z_std_error)

    @property
    def z(self):
        """``difference / std_error``: beyond about 2 (or 3), the better model is clear."""
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
        ``mean`` (``model.score(X)``), ``rows_std_error`` (the test set's) and
        ``log_z_std_error`` (log Z's, shared by every row).

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
    scores = model.score_samples(X)
    log_z = model.estimate_log_partition()
    return HeldOutScore(float(np.mean(scores)), _sampling_error(scores),
                        _log_z_std_error(log_z), int(scores.size), log_z.kind)


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
        ``std_error`` and ``z``.

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
    paired = model_a.score_samples(X) - model_b.score_samples(X)
    errors = [_log_z_std_error(model.estimate_log_partition()) for model in (model_a, model_b)]
    log_z_error = None if None in errors else math.hypot(*errors)
    return ScoreDifference(float(np.mean(paired)), _sampling_error(paired), log_z_error,
                           int(paired.size))


def _mean_score(estimator, X, y=None):
    return float(np.mean(estimator.score_samples(X)))


def _rows_std_error(estimator, X, y=None):
    return _sampling_error(estimator.score_samples(X))


def _log_z_error(estimator, X, y=None):
    error = _log_z_std_error(estimator.estimate_log_partition())
    return math.nan if error is None else error


def held_out_scoring():
    """Return scorers that bring both parts of the error into ``cv_results_``.

    Pass as ``GridSearchCV(..., scoring=held_out_scoring(), refit="log_likelihood")``:
    ``cv_results_`` then holds ``mean_test_log_likelihood`` (as with no scorer),
    ``mean_test_rows_std_error`` (each fold's sampling error) and
    ``mean_test_log_z_std_error`` (log Z's, NaN when log Z is a bound). The log Z is
    computed once per fitted model and shared by the three.

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
    """
    return {"log_likelihood": _mean_score, "rows_std_error": _rows_std_error,
            "log_z_std_error": _log_z_error}


__all__ = ["HeldOutScore", "ScoreDifference", "held_out_score", "held_out_scoring",
           "paired_score_difference"]
