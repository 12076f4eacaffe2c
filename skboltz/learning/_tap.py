"""TAP (second-order mean-field) negative phase for RBMs (Gabrie, Tramel & Krzakala 2015)."""

from numbers import Integral, Real

import numpy as np

from .._energy import AugmentedRBM, sigmoid
from .._sklearn import Interval
from ._base import LearningStrategy, register


def tap_iterate(weights, visible_bias, hidden_bias, m_v, m_h, n_iter, damping):
    """Damped TAP fixed-point iterations for RBM magnetisations, rows = chains.

    With ``W2 = W ** 2`` (elementwise) and hidden units updated first,

        m_h <- sigma(c + W m_v - (m_h - 1/2) W2 (m_v - m_v^2))
        m_v <- sigma(b + W^T m_h - (m_v - 1/2) W2^T (m_h - m_h^2)),

    each step taken as ``m <- (1 - damping) m + damping * new``. Returns the new
    ``(m_v, m_h)``.
    """
    squared = weights * weights
    for _ in range(n_iter):
        field = m_v @ weights.T + hidden_bias
        field -= (m_h - 0.5) * ((m_v - m_v * m_v) @ squared.T)
        m_h = m_h + damping * (sigmoid(field) - m_h)
        field = m_h @ weights + visible_bias
        field -= (m_v - 0.5) * ((m_h - m_h * m_h) @ squared)
        m_v = m_v + damping * (sigmoid(field) - m_v)
    return m_v, m_h


def tap_statistics(model, m_v, m_h):
    """Negative statistics from TAP magnetisations, in the augmented layout (mean over rows).

    The gradient of the TAP free energy: ``E[v] = m_v``, ``E[h] = m_h`` and
    ``E[h_j v_i] = m_hj m_vi + W_ji m_hj (1 - m_hj) m_vi (1 - m_vi)`` (the Onsager
    correction), averaged over the rows (chains).
    """
    n_rows = m_v.shape[0]
    statistics = model.statistics(model.augment(m_h), model.augment(m_v)) / n_rows
    correction = (m_h * (1 - m_h)).T @ (m_v * (1 - m_v)) / n_rows
    statistics[:-1, :-1] += model.params[:-1, :-1] * correction
    return statistics


@register("tap", "rbm")
class TAP(LearningStrategy):
    """Training through the TAP free energy (Gabrie, Tramel & Krzakala 2015).

    The negative phase is the gradient of the second-order (TAP) approximation of
    log Z at its fixed point: magnetisations ``m_v``, ``m_h`` found by a few damped TAP
    iterations, warm-started from the previous update's fixed point, and
    ``<h v^T> ~ m_h m_v^T + W * (m_h (1 - m_h)) (m_v (1 - m_v))^T``. Deterministic
    given the starting points (no sampling noise); accurate for the weak couplings of
    early training, less so as they grow.

    Parameters
    ----------
    n_chains : int or None, default=None
        Number of magnetisation vectors, started at random training rows and kept from
        update to update (like persistent chains); None uses the estimator's
        ``batch_size``.
    n_iter : int, default=3
        TAP iterations per update.
    damping : float, default=0.5
        Fraction of the step towards the new magnetisations taken per iteration.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz import RBM
    >>> X = (np.random.default_rng(0).random((40, 6)) < 0.3).astype(float)
    >>> rbm = RBM(n_components=4, learning="tap", n_iter=3, random_state=0).fit(X)
    >>> rbm.learning_
    TAP()
    """

    _parameter_constraints = {
        "n_chains": [Interval(Integral, 1, None, closed="left"), None],
        "n_iter": [Interval(Integral, 1, None, closed="left")],
        "damping": [Interval(Real, 0, 1, closed="right")],
    }

    def __init__(self, n_chains=None, n_iter=3, damping=0.5):
        self.n_chains = n_chains
        self.n_iter = n_iter
        self.damping = damping

    def init_state(self, model, data, batch_size, rng):
        n_chains = self.n_chains or batch_size
        rows = data[rng.integers(0, data.shape[0], size=n_chains)]
        rows = rows.toarray() if hasattr(rows, "toarray") else np.asarray(rows)
        m_v = np.clip(rows, 0, 1).astype(model.params.dtype)
        m_h = model.hidden_probability(AugmentedRBM.augment(m_v))[:, :-1]
        return {"m_v": m_v, "m_h": np.ascontiguousarray(m_h)}

    def negative_phase(self, model, positive, state, rng, progress):
        params = model.params
        m_v, m_h = tap_iterate(
            params[:-1, :-1], params[-1, :-1], params[:-1, -1],
            state["m_v"], state["m_h"], self.n_iter, self.damping,
        )
        state["m_v"], state["m_h"] = m_v, m_h
        return tap_statistics(model, m_v, m_h)


__all__ = ["TAP", "tap_iterate", "tap_statistics"]
