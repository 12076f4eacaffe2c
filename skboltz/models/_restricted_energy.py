"""The restricted model over a pair of layers: its view, packed layout, training form and
annealing chains.

A restricted Boltzmann machine couples a visible layer to a hidden one through one
weight matrix W of shape (n_hidden, n_visible) (the orientation of ``components_``) and
nothing else. Whatever the layers' unit types (:mod:`skboltz.units._layers`), with E_v and
E_h their own energy terms and v' = the visible states as the hidden units see them,

    E(v, h) = E_v(v) - h^T W v' + E_h(h),
    F(v)    = E_v(v) - log_partition_h(W v'),         p(v) = exp(-F(v)) / Z,

and each layer given the other is independent, with its own conditionals. This module
holds the one model of that family and its forms, generic over the layers:

- :class:`RestrictedView`, the read-only view strategies and log Z estimators see;
- :class:`RestrictedLayout`, the named blocks of the packed parameter array;
- :class:`RestrictedTrainingForm`, the parameters packed with a constant unit so that
  one matrix product gives every input and every gradient statistic at once;
- :class:`RestrictedAnnealing`, fast chains of annealed importance sampling over a
  discrete visible layer with the binary hidden layer summed out.

The RBM, the Gaussian RBM and the classification RBM are configurations of these
(``_rbm_energy``, ``_gaussian_rbm_energy``, ``_rbm_classifier_energy``), and so is a
model of categorical or mixed columns. Pure functions of numpy arrays and small
read-only objects; no scikit-learn objects.
"""

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from ..utils._capabilities import (
    ANNEALING,
    BINARY,
    ENUMERATION,
    MEAN_FIELD,
    RESTRICTED,
    Capabilities,
)
from ..utils._energy import ModelView, clipped_rates, sigmoid, sum_log
from ..units._layers import BinaryUnits, Layer
from ._missing import IncompleteRows
from ..utils._noise import Noise

#: The base models of annealing paths a view offers (see ``annealing_base``).
ANNEALING_BASES = ("data", "response", "model")


@functools.cache
def _field_names(view_class):
    """The names of a view dataclass's fields, in order (looked up once per class)."""
    return tuple(item.name for item in dataclasses.fields(view_class))


def _layer_arrays(layer):
    """The parameter arrays of a layer (of its groups, for a layer of groups)."""
    arrays = []
    for value in layer.parameters().values():
        if isinstance(value, np.ndarray):
            arrays.append(value)
        elif isinstance(value, list):  # groups
            for group in value:
                arrays.extend(_layer_arrays(group))
    return arrays


def restricted_capabilities(visible_units, hidden_units):
    """What a restricted model over layers of these classes offers (a
    :class:`~skboltz.views.Capabilities`): the restricted learning rule always; exact
    enumeration and annealing when a layer's states are countable; mean field over
    binary units only."""
    operations = {RESTRICTED}
    if visible_units.discrete or hidden_units.discrete:
        operations |= {ENUMERATION, ANNEALING}
    if visible_units.unit_type == BINARY and hidden_units.unit_type == BINARY:
        operations.add(MEAN_FIELD)
    return Capabilities(
        units=(("visible", visible_units.unit_type), ("hidden", hidden_units.unit_type)),
        operations=operations,
    )


@dataclass(frozen=True, eq=False)
class RestrictedView(ModelView):
    """Read-only view of a restricted Boltzmann machine over a pair of layers.

    The :class:`~skboltz.views.ModelView` of every restricted model: the visible layer
    (binary, Gaussian, softmax groups, or several groups side by side) and the binary
    hidden layer, coupled by ``weights``. Sampler states (for log Z) are the visible
    units when their states are countable, the hidden ones summed out in closed form;
    otherwise (real-valued visible units) the hidden units, the visible ones summed
    out. Exact enumeration lists the states of the smaller countable layer.

    A subclass declares the classes of its layers (``visible_units``,
    ``hidden_units``), from which its capabilities follow; :meth:`of_layers` makes a
    view over any layers of those classes.

    Parameters
    ----------
    weights : ndarray of shape (n_hidden, n_visible)
        Weights W.
    visible : Layer
        The visible layer, with its parameters.
    hidden : Layer
        The hidden layer, with its parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.partition import Exact
    >>> from skboltz.views import BinaryUnits, RestrictedView, SoftmaxUnits
    >>> view = RestrictedView(np.zeros((2, 3)), SoftmaxUnits(np.zeros(3), (3,)),
    ...                       BinaryUnits(np.zeros(2)))
    >>> bool(np.isclose(Exact().estimate(view).value, np.log(3 * 4)))
    True
    """

    weights: np.ndarray
    visible: Layer
    hidden: Layer

    #: The classes of the layers (subclasses name theirs): they decide capabilities.
    visible_units = BinaryUnits
    hidden_units = BinaryUnits
    capabilities = restricted_capabilities(BinaryUnits, BinaryUnits)

    #: The layer class of the rows an estimator's ``X`` holds (what the base asks
    #: about the input: range, clipping, whether a row has a probability).
    input_units = BinaryUnits

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "capabilities" not in vars(cls):
            cls.capabilities = restricted_capabilities(cls.visible_units, cls.hidden_units)
        if "input_units" not in vars(cls):
            cls.input_units = cls.visible_units

    @classmethod
    def of_layers(cls, weights, visible, hidden):
        """A view of this class over ``weights`` and two layers (no copies)."""
        view = object.__new__(cls)
        object.__setattr__(view, "weights", weights)
        object.__setattr__(view, "visible", visible)
        object.__setattr__(view, "hidden", hidden)
        return view

    def _replace(self, **changes):
        """A view of the same class with some fields changed (no copies)."""
        view = object.__new__(type(self))
        for name in _field_names(type(self)):
            object.__setattr__(view, name, changes.get(name, getattr(self, name)))
        return view

    # -- sizes and parameters ----------------------------------------------------------
    @property
    def n_visible(self):
        """Number of visible units."""
        return self.weights.shape[1]

    @property
    def n_hidden(self):
        """Number of hidden units."""
        return self.weights.shape[0]

    @property
    def n_units(self):
        """Number of units, visible and hidden."""
        return self.n_visible + self.n_hidden

    @property
    def temperature(self):
        """The temperature T (1)."""
        return 1.0

    @property
    def dtype(self):
        """Floating-point type of the parameters."""
        return self.weights.dtype

    @property
    def visible_bias(self):
        """The visible layer's biases."""
        return self.visible.bias

    @property
    def hidden_bias(self):
        """The hidden layer's biases."""
        return self.hidden.bias

    def parameter_arrays(self):
        """Return every parameter array of the model, in field order.

        What a digest of the parameters reads (a layer's arrays, the weights, ...).

        Returns
        -------
        arrays : list of ndarray
            The arrays, not copies.
        """
        arrays = []
        for name in _field_names(type(self)):
            value = getattr(self, name)
            if isinstance(value, Layer):
                arrays.extend(_layer_arrays(value))
            elif isinstance(value, np.ndarray):
                arrays.append(value)
        return arrays

    def astype(self, dtype):
        return self._replace(**{
            name: (value.astype(dtype) if isinstance(value, Layer)
                   else np.asarray(value).astype(dtype))
            for name, value in ((name, getattr(self, name))
                                for name in _field_names(type(self)))
        })

    # -- which layer the samplers of log Z keep ----------------------------------------
    @property
    def _state_is_visible(self):
        return self.visible.discrete

    @property
    def sampler_state(self):
        """What a log Z sampler's state holds: "visible" or "hidden"."""
        return "visible" if self._state_is_visible else "hidden"

    @property
    def n_state_units(self):
        """Units a sampler state holds (the other layer is summed out)."""
        return self.n_visible if self._state_is_visible else self.n_hidden

    # -- conditionals and energies -------------------------------------------------
    def _seen_weights(self):
        """W as the hidden units see the visible states (W / sigma^2 for Gaussian
        visible units)."""
        return self.visible.seen_weights(self.weights)

    def hidden_probability(self, V):
        """Compute P(h = 1 | v) for each row of visible states.

        Parameters
        ----------
        V : {ndarray, sparse matrix} of shape (n_rows, n_visible)
            Visible rows.

        Returns
        -------
        probability : ndarray of shape (n_rows, n_hidden)
            The hidden units' conditional probabilities of being on.
        """
        return self.hidden.mean(V @ self._seen_weights().T)

    def visible_mean(self, H):
        """Compute E[v | h] for each row of hidden states.

        Parameters
        ----------
        H : ndarray of shape (n_rows, n_hidden)
            Hidden states (or probabilities, for a mean-field reconstruction).

        Returns
        -------
        mean : ndarray of shape (n_rows, n_visible)
            The visible units' conditional means (P(v = 1 | h) for binary units).
        """
        return self.visible.mean(H @ self.weights)

    def visible_probability(self, H):
        """Compute P(v_i = 1 | h) for each row of hidden states.

        For binary visible units; for others, the conditional means.

        Parameters
        ----------
        H : ndarray of shape (n_rows, n_hidden)
            Hidden states (or probabilities).

        Returns
        -------
        probability : ndarray of shape (n_rows, n_visible)
            The visible units' conditional probabilities of being on.
        """
        return self.visible_mean(H)

    def sample_hidden(self, V, rng):
        """Draw hidden states from P(h | v) for each visible row.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_visible)
            Visible rows.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        H : ndarray of shape (n_rows, n_hidden)
            Hidden states.
        """
        return self.hidden.sample(V @ self._seen_weights().T, rng)

    def sample_visible(self, H, rng):
        """Draw visible rows from p(v | h) for each row of hidden states.

        Parameters
        ----------
        H : ndarray of shape (n_rows, n_hidden)
            Hidden states.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        V : ndarray of shape (n_rows, n_visible)
            Visible rows.
        """
        return self.visible.sample(H @ self.weights, rng)

    def free_energy(self, V):
        return self.visible.energy(V) - self.hidden.log_partition(
            np.asarray(V @ self._seen_weights().T), overwrite=True)

    def energy(self, V, H):
        """Compute the joint energy E(v, h) of paired rows.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_visible)
            Visible rows.
        H : ndarray of shape (n_rows, n_hidden)
            Hidden states, one per row of ``V``.

        Returns
        -------
        energy : ndarray of shape (n_rows,)
            E(v, h) of each pair.
        """
        coupling = np.einsum("nj,nj->n", H @ self._seen_weights(), V)
        return -coupling + self.visible.energy(V) + self.hidden.energy(H)

    def log_unnormalized(self, S):
        if self._state_is_visible:
            return -self.free_energy(S)
        view = self if self.dtype == np.float64 else self.astype(np.float64)
        H = np.asarray(S, dtype=np.float64)
        return view.visible.log_partition(H @ view.weights, overwrite=True,
                                          add_to=-view.hidden.energy(H))

    def gibbs_step(self, S, rng):
        if self._state_is_visible:
            return self.sample_visible(self.sample_hidden(S, rng), rng)
        return self.sample_hidden(self.sample_visible(S, rng), rng)

    # -- inference: what the estimators' transform, reconstruct, gibbs and sample use --
    def hidden_marginals(self, V):
        return self.hidden_probability(V)

    def reconstruct(self, V):
        return self.visible_mean(self.hidden_probability(V))

    def visible_gibbs_step(self, V, rng):
        return self.sample_visible(self.sample_hidden(V, rng), rng)

    def draw_samples(self, n_samples, n_steps, start, rng, means=False):
        # Chains from independent visible units at ``start`` (the data's rates or
        # means); with means, the last step's h gives E[v | h] instead of a draw.
        start = np.broadcast_to(np.asarray(start).astype(self.dtype),
                                (n_samples, self.n_visible))
        if means and n_steps == 0:
            return start.copy()
        V = self.visible.draw_independent(start, rng)
        for _ in range(n_steps - 1 if means else n_steps):
            V = self.visible_gibbs_step(V, rng)
        if means:
            return self.visible_mean(self._last_hidden(V, rng)).astype(self.dtype,
                                                                      copy=False)
        return V

    def incomplete_rows(self, V, start=None):
        """Return what the model says of rows with missing entries (NaN).

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_visible)
            Visible rows, NaN in every unit of a missing entry (a unit, or a whole
            softmax group).
        start : ndarray of shape (n_visible,) or None, default=None
            Means of the missing units where mean field and chains start.

        Returns
        -------
        rows : skboltz.models._missing.IncompleteRows
            What the model says of them: log p*(v_o) (exact, or estimated with a
            standard error), P(h | v_o), E[v | v_o] and draws of the missing entries
            (see the module ``skboltz.models._missing``).
        """
        return IncompleteRows(self, V, start)

    def _last_hidden(self, V, rng):
        """The hidden draw a chain's last step makes from ``V`` (``draw_samples``)."""
        return self.sample_hidden(V, rng)

    # -- annealing -----------------------------------------------------------------------
    def _split_base(self, base_bias):
        """The base model's biases of the visible and the hidden layer (0 where
        ``base_bias`` stops short), float64."""
        base_bias = np.asarray(base_bias, dtype=np.float64)
        if not self._state_is_visible:
            return np.zeros(self.n_visible), base_bias[: self.n_hidden]
        hidden = base_bias[self.n_visible :]
        return base_bias[: self.n_visible], hidden if hidden.size else np.zeros(self.n_hidden)

    def interpolate(self, beta, base_bias):
        # The joint distribution p_A(v, h)^(1 - beta) p(v, h)^beta up to Z, with p_A
        # the independent model with biases base_bias: the weights scaled by beta and
        # the biases moved towards the base's. With zero hidden base biases: the path
        # of Salakhutdinov & Murray (2008).
        base_visible, base_hidden = self._split_base(base_bias)
        visible = self.visible
        if self._state_is_visible:
            visible = visible.replace(
                bias=(1.0 - beta) * base_visible + beta * self.visible_bias)
        return self._replace(
            weights=beta * self.weights, visible=visible,
            hidden=self.hidden.replace(
                bias=(1.0 - beta) * base_hidden + beta * self.hidden_bias),
        )

    def base_bias_from_rates(self, data_rates):
        state = self.visible if self._state_is_visible else self.hidden
        if data_rates is None:
            return np.zeros(state.n_units)
        return np.asarray(state.base_bias_from_rates(data_rates), dtype=np.float64)

    def draw_base_states(self, base_bias, n_rows, rng):
        """Draw states of the independent base model of the state units.

        The state units' layer with biases ``base_bias``. An optional member of the view protocol: samplers of log Z that start from the
        base model use it when present (otherwise independent binary units).

        Parameters
        ----------
        base_bias : ndarray of shape (n_state_units,)
            Biases of the base model.
        n_rows : int
            Number of states.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        S : ndarray of shape (n_rows, n_state_units)
            The states.
        """
        state = self.visible if self._state_is_visible else self.hidden
        base = state.replace(bias=np.asarray(base_bias, dtype=np.float64))
        means = base.mean(np.zeros((1, base.n_units)))
        return base.draw_independent(np.broadcast_to(means, (n_rows, base.n_units)), rng)

    def base_log_partition(self, base_bias):
        base_visible, base_hidden = self._split_base(base_bias)
        visible = self.visible
        if self._state_is_visible:
            visible = visible.replace(bias=base_visible)
        return (visible.independent_log_partition()
                + self.hidden.replace(bias=base_hidden).independent_log_partition())

    def annealing_base(self, data_rates, kind="data"):
        """Return the biases of an independent base model for annealing, all units.

        ``kind="data"``: visible units matching the clipped data rates, hidden units 0
        (uniform). ``"response"``: the same visible units, hidden units at their input
        ``W r + c`` from the clipped data rates r (r = 1/2 without data).
        ``"model"``: the model's own biases (b, c), so that the path anneals the
        weights only. An optional member of the view protocol:
        :class:`~skboltz.partition.AIS` uses it when present.

        Parameters
        ----------
        data_rates : ndarray of shape (n_visible,) or None
            Mean of each visible unit over the training data.
        kind : {"data", "response", "model"}, default="data"
            Which base model.

        Returns
        -------
        base_bias : ndarray of shape (n_units,) or None
            The base model's biases, visible units first, in float64; None when the
            samplers keep the hidden units (their one base model is then
            :meth:`base_bias_from_rates`).
        """
        if not self._state_is_visible:
            return None
        if kind not in ANNEALING_BASES:
            raise ValueError(f"kind must be one of {ANNEALING_BASES}, got {kind!r}.")
        if kind == "model":  # the model's own biases: only the couplings anneal
            return np.concatenate([self.visible_bias, self.hidden_bias]).astype(np.float64)
        base = np.zeros(self.n_units)
        base[: self.n_visible] = self.base_bias_from_rates(data_rates)
        if kind == "response" and self.n_hidden:
            rates = (np.full(self.n_visible, 0.5) if data_rates is None
                     else clipped_rates(data_rates))
            base[self.n_visible :] = (np.asarray(self.weights, dtype=np.float64) @ rates
                                      + self.hidden_bias)
        return base

    @property
    def anneals_several_bases(self):
        """Whether its annealing chains take one base model per chain.

        AIS then runs paths from several base models in the same batch.
        """
        return self._fast_annealing

    @property
    def _fast_annealing(self):
        return self._state_is_visible and self.hidden.unit_type == BINARY

    def annealing_from_rows(self, rows, n_chains, rng, dtype=np.float32):
        """Return AIS chains from a mixture of models centred on training rows.

        The chains (``MixtureAnnealing``) anneal to this model from a mixture of
        independent models, one centred on each training row.

        An optional member of the view protocol: :class:`~skboltz.partition.AIS`
        anneals from its kept training rows when the view offers it (binary visible
        and hidden units); None otherwise.

        Parameters
        ----------
        rows : ndarray of shape (n_rows, n_visible)
            Training rows, values in [0, 1].
        n_chains : int
            Number of annealing chains.
        rng : numpy.random.Generator
            Source of the chains' random numbers.
        dtype : float32 or float64, default=float32
            The dtype of the chains' states.

        Returns
        -------
        chains : MixtureAnnealing or None
            The chains, or None when the view cannot anneal from rows.
        """
        if not (self._fast_annealing and self.visible.unit_type == BINARY):
            return None
        return MixtureAnnealing(self, rows, n_chains, rng, dtype)

    def annealing(self, base_bias, n_chains, rng, dtype=np.float32):
        """Return annealed-importance-sampling chains from a base model to this one.

        An optional member of the view protocol: :class:`~skboltz.partition.AIS`
        runs these chains when they are not None (otherwise :meth:`interpolate`,
        :meth:`log_unnormalized` and :meth:`gibbs_step` in float64). Offered for
        countable visible units with the binary hidden layer summed out.

        Parameters
        ----------
        base_bias : ndarray of shape (n_units,)
            Biases of the independent base model, visible units first.
        n_chains : int
            Number of chains.
        rng : numpy.random.Generator
            Seeds the chains' random numbers.
        dtype : float32 or float64, default=float32
            Type of the elementwise work (log weights are accumulated in float64).

        Returns
        -------
        chains : RestrictedAnnealing or None
            With ``start_from_base``, ``set_states``, ``add_log_ratio`` and
            ``transition``.
        """
        if not self._fast_annealing:
            return None
        return RestrictedAnnealing(self, base_bias, n_chains, rng, dtype)

    # -- mean field ----------------------------------------------------------------
    def coupling_matrix(self):
        self._check_mean_field()
        n_visible = self.n_visible
        coupling = np.zeros((self.n_units, self.n_units), dtype=np.float64)
        coupling[:n_visible, n_visible:] = self.weights.T
        coupling[n_visible:, :n_visible] = self.weights
        return coupling

    def bias_vector(self):
        self._check_mean_field()
        return np.concatenate([self.visible_bias, self.hidden_bias]).astype(np.float64)

    def _check_mean_field(self):
        if MEAN_FIELD not in self.capabilities.operations:
            raise NotImplementedError(
                "Mean-field log Z estimators need binary units; this model has "
                f"{self.capabilities.describe_units()}. Use z_estimator='exact' (small "
                "models) or 'ais'."
            )

    # -- exact enumeration ---------------------------------------------------------
    def _enumerates_visible(self):
        """Whether exact enumeration lists the visible states (else the hidden ones):
        the countable layer with fewer states, the visible one on a tie."""
        visible, hidden = self.visible, self.hidden
        return not hidden.discrete or (visible.discrete and visible.n_bits <= hidden.n_bits)

    @property
    def n_enumerated_units(self):
        """Binary digits of the states exact enumeration lists (the smaller layer's)."""
        return (self.visible if self._enumerates_visible() else self.hidden).n_bits

    def enumerate_log_weights(self, chunk_size):
        view = self.astype(np.float64)
        if self._enumerates_visible():  # -F(v): the hidden layer summed out
            return view.hidden.enumeration_log_weights(view.visible,
                                                       view._seen_weights().T, chunk_size)
        return view.visible.enumeration_log_weights(view.hidden, view.weights, chunk_size)

    def with_fewer_enumerated_units(self, n_units):
        """Return the view with only the first ``n_units`` units of the enumerated layer.

        An optional member of the view protocol: :class:`~skboltz.partition.Exact`
        times the enumeration of this smaller model to forecast its own cost.

        Parameters
        ----------
        n_units : int
            Units of the smaller layer to keep.

        Returns
        -------
        view : RestrictedView
            A view over slices of the same arrays.
        """
        if self._enumerates_visible():
            return self._replace(weights=self.weights[:, :n_units],
                                 visible=self.visible.replace(bias=self.visible_bias[:n_units]))
        return self._replace(weights=self.weights[:n_units],
                             hidden=self.hidden.replace(bias=self.hidden_bias[:n_units]))

    def _training_form(self):
        """The training form of these parameters (a new :class:`RestrictedTrainingForm`)."""
        return RestrictedTrainingForm.from_view(self)


class RestrictedLayout:
    """Named blocks of a restricted model's packed parameters (and of its velocity).

    The array has shape (n_extra + n_hidden + 1, n_visible + 1): a row per extra
    parameter of the visible layer (a Gaussian layer's log variances) above the
    blocks every restricted model has::

        [ extra rows (n_visible each)       | unused (0)                            ]
        [ W  (n_hidden, n_visible)          | c  hidden biases                      ]
        [ b  visible biases                 | the constant units' coupling (not learnt)]

    Each block is an index: ``params[layout.weights]`` is W, a view. States in the
    training form carry a trailing constant unit the same way (``rows[layout.units]``).

    Parameters
    ----------
    extra : tuple of str, default=()
        Names of the visible layer's extra parameters (each an attribute naming its
        row, e.g. ``layout.log_variance``).
    columns : dict or None, default=None
        For an extra parameter of some of the visible units only (a Gaussian group
        among the groups of a mixed table): its name -> the slice of visible columns
        it spans (the rest of its row is unused, 0). By default every visible unit.
    """

    #: Of rows of states: the units, and the trailing constant unit.
    units = np.s_[..., :-1]
    constant_unit = np.s_[..., -1]
    #: The coupling of the two constant units (``RestrictedTrainingForm.ALWAYS_ON``).
    constant = np.s_[-1, -1]
    visible_bias = np.s_[-1, :-1]
    #: The last row: b and the constant units' coupling.
    visible_row = np.s_[-1]
    #: The blocks below, without extra rows (an instance with extra rows moves them).
    extra = ()
    weights = np.s_[:-1, :-1]
    hidden_bias = np.s_[:-1, -1]
    rbm = np.s_[0:]
    visible_columns = np.s_[:, :-1]

    def __init__(self, extra=(), columns=None):
        n = len(extra)
        self.extra = tuple(extra)
        columns = columns or {}
        for row, name in enumerate(self.extra):
            span = columns.get(name)
            setattr(self, name, np.s_[row, :-1] if span is None else np.s_[row, span])
        #: The extra rows' last entries (0; so are the entries outside an extra
        #: parameter's ``columns``, which no update moves).
        self.unused = np.s_[:n, -1]
        #: The rows below the extra ones: an array in the layout without extras.
        self.rbm = np.s_[n:]
        self.weights = np.s_[n:-1, :-1]
        self.hidden_bias = np.s_[n:-1, -1]
        #: What a row of hidden states (with its constant unit) multiplies into
        #: visible inputs: W over b.
        self.visible_columns = np.s_[n:, :-1]

    @classmethod
    def of_layer(cls, visible):
        """The layout of a restricted model over the visible layer ``visible``: a row
        per extra parameter, spanning the columns the layer says it belongs to."""
        extra = visible.extra_parameters
        return cls(extra, {name: visible.extra_columns(name) for name in extra})

    def pack(self, weights, visible_bias, hidden_bias, dtype, **extra):
        """A new packed array holding the blocks (the constant coupling 0)."""
        weights = np.asarray(weights)
        params = np.zeros((len(self.extra) + weights.shape[0] + 1, weights.shape[1] + 1),
                          dtype=dtype)
        params[self.weights] = weights
        params[self.hidden_bias] = hidden_bias
        params[self.visible_bias] = visible_bias
        for name in self.extra:
            params[getattr(self, name)] = extra[name]
        return params


class RestrictedTrainingForm:
    """Training form of a restricted model: all parameters in one packed array.

    The blocks of ``params`` are named by its :class:`RestrictedLayout`. States carry
    a trailing constant unit, so a single matrix product gives W v' + c, one gives
    W^T h + b and one gives every gradient statistic at once (sum h v^T, sum h, sum
    v): few, large numpy calls, which is what makes small minibatches fast. The layers
    are bound to the packed array's blocks and do the unit-type work on the products
    (draws, means, the extra rows of the statistics).

    The two constant units are ordinary units coupled by the corner weight
    ``params[layout.constant] = ALWAYS_ON``: given each other they are on with
    probability sigmoid(ALWAYS_ON + ...) = 1, so products over whole rows (constant
    column included) sample and transform them like any unit. Every array stays
    contiguous, which matters as much as the number of calls. The constructor sets the
    corner; it is not part of the model (``view`` and ``energy`` leave it out).

    ``beta`` arguments are per-row inverse temperatures, shape (n_rows, 1), used by
    parallel tempering: p_beta(v, h) proportional to exp(-beta E(v, h)), except for
    the terms a layer keeps untempered (a Gaussian layer's quadratic term, whose
    tempered family is then a proper distribution at every beta).

    Parameters
    ----------
    params : ndarray
        The packed parameters (the constant coupling is set here).
    visible, hidden : Layer
        Layers of the model's unit types and structure; the form binds copies of them
        to the packed array's blocks.
    view_class : type, default=RestrictedView
        The class of the views :meth:`view` returns.
    layout : RestrictedLayout, optional
        The blocks; by default the visible layer's extra parameters above W.
    """

    #: Coupling of the two constant units: far beyond any input the other weights give
    #: (sigmoid is 1 in float64 above ~40), yet well below where training is declared
    #: diverged (1e6).
    ALWAYS_ON = 1e5

    def __init__(self, params, visible, hidden, view_class=RestrictedView, layout=None):
        self.layout = layout = layout or RestrictedLayout.of_layer(visible)
        params[layout.constant] = self.ALWAYS_ON
        if layout.extra:
            params[layout.unused] = 0
        self.params = params
        self.n_hidden = params.shape[0] - 1 - len(layout.extra)
        self.n_visible = params.shape[1] - 1
        self.view_class = view_class
        #: Whether ``statistics`` computes the extra rows (else they are left 0).
        self.learn_extra = True
        self._visible_kind, self._hidden_kind = visible, hidden
        #: The rows a hidden state (with its constant unit) multiplies into visible
        #: fields.
        self.visible_rows = params[layout.rbm] if layout.extra else params

    @classmethod
    def from_view(cls, view):
        """The training form of a :class:`RestrictedView`'s parameters (a new array)."""
        layout = RestrictedLayout.of_layer(view.visible)
        extra = {name: view.visible.training_parameter(name) for name in layout.extra}
        params = layout.pack(view.weights, view.visible_bias, view.hidden_bias, view.dtype,
                             **extra)
        return cls(params, view.visible, view.hidden, type(view), layout)

    # The layers are bound to the packed array's blocks on first use: a form is made
    # for every partial_fit call and every view of the training state (a partial_fit
    # on one minibatch made four), most of which never draw.
    @functools.cached_property
    def visible(self):
        """The visible layer, bound to the packed array's blocks."""
        p, layout = self.params, self.layout
        return self._visible_kind.replace(
            bias=p[layout.visible_bias],
            **{name: p[getattr(layout, name)] for name in layout.extra})

    @functools.cached_property
    def hidden(self):
        """The hidden layer, bound to the packed array's blocks."""
        return self._hidden_kind.replace(bias=self.params[self.layout.hidden_bias])

    @functools.cached_property
    def hidden_coupling(self):
        """The rows a visible state (with its constant unit) multiplies into hidden
        fields: ``visible_rows`` as the hidden units see the visible states."""
        return self.visible.seen_rows(self.visible_rows, self)

    def refresh(self):
        """Recompute what derives from the parameters (call it after changing
        ``params`` in place through its extra rows, e.g. a Gaussian layer's variances)."""
        for name in ("visible", "hidden", "hidden_coupling"):
            self.__dict__.pop(name, None)

    @property
    def auto_negative_visible(self):
        """What ``negative_visible="auto"`` of the sampling strategies means here."""
        return self._visible_kind.auto_negative_visible  # no binding needed

    def view(self):
        """The view of the current parameters (no copies)."""
        p, layout = self.params, self.layout
        return self.view_class.of_layers(p[layout.weights], self.visible.for_view(),
                                         self.hidden.for_view())

    @staticmethod
    def augment(X):
        """Append the constant unit to rows of ``X`` (dense)."""
        out = np.empty((X.shape[0], X.shape[1] + 1), dtype=X.dtype)
        out[..., :-1] = X
        out[..., -1] = 1
        return out

    def chains_from_rows(self, rows, rng):
        """Augmented visible chains started from data rows (the visible layer's
        ``write_states``: binary draws with the rows as means, real values as they
        are, one category per group)."""
        rows = np.asarray(rows)
        chains = self.empty_visible(rows.shape[0])
        chains[..., -1] = 1
        self.visible.write_states(rows, rng, chains[..., :-1])
        return chains

    def empty_visible(self, n_rows):
        """Uninitialised augmented visible rows."""
        return np.empty((n_rows, self.n_visible + 1), dtype=self.params.dtype)

    def empty_hidden(self, n_rows):
        """Uninitialised augmented hidden rows."""
        return np.empty((n_rows, self.n_hidden + 1), dtype=self.params.dtype)

    # np.dot rather than matmul: same BLAS call, ~0.6 us less overhead at batch 10.
    # ``out`` must be C-contiguous (np.dot refuses anything else).
    def hidden_input(self, V, out=None):
        """Fields W v' + c of the hidden units (and a huge one of the constant unit)."""
        return np.dot(V, self.hidden_coupling.T, out=out)

    def visible_input(self, H, out=None):
        """Fields W^T h + b of the visible units (and a huge one of the constant unit)."""
        return np.dot(H, self.visible_rows, out=out)

    def hidden_probability(self, V):
        """P(h = 1 | v) for augmented rows ``V``; the constant unit comes out as 1."""
        return self.hidden.mean_of_fields(self.hidden_input(V))

    def visible_probability(self, H):
        """The visible means given augmented rows ``H`` (P(v = 1 | h) for binary
        units); the constant unit comes out as 1."""
        return self.visible.mean_of_fields(self.visible_input(H))

    def draw_hidden(self, V, noise, out, beta=None):
        """Fill augmented hidden rows ``out`` with a draw from P(h | v) (at ``beta``)."""
        x = np.dot(V, self.hidden_coupling.T, out=out)
        if beta is None:  # called every update: the short path
            return self.hidden.draw_fields(x, noise)
        x *= beta
        return self.hidden.draw_fields(x, noise, tempered=True)

    def draw_hidden_from_input(self, x, noise, out):
        """Fill augmented hidden rows ``out`` with a draw from P(h | v) given the hidden
        fields ``x`` of v (as :meth:`draw_hidden` draws from the fields it computes)."""
        return self.hidden.draw_fields(x, noise, out)

    def draw_visible(self, H, noise, out, beta=None):
        """Fill augmented visible rows ``out`` with a draw from p(v | h) (at ``beta``)."""
        x = np.dot(H, self.visible_rows, out=out)
        if beta is None:
            return self.visible.draw_fields(x, noise)
        if self.visible.tempers_bias:
            x *= beta
        else:  # b + beta W^T h (whole rows: contiguous, cheaper)
            bias = self.params[self.layout.visible_row]
            x -= bias
            x *= beta
            x += bias
        return self.visible.draw_fields(x, noise, tempered=True)

    # The two below run in training, under np.errstate(over="ignore").
    def visible_mean(self, H, out):
        """Fill augmented visible rows ``out`` with the mean of v given h (the
        constant unit comes out as 1)."""
        return self.visible.mean_of_fields(np.dot(H, self.visible_rows, out=out))

    def draw_visible_and_mean(self, H, noise, out, mean):
        """Fill ``out`` with a draw from p(v | h) and ``mean`` with its mean: one
        product for both (the draw is the one :meth:`draw_visible` makes)."""
        x = np.dot(H, self.visible_rows, out=mean)
        return self.visible.draw_fields_and_mean(x, noise, out)

    def energy(self, V, H):
        """The tempered part of E(v, h) of paired augmented rows (the constant units'
        coupling left out): all of it but the terms a layer keeps untempered."""
        p, layout, units = self.params, self.layout, RestrictedLayout.units
        hidden = H[units]
        if self.visible.tempers_bias:  # W^T h + b, through the constant unit of H
            coupled = H @ p[layout.visible_columns]
        else:
            coupled = hidden @ self.hidden_coupling[layout.units][:-1]
        return (-np.einsum("nj,nj->n", coupled, V[units])
                - hidden @ p[layout.hidden_bias])

    def reconstruction_error(self, X):
        """Mean squared error of the mean-field reconstruction E[v | P(h | x)] of rows X."""
        X = self.augment(X.astype(self.params.dtype, copy=False))
        reconstruction = self.visible_probability(self.hidden_probability(X))
        reconstruction -= X
        return float(np.mean(np.square(reconstruction[RestrictedLayout.units]),
                             dtype=np.float64))

    def statistics(self, H, V, means=False, weights=None):
        """Sums over rows of the update statistics for augmented rows, shaped like
        ``params``: h v^T, h and v in the blocks of W, c and b, and the visible
        layer's extra rows (a Gaussian layer's log-variance gradient).

        ``means`` says that the rows of ``V`` are means of v given some h rather than
        states; the blocks of W, c and b are linear in v, so they are the same either
        way (an extra row may not be). ``weights`` (one per row, or None) makes the
        sums weighted: each row counts ``weights[i]`` times, as in the data's
        statistics of a weighted fit (:mod:`skboltz.utils._weights`).
        """
        layout = self.layout
        if weights is not None:  # h's rows carry the weights into every product
            weights = np.asarray(weights, dtype=H.dtype)
            H = H * weights[:, None]
        if not layout.extra:
            return H.T @ V
        out = np.empty((self.params.shape[0], V.shape[1]), dtype=np.result_type(H, V))
        products = out[layout.rbm]
        np.dot(H.T, V, out=products)
        out[layout.unused] = 0
        extra = out[: len(layout.extra), :-1]
        if not self.learn_extra:
            extra[...] = 0
            return out
        self.visible.extra_statistics(extra, V[RestrictedLayout.units],
                                      self.params[layout.weights],
                                      products[:-1, :-1], means,
                                      **({} if weights is None else {"row_weights": weights}))
        return out

    # -- rows with missing entries -----------------------------------------------------
    def fill_missing(self, V, missing, noise, n_steps=1):
        """Block Gibbs steps on augmented rows with their observed units clamped.

        Each step draws h from P(h | v), then the missing units from p(v | h) (whole
        entries: a softmax group is drawn as one), in place: the positive phase of
        rows with missing entries, whose completions are states of the model given
        the observed entries.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_visible + 1)
            Augmented visible rows: the observed values, and the current completions
            (or means, to start from) at the missing units.
        missing : ndarray of shape (n_rows, n_visible), dtype=bool
            The missing units.
        noise : skboltz.utils._noise.Noise
            The buffered random streams.
        n_steps : int, default=1
            Gibbs steps.

        Returns
        -------
        V : ndarray of shape (n_rows, n_visible + 1)
            The rows, completed in place.
        """
        H = self.empty_hidden(V.shape[0])
        drawn = self.empty_visible(V.shape[0])
        units = V[RestrictedLayout.units]
        for _ in range(n_steps):
            self.draw_hidden(V, noise, H)
            self.draw_visible(H, noise, drawn)
            np.copyto(units, drawn[RestrictedLayout.units], where=missing)
        return V


#: Integer views that reach the sign bit of float32 / float64 numbers.
_SIGN_BITS = {
    np.dtype(np.float32): (np.int32, np.int32(-(2**31))),
    np.dtype(np.float64): (np.int64, np.int64(-(2**63))),
}

#: Ratios (1 + exp(-|y'|)) / (1 + exp(-|y|)) lie in (1/2, 2): a product of 64 of them
#: stays well inside the float32 range, so one logarithm serves 64 hidden units.
_RATIO_FACTORS = 64


class RestrictedAnnealing:
    """The chains of annealed importance sampling (AIS) on a restricted model whose
    binary hidden layer is summed out.

    The path runs from an independent model with biases ``base_bias`` (a over the
    visible, d over the hidden units) at beta = 0 to the model at beta = 1, with the
    hidden units summed out:

        log p*_beta(v) = ((1 - beta) a + beta b) . v
                         + sum_j softplus(beta (W v + c)_j + (1 - beta) d_j).

    The states are the visible units of ``n_chains`` chains, of any countable type
    whose energy is linear in the states (binary units, softmax groups): the visible
    layer draws them given their fields. :meth:`add_log_ratio` adds
    ``log p*_beta'(v) - log p*_beta(v)`` of the current states to float64 log weights;
    :meth:`transition` makes one block-Gibbs step v -> h -> v at a beta. One matrix
    product W v serves both the weight increment and the hidden draw of the following
    transition, and so do the exponentials: with y the hidden inputs,
    ``softplus(y) = (y + |y|) / 2 + log(1 + exp(-|y|))``, the logarithms are taken of
    products of 64 ratios at once (:func:`sum_log`), and ``1 + exp(-|y|)`` also gives
    the hidden draw (``u (1 + exp(-|y|)) < 1`` has probability sigmoid(|y|)). Units
    are rows and chains columns, so the reductions over units run along long rows.
    The elementwise work is in ``dtype`` (float32 by default: each increment carries
    rounding errors of about 1e-6 nats, the transitions' probabilities relative
    errors of 1e-7), the log weights are accumulated in float64.

    Several base models can share one set of chains: with ``base_bias`` of shape
    (n_chains, n_units) chain k starts from, and is annealed from, the base model of
    row k (one matrix product serves all of them).

    Parameters
    ----------
    view : RestrictedView
    base_bias : ndarray of shape (n_units,) or (n_chains, n_units)
        Biases of the base model, visible units first; one row per chain for
        chains from several base models.
    n_chains : int
    rng : numpy.random.Generator
        Seeds the chains' own (SFC64) stream of random numbers.
    dtype : float32 or float64, default=float32
    """

    def __init__(self, view, base_bias, n_chains, rng, dtype=np.float32):
        dtype = np.dtype(dtype)
        weights = np.asarray(view.weights, dtype=np.float64)
        n_hidden, n_visible = weights.shape
        base_bias = np.asarray(base_bias, dtype=np.float64)
        if base_bias.ndim == 2:  # one base per chain: columns, as the states
            base_visible = base_bias[:, :n_visible].T
            base_hidden = (base_bias[:, n_visible:].T if base_bias.shape[1] > n_visible
                           else np.zeros((n_hidden, n_chains)))
        else:
            base_visible, base_hidden = (part[:, None] for part in view._split_base(base_bias))
        visible_bias = np.asarray(view.visible_bias, dtype=np.float64)
        hidden_bias = np.asarray(view.hidden_bias, dtype=np.float64)
        self.dtype = dtype
        self.n_chains = n_chains
        self._layer = view.visible
        self._weights = np.ascontiguousarray(weights, dtype=dtype)
        self._weights_t = np.ascontiguousarray(weights.T, dtype=dtype)
        # Hidden inputs on the path: y_beta = beta P + d with P = W v + c - d (a column,
        # or one column per chain).
        self._shift = (hidden_bias[:, None] - base_hidden).astype(dtype)
        self._base_hidden = base_hidden.astype(dtype) if np.any(base_hidden) else None
        # The visible term's slope and the column sums of W (for sum_j P_j): the parts
        # of the increment linear in v, in float64; with one base per chain, the slope
        # is a matrix (visible units x chains).
        slope = visible_bias[:, None] - base_visible
        self._slope = slope.astype(dtype) if slope.shape[1] > 1 else None
        self._linear = np.stack([slope[:, 0] if self._slope is None else np.zeros(n_visible),
                                 weights.sum(axis=0)])
        self._linear_offset = self._shift.astype(np.float64).sum(axis=0)
        self._coefficients = np.empty(n_visible, dtype=dtype)
        self._visible_bias = visible_bias
        self._base_visible = base_visible
        # The chains' own fast generator (SFC64), seeded from rng: deterministic (its
        # numbers are float32 whatever the dtype, as in training).
        self._noise = Noise.seeded_from(rng)
        self._int_type, self._sign_bit = _SIGN_BITS[dtype]
        hidden_shape = (n_hidden, n_chains)
        self._visible = np.empty((n_visible, n_chains), dtype=dtype)
        self._input = np.empty(hidden_shape, dtype=dtype)
        # The hidden inputs at a pair of betas, side by side: one call per operation.
        self._pair = np.empty((2,) + hidden_shape, dtype=dtype)
        self._pair_bits = self._pair.view(self._int_type)
        self._betas = np.empty((2, 1, 1), dtype=dtype)
        self._scratch = np.empty(hidden_shape, dtype=dtype)
        self._positive = np.empty(hidden_shape, dtype=bool)
        self._chosen = np.empty(hidden_shape, dtype=bool)
        self._hidden = np.empty(hidden_shape, dtype=dtype)
        self._visible_input = np.empty((n_visible, n_chains), dtype=dtype)
        self._visible_shift = np.empty(base_visible.shape, dtype=dtype)
        self._base_visible_column = base_visible
        self._visible_bias_column = visible_bias.astype(dtype)[:, None]
        self._ready = None  # (beta, 1 + exp(-|y_beta|)) for the next transition

    @property
    def states(self):
        """The chains' visible states, shape (n_chains, n_visible)."""
        return self._visible.T

    def start_from_base(self):
        """Draw every chain's state from the base model."""
        self._layer.draw_unit_columns(self._base_visible.astype(self.dtype), self._noise,
                                      self._visible)
        self._ready = None

    def set_states(self, X):
        """Start the chains at the visible rows ``X`` (one row per chain)."""
        self._visible[...] = np.asarray(X).T
        self._ready = None

    def _project(self):
        np.matmul(self._weights, self._visible, out=self._input)
        self._input += self._shift

    def _negative_abs_input(self, beta, out, positive=None):
        """``out = -|y_beta|``, and ``positive = y_beta > 0`` when asked."""
        np.multiply(self._input, self.dtype.type(beta), out=out)
        if self._base_hidden is not None:
            out += self._base_hidden
        if positive is not None:
            np.greater(out, 0, out=positive)
        bits = out.view(self._int_type)
        np.bitwise_or(bits, self._sign_bit, out=bits)  # set the sign bit: -|y|

    def add_log_ratio(self, beta, beta_next, log_w, sign=1.0, then_sample_at=None):
        """``log_w += sign * (log p*_beta_next(v) - log p*_beta(v))`` for the states.

        ``then_sample_at`` (``beta`` or ``beta_next``) names the beta of the next
        :meth:`transition`, which then reuses this step's products and exponentials.
        """
        self._project()
        step = beta_next - beta
        # The terms linear in v: step * (visible slope . v + sum_j P_j / 2). Their
        # rounding in dtype is scaled by the step, like the rest of the increment.
        np.matmul((step, 0.5 * step), self._linear, out=self._coefficients, casting="unsafe")
        increment = self._coefficients @ self._visible
        if self._slope is not None:  # each chain's own base: its own slope
            np.multiply(self._slope, self._visible, out=self._visible_input)
            increment += self.dtype.type(step) * self._visible_input.sum(axis=0)
        # -|y| at both betas at once, and the sign of y at the next transition's beta.
        pair = self._pair
        self._betas[:, 0, 0] = beta, beta_next
        np.multiply(self._input, self._betas, out=pair)
        if self._base_hidden is not None:
            pair += self._base_hidden
        sample = {beta: 0, beta_next: 1}.get(then_sample_at)
        if sample is not None:
            np.greater(pair[sample], 0, out=self._positive)
        np.bitwise_or(self._pair_bits, self._sign_bit, out=self._pair_bits)
        # softplus(y) = (y + |y|) / 2 + log(1 + exp(-|y|)) summed over j, at beta_next
        # minus at beta: the y part is linear (above), then |y| and the logarithms.
        low, high, ratio = pair[0], pair[1], self._scratch
        np.subtract(low, high, out=ratio)  # |y_next| - |y|
        nonlinear = ratio.sum(axis=0)
        nonlinear *= 0.5
        np.exp(pair, out=pair)
        pair += 1
        np.divide(high, low, out=ratio)
        nonlinear += sum_log(ratio, _RATIO_FACTORS)
        increment += nonlinear
        total = increment.astype(np.float64)
        total += 0.5 * step * self._linear_offset
        if sign != 1.0:
            total *= sign
        log_w += total
        self._ready = None if sample is None else (then_sample_at, pair[sample])

    def transition(self, beta):
        """One block-Gibbs step v -> h -> v of every chain at ``beta``."""
        if beta == 0:  # the base model: independent visible units
            self.start_from_base()
            return
        if self._ready is not None and self._ready[0] == beta:
            one_plus = self._ready[1]
        else:
            self._project()
            one_plus = self._scratch
            self._negative_abs_input(beta, one_plus, self._positive)
            np.exp(one_plus, out=one_plus)
            one_plus += 1
        self._ready = None
        # h = 1 with probability sigmoid(y): u (1 + exp(-|y|)) < 1 has probability
        # sigmoid(|y|), and its complement sigmoid(-|y|) serves the units with y <= 0.
        np.multiply(one_plus, self._noise.uniform(one_plus.shape), out=one_plus)
        np.less(one_plus, 1, out=self._chosen)
        np.equal(self._chosen, self._positive, out=self._hidden)
        # v: beta (W^T h + b) + (1 - beta) a = beta (W^T h + b + a (1 - beta) / beta)
        np.matmul(self._weights_t, self._hidden, out=self._visible_input)
        np.multiply(self._base_visible_column, (1.0 - beta) / beta, out=self._visible_shift,
                    casting="unsafe")  # float64 product, rounded once to dtype
        self._visible_shift += self._visible_bias_column
        self._visible_input += self._visible_shift
        self._visible_input *= self.dtype.type(beta)
        self._layer.draw_unit_columns(self._visible_input, self._noise, self._visible)


class MixtureAnnealing:
    """AIS chains to a binary RBM from a mixture of independent binary models, one per
    training row (its values moved towards the data's rates by MIXTURE_SMOOTHING), the
    hidden layer summed out.

    The base is ``q(v) = (1 / K) sum_k q_k(v)``; with a component label z the path is
    ``p*_beta(v, z) = q_z(v)^(1 - beta) exp(beta b.v) prod_j (1 + exp(beta (W v + c)_j))
    / K``, the model (times K) at beta = 1 and ``q(v) 2^n_hidden`` at beta = 0 (so
    ``base_log_partition`` is ``n_hidden log 2``). The log weights use the marginal
    over z (a sum over the components); a transition draws z given v, then h given v,
    then v given z and h. Models that keep most of their probability near their
    training rows (RBMs of real digits) are reached far sooner from this base than
    from independent units at the data's rates: on an RBM(500) of 4,000 binarized
    MNIST digits, 1,000 betas from it gave log Z 33 nats above that path.
    """

    #: Each component's means: (1 - s) x_k + s r, with r the rows' rates.
    MIXTURE_SMOOTHING = 0.05

    def __init__(self, view, rows, n_chains, rng, dtype=np.float32):
        dtype = np.dtype(dtype)
        rows = np.asarray(rows, dtype=np.float64)
        smoothing = self.MIXTURE_SMOOTHING
        means = (1 - smoothing) * rows + smoothing * rows.mean(axis=0)
        means = np.clip(means, 1e-4, 1 - 1e-4)
        self.dtype, self.n_chains, self._rng = dtype, n_chains, rng
        self._means = means.astype(dtype)
        self._logits = np.ascontiguousarray((np.log(means) - np.log1p(-means)).T, dtype)
        self._log_off = np.log1p(-means).sum(axis=1)  # log q_k(0), float64
        self._log_k = np.log(rows.shape[0])
        self._weights = np.asarray(view.weights, dtype=dtype)
        self._visible_bias = np.asarray(view.visible_bias, dtype=np.float64)
        self._hidden_bias = np.asarray(view.hidden_bias, dtype=dtype)
        self.base_log_partition = view.n_hidden * np.log(2.0)
        self._visible = None
        self._ready = None  # the products of the current states, for the transition

    @property
    def states(self):
        return self._visible

    def start_from_base(self):
        z = self._rng.integers(self._means.shape[0], size=self.n_chains)
        draws = self._rng.random((self.n_chains, self._means.shape[1]), dtype=self.dtype)
        self._visible = (draws < self._means[z]).astype(self.dtype)
        self._ready = None

    def set_states(self, X):
        self._visible = np.array(X, dtype=self.dtype)
        self._ready = None

    def _parts(self):
        """log q_k(v) of every chain and component (float64), and W v + c (computed
        once per state: the weight increment and the transition share them)."""
        if self._ready is None:
            log_q = (self._visible @ self._logits).astype(np.float64) + self._log_off
            self._ready = log_q, self._visible @ self._weights.T + self._hidden_bias
        return self._ready

    def _log_p(self, beta, log_q, inputs):
        scaled = (1.0 - beta) * log_q
        top = scaled.max(axis=1)
        mixture = top + np.log(np.exp(scaled - top[:, None]).sum(axis=1)) - self._log_k
        hidden = np.logaddexp(0, self.dtype.type(beta) * inputs).sum(axis=1, dtype=np.float64)
        return mixture + beta * (self._visible @ self._visible_bias) + hidden

    def add_log_ratio(self, beta, beta_next, log_w, sign=1.0, then_sample_at=None):
        log_q, inputs = self._parts()
        log_w += sign * (self._log_p(beta_next, log_q, inputs)
                         - self._log_p(beta, log_q, inputs))

    def transition(self, beta):
        if beta == 0:
            self.start_from_base()
            return
        rng, dtype = self._rng, self.dtype
        log_q, inputs = self._parts()
        # z given v: the Gumbel-max draw from q_z(v)^(1 - beta)
        gumbel = rng.gumbel(size=log_q.shape)
        z = np.argmax((1.0 - beta) * log_q + gumbel, axis=1)
        hidden = (rng.random(inputs.shape, dtype=dtype)
                  < sigmoid(dtype.type(beta) * inputs)).astype(dtype)
        field = ((1.0 - beta) * self._logits[:, z].T
                 + beta * (hidden @ self._weights + self._visible_bias.astype(dtype)))
        self._visible = (rng.random(field.shape, dtype=dtype)
                         < sigmoid(field.astype(dtype, copy=False))).astype(dtype)
        self._ready = None


__all__ = [
    "MixtureAnnealing",
    "RestrictedAnnealing",
    "RestrictedLayout",
    "RestrictedTrainingForm",
    "RestrictedView",
    "restricted_capabilities",
]
