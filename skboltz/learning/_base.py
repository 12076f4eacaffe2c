"""Interface of learning strategies (how the negative-phase statistics are estimated)."""

import copy
import dataclasses
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator

from ..utils._capabilities import BINARY, LAYERED, PAIRWISE, RESTRICTED, Requires
from ..models._rbm_energy import RBMLayout
from ..utils._registry import registry_decorator

#: String name -> strategy class, filled on import. Which names a model accepts follows
#: from what each class requires and what the model's view offers (``_capabilities``).
LEARNING_STRATEGIES = {}

register = registry_decorator(LEARNING_STRATEGIES, "strategy")


class LearningStrategy(BaseEstimator):
    """Base class of learning strategies: how a model's learning statistics are estimated.

    A strategy holds settings only (its ``__init__`` parameters, which ``get_params``,
    ``set_params`` and ``clone`` see, so a grid search can tune them as
    ``learning__<name>``). The state it needs between minibatches (persistent chains,
    magnetisations, ...) is created by :meth:`init_state`, kept by the estimator and
    handed back on every call, together with the estimator's random generator; a
    strategy never keeps state or randomness of its own. The state is the strategy's
    business: it can be any object, and the estimator never looks inside it. What the
    estimator needs of it, it asks the strategy: a copy for a ``partial_fit`` that may
    fail (:meth:`copy_state`), a cast to another dtype (:meth:`cast_state`), the
    persistent chains for the divergence check (:meth:`persistent_chains`) and
    diagnostics for ``history_`` (:meth:`pop_diagnostics`). The defaults serve a dict
    or a dataclass of arrays and numbers.

    Strategies come in three kinds, one per learning rule: subclass
    :class:`RBMLearningStrategy` to train the restricted models (:class:`~skboltz.RBM`,
    :class:`~skboltz.GaussianRBM`), :class:`BMLearningStrategy` to train
    :class:`~skboltz.BoltzmannMachine` and :class:`DBMLearningStrategy` to train
    :class:`~skboltz.DBM`. Each class declares what it ``requires`` of a
    model (a :class:`~skboltz.views.Requires`: the unit types it handles and the
    operations it calls), and a model refuses at ``fit``, with a message naming both, a
    strategy whose requirements its view does not meet.

    Examples
    --------
    >>> from skboltz import RBM
    >>> from skboltz.learning import PCD, LearningStrategy
    >>> isinstance(PCD(), LearningStrategy)
    True
    >>> RBM(learning=PCD(n_steps=5)).get_params()["learning__n_steps"]
    5
    """

    #: The string name under which the strategy is registered ("" if none).
    name = ""

    #: What the strategy needs of a model view (``skboltz.views.Requires``).
    #: None here: the two kinds below declare their learning rule, and subclasses
    #: narrow it (e.g. to binary units).
    requires = None

    #: Subclasses list the constraints of their parameters (scikit-learn's
    #: ``_parameter_constraints``); parameters not listed are not checked.
    _parameter_constraints: dict = {}

    def init_state(self, model, X, batch_size, rng):
        """Create the state the strategy keeps between minibatches (None when none).

        Parameters
        ----------
        model : model view
            The model at the start of training: an :class:`~skboltz.views.RBMView`,
            :class:`~skboltz.views.GaussianRBMView`, :class:`~skboltz.views.BMView` or
            :class:`~skboltz.views.DBMView`.
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            The training data, e.g. to start persistent chains at data rows.
        batch_size : int
            The estimator's minibatch size.
        rng : numpy.random.Generator
            The estimator's source of randomness.

        Returns
        -------
        state : object
            Whatever the strategy needs between minibatches, or None.
        """
        return None

    def n_persistent_chains(self, batch_size):
        """How many chains (rows of every unit) the state keeps between minibatches.

        Counted, with the model's own arrays, in the memory check before training
        starts; 0 (the default) for a strategy that keeps none.

        Parameters
        ----------
        batch_size : int
            The estimator's minibatch size (for strategies whose default number of
            chains follows it).

        Returns
        -------
        n_chains : int
            Rows of model states the strategy's state holds.
        """
        return 0

    def copy_state(self, state):
        """Return a copy of ``state`` that training can change while ``state`` stays.

        A ``partial_fit`` trains on a copy and keeps the old state if the call fails.
        The default copies the arrays of a dict (sharing its numbers and strings) and
        deep-copies anything else; override it for a state that is costly to deep-copy.

        Parameters
        ----------
        state : object
            What :meth:`init_state` returned, as training left it.

        Returns
        -------
        copy : object
            An independent copy.
        """
        if state is None:  # CD's (every partial_fit call copies the state)
            return None
        if type(state) is dict and all(
            isinstance(value, (np.ndarray, *_IMMUTABLE)) for value in state.values()
        ):
            return {key: value.copy() if isinstance(value, np.ndarray) else value
                    for key, value in state.items()}
        return copy.deepcopy(state)

    def cast_state(self, state, dtype):
        """Return ``state`` with its floating-point arrays in ``dtype``.

        Called when a ``partial_fit`` continues a model with data of another dtype.
        The default casts the float arrays held in a dict (in place) or in a
        dataclass's fields (a new instance), and leaves other objects as they are.

        Parameters
        ----------
        state : object
            What :meth:`init_state` returned.
        dtype : numpy dtype
            The model's new floating-point type.

        Returns
        -------
        state : object
            The state in ``dtype``.
        """
        if type(state) is dict:
            for key, value in state.items():
                if _is_float_array(value):
                    state[key] = value.astype(dtype)
        elif dataclasses.is_dataclass(state) and not isinstance(state, type):
            cast = {
                item.name: getattr(state, item.name).astype(dtype)
                for item in dataclasses.fields(state)
                if item.init and _is_float_array(getattr(state, item.name))
            }
            if cast:
                state = dataclasses.replace(state, **cast)
        return state

    def persistent_chains(self, state):
        """Return the states of persistent chains, or None if the strategy keeps none.

        The divergence check at the end of each ``fit`` / ``partial_fit`` uses them as
        states near the model's modes; only their first ``n_visible`` columns are read.

        Parameters
        ----------
        state : object
            What :meth:`init_state` returned.

        Returns
        -------
        chains : ndarray of shape (n_chains, n_units) or None
            The chains' current states.
        """
        return None

    def pop_diagnostics(self, state):
        """Return the diagnostics gathered since the last call, and start afresh.

        The estimator calls this at the end of every epoch and records the values in
        ``history_`` under their names (e.g. parallel tempering's swap acceptance).

        Parameters
        ----------
        state : object
            What :meth:`init_state` returned.

        Returns
        -------
        diagnostics : dict of str to float
            Empty by default.
        """
        return {}


class RBMLearningStrategy(LearningStrategy):
    """Base class of RBM learning strategies: the negative (free) phase of an RBM.

    An RBM's likelihood gradient is the difference of the data's and the model's
    expectations of h v^T (and of v and h). The estimator computes the data term; a
    strategy supplies the model term as **visible rows**: subclass and implement
    :meth:`negative_phase` (and :meth:`init_state` if it keeps state between
    updates, like persistent chains). The estimator turns the rows V into the negative
    statistics mean(P(h = 1 | v) v^T) and the updates.

    The built-in sampling strategies (:class:`CD`, :class:`PCD`,
    :class:`ParallelTempering`) also return a private sampler object that a faster,
    fused training loop drives; :class:`ExactGradient` and :class:`TAPGradient` compute
    the statistics in closed form rather than as rows.

    Examples
    --------
    A negative phase that restarts one Gibbs step from uniformly random states each
    update (a poor strategy, but a complete one):

    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from skboltz import RBM
    >>> from skboltz.learning import RBMLearningStrategy
    >>> class RandomRestart(RBMLearningStrategy):
    ...     def __init__(self, n_rows=20):
    ...         self.n_rows = n_rows
    ...
    ...     def negative_phase(self, model, batch, state, rng, progress):
    ...         V = (rng.random((self.n_rows, model.n_visible)) < 0.5).astype(model.dtype)
    ...         return model.gibbs_step(V, rng)
    >>> X = load_digits().data / 16
    >>> rbm = RBM(n_components=8, learning=RandomRestart(), learning_rate=0.01, n_iter=2,
    ...           random_state=0).fit(X)
    >>> rbm.learning_
    RandomRestart()
    """

    #: Any unit types: the estimator turns the rows into statistics.
    requires = Requires(operations={RESTRICTED})

    # -- any array namespace: the dispatched path's negative phase -----------------------
    #: Whether the rows of :meth:`negative_sample` start at the minibatch's (CD): they
    #: then carry its rows' weights.
    negative_rows_start_at_batch = False

    def negative_sample(self, model, chains, positive, positive_hidden, source, n_steps,
                        rows_are_means):
        """Negative rows and their hidden probabilities, in the rows' namespace.

        Under array API dispatch (torch, CuPy or array-api-strict rows) a restricted
        estimator trains with the strategies that implement this method (a
        capability; :class:`CD`, :class:`PCD` and :class:`ParallelTempering` do):
        the formulas of its ``model``'s layers take any namespace.

        Parameters
        ----------
        model : object
            The restricted model of the current parameters in the rows' namespace:
            its ``visible`` and ``hidden`` layers (``mean``, ``sample``,
            ``tempered_input``), ``hidden_input(V)``, ``visible_input(H)``,
            ``hidden_probability(V)`` and ``tempered_energy(V, H)``.
        chains : dict or None
            What :meth:`start_chains` returned; update it in place.
        positive : array of shape (n_rows, n_visible)
            The minibatch.
        positive_hidden : array of shape (n_rows, n_hidden)
            Its hidden probabilities P(h = 1 | v).
        source : object
            The namespace's random source (``random(shape, dtype)``,
            ``standard_normal(shape, dtype)``, as a ``numpy.random.Generator``).
        n_steps : int
            This update's Gibbs steps.
        rows_are_means : bool
            Whether ``negative_visible`` asks for the visible means.

        Returns
        -------
        negative : array of shape (n_negative, n_visible)
            The negative rows.
        negative_hidden : array of shape (n_negative, n_hidden)
            Their hidden probabilities.
        """
        raise NotImplementedError(
            f"{type(self).__name__} has no negative phase on other array namespaces: "
            "it trains on NumPy arrays only.")

    def start_chains(self, model, rows, source):
        """The persistent chains' state under array API dispatch.

        Parameters
        ----------
        model : object
            The restricted model of the starting parameters (see
            :meth:`negative_sample`).
        rows : array of shape (n_chains, n_visible)
            The chains' first visible states (``n_persistent_chains`` of them).
        source : object
            The namespace's random source.

        Returns
        -------
        chains : dict or None
            What :meth:`negative_sample` receives (None: no persistent chains).
        """
        return None

    def negative_phase(self, model, batch, state, rng, progress):
        """Visible rows whose hidden conditionals give the negative statistics.

        Parameters
        ----------
        model : RBMView or GaussianRBMView
            Read-only view of the RBM's current parameters
            (:class:`skboltz.views.RBMView`; :class:`skboltz.views.GaussianRBMView`
            for a :class:`~skboltz.GaussianRBM`, whose ``sample_hidden`` and
            ``sample_visible`` give a Gibbs step on visible rows).
        batch : ndarray of shape (n_rows, n_visible)
            The minibatch (the clamped data), e.g. to start chains at it as CD does.
        state : object
            What :meth:`init_state` returned; update it in place.
        rng : numpy.random.Generator
            The estimator's source of randomness.
        progress : float
            Fraction of the requested training done, in [0, 1], for schedules.

        Returns
        -------
        V : ndarray of shape (n_negative, n_visible)
            Visible states (or probabilities) approximately drawn from the model; the
            negative statistics are their mean of P(h = 1 | v) v^T.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not produce negative-phase rows; subclasses of "
            "RBMLearningStrategy implement negative_phase."
        )

    def _fused_sampler(self, model, state, noise, progress):
        """The :class:`FusedSampler` the fused training loops drive, or None.

        ``model`` is the training form of the parameters the updates move (rows carry
        a trailing constant unit, so one matrix product gives all statistics at once:
        ``skboltz.models._rbm_energy.AugmentedRBM`` or a class that duck-types it), ``state``
        what :meth:`init_state` returned, ``noise`` the estimator's buffered random
        stream (:class:`skboltz.utils._noise.Noise`) and ``progress`` the fraction of the
        training done. None (the default): the loops take the negative statistics
        from :meth:`_negative_statistics` (rows of :meth:`negative_phase`, or a closed
        form that overrides it).
        """
        return None

    def _negative_statistics(self, model, positive, state, rng, progress, noise=None):
        """Mean negative statistics of one minibatch, in the augmented layout.

        The plain loop's source of statistics for strategies without a fused sampler:
        the rows of :meth:`negative_phase` (users' strategies), or closed forms (exact,
        TAP) that override it; for the built-in samplers, the reference computation of
        one update (:meth:`FusedSampler.negative_statistics`, which the fused loops
        must agree with). Returns an array shaped like ``model.params``: mean h v^T,
        with mean h in the last column and mean v in the last row. ``noise`` (the
        built-in samplers) is a buffered :class:`skboltz.utils._noise.Noise` stream to draw
        from; None draws from ``rng`` directly.
        """
        rows = self.negative_phase(model.view(), positive[RBMLayout.units], state, rng,
                                   progress)
        rows = np.asarray(rows, dtype=model.params.dtype)
        if rows.ndim != 2 or rows.shape[1] != model.n_visible or rows.shape[0] == 0:
            raise ValueError(
                f"{type(self).__name__}.negative_phase must return a non-empty array of "
                f"shape (n_rows, {model.n_visible}) of visible states; got shape "
                f"{rows.shape}."
            )
        rows = model.augment(rows)
        return model.statistics(model.hidden_probability(rows), rows) / rows.shape[0]


class FusedSampler:
    """A sampling strategy's negative phase in the form the fused training loops drive.

    Made by :meth:`RBMLearningStrategy._fused_sampler` and bound to a training form
    (``model``), the strategy's state and the estimator's noise for one epoch (the
    state's arrays and the parameters' array stay the same objects meanwhile). A loop
    keeps the minibatch's augmented rows on top of a buffer and, per minibatch, lets
    :meth:`sample` write the negative rows below them (``n_negative(n_positive)``
    rows, then ``n_chain_rows`` chain rows), computes the hidden inputs x of the rows
    written under the parameters of the coming update and hands 1 + exp(-x) to
    :meth:`observe`; at the end of the epoch it calls :meth:`release`.
    :meth:`negative_statistics` is the reference computation of one update.
    """

    #: Rows :meth:`sample` writes after the negative rows whose hidden inputs it needs
    #: (:meth:`observe`) but which stay out of the statistics.
    n_chain_rows = 0
    #: Whether the negative rows are means of p(v | h) rather than visible states.
    rows_are_means = False
    #: Whether the chains start at the minibatch: :meth:`sample` then also receives
    #: the hidden inputs of the minibatch's rows (``positive_input``), which the update
    #: computes anyway, to draw the chains' first hidden states from.
    starts_at_data = False

    def __init__(self, model, state, noise):
        self.model, self.state, self.noise = model, state, noise

    def n_negative(self, n_positive):
        """Number of negative rows :meth:`sample` writes for ``n_positive`` rows."""
        raise NotImplementedError

    def sample(self, positive, out, positive_input=None):
        """Write augmented negative rows into ``out`` (shape (n_negative +
        n_chain_rows, n_visible + 1)): visible states drawn by the training form's
        ``draw_visible`` (binary for an RBM, real-valued for a Gaussian RBM), or their
        means given the hidden states when :attr:`rows_are_means`, then the chain rows
        if any, each with the trailing constant unit.

        ``positive`` holds the minibatch's augmented rows. The sampler may keep a
        reference to ``out``: it stays valid until the loop's next call
        (:meth:`release` then lets the state own what it keeps). ``positive_input``
        (samplers that :attr:`starts_at_data`) holds the hidden inputs of the
        minibatch's rows under the current parameters.
        """
        raise NotImplementedError

    def observe(self, inverse_probability):
        """Receive 1 + exp(-x) = 1 / P(h = 1 | v) of the rows just written to ``out``.

        ``x`` is the hidden input of those rows (negative rows, then chain rows) under
        the parameters of the coming update; persistent chains draw their next hidden
        state from it (``inverse_probability < noise.reciprocal_uniform(...)``) without
        another product.
        """

    def release(self):
        """Stop referring to the loop's buffers (the epoch is over; the next call
        reuses them): a sampler whose state kept a reference to ``out`` copies it."""

    def negative_rows(self, batch):
        """The augmented negative rows for the minibatch ``batch`` (visible rows,
        without the constant unit), in a new array."""
        n_negative = self.n_negative(batch.shape[0])
        out = self.model.empty_visible(n_negative + self.n_chain_rows)
        with np.errstate(over="ignore"):  # as in training (exp(-x) may reach inf)
            self.sample(self.model.augment(batch), out)
        return out[:n_negative]

    def negative_statistics(self, positive, weights=None):
        """Mean negative statistics of the minibatch of augmented rows ``positive``
        (see :meth:`RBMLearningStrategy._negative_statistics`). ``weights``: the
        rows' weights in a weighted fit, by which the chains that start at them
        (:attr:`starts_at_data`) count; other chains do not depend on the rows."""
        model = self.model
        n_negative = self.n_negative(positive.shape[0])
        out = model.empty_visible(n_negative + self.n_chain_rows)
        with np.errstate(over="ignore"):  # as in training (exp(-x) may reach inf)
            if self.starts_at_data:
                self.sample(positive, out, model.hidden_input(positive))
            else:
                self.sample(positive, out)
            x = model.hidden_input(out)
            np.negative(x, out=x)
            np.exp(x, out=x)
        x += 1
        self.observe(x)
        np.divide(1, x, out=x)  # 1 / (1 + exp(-x)) = sigmoid(x)
        statistics = model.statistics(
            x[:n_negative], out[:n_negative], means=self.rows_are_means,
            weights=weights if self.starts_at_data else None)
        return statistics / n_negative


class BMLearningStrategy(LearningStrategy):
    """Base class of Boltzmann-machine strategies: a clamped and a free phase.

    The Boltzmann learning rule (Ackley, Hinton & Sejnowski 1985) moves each coupling
    by <s_i s_j>_clamped - <s_i s_j>_free and each bias by <s_i>_clamped - <s_i>_free
    (divided by the temperature). Subclasses implement :meth:`positive_phase`
    (visible units clamped to the data, hidden units inferred) and
    :meth:`negative_phase` (the free-running model). Both return second moments in one
    symmetric matrix whose diagonal holds the means (``s_i s_i = s_i`` for binary
    units).

    Examples
    --------
    >>> from skboltz.learning import BMLearningStrategy, Gibbs, MeanFieldGradient
    >>> issubclass(Gibbs, BMLearningStrategy) and issubclass(MeanFieldGradient, BMLearningStrategy)
    True
    """

    requires = Requires(operations={PAIRWISE})

    def positive_phase(self, model, batch, state, rng, weights=None):
        """Clamped second moments (mean s s^T, diagonal = mean s) for ``batch``.

        Parameters
        ----------
        model : BMView
            Read-only view of the machine's current parameters
            (:class:`skboltz.views.BMView`).
        batch : ndarray of shape (n_rows, n_visible)
            Visible rows (values in [0, 1]).
        state : object
            What :meth:`init_state` returned.
        rng : numpy.random.Generator
            Source of randomness for sampling strategies.
        weights : ndarray of shape (n_rows,) or None, default=None
            In a fit with ``sample_weight``: the rows' relative weights (of mean 1
            over the fit's rows); the mean is then ``sum_n weights[n] s_n s_n^T /
            n_rows``. A strategy that leaves this parameter out cannot serve weighted
            fits (they raise an error that says so).

        Returns
        -------
        moments : ndarray of shape (n_units, n_units)
            Mean of s s^T with the visible units clamped to the rows.
        """
        raise NotImplementedError

    def negative_phase(self, model, batch, state, rng, progress):
        """Free second moments (mean s s^T, diagonal = mean s) under the model.

        Parameters
        ----------
        model : BMView
            Read-only view of the machine's current parameters.
        batch : ndarray of shape (n_rows, n_visible)
            The minibatch (used by strategies that start chains at the data).
        state : object
            What :meth:`init_state` returned, updated in place.
        rng : numpy.random.Generator
            Source of randomness for sampling strategies.
        progress : float
            Fraction of the requested training done, in [0, 1].

        Returns
        -------
        moments : ndarray of shape (n_units, n_units)
            Mean of s s^T under the model's free-running distribution.

        Notes
        -----
        A strategy whose runs start at the rows of ``batch`` takes a keyword
        ``weights`` too (as :meth:`positive_phase`), so that a weighted fit counts
        them by the rows' weights; one without it is called without the weights.
        """
        raise NotImplementedError


class DBMLearningStrategy(LearningStrategy):
    """Base class of deep-Boltzmann-machine strategies: both phases, layer by layer.

    The log-likelihood gradient of a deep Boltzmann machine moves each W_k by
    <x_k x_{k-1}^T>_data - <x_k x_{k-1}^T>_model and each bias b_k by <x_k>_data -
    <x_k>_model (Salakhutdinov & Hinton, "Deep Boltzmann machines", 2009). Subclasses
    implement :meth:`positive_phase` (the hidden layers inferred with the visible units
    clamped to the minibatch) and :meth:`negative_phase` (the model running freely);
    both return **rows of every layer**, and the estimator turns them into the
    expectations as means over the rows of the products of neighbouring layers (so a
    positive phase of means, one row per data row, must come from a posterior that
    factorises over the units, as mean field's does; rows of samples have no such
    restriction).

    Examples
    --------
    >>> from skboltz.learning import DBMLearningStrategy, MeanFieldPCD
    >>> issubclass(MeanFieldPCD, DBMLearningStrategy)
    True
    """

    requires = Requires(units={BINARY}, operations={LAYERED})

    def positive_phase(self, model, batch, state, rng):
        """Infer rows of every layer with the visible units clamped to ``batch``.

        Parameters
        ----------
        model : DBMView
            Read-only view of the machine's current parameters
            (:class:`skboltz.views.DBMView`).
        batch : ndarray of shape (n_rows, n_visible)
            Visible rows (values in [0, 1]).
        state : object
            What :meth:`init_state` returned.
        rng : numpy.random.Generator
            Source of randomness for sampling strategies.

        Returns
        -------
        layers : list of ndarray
            ``[V, X_1, ..., X_L]``, ``X_k`` of shape (n_rows, n_k): the visible rows
            and each hidden layer's (mean or sampled) values given them.
        """
        raise NotImplementedError

    def negative_phase(self, model, batch, state, rng, progress):
        """Draw rows of every layer (approximately) from the model.

        Parameters
        ----------
        model : DBMView
            Read-only view of the machine's current parameters.
        batch : ndarray of shape (n_rows, n_visible)
            The minibatch (used by strategies that start chains at the data).
        state : object
            What :meth:`init_state` returned, updated in place.
        rng : numpy.random.Generator
            Source of randomness.
        progress : float
            Fraction of the requested training done, in [0, 1].

        Returns
        -------
        layers : list of ndarray
            ``[X_0, X_1, ..., X_L]`` with the same number of rows in every layer:
            states (or conditional means given the neighbouring layers' states) of the
            model's layers.
        """
        raise NotImplementedError


_IMMUTABLE = (int, float, str, bytes, type(None))


def samples_on_any_namespace(strategy_class):
    """Whether a learning strategy (its class) has a negative phase on array
    namespaces other than NumPy's (:meth:`RBMLearningStrategy.negative_sample`)."""
    method = getattr(strategy_class, "negative_sample", None)
    return callable(method) and method is not RBMLearningStrategy.negative_sample


def _is_float_array(value):
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"


def validate_steps(n_steps):
    """Check an ``n_steps`` setting: a positive int or a (start, stop) pair."""
    pair = n_steps if isinstance(n_steps, tuple | list) else (n_steps, n_steps)
    if len(pair) != 2 or not all(
        isinstance(k, Integral) and not isinstance(k, bool) and k >= 1 for k in pair
    ):
        raise ValueError(
            "n_steps must be a positive int or a (start, stop) pair of positive ints, "
            f"got {n_steps!r}."
        )
    return pair


def steps_at(n_steps, progress):
    """The number of Gibbs steps at ``progress`` in [0, 1] of training.

    ``n_steps=(start, stop)`` grows k linearly from ``start`` at the first epoch to
    ``stop`` at the last one (CD-k with k growing during training, as Hinton 2010 suggests).
    """
    if type(n_steps) is int:  # the common case, called once per minibatch: keep it cheap
        return n_steps
    start, stop = validate_steps(n_steps)
    return int(round(start + (stop - start) * float(np.clip(progress, 0.0, 1.0))))
