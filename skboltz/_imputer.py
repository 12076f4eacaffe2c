"""Imputation of missing values by a restricted Boltzmann machine fitted on incomplete rows."""


import numpy as np
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import (
    FLOAT_DTYPES,
    check_is_fitted,
    check_non_negative,
    validate_data,
)

from ._categorical_rbm import CategoricalRBM
from ._gaussian_rbm import GaussianRBM
from ._layers import GaussianUnits
from ._rbm import RBM
from ._restricted import RestrictedBoltzmannBase
from ._sklearn import (
    HasMethods,
    _BaseImputer,
    _check_feature_names_in,
    _fit_context,
    _get_mask,
    is_scalar_nan,
)

#: ``estimator=None`` models columns of non-negative integer codes below this as
#: categories (CategoricalRBM); larger codes are counts or measures (GaussianRBM).
MAX_DEFAULT_CATEGORIES = 32


def default_estimator(X, random_state):
    """The estimator ``RBMImputer(estimator=None)`` fits to the columns of ``X``.

    Decided on the observed values (NaN marks a missing one): all within [0, 1], an
    :class:`~skboltz.RBM` (binary or [0, 1] columns); else all non-negative integers
    below MAX_DEFAULT_CATEGORIES, a :class:`~skboltz.CategoricalRBM` (integer codes,
    as :class:`~sklearn.preprocessing.OrdinalEncoder` makes them); otherwise a
    :class:`~skboltz.GaussianRBM` (the imputer standardises its columns).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The columns to model, NaN where missing.
    random_state : int
        The estimator's seed.

    Returns
    -------
    estimator : RestrictedBoltzmannBase
        An unfitted estimator with its default settings.
    """
    values = X[~np.isnan(X)]
    if ((values >= 0) & (values <= 1)).all():
        return RBM(random_state=random_state)
    if ((values >= 0) & (values == np.floor(values))).all() and (
        values.max(initial=0) < MAX_DEFAULT_CATEGORIES
    ):
        return CategoricalRBM(random_state=random_state)
    return GaussianRBM(random_state=random_state)


class RBMImputer(_BaseImputer):
    """Imputation of missing values by a restricted Boltzmann machine.

    Fits a skboltz model on the incomplete rows themselves (a missing entry is left
    out of the model, never filled with a constant: see the estimators' "missing
    entries") and fills each missing entry from the model's conditional distribution
    given the row's observed entries: its mean for binary and real-valued columns
    (E[x_i | observed], a probability for a binary column), its most probable category
    for a categorical column (the mode of p(x_i | observed), column by column), or
    with ``sample_posterior=True`` a draw of all the row's missing entries together
    from p(missing | observed), for multiple imputation. The conditionals are exact
    where the model's hidden states or the completions of a row's missing entries are
    few enough to list; otherwise the means are averages over Gibbs chains with the
    observed entries clamped (seeded per row from the model's seed, so deterministic),
    and draws are the last states of such chains.

    Follows scikit-learn's imputer contract (as
    :class:`~sklearn.impute.IterativeImputer` and :class:`~sklearn.impute.KNNImputer`):
    ``missing_values``, ``add_indicator``, ``keep_empty_features``, features missing
    in every row at fit dropped from the output (or kept and filled with 0), and a
    ``transform`` that works in a :class:`~sklearn.pipeline.Pipeline`.

    Parameters
    ----------
    estimator : RBM, GaussianRBM, CategoricalRBM or None, default=None
        The model of the columns (cloned; a skboltz restricted estimator that takes
        missing entries). None chooses by the observed values: all within [0, 1], an
        :class:`~skboltz.RBM`; else non-negative integer codes below 32, a
        :class:`~skboltz.CategoricalRBM`; otherwise a :class:`~skboltz.GaussianRBM`,
        each at its defaults. A model of real-valued units (GaussianRBM) sees the
        columns standardised (each column's observed mean and standard deviation),
        and the imputations are put back on the columns' scale. When the
        estimator's own ``random_state`` is None, it is drawn from ``random_state``.
    missing_values : int, float, str, np.nan, None or pandas.NA, default=np.nan
        The placeholder of the missing values; every occurrence is imputed.
    sample_posterior : bool, default=False
        Fill each row's missing entries with a draw from the model's conditional
        distribution given its observed entries (each ``transform`` call draws anew,
        from the imputer's ``random_state``), instead of the conditional means and
        modes. Several imputers with different ``random_state`` give multiple
        imputations.
    add_indicator : bool, default=False
        Append a :class:`~sklearn.impute.MissingIndicator` of the features with
        missing values at fit to the output.
    keep_empty_features : bool, default=False
        Keep the features that are missing in every row at fit in the output, filled
        with 0 (otherwise they are dropped).
    random_state : int, RandomState instance or None, default=None
        Seeds the default estimator (or one whose ``random_state`` is None) and the
        draws of ``sample_posterior``.

    Attributes
    ----------
    estimator_ : RBM, GaussianRBM, CategoricalRBM or None
        The fitted model of the features that vary (None when no feature varies:
        features with a single observed value are filled with it).
    indicator_ : sklearn.impute.MissingIndicator or None
        The indicator of missing values, with ``add_indicator=True``.
    random_state_ : RandomState instance
        The random state used (from ``random_state``).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when they are all strings.

    See Also
    --------
    sklearn.impute.IterativeImputer : Imputation by a regression of each feature on
        the others, in rounds.
    sklearn.impute.KNNImputer : Imputation by the nearest complete neighbours.

    Notes
    -----
    The model is fitted by the estimator's own ``fit`` on the rows with their missing
    entries, which its training draws from the model given the observed ones (a
    persistent completion per row): no imputation precedes the model. Columns with a
    single observed value are filled with it and left out of the model.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz import RBMImputer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 3, size=(300, 4)).astype(float)
    >>> X[:, 1] = X[:, 0]  # two columns that always agree
    >>> X[::3, 1] = np.nan
    >>> imputer = RBMImputer(random_state=0).fit(X)  # codes: a CategoricalRBM
    >>> type(imputer.estimator_).__name__
    'CategoricalRBM'
    >>> filled = imputer.transform(X)
    >>> bool(np.isnan(filled).any())
    False
    >>> float(np.mean(filled[::3, 1] == X[::3, 0]))  # the agreeing column's code
    1.0
    """

    _parameter_constraints = {
        **_BaseImputer._parameter_constraints,
        "estimator": [None, HasMethods(["fit", "score_samples"])],
        "sample_posterior": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        missing_values=np.nan,
        sample_posterior=False,
        add_indicator=False,
        keep_empty_features=False,
        random_state=None,
    ):
        super().__init__(missing_values=missing_values, add_indicator=add_indicator,
                         keep_empty_features=keep_empty_features)
        self.estimator = estimator
        self.sample_posterior = sample_posterior
        self.random_state = random_state

    def _validate_input(self, X, *, reset):
        """The rows as floats (a copy) and the mask of their missing values."""
        X = validate_data(
            self, X, dtype=FLOAT_DTYPES, reset=reset, copy=True, force_writeable=True,
            ensure_all_finite="allow-nan" if is_scalar_nan(self.missing_values) else True,
        )
        mask = _get_mask(X, self.missing_values)
        if self.__sklearn_tags__().input_tags.positive_only:  # a model of codes
            check_non_negative(np.where(mask, 0, X), type(self).__name__)
        return X, mask

    @_fit_context(prefer_skip_nested_validation=False)  # the estimator's parameters
    def fit(self, X, y=None):
        """Fit the model of the columns on the incomplete rows of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with missing values (``missing_values``).
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted imputer.
        """
        X, mask = self._validate_input(X, reset=True)
        self._fit_indicator(mask)
        self.random_state_ = check_random_state(self.random_state)
        observed = np.where(mask, np.nan, X)
        self._valid_mask = ~mask.all(axis=0)
        # Columns with one observed value take it; the others are modelled.
        low, high = (reduce(observed, axis=0, initial=value)
                     for reduce, value in ((np.fmin.reduce, np.inf), (np.fmax.reduce, -np.inf)))
        constant = self._valid_mask & (low == high)
        self._constant_values = np.where(constant, low, np.nan)
        self._modelled = self._valid_mask & ~constant
        self.estimator_ = None
        self._location, self._scale = None, None
        if not self._modelled.any():
            return self
        columns = observed[:, self._modelled]
        estimator = self._estimator_for(columns)
        if estimator._input_units() is GaussianUnits:  # real-valued units: standardised
            self._location = np.nanmean(columns, axis=0)
            self._scale = np.nanstd(columns, axis=0)
            columns = (columns - self._location) / self._scale
        self.estimator_ = estimator.fit(columns)
        return self

    def _estimator_for(self, columns):
        """A new estimator for the modelled columns (cloned or chosen), seeded."""
        seed = int(self.random_state_.randint(np.iinfo(np.int32).max))
        if self.estimator is None:
            return default_estimator(columns, seed)
        estimator = clone(self.estimator)
        if not (isinstance(estimator, RestrictedBoltzmannBase) and estimator._takes_missing()):
            raise ValueError(
                f"RBMImputer needs a skboltz model that takes missing entries (RBM, "
                f"GaussianRBM with whiten=False, CategoricalRBM); got {estimator!r}.")
        if estimator.get_params().get("random_state", 0) is None:
            estimator.set_params(random_state=seed)
        return estimator

    def transform(self, X):
        """Impute every missing value of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with missing values (``missing_values``).

        Returns
        -------
        X_imputed : ndarray of shape (n_samples, n_output_features)
            The rows with their missing values filled (the features missing in every
            row at fit dropped, unless ``keep_empty_features``), then the missing
            indicator with ``add_indicator``.
        """
        check_is_fitted(self)
        X, mask = self._validate_input(X, reset=False)
        X_indicator = self._transform_indicator(mask)
        constant = ~np.isnan(self._constant_values)
        X[:, constant] = np.where(mask[:, constant], self._constant_values[constant],
                                  X[:, constant])
        modelled = self._modelled
        rows = np.flatnonzero(mask[:, modelled].any(axis=1))
        if rows.size:
            absent = mask[np.ix_(rows, np.flatnonzero(modelled))]
            columns = np.where(absent, np.nan, X[np.ix_(rows, np.flatnonzero(modelled))])
            if self._scale is not None:
                columns = (columns - self._location) / self._scale
            draws = None
            if self.sample_posterior:
                draws = np.random.default_rng(self.random_state_.randint(np.iinfo(np.int32).max))
            filled = self.estimator_._complete_rows(columns, random_state=draws)
            if self._scale is not None:
                filled = filled * self._scale + self._location
            block = X[np.ix_(rows, np.flatnonzero(modelled))]
            block[absent] = filled[absent]
            X[np.ix_(rows, np.flatnonzero(modelled))] = block
        if self.keep_empty_features:
            X[:, ~self._valid_mask] = 0
        else:
            X = X[:, self._valid_mask]
        return self._concatenate_indicator(X, X_indicator)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self.estimator is not None:  # what the model takes, the imputer takes
            inner = self.estimator.__sklearn_tags__().input_tags
            tags.input_tags.positive_only = inner.positive_only
            tags.input_tags.categorical = inner.categorical
        return tags

    def get_feature_names_out(self, input_features=None):
        """Get the output feature names.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input features; None uses ``feature_names_in_`` (or ``x0``, ``x1``, ...).

        Returns
        -------
        feature_names_out : ndarray of str objects
            The kept features' names, then the indicator's.
        """
        check_is_fitted(self, "n_features_in_")
        input_features = _check_feature_names_in(self, input_features)
        names = input_features if self.keep_empty_features else input_features[self._valid_mask]
        return self._concatenate_indicator_feature_names_out(names, input_features)


__all__ = ["RBMImputer", "default_estimator"]
