"""The Gaussian RBM on any array namespace (array API dispatch; see
:mod:`skboltz.utils._array_api`).

:class:`~skboltz.GaussianRBM`'s part of the generic restricted path
(:mod:`skboltz.estimators._array_api_restricted`): Gaussian visible units with learnt log
variances (stepped as ratios, as the NumPy path steps them), its rows validated and
bounded in their namespace, and the NumPy path's checks. What a fit does once runs on a
host NumPy copy of its rows, with the NumPy path's own functions: the constant-feature
check, the data-scale warning, the data's mean and scale, and the whitening's
Ledoit-Wolf estimate (``whiten=True``); every epoch's checks (run-away spread,
collapsed variances), and the whitening of every call's rows, run in the namespace.
Missing entries (NaN) are refused there: NumPy arrays take them.
"""

import numpy as np
from scipy.linalg import solve_triangular

from ..utils._array_api import (
    _PicklesModules, dispatched_namespace, score_dtype, to_numpy, validated_rows,
)
from ._array_api_restricted import VISIBLE_BIAS, WEIGHTS, RestrictedArrayAPI
from ._gaussian_rbm import (
    MAX_VARIANCE_DECREASE,
    MIN_VARIANCE,
    RUNAWAY_SCALE,
    GaussianDivergenceCheck,
    Whitening,
    collapse_error,
    estimate_whitening,
    runaway_error,
    starting_scales,
    value_bound,
    visible_spread,
    warn_clipped_rows,
    warn_if_off_scale,
    warn_if_unscaled,
)
from ..units._layers import GaussianUnits

#: The learnt parameter of the variances: z = log sigma^2 (see GaussianUnits).
LOG_VARIANCE = "log_variance"


def bounded_rows(xp, X, what="values"):
    """``X`` with values beyond :func:`~skboltz.estimators._gaussian_rbm.value_bound` clipped to
    it, with the NumPy path's warning (see :func:`~skboltz.estimators._gaussian_rbm.bounded_rows`)."""
    bound = value_bound(np.float32 if X.dtype == xp.float32 else np.float64)
    outside = xp.any(xp.abs(X) > bound, axis=1)
    n_outside = int(xp.sum(xp.astype(outside, xp.int64)))
    if not n_outside:
        return X
    warn_clipped_rows(n_outside, X.shape[0], what, bound)
    return xp.clip(X, -bound, bound)


class NamespaceWhitening(_PicklesModules):
    """The whitening z = L^-1 (x - mean) of ``GaussianRBM(whiten=True)`` in the
    namespace of its arrays: ``mean`` and ``factor`` (L) are the published ones; L^-1 is
    found once, on the host, and applied as a matrix product, (x - mean) L^-T (the
    standard has no triangular solve). Pickles with its namespace by name."""

    def __init__(self, xp, mean, factor):
        self.xp, self.mean, self.factor = xp, mean, factor
        host = Whitening(to_numpy(mean, xp), to_numpy(factor, xp))
        self.log_abs_det = host.log_abs_det  # the NumPy path's formula
        inverse = solve_triangular(host.factor.astype(np.float64),
                                   np.eye(host.factor.shape[0]), lower=True)
        self.inverse_transposed = xp.asarray(np.ascontiguousarray(inverse.T),
                                             dtype=factor.dtype, device=factor.device)

    def transform(self, X):
        """z = L^-1 (x - mean) for each row x of ``X``, in the dtype of ``X`` (and
        within the value bound)."""
        xp = self.xp
        centred = X - xp.astype(self.mean, X.dtype)
        return bounded_rows(xp, centred @ xp.astype(self.inverse_transposed, X.dtype),
                            "whitened values")

    def inverse_transform(self, Z):
        """x = mean + L z for each row z of ``Z``, in the dtype of ``Z``."""
        xp = self.xp
        return Z @ xp.astype(self.factor, Z.dtype).T + xp.astype(self.mean, Z.dtype)


class GaussianRBMArrayAPI(RestrictedArrayAPI):
    """The namespace-generic methods of :class:`~skboltz.GaussianRBM`."""

    # -- rows ------------------------------------------------------------------------
    @classmethod
    def visible_rows(cls, estimator, X, *, reset, state=None):
        xp, _ = dispatched_namespace(X)
        X = validated_rows(estimator, X, reset=reset)
        X = bounded_rows(xp, X)
        if reset:
            return cls._first_rows(estimator, xp, X, state)
        whitening = cls._whitening(estimator)
        X = X if whitening is None else whitening.transform(X)
        if state is not None:  # a partial_fit call after the first
            deviation = X - xp.astype(state.extra["data_mean"], X.dtype)
            rms = float(xp.sqrt(xp.sum(deviation * deviation) / max(X.shape[0] * X.shape[1],
                                                                   1)))
            warn_if_off_scale(rms, X.shape[0] * X.shape[1])
        return X

    @classmethod
    def _first_rows(cls, estimator, xp, X, state):
        """The one-time work of a first call, on a host copy of its rows: the NumPy
        path's checks, the whitening's estimate, the data's mean and scale."""
        host = to_numpy(X, xp)
        estimator._check_first_rows(host, partial=state.partial)
        whitening = None
        auto_declines = estimator.whiten == "auto" and host.shape[0] <= host.shape[1]
        found = None if estimator.whiten is False or auto_declines else estimate_whitening(
            host, verbose=estimator.verbose, whiten=estimator.whiten,
            shrinkage=estimator.whitening_shrinkage)
        if found is not None:  # whiten=True, or "auto" where the correlations help
            mean, factor = found
            device = X.device
            whitening = NamespaceWhitening(
                xp, xp.asarray(mean.astype(host.dtype), device=device),
                xp.asarray(factor.astype(host.dtype, copy=False), device=device))
            X = whitening.transform(X)
            host = to_numpy(X, xp)
        warn_if_unscaled(host, whitened=whitening is not None)
        dtype = score_dtype(xp, X.device)
        state.extra.update(
            whitening=whitening,
            data_mean=xp.asarray(host.mean(axis=0, dtype=np.float64), dtype=dtype,
                                 device=X.device),
            data_scale=estimator._data_scale(host),
        )
        return X

    @classmethod
    def _whitening(cls, estimator):
        """The whitening of the published ``whitening_mean_`` and ``whitening_factor_``
        (that of the fit, unless they were replaced), or None (as the NumPy path's
        ``_input_transform``)."""
        mean, factor = estimator.whitening_mean_, estimator.whitening_factor_
        if factor is None:
            return None
        fitted = estimator._training_state.extra["whitening"]
        if fitted is not None and fitted.mean is mean and fitted.factor is factor:
            return fitted
        return NamespaceWhitening(estimator._training_state.xp, mean, factor)

    @classmethod
    def visible_out(cls, estimator, V):
        whitening = cls._whitening(estimator)
        return V if whitening is None else whitening.inverse_transform(V)

    @classmethod
    def log_density_offset(cls, estimator):
        # the change of variables: log p(x) = log p(z) - log |det L|
        whitening = cls._whitening(estimator)
        return 0.0 if whitening is None else -whitening.log_abs_det

    @classmethod
    def training_log_density_offset(cls, estimator, state):
        whitening = state.extra["whitening"]
        return 0.0 if whitening is None else -whitening.log_abs_det

    # -- the model -------------------------------------------------------------------
    @classmethod
    def starting_visible_bias(cls, estimator, visible_rates):
        return visible_rates  # the visible means start at the data's

    @classmethod
    def starting_extra_params(cls, estimator, V, state):
        # the NumPy path's starting scales: with a whitening, larger weights and
        # smaller variances (see starting_scales)
        xp = state.xp
        whitened = (state.extra["whitening"] is not None and estimator.learn_variance
                    and V.shape[0] > V.shape[1])
        weight_scale, log_variance = starting_scales(estimator.n_components, whitened)
        params = {LOG_VARIANCE: xp.full(V.shape[1], log_variance, dtype=V.dtype,
                                        device=V.device)}
        if whitened:
            params[WEIGHTS] = weight_scale * state.source.standard_normal(
                (estimator.n_components, V.shape[1]), V.dtype)
        return params

    @classmethod
    def visible_layer(cls, estimator, params, state=None):
        return GaussianUnits(params[VISIBLE_BIAS], log_variance=params[LOG_VARIANCE])

    @classmethod
    def log_scale(cls, estimator):
        # sigma^2 <- sigma^2 (1 + step), at most halving (see GaussianRBM)
        return {LOG_VARIANCE: MAX_VARIANCE_DECREASE} if estimator.learn_variance else {}

    @classmethod
    def fixed_parameters(cls, estimator):
        return () if estimator.learn_variance else (LOG_VARIANCE,)

    # -- checks ----------------------------------------------------------------------
    @classmethod
    def check_epoch(cls, estimator, state, V):
        xp, iterate = state.xp, state.iterate
        data_mean = state.extra["data_mean"]
        dtype = data_mean.dtype
        spread = visible_spread(
            xp, xp.astype(iterate[VISIBLE_BIAS], dtype), xp.astype(iterate[WEIGHTS], dtype),
            xp.astype(iterate[LOG_VARIANCE], dtype), data_mean)
        data_scale = state.extra["data_scale"]
        if spread > RUNAWAY_SCALE * data_scale:
            hint = GaussianDivergenceCheck(estimator).hint(to_numpy(V, xp))
            raise runaway_error(estimator, state.n_iter + 1, spread, data_scale, hint)
        if estimator.learn_variance:
            variance = xp.exp(xp.astype(iterate[LOG_VARIANCE], dtype))
            if bool(xp.any(variance < MIN_VARIANCE)):
                collapsed = np.flatnonzero(to_numpy(variance, xp) < MIN_VARIANCE)
                raise collapse_error(estimator, collapsed, state.n_iter + 1)

    # -- fitted attributes -------------------------------------------------------------
    @classmethod
    def fitted_attributes(cls, estimator, params, state):
        attributes = super().fitted_attributes(estimator, params, state)
        log_variance = params[LOG_VARIANCE]
        state.extra["published_log_variance"] = log_variance
        whitening = state.extra["whitening"]
        attributes.update(
            variance_=state.xp.exp(log_variance),
            whitening_mean_=None if whitening is None else whitening.mean,
            whitening_factor_=None if whitening is None else whitening.factor,
        )
        return attributes

    @classmethod
    def params_of(cls, estimator):
        # variance_ = exp(z) does not give z back exactly: unless edited, the exact log
        # variances it was published from (as the NumPy path's _training_params)
        params = super().params_of(estimator)
        state = estimator._training_state
        xp, variance = state.xp, estimator.variance_
        published = state.extra["published_log_variance"]
        if tuple(variance.shape) == tuple(published.shape) and bool(
                xp.all(xp.exp(published) == xp.astype(variance, published.dtype))):
            params[LOG_VARIANCE] = published
        else:
            params[LOG_VARIANCE] = xp.log(variance)
        return params


__all__ = ["GaussianRBMArrayAPI", "NamespaceWhitening"]
