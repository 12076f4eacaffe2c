"""Array API dispatch: the models on torch, CuPy or array-api-strict arrays.

Under ``sklearn.config_context(array_api_dispatch=True)`` an estimator that declares
``array_api_support`` takes arrays of any namespace scikit-learn supports and computes
in that namespace, on the input's device. This module is the seam between the two
paths of an estimator that supports it:

- the NumPy path, unchanged: NumPy input (dispatch or not), lists, sparse matrices,
  pandas frames, and every input when dispatch is off (scikit-learn then converts
  torch CPU tensors with ``np.asarray``, as for any estimator);
- the namespace-generic path, taken when dispatch is on and the input is an array of
  another namespace, or when the model was fitted that way. It is a separate
  implementation (for the restricted models: :mod:`skboltz.estimators._array_api_restricted`), so
  the NumPy path and its fused training loop are untouched.

:class:`ArrayAPIMixin` routes the public methods of an estimator between the two;
:func:`random_source` gives each namespace its random numbers (the array API standard
has none): a ``torch.Generator`` on the input's device, CuPy's own generator, and for
any other namespace draws by NumPy on the host copied to the device, a fallback meant
for array-api-strict in the tests (on an accelerator the copies would dominate an
epoch). Every source is seeded from ``random_state``: deterministic for a given
namespace, device and seed, statistically equivalent (not bitwise) across namespaces.
"""

import functools
import importlib
import types

import numpy as np
from sklearn import get_config
from sklearn.utils.validation import validate_data

from ._sklearn import (
    _convert_to_numpy,
    _max_precision_float_dtype,
    array_library,
    array_namespace,
    check_same_namespace,
    get_namespace_and_device,
    is_array_api_array,
)


# -- the namespace of an input ---------------------------------------------------------
def is_numpy_namespace(xp):
    """Whether ``xp`` is NumPy or an array API wrapper of it."""
    return namespace_name(xp) == "numpy"


def dispatched_namespace(X):
    """``(xp, device)`` of ``X`` when it takes the namespace-generic path (dispatch on
    and ``X`` an array of a namespace other than NumPy), else None.

    Cheap for the NumPy path: an ndarray answers at once, without reading the config.
    """
    if type(X) is np.ndarray or not get_config()["array_api_dispatch"]:
        return None
    if not is_array_api_array(X):
        return None  # lists, sparse matrices, frames: the NumPy path converts them
    xp, _, device = get_namespace_and_device(X)
    if is_numpy_namespace(xp):
        return None
    return xp, device


#: The library behind a namespace: "torch", "cupy", "array_api_strict", ...
namespace_name = array_library


def score_dtype(xp, device):
    """The dtype scores and log Z are computed in: float64 where the device has it."""
    return _max_precision_float_dtype(xp, device)


def to_numpy(array, xp):
    """A NumPy copy of ``array`` on the host."""
    return _convert_to_numpy(values_of(array), xp=xp)


def values_of(array):
    """``array`` without its autograd graph (a torch tensor that requires grad,
    detached; anything else as it is). The models read their inputs' values: a fit
    by sampled statistics has no gradient to pass back, and a graph kept through every
    epoch would only cost memory. As with a NumPy copy of the tensor, the results do
    not require grad."""
    if getattr(array, "requires_grad", False) and hasattr(array, "detach"):
        return array.detach()
    return array


# -- pickling ------------------------------------------------------------------------
class _PicklesModules:
    """Pickles its attributes that are modules (array namespaces) by name: a model
    fitted under dispatch pickles, and unpickles where the library is installed."""

    def __getstate__(self):
        return {key: (_ModuleName(value.__name__) if isinstance(value, types.ModuleType)
                      else value) for key, value in vars(self).items()}

    def __setstate__(self, state):
        self.__dict__.update({
            key: importlib.import_module(value) if isinstance(value, _ModuleName)
            else value for key, value in state.items()})


class _ModuleName(str):
    """A module's name, in a pickle."""


# -- random numbers per namespace ------------------------------------------------------
class _HostSource(_PicklesModules):
    """Draws by a NumPy Generator on the host, copied to ``device``: the fallback for
    namespaces without a generator of their own (array-api-strict, in the tests)."""

    def __init__(self, xp, device, seed):
        self.xp, self.device = xp, device
        self.rng = np.random.default_rng(seed)

    def _put(self, values, dtype):
        return self.xp.asarray(values, dtype=dtype, device=self.device)

    def random(self, shape, dtype):
        """Uniform draws in [0, 1) of ``shape`` and float ``dtype``."""
        return self._put(self.rng.random(shape), dtype)

    def standard_normal(self, shape, dtype):
        """Standard normal draws."""
        return self._put(self.rng.standard_normal(shape), dtype)

    def permutation(self, n):
        """A random order of ``range(n)``, as an index array on the device."""
        return self._put(self.rng.permutation(n), self.xp.int64)

    def integers(self, high, size):
        """``size`` integers drawn uniformly from ``range(high)``."""
        return self._put(self.rng.integers(0, high, size=size), self.xp.int64)


class _TorchSource(_PicklesModules):
    """A ``torch.Generator`` on the input's device: the noise never leaves it."""

    def __init__(self, xp, device, seed):
        import torch  # the input is a torch tensor: torch is installed

        self.torch, self.xp, self.device = torch, xp, device
        self.generator = torch.Generator(device=device)
        self.generator.manual_seed(int(seed))

    def random(self, shape, dtype):
        return self.torch.rand(shape, generator=self.generator, dtype=dtype,
                               device=self.device)

    def standard_normal(self, shape, dtype):
        return self.torch.randn(shape, generator=self.generator, dtype=dtype,
                                device=self.device)

    def permutation(self, n):
        return self.torch.randperm(n, generator=self.generator, device=self.device)

    def integers(self, high, size):
        return self.torch.randint(0, high, (size,), generator=self.generator,
                                  device=self.device)


class _CupySource(_PicklesModules):
    """CuPy's ``RandomState`` (on the current device). Written against CuPy's API;
    not run in skboltz's tests (no GPU there)."""

    def __init__(self, xp, device, seed):
        import cupy

        self.xp, self.device = xp, device
        with device:
            self.state = cupy.random.RandomState(int(seed))

    def random(self, shape, dtype):
        with self.device:
            return self.state.random_sample(shape, dtype=dtype)

    def standard_normal(self, shape, dtype):
        with self.device:
            return self.state.standard_normal(shape, dtype=dtype)

    def permutation(self, n):
        with self.device:
            return self.state.permutation(n)

    def integers(self, high, size):
        with self.device:
            return self.state.randint(0, high, size=size)


_SOURCES = {"torch": _TorchSource, "cupy": _CupySource}


def random_source(xp, device, seed):
    """The random source of namespace ``xp`` on ``device``, seeded with ``seed`` (an
    int drawn from the estimator's ``random_state``). Its draws are asked for as a
    ``numpy.random.Generator`` is, ``random(shape, dtype)`` and ``standard_normal(shape,
    dtype)``, so the layers' formulas take either."""
    return _SOURCES.get(namespace_name(xp), _HostSource)(xp, device, seed)


# -- elementwise functions the standard lacks ----------------------------------------------
def xp_sigmoid(xp, x):
    """1 / (1 + exp(-x)): the library's own where it has one (torch), else
    exp(-softplus(-x)), which never overflows."""
    own = getattr(xp, "sigmoid", None)
    if own is not None:
        return own(x)
    return xp.exp(-xp.logaddexp(xp.zeros_like(x), -x))


def xp_softplus(xp, x):
    """log(1 + exp(x)), without overflow."""
    return xp.logaddexp(xp.zeros_like(x), x)


def namespace_of(array):
    """The array API namespace of ``array``, whatever the dispatch setting: NumPy
    itself for an ndarray (at once)."""
    if isinstance(array, np.ndarray):
        return np
    return array_namespace(array)


def foreign_namespace(array):
    """The namespace of ``array`` when it is an array of a library other than NumPy,
    else None (ndarrays, NumPy scalars, sparse matrices, lists: NumPy's own functions
    and in-place kernels take them). The one test by which a formula written once
    chooses NumPy's fast path."""
    if isinstance(array, (np.ndarray, np.generic)) or not is_array_api_array(array):
        return None
    xp = array_namespace(array)
    return None if is_numpy_namespace(xp) else xp


# -- the few calls the standard and NumPy 1.24 spell differently -------------------------
def copy_of(array):
    """A copy of ``array`` in its own namespace and dtype."""
    xp = foreign_namespace(array)
    return np.array(array) if xp is None else xp.asarray(array, copy=True)


def as_dtype(array, dtype):
    """``array`` in ``dtype`` (itself when it already is)."""
    xp = foreign_namespace(array)
    return array.astype(dtype, copy=False) if xp is None else xp.astype(array, dtype)


def concat_columns(parts):
    """The 2-D ``parts`` side by side, in their namespace."""
    xp = foreign_namespace(parts[0])
    return np.hstack(parts) if xp is None else xp.concat(parts, axis=1)


# -- routing the public methods ----------------------------------------------------------
class ArrayAPIState(_PicklesModules):
    """Base of the training state of a model fitted on the namespace-generic path:
    its presence in ``_training_state`` says where the model lives. A subclass holds
    the namespace ``xp`` and the ``device`` of the model's arrays."""


def refuse_missing(estimator):
    """Missing entries are summed out on NumPy only: one message for every
    dispatched estimator."""
    raise ValueError(
        f"{type(estimator).__name__}: missing entries (NaN) are not supported under "
        "array API dispatch. Pass NumPy arrays (for torch, X.cpu().numpy(); or turn "
        "dispatch off) to have them summed out as unobserved, or fill them first "
        "(e.g. with skboltz.RBMImputer on NumPy arrays).")


def validated_rows(estimator, X, *, reset):
    """Dispatched ``X`` validated in its namespace (float32 or float64, complete rows:
    NaN is refused with what to do, where the NumPy path would sum it out)."""
    xp, _ = dispatched_namespace(X)
    X = validate_data(estimator, X, dtype=[xp.float64, xp.float32], reset=reset,
                      ensure_all_finite="allow-nan")
    if bool(xp.any(xp.isnan(X))):
        refuse_missing(estimator)
    return X


def fitted_namespace(estimator):
    """The :class:`ArrayAPIState` of a model fitted on the generic path, else None."""
    state = estimator.__dict__.get("_training_state")
    return state if isinstance(state, ArrayAPIState) else None


def check_input_namespace(estimator, X, state, method):
    """Refuse ``X`` unless it is in the namespace and on the device of the model,
    as scikit-learn's estimators do (the message says "must use the same namespace")."""
    name = type(estimator).__name__
    if not get_config()["array_api_dispatch"]:
        raise ValueError(
            f"Inputs passed to {name}.{method}() must use the same namespace and the "
            f"same device as those passed to fit(): this model was fitted on "
            f"{namespace_name(state.xp)} arrays under array API dispatch. Call "
            f"{method} inside sklearn.config_context(array_api_dispatch=True) with "
            f"arrays of that namespace and device, or fit the model on NumPy arrays."
        )
    if check_same_namespace is not None and hasattr(estimator, "components_"):
        check_same_namespace(X, estimator, attribute="components_", method=method)
        return
    # scikit-learn < 1.9, and meta-estimators (whose model holds the parameters)
    xp, _, device = get_namespace_and_device(X)
    fitted = ("numpy", None) if state is None else (namespace_name(state.xp), state.device)
    if (namespace_name(xp), device) != fitted:
        raise ValueError(
            f"Inputs passed to {name}.{method}() must use the same namespace and the "
            f"same device as those passed to fit(): {fitted[0]} on {fitted[1]}, got "
            f"{namespace_name(xp)} on {device}."
        )


def check_rows_like_model(estimator, X, model, method):
    """For a meta-estimator: refuse ``X`` unless it is where its fitted ``model``
    lives (namespace and device), naming the meta-estimator's ``method``."""
    state = fitted_namespace(model)
    if state is not None or dispatched_namespace(X) is not None:
        check_input_namespace(estimator, X, state, method)


def _routed(numpy_method, *, takes_rows=True):
    """A public method that runs ``numpy_method`` (the estimator's NumPy path) or the
    generic model's method of the same name (see :class:`ArrayAPIMixin`). The
    signature and docstring are ``numpy_method``'s."""
    name = numpy_method.__name__

    @functools.wraps(numpy_method)
    def method(self, *args, **kwargs):
        if takes_rows and args:
            args = (values_of(args[0]), *args[1:])
        elif takes_rows and "X" in kwargs:
            kwargs["X"] = values_of(kwargs["X"])
        if "sample_weight" in kwargs:
            kwargs["sample_weight"] = values_of(kwargs["sample_weight"])
        state = fitted_namespace(self)
        if state is None:
            X = args[0] if args else kwargs.get("X")
            if takes_rows and dispatched_namespace(X) is not None:
                check_input_namespace(self, X, None, name)  # a NumPy model
            return numpy_method(self, *args, **kwargs)
        if takes_rows:
            check_input_namespace(self, args[0] if args else kwargs.get("X"), state,
                                  name)
        implementation = getattr(self._array_api_model, name, None)
        if implementation is None:
            raise NotImplementedError(
                f"{type(self).__name__}.{name} is not available for a model fitted "
                f"under array API dispatch (on {namespace_name(state.xp)} arrays); fit "
                "it on NumPy arrays to use it."
            )
        return implementation(self, *args, **kwargs)

    return method


class ArrayAPIMixin:
    """Array API dispatch for an estimator: put it first in the bases.

    The estimator names its namespace-generic implementation in
    ``_array_api_model`` (a class of static methods taking the estimator: ``fit``,
    ``transform``, ``score_samples``, ...). ``fit``/``partial_fit`` go to it when
    dispatch is on and ``X`` is an array of another namespace than NumPy (a
    ``partial_fit`` also when the model lives there); every other public method when
    the model was fitted there, after checking that its input is in the same
    namespace and on the same device. The methods it does not implement raise a
    ``NotImplementedError`` that says so, for such a model; NumPy models and NumPy
    input never see any of this.
    """

    _array_api_model = None

    def _fit(self, X, y, *, partial, **kwargs):
        X = values_of(X)
        if "sample_weight" in kwargs:
            kwargs["sample_weight"] = values_of(kwargs["sample_weight"])
        if dispatched_namespace(X) is not None or (partial and fitted_namespace(self)):
            return self._array_api_model.fit(self, X, y, partial=partial, **kwargs)
        return super()._fit(X, y, partial=partial, **kwargs)

    def __sklearn_tags__(self):
        # Where it holds: the settings the generic path implements (an RBM with
        # parallel tempering, say, refuses array API inputs, and says so).
        tags = super().__sklearn_tags__()
        tags.array_api_support = self._array_api_model.supports(self)
        return tags

    @classmethod
    def __init_subclass__(cls, **kwargs):
        # Route every public method of the NumPy path that reads the fitted model.
        super().__init_subclass__(**kwargs)
        for name, takes_rows in ROUTED_METHODS.items():
            numpy_method = getattr(cls, name, None)
            if numpy_method is None or getattr(numpy_method, "_array_api_routed", False):
                continue
            routed = _routed(numpy_method, takes_rows=takes_rows)
            routed._array_api_routed = True
            setattr(cls, name, routed)


#: The public methods of a fitted model, and whether their first argument is rows.
ROUTED_METHODS = {
    "transform": True,
    "reconstruct": True,
    "free_energy": True,
    "score_samples": True,
    "score": True,
    "score_samples_std_error": True,
    "gibbs": True,
    "estimate_log_likelihood_bounds": True,
    "sample": False,
    "estimate_log_partition": False,
}


__all__ = [
    "ArrayAPIMixin",
    "ArrayAPIState",
    "as_dtype",
    "check_input_namespace",
    "concat_columns",
    "copy_of",
    "dispatched_namespace",
    "fitted_namespace",
    "foreign_namespace",
    "namespace_name",
    "namespace_of",
    "random_source",
    "score_dtype",
    "to_numpy",
    "values_of",
    "xp_sigmoid",
    "xp_softplus",
]
