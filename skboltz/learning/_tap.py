"""TAP (second-order mean-field) negative phase for RBMs (Gabrie, Tramel & Krzakala 2015)."""

from numbers import Integral, Real

import numpy as np

from ..utils._capabilities import BINARY, RESTRICTED, Requires
from ..utils._energy import sigmoid
from ..models._rbm_energy import RBMLayout
from ..utils._sklearn import Interval
from ._base import RBMLearningStrategy, register


def tap_iterate(weights, visible_bias, hidden_bias, m_v, m_h, max_iter, damping, tol=0.0):
    """Damped TAP fixed-point iterations for RBM magnetisations, rows = chains.

    With ``W2 = W ** 2`` (elementwise) and hidden units updated first,

        m_h <- sigma(c + W m_v - (m_h - 1/2) W2 (m_v - m_v^2))
        m_v <- sigma(b + W^T m_h - (m_v - 1/2) W2^T (m_h - m_h^2)),

    each step taken as ``m <- damping m + (1 - damping) new``, for ``max_iter``
    iterations or until no magnetisation moves more than ``tol``. Returns the new
    ``(m_v, m_h)``.
    """
    squared = weights * weights
    step = 1.0 - damping
    for _ in range(max_iter):
        field = m_v @ weights.T + hidden_bias
        field -= (m_h - 0.5) * ((m_v - m_v * m_v) @ squared.T)
        change_h = step * (sigmoid(field) - m_h)
        m_h = m_h + change_h
        field = m_h @ weights + visible_bias
        field -= (m_v - 0.5) * ((m_h - m_h * m_h) @ squared)
        change_v = step * (sigmoid(field) - m_v)
        m_v = m_v + change_v
        if tol > 0 and max(np.abs(change_h).max(initial=0), np.abs(change_v).max(initial=0)) < tol:
            break
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
    statistics[RBMLayout.weights] += model.params[RBMLayout.weights] * correction
    return statistics


@register("tap")
class TAPGradient(RBMLearningStrategy):
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
    max_iter : int, default=3
        TAP fixed-point iterations per update (warm-started, so a few suffice).
    tol : float, default=0.0
        Stop an update's iterations early when no magnetisation moves more than
        this; 0 always runs ``max_iter``.
    damping : float, default=0.5
        Weight of the old magnetisations in each iteration, in [0, 1):
        ``m <- damping * m + (1 - damping) * new``.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz import RBM
    >>> X = (np.random.default_rng(0).random((40, 6)) < 0.3).astype(float)
    >>> rbm = RBM(n_components=4, learning="tap", n_iter=3, random_state=0).fit(X)
    >>> rbm.learning_
    TAPGradient()
    """

    #: The TAP expansion is that of binary units.
    requires = Requires(units={BINARY}, operations={RESTRICTED})

    _parameter_constraints = {
        "n_chains": [Interval(Integral, 1, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "damping": [Interval(Real, 0, 1, closed="left")],
    }

    def __init__(self, n_chains=None, max_iter=3, tol=0.0, damping=0.5):
        self.n_chains = n_chains
        self.max_iter = max_iter
        self.tol = tol
        self.damping = damping

    def init_state(self, model, X, batch_size, rng):
        n_chains = self.n_chains or batch_size
        rows = X[rng.integers(0, X.shape[0], size=n_chains)]
        rows = rows.toarray() if hasattr(rows, "toarray") else np.asarray(rows)
        m_v = np.clip(rows, 0, 1).astype(model.dtype)
        return {"m_v": m_v, "m_h": model.hidden_probability(m_v)}

    def _negative_statistics(self, model, positive, state, rng, progress):
        view = model.view()
        m_v, m_h = tap_iterate(
            view.weights, view.visible_bias, view.hidden_bias,
            state["m_v"], state["m_h"], self.max_iter, self.damping, self.tol,
        )
        state["m_v"], state["m_h"] = m_v, m_h
        return tap_statistics(model, m_v, m_h)


__all__ = ["TAPGradient", "tap_iterate", "tap_statistics"]
