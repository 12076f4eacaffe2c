"""Categorical RBM: softmax visible groups (one per column of category codes), binary hidden units."""

from numbers import Integral

import numpy as np
from sklearn.utils.validation import check_non_negative, validate_data

from ..utils._array_api import ArrayAPIMixin, fitted_namespace
from ._array_api_tables import CategoricalRBMArrayAPI
from ._layered_rbm import LayeredRBM, layered_constraints
from ..units._layers import BinaryUnits, SoftmaxUnits, most_probable_codes
from ..core._monitoring import MONITORING_PARAMETERS_DOC
from ._restricted import MISSING_ENTRIES_DOC
from ..models._restricted_energy import RestrictedView
from ..utils._sklearn import Interval
from ..core._strategies import document_strategy_options
from ..learning import PCD

#: Persistent chains of ``learning="pcd"`` (with a ``batch_size`` up to it).
DEFAULT_N_CHAINS = 100

#: A column of codes may have at most max(MIN_CATEGORY_LIMIT, CATEGORIES_PER_ROW *
#: n_rows) categories (its largest code + 1), n_rows the first call's rows: a code far
#: beyond what the rows can show is a mistake (an identifier, a measure), and each
#: category is a visible unit (a code of 1e9 asked numpy for 447 GiB of one-hot rows).
MIN_CATEGORY_LIMIT = 1000
CATEGORIES_PER_ROW = 10


def check_category_count(largest, n_rows, estimator, column_name, declared=None):
    """Refuse the columns whose largest code (``largest``, floats, one per column)
    makes more categories than :data:`MIN_CATEGORY_LIMIT` and
    :data:`CATEGORIES_PER_ROW` allow for ``n_rows`` rows (or than ``declared``, the
    categories a user declared per column, when more), before any one-hot row is
    made; ``column_name(i)`` names column i in the message."""
    largest = np.asarray(largest, dtype=np.float64)
    allowed = max(MIN_CATEGORY_LIMIT, CATEGORIES_PER_ROW * n_rows)
    limit = np.full(largest.shape, float(allowed))
    if declared is not None:
        limit = np.maximum(limit, declared)
    too_many = largest >= limit  # the code K - 1 makes K categories
    if not too_many.any():
        return
    i = int(np.flatnonzero(too_many)[0])
    code = largest[i]
    shown, count = ((f"{int(code)}", f"{int(code) + 1:,}") if code < 2**53
                    else (f"{code:g}", f"{code:g}"))
    declare = " (more if min_categories declares them)" if declared is not None else ""
    raise ValueError(
        f"{estimator}: the column {column_name(i)} holds the code {shown}, which would "
        f"make {count} categories there (a visible unit each), far more than the "
        f"{n_rows} rows of the first call can show: a column of codes may have at most "
        f"max({MIN_CATEGORY_LIMIT}, {CATEGORIES_PER_ROW} x rows) = {allowed:,} "
        f"categories{declare}. "
        "Category codes are 0, 1, ..., K - 1, as sklearn.preprocessing.OrdinalEncoder "
        "makes them: encode the column first, or, if it holds numbers rather than "
        "categories, model it as numeric.")


class CategoricalRBMView(RestrictedView):
    """Read-only view of a categorical RBM: softmax visible groups, binary hidden units.

    The restricted model whose visible layer is groups of one-of-K units
    (:class:`~skboltz.CategoricalRBM`: one group per column, one unit per category).
    Sampler states (for log Z) are visible vectors, one-hot in each group; exact
    enumeration lists the states of the layer with fewer of them.

    Parameters
    ----------
    weights : ndarray of shape (n_hidden, n_visible)
        Weights W (``CategoricalRBM.components_``), one column per category.
    visible : SoftmaxUnits
        The visible groups and their biases.
    hidden : BinaryUnits
        The hidden units and their biases.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.partition import Exact
    >>> from skboltz.views import CategoricalRBMView, SoftmaxUnits, BinaryUnits
    >>> view = CategoricalRBMView(np.zeros((2, 5)), SoftmaxUnits(np.zeros(5), (2, 3)),
    ...                           BinaryUnits(np.zeros(2)))
    >>> bool(np.isclose(Exact().estimate(view).value, np.log(2 * 3 * 4)))
    True
    """

    visible_units = SoftmaxUnits
    hidden_units = BinaryUnits


def one_hot(codes, n_categories):
    """One-hot rows of the integer-valued ``codes`` (a group of ``n_categories[i]``
    columns per column i), in the dtype of ``codes``; a code beyond its column's
    categories is refused. A missing code (NaN) leaves its whole group NaN."""
    missing = np.isnan(codes)
    if missing.any():
        rows = one_hot(np.where(missing, 0, codes), n_categories)
        rows[np.repeat(missing, n_categories, axis=1)] = np.nan
        return rows
    unknown = codes >= n_categories
    if unknown.any():
        row, column = np.argwhere(unknown)[0]
        raise ValueError(
            f"CategoricalRBM: column {column} holds the code {codes[row, column]:g}, but "
            f"the model knows {n_categories[column]} categories there (codes 0 to "
            f"{n_categories[column] - 1}), learnt from the first call's rows. Encode "
            "every column with the training data's categories (e.g. one OrdinalEncoder "
            "fitted on them), or give more categories with min_categories."
        )
    offsets = np.concatenate([[0], np.cumsum(n_categories)[:-1]]).astype(np.intp)
    rows = np.zeros((codes.shape[0], int(np.sum(n_categories))), dtype=codes.dtype)
    rows[np.arange(codes.shape[0])[:, None], offsets + codes.astype(np.intp)] = 1
    return rows


class CategoricalRBM(ArrayAPIMixin, LayeredRBM):
    """Restricted Boltzmann machine of categorical columns, with a true log-likelihood.

    Each column of ``X`` holds integer category codes (0, 1, ..., K - 1, as
    :class:`~sklearn.preprocessing.OrdinalEncoder` makes them) and is one softmax
    group of K visible units: exactly one is on, the column's category. The groups
    couple to ``n_components`` binary hidden units,

        p(x, h) proportional to exp(sum_i b_i[x_i] + sum_i W_i[:, x_i] . h + c^T h),

    so the model never puts probability on impossible rows (two categories of a
    column at once), as independent binary units on one-hot columns do, and
    ``score_samples`` is log p(x) of the row of codes in nats: exact by enumerating
    the smaller layer (``2 ** n_components`` hidden states, or the product of the
    columns' categories), or estimated by annealed importance sampling with error
    bars. ``transform`` returns P(h = 1 | x), features for a classifier.

    A softmax visible layer is one layer class (:class:`~skboltz.views.SoftmaxUnits`);
    this estimator is the restricted model over it, trained by the same learning
    strategies as :class:`RBM` (CD, PCD, parallel tempering).

    Parameters
    ----------
    n_components : int, default=64
        Number of hidden units.
    learning : {learning_options} or RBMLearningStrategy, default="pcd"
        How the negative-phase statistics are estimated: persistent contrastive
        divergence (:class:`~skboltz.learning.PCD`) with 100 persistent chains
        (with a ``batch_size`` above 100, one per minibatch row, never more than the
        rows) unless its ``n_chains`` says otherwise, CD-k or parallel
        tempering (``batch_size`` chains per temperature), or a strategy object
        (cloned). With ``negative_visible="auto"`` the negative statistics use the
        categories the chains draw (the category probabilities given the chains'
        hidden states, ``negative_visible="mean"``, lost 0.4 to 3.7 nats per row
        held out in ``benchmarks/bench_tabular.py``). ``learning_`` shows the
        number of chains used (None: one per minibatch row).
    z_estimator : {z_estimator_options} or ZEstimator, default="auto"
        How log Z is found for ``score_samples``: "auto" enumerates exactly when the
        smaller layer has at most 2**20 states, and otherwise uses annealed
        importance sampling from independent columns at the data's category shares.
        Recorded in ``z_estimator_``.
    learning_rate : float, default=0.1
        Step size of the updates (times the mean minibatch gradient).
    batch_size : int, default=10
        Rows per minibatch; the minibatches are reshuffled every epoch.
    n_iter : int, default=50
        Number of epochs (passes over the data) for ``fit``.
    momentum : float or (float, float), default=0.0
        Momentum of the updates, in moving-average form (see :class:`RBM`).
    weight_decay : float, default=1e-3
        L2 penalty on the weights (not the biases).
    average_window : int, "auto" or None, default="auto"
        Iterate averaging over about this many updates (see :class:`RBM`); "auto":
        a fifth of the updates of a fit, ``n_iter * ceil(n_rows / batch_size) // 5``
        with ``n_rows`` the training rows of the first call (of ``fit``, or of the
        first ``partial_fit``), at least 100 (``average_window_``); None publishes
        the last update's parameters. The defaults, 100 persistent chains and this
        window, gained 0.007 to 0.25 nats per row held out over ``batch_size``
        chains and a window of 100 updates, on each of the 9 tables of
        ``benchmarks/bench_tabular.py``, at about twice the fit time.
    min_categories : int, array-like of shape (n_features,) or None, default=None
        The least number of categories of each column (as in
        :class:`~sklearn.naive_bayes.CategoricalNB`): the first call learns
        ``max(largest code + 1, min_categories)``. Give it when a category may be
        missing from the training rows (or from a first ``partial_fit`` call) but
        appear later; a code beyond the number of categories is refused.
    {monitoring}
    verbose : int, default=0
        Print a progress line per epoch when positive.
    random_state : int, RandomState instance or None, default=None
        Seeds initialisation, minibatch order, sampling and the log Z estimate.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_units)
        Weight matrix W: one column per category, the columns' groups side by side
        (``n_units`` is the total number of categories).
    intercept_hidden_ : ndarray of shape (n_components,)
        Hidden biases c.
    intercept_visible_ : ndarray of shape (n_units,)
        Category biases b, group after group.
    n_categories_ : ndarray of shape (n_features,), dtype=int
        The number of categories of each column.
    categories_ : list of ndarray
        The codes of each column's categories (``arange(n_categories_[i])``).
    learning_rate_ : float
        The learning rate used.
    average_window_ : int or None
        The averaging window used (``average_window="auto"`` resolved).
    learning_ : LearningStrategy
        The negative-phase strategy used (with its number of chains).
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
    RBM : Binary (or [0, 1]) columns.
    sklearn.naive_bayes.CategoricalNB : Independent categorical columns given a class.

    Notes
    -----
    ``sample`` returns rows of codes; ``reconstruct`` and ``sample(return_means=True)``
    give each column's most probable category under the conditional probabilities.
    The starting values are Hinton's, "A Practical Guide to Training Restricted
    Boltzmann Machines" (2010), for softmax units: weights N(0, 0.01), hidden biases
    0, each category's bias the log of its share of the training rows. The softmax
    visible units of this model are those of Salakhutdinov, Mnih & Hinton,
    "Restricted Boltzmann machines for collaborative filtering" (ICML 2007), one group
    per column.

    {missing}

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz import CategoricalRBM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 3, size=(200, 4))
    >>> X[:, 1] = X[:, 0]  # two columns that always agree
    >>> rbm = CategoricalRBM(n_components=4, random_state=0).fit(X)
    >>> rbm.n_categories_
    array([3, 3, 3, 3])
    >>> rbm.transform(X).shape
    (200, 4)
    >>> log_p = rbm.score_samples([[0, 0, 1, 2], [0, 2, 1, 2]])  # exact, nats
    >>> bool(log_p[0] > log_p[1])  # the columns that agree are likelier
    True
    >>> rbm.score_samples([[0, np.nan, 1, 2]])  # a missing code: summed out
    array([...])
    """

    _view_class = CategoricalRBMView
    _structural_parameters = ("n_components", "min_categories")
    _array_api_model = CategoricalRBMArrayAPI

    _parameter_constraints = {
        **layered_constraints(CategoricalRBMView),
        "min_categories": [Interval(Integral, 1, None, closed="left"), "array-like", None],
    }

    def __init__(
        self,
        n_components=64,
        *,
        learning="pcd",
        z_estimator="auto",
        learning_rate=0.1,
        batch_size=10,
        n_iter=50,
        momentum=0.0,
        weight_decay=1e-3,
        average_window="auto",
        min_categories=None,
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
        self.min_categories = min_categories
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.monitor_likelihood = monitor_likelihood
        self.verbose = verbose
        self.random_state = random_state

    __doc__ = document_strategy_options(
        __doc__.replace("{monitoring}", MONITORING_PARAMETERS_DOC).replace(
            "{missing}", MISSING_ENTRIES_DOC), CategoricalRBMView, "pcd",
    )

    #: What validation records on the estimator (put back if a fit fails).
    _input_attributes = ("n_features_in_", "feature_names_in_", "n_categories_")

    # -- the columns of codes ----------------------------------------------------------
    def _check_rows(self, X, *, reset):
        # The rows of codes, checked, as one-hot rows (the model's visible units); the
        # first call records the number of categories of each column.
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=reset,
                          ensure_all_finite="allow-nan")
        self._check_codes(X)
        if reset:
            self.n_categories_ = self._categories_of(X)
        return one_hot(X, self.n_categories_)

    def _check_codes(self, X):
        """Refuse rows (validated, NumPy) that are not non-negative integer codes (NaN,
        a missing code, passes)."""
        if (X < 0).any():  # NaN (a missing code) compares False
            check_non_negative(np.where(X < 0, X, 0), type(self).__name__)
        fractional = X != np.floor(X)
        fractional &= ~np.isnan(X)
        if fractional.any():
            row, column = np.argwhere(fractional)[0]
            raise ValueError(
                f"CategoricalRBM takes integer category codes; column {column} holds "
                f"{X[row, column]:g}. Encode each column first, e.g. with "
                "sklearn.preprocessing.OrdinalEncoder() in a Pipeline."
            )

    def _default_n_chains(self, learning):
        # 100 persistent chains (not batch_size = 10) gained on every table of
        # benchmarks/bench_tabular.py; a larger batch_size keeps PCD's own default, a
        # chain per minibatch row, never more than the rows (batch_size=10**7 on 80
        # rows ran 10**7 chains); parallel tempering keeps batch_size per temperature
        if isinstance(learning, PCD) and self.batch_size <= DEFAULT_N_CHAINS:
            return DEFAULT_N_CHAINS
        return None

    def _categories_of(self, X):
        """The number of categories of each column of the first call's codes."""
        largest = np.fmax.reduce(X, axis=0, initial=0)
        if self.min_categories is None:
            check_category_count(largest, X.shape[0], "CategoricalRBM", str)
            return largest.astype(np.intp) + 1
        least = np.asarray(self.min_categories)
        if least.ndim > 1 or (least.ndim == 1 and least.shape != (X.shape[1],)):
            raise ValueError(
                "min_categories must be an int or hold one int per column "
                f"({X.shape[1]}), got shape {least.shape}."
            )
        if not np.issubdtype(least.dtype, np.integer) or (least < 1).any():
            raise ValueError(
                f"min_categories must hold positive integers, got {self.min_categories!r}."
            )
        check_category_count(largest, X.shape[0], "CategoricalRBM", str, declared=least)
        return np.maximum(largest.astype(np.intp) + 1, least)

    def _visible_out(self, V):
        return most_probable_codes(V, self.n_categories_)

    @property
    def categories_(self):
        """The codes of each column's categories (``arange(n_categories_[i])``)."""
        if fitted_namespace(self) is not None:  # in the namespace of the fit's input
            return self._array_api_model.categories(self)
        return [np.arange(k) for k in self.n_categories_]

    def _visible_layer(self):
        """The visible layer's kind: a softmax group per column (parameters bound
        later)."""
        sizes = tuple(int(k) for k in self.n_categories_)
        return SoftmaxUnits(np.zeros(sum(sizes)), sizes)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.input_tags.categorical = True
        tags.input_tags.positive_only = True
        return tags


__all__ = ["CategoricalRBM", "CategoricalRBMView"]
