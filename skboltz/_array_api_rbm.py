"""The RBM on any array namespace (array API dispatch; see :mod:`skboltz._array_api`).

The namespace-generic path of :class:`~skboltz.RBM`: the same model, learning rule and
scores as the NumPy path, written with the array API standard's functions only, so
that torch (CPU or CUDA), CuPy and array-api-strict arrays are computed on in their
own namespace and on their own device. It is a separate implementation, so that the
NumPy path keeps its fused loop: one plain minibatch loop, a handful of matrix
products and elementwise calls per update, which on an accelerator is what runs fast.

What it covers: ``fit`` and ``partial_fit`` with CD-k and PCD (their ``n_steps``, a
schedule of them, ``n_chains`` and ``negative_visible``), the learning rate ("auto"
too), moving-average momentum (a schedule too), weight decay every
:data:`~skboltz._update.DECAY_INTERVAL` updates and iterate averaging every
:data:`~skboltz._training.AVERAGE_INTERVAL` updates, as the NumPy path applies them;
``transform``, ``reconstruct``, ``free_energy``, ``score_samples``, ``score``,
``sample`` and ``estimate_log_partition`` with log Z exact (enumerating the smaller
layer) or by annealed importance sampling. The rest of the NumPy path's options
(other learning strategies and log Z estimators, validation monitoring, early
stopping, callbacks, the degeneracy check at the end of a fit) are refused with an
error that says to pass NumPy arrays.
"""

import copy
import math
import time
from dataclasses import dataclass, field

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from ._array_api import (
    ArrayAPIState,
    bernoulli,
    check_input_namespace,
    dispatched_namespace,
    namespace_name,
    random_source,
    score_dtype,
    to_numpy,
)
from ._energy import logit_of_rates
from ._runtime import make_generator, warn_user
from ._sklearn import check_count
from ._strategies import AUTO_EXACT_MAX_STATES
from ._training import AVERAGE_INTERVAL, DIVERGED_MAGNITUDE
from ._transactions import all_or_nothing, publish
from ._update import DECAY_INTERVAL, UpdateRule
from .exceptions import ApproximateScoreWarning, DataRangeWarning, TrainingDivergedError
from .learning import CD, PCD
from .learning._base import steps_at
from .partition import AIS, Exact, LogZ
from .partition._ais import beta_schedule

#: Betas of annealed importance sampling under dispatch when the AIS object asks for
#: the adaptive schedule (not ported: it times and reruns its paths on the host); the
#: fixed three-stage schedule of Salakhutdinov & Murray (2008) is used instead.
AIS_BETAS = 1000

#: States enumerated per matrix product by the exact log Z.
EXACT_CHUNK = 2**14

#: Most enumerated units ``z_estimator="exact"`` accepts under dispatch.
EXACT_MAX_UNITS = 30

#: Most training rows (evenly spaced) the per-epoch reconstruction error is computed on.
MONITOR_ROWS = 256


# -- the model's formulas, in any namespace ---------------------------------------------
def sigmoid(xp, x):
    """1 / (1 + exp(-x)): the library's own where it has one (torch), else
    exp(-softplus(-x)), which never overflows."""
    own = getattr(xp, "sigmoid", None)
    if own is not None:
        return own(x)
    return xp.exp(-xp.logaddexp(xp.zeros_like(x), -x))


def softplus(xp, x):
    """log(1 + exp(x))."""
    return xp.logaddexp(xp.zeros_like(x), x)


def free_energy(xp, W, b, c, V):
    """F(v) = -b.v - sum_j softplus(W v + c)_j of each row of ``V``."""
    return -(V @ b) - xp.sum(softplus(xp, V @ W.T + c), axis=1)


def hidden_probability(xp, W, c, V):
    """P(h = 1 | v) of each row of ``V``."""
    return sigmoid(xp, V @ W.T + c)


def visible_probability(xp, W, b, H):
    """P(v = 1 | h) of each row of ``H``."""
    return sigmoid(xp, H @ W + b)


@dataclass(eq=False)
class RBMArrayState(ArrayAPIState):
    """Training state of an RBM fitted on the generic path (arrays of ``xp``)."""

    xp: object
    device: object
    source: object
    #: The parameters the updates move, (W, b, c), and their published average (the
    #: same tuple without averaging).
    iterate: tuple
    params: tuple
    velocity: tuple
    #: Persistent chains' hidden states (PCD), else None.
    hidden: object = None
    n_averaged: int = 1
    n_pending_average: int = 0
    pending_decay: int = 0
    n_iter: int = 0
    #: The training rows' rates (float64 NumPy, on the host).
    data_rates: np.ndarray = None
    log_z_seed: int = 0
    sampling_seed: int = 0
    history: dict = field(default_factory=dict)
    structure: dict = field(default_factory=dict)


def _refuse(estimator, setting, why=""):
    raise ValueError(
        f"{type(estimator).__name__}({setting}) is not available under array API "
        f"dispatch{why}: pass NumPy arrays (or turn dispatch off) to use it, or use "
        "the settings the dispatched path supports (see the GPU / array API section "
        "of the user guide)."
    )


def unsupported_setting(estimator):
    """``(setting, why)`` of the first setting of ``estimator`` the generic path does not
    implement, or None (cheap: no strategy is made)."""
    learning, z_estimator = estimator.learning, estimator.z_estimator
    if not (learning in ("cd", "pcd") if isinstance(learning, str)
            else type(learning) in (CD, PCD)):
        return (f"learning={learning!r}",
                ": only 'cd' and 'pcd' (CD and PCD objects) run there")
    if not (z_estimator in ("auto", "exact", "ais") if isinstance(z_estimator, str)
            else type(z_estimator) in (Exact, AIS)):
        return (f"z_estimator={z_estimator!r}",
                ": only 'auto', 'exact' and 'ais' (Exact and AIS objects) run there")
    for name, default in (("validation_fraction", None), ("n_iter_no_change", None),
                          ("monitor_likelihood", False)):
        if getattr(estimator, name) != default:
            return f"{name}={getattr(estimator, name)!r}", ": it trains without monitoring"
    if getattr(estimator, "_skl_callbacks", None):
        return "callbacks", ": it trains without callbacks"
    return None


def _check_settings(estimator):
    """Refuse what the generic path does not implement, naming it."""
    unsupported = unsupported_setting(estimator)
    if unsupported is not None:
        _refuse(estimator, *unsupported)


def _resolve_z_estimator(estimator, spec, n_enumerated):
    if isinstance(spec, str) and spec == "auto":
        spec = "exact" if 2**n_enumerated <= AUTO_EXACT_MAX_STATES else "ais"
    resolved = estimator._resolve_strategy(spec, "z_estimator")
    if type(resolved) not in (Exact, AIS):
        _refuse(estimator, f"z_estimator={spec!r}",
                ": only 'auto', 'exact' and 'ais' (Exact and AIS objects) run there")
    return resolved


def _validate_rows(estimator, X, *, reset):
    """``X`` validated in its namespace (float32 or float64), clipped into [0, 1]."""
    xp, _ = dispatched_namespace(X)
    X = validate_data(estimator, X, dtype=[xp.float64, xp.float32], reset=reset)
    outside = xp.logical_or(X < 0, X > 1)
    n_rows = int(xp.sum(xp.astype(xp.any(outside, axis=1), xp.int64)))
    if n_rows:
        warn_user(
            f"{n_rows} of {X.shape[0]} rows have values outside [0, 1], the range of "
            "binary units: they are used at their values clipped into [0, 1] (by fit, "
            "partial_fit, transform and the scores alike). Scale the features first, "
            "e.g. with sklearn.preprocessing.MinMaxScaler() in a Pipeline, or "
            "binarize them.",
            DataRangeWarning,
        )
        X = xp.clip(X, 0.0, 1.0)
    return X


# -- training ------------------------------------------------------------------------
class _Update:
    """The update rule of :mod:`skboltz._update` on a tuple (W, b, c) of arrays:
    moving-average momentum, weight decay on W every DECAY_INTERVAL updates (that many
    updates' worth), then the move."""

    def __init__(self, rule, state):
        self.rule, self.state = rule, state
        self.decay_step = DECAY_INTERVAL * rule.decay
        self.last_step = None

    def apply(self, state, gradient):
        momentum = self.rule.momentum
        if momentum:
            update = tuple(momentum * v + g for v, g in zip(state.velocity, gradient))
        else:
            update = gradient
        state.pending_decay += 1
        if state.pending_decay == DECAY_INTERVAL:
            state.pending_decay = 0
            if self.decay_step:
                update = (update[0] - self.decay_step * state.iterate[0], *update[1:])
        if momentum:
            state.velocity = update
        else:  # the velocity is the last step, set at the end of the epoch
            self.last_step = update
        state.iterate = tuple(p + u for p, u in zip(state.iterate, update))

    def finish(self, state):
        if self.last_step is not None:
            state.velocity = self.last_step


def _move_average(state, window):
    """Move the published average towards the iterate (see ``IterateAverage``)."""
    n = state.n_pending_average
    if n <= 0 or state.params is state.iterate:
        return
    state.n_pending_average = 0
    state.n_averaged += n
    weight = min(1.0, n / min(state.n_averaged, window))
    state.params = tuple(a + weight * (i - a) for a, i in zip(state.params, state.iterate))


def _negative_phase(xp, source, learning, state, W, b, c, positive, positive_hidden,
                    n_steps, rows_are_means):
    """The negative rows and their hidden probabilities of one update (CD-k from the
    minibatch, or PCD's persistent chains, which it advances)."""
    if type(learning) is CD:
        H = bernoulli(source, positive_hidden)
        V = positive
        for step in range(1, n_steps + 1):
            if step > 1:
                H = bernoulli(source, hidden_probability(xp, W, c, V))
            means = visible_probability(xp, W, b, H)
            V = means if step == n_steps and rows_are_means else bernoulli(source, means)
        return V, hidden_probability(xp, W, c, V)
    H = state.hidden
    for _ in range(n_steps - 1):
        V = bernoulli(source, visible_probability(xp, W, b, H))
        H = bernoulli(source, hidden_probability(xp, W, c, V))
    means = visible_probability(xp, W, b, H)
    V = bernoulli(source, means)
    chains_hidden = hidden_probability(xp, W, c, V)
    state.hidden = bernoulli(source, chains_hidden)
    if rows_are_means:
        return means, hidden_probability(xp, W, c, means)
    return V, chains_hidden


def _train_epoch(estimator, X, state, learning, rule, progress):
    xp, source = state.xp, state.source
    n_rows = X.shape[0]
    batch_size = max(1, min(estimator.batch_size, n_rows))
    n_steps = steps_at(learning.n_steps, progress)
    choice = learning.negative_visible
    rows_are_means = choice in ("auto", "mean")  # "auto" is the means for binary units
    update = _Update(rule, state)
    window = estimator.average_window
    averaging = window is not None
    step = rule.step
    order = source.permutation(n_rows) if n_rows > batch_size else None
    for start in range(0, n_rows, batch_size):
        stop = min(start + batch_size, n_rows)
        positive = X if order is None else xp.take(X, order[start:stop], axis=0)
        W, b, c = state.iterate
        positive_hidden = hidden_probability(xp, W, c, positive)
        negative, negative_hidden = _negative_phase(
            xp, source, learning, state, W, b, c, positive, positive_hidden, n_steps,
            rows_are_means)
        n_pos, n_neg = positive.shape[0], negative.shape[0]
        gradient = (
            step * (positive_hidden.T @ positive / n_pos
                    - negative_hidden.T @ negative / n_neg),
            step * (xp.mean(positive, axis=0) - xp.mean(negative, axis=0)),
            step * (xp.mean(positive_hidden, axis=0) - xp.mean(negative_hidden, axis=0)),
        )
        update.apply(state, gradient)
        if averaging:
            state.n_pending_average += 1
            if state.n_pending_average == AVERAGE_INTERVAL:
                _move_average(state, window)
        else:
            state.params = state.iterate
    update.finish(state)
    if averaging:
        _move_average(state, window)


def _diverged(xp, params):
    largest = max(float(xp.max(xp.abs(p))) for p in params)
    return not largest < DIVERGED_MAGNITUDE  # NaN compares False


def _reconstruction_error(xp, params, X):
    rows = X[:: -(-X.shape[0] // MONITOR_ROWS), ...]
    W, b, c = params
    reconstruction = visible_probability(xp, W, b, hidden_probability(xp, W, c, rows))
    return float(xp.mean((reconstruction - rows) ** 2))


def _new_state(estimator, X, xp, device, learning):
    rng = make_generator(estimator.random_state)
    source = random_source(xp, device, int(rng.integers(np.iinfo(np.int32).max)))
    dtype = X.dtype
    rates_dtype = score_dtype(xp, device)
    data_rates = to_numpy(xp.mean(xp.astype(X, rates_dtype), axis=0), xp).astype(np.float64)
    n_visible, n_hidden = X.shape[1], estimator.n_components
    W = 0.01 * source.normal((n_hidden, n_visible), dtype)
    if estimator.visible_bias_init == "data_rates":
        b = xp.asarray(logit_of_rates(data_rates), dtype=dtype, device=device)
    else:
        b = xp.zeros(n_visible, dtype=dtype, device=device)
    c = xp.zeros(n_hidden, dtype=dtype, device=device)
    params = (W, b, c)
    state = RBMArrayState(
        xp=xp, device=device, source=source, iterate=params, params=params,
        velocity=tuple(xp.zeros_like(p) for p in params), data_rates=data_rates,
        history={"epoch": [], "time": [], "reconstruction_error": []},
        structure=estimator._structure(),
    )
    if type(learning) is PCD:
        n_chains = learning.n_chains or max(1, min(estimator.batch_size, X.shape[0]))
        starts = xp.take(X, source.integers(X.shape[0], n_chains), axis=0)
        chains = bernoulli(source, starts)
        state.hidden = bernoulli(source, hidden_probability(xp, W, c, chains))
    state.log_z_seed = int(rng.integers(np.iinfo(np.int32).max))
    state.sampling_seed = int(rng.integers(np.iinfo(np.int32).max))
    return state


def _continued_state(estimator, X, xp, device, learning):
    """The state a ``partial_fit`` continues: the last one, its parameters replaced by
    the public attributes when they were edited (set) by hand."""
    # A copy: the published state is left as it is until this call publishes (the
    # arrays are replaced, never changed in place, so a shallow copy is enough).
    state = copy.copy(estimator._training_state)
    state.history = {key: list(values) for key, values in state.history.items()}
    estimator._check_structure_unchanged()
    if not isinstance(learning, type(estimator.learning_)) or (
            learning.get_params() != estimator.learning_.get_params()):
        _refuse(estimator, "learning changed between partial_fit calls")
    params = (estimator.components_, estimator.intercept_visible_,
              estimator.intercept_hidden_)
    dtype = X.dtype
    if any(p is not q for p, q in zip(params, state.params)) or params[0].dtype != dtype:
        params = tuple(xp.astype(p, dtype) for p in params)
        state.iterate = state.params = params
        state.velocity = tuple(xp.astype(v, dtype) for v in state.velocity)
        state.n_averaged, state.n_pending_average = 1, 0
        if state.hidden is not None:
            state.hidden = xp.astype(state.hidden, dtype)
    return state


class RBMArrayAPI:
    """The namespace-generic methods of :class:`~skboltz.RBM` (see the module
    docstring); each takes the estimator first."""

    supports = staticmethod(lambda estimator: unsupported_setting(estimator) is None)

    @staticmethod
    def fit(estimator, X, y=None, *, partial, **kwargs):
        with all_or_nothing(estimator):
            return RBMArrayAPI._fit(estimator, X, partial=partial, **kwargs)

    @staticmethod
    def _fit(estimator, X, *, partial, **kwargs):
        given = {k: v for k, v in kwargs.items() if v is not None}
        if given:
            _refuse(estimator, ", ".join(f"{k}=..." for k in given),
                    f": {', '.join(given)} not supported there")
        _check_settings(estimator)
        learning = estimator._resolve_learning()
        first_call = not (partial and hasattr(estimator, "_training_state"))
        if not first_call:
            check_input_namespace(estimator, X, estimator._training_state, "partial_fit")
        X = _validate_rows(estimator, X, reset=first_call)
        xp, device = dispatched_namespace(X)
        if first_call:
            state = _new_state(estimator, X, xp, device, learning)
        else:
            state = _continued_state(estimator, X, xp, device, learning)
        learning_rate = estimator._learning_rate_of(state)
        n_epochs = 1 if partial else estimator.n_iter
        for _ in range(n_epochs):
            start = time.perf_counter()
            # the NumPy path's momentum schedule and progress (for a schedule of k)
            rule = UpdateRule.of(float(estimator._momentum_at(state.n_iter)),
                                 learning_rate, estimator.weight_decay)
            _train_epoch(estimator, X, state, learning, rule, estimator._progress(state))
            if _diverged(xp, state.params) or _diverged(xp, state.iterate):
                raise TrainingDivergedError(
                    f"{type(estimator).__name__} diverged in epoch {state.n_iter + 1}: "
                    f"the parameters became non-finite or larger than "
                    f"{DIVERGED_MAGNITUDE:g}. Use a smaller learning_rate. The "
                    "estimator was left as it was before this call."
                )
            state.n_iter += 1
            history = state.history
            history["epoch"].append(state.n_iter)
            history["time"].append(time.perf_counter() - start)
            history["reconstruction_error"].append(
                _reconstruction_error(xp, state.params, X))
            if estimator.verbose:
                print(f"[{type(estimator).__name__}] epoch {state.n_iter}, "
                      f"reconstruction error {history['reconstruction_error'][-1]:.4f}")
        W, b, c = state.params
        n_enumerated = min(W.shape)
        z_estimator = _resolve_z_estimator(estimator, estimator.z_estimator, n_enumerated)
        publish(estimator, {
            "components_": W, "intercept_visible_": b, "intercept_hidden_": c,
            "learning_rate_": learning_rate, "learning_": learning,
            "z_estimator_": z_estimator, "_training_state": state, "_log_z_cache": {},
            "_sampling_rng": None,
        })
        return estimator

    # -- inference -----------------------------------------------------------------
    @staticmethod
    def _rows(estimator, X):
        check_is_fitted(estimator, "_training_state")
        X = _validate_rows(estimator, X, reset=False)
        state = estimator._training_state
        return X, state.xp

    @staticmethod
    def _params(estimator, dtype):
        xp = estimator._training_state.xp
        return tuple(xp.astype(p, dtype) for p in (
            estimator.components_, estimator.intercept_visible_,
            estimator.intercept_hidden_))

    @staticmethod
    def transform(estimator, X):
        X, xp = RBMArrayAPI._rows(estimator, X)
        W, _, c = RBMArrayAPI._params(estimator, X.dtype)
        return hidden_probability(xp, W, c, X)

    @staticmethod
    def reconstruct(estimator, X):
        X, xp = RBMArrayAPI._rows(estimator, X)
        W, b, c = RBMArrayAPI._params(estimator, X.dtype)
        return visible_probability(xp, W, b, hidden_probability(xp, W, c, X))

    @staticmethod
    def free_energy(estimator, X):
        X, xp = RBMArrayAPI._rows(estimator, X)
        state = estimator._training_state
        dtype = score_dtype(xp, state.device)
        W, b, c = RBMArrayAPI._params(estimator, dtype)
        return free_energy(xp, W, b, c, xp.astype(X, dtype))

    @staticmethod
    def score_samples(estimator, X):
        X, xp = RBMArrayAPI._rows(estimator, X)
        state = estimator._training_state
        log_z = RBMArrayAPI.estimate_log_partition(estimator)
        if not log_z.is_reliable:
            warn_user(
                f"{type(estimator).__name__}: the scores use an estimate of log Z by "
                f"{log_z.method} that is less accurate than asked "
                "(estimate_log_partition().describe() says how); more chains or betas "
                "(z_estimator=AIS(n_chains=..., n_betas=..., schedule='three_stage')) "
                "give a more accurate one.",
                ApproximateScoreWarning, once_per=(type(estimator).__name__, "ais"))
        dtype = score_dtype(xp, state.device)
        W, b, c = RBMArrayAPI._params(estimator, dtype)
        log_likelihood = -free_energy(xp, W, b, c, xp.astype(X, dtype)) - log_z.value
        # -F(x) <= log Z for every x in [0, 1]^n: an AIS estimate below it is capped
        return xp.minimum(log_likelihood, xp.zeros_like(log_likelihood))

    @staticmethod
    def score(estimator, X, y=None):
        scores = RBMArrayAPI.score_samples(estimator, X)
        return float(estimator._training_state.xp.mean(scores))

    @staticmethod
    def sample(estimator, n_samples=1, random_state=None, n_steps=1000,
               return_means=False):
        check_is_fitted(estimator, "_training_state")
        n_samples = check_count(n_samples, "n_samples", 1)
        n_steps = check_count(n_steps, "n_steps", 0)
        if not isinstance(return_means, (bool, np.bool_)):
            raise TypeError(f"return_means must be True or False, got {return_means!r}.")
        state = estimator._training_state
        xp, device = state.xp, state.device
        rng = make_generator(estimator.random_state if random_state is None
                             else random_state)
        source = random_source(xp, device, int(rng.integers(np.iinfo(np.int32).max)))
        W, b, c = (estimator.components_, estimator.intercept_visible_,
                   estimator.intercept_hidden_)
        rates = xp.asarray(state.data_rates, dtype=W.dtype, device=device)
        means = xp.broadcast_to(rates, (n_samples, W.shape[1]))
        V = bernoulli(source, means)
        for _ in range(n_steps):
            H = bernoulli(source, hidden_probability(xp, W, c, V))
            means = visible_probability(xp, W, b, H)
            V = bernoulli(source, means)
        return xp.asarray(means, copy=True) if return_means else V

    @staticmethod
    def estimate_log_partition(estimator, z_estimator=None):
        check_is_fitted(estimator, "_training_state")
        state = estimator._training_state
        xp, device = state.xp, state.device
        W = estimator.components_
        estimator_ = (estimator.z_estimator_ if z_estimator is None else
                      _resolve_z_estimator(estimator, z_estimator, min(W.shape)))
        params = tuple(to_numpy(p, xp) for p in (
            W, estimator.intercept_visible_, estimator.intercept_hidden_))
        key = (repr(estimator_), tuple(p.tobytes() for p in params))
        cache = estimator._log_z_cache
        if key not in cache:
            dtype = score_dtype(xp, device)
            W, b, c = RBMArrayAPI._params(estimator, dtype)
            if type(estimator_) is Exact:
                cache[key] = exact_log_partition(xp, device, W, b, c)
            else:
                source = random_source(xp, device, state.log_z_seed)
                cache[key] = ais_log_partition(xp, source, W, b, c, state.data_rates,
                                               estimator_)
        return cache[key]


# -- log Z in the input's namespace ---------------------------------------------------
def _logsumexp(xp, values):
    largest = xp.max(values)
    return float(largest) + math.log(float(xp.sum(xp.exp(values - largest))))


def exact_log_partition(xp, device, W, b, c):
    """log Z by enumerating the smaller layer's states, EXACT_CHUNK per product."""
    n_hidden, n_visible = W.shape
    n = min(n_hidden, n_visible)
    if n > EXACT_MAX_UNITS:
        raise ValueError(
            f"Exact log Z enumerates 2**{n} states, more than the 2**{EXACT_MAX_UNITS} "
            "allowed under array API dispatch; use z_estimator='ais'.")
    shifts = xp.arange(n, dtype=xp.int64, device=device)
    partial_sums = []
    for start in range(0, 2**n, EXACT_CHUNK):
        index = xp.arange(start, min(start + EXACT_CHUNK, 2**n), dtype=xp.int64,
                          device=device)
        bits = xp.bitwise_and(xp.bitwise_right_shift(index[:, None], shifts[None, :]), 1)
        states = xp.astype(bits, W.dtype)
        if n_hidden <= n_visible:  # sum over v in closed form
            log_weights = states @ c + xp.sum(softplus(xp, states @ W + b), axis=1)
        else:
            log_weights = -free_energy(xp, W, b, c, states)
        partial_sums.append(_logsumexp(xp, log_weights))
    value = float(np.logaddexp.reduce(np.asarray(partial_sums)))
    return LogZ(value, lower=value, upper=value, method="exact",
                cost={"n_states": 2**n})


def ais_log_partition(xp, source, W, b, c, data_rates, ais):
    """log Z by annealed importance sampling (Neal 2001; Salakhutdinov & Murray 2008)
    from independent visible units at the data's rates, one Gibbs transition per beta.

    The path is p_beta(v) proportional to exp((1 - beta) a.v + beta b.v +
    sum_j softplus(beta (W v + c)_j)), the base biases a the logits of the rates;
    ``ais.n_chains`` chains, ``ais.n_betas`` betas of its fixed schedule (the adaptive
    one is replaced by AIS_BETAS betas of the three-stage schedule).
    """
    dtype = W.dtype
    base = xp.asarray(logit_of_rates(data_rates), dtype=dtype, device=W.device)
    if ais.schedule == "adaptive":
        betas = beta_schedule(max(AIS_BETAS, ais.n_betas), "three_stage")
    else:
        betas = beta_schedule(ais.n_betas, ais.schedule)
    n_chains = ais.n_chains
    V = bernoulli(source, xp.broadcast_to(sigmoid(xp, base), (n_chains, W.shape[1])))
    log_weights = xp.zeros(n_chains, dtype=dtype, device=W.device)
    start = time.perf_counter()
    for previous, beta in zip(betas[:-1], betas[1:]):
        previous, beta = float(previous), float(beta)
        inputs = V @ W.T + c
        visible_term = V @ (b - base)
        log_weights = log_weights + (beta - previous) * visible_term + xp.sum(
            softplus(xp, beta * inputs) - softplus(xp, previous * inputs), axis=1)
        if beta < 1.0:  # a transition at beta (none after the last)
            H = bernoulli(source, sigmoid(xp, beta * inputs))
            V = bernoulli(source, sigmoid(xp, (1 - beta) * base + beta * (H @ W + b)))
    log_weights = to_numpy(log_weights, xp).astype(np.float64)
    largest = log_weights.max()
    weights = np.exp(log_weights - largest)
    # at beta = 0 every hidden unit is free (softplus(0) = log 2 each)
    log_z_base = (float(np.sum(np.logaddexp(0.0, to_numpy(base, xp).astype(np.float64))))
                  + W.shape[0] * math.log(2.0))
    value = log_z_base + largest + math.log(weights.mean())
    std_error = float(weights.std(ddof=1) / weights.mean() / math.sqrt(n_chains)
                      if n_chains > 1 else 0.0)
    converged = ais.target_std_error is None or std_error <= ais.target_std_error
    return LogZ(
        value, std_error, lower=value - 3 * std_error, upper=value + 3 * std_error,
        method="ais",
        cost={"n_chains": n_chains, "n_betas": len(betas),
              "seconds": time.perf_counter() - start},
        converged=converged,
        caveats=() if converged else (
            f"its standard error {std_error:.3g} is above target_std_error "
            f"{ais.target_std_error:g} (under array API dispatch the schedule is "
            "fixed: more chains or betas lower it)",),
    )


__all__ = ["RBMArrayAPI", "ais_log_partition", "exact_log_partition"]
