"""Gaussian-Bernoulli restricted Boltzmann machine: real-valued visible units."""

import time
from dataclasses import dataclass
from numbers import Integral

import numpy as np
from scipy.linalg import solve_triangular
from sklearn.utils.validation import validate_data

from ..utils._array_api import ArrayAPIMixin
from ..core._base import TRAINING_CONSTRAINTS
from ..core._divergence import DivergenceCheck
from ..utils._energy import column_means
from ..models._gaussian_rbm_energy import (
    AugmentedGaussianRBM,
    GaussianRBMLayout,
    GaussianRBMView,
)
from ..core._monitoring import MONITOR_ROWS, MONITORING_CONSTRAINTS, MONITORING_PARAMETERS_DOC
from ._restricted import MISSING_ENTRIES_DOC, RestrictedBoltzmannBase
from ..utils._runtime import check_memory, warn_user
from ..utils._sklearn import Interval, StrOptions
from ..core._strategies import document_strategy_options, strategy_constraints
from ..core._training import AveragedTrainingState, shared
from ..utils._validation import as_dense
from ..utils._weights import mean_square, scaled_to_largest
from ..exceptions import DataRangeWarning, DataScaleWarning, TrainingDivergedError

#: Features whose standard deviation is above this, or below its inverse, are "not
#: standardised" (DataScaleWarning).
SCALE_TOLERANCE = 10.0

#: Largest relative decrease of a variance in one update (sigma^2 at least halves).
MAX_VARIANCE_DECREASE = 0.5

#: A learned variance below this (on features of variance 1) has collapsed: the
#: likelihood of repeated values grows without bound as their variance shrinks.
MIN_VARIANCE = 1e-6

#: Training has run away when some hidden state's visible mean, or some standard
#: deviation, lies this many times the data's scale (largest feature standard deviation)
#: from the data: far below DIVERGED_MAGNITUDE, yet no real fit comes near it.
RUNAWAY_SCALE = 1e3

#: A later partial_fit call judges a small scale from at least this many values.
MIN_SCALE_VALUES = 50

#: The whitening's covariance needs this many rows: the covariance of 2 rows has rank 1.
MIN_WHITENING_ROWS = 3

#: d x d float64 matrices the whitening of d features holds at once (a fold's
#: covariance, its correlation matrix and eigenvectors, then the covariance and its
#: Cholesky factor), and one for the factor in float32 data's dtype.
WHITENING_MATRICES = 4

#: Shrinkages a of the whitening's covariance towards a multiple of the identity,
#: (1 - a) S + a m I (m: the mean variance), among which its cross-validated log
#: density chooses.
SHRINKAGE_GRID = np.array([0.0, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0])

#: Folds of that cross-validation.
WHITENING_FOLDS = 5

#: Largest share of each whitened feature's variance the hidden units carry at the
#: start of a fit (see starting_scales; on the diabetes, breast-cancer, wine and iris
#: tables 0.9 gained 0.0-1.1 nats per held-out row over the full Gaussian, 0.5 less).
WHITENED_HIDDEN_SHARE = 0.9

#: Every variance of the whitening's covariance is raised by this times the mean
#: variance, so that it stays positive definite (scikit-learn's GaussianMixture adds
#: reg_covar=1e-6 likewise).
COVARIANCE_RIDGE = 1e-6


def starting_scales(n_components, whitened):
    """The starting weights' standard deviation and the starting log variance of a
    fit (the same for every feature); ``whitened``: the fit whitens more rows than
    features (fewer do not have a unit covariance once whitened) and learns the
    variances (fixed variances stay at 1, and so start there).

    Unwhitened: small weights (0.01) and unit variances (Hinton's practical guide):
    the data's correlations make the weights grow along their directions. Whitened
    rows have unit covariance, which the Gaussian of W = 0 and unit variances already
    fits exactly: a saddle of the likelihood where the weights' gradient vanishes to
    second order, and training from small (or from large, mismatched) weights came
    back to it (the RBM added nothing to the Gaussian, and its hidden units were
    near-constant features). So a whitened fit starts with the hidden units carrying
    a share f of every variance: weights of standard deviation sqrt(4 f /
    n_components) (a fair hidden unit's variance is 1/4) and variances 1 - f, whose
    covariance matches the rows' to first order. f is WHITENED_HIDDEN_SHARE, or
    n_components / (n_components + 4) if smaller, where a weight is as large as the
    visible standard deviation: with fewer units and larger weights the starting
    mixture of 2**n_components narrow Gaussians has separate modes (with 3 units and
    f = 0.9 two epochs left a model the degeneracy check flagged).
    """
    if not whitened:
        return 0.01, 0.0
    share = min(WHITENED_HIDDEN_SHARE, n_components / (n_components + 4))
    return float(np.sqrt(4 * share / n_components)), float(np.log1p(-share))


def value_bound(dtype):
    """The largest magnitude a Gaussian RBM takes in ``dtype``: the fourth root of the
    largest float (about 1e77 in float64, 4e9 in float32), so that squares, their sums
    over features and products with weights stay finite. A row beyond it has a log
    density below -1e150 (float64) and saturated hidden units either way."""
    return float(np.finfo(dtype).max) ** 0.25


def bounded_rows(X, what="values"):
    """``X`` (dense, finite) with values beyond :func:`value_bound` clipped to it.

    Such values would overflow the Gaussian RBM's arithmetic (squares, sums of
    infinities of both signs: NaN scores, transforms and class probabilities); clipped,
    every result is finite. Warns when it clips; ``X`` itself when nothing is clipped.
    """
    bound = value_bound(X.dtype)
    if X.size == 0 or (X.max() <= bound and X.min() >= -bound):
        return X
    outside = np.any(np.abs(X) > bound, axis=1)
    if not outside.any():  # NaN (missing entries) made max and min NaN
        return X
    warn_clipped_rows(int(outside.sum()), X.shape[0], what, bound)
    return np.clip(X, -bound, bound)


def warn_clipped_rows(n_clipped, n_rows, what, bound):
    """The warning of :func:`bounded_rows` (and of its array API counterpart)."""
    warn_user(
        f"{n_clipped} of {n_rows} rows have {what} beyond +-{bound:.3g}, "
        "where a Gaussian RBM's arithmetic would overflow: they are used at values "
        f"clipped to +-{bound:.3g}, where their log density is astronomically low and "
        "their hidden units saturated either way. Check the scale of the input.",
        DataRangeWarning,
    )


def visible_spread(xp, visible_bias, weights, log_variance, data_mean):
    """How far a model puts visible values from the data: the farthest visible mean
    b + W^T h over all h from the data's mean, or the largest standard deviation (at
    least 1), whichever is larger (float64 arrays of namespace ``xp``: NumPy on the
    NumPy path)."""
    reach = xp.abs(visible_bias - data_mean) + xp.sum(xp.abs(weights), axis=0)
    largest_log_variance = max(float(xp.max(log_variance)), 0.0)
    return max(float(xp.max(reach)), float(np.exp(0.5 * largest_log_variance)))


def runaway_error(estimator, epoch, spread, data_scale, hint):
    """The error of a fit whose model put visible values ``spread`` away from data of
    scale ``data_scale`` (beyond RUNAWAY_SCALE times it) in ``epoch`` (from 1)."""
    return TrainingDivergedError(
        f"{type(estimator).__name__} diverged in epoch {epoch}: the model "
        f"put visible values {spread:.3g} away from the data, more than "
        f"{RUNAWAY_SCALE:g} times the largest feature's standard deviation "
        f"({data_scale:.3g}). {hint} "
        "The estimator was left as it was before this call."
    )


def collapse_error(estimator, collapsed, epoch):
    """The error of a fit whose variances of features ``collapsed`` (indices) fell
    below MIN_VARIANCE in ``epoch`` (from 1)."""
    return TrainingDivergedError(
        f"{type(estimator).__name__}: the variance of feature(s) "
        f"{collapsed[:5].tolist()} collapsed towards zero (below "
        f"{MIN_VARIANCE:g}) in epoch {epoch}. Many rows share "
        "the same value there (repeated points or (near-)constant "
        "features), where a Gaussian's density grows without bound as its "
        "variance shrinks. Drop constant features, remove duplicates or add a "
        "little noise, or set learn_variance=False. The estimator was left "
        "as it was before this call."
    )


def warn_if_off_scale(rms, n_values):
    """The scale check of a ``partial_fit`` call after the first: its ``n_values``
    values lie at a root-mean-square distance ``rms`` from the training mean."""
    if rms > SCALE_TOLERANCE or (n_values >= MIN_SCALE_VALUES and rms < 1 / SCALE_TOLERANCE):
        warn_user(
            f"The rows of this partial_fit call lie at a root-mean-square distance of "
            f"{rms:.3g} from the training mean, where standardised features lie at "
            "about 1. GaussianRBM models standardised features (its variances start "
            "at 1 and its learning rate assumes that scale): put "
            "sklearn.preprocessing.StandardScaler() in front of it in a Pipeline, "
            "fitted once, before streaming.",
            DataScaleWarning,
        )

@dataclass(eq=False, kw_only=True)
class GaussianRBMTrainingState(AveragedTrainingState):
    """Training state of :class:`GaussianRBM`: the data's location and scale (the
    run-away check), the log variances last published, and the whitening (the
    ``input_transform`` field, a :class:`Whitening` or None)."""

    data_mean: np.ndarray = shared()
    data_scale: float = shared()
    published_log_variance: np.ndarray | None = shared(default=None)


@dataclass(frozen=True, eq=False)
class Whitening:
    """The whitening z = L^-1 (x - mean) of ``GaussianRBM(whiten=True)``.

    ``mean`` and the lower-triangular ``factor`` L are fixed at the first call (in its
    dtype); rows of either dtype are mapped in their own.
    """

    mean: np.ndarray
    factor: np.ndarray

    def transform(self, X):
        """z = L^-1 (x - mean) for each row x of ``X``, in the dtype of ``X`` (and within
        :func:`value_bound`; see :func:`bounded_rows`)."""
        centred = X - self.mean.astype(X.dtype, copy=False)
        # L z^T = (x - mean)^T for all rows at once, one triangular solve
        return bounded_rows(solve_triangular(
            self.factor.astype(X.dtype, copy=False), centred.T, lower=True,
            check_finite=False,
        ).T, "whitened values")

    def inverse_transform(self, Z):
        """x = mean + L z for each row z of ``Z``, in the dtype of ``Z``."""
        X = Z @ self.factor.T.astype(Z.dtype, copy=False)
        X += self.mean.astype(Z.dtype, copy=False)
        return X

    @property
    def log_abs_det(self):
        """log |det L| = sum(log diag L): the log-Jacobian of the inverse map."""
        return float(np.log(np.diag(self.factor).astype(np.float64)).sum())


def hidden_rates(view, X, weights=None):
    """Mean P(h = 1 | v) over up to MONITOR_ROWS evenly spaced rows of X, float64: the
    base model of log Z samplers that keep the hidden units (``weights``: the rows'
    weights, or None)."""
    rows = np.linspace(0, X.shape[0] - 1, min(X.shape[0], MONITOR_ROWS)).astype(np.intp)
    probabilities = view.astype(np.float64).hidden_probability(X[rows])
    if weights is None:
        return probabilities.mean(axis=0)
    return np.average(probabilities, axis=0, weights=weights[rows])


def feature_moments(X, weights):
    """Each feature's mean and standard deviation over its observed values (NaN marks
    a missing entry), the rows counted by their ``weights`` (any positive multiple of
    them alike), float64."""
    counted = np.where(np.isnan(X), 0.0, scaled_to_largest(weights)[:, None])
    values = np.where(np.isnan(X), 0.0, X)
    total = np.maximum(counted.sum(axis=0), np.finfo(np.float64).tiny)
    mean = (counted * values).sum(axis=0) / total
    std = np.sqrt((counted * np.square(values - mean)).sum(axis=0) / total)
    return mean, std


def feature_spread(X, weights=None):
    """Each feature's standard deviation, and whether it is constant (to rounding),
    over its observed values (NaN marks a missing entry); ``weights``: the rows'
    weights (None: unweighted)."""
    if weights is not None:
        mean, std = feature_moments(X, weights)
        return std, std <= 1e-8 * (1 + np.abs(mean))
    std = X.std(axis=0, dtype=np.float64)
    mean = X.mean(axis=0, dtype=np.float64)
    if np.isnan(mean).any():
        std, mean = np.nanstd(X, axis=0, dtype=np.float64), np.nanmean(X, axis=0, dtype=np.float64)
    return std, std <= 1e-8 * (1 + np.abs(mean))


def warn_if_unscaled(X, whitened=False):
    """Gaussian units with unit starting variances want standardised features.

    ``whitened``: ``X`` holds the rows whitened by a covariance estimated from them.
    """
    n_samples, n_features = X.shape
    if n_samples < 2:
        return
    std, constant = feature_spread(X)
    off_scale = ~constant & ((std > SCALE_TOLERANCE) | (std < 1 / SCALE_TOLERANCE))
    problems = []
    if off_scale.any():
        shown = ", ".join(f"feature {i}: {std[i]:.3g}" for i in np.flatnonzero(off_scale)[:5])
        shown += ", ..." if off_scale.sum() > 5 else ""
        if whitened and n_samples <= n_features:
            problems.append(
                f"Whitened with a covariance estimated from {n_samples} rows of "
                f"{n_features} features, {off_scale.sum()} feature(s) have standard "
                f"deviations far from 1 on these rows ({shown}). With fewer rows than "
                "features the Ledoit-Wolf estimate is mostly its shrinkage target, so "
                "whitening rescales the features without making them standard; this "
                "says nothing about how the input was scaled. Use whiten=False, or whiten "
                "from more rows than features (the first call of partial_fit fixes the "
                "whitening)."
            )
        else:
            problems.append(
                f"{off_scale.sum()} feature(s) have standard deviations far from 1 "
                f"({shown}). GaussianRBM models standardised features (its variances "
                "start at 1 and its learning rate assumes that scale): put "
                "sklearn.preprocessing.StandardScaler() in front of it in a Pipeline."
            )
    if constant.any():
        shown = ", ".join(str(i) for i in np.flatnonzero(constant)[:5])
        problems.append(
            f"{constant.sum()} feature(s) are constant (zero variance: {shown}"
            f"{', ...' if constant.sum() > 5 else ''}); they carry no information and "
            "make a learned variance collapse. Drop them, e.g. with "
            "sklearn.feature_selection.VarianceThreshold(), before StandardScaler()."
        )
    if problems:
        warn_user(" ".join(problems), DataScaleWarning)


def weighted_moments(X, weights=None):
    """Mean and (maximum-likelihood) covariance of the rows of ``X``, counted by their
    ``weights`` (None: equally), float64."""
    X = np.asarray(X, dtype=np.float64)
    if weights is None:
        weights = np.ones(X.shape[0])
    weights = np.asarray(weights, dtype=np.float64)
    total = max(float(weights.sum()), np.finfo(np.float64).tiny)
    location = weights @ X / total
    centred = X - location
    covariance = (centred * weights[:, None]).T @ centred / total
    return location, covariance


def shrunk_variances(eigenvalues, mean_variance, shrinkage):
    """Eigenvalues of (1 - a) S + (a + COVARIANCE_RIDGE) m I for each shrinkage a
    (rows) of a covariance S of ``eigenvalues`` (columns) and mean variance m."""
    shrinkage = np.asarray(shrinkage, dtype=np.float64)[:, None]
    return ((1.0 - shrinkage) * np.maximum(eigenvalues, 0.0)[None, :]
            + (shrinkage + COVARIANCE_RIDGE) * mean_variance)


def held_out_gaussian_scores(X, weights=None, n_folds=WHITENING_FOLDS):
    """Held-out log density (nats) of each row of ``X`` (rows) under the Gaussian of
    covariance (1 - a) S + a m I for each shrinkage a of SHRINKAGE_GRID (columns),
    then under independent features (a last column: the Gaussian of covariance
    diag(S)), by ``n_folds``-fold cross-validation. S is the covariance of the other
    folds (the rows counted by their ``weights``, or equally), m its mean variance
    (Ledoit and Wolf's target), every variance raised by COVARIANCE_RIDGE m; the folds
    interleave the rows, row i in fold i mod n_folds (no random numbers, and no fold of
    one sorted block). All the shrinkages of a fold come from one eigendecomposition
    of S.
    """
    X = np.asarray(X, dtype=np.float64)
    n_samples, n_features = X.shape
    n_folds = min(n_folds, n_samples)
    fold = np.arange(n_samples) % n_folds
    scores = np.empty((n_samples, len(SHRINKAGE_GRID) + 1))
    constant = n_features * np.log(2 * np.pi)
    for k in range(n_folds):
        train, test = fold != k, fold == k
        location, covariance = weighted_moments(
            X[train], None if weights is None else weights[train])
        mean_variance = max(float(np.trace(covariance)) / n_features,
                            np.finfo(np.float64).tiny)
        eigenvalues, vectors = np.linalg.eigh(covariance)
        centred = X[test] - location
        variances = shrunk_variances(eigenvalues, mean_variance, SHRINKAGE_GRID)
        scores[test, :-1] = -0.5 * (constant + np.log(variances).sum(axis=1)
                                    + np.square(centred @ vectors) @ (1.0 / variances).T)
        independent = np.diag(covariance) + COVARIANCE_RIDGE * mean_variance
        scores[test, -1] = -0.5 * (constant + np.log(independent).sum()
                                   + np.square(centred) @ (1.0 / independent))
    return scores


def ledoit_wolf_shrinkage(X, weights):
    """Ledoit and Wolf's shrinkage of the covariance of ``X``'s rows towards a multiple
    of the identity ("A well-conditioned estimator for large-dimensional covariance
    matrices", 2004), the rows counted by their relative ``weights`` (of sum 1): the
    shrinkage of the smallest expected squared error, the sample size being the number
    of rows (scikit-learn's ``LedoitWolf`` with weighted moments)."""
    n_samples, n_features = X.shape
    weights = weights * n_samples  # of mean 1
    location = weights @ X / n_samples
    centred = X - location
    covariance = (centred * weights[:, None]).T @ centred / n_samples
    squares = np.square(centred)
    fourth = float(((squares * weights[:, None]).T @ squares).sum())
    trace = float(np.trace(covariance))
    mu = trace / n_features
    delta_sum = float(np.sum(np.square(covariance)))
    beta = (fourth / n_samples - delta_sum) / (n_features * n_samples)
    delta = (delta_sum - 2.0 * mu * trace + n_features * mu**2) / n_features
    beta = min(beta, delta)
    return 0.0 if beta <= 0 else float(beta / delta)


def whitening_covariance(X, weights=None, shrinkage_rule="likelihood"):
    """Mean, covariance and shrinkage of the whitening of ``X``'s rows, the gain of
    its correlations in held-out log density (nats per row), and whether that gain
    is clear, float64.

    The covariance is (1 - a) S + (a + COVARIANCE_RIDGE) m I with S the rows'
    covariance (weighted by ``weights``), m its mean variance, and a chosen among
    SHRINKAGE_GRID by the cross-validated log density of
    :func:`held_out_gaussian_scores` (the rows counted by their weights): the
    likelihood the model is judged by, not a matrix loss. (Ledoit and Wolf's
    shrinkage, chosen for a squared error, shrank the breast-cancer table's
    covariance by 0.03 and cost its Gaussian 4.5 nats per held-out row.) The gain is
    clear when it exceeds twice the standard error of the rows' mean gain; the
    baseline is the better of independent features and the isotropic Gaussian.
    ``shrinkage_rule="ledoit_wolf"`` takes Ledoit and Wolf's shrinkage instead
    (:func:`ledoit_wolf_shrinkage`; the gain is still measured at the likelihood's).
    """
    weights = np.ones(X.shape[0]) if weights is None else np.asarray(weights, np.float64)
    weights = weights / weights.sum()
    scores = held_out_gaussian_scores(X, weights)
    means = weights @ scores
    best = int(np.argmax(means[:-1]))
    # no correlations: independent features, or the isotropic Gaussian (a = 1), the
    # better (the independent one loses on features of (near-)zero variance in a fold)
    independent = -1 if means[-1] >= means[-2] else -2
    gain = scores[:, best] - scores[:, independent]
    mean_gain = float(weights @ gain)
    error = np.sqrt(float(weights @ np.square(gain - mean_gain)) * float(weights @ weights))
    shrinkage = float(SHRINKAGE_GRID[best])
    if shrinkage_rule == "ledoit_wolf":
        shrinkage = ledoit_wolf_shrinkage(np.asarray(X, dtype=np.float64), weights)
    location, covariance = weighted_moments(X, weights)
    mean_variance = float(np.trace(covariance)) / covariance.shape[0]
    covariance *= 1.0 - shrinkage
    covariance.flat[:: covariance.shape[0] + 1] += (
        (shrinkage + COVARIANCE_RIDGE) * mean_variance)
    return location, covariance, shrinkage, mean_gain, mean_gain > 2 * error


def estimate_whitening(X, verbose=0, weights=None, whiten=True, shrinkage="likelihood"):
    """Mean and lower Cholesky factor L of the whitening covariance of X's rows
    (:func:`whitening_covariance`), float64; None when ``whiten="auto"`` and the
    correlations do not raise the held-out log density (or the rows are too few).

    z = L^-1 (x - mean) has unit covariance under that estimate. The shrinkage keeps
    the estimate positive definite with fewer rows than features too; it fails with
    fewer than MIN_WHITENING_ROWS rows or when every feature is constant. The memory
    of the d x d matrices is checked first; ``verbose`` prints the step and its time;
    ``weights`` (the rows' relative weights, or None) weight the estimate;
    ``shrinkage`` is GaussianRBM's ``whitening_shrinkage``.
    """
    auto = whiten == "auto"
    n_samples, n_features = X.shape
    if n_samples < MIN_WHITENING_ROWS:
        if auto:
            return None
        raise ValueError(
            "GaussianRBM(whiten=True) estimates the covariance of the features, which "
            f"needs at least {MIN_WHITENING_ROWS} samples (the covariance of 2 rows has "
            f"rank 1); got n_samples = {n_samples}. For partial_fit, make the first "
            "call a batch of rows representative of the data.")
    check_memory(
        WHITENING_MATRICES * 8 * n_features**2,
        f"Whitening {n_features} features (GaussianRBM(whiten={whiten!r}): {n_features} "
        f"x {n_features} covariance matrices)",
        "Use whiten=False, or fewer features (e.g. sklearn.decomposition.PCA first).",
    )
    start = time.perf_counter()
    if verbose:
        print(f"[GaussianRBM] whitening: the covariance of {n_features} features from "
              f"{n_samples} rows, its shrinkage chosen by "
              + (f"{WHITENING_FOLDS}-fold held-out likelihood" if shrinkage == "likelihood"
                 else "Ledoit and Wolf's estimate") + ", and its Cholesky factor",
              flush=True)
    location, covariance, shrinkage, gain, helps = whitening_covariance(
        X, weights, shrinkage)
    if verbose:
        print(f"[GaussianRBM] whitening: shrinkage {shrinkage:g}, the correlations add "
              f"{gain:.3g} nats per held-out row", flush=True)
    if auto and not helps:
        if verbose:
            print("[GaussianRBM] whitening: not applied (whiten='auto': the "
                  "correlations do not help)", flush=True)
        return None
    try:
        factor = np.linalg.cholesky(covariance)
    except np.linalg.LinAlgError:
        factor = None
    if factor is None or not np.all(np.isfinite(factor)):
        if auto:
            return None
        raise ValueError(
            "GaussianRBM(whiten=True) could not whiten the data: the estimated covariance "
            "is singular (are all features constant?).")
    del covariance
    if verbose:
        print(f"[GaussianRBM] whitening: done in {time.perf_counter() - start:.2f}s",
              flush=True)
    return location, factor


class GaussianDivergenceCheck(DivergenceCheck):
    """:class:`GaussianRBM`'s divergence check: its hints name the data's scale."""

    def data_hint(self, X):
        std, constant = feature_spread(as_dense(X))
        largest = float(std[~constant].max(initial=0.0))
        if largest > SCALE_TOLERANCE:
            return (
                "The features are not standardised (largest standard deviation "
                f"{largest:.3g}); put sklearn.preprocessing.StandardScaler() in front."
            )
        if 0 < largest < 1 / SCALE_TOLERANCE:
            return (
                "The features are on a tiny scale (largest standard deviation "
                f"{largest:.3g}), where the variances, which start at 1, cannot fit "
                "them at any learning rate: standardise them with "
                "sklearn.preprocessing.StandardScaler() in front (or use whiten=True)."
            )
        return None


class GaussianRBM(ArrayAPIMixin, RestrictedBoltzmannBase):
    """Gaussian-Bernoulli restricted Boltzmann machine: real-valued data, true log density.

    Visible units are real-valued (Gaussian given the hidden units), hidden units
    binary. The model is a mixture of 2**n_components Gaussians with a shared diagonal
    covariance whose means are sums of the hidden units' weight vectors; ``transform``
    returns P(h = 1 | v) and ``score_samples`` the exact (or estimated, with error
    bars) log density in nats. It shares :class:`RBM`'s training engine (momentum,
    weight decay, iterate averaging, the learning strategies, monitoring, early
    stopping, all-or-nothing fits) and its log Z estimators.

    The energy is the parametrisation of Cho, Ilin & Raiko, with per-feature
    variances sigma_i^2,

        E(v, h) = sum_i (v_i - b_i)^2 / (2 sigma_i^2) - h^T W (v / sigma^2) - c^T h,

    so p(v_i | h) = N(b_i + (W^T h)_i, sigma_i^2) and
    P(h_j = 1 | v) = sigmoid(c_j + sum_i W_ji v_i / sigma_i^2). Learned variances are
    trained as z = log sigma^2, and the steps of W and b use the model's own scale
    (their gradients times sigma^2), which keeps training stable as the variances move.

    Standardise the data first (``StandardScaler`` in a :class:`~sklearn.pipeline.Pipeline`):
    the variances start at 1, and a feature with a huge or a zero variance raises a
    :class:`~skboltz.exceptions.DataScaleWarning`.

    Parameters
    ----------
    n_components : int, default=16
        Number of hidden units. Up to 20, ``score_samples`` is exact (a sum over the
        2**n_components hidden states, each a Gaussian integral).
    learning : {learning_options} or RBMLearningStrategy, default="pt"
        How the negative-phase statistics are estimated: parallel tempering
        (:class:`~skboltz.learning.ParallelTempering`, 10 temperatures; the visible
        units' quadratic term stays untempered, so every temperature is a proper
        distribution), persistent contrastive divergence
        (:class:`~skboltz.learning.PCD`) or CD-k (:class:`~skboltz.learning.CD`); or
        a strategy object, which is cloned (also your own subclass of
        :class:`~skboltz.learning.RBMLearningStrategy` that returns visible rows).
        Parallel tempering costs 3-5 times as much per epoch as PCD; on the
        benchmark datasets it gave held-out log densities 0.3-0.5 nats higher and
        trained stably at twice the learning rate (with PCD or CD, use a learning
        rate of about 0.02: at 0.04 PCD with 64 hidden units diverged on the
        standardised digits). The closed-form strategies of binary units ("exact",
        "tap") are not available.
    z_estimator : {z_estimator_options} or ZEstimator, \
            default="auto"
        How log Z is found for ``score_samples``: "auto" enumerates the hidden states
        exactly when ``n_components <= 20`` and otherwise uses annealed importance
        sampling over the hidden units (the visible ones integrated out); or an
        estimator object of :mod:`skboltz.partition` (cloned). Mean-field estimators
        need binary units and are refused. Recorded in ``z_estimator_``.
    learning_rate : float, default=0.04
        Step size on the mean minibatch update direction (the gradients of the
        weights and visible means are taken in the model's own scale, times
        sigma^2; a variance moves as sigma^2 <- sigma^2 (1 + step)). Momentum is in
        :class:`RBM`'s moving-average form, so this is the mean step per update.
    batch_size : int, default=10
        Rows per minibatch; the minibatches are reshuffled every epoch.
    n_iter : int, default=100
        Number of epochs (passes over the data) for ``fit``. Small datasets need
        many epochs (on wine, 133 rows, 50 epochs fell 0.5 nats short of 100).
    momentum : float or (float, float), default=0.5
        Momentum of the updates, in moving-average form (see :class:`RBM`): velocity
        <- momentum * velocity + (1 - momentum) * learning_rate * update direction. A
        pair means the first value for the first 5 epochs and the second afterwards.
        Unlike :class:`RBM` (default 0), the Gaussian RBM keeps some momentum: its
        negative phase is noisier (real-valued samples), and the defaults were tuned
        with it.
    weight_decay : float, default=1e-4
        L2 penalty on the weights (not the biases or variances). As in every
        estimator, its gradient enters the velocity every 16 updates, 16 updates'
        worth at a time.
    average_window : int or None, default=100
        Iterate averaging: the fitted attributes are an exponential moving average of
        the training iterates over about this many minibatch updates (see
        :class:`RBM`); None publishes the last update's parameters.
    learn_variance : bool, default=True
        Learn each feature's variance sigma_i^2 (as its logarithm). False keeps every
        sigma_i^2 at 1, the usual choice for standardised features when only the
        features matter; learning them gives a far better density. A constant feature
        has no variance to learn: with True, ``fit`` refuses it before training (drop
        it first, e.g. with :class:`~sklearn.feature_selection.VarianceThreshold`).
    whiten : {"auto"} or bool, default="auto"
        Model whitened rows z = L^-1 (x - mu): ``fit`` estimates the mean mu and a
        shrunk full covariance L L^T = (1 - a) S + a m I of the training rows (S their
        covariance, m its mean variance, L its Cholesky factor; with
        ``validation_fraction``, of all the rows given to ``fit``), the shrinkage a
        chosen by the 5-fold cross-validated Gaussian log density, and the RBM is
        trained on z. The full Gaussian then carries the correlations between
        features and the RBM models what it misses. "auto" whitens when the rows are
        complete, outnumber the features, and their correlations raise the
        cross-validated log density of the Gaussian by more than twice its standard
        error over independent features; otherwise it does not (``whitening_factor_``
        says which). Measured on scikit-learn's real tables (breast cancer, wine, the
        diabetes features, iris; ``benchmarks/bench_gaussian.py --only defaults``):
        unwhitened, the default scored 20.0 nats per held-out row below a single
        full-covariance Gaussian on breast cancer, 1.0 on diabetes and 0.6 on iris
        (means over 3 splits); whitened ("auto" whitened all of them) it is above it
        on average on every table (+0.18, +0.11, +0.65, +0.02; worst split 0.19
        below on breast cancer). As features for a logistic regression, a whitened
        model's 64 hidden units scored 0.933 and 0.951 on wine and breast cancer
        against 1.000 and 0.958 with ``whiten=False``, and 0.953 against 0.942 on
        the digits: pass ``whiten=False`` when the features matter more than the
        density. A whitened
        fit that learns the variances starts with the hidden units carrying most of
        each variance (weights of standard deviation sqrt(4 f / n_components),
        variances 1 - f, f = min(0.9, n_components / (n_components + 4))): the
        Gaussian of zero weights already fits whitened rows exactly, a saddle that
        training from small weights never left. (Ledoit and Wolf's shrinkage, "A
        well-conditioned estimator for large-dimensional covariance matrices", 2004,
        used before, minimises a squared error, not the likelihood: on breast cancer
        it shrank by 0.03 and its Gaussian lost 4.5 nats per held-out row.)
        Standardise first all the same (the shrinkage pulls towards a multiple of
        the identity, which suits features of one scale, and the data-scale warnings
        judge z). Every method takes and returns rows in the units of x:
        ``transform`` is P(h = 1 | z), ``score_samples`` the log density of x
        (log p(z) - sum(log diag L), the change of variables), and ``sample``,
        ``gibbs`` and ``reconstruct`` map their rows back to x. The fitted
        parameters (``components_``, ``variance_``, ...), ``free_energy``,
        :meth:`estimate_log_partition` and the training ``history_`` are those of
        the model of z. Costs five d x d eigendecompositions and an O(d^3)
        factorisation once per ``fit`` (d features), and a triangular solve per
        call. ``partial_fit`` decides and estimates the whitening on its first call
        and keeps it fixed afterwards, so make that call a representative batch
        (``whiten=True`` needs at least 3 rows: the covariance of 2 rows has rank 1).
        Rows with missing entries are never whitened ("auto" then leaves the
        whitening out; ``whiten=True`` refuses them), and a whitened model takes
        complete rows only. The memory of the d x d matrices is checked before they
        are made, and ``verbose`` reports the estimate's progress and shrinkage.
    whitening_shrinkage : {"likelihood", "ledoit_wolf"}, default="likelihood"
        How the whitening's shrinkage a is chosen: "likelihood", by the 5-fold
        cross-validated Gaussian log density (the best density); "ledoit_wolf", by
        Ledoit and Wolf's estimate of the smallest squared error of the covariance,
        which shrinks more where the rows are few. :class:`LikelihoodOutlierDetector`'s
        default model uses "ledoit_wolf": on the digits' one-digit novelty tasks
        (about 137 rows of 64 pixels per digit) the likelihood's shrinkage (0.03
        against 0.10) lowered its mean ROC AUC from 0.997 to 0.982.
    {monitoring}
    verbose : int, default=0
        Print a progress line per epoch when positive.
    random_state : int, RandomState instance or None, default=None
        Seeds initialisation, minibatch order, sampling and the log Z estimate.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Weight matrix W: hidden unit j adds ``components_[j]`` to the visible mean.
    intercept_hidden_ : ndarray of shape (n_components,)
        Hidden biases c.
    intercept_visible_ : ndarray of shape (n_features,)
        Visible means b when every hidden unit is off.
    variance_ : ndarray of shape (n_features,)
        Variance sigma_i^2 of each visible unit given the hidden units.
    whitening_mean_ : ndarray of shape (n_features,) or None
        The mean mu subtracted before whitening, or None when the rows are not
        whitened (``whiten=False``, or "auto" chose not to).
    whitening_factor_ : ndarray of shape (n_features, n_features) or None
        The lower-triangular Cholesky factor L of the shrunk covariance: rows are
        whitened as z = L^-1 (x - mu); None when they are not.
    learning_ : LearningStrategy
        The negative-phase strategy used (a clone of ``learning`` or its default object).
    z_estimator_ : ZEstimator
        The log Z estimator that ``score_samples`` uses.
    n_iter_ : int
        Epochs trained so far.
    history_ : dict of lists
        Per-epoch training records (see :attr:`RBM.history_`).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when they are all strings.

    See Also
    --------
    RBM : Binary visible units.
    sklearn.decomposition.FactorAnalysis : A linear-Gaussian latent model.
    sklearn.mixture.GaussianMixture : A mixture with free component means.

    Notes
    -----
    {missing} A whitened model (``whiten=True``, or "auto" on complete rows it
    chose to whiten) takes complete rows only in every method (whitening mixes every
    feature into every other).

    References
    ----------
    K. Cho, A. Ilin and T. Raiko, "Improved learning of Gaussian-Bernoulli restricted
    Boltzmann machines", ICANN 2011.
    G. Hinton, "A Practical Guide to Training Restricted Boltzmann Machines", 2010.
    J. Melchior, N. Wang and L. Wiskott, "Gaussian-binary restricted Boltzmann
    machines for modeling natural image statistics", PLOS ONE 12(2), 2017.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skboltz import GaussianRBM
    >>> X = load_wine().data
    >>> model = make_pipeline(StandardScaler(), GaussianRBM(n_components=8, random_state=0))
    >>> model = model.fit(X)
    >>> model.transform(X).shape
    (178, 8)
    >>> log_density = model[-1].score_samples(model[0].transform(X))  # nats, exact
    >>> log_density.shape
    (178,)

    Whitening first, for the density of correlated features:

    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.model_selection import train_test_split
    >>> X_train, X_test = train_test_split(load_breast_cancer().data, random_state=0)
    >>> scaler = StandardScaler().fit(X_train)
    >>> X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    >>> plain = GaussianRBM(n_components=8, n_iter=10, whiten=False,
    ...                     random_state=0).fit(X_train)
    >>> whitened = GaussianRBM(n_components=8, n_iter=10, whiten=True, random_state=0)
    >>> whitened = whitened.fit(X_train)
    >>> whitened.whitening_factor_.shape
    (30, 30)
    >>> bool(whitened.score(X_test) > plain.score(X_test))
    True
    """

    _view_class = GaussianRBMView
    _layout = GaussianRBMLayout
    _training_form = AugmentedGaussianRBM
    _structural_parameters = ("n_components", "whiten", "whitening_shrinkage")
    _divergence_check_class = GaussianDivergenceCheck
    _accepts_missing = True

    @property
    def _array_api_model(self):
        # The namespace-generic path under array API dispatch
        # (skboltz/estimators/_array_api_restricted.py, skboltz/estimators/_array_api_gaussian_rbm.py),
        # imported on first use: its module imports this one's functions.
        from ._array_api_gaussian_rbm import GaussianRBMArrayAPI

        return GaussianRBMArrayAPI

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        **strategy_constraints(GaussianRBMView),
        "average_window": [Interval(Integral, 1, None, closed="left"), None],
        "learn_variance": ["boolean"],
        "whiten": ["boolean", StrOptions({"auto"})],
        "whitening_shrinkage": [StrOptions({"likelihood", "ledoit_wolf"})],
        **TRAINING_CONSTRAINTS,
        **MONITORING_CONSTRAINTS,
    }

    def __init__(
        self,
        n_components=16,
        *,
        learning="pt",
        z_estimator="auto",
        learning_rate=0.04,
        batch_size=10,
        n_iter=100,
        momentum=0.5,
        weight_decay=1e-4,
        average_window=100,
        learn_variance=True,
        whiten="auto",
        whitening_shrinkage="likelihood",
        validation_fraction=None,
        n_iter_no_change=None,
        tol=1e-4,
        monitor_likelihood=False,
        verbose=0,
        random_state=None,
    ):
        self.n_components = n_components
        self.learning = learning
        self.z_estimator = z_estimator
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.n_iter = n_iter
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.average_window = average_window
        self.learn_variance = learn_variance
        self.whiten = whiten
        self.whitening_shrinkage = whitening_shrinkage
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.monitor_likelihood = monitor_likelihood
        self.verbose = verbose
        self.random_state = random_state

    __doc__ = document_strategy_options(
        __doc__.replace("{monitoring}", MONITORING_PARAMETERS_DOC).replace(
            "{missing}", MISSING_ENTRIES_DOC), GaussianRBMView, "pt"
    )

    # -- validation and whitening ----------------------------------------------------
    def _check_rows(self, X, *, reset):
        # Any real values within the value bound; sparse input is accepted and
        # densified (standardised, or centred, data are dense).
        X = bounded_rows(as_dense(validate_data(
            self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=reset,
            ensure_all_finite="allow-nan",
        )))
        # whiten="auto" takes missing entries in fit (it then does not whiten); a model
        # fitted with a whitening takes complete rows only.
        whitened = self.whiten is True or (
            not reset and getattr(self, "whitening_factor_", None) is not None)
        if whitened and np.isnan(X).any():
            setting = ("whiten=True" if self.whiten is True else
                       "whiten='auto', which whitened the complete rows of its fit")
            raise ValueError(
                f"GaussianRBM({setting}) takes complete rows: whitening mixes every "
                "feature into every other, so a missing entry (NaN) cannot be left out of "
                "a whitened row. Use whiten=False, which takes missing entries (they are "
                "summed out of the model), or fill the missing values first (e.g. "
                "skboltz.RBMImputer).")
        return X

    def _takes_missing(self):
        # whitening mixes features; "auto" does not whiten rows with missing entries
        return super()._takes_missing() and self.whiten is not True

    def _new_input_transform(self, X, row_weights=None):
        # "auto" whitens complete rows, more of them than features, whose correlations
        # raise the held-out density.
        self._fit_whitens = False  # read by _new_training_state, right after
        if self.whiten is False or (self.whiten == "auto" and (
                np.isnan(X).any() or X.shape[0] <= X.shape[1])):
            return None
        whitening = estimate_whitening(X, verbose=self.verbose, weights=row_weights,
                                       whiten=self.whiten,
                                       shrinkage=self.whitening_shrinkage)
        if whitening is None:
            return None
        self._fit_whitens = True
        mean, factor = whitening
        return Whitening(mean.astype(X.dtype), factor.astype(X.dtype, copy=False))

    def _input_transform(self):
        # From the public attributes, so that edits take effect.
        factor = self.whitening_factor_
        return None if factor is None else Whitening(self.whitening_mean_, factor)

    def _check_first_rows(self, X, *, partial):
        # A learned variance of a constant feature shrinks without end (the density
        # grows without bound); training failed on it after tens of epochs. A fit sees
        # all the rows, so says so at once; a first partial_fit call, maybe a small
        # minibatch whose columns are constant by chance, warns (warn_if_unscaled), as
        # does a single row (every column constant; accepted as for every estimator).
        super()._check_first_rows(X, partial=partial)
        if partial or not self.learn_variance or X.shape[0] < 2:
            return
        constant = np.flatnonzero(feature_spread(X)[1])
        if constant.size:
            names = getattr(self, "feature_names_in_", None)
            shown = [str(names[i]) if names is not None else int(i) for i in constant[:10]]
            bound = value_bound(X.dtype)
            if (np.fmax.reduce(np.abs(X[:, constant]), axis=0) >= bound).any():
                # the input varies there; its copy clipped at the value bound does not
                raise ValueError(
                    f"GaussianRBM cannot model the feature(s) {shown}: their values lie "
                    f"beyond +-{bound:.3g}, where they were clipped (the DataRangeWarning), "
                    "and the clipped values are all the same. Bring the features to a "
                    "moderate scale first (e.g. divide them by their largest magnitude, "
                    "then StandardScaler()).")
            raise ValueError(
                f"GaussianRBM cannot learn the variance of {constant.size} constant "
                f"feature(s) {shown}{' + ...' if constant.size > 10 else ''}: every row "
                "has the same value there, where a Gaussian's variance shrinks towards 0 "
                "and its density grows without bound. Drop them in front of it, e.g. "
                "make_pipeline(VarianceThreshold(), StandardScaler(), GaussianRBM()) "
                "(sklearn.feature_selection.VarianceThreshold), or fix every variance at "
                "1 with learn_variance=False."
            )

    def _check_continued_rows(self, X, state):
        # The first call checks each feature's spread (warn_if_unscaled); a later call,
        # often one small minibatch, only the rows' root-mean-square deviation from the
        # training mean, which is about 1 for standardised rows (a hot path: two cheap
        # passes). Too few values say little about a small scale.
        deviation = X - state.data_mean.astype(X.dtype, copy=False)
        rms = float(np.sqrt(np.vdot(deviation, deviation) / max(deviation.size, 1)))
        if np.isnan(rms):  # missing entries: over the observed values
            observed = ~np.isnan(deviation)
            deviation = deviation[observed]
            rms = float(np.sqrt(np.vdot(deviation, deviation) / max(deviation.size, 1)))
        warn_if_off_scale(rms, deviation.size)

    # -- training hooks ------------------------------------------------------------
    def _new_training_state(self, X, y, learning, rng, row_weights=None):
        warn_if_unscaled(X, whitened=getattr(self, "_fit_whitens", False))
        X = self._with_missing_filled(X, weights=row_weights)  # at the columns' means
        dtype = X.dtype
        n_visible = X.shape[1]
        data_mean = (X.mean(axis=0, dtype=np.float64) if row_weights is None
                     else column_means(X, row_weights))
        params = np.zeros((self.n_components + 2, n_visible + 1), dtype=dtype)
        whitened = getattr(self, "_fit_whitens", False)
        weight_scale, log_variance = starting_scales(
            self.n_components, whitened and self.learn_variance and X.shape[0] > n_visible)
        weights = rng.normal(0.0, weight_scale, size=(self.n_components, n_visible))
        params[GaussianRBMLayout.weights] = weights
        params[GaussianRBMLayout.log_variance] = log_variance
        params[GaussianRBMLayout.visible_bias] = data_mean  # visible means start at the data's
        model = AugmentedGaussianRBM(params)
        return self._fresh_state(
            GaussianRBMTrainingState, model, X, learning, rng,
            data_mean=data_mean,
            data_scale=self._data_scale(X, row_weights),
            # the hidden units' rates on the data: the base model of log Z samplers
            data_rates=self._hidden_rates(model.view(), X, row_weights),
        )

    @staticmethod
    def _data_scale(X, weights=None):
        """The largest standard deviation of a non-constant feature (1 if none)."""
        std, constant = feature_spread(X, weights)
        return float(std[~constant].max(initial=0)) or 1.0

    _hidden_rates = staticmethod(hidden_rates)

    def _training_params(self, dtype):
        params = AugmentedGaussianRBM.from_view(self._model_view().astype(dtype)).params
        # variance_ = exp(z) does not give z back exactly: unless edited, continue from
        # the exact log variances it was published from.
        published = self._training_state.published_log_variance
        if published is not None and np.array_equal(
            np.exp(published).astype(dtype), self.variance_.astype(dtype)
        ):
            params[GaussianRBMLayout.log_variance] = published
        return params

    def _train_epoch(self, X, y, state, learning):
        super()._train_epoch(X, y, state, learning)  # the plain loop, for every strategy
        iterate = state.iterate.astype(np.float64)
        spread = visible_spread(
            np, iterate[GaussianRBMLayout.visible_bias], iterate[GaussianRBMLayout.weights],
            iterate[GaussianRBMLayout.log_variance], state.data_mean)
        if spread > RUNAWAY_SCALE * state.data_scale:
            hint = self._divergence_check_class(self).hint(X, state, learning)
            raise runaway_error(self, state.n_iter + 1, spread, state.data_scale, hint)
        if self.learn_variance:
            variance = np.exp(iterate[GaussianRBMLayout.log_variance])
            collapsed = np.flatnonzero(variance < MIN_VARIANCE)
            if collapsed.size:
                raise collapse_error(self, collapsed, state.n_iter + 1)
        state.data_rates = self._hidden_rates(self._model_view_of(state),
                                              self._training_rows(X, state),
                                              state.row_weights)

    def _training_form_of(self, params, state):
        return AugmentedGaussianRBM(params, learn_variance=self.learn_variance)

    def _parameter_update(self, model, params, state, rule):
        # The variances take the step sigma^2 <- sigma^2 (1 + step), with step the
        # gradient of log sigma^2: the same to first order, but an outlying row, whose
        # gradient grows like (v - b)^2 / sigma^2, then adds to sigma^2 instead of
        # multiplying it by exp(step). The training form's derived arrays follow.
        log_scale = None
        if self.learn_variance:
            log_scale = (GaussianRBMLayout.log_variance, MAX_VARIANCE_DECREASE)
        return super()._parameter_update(
            model, params, state, rule, additive=GaussianRBMLayout.rbm,
            log_scale=log_scale, after_step=lambda update: model.form.refresh(),
        )

    def _reconstruction_error(self, view, rows, weights=None):
        view = view.astype(np.float32)
        rows = rows.astype(np.float32, copy=False)
        reconstruction = view.visible_mean(view.hidden_probability(rows))
        reconstruction -= rows
        if weights is not None:
            return mean_square(reconstruction, weights)
        return float(np.mean(np.square(reconstruction), dtype=np.float64))

    def _fitted_attributes(self, state):
        attributes = super()._fitted_attributes(state)
        log_variance = state.params[GaussianRBMLayout.log_variance]
        state.published_log_variance = log_variance.copy()
        whitening = state.input_transform
        attributes.update(
            variance_=np.exp(log_variance),
            whitening_mean_=None if whitening is None else whitening.mean,
            whitening_factor_=None if whitening is None else whitening.factor,
        )
        return attributes

    def _model_view_of(self, state):
        if state is not None:
            return AugmentedGaussianRBM(state.params).view()
        return GaussianRBMView(
            self.components_, self.intercept_visible_, self.intercept_hidden_, self.variance_
        )

    def _sampling_start_of(self, state):
        return state.data_mean  # normal units at the data's means


__all__ = ["GaussianRBM"]
