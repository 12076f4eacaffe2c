"""Unit types as layer objects: what a restricted model asks of its units.

A layer is a set of units of one type together with its parameters: a bias per unit,
and whatever else the type has (a Gaussian layer's variances). It owns every formula
that depends on the unit type: its own energy term, its conditional mean and draw given
what the other layer sends it, the log-partition function of an independent layer
(which sums the layer out of a restricted model and is the base model of annealing),
what input it accepts and what it offers. A restricted model is a (visible, hidden)
pair of layers coupled by one weight matrix (:mod:`skboltz.models._restricted_energy`); a
visible layer may be made of several groups (:class:`LayerGroups`), so that a mixed
table is a list of groups, not a new model.

Layers are read-only, like the views that hold them: a new parameter set is a new
layer (:meth:`Layer.replace`). Two conventions for what they receive:

- *inputs*, in the views' arithmetic: what the other layer sends through the weights,
  the layer's own bias excluded (``mean``, ``sample``, ``log_partition``). These
  formulas are written once for every array namespace: on NumPy arrays they run
  NumPy's functions (in place where it pays), on torch, CuPy or array-api-strict
  arrays (array API dispatch) the library's own, on its device; ``rng`` is then the
  namespace's random source (:func:`skboltz.utils._array_api.random_source`), which
  is asked for draws as a ``numpy.random.Generator`` is;
- *fields*, in the training form's: the bias included (the packed products carry it
  through a constant unit), on rows whose last column is that constant unit, which
  comes out as 1 (``draw_fields``, ``mean_of_fields``, in place; random numbers from
  the buffered streams of :class:`skboltz.utils._noise.Noise`).

A new unit type is one subclass of :class:`Layer`; ``tests/test_extending.py`` trains
and scores one exactly.
"""

import math

import numpy as np

from ..utils._capabilities import BINARY, GAUSSIAN, SOFTMAX
from ..utils._energy import (
    RATE_CLIP,
    bernoulli_sample,
    binary_entropy_row_sums,
    binary_states,
    logit_of_rates,
    sigmoid,
    sigmoid_in_place,
    softplus,
    softplus_row_sums,
    sum_log,
)
from ..utils._array_api import (
    as_dtype,
    concat_columns,
    copy_of,
    foreign_namespace,
    namespace_of,
)
from ..utils._enumeration import SPLIT_HALF_BLOCK_STATES, split_half_log_weights
from ..utils._noise import NOISE_DTYPE
from ..utils._validation import clipped_into_unit_interval


class Layer:
    """A layer of units of one type, with its parameters (read-only).

    The base class of unit types. A subclass sets the class attributes below and
    implements what its type needs: for a restricted model's visible layer trained by
    the sampling strategies and scored exactly, :meth:`mean`, :meth:`sample`,
    :meth:`log_partition`, :meth:`draw_units`, :meth:`mean_of_unit_fields`,
    :meth:`write_states`, :meth:`draw_independent` and, for a countable layer,
    :meth:`states`, :attr:`n_states`, :attr:`log_n_states` and
    :meth:`base_bias_from_rates`. The defaults here serve a layer whose only
    parameter is its bias and whose energy is linear in its states; the methods that
    raise ``NotImplementedError`` are the ones a type must define.

    Parameters
    ----------
    bias : ndarray of shape (n_units,)
        The biases b (the energy's term linear in the states is -b . s).

    Attributes
    ----------
    unit_type : str
        The name strategies' requirements refer to (``"binary"``, ``"gaussian"``,
        ``"softmax"``, or a new type's own).
    discrete : bool
        Whether the states are countable: a state has a probability (at most 1, so a
        log-likelihood is at most 0), and a model can list the layer's states (exact
        enumeration) and anneal over them.
    tempers_bias : bool
        Whether the bias belongs to the tempered part of the energy (parallel
        tempering's p_beta scales the whole field; a Gaussian layer keeps its quadratic
        term, bias included, at every temperature).
    auto_negative_visible : {"mean", "sample"}
        What ``negative_visible="auto"`` of the sampling strategies means for this
        layer as the visible one.
    row_noise : str or None
        ``"logistic"`` for a layer whose draws compare each field with its own logistic
        number: groups of such layers share one draw over a whole row.
    extra_parameters : tuple of str
        Per-unit parameters besides the bias (a training form packs each as a row
        above the weights).

    Examples
    --------
    A layer of units that take the values -1 and +1 (spins): E = -b . s, so given
    the input x each unit is +1 with probability sigmoid(2 (b + x)).

    >>> import numpy as np
    >>> from skboltz.views import Layer
    >>> class SpinUnits(Layer):
    ...     unit_type = "spin"
    ...     def mean(self, input):
    ...         return np.tanh(input + self.bias)
    ...     def log_partition(self, input, overwrite=False, add_to=None):
    ...         fields = input + self.bias
    ...         log_z = np.logaddexp(fields, -fields).sum(axis=1)
    ...         return log_z if add_to is None else add_to + log_z
    >>> layer = SpinUnits(np.zeros(3))
    >>> bool(np.isclose(layer.independent_log_partition(), 3 * np.log(2)))
    True
    """

    unit_type = None
    discrete = True
    tempers_bias = True
    #: The draws by default: an unbiased likelihood gradient (the means are a measured
    #: choice of binary units, for their features).
    auto_negative_visible = "sample"
    row_noise = None
    extra_parameters = ()
    #: The interval every value lies in (None: any); a quick check of the rows of a
    #: partial_fit call tests it.
    value_range = None
    #: The sum of the entropies of independent units with given means (a function of
    #: the rows of means), where the mean-field lower bound of log Z holds for the
    #: layer (the divergence check's bound); None: no such bound.
    entropy = None

    def __init__(self, bias):
        self.bias = bias

    # -- parameters ------------------------------------------------------------------
    def parameters(self):
        """Return the layer's parameters by name, the bias first.

        Returns
        -------
        parameters : dict
            Name -> array (and, for a layer with structure, what rebuilds it, e.g. a
            softmax layer's group sizes): what :meth:`replace` takes.
        """
        return {"bias": self.bias}

    def replace(self, **parameters):
        """Return the same kind of layer over other parameters.

        Parameters
        ----------
        **parameters : dict
            New values of some of :meth:`parameters` (e.g. ``bias=...``); the others,
            and the layer's structure, are kept.

        Returns
        -------
        layer : Layer
            A new layer (no copies of the arrays).
        """
        return type(self)(**{**self.parameters(), **parameters})

    def astype(self, dtype):
        """Return the layer with its parameters in another floating-point type.

        Parameters
        ----------
        dtype : numpy dtype
            The new type.

        Returns
        -------
        layer : Layer
            A new layer over converted copies.
        """
        return self.replace(**{name: np.asarray(array).astype(dtype)
                               for name, array in self.parameters().items()
                               if isinstance(array, np.ndarray)})

    @property
    def n_units(self):
        """Number of units."""
        return self.bias.shape[0]

    @property
    def dtype(self):
        """Floating-point type of the parameters."""
        return self.bias.dtype

    def __repr__(self):
        return f"{type(self).__name__}(n_units={self.n_units})"

    # -- the model's math, in the views' arithmetic ------------------------------------
    def energy(self, S):
        """Compute the layer's own energy term of each row of states.

        Parameters
        ----------
        S : {array, sparse matrix} of shape (n_rows, n_units)
            States of the layer.

        Returns
        -------
        energy : array of shape (n_rows,)
            The terms of E that hold these units alone (-b . s, and whatever else the
            type's energy holds besides the coupling).
        """
        return -(S @ self.bias)

    def seen_weights(self, weights):
        """Return the weights as the other layer sees these units' states through them.

        Parameters
        ----------
        weights : ndarray of shape (n_other, n_units)
            The weights between the other layer and this one.

        Returns
        -------
        weights : ndarray of shape (n_other, n_units)
            The weights themselves, unless the type scales its states (a Gaussian
            unit is seen as v / sigma^2).
        """
        return weights

    def mean(self, input):
        """Compute E[s | input] of each row.

        Parameters
        ----------
        input : ndarray of shape (n_rows, n_units)
            What the other layer sends through the weights (the bias excluded).

        Returns
        -------
        mean : ndarray of shape (n_rows, n_units)
            The conditional means.
        """
        raise NotImplementedError

    def sample(self, input, rng):
        """Draw states of each row given the other layer's input.

        Parameters
        ----------
        input : ndarray of shape (n_rows, n_units)
            What the other layer sends through the weights (the bias excluded).
        rng : numpy.random.Generator or random source
            Source of randomness (for arrays of another namespace, its random
            source).

        Returns
        -------
        S : array of shape (n_rows, n_units)
            The draws.
        """
        return self.draw_independent(self.mean(input), rng)

    def log_partition(self, input, overwrite=False, add_to=None):
        """Compute log sum_s exp(-energy(s) + s' . input) of each row.

        The layer summed out of a restricted model given the other layer's input (s'
        is the state as the other layer sees it); with a zero input, the
        log-partition function of the layer alone.

        Parameters
        ----------
        input : ndarray of shape (n_rows, n_units)
            What the other layer sends through the weights (the bias excluded).
        overwrite : bool, default=False
            Whether ``input`` may be used as scratch space.
        add_to : ndarray of shape (n_rows,) or None, default=None
            Added to the result first, in the sum's own order.

        Returns
        -------
        log_partition : ndarray of shape (n_rows,)
            The log-sums.
        """
        raise NotImplementedError

    def independent_log_partition(self):
        """Compute log Z of the layer on its own (no coupling).

        Returns
        -------
        log_z : float
            The log-partition function: the base model of annealing paths.
        """
        return float(self.log_partition(np.zeros((1, self.n_units)))[0])

    def enumeration_log_weights(self, enumerated, to_self, chunk_size):
        """Yield the log weights of another layer's states with this one summed out.

        Exact log Z of a restricted model: -E(s) + log_partition(s @ to_self) for the
        states s of the ``enumerated`` layer, in chunks, float64.

        Parameters
        ----------
        enumerated : Layer
            The countable layer whose states are listed (in float64).
        to_self : ndarray of shape (enumerated.n_units, n_units)
            Maps the enumerated layer's states to this layer's input.
        chunk_size : int
            States per chunk.

        Yields
        ------
        log_weights : ndarray
            The log weights of a chunk of states (or partial log-sums of them).
        """
        n_states = enumerated.n_states
        for start in range(0, n_states, chunk_size):
            S = enumerated.states(start, min(start + chunk_size, n_states))
            yield -enumerated.energy(S) + self.log_partition(S @ to_self, overwrite=True)

    def tempered_input(self, input, beta):
        """Return the input that gives the layer its fields at inverse temperature ``beta``.

        The fields of annealing and tempering are the whole field scaled, beta (b +
        input), or only the input where the bias is not tempered (a Gaussian layer
        keeps its quadratic term), b + beta input. Passed to :meth:`mean`,
        :meth:`sample` or :meth:`log_partition`, the input returned gives those
        fields.

        Parameters
        ----------
        input : array of shape (n_rows, n_units)
            What the other layer sends through the weights (the bias excluded).
        beta : float or array of shape (n_rows, 1)
            The inverse temperature (of each row).

        Returns
        -------
        input : array of shape (n_rows, n_units)
            The tempered input.
        """
        if self.tempers_bias:
            return beta * input + (beta - 1) * self.bias
        return beta * input

    def xp_states(self, xp, device, start, stop):
        """List some of the layer's states (:meth:`states`) in any array namespace.

        Parameters
        ----------
        xp : module
            The array namespace of the parameters and rows.
        device : object
            The device the states are made on.
        start, stop : int
            The positions of the first state and one past the last.

        Returns
        -------
        S : array of shape (stop - start, n_units)
            The states, in the bias's dtype.
        """
        return xp.asarray(self.states(start, stop), dtype=self.bias.dtype, device=device)

    def extra_gradients(self, V, H, weights, means, row_weights=None):
        """Compute the mean gradient of each extra parameter over rows.

        The dispatched path's form of :meth:`extra_statistics` (means of the rows
        rather than sums into a buffer).

        Parameters
        ----------
        V : array of shape (n_rows, n_units)
            Visible rows (states, or means standing for draws).
        H : array of shape (n_rows, n_hidden)
            Their hidden states or probabilities.
        weights : array of shape (n_hidden, n_units)
            The weights W.
        means : bool
            Whether the rows of ``V`` are means rather than draws (see
            :meth:`extra_statistics`).
        row_weights : array of shape (n_rows,) or None, default=None
            How many times each row counts (a weighted fit); the mean is still over
            ``n_rows``.

        Returns
        -------
        gradients : dict
            Name -> array of shape (n_units,): the gradient of the log-likelihood
            with respect to each extra parameter, averaged over the rows (none for a
            layer whose only parameter is its bias).
        """
        return {}

    # -- countable layers: states, rates, the data's range ------------------------------
    @property
    def log_n_states(self):
        """The log of the number of states (the uniform distribution's -log p).

        By default the sum of the entries' (:attr:`entry_log_n_states`).
        """
        return float(self.entry_log_n_states.sum())

    @property
    def n_states(self):
        """The number of states of the layer."""
        raise NotImplementedError

    @property
    def n_bits(self):
        """Binary digits that number the states: what exact enumeration counts."""
        return int(np.ceil(self.log_n_states / np.log(2.0) - 1e-9))

    def states(self, start, stop):
        """List some of the layer's states.

        Parameters
        ----------
        start, stop : int
            The positions of the first state and one past the last, in the layer's
            order of its :attr:`n_states` states.

        Returns
        -------
        S : ndarray of shape (stop - start, n_units)
            The states, float64.
        """
        raise NotImplementedError

    def base_bias_from_rates(self, rates):
        """Return the biases of the independent layer whose means are the data's.

        Parameters
        ----------
        rates : ndarray of shape (n_units,)
            Mean of each unit over the training data (clipped away from 0 and 1).

        Returns
        -------
        bias : ndarray of shape (n_units,)
            The biases, float64.
        """
        raise NotImplementedError

    @classmethod
    def states_of_rows(cls, rows, rng):
        """Return the states data rows stand for (the degeneracy check's).

        Parameters
        ----------
        rows : ndarray of shape (n_rows, n_units)
            Data rows.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        states : ndarray of shape (n_rows, n_units)
            The rows themselves, unless the type reads them as means (binary units:
            a draw of which they are the probabilities).
        """
        return rows

    @classmethod
    def state_probability(cls, state, rates):
        """Return the probability of a state under independent units at the data's rates.

        What the degeneracy check allows a state its chains crowd into; None for a
        type whose check has no such allowance (the check then skips it).

        Parameters
        ----------
        state : ndarray of shape (n_units,)
            A state.
        rates : ndarray of shape (n_units,)
            Mean of each unit over the training data.

        Returns
        -------
        probability : float or None
            The probability.
        """
        return None

    @classmethod
    def extreme_states(cls, n_units, dtype=np.float64):
        """Return the states a degenerate model tends to favour, and their names.

        The scores check their probability by log Z (the blank and all-ones rows of
        binary units); None for a type without them.

        Parameters
        ----------
        n_units : int
            Number of units.
        dtype : numpy dtype, default=float64
            Type of the rows.

        Returns
        -------
        states : (ndarray of shape (n_states, n_units), tuple of str) or None
            The states and their names.
        """
        return None

    @classmethod
    def check_rows(cls, X):
        """Return the rows as the layer takes them.

        Called by every method that takes rows; a binary layer clips values outside
        [0, 1] into it, with a warning.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_rows, n_units)
            Validated rows.

        Returns
        -------
        X : {ndarray, sparse matrix} of shape (n_rows, n_units)
            The rows, a copy where anything changed.
        """
        return X

    # -- the training form, on fields -----------------------------------------------
    def draw_fields(self, x, noise, out=None, tempered=False):
        """Draw states given fields, on augmented rows.

        Parameters
        ----------
        x : ndarray of shape (n_rows, n_units + 1)
            Fields (the bias included), with the constant unit last.
        noise : skboltz.utils._noise.Noise
            The buffered random streams.
        out : ndarray of shape (n_rows, n_units + 1) or None, default=None
            Where the draws go (``x`` itself by default).
        tempered : bool, default=False
            Whether the fields were scaled by an inverse temperature.

        Returns
        -------
        out : ndarray of shape (n_rows, n_units + 1)
            The draws; the constant unit comes out as 1.
        """
        units = x[..., :-1]
        if out is None or out is x:
            out, target = x, units
        else:
            target = out[..., :-1]
        self.draw_units(units, noise, target)
        out[..., -1] = 1
        return out

    def mean_of_fields(self, x):
        """Replace fields by the conditional means, on augmented rows.

        Parameters
        ----------
        x : ndarray of shape (n_rows, n_units + 1)
            Fields (the bias included), with the constant unit last.

        Returns
        -------
        x : ndarray of shape (n_rows, n_units + 1)
            The means, in place; the constant unit comes out as 1.
        """
        self.mean_of_unit_fields(x[..., :-1])
        x[..., -1] = 1
        return x

    def draw_fields_and_mean(self, x, noise, out):
        """Draw states into ``out`` and replace the fields ``x`` by their means.

        The draws are those :meth:`draw_fields` makes (the same numbers).

        Parameters
        ----------
        x : ndarray of shape (n_rows, n_units + 1)
            Fields (the bias included), with the constant unit last.
        noise : skboltz.utils._noise.Noise
            The buffered random streams.
        out : ndarray of shape (n_rows, n_units + 1)
            Where the draws go.

        Returns
        -------
        out : ndarray of shape (n_rows, n_units + 1)
            The draws.
        """
        self.draw_fields(x, noise, out)
        self.mean_of_fields(x)
        return out

    def draw_units(self, fields, noise, out, logistic=None):
        """Draw states given the fields of the layer's own columns.

        Parameters
        ----------
        fields : ndarray of shape (n_rows, n_units)
            Fields (the bias included), no constant unit.
        noise : skboltz.utils._noise.Noise
            The buffered random streams.
        out : ndarray of shape (n_rows, n_units)
            Where the draws go (may be ``fields``).
        logistic : ndarray of shape (n_rows, n_units) or None, default=None
            This layer's slice of a row's shared logistic noise (layers whose
            ``row_noise`` is "logistic"); None draws its own.
        """
        raise NotImplementedError

    def mean_of_unit_fields(self, fields):
        """Replace the fields of the layer's own columns by the means, in place.

        Parameters
        ----------
        fields : ndarray of shape (n_rows, n_units)
            Fields (the bias included), no constant unit.
        """
        raise NotImplementedError

    def write_states(self, rows, rng, out):
        """Write states started from data rows (persistent chains' first states).

        Parameters
        ----------
        rows : ndarray of shape (n_rows, n_units)
            Data rows.
        rng : numpy.random.Generator
            Source of randomness.
        out : ndarray of shape (n_rows, n_units)
            Where the states go: a draw whose means are the rows, or the rows
            themselves.
        """
        raise NotImplementedError

    def draw_independent(self, start, rng):
        """Draw rows of independent units with given means.

        Where ``sample``'s chains start: the data's rates (countable units) or means.

        Parameters
        ----------
        start : ndarray of shape (n_rows, n_units)
            The means.
        rng : numpy.random.Generator
            Source of randomness.

        Returns
        -------
        S : ndarray of shape (n_rows, n_units)
            The draws, in the layer's dtype.
        """
        raise NotImplementedError

    def draw_unit_columns(self, fields, noise, out):
        """Draw states given fields, both laid out units x chains (annealing chains).

        Parameters
        ----------
        fields : ndarray of shape (n_units, n_chains) or (n_units, 1)
            Fields (the bias included); a column is broadcast over the chains.
        noise : skboltz.utils._noise.Noise
            The chains' buffered random streams.
        out : ndarray of shape (n_units, n_chains)
            Where the draws go.
        """
        self.draw_units(np.broadcast_to(fields, out.shape).T, noise, out.T)

    # -- what a training form asks of its visible layer --------------------------------
    def seen_rows(self, rows, form):
        """Return the packed rows as the hidden units see this layer's states.

        Parameters
        ----------
        rows : ndarray of shape (n_hidden + 1, n_units + 1)
            ``[W | c]`` over ``[b | ALWAYS_ON]``.
        form : RestrictedTrainingForm
            The form, where a type may keep a buffer.

        Returns
        -------
        rows : ndarray of shape (n_hidden + 1, n_units + 1)
            The rows themselves unless the type scales its states.
        """
        return rows

    def for_view(self):
        """Return the layer as views hold it.

        Returns
        -------
        layer : Layer
            This layer, unless a training form's layer keeps its parameters in the
            form it learns them (a Gaussian layer's log variances).
        """
        return self

    def training_parameter(self, name):
        """Return an extra parameter in the form a training form learns it.

        Parameters
        ----------
        name : str
            One of ``extra_parameters``.

        Returns
        -------
        values : ndarray of shape (n_units,)
            Its values (e.g. the log of a Gaussian layer's variances).
        """
        raise KeyError(name)

    def extra_columns(self, name):
        """Return the units an extra parameter belongs to.

        Parameters
        ----------
        name : str
            The parameter's name, among ``extra_parameters`` (a Gaussian group's
            "log_variance").

        Returns
        -------
        columns : slice or None
            None: every unit (a layer of one type); a layer of groups gives the block
            of the groups that have the parameter (its training form's row spans
            only those columns).
        """
        return None

    def extra_statistics(self, out, V, weights, products, means, row_weights=None):
        """Compute the extra parameters' gradient statistics, summed over rows.

        Parameters
        ----------
        out : ndarray of shape (len(extra_parameters), n_units)
            Where they go, one row per extra parameter.
        V : ndarray of shape (n_rows, n_units)
            The rows' unit columns.
        weights : ndarray of shape (n_hidden, n_units)
            The weights.
        products : ndarray of shape (n_hidden, n_units)
            The sum of h v^T over the rows.
        means : bool
            Whether the rows are means of v given some h rather than draws.
        row_weights : ndarray of shape (n_rows,) or None, default=None
            How many times each row counts in the sums (a weighted fit's data);
            ``products`` is then already weighted. None: once each.
        """

    # -- missing entries: rows whose units are partly unobserved (NaN) ------------------
    #: Whether rows may leave some entries unobserved (NaN), which the methods below
    #: sum out of the model (:mod:`skboltz.models._missing`): an entry is a data column, one
    #: unit, or a whole softmax group.
    handles_missing = False

    @property
    def entry_starts(self):
        """The first unit of each entry (a data column: one unit here).

        Returns
        -------
        starts : ndarray of shape (n_entries,)
            Unit positions, increasing.
        """
        return np.arange(self.n_units)

    @property
    def n_entries(self):
        """Number of entries (data columns) of the layer."""
        return len(self.entry_starts)

    @property
    def entry_log_n_states(self):
        """The log of the number of states of each entry (inf: a real-valued entry).

        Returns
        -------
        log_n_states : ndarray of shape (n_entries,)
            What enumerating the completions of a row's missing entries counts.
        """
        raise NotImplementedError

    def missing_entries(self, missing):
        """Return which entries of each row are missing.

        Parameters
        ----------
        missing : ndarray of shape (n_rows, n_units), dtype=bool
            The units without a value (NaN), whole entries at a time.

        Returns
        -------
        missing_entries : ndarray of shape (n_rows, n_entries), dtype=bool
            Whether each entry is missing.
        """
        return missing[:, self.entry_starts]

    def check_missing(self, missing):
        """Refuse a pattern of missing units that splits an entry.

        Parameters
        ----------
        missing : ndarray of shape (n_rows, n_units), dtype=bool
            The units without a value.
        """

    def entry_log_partitions(self, input):
        """Compute each entry's log-partition given the other layer's input.

        The entries of a layer are independent given the other layer: their
        log-partitions add up to :meth:`log_partition`, and a missing entry's is what
        summing it out of a row contributes.

        Parameters
        ----------
        input : ndarray of shape (n_rows, n_units)
            The other layer's input to each unit, through the weights (no bias).

        Returns
        -------
        log_partitions : ndarray of shape (n_rows, n_entries)
            The log-sums log sum_s exp(-energy(s) + s' . input), over each entry's
            states s.
        """
        raise NotImplementedError

    def seen_states(self, S):
        """Return states as the other layer sees them through the weights.

        Parameters
        ----------
        S : ndarray of shape (n_rows, n_units)
            States (or means) of the layer.

        Returns
        -------
        seen : ndarray of shape (n_rows, n_units)
            ``S`` itself, unless the type scales its states (a Gaussian unit is seen
            as v / sigma^2).
        """
        return S

    def observed_log_weight(self, S, missing):
        """Compute the observed units' own term of -E of each row.

        Parameters
        ----------
        S : ndarray of shape (n_rows, n_units)
            States, any value (NaN) where ``missing``.
        missing : ndarray of shape (n_rows, n_units), dtype=bool
            The units left out.

        Returns
        -------
        log_weight : ndarray of shape (n_rows,)
            -(the layer's own energy of the observed units): b . s over them for a
            layer whose energy is linear in its states.
        """
        return np.where(missing, 0.0, S) @ self.bias

    def sublayer(self, units):
        """Return the layer over some of its units (whole entries).

        Parameters
        ----------
        units : ndarray of shape (n_units,), dtype=bool
            The units kept.

        Returns
        -------
        layer : Layer
            The same type over those units and their parameters (copies).
        """
        raise NotImplementedError


class BinaryUnits(Layer):
    """0/1 units: E = -b . s, P(s_i = 1 | input) = sigmoid(b_i + input_i).

    Parameters
    ----------
    bias : ndarray of shape (n_units,)
        The biases b.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.views import BinaryUnits
    >>> layer = BinaryUnits(np.zeros(2))
    >>> layer.mean(np.array([[0.0, 100.0]]))
    array([[0.5, 1. ]])
    >>> bool(np.isclose(layer.independent_log_partition(), 2 * np.log(2)))
    True
    """

    unit_type = BINARY
    row_noise = "logistic"
    value_range = (0.0, 1.0)

    def replace(self, **parameters):
        return BinaryUnits(parameters.get("bias", self.bias))
    #: The means P(v = 1 | h): far better features of grey-level data (the RBM user
    #: guide).
    auto_negative_visible = "mean"

    def mean(self, input):
        return sigmoid(input + self.bias)

    def sample(self, input, rng):
        return bernoulli_sample(self.mean(input), rng)

    def log_partition(self, input, overwrite=False, add_to=None):
        # sum_i log(1 + exp(b_i + input_i))
        fields = input if overwrite else copy_of(input)
        fields += self.bias
        log_z = softplus_row_sums(fields, overwrite=True)
        return log_z if add_to is None else add_to + log_z

    def independent_log_partition(self):
        return float(softplus(self.bias).sum())

    @property
    def log_n_states(self):
        return self.n_units * np.log(2.0)

    @property
    def n_states(self):
        return 2**self.n_units

    @property
    def n_bits(self):
        return self.n_units

    def states(self, start, stop):
        return binary_states(self.n_units, start, stop)

    def enumeration_log_weights(self, enumerated, to_self, chunk_size):
        if not isinstance(enumerated, BinaryUnits):
            yield from super().enumeration_log_weights(enumerated, to_self, chunk_size)
            return
        # The binary states are listed in chunks of up to chunk_size and this layer
        # summed in closed form, -F(s) = a.s + sum_i softplus(x_i) with x = s W' + b'
        # its inputs, in float64. Within a chunk only the low bits of the enumerated
        # states change: x = L + H with L the low bits' inputs (one matrix for all
        # chunks) and H a row per chunk. So no exponential is needed per state: with
        # E = exp(L - max L) computed once and m_i = max(0, max L_i + H_i),
        #     softplus(x_i) = m_i + log(exp(-m_i) + E_i exp(max L_i + H_i - m_i)),
        # a product and a sum per entry, whose logarithms are taken for products of
        # several entries at once (sum_log; each factor lies in [exp(-m_i), 2]).
        # Chunks whose inputs exceed 600 in size fall back to softplus_row_sums.
        bias, other_bias = enumerated.bias, self.bias
        n_units = enumerated.n_units
        n_low = min(n_units, max(0, int(chunk_size).bit_length() - 1))
        low = binary_states(n_low)
        # Inputs with this layer's units as rows: the products below then run over
        # long contiguous rows.
        low_input = (low @ to_self[:n_low] + other_bias).T.copy()
        low_linear = low @ bias[:n_low]
        low_top = low_input.max(axis=1)
        low_exp = np.exp(low_input - low_top[:, None])
        buffer = np.empty_like(low_input)
        for high in binary_states(n_units - n_low):
            high_input = high @ to_self[n_low:]
            top = low_top + high_input  # the largest input of each unit in the chunk
            shift = np.maximum(top, 0.0)
            linear = low_linear + high @ bias[n_low:]
            if shift.max() > _EXACT_MAX_SHIFT:  # exp(-shift) would underflow
                np.add(low_input.T, high_input, out=buffer.T)
                yield linear + softplus_row_sums(buffer.T, overwrite=True)
                continue
            np.multiply(low_exp, np.exp(top - shift)[:, None], out=buffer)
            buffer += np.exp(-shift)[:, None]
            # A product of k factors is at least exp(-k max(shift)) > 1e-300.
            factors = 2 ** int(np.log2(_EXACT_MAX_SHIFT / max(shift.max(), 1.0)))
            yield linear + shift.sum() + sum_log(buffer, min(factors, 512))

    def base_bias_from_rates(self, rates):
        return logit_of_rates(rates)

    @classmethod
    def check_rows(cls, X):
        return clipped_into_unit_interval(X)

    entropy = staticmethod(binary_entropy_row_sums)

    @classmethod
    def states_of_rows(cls, rows, rng):
        # values in [0, 1] are probabilities: the states they stand for are draws (-F
        # is convex in v, so a grey row has less of it than the states around it)
        return (rng.random(rows.shape) < rows).astype(rows.dtype)

    @classmethod
    def state_probability(cls, state, rates):
        rates = np.clip(np.asarray(rates, dtype=np.float64), 1e-3, 1 - 1e-3)
        return float(np.exp(np.sum(np.where(np.asarray(state) > 0.5, np.log(rates),
                                            np.log1p(-rates)))))

    @classmethod
    def extreme_states(cls, n_units, dtype=np.float64):
        rows = np.zeros((2, n_units), dtype=dtype)
        rows[1] = 1
        return rows, ("all-zeros", "all-ones")

    # -- the training form: whole rows at once, the constant unit included (its field
    # is huge, so it comes out as 1), contiguous and in few calls
    def draw_fields(self, x, noise, out=None, tempered=False):
        out = x if out is None else out
        np.greater(x, noise.logistic(x.shape), out=out)
        if tempered:  # at beta = 0 the constant unit would be a coin flip
            out[..., -1] = 1
        return out

    def mean_of_fields(self, x):
        return sigmoid_in_place(x)

    def draw_fields_and_mean(self, x, noise, out):
        np.greater(x, noise.logistic(x.shape), out=out)
        sigmoid_in_place(x)
        return out

    def draw_units(self, fields, noise, out, logistic=None):
        if logistic is None:
            logistic = noise.logistic(fields.shape)
        np.greater(fields, logistic, out=out)

    def mean_of_unit_fields(self, fields):
        sigmoid_in_place(fields)

    def write_states(self, rows, rng, out):
        # each unit on with its value; float32 draws for either dtype, so float32 and
        # float64 fits start the same chains
        out[...] = np.clip(rows, 0, 1)
        np.less(rng.random(out.shape, dtype=NOISE_DTYPE), out, out=out)

    def draw_independent(self, start, rng):
        return bernoulli_sample(start, rng)

    def draw_unit_columns(self, fields, noise, out):
        np.greater(fields, noise.logistic(out.shape), out=out)

    # -- any array namespace ----------------------------------------------------------
    def xp_states(self, xp, device, start, stop):
        # the bits of the state numbers, made on the device
        shifts = xp.arange(self.n_units, dtype=xp.int64, device=device)
        numbers = xp.arange(start, stop, dtype=xp.int64, device=device)
        bits = xp.bitwise_and(xp.bitwise_right_shift(numbers[:, None], shifts[None, :]), 1)
        return xp.astype(bits, self.bias.dtype)

    # -- missing entries ---------------------------------------------------------------
    handles_missing = True

    @property
    def entry_log_n_states(self):
        return np.full(self.n_units, np.log(2.0))

    def entry_log_partitions(self, input):
        return softplus(np.asarray(input) + self.bias)

    def sublayer(self, units):
        return BinaryUnits(self.bias[units])


#: Above this input size, exact enumeration with a binary layer summed out takes
#: logarithms entry by entry.
_EXACT_MAX_SHIFT = 600.0


class GaussianUnits(Layer):
    """Real-valued units with per-unit variances.

    In the parametrisation of Cho, Ilin & Raiko ("Improved learning of
    Gaussian-Bernoulli restricted Boltzmann machines", ICANN 2011):
    E = sum_i (v_i - b_i)^2 / (2 sigma_i^2), the other layer sees v / sigma^2, and
    given its input x each v_i is normal with mean b_i + x_i and variance sigma_i^2.

    Parameters
    ----------
    bias : ndarray of shape (n_units,)
        The means b at zero input.
    variance : ndarray of shape (n_units,), optional
        The variances sigma^2 (the views' parameter).
    log_variance : ndarray of shape (n_units,), optional
        Or their logarithms z (the training form's parameter, learnt): sigma and
        1 / sigma^2 are then exp(z / 2) and exp(-z).

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.views import GaussianUnits
    >>> layer = GaussianUnits(np.zeros(1), variance=np.ones(1))
    >>> layer.mean(np.array([[0.5]]))  # the mean b + x
    array([[0.5]])
    >>> bool(np.isclose(layer.independent_log_partition(), 0.5 * np.log(2 * np.pi)))
    True
    """

    unit_type = GAUSSIAN
    discrete = False
    tempers_bias = False
    #: The draws: the means gave lower held-out densities (by up to 0.9 nats per row
    #: with whitening, ``benchmarks/bench_gaussian.py``).
    auto_negative_visible = "sample"
    extra_parameters = ("log_variance",)

    def __init__(self, bias, variance=None, log_variance=None):
        self.bias = bias
        self.log_variance = log_variance
        # NumPy's functions for NumPy parameters, the namespace's for others
        xp = namespace_of(bias)
        if log_variance is not None:
            self.std = xp.exp(0.5 * log_variance)
            self.inverse_variance = xp.exp(-log_variance)
            self._variance = None  # exp(z), made when asked for
        else:
            self._variance = variance
            self.std = xp.sqrt(variance)

    @property
    def variance(self):
        """The variances sigma^2."""
        if self._variance is None:
            self._variance = namespace_of(self.log_variance).exp(self.log_variance)
        return self._variance

    def parameters(self):
        if self.log_variance is not None:
            return {"bias": self.bias, "log_variance": self.log_variance}
        return {"bias": self.bias, "variance": self.variance}

    def replace(self, **parameters):
        bias = parameters.get("bias", self.bias)
        if "log_variance" in parameters:
            return GaussianUnits(bias, log_variance=parameters["log_variance"])
        if "variance" in parameters or self.log_variance is None:
            return GaussianUnits(bias, variance=parameters.get("variance", self.variance))
        return GaussianUnits(bias, log_variance=self.log_variance)

    def for_view(self):
        # views hold the variances themselves (their std is sqrt(sigma^2))
        if self.log_variance is None:
            return self
        return GaussianUnits(self.bias, variance=self.variance)

    def training_parameter(self, name):
        return self.log_variance if self.log_variance is not None else np.log(self.variance)

    def energy(self, S):
        centred = S - self.bias
        return namespace_of(centred).sum(centred * centred / (2 * self.variance), axis=1)

    def seen_weights(self, weights):
        return weights / self.variance

    def mean(self, input):
        return input + self.bias

    def sample(self, input, rng):
        V = as_dtype(self.mean(input), self.dtype)
        V += self.std * rng.standard_normal(tuple(V.shape), self.dtype)
        return V

    def log_partition(self, input, overwrite=False, add_to=None):
        # int exp(-(v - b)^2 / (2 sigma^2) + v x / sigma^2) dv
        #   = exp(((b + x)^2 - b^2) / (2 sigma^2)) sqrt(2 pi sigma^2)
        shift = input if overwrite else copy_of(input)
        shift *= shift + 2 * self.bias
        quadratic = namespace_of(shift).sum(shift / (2 * self.variance), axis=1)
        if add_to is not None:
            quadratic = add_to + quadratic
        return quadratic + self.independent_log_partition()

    def independent_log_partition(self):
        return gaussian_log_normalizer(self.variance)

    def base_bias_from_rates(self, rates):
        # independent normal units whose means are the data's
        return np.asarray(rates, dtype=np.float64).ravel().copy()

    def enumeration_log_weights(self, enumerated, to_self, chunk_size):
        # Summing Gaussian units out leaves a Boltzmann machine over the binary layer
        # (pairwise couplings J = W diag(1 / sigma^2) W^T), whose states the
        # split-half enumerator lists with one matrix product per block.
        coupling, bias, log_normalizer = self.summed_out_couplings(enumerated, to_self)
        for log_weights in split_half_log_weights(
            coupling, bias, max(chunk_size, SPLIT_HALF_BLOCK_STATES)
        ):
            yield log_weights + log_normalizer

    def summed_out_couplings(self, binary, to_self):
        """Return the Boltzmann machine these units leave over a binary layer.

        Summing Gaussian units out of a restricted model leaves log p*(h) =
        h^T J h / 2 + a^T h + const over the binary layer, written with a zero
        diagonal (h_j^2 = h_j moves J_jj / 2 into the bias).

        Parameters
        ----------
        binary : BinaryUnits
            The binary layer (its biases c), float64.
        to_self : ndarray of shape (n_binary, n_units)
            The weights W between the binary units and these, float64.

        Returns
        -------
        coupling : ndarray of shape (n_binary, n_binary)
            J = W diag(1 / sigma^2) W^T off the diagonal, zero on it.
        bias : ndarray of shape (n_binary,)
            The biases a + diag(J) / 2 with a = c + W (b / sigma^2).
        log_normalizer : float
            The constant sum_i log(sqrt(2 pi) sigma_i).
        """
        scaled = to_self / self.variance
        coupling = scaled @ to_self.T
        diagonal = np.diag(coupling).copy()
        np.fill_diagonal(coupling, 0.0)
        bias = binary.bias + scaled @ self.bias + 0.5 * diagonal
        return coupling, bias, gaussian_log_normalizer(self.variance)

    # -- the training form ---------------------------------------------------------
    def draw_units(self, fields, noise, out, logistic=None):
        # the fields are the means b + W^T h
        if out is not fields:
            out[...] = fields
        out += self.std * noise.normal(fields.shape)

    def mean_of_unit_fields(self, fields):
        pass  # the field is the mean

    # -- the dispatched path's gradient of the variances --------------------------------
    def extra_gradients(self, V, H, weights, means, row_weights=None):
        # log_variance_statistics, averaged over the rows
        centred = V - self.bias
        per_row = 0.5 * centred * centred - V * (H @ weights)
        if means:  # the expected quadratic term of the draws the means stand for
            per_row = per_row + 0.5 * self.variance
        if row_weights is not None:
            per_row = per_row * row_weights[:, None]
        return {"log_variance": namespace_of(per_row).mean(per_row, axis=0) / self.variance}

    def draw_fields_and_mean(self, x, noise, out):
        x[..., -1] = 1
        np.multiply(noise.normal((x.shape[0], self.n_units)), self.std, out=out[..., :-1])
        out[..., :-1] += x[..., :-1]
        out[..., -1] = 1
        return out

    def write_states(self, rows, rng, out):
        out[...] = rows  # real values as they are

    def draw_independent(self, start, rng):
        V = rng.standard_normal(start.shape, dtype=self.dtype)
        V *= self.std
        V += start
        return V

    def seen_rows(self, rows, form):
        # [W / sigma^2 | c] over [0 | ALWAYS_ON]: the hidden units see v / sigma^2, in
        # a buffer kept by the form (unit variances: the rows themselves)
        if not self.log_variance.any():
            return rows
        coupling = getattr(form, "_coupling_buffer", None)
        if coupling is None or coupling.dtype != rows.dtype:
            coupling = form._coupling_buffer = np.zeros_like(rows)
            coupling[-1, -1] = rows[-1, -1]
        np.multiply(rows[:-1, :-1], self.inverse_variance, out=coupling[:-1, :-1])
        coupling[:-1, -1] = rows[:-1, -1]
        return coupling

    def extra_statistics(self, out, V, weights, products, means, row_weights=None):
        self.log_variance_statistics(out[0], V, weights, products, means, row_weights)

    def log_variance_statistics(self, out, V, weights, products, means, row_weights=None):
        """Compute the gradient of log sigma^2, summed over rows.

        [(v - b)^2 / 2 - v (W^T h)] / sigma^2 for each row. With ``means`` the rows
        are means b + W^T h standing for draws: the conditional expectation of the
        quadratic term, (W^T h)^2 + sigma^2, keeps the variances unbiased (with the
        mean alone they would grow by a step of 1/2 per update).

        Parameters
        ----------
        out : ndarray of shape (n_units,)
            Where the sums go.
        V : ndarray of shape (n_rows, n_units)
            The visible rows (their unit columns).
        weights : ndarray of shape (n_hidden, n_units)
            The weights W.
        products : ndarray of shape (n_hidden, n_units)
            The sum of h v^T over the rows.
        means : bool
            Whether the rows are means rather than draws.
        row_weights : ndarray of shape (n_rows,) or None, default=None
            How many times each row counts (``products`` already weighted alike).

        Returns
        -------
        out : ndarray of shape (n_units,)
            The sums.
        """
        centred = V - self.bias
        if row_weights is None:
            np.einsum("ni,ni->i", centred, centred, out=out)
            n_rows = V.shape[0]
        else:
            np.einsum("n,ni,ni->i", row_weights, centred, centred, out=out)
            n_rows = row_weights.sum()
        out *= 0.5
        # sum_n v_ni (W^T h_n)_i = sum_j W_ji (sum_n h_nj v_ni)
        out -= np.einsum("ji,ji->i", weights, products)
        out *= self.inverse_variance
        if means:
            out += 0.5 * n_rows  # sum over rows of sigma^2 / (2 sigma^2)
        return out

    # -- missing entries ---------------------------------------------------------------
    handles_missing = True

    @property
    def entry_log_n_states(self):
        return np.full(self.n_units, np.inf)

    def entry_log_partitions(self, input):
        # each unit's term of log_partition: ((b + x)^2 - b^2) / (2 sigma^2) plus
        # log sqrt(2 pi sigma^2)
        input = np.asarray(input)
        return (input * (input + 2 * self.bias) / (2 * self.variance)
                + 0.5 * np.log(2 * np.pi * self.variance))

    def seen_states(self, S):
        return S / self.variance

    def observed_log_weight(self, S, missing):
        centred = np.where(missing, 0.0, np.asarray(S) - self.bias)
        return -(centred * centred / (2 * self.variance)).sum(axis=1)

    def sublayer(self, units):
        return GaussianUnits(self.bias[units], variance=self.variance[units])


def gaussian_log_normalizer(variance):
    """sum_i log(sqrt(2 pi sigma_i^2)): the log-integral of the visible Gaussians (in
    float64 for NumPy variances; in their own dtype, on their device, for others)."""
    if not isinstance(variance, np.ndarray):
        xp = namespace_of(variance)
        return float(xp.sum(0.5 * xp.log(2 * math.pi * variance)))
    return float(0.5 * np.log(2 * np.pi * np.asarray(variance, dtype=np.float64)).sum())


class SoftmaxUnits(Layer):
    """Groups of one-of-K units, a categorical variable each.

    E = -b . s with s one-hot within each group, and given the input x each group's
    state is k with probability softmax(b + x) over the group's K units.

    Parameters
    ----------
    bias : ndarray of shape (n_units,)
        The biases b, group after group.
    sizes : sequence of int
        The number of units (categories) of each group, in order; they add up to
        ``n_units``.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.views import SoftmaxUnits
    >>> layer = SoftmaxUnits(np.zeros(5), sizes=(2, 3))  # two columns: 2 and 3 categories
    >>> layer.mean(np.zeros((1, 5))).round(3)
    array([[0.5  , 0.5  , 0.333, 0.333, 0.333]])
    >>> layer.n_states, bool(np.isclose(layer.independent_log_partition(), np.log(6)))
    (6, True)
    """

    unit_type = SOFTMAX

    def __init__(self, bias, sizes):
        self.bias = bias
        self.sizes = tuple(int(k) for k in sizes)
        n_units = bias.shape[0]
        if sum(self.sizes) != n_units or min(self.sizes, default=1) < 1:
            raise ValueError(f"group sizes {self.sizes} do not make {n_units} units.")
        # A padded (groups x largest K) gather of the units makes every group one
        # slice of one array: a draw or a mean is a few calls whatever the groups.
        widest = max(self.sizes, default=0)
        starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.intp)
        position = np.arange(widest)
        self._columns = np.minimum(starts[:, None] + position, n_units - 1)
        self._padding = position >= np.asarray(self.sizes)[:, None]
        self._starts, self._last = starts, np.asarray(self.sizes) - 1
        self._padded = bool(self._padding.any())

    def parameters(self):
        return {"bias": self.bias, "sizes": self.sizes}

    def replace(self, **parameters):
        if set(parameters) - {"bias"}:
            return SoftmaxUnits(parameters.get("bias", self.bias),
                                parameters.get("sizes", self.sizes))
        # the same groups: share the index arrays (forms rebind layers every update)
        layer = object.__new__(SoftmaxUnits)
        layer.__dict__.update(self.__dict__)
        layer.bias = parameters.get("bias", self.bias)
        return layer

    def __repr__(self):
        return f"SoftmaxUnits(sizes={self.sizes})"

    # -- groups as slices of a padded array ------------------------------------------
    def _grouped(self, fields, padding=-np.inf):
        """(rows, groups, largest K) copy of the fields, ``padding`` where a group
        has fewer units (any namespace; NumPy's in place)."""
        xp = foreign_namespace(fields)
        if xp is not None:
            columns, mask, _ = self._xp_indices(xp, fields.device)
            grouped = xp.reshape(xp.take(fields, columns, axis=1),
                                 (fields.shape[0], *self._padding.shape))
            if self._padded:
                grouped = xp.where(mask, xp.full_like(grouped, padding), grouped)
            return grouped
        grouped = fields[:, self._columns]
        if self._padded:
            grouped[:, self._padding] = padding
        return grouped

    def _units(self, grouped):
        """The units' columns of a (rows, groups, largest K) array (any namespace)."""
        xp = foreign_namespace(grouped)
        if xp is None:
            return grouped.reshape(len(grouped), -1)[:, ~self._padding.ravel()]
        flat = xp.reshape(grouped, (grouped.shape[0], -1))
        return xp.take(flat, self._xp_indices(xp, flat.device)[2], axis=1)

    @staticmethod
    def _normalised_exp(grouped, top=None):
        """exp(fields - each group's largest, ``top``) (the softmax's numerator), in
        place for NumPy arrays."""
        xp = foreign_namespace(grouped)
        if top is None:
            top = (np if xp is None else xp).max(grouped, axis=-1, keepdims=True)
        if xp is not None:
            return xp.exp(grouped - top)
        grouped -= top
        return np.exp(grouped, out=grouped)

    def _choose(self, weights, uniform, out=None):
        """One-hot draws into ``out`` (rows x units) from unnormalised ``weights``
        (rows x groups x K), one uniform number per row and group: the inverse of each
        group's cumulative sums. For arrays of another namespace, a new array."""
        xp = foreign_namespace(weights)
        cumulative = (np.cumsum(weights, axis=-1) if xp is None
                      else xp.cumulative_sum(weights, axis=-1))
        below = cumulative < uniform[..., None] * cumulative[..., -1:]
        if xp is None:  # the chosen units set in place
            chosen = np.minimum(below.sum(axis=-1), self._last)
            out[...] = 0
            out[np.arange(out.shape[0])[:, None], self._starts + chosen] = 1
            return out
        chosen = xp.minimum(xp.sum(xp.astype(below, xp.int64), axis=-1),
                            xp.asarray(self._last, device=weights.device))
        categories = xp.arange(weights.shape[-1], device=weights.device)
        return self._units(xp.astype(chosen[..., None] == categories, weights.dtype))

    # -- the model's math ------------------------------------------------------------
    def _probabilities(self, fields):
        """Each group's softmax of its fields, as the units' columns (any namespace)."""
        weights = self._normalised_exp(self._grouped(fields))
        return self._units(weights / namespace_of(weights).sum(weights, axis=-1,
                                                                keepdims=True))

    def mean(self, input):
        return self._probabilities(input + self.bias)

    def sample(self, input, rng):
        fields = input + self.bias
        weights = self._normalised_exp(self._grouped(fields))
        if isinstance(fields, np.ndarray):  # float64 uniforms (NumPy's draws so far)
            return self._choose(weights, rng.random(weights.shape[:2]), np.empty_like(fields))
        return self._choose(weights, rng.random(tuple(weights.shape[:2]), fields.dtype))

    def log_partition(self, input, overwrite=False, add_to=None):
        # sum over groups of log sum_k exp(b_k + x_k)
        entries = self.entry_log_partitions(input)
        log_z = namespace_of(entries).sum(entries, axis=-1)
        return log_z if add_to is None else add_to + log_z

    @property
    def n_states(self):
        return int(np.prod(self.sizes, dtype=np.float64))

    def states(self, start, stop):
        # mixed-radix codes, the first group's category the fastest-changing digit
        codes = np.arange(start, stop, dtype=np.int64)
        states = np.zeros((codes.size, self.n_units))
        for first, size in zip(self._starts, self.sizes):
            states[np.arange(codes.size), first + codes % size] = 1
            codes //= size
        return states

    def base_bias_from_rates(self, rates):
        # the log of each category's clipped share: softmax gives the shares back
        rates = np.clip(np.asarray(rates, dtype=np.float64).ravel(), RATE_CLIP, None)
        return np.log(rates)

    # -- the training form ---------------------------------------------------------
    def draw_units(self, fields, noise, out, logistic=None):
        weights = self._normalised_exp(self._grouped(fields))
        uniform = noise.uniform((fields.shape[0], len(self.sizes)))
        self._choose(weights, uniform, out)

    def mean_of_unit_fields(self, fields):
        fields[...] = self._probabilities(fields)

    def draw_independent(self, start, rng):
        out = np.empty(start.shape, dtype=self.dtype)
        weights = self._grouped(np.asarray(start, dtype=np.float64), padding=0.0)
        return self._choose(weights, rng.random(weights.shape[:2]), out)

    def write_states(self, rows, rng, out):
        # each group one of K with the row's values as weights (uniform where all 0)
        weights = self._grouped(np.clip(np.asarray(rows, dtype=np.float64), 0, None), 0.0)
        empty = (weights.sum(axis=-1) == 0)[..., None]
        weights = np.where(empty & ~self._padding, 1.0, weights)
        self._choose(weights, rng.random(weights.shape[:2]), out)

    # -- missing entries: a missing code leaves its whole group unobserved ---------------
    handles_missing = True

    @property
    def entry_starts(self):
        return self._starts

    @property
    def entry_log_n_states(self):
        return np.log(np.asarray(self.sizes, dtype=np.float64))

    def check_missing(self, missing):
        if not missing.size:
            return
        grouped = np.add.reduceat(missing.astype(np.intp), self._starts, axis=1)
        partial = (grouped > 0) & (grouped < np.asarray(self.sizes))
        if partial.any():
            row, group = np.argwhere(partial)[0]
            raise ValueError(
                f"Row {row} leaves some units of softmax group {group} unobserved and not "
                "others: a categorical entry is missing as a whole (all its units NaN) "
                "or observed as a whole.")

    def entry_log_partitions(self, input):
        # each group's log sum_k exp(b_k + x_k)
        grouped = self._grouped(input + self.bias)
        xp = namespace_of(grouped)
        top = xp.max(grouped, axis=-1, keepdims=True)
        return xp.log(xp.sum(self._normalised_exp(grouped, top), axis=-1)) + top[..., 0]

    def sublayer(self, units):
        kept = np.asarray(units)[self._starts]
        return SoftmaxUnits(self.bias[units],
                            [size for size, keep in zip(self.sizes, kept) if keep])

    # -- other namespaces: the padded (rows, groups, largest K) gather ---------------
    def _xp_indices(self, xp, device):
        """The gather's column numbers, its padding mask and the padded array's
        positions of the units, as arrays of ``xp`` on ``device`` (made once; every
        layer of the same groups shares them)."""
        cache = self.__dict__.setdefault("_xp_cache", {})
        key = (namespace_of(self.bias).__name__, str(device))
        if key not in cache:
            cache[key] = (
                xp.asarray(self._columns.ravel(), device=device),
                xp.asarray(self._padding, device=device),
                xp.asarray(np.flatnonzero(~self._padding.ravel()), device=device),
            )
        return cache[key]

def most_probable_codes(V, sizes):
    """Return each group's most probable category of softmax rows, as codes.

    Parameters
    ----------
    V : array of shape (n_rows, sum(sizes))
        One-hot rows, or each group's category probabilities (any namespace).
    sizes : sequence of int
        The number of units (categories) of each group, in order.

    Returns
    -------
    codes : array of shape (n_rows, len(sizes))
        The category of each group with the largest value (the first on a tie), in
        the dtype of ``V``.
    """
    if not len(sizes):
        return V[:, :0]
    xp = namespace_of(V)
    stops = np.cumsum(sizes, dtype=np.intp)
    codes = [xp.argmax(V[:, int(stop - size):int(stop)], axis=1)
             for size, stop in zip(sizes, stops)]
    return as_dtype(xp.stack(codes, axis=1), V.dtype)


class LayerGroups(Layer):
    """A visible layer made of groups of units of different types, side by side.

    Each group is a layer over its own columns; the formulas of the whole are sums
    (energies, log-partitions) or the groups' own (means, draws) over their columns. A
    mixed table is such a list (Gaussian columns, categorical columns); so is the joint
    visible layer (features, class) of a classification RBM. Groups whose draws compare
    fields with logistic noise share one draw over the whole row. A group's parameters
    besides its bias (a Gaussian group's variances) are the whole layer's
    ``extra_parameters``, each over the block of units of the groups that have it
    (``extra_columns``: such groups must be side by side), so that a training form
    learns them in one slice of its row.

    Parameters
    ----------
    groups : sequence of Layer
        The groups, in column order.
    bias : ndarray of shape (n_units,), optional
        One array holding every group's bias (the groups are bound to its slices);
        by default the groups' own biases, concatenated.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.views import BinaryUnits, LayerGroups, SoftmaxUnits
    >>> layer = LayerGroups([BinaryUnits(np.zeros(2)), SoftmaxUnits(np.zeros(3), (3,))])
    >>> layer.n_units, bool(np.isclose(layer.log_n_states, np.log(4 * 3)))
    (5, True)
    """

    #: Whether its states are countable is its groups' answer (an instance's); the
    #: class alone promises no countable states.
    discrete = False

    def __init__(self, groups, bias=None):
        self.groups = list(groups)
        sizes = [group.n_units for group in self.groups]
        self._slices = [slice(int(start), int(start + size)) for start, size in
                        zip(np.cumsum([0, *sizes[:-1]]), sizes)]
        if bias is None:
            biases = [group.bias for group in self.groups]
            xp = namespace_of(biases[0]) if biases else np
            bias = np.concatenate(biases) if xp is np else xp.concat(biases)
        else:
            self.groups = [group.replace(bias=bias[cut])
                           for group, cut in zip(self.groups, self._slices)]
        self.bias = bias
        self.unit_type = None
        self.discrete = all(group.discrete for group in self.groups)
        self.tempers_bias = all(group.tempers_bias for group in self.groups)
        self.auto_negative_visible = self.groups[0].auto_negative_visible
        self._shared_logistic = any(group.row_noise == "logistic" for group in self.groups)
        self.extra_parameters, self._extra_blocks = self._extra_parameter_blocks()

    def parameters(self):
        return {"groups": self.groups, "bias": self.bias}

    def replace(self, **parameters):
        groups = parameters.get("groups", self.groups)
        extra = {name: parameters[name] for name in self.extra_parameters if name in parameters}
        if extra:
            groups = self._with_extra_parameters(groups, extra)
        return LayerGroups(groups, parameters.get("bias", self.bias))

    def astype(self, dtype):
        return LayerGroups([group.astype(dtype) for group in self.groups])

    def __repr__(self):
        return f"LayerGroups({self.groups!r})"

    @property
    def unit_types(self):
        """The unit type of each group."""
        return tuple(group.unit_type for group in self.groups)

    def parts(self, S):
        """Split rows into the groups' columns.

        Parameters
        ----------
        S : ndarray of shape (n_rows, n_units)
            Rows of the whole layer.

        Returns
        -------
        parts : list of (Layer, ndarray)
            Each group with its columns of ``S``.
        """
        return [(group, S[:, cut]) for group, cut in zip(self.groups, self._slices)]

    def energy(self, S):
        return sum(group.energy(part) for group, part in self.parts(S))

    def seen_weights(self, weights):
        return np.hstack([group.seen_weights(weights[:, cut])
                          for group, cut in zip(self.groups, self._slices)])

    def mean(self, input):
        return concat_columns([group.mean(part) for group, part in self.parts(input)])

    def sample(self, input, rng):
        return concat_columns([group.sample(part, rng) for group, part in self.parts(input)])

    def log_partition(self, input, overwrite=False, add_to=None):
        log_z = sum(group.log_partition(part) for group, part in self.parts(input))
        return log_z if add_to is None else add_to + log_z

    def independent_log_partition(self):
        return sum(group.independent_log_partition() for group in self.groups)

    @property
    def log_n_states(self):
        return sum(group.log_n_states for group in self.groups)

    def base_bias_from_rates(self, rates):
        return np.concatenate([group.base_bias_from_rates(np.asarray(rates)[cut])
                               for group, cut in zip(self.groups, self._slices)])

    def draw_fields(self, x, noise, out=None, tempered=False):
        out = x if out is None else out
        logistic = noise.logistic(x.shape) if self._shared_logistic else None
        for group, cut in zip(self.groups, self._slices):
            group.draw_units(x[:, cut], noise, out[:, cut],
                             None if logistic is None else logistic[:, cut])
        out[..., -1] = 1
        return out

    def mean_of_fields(self, x):
        for group, cut in zip(self.groups, self._slices):
            group.mean_of_unit_fields(x[:, cut])
        x[..., -1] = 1
        return x

    def write_states(self, rows, rng, out):
        for group, cut in zip(self.groups, self._slices):
            group.write_states(rows[:, cut], rng, out[:, cut])

    # -- missing entries: each group's own, side by side ------------------------------
    handles_missing = True

    @property
    def entry_starts(self):
        return np.concatenate([group.entry_starts + cut.start
                               for group, cut in zip(self.groups, self._slices)])

    @property
    def entry_log_n_states(self):
        return np.concatenate([group.entry_log_n_states for group in self.groups])

    def check_missing(self, missing):
        for group, cut in zip(self.groups, self._slices):
            group.check_missing(missing[:, cut])

    def entry_log_partitions(self, input):
        return np.hstack([group.entry_log_partitions(part)
                          for group, part in self.parts(np.asarray(input))])

    def seen_states(self, S):
        return concat_columns([group.seen_states(part) for group, part in self.parts(S)])

    def observed_log_weight(self, S, missing):
        return sum(group.observed_log_weight(part, missing[:, cut])
                   for (group, part), cut in zip(self.parts(S), self._slices))

    def sublayer(self, units):
        units = np.asarray(units)
        return LayerGroups([group.sublayer(units[cut])
                            for group, cut in zip(self.groups, self._slices)
                            if units[cut].any()])

    # -- the whole as one group: annealing chains, sampling starts, enumeration ------
    def draw_units(self, fields, noise, out, logistic=None):
        if logistic is None and self._shared_logistic:
            logistic = noise.logistic(fields.shape)
        for group, cut in zip(self.groups, self._slices):
            group.draw_units(fields[:, cut], noise, out[:, cut],
                             None if logistic is None else logistic[:, cut])

    def mean_of_unit_fields(self, fields):
        for group, cut in zip(self.groups, self._slices):
            group.mean_of_unit_fields(fields[:, cut])

    def draw_independent(self, start, rng):
        return np.hstack([group.draw_independent(part, rng)
                          for group, part in self.parts(np.asarray(start))])

    @property
    def n_states(self):
        return int(np.prod([group.n_states for group in self.groups], dtype=object))

    def states(self, start, stop):
        # mixed-radix codes, the first group's state the fastest-changing digit
        codes = np.arange(start, stop, dtype=np.int64)
        parts = []
        for group in self.groups:
            index, codes = np.divmod(codes, group.n_states)[::-1]
            low = int(index.min(initial=0))
            high = int(index.max(initial=-1)) + 1
            parts.append(group.states(low, max(low, high))[index - low])
        return np.hstack(parts)

    # -- groups with extra parameters (a Gaussian group's log variances) --------------
    def _extra_parameter_blocks(self):
        """The extra parameters of the groups (each name once, in group order) and, for
        each, the block of units of the groups that have it (they must be side by
        side, so that a training form's row of it is one slice)."""
        names = tuple(dict.fromkeys(name for group in self.groups
                                    for name in group.extra_parameters))
        blocks = {}
        for name in names:
            cuts = [cut for group, cut in zip(self.groups, self._slices)
                    if name in group.extra_parameters]
            if any(left.stop != right.start for left, right in zip(cuts, cuts[1:])):
                raise ValueError(
                    f"The groups with the parameter {name!r} must be side by side: "
                    "put them next to each other in the list of groups.")
            blocks[name] = slice(int(cuts[0].start), int(cuts[-1].stop))
        return names, blocks

    def extra_columns(self, name):
        return self._extra_blocks[name]

    def _with_extra_parameters(self, groups, extra):
        """``groups`` with each extra parameter's array (over its block of units)
        handed out to the groups that have it, in their order."""
        bound = []
        for group, cut in zip(groups, self._slices):
            own = {name: values[cut.start - self._extra_blocks[name].start:
                                cut.stop - self._extra_blocks[name].start]
                   for name, values in extra.items() if name in group.extra_parameters}
            bound.append(group.replace(**own) if own else group)
        return bound

    def training_parameter(self, name):
        return np.concatenate([group.training_parameter(name) for group in self.groups
                               if name in group.extra_parameters])

    def for_view(self):
        if not self.extra_parameters:
            return self
        return LayerGroups([group.for_view() for group in self.groups], self.bias)

    def seen_rows(self, rows, form):
        # [W | c] over [b | ALWAYS_ON] with each group's columns of W as the hidden
        # units see its states (a Gaussian group's W / sigma^2), in a buffer kept by the
        # form; the visible biases' row left 0, as a Gaussian layer's (the constant
        # hidden unit needs no part of unbounded values)
        if not self.extra_parameters:
            return rows
        coupling = getattr(form, "_coupling_buffer", None)
        if coupling is None or coupling.dtype != rows.dtype:
            coupling = form._coupling_buffer = np.zeros_like(rows)
            coupling[-1, -1] = rows[-1, -1]
        coupling[:-1, -1] = rows[:-1, -1]
        for group, cut in zip(self.groups, self._slices):
            coupling[:-1, cut] = group.seen_weights(rows[:-1, cut])
        return coupling

    # tempered_input is the base's: the whole layer's rule (a group of a layer that
    # keeps some bias untempered keeps its own too), as the training form tempers it

    def extra_gradients(self, V, H, weights, means, row_weights=None):
        # each extra parameter over its block: its groups' gradients side by side
        gradients = {}
        for group, cut in zip(self.groups, self._slices):
            own = group.extra_gradients(V[:, cut], H, weights[:, cut], means, row_weights)
            for name, gradient in own.items():
                gradients.setdefault(name, []).append(gradient)
        return {name: namespace_of(V).concat(parts) for name, parts in gradients.items()}

    def extra_statistics(self, out, V, weights, products, means, row_weights=None):
        # each group's rows of its own parameters over its columns; 0 elsewhere
        out[...] = 0
        for group, cut in zip(self.groups, self._slices):
            if not group.extra_parameters:
                continue
            rows = [self.extra_parameters.index(name) for name in group.extra_parameters]
            statistics = np.zeros((len(rows), cut.stop - cut.start), dtype=out.dtype)
            group.extra_statistics(statistics, V[:, cut], weights[:, cut],
                                   products[:, cut], means, row_weights)
            out[rows, cut] = statistics


__all__ = [
    "BinaryUnits",
    "GaussianUnits",
    "Layer",
    "LayerGroups",
    "SoftmaxUnits",
    "most_probable_codes",
]
