"""Novelty and outlier detection with a density model's log-likelihood."""

import warnings
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OutlierMixin, clone
from sklearn.model_selection import KFold
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils.validation import _num_samples, check_is_fitted, validate_data

from ..estimators._gaussian_rbm import GaussianRBM
from ..utils._array_api import (
    check_rows_like_model, dispatched_namespace, to_numpy, validated_rows,
)
from ..utils._runtime import sub_estimator_seeds
from ..estimators._tabular_rbm import TabularRBM
from ..utils._sklearn import HasMethods, Interval, StrOptions, _fit_context
from ..core._transactions import all_or_nothing, publish
from ..utils._weights import FIT_SAMPLE_WEIGHT_DOC, score_weights, weighted_percentile
from ..exceptions import DataScaleWarning

#: ``contamination="auto"`` flags a row whose log-likelihood lies more than this many
#: interquartile ranges below the first quartile of the held-out log-likelihoods of the
#: training rows (Tukey's lower fence).
AUTO_FENCE = 1.5

#: Folds of the cross-validation that gives "auto" the held-out log-likelihoods.
AUTO_FOLDS = 5

#: The default model is refitted TRIM_ROUNDS times, each time without the rows whose
#: log-likelihood under the previous fit lies in its lowest TRIM_FRACTION (weight 0),
#: so that the anomalies among the training rows do not pull the density towards
#: them (measured on ADBench's tables: see the class's Notes) ...
TRIM_ROUNDS = 2
TRIM_FRACTION = 0.1
#: ... where there are at least this many rows per feature: with fewer, the covariance
#: of the whitening needs every row (on the digits' 135 rows of 64 pixels trimming
#: lost 0.005 to 0.01 of ROC AUC).
TRIM_MIN_ROWS_PER_FEATURE = 3


def is_frame(X):
    """Whether ``X`` is a pandas DataFrame (checked without importing pandas)."""
    return hasattr(X, "iloc") and hasattr(X, "dtypes") and getattr(X, "ndim", 0) == 2


def has_non_numeric_columns(X):
    """Whether ``X`` is a DataFrame with a column that is not a number (a category,
    a string, an object or a bool column: what a table model encodes itself)."""
    if not is_frame(X):
        return False
    return any(getattr(dtype, "kind", "O") not in "iuf" for dtype in X.dtypes)


def needs_table_model(X):
    """Whether the default model of ``X`` is a :class:`TabularRBM`: a DataFrame with
    categorical columns, or rows with missing entries (NaN)."""
    if has_non_numeric_columns(X):
        return True
    if sp.issparse(X):  # a table model takes dense rows only
        return False
    if dispatched_namespace(X) is not None:  # validated rows: complete (NaN refused)
        return False
    values = np.asarray(X)
    return values.dtype.kind == "f" and bool(np.isnan(values).any())


#: The default models' minibatch updates are bounded by this many (epochs shrink with
#: the rows, to at least MIN_EPOCHS): a 200-row table and a 200,000-row one both fit in
#: bounded time.
MAX_UPDATES = 3000
MIN_EPOCHS = 3


def bounded_epochs(n_rows, epochs, batch_size=10):
    """``epochs``, fewer where ``n_rows`` would make more than MAX_UPDATES updates."""
    fitting = -(-MAX_UPDATES * batch_size // max(n_rows, 1))  # ceil
    return int(min(epochs, max(MIN_EPOCHS, fitting)))


def default_density_model(X):
    """The density model ``LikelihoodOutlierDetector(estimator=None)`` fits to ``X``.

    A DataFrame with categorical (category, string, object or bool) columns, or rows
    with missing entries: a :class:`TabularRBM`, which encodes the categories itself
    and integrates missing entries out. Anything else (binary data too): a Gaussian
    RBM of the whitened rows with fixed unit variances (``whiten=True,
    learn_variance=False``; 16 hidden units, exact log Z; persistent chains at the
    learning rate the Gaussian RBM suggests for them), whose density is a Ledoit-Wolf
    Gaussian of the input corrected by the hidden units. Both train for at most
    MAX_UPDATES minibatch updates (30 epochs of the Gaussian RBM up to 1,000 rows,
    TabularRBM's 200 up to 150 rows; at least MIN_EPOCHS). The choice and its
    measurements are in the class's Notes.
    """
    n_rows = _num_samples(X)
    if needs_table_model(X):
        return TabularRBM(n_iter=bounded_epochs(n_rows, 200))
    return GaussianRBM(n_components=16, learning="pcd", learning_rate=0.02,
                       n_iter=bounded_epochs(n_rows, 30), learn_variance=False,
                       whiten=True, whitening_shrinkage="ledoit_wolf")


def rows_at(X, indices):
    """The rows of ``X`` at ``indices`` (host integers), in ``X``'s namespace."""
    dispatched = dispatched_namespace(X)
    if dispatched is None:
        return _safe_indexing(X, indices)
    xp, device = dispatched
    return xp.take(X, xp.asarray(indices, device=device), axis=0)


def host_scores(model, X):
    """``model.score_samples(X)`` as a NumPy array: the threshold and the trimming are
    quantiles, computed once per fit on the host whatever the rows' namespace."""
    scores = model.score_samples(X)
    dispatched = dispatched_namespace(scores)
    return np.asarray(scores) if dispatched is None else to_numpy(scores, dispatched[0])


def lower_fence(scores, weights=None):
    """Tukey's lower fence of ``scores``: Q1 - AUTO_FENCE * (Q3 - Q1) (the quartiles
    of the rows counted by their ``weights``, if any)."""
    q1, q3 = weighted_percentile(scores, [25, 75], weights)
    return q1 - AUTO_FENCE * (q3 - q1)


class LikelihoodOutlierDetector(OutlierMixin, BaseEstimator):
    """Novelty detection by a density model's log-likelihood, in nats.

    ``fit`` trains a clone of a skboltz density model (any model with ``fit(X)`` and a
    normalised ``score_samples``) on data assumed mostly normal; a row is an outlier
    when the model finds it improbable. ``score_samples`` is the model's log p(x) in
    nats, ``decision_function`` is ``score_samples - offset_`` (negative for outliers)
    and ``predict`` is -1 for outliers and +1 for inliers, scikit-learn's contract for
    outlier detectors (as :class:`~sklearn.covariance.EllipticEnvelope`).

    Because the scores are log-likelihoods, the threshold ``offset_`` is a log
    probability (or log density) in nats, and ``decision_function(x) = -d`` says that
    x is exp(d) times less probable than a row on the threshold. The scores of models
    with an exact or well-estimated log Z are comparable across models and refits.

    Parameters
    ----------
    estimator : estimator or None, default=None
        The density model, cloned by ``fit``: a skboltz model (:class:`RBM`,
        :class:`GaussianRBM`, :class:`CategoricalRBM`, :class:`TabularRBM`,
        :class:`BoltzmannMachine`, :class:`DBM`) or anything
        whose ``fit(X)`` learns a density and whose ``score_samples`` returns its
        normalised log-density (e.g. :class:`~sklearn.mixture.GaussianMixture`). A
        model without ``score_samples`` (e.g. :class:`DBN`, whose likelihood is
        intractable) is refused. The rows reach the model as they are when it is
        the user's and they are a pandas DataFrame (so that a :class:`TabularRBM`
        encodes its categorical columns), and with NaN entries when the model takes
        missing entries (its ``allow_nan`` tag). None chooses by the training data: a
        DataFrame with categorical columns, or rows with NaN, get a
        :class:`TabularRBM`; any other rows (binary ones too) ``GaussianRBM(
        n_components=16, learning="pcd", learning_rate=0.02, learn_variance=False,
        whiten=True)``, a Ledoit-Wolf Gaussian of the rows with an RBM of the whitened
        rows on top, trained for at most 3,000 minibatch updates (30 epochs up to
        1,000 rows, at least 3) and, where there are at least 3 rows per feature,
        refitted twice, each time without the lowest 10 % of the rows still kept, by
        their likelihood under the previous fit (``sample_weight`` 0), so that anomalies
        among the training rows do not pull the density towards them. Both have an
        exact log Z (see Notes).
    contamination : "auto" or float, default="auto"
        The expected proportion of outliers in the training data, in (0, 0.5]: the
        threshold ``offset_`` is that quantile of the training rows' log-likelihoods,
        as in :class:`~sklearn.covariance.EllipticEnvelope`, so that fraction of
        them is flagged. "auto" assumes no proportion: ``offset_`` is Tukey's lower
        fence (Tukey, "Exploratory Data Analysis", 1977), 1.5 interquartile ranges
        below the first quartile, of held-out log-likelihoods: each training row is
        scored by a model fitted without it (5-fold cross-validation, five more
        fits). A row's own fit flatters it (by about 8 nats on the digits, where a
        fence on the training scores flagged 26 % of new normal rows, and this one
        6 %); the fence flags 0.35 % of normally distributed scores, more of a long
        lower tail. Needs at least 10 training rows.
    random_state : int, RandomState instance or None, default=None
        None leaves the model's ``random_state`` as it is (the default model's is
        None); otherwise the model's ``random_state`` is set to a seed drawn from it,
        so that repeated fits give the same detector.

    Attributes
    ----------
    estimator_ : estimator
        The fitted density model.
    offset_ : float
        The threshold on ``score_samples``, a log-likelihood in nats:
        ``decision_function = score_samples - offset_``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when they are all strings.

    See Also
    --------
    sklearn.covariance.EllipticEnvelope : The same contract with a robust Gaussian.
    sklearn.neighbors.LocalOutlierFactor : Novelty detection by local density ratios.

    Notes
    -----
    The default model was chosen by the ROC AUC of ``score_samples`` on ADBench's 29
    classical tables (Han, Hu, Huang, Jiang & Zhao, "ADBench: Anomaly Detection
    Benchmark", NeurIPS 2022; ``benchmarks/bench_adbench.py``: 60 / 40 stratified
    splits, rows scaled to [0, 1]), fitted on the training split with its anomalies
    (unsupervised) or on its normal rows (novelty), and on the one-class tasks of
    ``benchmarks/bench_outliers.py`` (the digits and Fashion-MNIST). Trimming the
    least likely tenth of the rows still kept over two refits (about a fifth of the
    training rows out of the last fit) raised the mean ROC AUC on ADBench (split seed
    0) from 0.726 to 0.767 unsupervised and from 0.797 to 0.824 in the novelty setting
    (GaussianMixture chosen by BIC: 0.742 and 0.832; LedoitWolf alone 0.725 and
    0.797), though the novelty setting's average precision fell (0.458 to 0.438). A
    fifth over three refits (half the rows out, as the minimum covariance
    determinant's support) scored 0.773 and 0.825 there, but on three blobs (a
    mixture) it fitted one blob and its "auto" threshold flagged no row. Trimming lost
    on a few sets (cover, Cardiotocography) and, with fewer than 3 rows per feature, on the
    digits (0.997 to 0.987-0.992), where it is not done. On ADBench's two binary
    tables the whitened Gaussian RBM scored above the Bernoulli RBM that was the
    default for binary rows (celeba 0.78 against 0.47, InternetAds 0.75 against 0.67,
    unsupervised); on binarized images the Bernoulli RBM is the better density
    (0.984 against 0.974 on the digits, 0.870 against 0.856 on Fashion-MNIST): pass
    ``RBM(n_components=16, learning="pcd")`` there. On the grey images the whitened
    Gaussian RBM reached 0.997 (digits; LocalOutlierFactor 0.991) and 0.902
    (Fashion-MNIST; IsolationForest 0.915). Learned variances collapse on pixels
    constant in the training rows, and gave no better AUC where they did not. The
    whitening carries the Gaussian RBM's AUC: one hidden unit scored the same, which
    is why its training is bounded by updates. The user guide has the tables.

    The default Gaussian RBM's warnings about feature scales (a constant pixel) are
    silenced: its variances are fixed, so none can collapse, and a feature constant
    in training is informative for novelty (any other value is improbable).
    Features in different units are best put on one scale first (the whitening's
    shrinkage pulls towards a multiple of the identity): use a
    :class:`~sklearn.pipeline.Pipeline` with a
    :class:`~sklearn.preprocessing.StandardScaler`, whose scores are then
    log-densities of the scaled rows.

    Under array API dispatch (``sklearn.config_context(array_api_dispatch=True)``) rows
    of another library than NumPy (torch, CuPy) go to the model, which trains and
    scores on their device; the scores come back there, and the threshold is a
    quantile of a host copy of them. A model that cannot compute on such rows refuses
    them itself.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from skboltz import LikelihoodOutlierDetector
    >>> X, y = load_digits(return_X_y=True)
    >>> X = X / 16
    >>> detector = LikelihoodOutlierDetector(contamination=0.05, random_state=0)
    >>> detector = detector.fit(X[y == 0][:150])
    >>> type(detector.estimator_).__name__
    'GaussianRBM'
    >>> labels = detector.predict(X[:10])  # +1: like the zeros, -1: unlike them
    >>> labels.tolist(), y[:10].tolist()
    ([1, -1, -1, -1, -1, -1, -1, -1, -1, -1], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    >>> scores = detector.score_samples(X[:2])  # log-densities, in nats
    >>> bool(np.allclose(detector.decision_function(X[:2]), scores - detector.offset_))
    True
    """

    #: Array API inputs (under ``sklearn.config_context(array_api_dispatch=True)``) go
    #: to the model, which computes on them or says why it cannot.
    _passes_array_api_inputs = True

    _parameter_constraints = {
        "estimator": [None, HasMethods(["fit", "score_samples"])],
        "contamination": [
            StrOptions({"auto"}),
            Interval(Real, 0, 0.5, closed="right"),
        ],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator=None, *, contamination="auto", random_state=None):
        self.estimator = estimator
        self.contamination = contamination
        self.random_state = random_state

    def _accepts_sparse(self):
        return self.estimator is None or get_tags(self.estimator).input_tags.sparse

    def _takes_missing(self):
        """Whether NaN entries reach the model (the default picks one that takes them)."""
        return self.estimator is None or get_tags(self.estimator).input_tags.allow_nan

    def _passes_frame(self, X, *, reset):
        """Whether the DataFrame ``X`` goes to the model as it is: a model of the
        user's validates its own input (a TabularRBM encodes categorical columns);
        the default model does when it is a table model."""
        if not is_frame(X):
            return False
        if self.estimator is not None:
            return True
        return (has_non_numeric_columns(X) if reset
                else getattr(self.estimator_, "_reads_frames", False))

    def _validate_X(self, X, *, reset):
        if self._passes_frame(X, reset=reset):  # names and width checked here only
            validate_data(self, X, skip_check_array=True, reset=reset)
            return X
        if dispatched_namespace(X) is not None:  # the rows stay where they are
            return validated_rows(self, X, reset=reset)
        return validate_data(
            self, X, accept_sparse="csr" if self._accepts_sparse() else False,
            dtype=[np.float64, np.float32], reset=reset,
            ensure_all_finite="allow-nan" if self._takes_missing() else True,
        )

    def _new_model(self, X, seed):
        """An unfitted clone of the model, with ``seed`` as its random_state (if any)."""
        model = clone(default_density_model(X) if self.estimator is None else self.estimator)
        if seed is not None and "random_state" in model.get_params(deep=False):
            model.set_params(random_state=seed)
        return model

    def _fit_model(self, model, X, sample_weight=None):
        """``model`` fitted to ``X``; the default model trimmed of its least likely
        rows over TRIM_ROUNDS refits (sample weights 0) where the rows are enough."""
        with warnings.catch_warnings():
            if self.estimator is None:  # see Notes
                warnings.simplefilter("ignore", DataScaleWarning)
            if sample_weight is None:
                model.fit(X)
            else:
                model.fit(X, sample_weight=sample_weight)
            n_rows, n_features = _num_samples(X), self.n_features_in_
            if self.estimator is not None or n_rows < TRIM_MIN_ROWS_PER_FEATURE * n_features:
                return model
            weights = np.ones(n_rows) if sample_weight is None else sample_weight
            for _ in range(TRIM_ROUNDS):
                scores = host_scores(model, X)
                cut = weighted_percentile(scores, 100.0 * TRIM_FRACTION, weights)
                trimmed = np.where(scores >= cut, weights, 0.0)
                try:
                    model.fit(X, sample_weight=trimmed)
                except ValueError:  # e.g. the kept rows' covariance singular (few
                    break  # distinct rows): the model keeps its previous, valid fit
                weights = trimmed
            return model

    def _held_out_scores(self, model, X, seed, sample_weight=None):
        """Each row's log-likelihood under a clone of ``model`` fitted without it
        (AUTO_FOLDS-fold cross-validation)."""
        n_samples = _num_samples(X)
        if n_samples < 2 * AUTO_FOLDS:
            raise ValueError(
                "contamination='auto' sets the threshold from held-out log-likelihoods "
                f"({AUTO_FOLDS}-fold cross-validation), which needs at least "
                f"{2 * AUTO_FOLDS} training rows; got n_samples={n_samples}. Pass more "
                "rows, or a contamination fraction (a quantile of the training rows' "
                "own log-likelihoods)."
            )
        scores = np.empty(n_samples)
        folds = KFold(AUTO_FOLDS, shuffle=True, random_state=seed)
        for train, test in folds.split(X):
            fold_model = self._fit_model(
                clone(model), rows_at(X, train),
                None if sample_weight is None else sample_weight[train])
            scores[test] = host_scores(fold_model, rows_at(X, test))
        return scores

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None, sample_weight=None):
        """Fit the density model and set the threshold ``offset_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training rows, mostly normal (at most a fraction ``contamination`` of
            outliers).
        y : None
            Ignored.
        {sample_weight} The model is fitted with them (its ``fit`` must take
            ``sample_weight``), and the threshold is a quantile of the rows counted
            by them.

        Returns
        -------
        self : object
            The fitted detector.
        """
        with all_or_nothing(self):
            X = self._validate_X(X, reset=True)
            sample_weight = score_weights(sample_weight, X)  # validated, or None
            if sample_weight is not None:  # a row of weight 0 is no row
                kept = np.flatnonzero(sample_weight > 0)
                X, sample_weight = rows_at(X, kept), sample_weight[kept]
            model_seed, fold_seed = sub_estimator_seeds(self.random_state, 2)
            model = self._new_model(X, model_seed)
            if self.contamination == "auto":
                # The training rows' own scores are optimistic (on the digits, 8 nats
                # above held-out rows of the same digit): the fence is set on scores
                # of rows each model has not seen. Comparable because log Z is each
                # model's own.
                offset = lower_fence(
                    self._held_out_scores(model, X, fold_seed, sample_weight),
                    sample_weight)
                self._fit_model(model, X, sample_weight)
            else:  # as EllipticEnvelope: this fraction of the training rows lies below
                self._fit_model(model, X, sample_weight)
                offset = weighted_percentile(host_scores(model, X),
                                             100.0 * self.contamination, sample_weight)
            publish(self, {"estimator_": model, "offset_": float(offset)})
        return self

    fit.__doc__ = fit.__doc__.replace("{sample_weight}", FIT_SAMPLE_WEIGHT_DOC)

    def score_samples(self, X):
        """Log-likelihood log p(x) of each row under the fitted model, in nats.

        The fitted model's own ``score_samples``: higher is more normal.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            The log-likelihood of each row.
        """
        return self._log_likelihood(X, "score_samples")

    def _log_likelihood(self, X, method):
        """The fitted model's ``score_samples(X)``, after refusing rows of another
        namespace or device than the model's (naming the detector's ``method``, as
        the models name theirs)."""
        check_is_fitted(self)
        check_rows_like_model(self, X, self.estimator_, method)
        return self.estimator_.score_samples(self._validate_X(X, reset=False))

    def decision_function(self, X):
        """Log-likelihood above the threshold: ``score_samples(X) - offset_``, in nats.

        Negative for outliers, positive for inliers; a row at ``-d`` is exp(d) times
        less probable than a row on the threshold.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        decision : ndarray of shape (n_samples,)
            ``score_samples(X) - offset_``.
        """
        return self._log_likelihood(X, "decision_function") - self.offset_

    def predict(self, X):
        """Whether each row is an inlier (+1) or an outlier (-1).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to classify.

        Returns
        -------
        is_inlier : ndarray of shape (n_samples,)
            -1 where ``decision_function`` is negative, +1 elsewhere.
        """
        decision = self._log_likelihood(X, "predict") - self.offset_
        dispatched = dispatched_namespace(decision)
        if dispatched is None:
            return np.where(decision < 0, -1, 1)
        xp, device = dispatched
        return xp.where(decision < 0, xp.asarray(-1, device=device),
                        xp.asarray(1, device=device))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._accepts_sparse()
        tags.input_tags.allow_nan = self._takes_missing()
        # array API inputs go to the model: supported where the model supports them
        # (the default models do: a Gaussian RBM, or a table model)
        tags.array_api_support = (self.estimator is None
                                  or get_tags(self.estimator).array_api_support)
        return tags


__all__ = ["LikelihoodOutlierDetector"]
