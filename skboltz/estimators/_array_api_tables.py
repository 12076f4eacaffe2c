"""CategoricalRBM and TabularRBM on any array namespace (array API dispatch; see
:mod:`skboltz.utils._array_api`).

The tables' part of the generic restricted path (:mod:`skboltz.estimators._array_api_restricted`):
rows of category codes (and, for :class:`~skboltz.TabularRBM`, numeric columns) as the
visible units, softmax groups (beside a Gaussian group of the standardised numeric
columns), and the model's rows back as the user's columns.

What a first fit learns of the columns (their categories, which are categorical, the
numeric columns' mean and scale) is found on a host NumPy copy of its rows, once, by
the NumPy path's own methods (so its checks and errors are the same); the estimator
records them during that fit as the NumPy path does, and the fit publishes them as
arrays of the input's namespace on its device. Every other step (the codes' checks of
later calls, the one-hot rows, the standardisation, the model, the codes out) runs in
the namespace. A host copy of the rows is made again only to say what is wrong with
rows that fail the checks.

Not served there (refused with an error that says to pass NumPy arrays): missing
entries (NaN), sample weights, pandas DataFrames (which are not array API arrays: they
take the NumPy path, dispatch or not), and the settings the generic path refuses
(parallel tempering, TabularRBM's default learning, among them).
"""

from dataclasses import dataclass

import numpy as np
from sklearn.utils.validation import validate_data

from ..utils._array_api import dispatched_namespace, refuse_missing, score_dtype, to_numpy
from ._array_api_restricted import WEIGHTS, VISIBLE_BIAS, RestrictedArrayAPI
from ._gaussian_rbm import (
    MAX_VARIANCE_DECREASE,
    MIN_VARIANCE,
    RUNAWAY_SCALE,
    bounded_rows,
    value_bound,
)
from ..units._layers import GaussianUnits, LayerGroups, SoftmaxUnits, most_probable_codes
from ..exceptions import TrainingDivergedError

#: The Gaussian group's learnt parameter (the log variances of the numeric columns).
LOG_VARIANCE = "log_variance"

#: Where a state keeps its table's columns (:class:`TableColumns`) and the inputs'
#: attributes a fit publishes (arrays of the namespace, by name).
COLUMNS, INPUTS = "table_columns", "table_inputs"


@dataclass(frozen=True)
class TableColumns:
    """The columns a first fit found (host numbers): each categorical column's number
    of categories, and the positions of the numeric and the categorical columns (the
    visible units are the numeric columns, then the categorical ones' groups)."""

    n_categories: tuple
    numeric: tuple
    categorical: tuple


class _OnDevice:
    """What the rows of a table need on one device, made once per table, namespace
    and device: the column indices, the visible layer whose index arrays every layer
    bound to parameters shares (:meth:`SoftmaxUnits.replace`), the positions of the
    user's columns among the visible units' blocks, and the codes' limits by dtype."""

    def __init__(self, columns, xp, device):
        self.xp = xp
        index = {"device": device, "dtype": xp.int64}
        self.numeric = xp.asarray(np.asarray(columns.numeric, dtype=np.int64), **index)
        self.categorical = xp.asarray(np.asarray(columns.categorical, dtype=np.int64),
                                      **index)
        # block order (numeric, categorical) -> the user's order
        order = np.asarray(columns.numeric + columns.categorical, dtype=np.int64)
        self.user_order = xp.asarray(np.argsort(order), **index)
        self.n_numeric = len(columns.numeric)
        self.n_categories = np.asarray(columns.n_categories, dtype=np.float64)
        self.softmax = None
        groups = []
        if self.n_numeric:
            zeros = xp.zeros(self.n_numeric, dtype=xp.float32, device=device)
            groups.append(GaussianUnits(zeros, log_variance=zeros))
        if columns.n_categories:
            n_units = int(sum(columns.n_categories))
            softmax = SoftmaxUnits(np.zeros(n_units), columns.n_categories).replace(
                bias=xp.zeros(n_units, dtype=xp.float32, device=device))
            softmax._xp_indices(xp, device)  # made once, shared by its replacements
            self.softmax = softmax
            # each unit's group and its category within the group, on the device
            group = np.repeat(np.arange(len(columns.n_categories)), columns.n_categories)
            starts = np.cumsum([0, *columns.n_categories[:-1]])
            self.unit_group = xp.asarray(group, device=device)
            self.unit_category = xp.asarray(np.arange(n_units) - starts[group], device=device)
            groups.append(softmax)
        self.groups = LayerGroups(groups)
        self._limits = {}

    def one_hot(self, codes):
        """The softmax units' one-hot rows of rows of category codes (each below its
        column's number of categories), in the dtype of ``codes``."""
        xp = self.xp
        same_category = (xp.take(codes, self.unit_group, axis=1)
                         == xp.astype(self.unit_category, codes.dtype))
        return xp.astype(same_category, codes.dtype)

    def limits(self, dtype, device):
        """Each categorical column's number of categories, in ``dtype``."""
        key = str(dtype)
        if key not in self._limits:
            self._limits[key] = self.xp.asarray(self.n_categories, dtype=dtype,
                                                device=device)
        return self._limits[key]


_ON_DEVICE = {}
#: Tables kept on devices at once (the least recently made are dropped beyond it).
ON_DEVICE_CACHE_SIZE = 32


def on_device(columns, xp, device):
    """The :class:`_OnDevice` of a table's ``columns`` in namespace ``xp`` on
    ``device`` (cached)."""
    key = (columns, xp.__name__, str(device))
    found = _ON_DEVICE.get(key)
    if found is None:
        if len(_ON_DEVICE) >= ON_DEVICE_CACHE_SIZE:
            _ON_DEVICE.pop(next(iter(_ON_DEVICE)))
        found = _ON_DEVICE[key] = _OnDevice(columns, xp, device)
    return found


class _TableArrayAPI(RestrictedArrayAPI):
    """What the adapters of the two tables' estimators share: the columns' checks,
    the one-hot rows and the softmax groups."""

    # -- an estimator's own ---------------------------------------------------------
    @classmethod
    def learn_columns(cls, estimator, host, state):
        """Check a first fit's rows (validated, on the host), record what the NumPy
        path records of them on the estimator, and return their
        :class:`TableColumns` and the inputs' attributes to publish (arrays of the
        state's namespace)."""
        raise NotImplementedError

    @classmethod
    def refuse_rows(cls, estimator, host, columns):
        """Raise the NumPy path's error about rows (on the host) that fail the
        checks."""
        raise NotImplementedError

    @classmethod
    def rows_of(cls, estimator, X, device_table, numeric, codes, state, reset):
        """The visible rows of validated, checked rows ``X``."""
        raise NotImplementedError

    # -- shared -------------------------------------------------------------------------
    @classmethod
    def columns(cls, estimator, state=None):
        state = estimator._training_state if state is None else state
        return state.extra[COLUMNS]

    @classmethod
    def device_table(cls, estimator, state=None):
        state = estimator._training_state if state is None else state
        return on_device(state.extra[COLUMNS], state.xp, state.device)

    @classmethod
    def visible_rows(cls, estimator, X, *, reset, state=None):
        xp, device = dispatched_namespace(X)
        X = validate_data(estimator, X, dtype=[xp.float64, xp.float32], reset=reset,
                          ensure_all_finite="allow-nan")
        if reset:  # once per fit: the columns learnt on a host copy
            host = to_numpy(X, xp)
            if np.isnan(host).any():
                refuse_missing(estimator)
            columns, inputs = cls.learn_columns(estimator, host, state)
            state.extra[COLUMNS], state.extra[INPUTS] = columns, inputs
        else:
            columns = cls.columns(estimator, state)
        table = on_device(columns, xp, device)
        numeric = xp.take(X, table.numeric, axis=1) if table.n_numeric else None
        codes = xp.take(X, table.categorical, axis=1) if table.softmax else None
        if not reset:  # one test (one transfer) for every check
            failed = xp.any(xp.isnan(X))
            if codes is not None:
                wrong = xp.logical_or(codes < 0, codes != xp.floor(codes))
                wrong = xp.logical_or(wrong, codes >= table.limits(X.dtype, device))
                failed = xp.logical_or(failed, xp.any(wrong))
            if bool(failed):
                host = to_numpy(X, xp)
                if np.isnan(host).any():
                    refuse_missing(estimator)
                cls.refuse_rows(estimator, host, columns)
        return cls.rows_of(estimator, X, table, numeric, codes, state, reset)

    @classmethod
    def starting_visible_bias(cls, estimator, visible_rates):
        # The NumPy path's layer: in a first fit the estimator holds the columns it
        # learnt as the NumPy path records them (host arrays) until the fit publishes.
        return estimator._visible_layer().base_bias_from_rates(visible_rates)

    @classmethod
    def fitted_attributes(cls, estimator, params, state):
        return {**super().fitted_attributes(estimator, params, state),
                "average_window_": state.extra["average_window"],
                **state.extra[INPUTS]}

    @classmethod
    def codes_out(cls, estimator, V, table):
        """Each group's most probable category in the softmax units' rows ``V``, as
        codes in the dtype of ``V``."""
        return most_probable_codes(V, table.softmax.sizes)


def _published_categories(xp, device, n_categories):
    """``n_categories_`` and ``categories_`` as arrays of ``xp`` on ``device``."""
    return {"n_categories_": xp.asarray(np.asarray(n_categories, dtype=np.int64),
                                        device=device),
            "categories_": [xp.arange(int(k), device=device) for k in n_categories]}


class CategoricalRBMArrayAPI(_TableArrayAPI):
    """The namespace-generic methods of :class:`~skboltz.CategoricalRBM`: softmax
    groups, one per column of codes."""

    @classmethod
    def learn_columns(cls, estimator, host, state):
        estimator._check_codes(host)
        n_categories = estimator._categories_of(host)
        estimator.n_categories_ = n_categories
        columns = TableColumns(tuple(int(k) for k in n_categories), (),
                               tuple(range(host.shape[1])))
        inputs = _published_categories(state.xp, state.device, n_categories)
        del inputs["categories_"]  # a property of the estimator (from the state)
        return columns, inputs

    @classmethod
    def refuse_rows(cls, estimator, host, columns):
        from ._categorical_rbm import one_hot  # (that module imports this one)

        estimator._check_codes(host)
        one_hot(host, np.asarray(columns.n_categories))  # raises on an unknown code

    @classmethod
    def rows_of(cls, estimator, X, table, numeric, codes, state, reset):
        return table.one_hot(codes)

    @classmethod
    def visible_layer(cls, estimator, params, state=None):
        return cls.device_table(estimator, state).softmax.replace(bias=params[VISIBLE_BIAS])

    @classmethod
    def visible_out(cls, estimator, V):
        return cls.codes_out(estimator, V, cls.device_table(estimator))

    @classmethod
    def categories(cls, estimator):
        """``categories_`` of a model fitted under dispatch."""
        state = estimator._training_state
        return [state.xp.arange(k, device=state.device)
                for k in cls.columns(estimator).n_categories]


class TabularRBMArrayAPI(_TableArrayAPI):
    """The namespace-generic methods of :class:`~skboltz.TabularRBM` on arrays (its
    categorical columns given by position or mask): a Gaussian group of the numeric
    columns, standardised by the first call's mean and scale, with learnt log
    variances, beside softmax groups of the categorical ones."""

    @classmethod
    def learn_columns(cls, estimator, host, state):
        mask = estimator._categorical_mask(host, frame=False)
        estimator.is_categorical_ = mask
        estimator._codes_of_array(host[:, mask], reset=True)  # checks, categories
        # the numeric block laid out as in the NumPy path's rows (numeric columns,
        # then the units of the categories), so that its mean is summed alike
        rows = np.zeros((host.shape[0], int((~mask).sum() + estimator.n_categories_.sum())),
                        dtype=host.dtype)
        rows[:, :int((~mask).sum())] = host[:, ~mask]
        transform = estimator._new_input_transform(rows)
        columns = TableColumns(tuple(int(k) for k in estimator.n_categories_),
                               tuple(int(j) for j in np.flatnonzero(~mask)),
                               tuple(int(j) for j in np.flatnonzero(mask)))
        xp, device = state.xp, state.device
        statistics = {"dtype": score_dtype(xp, device), "device": device}
        empty = np.zeros(0)
        inputs = {
            **_published_categories(xp, device, estimator.n_categories_),
            "is_categorical_": xp.asarray(mask, device=device),
            "numeric_mean_": xp.asarray(empty if transform is None else transform.mean,
                                        **statistics),
            "numeric_scale_": xp.asarray(
                empty if transform is None else transform.scale, **statistics),
        }
        return columns, inputs

    @classmethod
    def refuse_rows(cls, estimator, host, columns):
        categorical = np.asarray(columns.categorical, dtype=np.intp)
        codes = host[:, categorical]
        estimator._check_codes(codes, categorical)
        for position, j in enumerate(categorical):
            estimator._known_codes(codes[:, position], columns.n_categories[position], j)

    @classmethod
    def standardisation(cls, estimator, state, reset):
        """The numeric columns' mean and scale (the first call's during it, else the
        published ones, so that edits take effect as on the NumPy path)."""
        if reset:
            inputs = state.extra[INPUTS]
            return inputs["numeric_mean_"], inputs["numeric_scale_"]
        return estimator.numeric_mean_, estimator.numeric_scale_

    @classmethod
    def rows_of(cls, estimator, X, table, numeric, codes, state, reset):
        xp, parts = table.xp, []
        if numeric is not None:
            mean, scale = cls.standardisation(estimator, state, reset)
            Z = (numeric - xp.astype(mean, X.dtype)) / xp.astype(scale, X.dtype)
            bound = value_bound(np.float32 if X.dtype == xp.float32 else np.float64)
            if float(xp.max(xp.abs(Z))) > bound:  # rare: warn and clip as NumPy does
                Z = xp.asarray(bounded_rows(to_numpy(Z, xp), "standardised values"),
                               device=X.device)
            parts.append(Z)
        if codes is not None:
            parts.append(table.one_hot(codes))
        return parts[0] if len(parts) == 1 else xp.concat(parts, axis=1)

    @classmethod
    def starting_extra_params(cls, estimator, V, state):
        n_numeric = len(cls.columns(estimator, state).numeric)
        if not n_numeric:
            return {}
        return {LOG_VARIANCE: state.xp.zeros(n_numeric, dtype=V.dtype,
                                             device=state.device)}

    @classmethod
    def visible_layer(cls, estimator, params, state=None):
        groups = cls.device_table(estimator, state).groups
        if LOG_VARIANCE in params:
            return groups.replace(bias=params[VISIBLE_BIAS],
                                  log_variance=params[LOG_VARIANCE])
        return groups.replace(bias=params[VISIBLE_BIAS])

    @classmethod
    def log_scale(cls, estimator):
        # sigma^2 <- sigma^2 (1 + step), as on the NumPy path (see GaussianRBM)
        return {LOG_VARIANCE: MAX_VARIANCE_DECREASE}

    @classmethod
    def fitted_attributes(cls, estimator, params, state):
        attributes = super().fitted_attributes(estimator, params, state)
        xp = state.xp
        if LOG_VARIANCE in params:
            state.extra["published_log_variance"] = params[LOG_VARIANCE]
            attributes["variance_"] = xp.exp(params[LOG_VARIANCE])
        else:
            attributes["variance_"] = xp.zeros(0, dtype=params[WEIGHTS].dtype,
                                               device=state.device)
        return attributes

    @classmethod
    def params_of(cls, estimator):
        params = super().params_of(estimator)
        state = estimator._training_state
        if cls.columns(estimator).numeric:
            # variance_ = exp(z) does not give z back exactly: unless edited, the
            # exact log variances it was published from
            if estimator.variance_ is state.extra["published"].get("variance_"):
                params[LOG_VARIANCE] = state.extra["published_log_variance"]
            else:
                params[LOG_VARIANCE] = state.xp.log(estimator.variance_)
        return params

    @classmethod
    def check_epoch(cls, estimator, state, V):
        """The NumPy path's check of the Gaussian units (``_check_numeric_units``):
        means or deviations RUNAWAY_SCALE standard deviations from the data, or a
        variance below MIN_VARIANCE, stop the fit."""
        columns = cls.columns(estimator, state)
        n_numeric = len(columns.numeric)
        if not n_numeric:
            return
        xp, iterate = state.xp, state.iterate
        dtype = score_dtype(xp, state.device)
        reach = (xp.abs(xp.astype(iterate[VISIBLE_BIAS][:n_numeric], dtype))
                 + xp.sum(xp.abs(xp.astype(iterate[WEIGHTS][:, :n_numeric], dtype)),
                          axis=0))
        log_variance = xp.astype(iterate[LOG_VARIANCE], dtype)
        spread = max(float(xp.max(reach)), float(np.exp(0.5 * float(xp.max(log_variance)))))
        if spread > RUNAWAY_SCALE:
            raise TrainingDivergedError(
                f"TabularRBM diverged in epoch {state.n_iter + 1}: the model put numeric "
                f"values {spread:.3g} standard deviations away from the data. Use a "
                "smaller learning_rate. The estimator was left as it was before this "
                "call.")
        if float(xp.min(log_variance)) < np.log(MIN_VARIANCE):
            collapsed = np.flatnonzero(np.exp(to_numpy(log_variance, xp)) < MIN_VARIANCE)
            raise estimator._collapsed_variance_error(
                np.asarray(columns.numeric)[collapsed], state.n_iter + 1)

    @classmethod
    def visible_out(cls, estimator, V):
        table = cls.device_table(estimator)
        xp, n_numeric, parts = table.xp, table.n_numeric, []
        if n_numeric:
            scale = xp.astype(estimator.numeric_scale_, V.dtype)
            parts.append(V[:, :n_numeric] * scale + xp.astype(estimator.numeric_mean_,
                                                               V.dtype))
        if table.softmax is not None:
            parts.append(cls.codes_out(estimator, V[:, n_numeric:], table))
        out = parts[0] if len(parts) == 1 else xp.concat(parts, axis=1)
        return xp.take(out, table.user_order, axis=1)

    @classmethod
    def log_density_offset(cls, estimator):
        # the density in the input's units: log p(x) = log p(z) - sum_i log scale_i
        if not cls.columns(estimator).numeric:
            return 0.0
        xp = estimator._training_state.xp
        return -float(xp.sum(xp.log(estimator.numeric_scale_)))

    @classmethod
    def training_log_density_offset(cls, estimator, state):
        if not cls.columns(estimator, state).numeric:
            return 0.0
        return -float(state.xp.sum(state.xp.log(state.extra[INPUTS]["numeric_scale_"])))


__all__ = ["CategoricalRBMArrayAPI", "TabularRBMArrayAPI", "TableColumns"]
