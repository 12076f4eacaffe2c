"""Learning strategies of deep Boltzmann machines (``skboltz.DBM``)."""

from numbers import Integral, Real

import numpy as np

from ..models._dbm_energy import bottom_up_magnetisations, dbm_mean_field, layer_input
from ..utils._energy import sigmoid
from ..utils._noise import NOISE_DTYPE, logistic_noise, uniform_open
from ..utils._sklearn import Interval, StrOptions
from ._base import DBMLearningStrategy, register, steps_at, validate_steps


def _layer_key(k):
    return f"layer_{k}"


def _chain_layers(state, n_layers):
    """The persistent chains' layers (visible first): even layers hold states, odd
    layers their probabilities given the even ones."""
    return [state[_layer_key(k)] for k in range(n_layers)]


def _draw(probability, rng):
    """Binary states with the given probabilities, in their dtype.

    The noise is float32 whatever the dtype (``NOISE_DTYPE``), as the RBMs' training
    noise: a float32 and a float64 fit make the same draws but within rounding of a
    threshold.
    """
    uniform = uniform_open(rng, probability.size, NOISE_DTYPE).reshape(probability.shape)
    return np.less(uniform, probability).astype(probability.dtype)


@register("mean_field_pcd")
class MeanFieldPCD(DBMLearningStrategy):
    """Mean-field positive phase, persistent chains for the negative phase.

    The learning procedure of Salakhutdinov & Hinton ("Deep Boltzmann machines",
    AISTATS 2009; "An efficient learning procedure for deep Boltzmann machines",
    Neural Computation 2012):

    - **positive phase** (variational): for each minibatch the hidden layers' mean-field
      posterior given the rows, started from the recognition pass (the input from
      below doubled for the layers under the top, standing in for the input from
      above) or from a plain bottom-up pass (``start``), then updated (the odd layers,
      then the even hidden ones) until no magnetisation of a row moves more than
      ``tol``, at most ``max_iter`` updates;
    - **negative phase** (stochastic approximation, i.e. persistent contrastive
      divergence): ``n_chains`` Markov chains that persist across updates (and across
      ``partial_fit`` calls) take ``n_steps`` two-colour block Gibbs sweeps per update
      (the odd layers given the even ones, then the even ones given the odd ones). The
      statistics use the even layers' states and the odd layers' probabilities given
      them, whose products with their neighbours are the exact conditional
      expectations (less noise than the odd layers' states, at no extra cost: the
      next sweep draws the odd layers from these probabilities).

    ``history_`` records, per epoch, ``mean_field_iterations`` (the mean over the
    minibatches of the updates the slowest row needed) and ``mean_field_unconverged``
    (minibatches in which some row stopped at ``max_iter`` still moving).

    Parameters
    ----------
    n_steps : int or (int, int), default=1
        Gibbs sweeps of the persistent chains per update; a pair grows it linearly
        from the first value to the second over ``n_iter``.
    n_chains : int or None, default=None
        Number of persistent chains; None uses the estimator's ``batch_size``.
    max_iter : int, default=30
        Mean-field updates (of every layer) per minibatch at most.
    tol : float, default=1e-4
        A row's mean field has converged when none of its magnetisations moves more
        than this in an update.
    damping : float, default=0.0
        Weight of the old magnetisations in each mean-field update, in [0, 1) (each
        update raises the variational bound without damping).
    start : {"recognition", "bottom_up"}, default="recognition"
        Where the mean field of a minibatch starts (see above).

    References
    ----------
    R. Salakhutdinov and G. Hinton, "Deep Boltzmann machines", AISTATS 2009.
    R. Salakhutdinov and G. Hinton, "An efficient learning procedure for deep
    Boltzmann machines", Neural Computation 24, 2012.
    T. Tieleman, "Training restricted Boltzmann machines using approximations to the
    likelihood gradient", ICML 2008.

    Examples
    --------
    >>> from skboltz import DBM
    >>> from skboltz.learning import MeanFieldPCD
    >>> dbm = DBM(hidden_layer_sizes=(8, 4), learning=MeanFieldPCD(n_steps=5))
    >>> dbm.get_params()["learning__n_steps"]
    5
    """

    _parameter_constraints = {
        "n_steps": [Interval(Integral, 1, None, closed="left"), tuple],
        "n_chains": [Interval(Integral, 1, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "damping": [Interval(Real, 0, 1, closed="left")],
        "start": [StrOptions({"recognition", "bottom_up"})],
    }

    def __init__(self, n_steps=1, n_chains=None, max_iter=30, tol=1e-4, damping=0.0,
                 start="recognition"):
        self.n_steps = n_steps
        self.n_chains = n_chains
        self.max_iter = max_iter
        self.tol = tol
        self.damping = damping
        self.start = start

    def init_state(self, model, X, batch_size, rng):
        validate_steps(self.n_steps)
        n_chains = self.n_persistent_chains(batch_size)
        dtype = model.dtype
        # Visible units drawn at random training rows, hidden layers at draws of the
        # recognition pass from them; the odd layers keep their probabilities.
        rows = X[rng.integers(0, X.shape[0], size=n_chains)]
        rows = rows.toarray() if hasattr(rows, "toarray") else np.asarray(rows)
        layers = bottom_up_magnetisations(rows, model.weights, model.biases, dtype,
                                          doubled=True)
        for k in range(0, len(layers), 2):
            layers[k] = _draw(layers[k], rng)
        for k in range(1, len(layers), 2):
            layers[k] = sigmoid(layer_input(layers, model.weights, model.biases, k))
        state = {_layer_key(k): layer for k, layer in enumerate(layers)}
        state.update(n_mean_field=0, mean_field_iterations=0, mean_field_unconverged=0)
        return state

    def n_persistent_chains(self, batch_size):
        return self.n_chains or batch_size

    def positive_phase(self, model, batch, state, rng):
        layers = bottom_up_magnetisations(batch, model.weights, model.biases, model.dtype,
                                          doubled=self.start == "recognition")
        n_iter, n_unconverged = dbm_mean_field(
            layers, model.weights, model.biases, damping=self.damping,
            max_iter=self.max_iter, tol=self.tol,
        )
        state["n_mean_field"] += 1
        state["mean_field_iterations"] += n_iter
        state["mean_field_unconverged"] += n_unconverged > 0
        return layers

    def negative_phase(self, model, batch, state, rng, progress):
        weights, biases = model.weights, model.biases
        n_layers = len(biases)
        layers = _chain_layers(state, n_layers)
        states = list(layers)  # the odd layers' draws replace their probabilities here
        for _ in range(steps_at(self.n_steps, progress)):
            for k in range(1, n_layers, 2):
                states[k] = _draw(layers[k], rng)
            for k in range(0, n_layers, 2):
                field = layer_input(states, weights, biases, k, layers[0].shape[0])
                np.greater(field, logistic_noise(rng, field.shape, NOISE_DTYPE),
                           out=layers[k])
            for k in range(1, n_layers, 2):
                sigmoid(layer_input(states, weights, biases, k), out=layers[k])
        return layers

    def persistent_chains(self, state):
        return state[_layer_key(0)]

    def pop_diagnostics(self, state):
        n_solves = max(1, state["n_mean_field"])
        diagnostics = {
            "mean_field_iterations": state["mean_field_iterations"] / n_solves,
            "mean_field_unconverged": state["mean_field_unconverged"],
        }
        state.update(n_mean_field=0, mean_field_iterations=0, mean_field_unconverged=0)
        return diagnostics


__all__ = ["MeanFieldPCD"]
