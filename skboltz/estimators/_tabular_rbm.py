"""Tabular RBM: numeric and categorical columns, one restricted model over layer groups.

The visible layer is a :class:`~skboltz.views.LayerGroups` of two groups: the numeric
columns as Gaussian units with learned variances (standardised inside the model), then
the categorical columns as softmax groups, one per column. The math is the generic
restricted model's (:mod:`skboltz.models._restricted_energy`); this module holds the
estimator: the columns' validation and encoding, the standardisation, and the
Gaussian group's variance checks.
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import check_array, validate_data

from ..utils._array_api import ArrayAPIMixin
from ._array_api_tables import TabularRBMArrayAPI
from ..core._base import TRAINING_CONSTRAINTS
from ..utils._capabilities import (
    ANNEALING,
    BINARY,
    ENUMERATION,
    GAUSSIAN,
    RESTRICTED,
    SOFTMAX,
    Capabilities,
)
from ._categorical_rbm import check_category_count, most_probable_codes, one_hot
from ..utils._energy import column_means
from ._gaussian_rbm import (
    MAX_VARIANCE_DECREASE,
    MIN_VARIANCE,
    RUNAWAY_SCALE,
    bounded_rows,
    feature_moments,
    feature_spread,
    hidden_rates,
)
from ._layered_rbm import LayeredRBM
from ..units._layers import BinaryUnits, GaussianUnits, LayerGroups, SoftmaxUnits
from ..core._monitoring import MONITORING_CONSTRAINTS, MONITORING_PARAMETERS_DOC
from ._restricted import MISSING_ENTRIES_DOC
from ..models._restricted_energy import RestrictedLayout, RestrictedTrainingForm, RestrictedView
from ..utils._sklearn import Interval, StrOptions
from ..core._strategies import document_strategy_options, strategy_constraints
from ..core._training import AveragedTrainingState, shared
from ..exceptions import TrainingDivergedError


class TabularRBMView(RestrictedView):
    """Read-only view of a tabular RBM: Gaussian and softmax groups, binary hidden units.

    The restricted model whose visible layer is a :class:`~skboltz.views.LayerGroups`
    of a :class:`~skboltz.views.GaussianUnits` group (the numeric columns,
    standardised) and a :class:`~skboltz.views.SoftmaxUnits` group (a one-of-K group
    per categorical column), in that order (:class:`~skboltz.TabularRBM`). With a
    Gaussian group, sampler states (for log Z) are hidden vectors, the visible groups
    summed out in closed form (Gaussian integrals and sums over categories), and exact
    enumeration lists the hidden states; with softmax groups only, they are the
    visible states, as in :class:`CategoricalRBMView`.

    Parameters
    ----------
    weights : ndarray of shape (n_hidden, n_visible)
        Weights W (``TabularRBM.components_``).
    visible : LayerGroups
        The visible groups and their parameters.
    hidden : BinaryUnits
        The hidden units and their biases.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.partition import Exact
    >>> from skboltz.views import (BinaryUnits, GaussianUnits, LayerGroups, SoftmaxUnits,
    ...                            TabularRBMView)
    >>> visible = LayerGroups([GaussianUnits(np.zeros(1), variance=np.ones(1)),
    ...                        SoftmaxUnits(np.zeros(3), (3,))])
    >>> view = TabularRBMView(np.zeros((2, 4)), visible, BinaryUnits(np.zeros(2)))
    >>> log_z = Exact().estimate(view).value  # 4 hidden states, a unit normal, 3 categories
    >>> bool(np.isclose(log_z, np.log(4 * 3) + 0.5 * np.log(2 * np.pi)))
    True
    """

    visible_units = LayerGroups
    hidden_units = BinaryUnits
    #: Gaussian and softmax visible groups, binary hidden units: the samplers of the
    #: restricted learning rule, exact enumeration of the hidden (or, with softmax
    #: groups only, the smaller) layer, and annealing (no mean field).
    capabilities = Capabilities(
        units=(("visible", GAUSSIAN), ("visible", SOFTMAX), ("hidden", BINARY)),
        operations={RESTRICTED, ENUMERATION, ANNEALING},
    )
    #: ``X`` holds a table: whether its rows have a probability or a density is the
    #: fitted groups' answer (:meth:`TabularRBM._input_units`); the class alone does
    #: not promise countable rows.
    input_units = LayerGroups


@dataclass(frozen=True, eq=False)
class NumericStandardisation:
    """z = (x - mean) / scale on the numeric columns, the first ``len(mean)`` of the
    visible rows; the categories' one-hot columns after them pass unchanged.

    Fixed at the first call (float64); rows of either dtype are mapped in their own.
    """

    mean: np.ndarray
    scale: np.ndarray

    def transform(self, V):
        """The rows with their numeric columns standardised (a copy)."""
        n = len(self.mean)
        Z = V.copy()
        Z[:, :n] -= self.mean.astype(V.dtype)
        Z[:, :n] /= self.scale.astype(V.dtype)
        Z[:, :n] = bounded_rows(Z[:, :n], "standardised values")
        return Z

    def inverse_transform(self, Z):
        """The rows with their numeric columns in the input's units (a copy)."""
        n = len(self.mean)
        V = Z.copy()
        V[:, :n] *= self.scale.astype(Z.dtype)
        V[:, :n] += self.mean.astype(Z.dtype)
        return V

    @property
    def log_abs_det(self):
        """sum(log scale): the log-Jacobian of the map back to the input's units."""
        return float(np.log(self.scale).sum())

    def missing_log_abs_det(self, missing):
        """The part of :attr:`log_abs_det` of each row's missing numeric entries
        (``missing``: the rows' missing units), which the density of the observed
        entries leaves out."""
        return missing[:, :len(self.scale)] @ np.log(self.scale)


@dataclass(eq=False, kw_only=True)
class TabularTrainingState(AveragedTrainingState):
    """Training state of :class:`TabularRBM`: the visible units' means on the training
    rows (where ``sample``'s chains start) and the log variances last published."""

    visible_means: np.ndarray = shared()
    published_log_variance: np.ndarray | None = shared(default=None)


_BINARY = BinaryUnits(np.zeros(0))


def _is_frame(X):
    """Whether ``X`` is a pandas DataFrame (checked without importing pandas)."""
    return hasattr(X, "iloc") and hasattr(X, "dtypes") and getattr(X, "ndim", 0) == 2


def _column_kind(dtype):
    """"categorical" (category, bool, object or string), "numeric" (integers and real
    floats) or None (anything else: dates, durations, complex numbers, ...)."""
    import pandas as pd

    if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(dtype):
        return "categorical"
    if pd.api.types.is_numeric_dtype(dtype):
        # pandas' nullable Int64 and Float64 dtypes (convert_dtypes, read_csv with a
        # dtype_backend) have a kind but are no NumPy dtype
        return "numeric" if getattr(dtype, "kind", None) in tuple("iuf") else None
    if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
        return "categorical"
    return None


class TabularRBM(ArrayAPIMixin, LayeredRBM):
    """Restricted Boltzmann machine of a mixed table: numeric and categorical columns.

    A table's numeric columns are Gaussian visible units with learned variances and its
    categorical columns softmax groups (one-of-K units, one group per column), coupled
    to ``n_components`` binary hidden units:

        p(x, h) proportional to exp(-sum_i (z_i - b_i)^2 / (2 sigma_i^2)
                                    + sum_i W_i . h z_i / sigma_i^2
                                    + sum_k (b_k[x_k] + W_k[:, x_k] . h) + c . h),

    with z_i the numeric column x_i standardised inside the model (its mean and
    standard deviation fixed at the first call). ``score_samples`` is the log density
    of the mixed row in nats: a probability for the categorical part, a density (in
    the input's units: log p(x) = log p(z) - sum_i log std_i) for the numeric part;
    exact by enumerating the hidden layer (up to 20 hidden units), otherwise
    estimated by annealed importance sampling over the hidden states with error bars.
    ``transform`` returns P(h = 1 | x), features for a classifier; ``sample`` draws
    rows of numeric values and category codes.

    The visible layer is a :class:`~skboltz.views.LayerGroups` of a
    :class:`~skboltz.views.GaussianUnits` group and a
    :class:`~skboltz.views.SoftmaxUnits` group: the same restricted model and learning
    strategies as :class:`RBM`, :class:`GaussianRBM` and :class:`CategoricalRBM` (CD,
    PCD, parallel tempering), not a model of its own.

    Parameters
    ----------
    n_components : int, default=16
        Number of hidden units. Up to 20, ``score_samples`` is exact. The defaults
        are :class:`GaussianRBM`'s but for ``n_iter`` and ``average_window``, measured
        on six real mixed tables (``benchmarks/bench_tabular_mixed.py``): 20 hidden
        units, 8, learning rates of 0.01 and 0.1, PCD with 100 chains and no
        momentum each lost on most of them.
    categorical_features : array-like of {bool, int, str} or "from_dtype" or None, \
            default="from_dtype"
        Which columns are categorical, as in
        :class:`~sklearn.ensemble.HistGradientBoostingClassifier`: a boolean mask of
        the columns, their indices, their names (for a DataFrame), None (every column
        numeric) or "from_dtype": a DataFrame's columns of ``category``, ``bool``,
        ``object`` or string dtype (every column of an array is then numeric). The
        default asks the data, so that a DataFrame says its columns' kinds itself and
        an array of real values is modelled as numeric; unlike the gradient-boosting
        models, string and object columns count as categorical (a string column
        cannot be numeric, and this model encodes categories itself). A categorical
        column holds integer codes 0, 1, ..., K - 1 (numeric dtypes, as
        :class:`~sklearn.preprocessing.OrdinalEncoder` makes them: K is the largest
        code of the first call plus one, at most max(1000, 10 x its rows)) or, in a
        DataFrame, values encoded inside: a ``category`` column's declared
        categories, otherwise the sorted values of the first call (numbers given
        there later are looked up among them, as OrdinalEncoder does). Integer and
        float columns, pandas' nullable ``Int64`` and ``Float64`` among them, are
        numeric.
    learning : {learning_options} or RBMLearningStrategy, default="pt"
        How the negative-phase statistics are estimated: parallel tempering
        (:class:`~skboltz.learning.ParallelTempering`; the visible groups' biases and
        the Gaussian units' quadratic term stay untempered, so every temperature is a
        proper distribution), persistent contrastive divergence
        (:class:`~skboltz.learning.PCD`) or CD-k, or a strategy object (cloned). As
        for :class:`GaussianRBM`, the chains of PCD mix poorly between the modes that
        numeric and categorical columns make together: held out, PCD (at a learning
        rate of 0.01) scored 16 nats per row below parallel tempering on a synthetic
        table of four mixed columns and 0.2 below on the diabetes data (sex as a
        category); at the learning rate below it diverged. Parallel tempering cost
        about twice as much per epoch there.
    z_estimator : {z_estimator_options} or ZEstimator, default="auto"
        How log Z is found for ``score_samples``: "auto" enumerates the hidden states
        exactly when ``n_components <= 20`` (or, without numeric columns, the smaller
        layer's states up to 2**20), and otherwise uses annealed importance sampling.
        Recorded in ``z_estimator_``.
    learning_rate : float, default=0.04
        Step size on the mean minibatch update direction (for the numeric columns in
        the model's own scale, as in :class:`GaussianRBM`; a variance moves as
        sigma^2 <- sigma^2 (1 + step)).
    batch_size : int, default=10
        Rows per minibatch; the minibatches are reshuffled every epoch.
    n_iter : int, default=200
        Number of epochs (passes over the data) for ``fit``. With the averaging
        window below, 200 epochs gained 0.06 to 0.22 nats per row held out over 100
        epochs and a window of 100 updates, on each of the six tables of
        ``benchmarks/bench_tabular_mixed.py``, at about twice the fit time.
    momentum : float or (float, float), default=0.5
        Momentum of the updates, in moving-average form (see :class:`RBM`).
    weight_decay : float, default=1e-4
        L2 penalty on the weights (not the biases or variances).
    average_window : int, "auto" or None, default="auto"
        Iterate averaging over about this many updates (see :class:`RBM`); "auto":
        a fifth of the updates of a fit, ``n_iter * ceil(n_rows / batch_size) // 5``
        with ``n_rows`` the training rows of the first call, at least 100
        (``average_window_``); None publishes the last update's parameters.
    {monitoring}
    verbose : int, default=0
        Print a progress line per epoch when positive.
    random_state : int, RandomState instance or None, default=None
        Seeds initialisation, minibatch order, sampling and the log Z estimate.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_units)
        Weight matrix W. Its columns are the visible units: the numeric columns first
        (in the table's order), then each categorical column's categories (in the
        table's order, a column's categories in the order of ``categories_``).
    intercept_hidden_ : ndarray of shape (n_components,)
        Hidden biases c.
    intercept_visible_ : ndarray of shape (n_units,)
        Visible biases, ordered as the columns of ``components_``: the standardised
        means b of the numeric units when every hidden unit is off, then the
        categories' biases.
    variance_ : ndarray of shape (n_numeric,)
        Variance sigma_i^2 of each standardised numeric column given the hidden units.
    numeric_mean_ : ndarray of shape (n_numeric,)
        Mean of each numeric column in the first call's rows (the standardisation).
    numeric_scale_ : ndarray of shape (n_numeric,)
        Standard deviation of each numeric column in the first call's rows.
    is_categorical_ : ndarray of shape (n_features,), dtype=bool
        Which columns are categorical.
    categories_ : list of ndarray
        The categories of each categorical column, in the table's order: the codes
        ``arange(K)`` of a column of codes, the values of an encoded one.
    n_categories_ : ndarray of shape (n_categorical,), dtype=int
        The number of categories of each categorical column.
    learning_rate_ : float
        The learning rate used.
    average_window_ : int or None
        The averaging window used (``average_window="auto"`` resolved).
    learning_ : LearningStrategy
        The negative-phase strategy used.
    z_estimator_ : ZEstimator
        The log Z estimator that ``score_samples`` uses.
    n_iter_ : int
        Epochs trained so far.
    history_ : dict of lists
        Per-epoch training records (see :attr:`RBM.history_`).
    n_features_in_ : int
        Number of columns seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of the columns seen during ``fit``, when they are all strings.

    See Also
    --------
    GaussianRBM : Numeric columns only (with optional whitening).
    CategoricalRBM : Categorical columns of codes only.
    sklearn.ensemble.HistGradientBoostingClassifier : The same ``categorical_features``.

    Notes
    -----
    The numeric columns come first among the visible units, whatever their place in
    the table: one Gaussian and one softmax group make every draw and mean a few numpy
    calls, and the Gaussian group's log variances one slice of the training form.
    ``sample``, ``reconstruct`` and ``gibbs`` return rows in the table's column order:
    numeric values in the input's units, categorical columns as codes (indices into
    ``categories_``; ``reconstruct`` and ``sample(return_means=True)`` give each
    column's most probable category). ``free_energy`` is that of the standardised
    row. A numeric column must vary in the first call's rows (its scale divides it),
    and a numeric column of few distinct values is better declared categorical: the
    density of repeated values grows without bound as a variance shrinks, and
    training stops with an error when one collapses.

    {missing} A missing number is integrated out of the density (in the input's
    units: its column's scale leaves the row's log-Jacobian), a missing category
    (NaN, None or pandas.NA in a DataFrame) summed out; each column's mean and scale
    are those of its observed values.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from skboltz import TabularRBM
    >>> rng = np.random.default_rng(0)
    >>> colour = rng.choice(["red", "green", "blue"], size=300)
    >>> size = np.where(colour == "red", 10.0, 20.0) + rng.normal(size=300)
    >>> table = pd.DataFrame({"size": size, "colour": pd.Categorical(colour)})
    >>> model = TabularRBM(n_components=4, n_iter=50, random_state=0).fit(table)
    >>> model.is_categorical_, list(model.categories_[0])
    (array([False,  True]), ['blue', 'green', 'red'])
    >>> model.transform(table).shape
    (300, 4)
    >>> rows = pd.DataFrame({"size": [10.0, 10.0],
    ...                      "colour": pd.Categorical(["red", "blue"])})
    >>> log_p = model.score_samples(rows)  # exact, nats (a density in size)
    >>> bool(log_p[0] > log_p[1])  # a red one of size 10 is likelier
    True
    >>> model.sample(2, random_state=0).shape  # size, colour code
    (2, 2)
    >>> rows = pd.DataFrame({"size": [np.nan, 10.0],
    ...                      "colour": pd.Categorical(["red", None])})
    >>> log_p = model.score_samples(rows)  # log p(colour), log p(size): summed out
    """

    _view_class = TabularRBMView
    _structural_parameters = ("n_components", "categorical_features")
    _array_api_model = TabularRBMArrayAPI

    #: A capability meta-estimators read: it takes a pandas DataFrame as it is (its
    #: categorical columns encoded by the model itself), rather than an array of numbers.
    _reads_frames = True

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "categorical_features": ["array-like", StrOptions({"from_dtype"}), None],
        **strategy_constraints(TabularRBMView),
        "average_window": [Interval(Integral, 1, None, closed="left"),
                           StrOptions({"auto"}), None],
        **TRAINING_CONSTRAINTS,
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        **MONITORING_CONSTRAINTS,
    }

    def __init__(
        self,
        n_components=16,
        *,
        categorical_features="from_dtype",
        learning="pt",
        z_estimator="auto",
        learning_rate=0.04,
        batch_size=10,
        n_iter=200,
        momentum=0.5,
        weight_decay=1e-4,
        average_window="auto",
        validation_fraction=None,
        n_iter_no_change=None,
        tol=1e-4,
        monitor_likelihood=False,
        verbose=0,
        random_state=None,
    ):
        self.n_components = n_components
        self.categorical_features = categorical_features
        self.learning = learning
        self.z_estimator = z_estimator
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.n_iter = n_iter
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.average_window = average_window
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.monitor_likelihood = monitor_likelihood
        self.verbose = verbose
        self.random_state = random_state

    __doc__ = document_strategy_options(
        __doc__.replace("{monitoring}", MONITORING_PARAMETERS_DOC).replace(
            "{missing}", MISSING_ENTRIES_DOC), TabularRBMView, "pt"
    )

    #: What validation records on the estimator (put back if a fit fails).
    _input_attributes = ("n_features_in_", "feature_names_in_", "is_categorical_",
                         "categories_", "n_categories_")

    # -- the columns ---------------------------------------------------------------------
    def _check_rows(self, X, *, reset):
        # The table's rows as the visible units take them: the numeric columns (not
        # yet standardised), then each categorical column one-hot. The first call
        # records which columns are categorical and their categories.
        if _is_frame(X):
            validate_data(self, X, reset=reset, skip_check_array=True)
            if X.shape[0] < 1:
                raise ValueError(
                    f"Found array with 0 sample(s) (shape={X.shape}) while a minimum of "
                    "1 is required by TabularRBM.")
            if reset:
                self.is_categorical_ = self._categorical_mask(X, frame=True)
            numeric, codes = self._frame_columns(X, reset)
        else:
            X = validate_data(self, X, dtype=[np.float64, np.float32], reset=reset,
                              ensure_all_finite="allow-nan")
            if reset:
                self.is_categorical_ = self._categorical_mask(X, frame=False)
            numeric = X[:, ~self.is_categorical_]
            codes = self._codes_of_array(X[:, self.is_categorical_], reset)
        dtype = numeric.dtype if numeric is not None else np.float64
        n_numeric = 0 if numeric is None else numeric.shape[1]
        rows = np.empty((codes.shape[0], n_numeric + int(np.sum(self.n_categories_))),
                        dtype=dtype)
        if n_numeric:
            rows[:, :n_numeric] = numeric
        rows[:, n_numeric:] = one_hot(codes.astype(dtype), self.n_categories_)
        return rows

    def _categorical_mask(self, X, *, frame):
        """``categorical_features`` as a boolean mask of the columns of ``X``."""
        n_features = X.shape[1]
        spec = self.categorical_features
        if frame:
            kinds = [_column_kind(dtype) for dtype in X.dtypes]
            unsupported = [j for j, kind in enumerate(kinds) if kind is None]
            if unsupported:
                j = unsupported[0]
                raise ValueError(
                    f"TabularRBM cannot model the column {X.columns[j]!r} of dtype "
                    f"{X.dtypes.iloc[j]}: its columns must be numeric (integers or real "
                    "floats) or categorical (category, bool, object or string dtype). "
                    "Convert it (e.g. a date to numbers), or drop it."
                )
        if spec is None or (isinstance(spec, str) and not frame):
            return np.zeros(n_features, dtype=bool)
        if isinstance(spec, str):  # "from_dtype"
            return np.array([kind == "categorical" for kind in kinds], dtype=bool)
        spec = np.asarray(spec)
        mask = np.zeros(n_features, dtype=bool)
        if spec.size == 0:
            return mask
        if spec.dtype.kind == "b":
            if spec.shape != (n_features,):
                raise ValueError(
                    "categorical_features as a boolean mask must have one entry per "
                    f"column ({n_features}), got shape {spec.shape}.")
            return spec.copy()
        if spec.dtype.kind in "iu":
            outside = spec[(spec < 0) | (spec >= n_features)]
            if outside.size:
                raise ValueError(
                    f"categorical_features holds the index {int(outside[0])}, but the data "
                    f"have {n_features} columns: indices must be in [0, {n_features - 1}].")
            mask[spec] = True
            return mask
        if spec.dtype.kind in "UO" and all(isinstance(name, str) for name in spec.ravel()):
            names = getattr(self, "feature_names_in_", None)
            if names is None:
                raise ValueError(
                    "categorical_features holds column names, but the data have none: "
                    "pass a DataFrame with string column names, or give the columns' "
                    "indices or a boolean mask.")
            for name in spec.ravel():
                found = np.flatnonzero(names == name)
                if not found.size:
                    raise ValueError(
                        f"categorical_features names the column {str(name)!r}, which the "
                        f"data do not have; their columns are {list(names)}.")
                mask[found] = True
            return mask
        raise ValueError(
            "categorical_features must be None, 'from_dtype', or an array-like of bool, "
            f"int or str, got {self.categorical_features!r}.")

    def _column_name(self, j):
        names = getattr(self, "feature_names_in_", None)
        return repr(str(names[j])) if names is not None else str(j)

    def _frame_columns(self, X, reset):
        """The numeric columns of a DataFrame as an array (None without any) and the
        categorical ones as codes."""
        numeric_columns = np.flatnonzero(~self.is_categorical_)
        for j in numeric_columns:
            if _column_kind(X.dtypes.iloc[j]) != "numeric":
                raise ValueError(
                    f"TabularRBM: the column {self._column_name(j)} is numeric by "
                    f"categorical_features, but its dtype is {X.dtypes.iloc[j]}. Give it "
                    "in categorical_features (or, for 'from_dtype', as a category column), "
                    "or convert it to numbers.")
        numeric = None
        if numeric_columns.size:
            numeric = check_array(X.iloc[:, numeric_columns],
                                  dtype=[np.float64, np.float32], estimator=self,
                                  ensure_all_finite="allow-nan")
        categorical = np.flatnonzero(self.is_categorical_)
        if reset:
            self.categories_, self.n_categories_ = [], np.zeros(categorical.size, np.intp)
        codes = np.empty((X.shape[0], categorical.size))  # NaN: a missing category
        for position, j in enumerate(categorical):
            codes[:, position] = self._codes_of_column(X.iloc[:, j], position, j, reset)
        return numeric, codes

    def _codes_of_column(self, column, position, j, reset):
        """The codes of a DataFrame's categorical column (learning its categories on
        the first call), as floats: NaN where the entry is missing (NaN, None, NA)."""
        import pandas as pd

        missing = column.isna().to_numpy()
        if reset and missing.all() and not isinstance(column.dtype, pd.CategoricalDtype):
            raise ValueError(
                f"TabularRBM: the categorical column {self._column_name(j)} holds no "
                "observed value (all missing) in the rows of this first call, so it has "
                "no categories to model: drop it, give the first call rows that observe "
                "it, or make it a pandas category dtype that declares its categories.")
        if missing.any():
            codes = np.full(len(column), np.nan)
            codes[~missing] = self._codes_of_column(column[~missing], position, j, reset)
            return codes
        # Numbers are codes in a column of codes; in a column whose categories are
        # values (a category dtype's, or the first call's strings), they are values
        # looked up among them, as OrdinalEncoder does (a table read back from a CSV
        # file has the numbers 1, 2, 3 where a Categorical of them was fitted).
        if _column_kind(column.dtype) == "numeric" and (reset or self._holds_codes(position)):
            values = column.to_numpy(dtype=np.float64)
            self._check_codes(values[:, None], [j])
            if reset:
                largest = values.max(initial=0)
                check_category_count([largest], len(values), "TabularRBM",
                                     lambda position: self._column_name(j))
                n_categories = int(largest) + 1
                self.categories_.append(np.arange(n_categories))
                self.n_categories_[position] = n_categories
            self._known_codes(values, self.n_categories_[position], j)
            return values.astype(np.intp)
        if reset:
            if isinstance(column.dtype, pd.CategoricalDtype):
                categories = np.asarray(column.dtype.categories)
            else:
                try:
                    categories = np.asarray(sorted(set(column.tolist())), dtype=object)
                except TypeError:
                    raise ValueError(
                        f"TabularRBM: the categorical column {self._column_name(j)} holds "
                        "values of several types that cannot be ordered (e.g. strings and "
                        "numbers): make them one type.") from None
            self.categories_.append(categories)
            self.n_categories_[position] = len(categories)
        categories = self.categories_[position]
        codes = pd.Index(categories).get_indexer(column).astype(np.intp)
        unknown = codes < 0
        if unknown.any():
            value = column.iloc[int(np.flatnonzero(unknown)[0])]
            value = value.item() if isinstance(value, np.generic) else value
            shown = [c.item() if isinstance(c, np.generic) else c for c in categories[:10]]
            shown += ["..."] if len(categories) > 10 else []
            numbers = ("; numbers there are its categories' values, looked up in "
                       "categories_ as OrdinalEncoder does, not codes"
                       if _column_kind(column.dtype) == "numeric" else "")
            raise ValueError(
                f"TabularRBM: the column {self._column_name(j)} holds the category "
                f"{value!r}, which the model does not know (its categories: {shown}, "
                f"learnt from the first call's rows{numbers}). Fit on rows with every "
                "category, or make the column a pandas category dtype that declares them "
                "all.")
        return codes

    def _holds_codes(self, position):
        """Whether the categorical column at ``position`` (among the categorical ones)
        has its codes 0, 1, ..., K - 1 as its categories (a column of codes, or values
        that are their own codes): then a number there is read as a code."""
        categories = self.categories_[position]
        return bool(np.array_equal(categories, np.arange(len(categories))))

    def _codes_of_array(self, X, reset):
        """The codes of an array's categorical columns (numbers, NaN where missing),
        checked (learning the number of categories on the first call)."""
        columns = np.flatnonzero(self.is_categorical_)
        self._check_codes(X, columns)
        if reset:
            largest = np.fmax.reduce(X, axis=0, initial=0)  # NaN: a missing code
            check_category_count(largest, X.shape[0], "TabularRBM",
                                 lambda position: self._column_name(columns[position]))
            self.n_categories_ = largest.astype(np.intp) + 1
            self.categories_ = [np.arange(k) for k in self.n_categories_]
        for position, j in enumerate(columns):
            self._known_codes(X[:, position], self.n_categories_[position], j)
        return X

    def _check_codes(self, values, columns):
        """Refuse codes that are not non-negative integers."""
        negative = values < 0  # NaN compares False: a missing entry passes
        if negative.any():
            row, position = np.argwhere(negative)[0]
            raise ValueError(
                "Negative values in data passed to TabularRBM: the categorical column "
                f"{self._column_name(columns[position])} holds "
                f"{values[row, position]:g}, but category codes are 0, 1, ..., K - 1. "
                "Encode it first (e.g. sklearn.preprocessing.OrdinalEncoder()), or "
                "declare it numeric in categorical_features.")
        bad = (values != np.floor(values)) & ~np.isnan(values)
        if bad.any():
            row, position = np.argwhere(bad)[0]
            name = self._column_name(columns[position])
            raise ValueError(
                f"TabularRBM: the categorical column {name} holds "
                f"{values[row, position]:g}, but a categorical column of numbers "
                "holds integer category codes 0, 1, ..., K - 1. Encode it first (e.g. "
                "sklearn.preprocessing.OrdinalEncoder()), or declare it numeric in "
                "categorical_features.")

    def _known_codes(self, codes, n_categories, j):
        """Refuse the codes (checked, as floats: NaN where missing) of the column ``j``
        beyond its ``n_categories`` (compared as floats: a code of 1e20 has no
        integer)."""
        largest = float(np.fmax.reduce(codes, initial=0))
        if largest >= n_categories:
            shown = f"{int(largest)}" if largest < 2**53 else f"{largest:g}"
            raise ValueError(
                f"TabularRBM: the column {self._column_name(j)} holds the code "
                f"{shown}, but the model knows {n_categories} categories there "
                f"(codes 0 to {n_categories - 1}), learnt from the first call's rows. "
                "Encode every column with the training data's categories (e.g. one "
                "OrdinalEncoder fitted on them).")

    def _entry_columns(self):
        # the numeric columns' entries first, then the categorical ones'
        return np.concatenate([np.flatnonzero(~self.is_categorical_),
                               np.flatnonzero(self.is_categorical_)])

    @property
    def _n_numeric(self):
        return int(np.sum(~self.is_categorical_))

    # -- the standardisation of the numeric columns ------------------------------------
    def _new_input_transform(self, X, row_weights=None):
        n_numeric = self._n_numeric
        if not n_numeric:
            return None
        if X.shape[0] < 2:
            raise ValueError(
                "TabularRBM standardises each numeric column by its standard deviation in "
                f"the first call's rows, which needs at least 2 samples; got {X.shape[0]} "
                "sample. For partial_fit, make the first call a batch of representative "
                "rows.")
        numeric = X[:, :n_numeric]
        # Columns whose squares would overflow the variance's sum (magnitudes past
        # about 1e150) are standardised from an exact power-of-two rescaling.
        reach = np.fmax.reduce(np.abs(numeric), axis=0, initial=0.0)
        shrink = reach > 0.125 * np.sqrt(np.finfo(np.float64).max / X.shape[0])
        factor = np.where(shrink, np.exp2(np.frexp(reach)[1].astype(np.float64)), 1.0)
        if shrink.any():
            numeric = numeric.astype(np.float64) / factor
        scale, constant = feature_spread(numeric, row_weights)
        if constant.any():
            columns = np.flatnonzero(~self.is_categorical_)[constant]
            shown = [self._column_name(j) for j in columns[:10]]
            raise ValueError(
                f"TabularRBM cannot model the constant numeric column(s) "
                f"{', '.join(shown)}{', ...' if columns.size > 10 else ''}: every row of "
                "the first call has the same value there, which has no scale to "
                "standardise by and a density that grows without bound. Drop them, or "
                "declare them categorical (categorical_features).")
        if row_weights is not None:
            mean = feature_moments(numeric, row_weights)[0]
        else:
            mean = numeric.mean(axis=0, dtype=np.float64)
            if np.isnan(mean).any():  # missing entries: over the observed values
                mean = np.nanmean(numeric, axis=0, dtype=np.float64)
        if shrink.any():
            mean, scale = mean * factor, scale * factor
        return NumericStandardisation(mean, scale)

    def _input_transform(self):
        # From the public attributes, so that edits take effect.
        if not self.numeric_mean_.size:
            return None
        return NumericStandardisation(self.numeric_mean_, self.numeric_scale_)

    def _input_units(self):
        # The fitted table's groups: a density with numeric columns, a probability
        # (capped at 0) with categorical columns only.
        if not hasattr(self, "is_categorical_"):
            return super()._input_units()
        return self._visible_layer()

    def _visible_out(self, V):
        transform = self._input_transform()
        if transform is not None:
            V = transform.inverse_transform(V)
        n_numeric = self._n_numeric
        out = np.empty((V.shape[0], self.n_features_in_), dtype=V.dtype)
        out[:, ~self.is_categorical_] = V[:, :n_numeric]
        out[:, self.is_categorical_] = most_probable_codes(V[:, n_numeric:],
                                                           self.n_categories_)
        return out

    # -- the visible groups and the layout -------------------------------------------------
    def _visible_layer(self, bias=None, variance=None):
        """The visible groups: a Gaussian group of the numeric columns (its log
        variances, or ``variance``), then the softmax groups; the parameters bound to
        ``bias`` (zeros by default)."""
        n_numeric = self._n_numeric
        sizes = tuple(int(k) for k in self.n_categories_)
        groups = []
        if n_numeric:
            scale = ({"log_variance": np.zeros(n_numeric)} if variance is None
                     else {"variance": variance})
            groups.append(GaussianUnits(np.zeros(n_numeric), **scale))
        if sizes:
            groups.append(SoftmaxUnits(np.zeros(sum(sizes)), sizes))
        return LayerGroups(groups, bias)

    @property
    def _layout(self):
        """The blocks of the packed parameters: a row of the numeric columns' log
        variances (when there are any) above W."""
        return RestrictedLayout.of_layer(self._visible_layer())

    def _training_form_of(self, params, state):
        visible = self._visible_layer()
        return RestrictedTrainingForm(params, visible, _BINARY, TabularRBMView,
                                      RestrictedLayout.of_layer(visible))

    # -- training ---------------------------------------------------------------------
    def _new_training_state(self, X, y, learning, rng, row_weights=None):
        # missing values at their columns' (weighted) means
        X = self._with_missing_filled(X, weights=row_weights)
        visible_means = column_means(X, row_weights)
        layout, n_numeric = self._layout, self._n_numeric
        extra = {"log_variance": np.zeros(n_numeric)} if n_numeric else {}
        # the visible biases of independent units at the data's means (the numeric
        # means, the categories' log shares), unit variances, small random weights
        params = layout.pack(
            rng.normal(0.0, 0.01, size=(self.n_components, X.shape[1])),
            self._visible_layer().base_bias_from_rates(visible_means),
            np.zeros(self.n_components), X.dtype, **extra)
        form = self._training_form_of(params, None)
        return self._fresh_state(TabularTrainingState, form, X, learning, rng,
                                 visible_means=visible_means,
                                 data_rates=self._base_rates(form.view(), X, visible_means,
                                                             row_weights))

    @staticmethod
    def _base_rates(view, X, visible_means, weights=None):
        """The rates log Z samplers start their base model from: the hidden units' on
        the data when they are the samplers' states (numeric columns), else the
        visible units' means."""
        if view.sampler_state == "hidden":
            return hidden_rates(view, X, weights)
        return visible_means

    def _training_params(self, dtype):
        extra = {}
        if self._n_numeric:
            log_variance = np.log(self.variance_)
            # variance_ = exp(z) does not give z back exactly: unless edited, continue
            # from the exact log variances it was published from.
            published = self._training_state.published_log_variance
            if published is not None and np.array_equal(
                np.exp(published).astype(dtype), self.variance_.astype(dtype)
            ):
                log_variance = published
            extra["log_variance"] = log_variance
        return self._layout.pack(self.components_, self.intercept_visible_,
                                 self.intercept_hidden_, dtype, **extra)

    def _parameter_update(self, model, params, state, rule):
        # The log variances take the step sigma^2 <- sigma^2 (1 + step) (see
        # GaussianRBM), only on the numeric columns' block; the training form's
        # derived arrays follow each step.
        layout = self._layout
        if not layout.extra:
            return super()._parameter_update(model, params, state, rule)
        return super()._parameter_update(
            model, params, state, rule, additive=layout.rbm,
            log_scale=(layout.log_variance, MAX_VARIANCE_DECREASE),
            after_step=lambda update: model.form.refresh(),
        )

    def _train_epoch(self, X, y, state, learning):
        super()._train_epoch(X, y, state, learning)
        X = self._training_rows(X, state)  # rows with missing entries: their completions
        if self._n_numeric:
            self._check_numeric_units(state, X)
        view = self._model_view_of(state)
        state.data_rates = self._base_rates(view, X, state.visible_means,
                                            state.row_weights)

    def _check_numeric_units(self, state, X):
        """Stop a fit whose Gaussian units ran away (visible means or deviations
        RUNAWAY_SCALE standard deviations from the data) or whose variances collapsed."""
        layout, n_numeric = self._layout, self._n_numeric
        iterate = state.iterate.astype(np.float64)
        numeric = np.s_[:n_numeric]
        reach = (np.abs(iterate[layout.visible_bias][numeric])
                 + np.abs(iterate[layout.weights][:, numeric]).sum(axis=0))
        log_variance = iterate[layout.log_variance]
        spread = max(reach.max(initial=0), np.exp(0.5 * log_variance.max(initial=0)))
        columns = np.flatnonzero(~self.is_categorical_)
        if spread > RUNAWAY_SCALE:
            hint = self._divergence_check_class(self).hint(X, state)
            raise TrainingDivergedError(
                f"TabularRBM diverged in epoch {state.n_iter + 1}: the model put numeric "
                f"values {spread:.3g} standard deviations away from the data. {hint} "
                "The estimator was left as it was before this call.")
        collapsed = columns[np.exp(log_variance) < MIN_VARIANCE]
        if collapsed.size:
            raise self._collapsed_variance_error(collapsed, state.n_iter + 1)

    def _collapsed_variance_error(self, columns, epoch):
        """The error of numeric columns (their positions) whose variance collapsed."""
        shown = ", ".join(self._column_name(j) for j in columns[:5])
        return TrainingDivergedError(
            f"TabularRBM: the variance of the numeric column(s) {shown} collapsed "
            f"towards zero (below {MIN_VARIANCE:g} of the standardised column) in "
            f"epoch {epoch}. Many rows share the same values there, where "
            "a Gaussian's density grows without bound as its variance shrinks: "
            "declare a column of few distinct values categorical "
            "(categorical_features), or add a little noise. The estimator was left "
            "as it was before this call.")

    def _fitted_attributes(self, state):
        attributes = super()._fitted_attributes(state)
        layout, n_numeric = self._layout, self._n_numeric
        transform = state.input_transform
        if n_numeric:
            log_variance = state.params[layout.log_variance]
            state.published_log_variance = log_variance.copy()
            variance = np.exp(log_variance)
        else:
            variance = np.zeros(0, dtype=state.params.dtype)
        attributes.update(
            variance_=variance,
            numeric_mean_=np.zeros(0) if transform is None else transform.mean,
            numeric_scale_=np.zeros(0) if transform is None else transform.scale,
        )
        return attributes

    def _model_view_of(self, state):
        if state is not None:
            return self._training_form_of(state.params, state).view()
        visible = self._visible_layer(self.intercept_visible_,
                                      self.variance_ if self._n_numeric else None)
        return TabularRBMView.of_layers(self.components_, visible,
                                        BinaryUnits(self.intercept_hidden_))

    def _sampling_start_of(self, state):
        return state.visible_means  # the numeric means and the categories' shares

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        spec = self.categorical_features
        # columns named by position hold codes (non-negative integers)
        tags.input_tags.categorical = not (spec is None or isinstance(spec, str))
        return tags


__all__ = ["NumericStandardisation", "TabularRBM", "TabularRBMView"]
