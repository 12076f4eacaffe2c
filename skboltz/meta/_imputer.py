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

from ..estimators._categorical_rbm import CategoricalRBM
from ..estimators._gaussian_rbm import GaussianRBM, feature_moments
from ..units._layers import GaussianUnits
from ..estimators._rbm import RBM
from ..estimators._restricted import RestrictedBoltzmannBase
from ..estimators._tabular_rbm import TabularRBM, _column_kind, _is_frame
from ..utils._sklearn import (
    HasMethods,
    _BaseImputer,
    _check_feature_names_in,
    _fit_context,
    _get_mask,
    _get_output_config,
    is_scalar_nan,
)
from ..core._transactions import all_or_nothing, publish
from ..utils._weights import FIT_SAMPLE_WEIGHT_DOC, relative_weights, score_weights

#: ``estimator=None`` models columns of non-negative integer codes below this as
#: categories (CategoricalRBM); larger codes are counts or measures (GaussianRBM).
MAX_DEFAULT_CATEGORIES = 32


def code_columns(X):
    """Which columns of ``X`` hold category codes by their observed values (NaN marks
    a missing one): non-negative integers below MAX_DEFAULT_CATEGORIES."""
    observed = ~np.isnan(X)
    codes = np.where(observed, X, 0)
    return (((codes >= 0) & (codes == np.floor(codes))).all(axis=0)
            & (codes.max(axis=0, initial=0) < MAX_DEFAULT_CATEGORIES))


def default_estimator(X, random_state):
    """The estimator ``RBMImputer(estimator=None)`` fits to the columns of ``X``.

    Decided on the observed values (NaN marks a missing one): all within [0, 1], an
    :class:`~skboltz.RBM` (binary or [0, 1] columns); else, when every column holds
    non-negative integers below MAX_DEFAULT_CATEGORIES, a
    :class:`~skboltz.CategoricalRBM` (integer codes, as
    :class:`~sklearn.preprocessing.OrdinalEncoder` makes them); when no column does, a
    :class:`~skboltz.GaussianRBM` (the imputer standardises its columns); when some
    do, a :class:`~skboltz.TabularRBM` with those columns categorical. A DataFrame
    with categorical columns (category, object, string or bool dtype) has a
    TabularRBM with ``categorical_features="from_dtype"``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or DataFrame
        The columns to model, NaN where missing.
    random_state : int
        The estimator's seed.

    Returns
    -------
    estimator : RestrictedBoltzmannBase
        An unfitted estimator with its default settings.
    """
    if _is_frame(X):
        return TabularRBM(categorical_features="from_dtype", random_state=random_state)
    values = X[~np.isnan(X)]
    if ((values >= 0) & (values <= 1)).all():
        return RBM(random_state=random_state)
    codes = code_columns(X)
    if codes.all():
        return CategoricalRBM(random_state=random_state)
    if not codes.any():
        return GaussianRBM(random_state=random_state)
    return TabularRBM(categorical_features=np.flatnonzero(codes),
                      random_state=random_state)


def _pandas():
    import pandas

    return pandas


def _frame_has_categories(X):
    """Whether ``X`` is a DataFrame with a column that is not numeric by its dtype."""
    return _is_frame(X) and any(_column_kind(dtype) != "numeric" for dtype in X.dtypes)


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
    in every row at fit dropped from the output (or kept and filled with 0),
    ``get_feature_names_out``, ``set_output`` and a ``transform`` that works in a
    :class:`~sklearn.pipeline.Pipeline`. A pandas DataFrame with categorical columns
    (category, object, string or bool dtype) is imputed in its own categories by a
    :class:`~skboltz.TabularRBM`, the output then an object array (or, with
    ``set_output(transform="pandas")``, a DataFrame of the same columns, numbers as
    floats and categories in their columns' dtypes).

    Parameters
    ----------
    estimator : RBM, GaussianRBM, CategoricalRBM, TabularRBM or None, default=None
        The model of the columns (cloned; a skboltz restricted estimator that takes
        missing entries). None chooses by the columns: a DataFrame with categorical
        columns, a :class:`~skboltz.TabularRBM` (``categorical_features="from_dtype"``);
        else by the observed values: all within [0, 1], an :class:`~skboltz.RBM`;
        every column of non-negative integer codes below 32, a
        :class:`~skboltz.CategoricalRBM`; no such column, a
        :class:`~skboltz.GaussianRBM`; some, a TabularRBM with those columns
        categorical; each at its defaults. A GaussianRBM sees the columns
        standardised (each column's observed mean and standard deviation), and the
        imputations are put back on the columns' scale (a TabularRBM standardises
        its numeric columns itself). A TabularRBM's ``categorical_features`` name
        the input's columns. When the estimator's own ``random_state`` is None, it is
        drawn from ``random_state``.
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
    estimator_ : RBM, GaussianRBM, CategoricalRBM, TabularRBM or None
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

    #: What a fit sets on the imputer, put back as it was when a fit fails or is
    #: interrupted (:func:`~skboltz.core._transactions.all_or_nothing`), so that the
    #: imputer fitted before stays whole: its model, columns and standardisation.
    _input_attributes = ("n_features_in_", "feature_names_in_", "_frame", "indicator_",
                         "random_state_", "_valid_mask", "_constant_values", "_modelled",
                         "estimator_", "_location", "_scale")

    def _validate_input(self, X, *, reset):
        """The rows and the mask of their missing values: a float copy of ``X``, or
        a DataFrame with categorical columns as it is (``frame``: whether it is one)."""
        if reset:
            self._frame = _frame_has_categories(X)
        if self._frame:
            if not _is_frame(X):
                raise ValueError(
                    "RBMImputer was fitted on a DataFrame with categorical columns, "
                    f"and got {type(X).__name__}: give the same columns as a DataFrame.")
            validate_data(self, X, reset=reset, skip_check_array=True)
            if X.shape[0] < 1:
                raise ValueError(f"Found array with 0 sample(s) (shape={X.shape}) while a "
                                 "minimum of 1 is required by RBMImputer.")
            if is_scalar_nan(self.missing_values) or self.missing_values is None or (
                    self.missing_values is getattr(_pandas(), "NA", None)):
                mask = X.isna().to_numpy()
            else:
                mask = (X == self.missing_values).to_numpy(dtype=bool)
            return X, mask
        X = validate_data(
            self, X, dtype=FLOAT_DTYPES, reset=reset, copy=True, force_writeable=True,
            ensure_all_finite="allow-nan" if is_scalar_nan(self.missing_values) else True,
        )
        mask = _get_mask(X, self.missing_values)
        if self.__sklearn_tags__().input_tags.positive_only:  # a model of codes
            check_non_negative(np.where(mask, 0, X), type(self).__name__)
        return X, mask

    def _model_input(self, X, mask, rows, columns):
        """The model's rows: ``X``'s ``rows`` and ``columns``, NaN where missing (a
        DataFrame's categorical entries missing as such), standardised for a model of
        real-valued units."""
        if self._frame:
            part = X.iloc[rows, columns]
            return part.mask(mask[np.ix_(rows, columns)])
        part = np.where(mask[np.ix_(rows, columns)], np.nan, X[np.ix_(rows, columns)])
        if self._scale is not None:
            part = (part - self._location) / self._scale
        return part

    @_fit_context(prefer_skip_nested_validation=False)  # the estimator's parameters
    def fit(self, X, y=None, sample_weight=None):
        """Fit the model of the columns on the incomplete rows of ``X``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows with missing values (``missing_values``).
        y : None
            Ignored.
        {sample_weight} The model is fitted with them, and the real-valued columns
            are standardised by their weighted means and deviations.

        Returns
        -------
        self : object
            The fitted imputer.
        """
        with all_or_nothing(self):  # a failed refit keeps the imputer fitted before
            return self._fit(X, sample_weight)

    fit.__doc__ = fit.__doc__.replace("{sample_weight}", FIT_SAMPLE_WEIGHT_DOC)

    def _fit(self, X, sample_weight):
        X, mask = self._validate_input(X, reset=True)
        weights = score_weights(sample_weight, X)  # validated, or None
        if weights is not None:  # a row of weight 0 is no row
            kept = np.flatnonzero(weights > 0)
            X = X.iloc[kept] if self._frame else X[kept]
            mask, weights = mask[kept], weights[kept]
        self._fit_indicator(mask)
        self.random_state_ = check_random_state(self.random_state)
        self._valid_mask = ~mask.all(axis=0)
        # Columns with one observed value take it; the others are modelled.
        constant = np.zeros(X.shape[1], dtype=bool)
        self._constant_values = np.full(X.shape[1], None, dtype=object)
        for j in np.flatnonzero(self._valid_mask):
            column = X.iloc[:, j] if self._frame else X[:, j]
            observed = column[~mask[:, j]]
            values = observed.unique() if self._frame else np.unique(observed)
            if len(values) == 1:
                constant[j] = True
                self._constant_values[j] = values[0]
        self._modelled = self._valid_mask & ~constant
        self._location, self._scale = None, None
        if not self._modelled.any():
            publish(self, {"estimator_": None})
            return self
        everything, modelled = np.arange(X.shape[0]), np.flatnonzero(self._modelled)
        columns = self._model_input(X, mask, everything, modelled)
        estimator = self._estimator_for(columns)
        if estimator._input_units() is GaussianUnits:  # real-valued units: standardised
            # the weights relative (of mean 1), as every fit counts them: raw weights
            # of 1e306 overflowed the weighted sums
            relative = relative_weights(weights)
            if relative is None:
                self._location = np.nanmean(columns, axis=0)
                self._scale = np.nanstd(columns, axis=0)
            else:
                self._location, self._scale = feature_moments(columns, relative)
            columns = (columns - self._location) / self._scale
        if weights is None:
            estimator.fit(columns)
        else:
            estimator.fit(columns, sample_weight=weights)
        publish(self, {"estimator_": estimator})
        return self

    def _estimator_for(self, columns):
        """A new estimator for the modelled columns (cloned or chosen), seeded."""
        seed = int(self.random_state_.randint(np.iinfo(np.int32).max))
        if self.estimator is None:
            return default_estimator(columns, seed)
        estimator = clone(self.estimator)
        if not (isinstance(estimator, RestrictedBoltzmannBase) and estimator._takes_missing()):
            raise ValueError(
                "RBMImputer needs a skboltz model that takes missing entries (RBM, "
                "GaussianRBM with whiten=False, CategoricalRBM, TabularRBM); got "
                f"{estimator!r}.")
        if self._frame and not isinstance(estimator, TabularRBM):
            kinds = [str(name) for name, dtype in zip(columns.columns, columns.dtypes)
                     if _column_kind(dtype) != "numeric"]
            raise ValueError(
                f"RBMImputer: the columns {kinds} are categorical by their dtype, which "
                f"{type(estimator).__name__} does not model: use estimator=None or a "
                "TabularRBM, or encode them first (e.g. OrdinalEncoder()).")
        if isinstance(estimator, TabularRBM):
            estimator.set_params(categorical_features=self._modelled_categorical_features(
                estimator.categorical_features))
        if estimator.get_params().get("random_state", 0) is None:
            estimator.set_params(random_state=seed)
        return estimator

    def _modelled_categorical_features(self, spec):
        """A TabularRBM's ``categorical_features`` over the input's columns, as the
        modelled columns' (columns with one observed value are left out of it)."""
        if spec is None or isinstance(spec, str) or self._modelled.all():
            return spec
        spec = np.asarray(spec)
        if spec.dtype.kind in "iu":
            spec = np.isin(np.arange(self.n_features_in_), spec)
        if spec.dtype.kind == "b" and spec.shape == (self.n_features_in_,):
            return spec[self._modelled]
        return spec  # column names (or a bad value the model refuses)

    def transform(self, X):
        """Impute every missing value of ``X``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows with missing values (``missing_values``).

        Returns
        -------
        X_imputed : ndarray of shape (n_samples, n_output_features)
            The rows with their missing values filled (the features missing in every
            row at fit dropped, unless ``keep_empty_features``), then the missing
            indicator with ``add_indicator``; of object dtype for a DataFrame with
            categorical columns (their categories as in ``X``), else floats.
        """
        check_is_fitted(self)
        X, mask = self._validate_input(X, reset=False)
        X_indicator = self._transform_indicator(mask)
        out = X.to_numpy(dtype=object) if self._frame else X
        constant = np.flatnonzero(self._valid_mask & ~self._modelled)
        for j in constant:
            out[mask[:, j], j] = self._constant_values[j]
        modelled = np.flatnonzero(self._modelled)
        rows = np.flatnonzero(mask[:, modelled].any(axis=1))
        if rows.size:
            columns = self._model_input(X, mask, rows, modelled)
            draws = None
            if self.sample_posterior:
                draws = np.random.default_rng(self.random_state_.randint(np.iinfo(np.int32).max))
            filled = self.estimator_._complete_rows(columns, random_state=draws)
            if self._scale is not None:
                filled = filled * self._scale + self._location
            if self._frame:
                filled = self._categories_of(filled)
            absent = mask[np.ix_(rows, modelled)]
            block = out[np.ix_(rows, modelled)]
            block[absent] = filled[absent]
            out[np.ix_(rows, modelled)] = block
        if self.keep_empty_features:
            out[:, ~self._valid_mask] = 0
        else:
            out = out[:, self._valid_mask]
        out = self._concatenate_indicator(out, X_indicator)
        if self._frame and _get_output_config("transform", self)["dense"] == "pandas":
            return self._typed_frame(out, X)
        return out

    def _typed_frame(self, out, X):
        """The object array ``out`` of a DataFrame with categorical columns as a
        DataFrame whose columns have the input's kinds (set_output's wrapping then
        names them): numbers as floats, categories in their column's dtype, the
        indicator's columns as bools."""
        pd = _pandas()
        kept = (np.arange(self.n_features_in_) if self.keep_empty_features
                else np.flatnonzero(self._valid_mask))
        columns = {}
        for position in range(out.shape[1]):
            values = pd.Series(out[:, position], index=X.index)
            if position >= kept.size:  # the missing indicator
                columns[position] = values.astype(bool)
                continue
            dtype = X.dtypes.iloc[kept[position]]
            try:
                columns[position] = (values.astype(np.float64)
                                     if _column_kind(dtype) == "numeric"
                                     else values.astype(dtype))
            except (TypeError, ValueError):  # e.g. a kept empty column's 0
                columns[position] = values
        return pd.DataFrame(columns, index=X.index)

    def _categories_of(self, filled):
        """The TabularRBM's rows of numbers and codes with each categorical column's
        codes as its categories (an object array)."""
        model = self.estimator_
        out = filled.astype(object)
        for position, j in enumerate(np.flatnonzero(model.is_categorical_)):
            out[:, j] = model.categories_[position][filled[:, j].astype(np.intp)]
        return out

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
