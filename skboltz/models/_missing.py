"""Rows with missing entries in a restricted model: what the model says of the observed ones.

A row of a restricted model's visible units may leave entries unobserved (NaN in every
unit of the entry: one unit, or a whole softmax group). The model then speaks of the
observed entries o alone, the missing ones m summed out,

    p*(v_o) = sum_{v_m, h} exp(-E(v_o, v_m, h)),    log p(v_o) = log p*(v_o) - log Z,

(an integral over real-valued entries), and of the hidden units and the missing entries
given the observed ones, p(h | v_o) and p(v_m | v_o). Given h the visible entries are
independent, so for a fixed h the missing ones sum out in closed form (each entry's
log-partition, :meth:`~skboltz.views.Layer.entry_log_partitions`); given every visible
unit the hidden layer sums out in closed form. Hence two exact routes, chosen row by row
by their cost (:data:`EXACT_ROW_COST`):

- ``"hidden"``: list the hidden states,
  log p*(v_o, h) = -E_h(h) + h . W v'_o - E_v(v_o) + sum_{e in m} log Z_e((W^T h)_e);
- ``"visible"``: list the completions of the row's missing entries (countable units),
  log p*(v_o, v_m) = -F(v_o, v_m).

Both give log p*(v_o), P(h | v_o) and E[v_m | v_o] exactly, and exact draws of v_m.
Where neither is affordable:

- log p*(v_o) is estimated by importance sampling over hidden states, the missing entries
  summed out for each, with a standard error (:meth:`IncompleteRows.log_weights`);
- P(h | v_o) and E[v_m | v_o] are the mean-field fixed point with the observed units
  clamped (deterministic; :meth:`IncompleteRows.mean_field`);
- draws of v_m come from block Gibbs chains with the observed units clamped.

Every result of a row depends on that row alone (and a seed), so scores stay row-wise.
Pure functions of numpy arrays and a read-only view; no scikit-learn objects.
"""

import zlib

import numpy as np

#: Multiply-adds (or their like) one row may spend on an exact route: a few
#: milliseconds. Beyond it, mean field (the hidden units, the missing entries' means),
#: importance sampling (the score) and Gibbs chains (draws).
EXACT_ROW_COST = 2**22

#: A visible completion costs a softplus per hidden unit: about this many
#: multiply-adds each (an exponential and a logarithm).
COMPLETION_COST = 16

#: Elements of the largest temporary table an exact route makes (32 MB of float64).
CHUNK_ELEMENTS = 2**22

#: Mean field with the observed units clamped: the largest change of a mean at which a
#: row's fixed point counts as found, and the most alternating sweeps.
MEAN_FIELD_TOL = 1e-7
MEAN_FIELD_MAX_SWEEPS = 500

#: Importance sampling of log p*(v_o) (a row): clamped Gibbs chains whose hidden
#: posteriors, with the mean-field one, make the proposal (a mixture of independent
#: hidden units), their burn-in, and the hidden states drawn from it. Measured on
#: small models against exact values: with 32 chains 0.75 % of the estimates lay
#: beyond 3 standard errors (2.3 % with 16).
IS_CHAINS = 32
IS_BURN_IN = 20
IS_SAMPLES = 512

#: The missing entries' means E[v_m | v_o] where no exact route serves a row: the
#: average of E[v_m | h] over clamped Gibbs chains (Rao-Blackwellised), after a
#: burn-in, over this many steps. Measured against exact means (digits, 12 hidden
#: units): a mean absolute error of 0.003-0.006 where the mean-field fixed point's was
#: 0.02-0.05.
AVERAGE_CHAINS = 32
AVERAGE_BURN_IN = 20
AVERAGE_STEPS = 20

#: Rows whose chains run together (bounds the temporary arrays of importance sampling).
ROW_BLOCK = 16

#: Block Gibbs steps of the clamped chains whose last states are the draws of rows no
#: exact route serves (from the mean-field fixed point).
DRAW_STEPS = 100

_ESTIMATE, _HIDDEN, _VISIBLE = 0, 1, 2


def missing_units(V):
    """The units of dense rows ``V`` without a value (NaN), or None when there are none."""
    missing = np.isnan(V)
    return missing if missing.any() else None


def row_seed(v, missing):
    """A number that depends on the row's observed values and pattern only."""
    observed = np.where(missing, 0.0, v).astype(np.float64)
    return zlib.crc32(observed.tobytes() + np.packbits(missing).tobytes())


class RowStreams:
    """The random numbers of stacked chains, each row's from its own generator.

    Stands for a numpy Generator (``random``, ``standard_normal``) in the layers'
    ``sample``: a call for (n_rows * n_chains, ...) numbers draws each row's block of
    ``n_chains`` from that row's generator, seeded by the row itself, so that a row's
    chains never depend on the other rows.

    Parameters
    ----------
    seeds : sequence
        One seed per row (anything ``numpy.random.default_rng`` takes).
    n_chains : int
        Chains per row, stacked row after row.
    """

    def __init__(self, seeds, n_chains):
        self.generators = [np.random.default_rng(seed) for seed in seeds]
        self.n_chains = n_chains

    def _draw(self, method, size, dtype):
        size = tuple(np.atleast_1d(size))
        block = (self.n_chains,) + size[1:]
        return np.concatenate([getattr(generator, method)(block, dtype=dtype)
                               for generator in self.generators])

    def per_row(self, n_chains):
        """The same generators, drawing blocks of ``n_chains`` rows."""
        streams = object.__new__(RowStreams)
        streams.generators, streams.n_chains = self.generators, n_chains
        return streams

    def random(self, size, dtype=np.float64):
        return self._draw("random", size, dtype)

    def standard_normal(self, size, dtype=np.float64):
        return self._draw("standard_normal", size, dtype)


def _log_mean_exp(values, axis=-1):
    top = np.max(values, axis=axis, keepdims=True)
    return (np.log(np.mean(np.exp(values - top), axis=axis)) + np.squeeze(top, axis))


class IncompleteRows:
    """Rows of a restricted model's visible units with entries missing (NaN).

    Parameters
    ----------
    view : RestrictedView
        The model (any dtype; the work is in float64).
    V : ndarray of shape (n_rows, n_visible)
        Visible rows (the model's units: one-hot groups for softmax entries), NaN in
        every unit of a missing entry.
    start : ndarray of shape (n_visible,) or None, default=None
        Means of the missing units where mean field and the chains start (the data's
        rates or means); None: the visible layer's means given no input.
    max_cost : float or None, default=None
        Per-row budget of the exact routes (None: EXACT_ROW_COST).

    Attributes
    ----------
    missing : ndarray of shape (n_rows, n_visible), dtype=bool
        The missing units.
    routes : ndarray of shape (n_rows,)
        0: estimated (mean field, importance sampling, Gibbs), 1: exact by listing the
        hidden states, 2: exact by listing the completions of the missing entries.
    """

    def __init__(self, view, V, start=None, max_cost=None):
        view = view if view.dtype == np.float64 else view.astype(np.float64)
        visible = view.visible
        if not visible.handles_missing:
            raise ValueError(
                f"The visible units of this model ({type(visible).__name__}) cannot "
                "leave entries unobserved: impute the missing values (NaN) first.")
        self.view = view
        self.V = np.asarray(V, dtype=np.float64)
        self.missing = np.isnan(self.V)
        visible.check_missing(self.missing)
        self.missing_entries = visible.missing_entries(self.missing)
        observed = np.where(self.missing, 0.0, self.V)
        # -E_v of the observed units, and what they send the hidden units (bias excluded)
        self.own = visible.observed_log_weight(observed, self.missing)
        seen = np.where(self.missing, 0.0, visible.seen_states(observed))
        self.hidden_input = seen @ view.weights.T
        if start is None:
            start = visible.mean(np.zeros((1, view.n_visible)))[0]
        self.start = np.asarray(start, dtype=np.float64)
        self.routes = self._routes(EXACT_ROW_COST if max_cost is None else max_cost)
        self._cache = {}

    @property
    def n_rows(self):
        return self.V.shape[0]

    @property
    def exact(self):
        """Whether each row's results are exact (an exact route serves it)."""
        return self.routes != _ESTIMATE

    def _routes(self, max_cost):
        view = self.view
        hidden_cost = np.inf
        if view.hidden.discrete and view.hidden.n_bits <= 48:
            hidden_cost = 2.0**view.hidden.n_bits * (view.n_visible + view.visible.n_entries)
        log_sizes = np.where(self.missing_entries, view.visible.entry_log_n_states, 0.0)
        log_completions = np.minimum(log_sizes.sum(axis=1), 700.0)
        visible_cost = np.exp(log_completions) * view.n_hidden * COMPLETION_COST
        routes = np.full(self.n_rows, _ESTIMATE)
        routes[hidden_cost <= max_cost] = _HIDDEN
        routes[(visible_cost <= max_cost) & (visible_cost <= hidden_cost)] = _VISIBLE
        return routes

    # -- what callers ask ----------------------------------------------------------------
    def log_weights(self, seed=0):
        """log p*(v_o) of each row, and its standard error.

        Exact on the rows an exact route serves (standard error 0); otherwise
        importance sampling over the hidden states with the missing entries summed out
        for each, from a mixture of independent hidden units (the posteriors given
        clamped Gibbs chains' states and the mean-field one), seeded per row from
        ``seed`` and the row itself. The standard error is the delta method's,
        std(w) / (mean(w) sqrt(n)) over the importance weights w.

        Parameters
        ----------
        seed : int, default=0
            Seeds the estimates (with each row's own values).

        Returns
        -------
        log_weights : ndarray of shape (n_rows,)
            log p*(v_o): -(the free energy of the observed entries).
        std_errors : ndarray of shape (n_rows,)
            0 where exact.
        """
        values, errors = np.empty(self.n_rows), np.zeros(self.n_rows)
        exact = self._exact()
        values[self.exact] = exact["log_weight"]
        rows = np.flatnonzero(~self.exact)
        if rows.size:
            values[rows], errors[rows] = self._importance_sampling(rows, seed)
        return values, errors

    def hidden_marginals(self):
        """P(h_j = 1 | v_o) of each row: exact where a route serves it, else the
        mean-field magnetisations with the observed units clamped."""
        out = np.empty((self.n_rows, self.view.n_hidden))
        out[self.exact] = self._exact()["hidden"]
        rows = np.flatnonzero(~self.exact)
        if rows.size:
            out[rows] = self.mean_field(rows)[0]
        return out

    def visible_means(self, seed=0):
        """E[v | v_o] of each row: the observed units' own values, and the missing
        units' conditional means (category probabilities for softmax groups).

        Exact where a route serves the row; otherwise the average of E[v_m | h] over
        clamped Gibbs chains from the mean-field fixed point (AVERAGE_CHAINS chains,
        AVERAGE_BURN_IN steps, then AVERAGE_STEPS averaged), seeded per row from
        ``seed`` and the row itself.

        Parameters
        ----------
        seed : int, default=0
            Seeds the chains (with each row's own values).

        Returns
        -------
        V : ndarray of shape (n_rows, n_visible)
            The rows with their missing units' conditional means.
        """
        out = self.V.copy()
        exact = self._exact()
        out[self.exact] = np.where(self.missing[self.exact], exact["visible"],
                                   self.V[self.exact])
        rows = np.flatnonzero(~self.exact)
        for first in range(0, rows.size, ROW_BLOCK):
            block = rows[first : first + ROW_BLOCK]
            out[block] = self._chain_average(block, seed)
        return out

    def draw(self, rng, n_steps=DRAW_STEPS):
        """Complete each row with a draw of its missing entries from p(v_m | v_o).

        Exact on the rows an exact route serves; otherwise the last state of a block
        Gibbs chain with the observed units clamped, ``n_steps`` steps from the
        mean-field fixed point.

        Parameters
        ----------
        rng : numpy.random.Generator
            Source of randomness.
        n_steps : int, default=DRAW_STEPS
            Gibbs steps of the chains of the other rows.

        Returns
        -------
        V : ndarray of shape (n_rows, n_visible)
            The rows, completed.
        """
        out = self.V.copy()
        exact_rows = np.flatnonzero(self.exact)
        if exact_rows.size:
            out[exact_rows] = self._exact(rng)["draw"]
        rows = np.flatnonzero(~self.exact)
        if rows.size:
            out[rows] = self.clamped_gibbs(rows, self.mean_field(rows)[1], rng, n_steps)
        return out

    # -- the exact routes -------------------------------------------------------------
    def _exact(self, rng=None):
        """log p*(v_o), P(h | v_o), E[v | v_o] (of the missing units; the others
        anything) and, with ``rng``, a draw, for the rows an exact route serves, in
        their order."""
        if rng is None and "exact" in self._cache:
            return self._cache["exact"]
        rows = np.flatnonzero(self.exact)
        n_hidden, n_visible = self.view.n_hidden, self.view.n_visible
        result = {"log_weight": np.empty(rows.size), "hidden": np.empty((rows.size, n_hidden)),
                  "visible": np.empty((rows.size, n_visible))}
        if rng is not None:
            result["draw"] = self.V[rows].copy()
        position = {row: i for i, row in enumerate(rows)}
        for route, method in ((_HIDDEN, self._list_hidden), (_VISIBLE, self._list_completions)):
            chosen = rows[self.routes[rows] == route]
            if chosen.size:
                method(chosen, np.array([position[row] for row in chosen]), result, rng)
        if rng is None:
            self._cache["exact"] = result
        return result

    def _list_hidden(self, rows, slots, result, rng):
        # A table of log p*(v_o, h) (hidden states x rows) per chunk of states, summed
        # with a running log-sum-exp; a second pass finds each draw's state.
        view = self.view
        visible, hidden, weights = view.visible, view.hidden, view.weights
        n_states = hidden.n_states
        width = view.n_visible + visible.n_entries
        state_chunk = int(max(1, min(n_states, CHUNK_ELEMENTS // (8 * max(width, 1)))))
        row_chunk = int(max(1, CHUNK_ELEMENTS // state_chunk))

        def chunks():
            for begin in range(0, n_states, state_chunk):
                H = hidden.states(begin, min(begin + state_chunk, n_states))
                inputs = H @ weights
                yield begin, H, inputs, visible.entry_log_partitions(inputs), -hidden.energy(H)

        for first in range(0, rows.size, row_chunk):
            block, out = rows[first : first + row_chunk], slots[first : first + row_chunk]
            coupling = self.hidden_input[block].T
            absent = self.missing_entries[block].T.astype(np.float64)
            top = np.full(block.size, -np.inf)
            scale = np.zeros(block.size)
            hidden_sum = np.zeros((block.size, view.n_hidden))
            visible_sum = np.zeros((block.size, view.n_visible))
            for _, H, inputs, log_partitions, linear in chunks():
                table = H @ coupling + log_partitions @ absent + linear[:, None]
                new_top = np.maximum(top, table.max(axis=0))
                shrink = np.exp(top - new_top)
                weights_of_states = np.exp(table - new_top)
                scale = scale * shrink + weights_of_states.sum(axis=0)
                hidden_sum = hidden_sum * shrink[:, None] + weights_of_states.T @ H
                visible_sum = (visible_sum * shrink[:, None]
                               + weights_of_states.T @ visible.mean(inputs))
                top = new_top
            log_weight = top + np.log(scale) + self.own[block]
            result["log_weight"][out] = log_weight
            result["hidden"][out] = hidden_sum / scale[:, None]
            result["visible"][out] = visible_sum / scale[:, None]
            if rng is None:
                continue
            # each row's state: the first whose cumulative probability passes a uniform
            target = rng.random(block.size) * scale
            passed = np.zeros(block.size)
            chosen = np.full(block.size, -1)
            chosen_input = np.zeros((block.size, view.n_visible))
            for _, H, inputs, log_partitions, linear in chunks():
                table = H @ coupling + log_partitions @ absent + linear[:, None]
                cumulative = np.cumsum(np.exp(table - top), axis=0) + passed
                crossing = cumulative >= target
                found = (chosen < 0) & crossing.any(axis=0)
                index = np.argmax(crossing, axis=0)
                chosen_input[found] = inputs[index[found]]
                chosen[found] = index[found]
                passed = cumulative[-1]
            chosen_input[chosen < 0] = inputs[-1]  # rounding: the last state
            draws = visible.sample(chosen_input, rng)
            missing = self.missing[block]
            result["draw"][out] = np.where(missing, draws, self.V[block])

    def _list_completions(self, rows, slots, result, rng):
        # Rows with the same missing entries share their completions: per pattern, a
        # table of -F(v_o, v_m) (rows x completions) with the hidden layer summed out.
        view = self.view
        visible, hidden, weights = view.visible, view.hidden, view.weights
        patterns, inverse = np.unique(self.missing_entries[rows], axis=0,
                                      return_inverse=True)
        for index in range(len(patterns)):
            members = np.flatnonzero(inverse.ravel() == index)
            units = self.missing[rows[members[0]]]
            completions = visible.sublayer(units)
            C = completions.states(0, completions.n_states)
            own = completions.observed_log_weight(C, np.zeros(C.shape, dtype=bool))
            sent = completions.seen_states(C) @ weights[:, units].T
            n_completions = C.shape[0]
            row_chunk = int(max(1, CHUNK_ELEMENTS // (n_completions * max(view.n_hidden, 1))))
            for first in range(0, members.size, row_chunk):
                chosen = members[first : first + row_chunk]
                block, out = rows[chosen], slots[chosen]
                inputs = self.hidden_input[block][:, None, :] + sent[None]
                flat = inputs.reshape(-1, view.n_hidden)
                table = hidden.log_partition(flat).reshape(block.size, n_completions)
                table += own
                top = table.max(axis=1, keepdims=True)
                probability = np.exp(table - top)
                total = probability.sum(axis=1, keepdims=True)
                probability /= total
                result["log_weight"][out] = (np.log(total[:, 0]) + top[:, 0]
                                             + self.own[block])
                means = hidden.mean(flat).reshape(block.size, n_completions, -1)
                result["hidden"][out] = np.einsum("rc,rcj->rj", probability, means)
                filled = np.empty((block.size, view.n_visible))
                filled[:, units] = probability @ C
                result["visible"][out] = filled
                if rng is None:
                    continue
                cumulative = np.cumsum(probability, axis=1)
                pick = (cumulative < rng.random((block.size, 1))).sum(axis=1)
                draws = self.V[block].copy()
                draws[:, units] = C[np.minimum(pick, n_completions - 1)]
                result["draw"][out] = draws

    # -- mean field, Gibbs chains and importance sampling --------------------------------
    def mean_field(self, rows, tol=MEAN_FIELD_TOL):
        """The mean-field fixed point of the given rows with their observed units clamped.

        Alternating updates of the hidden magnetisations given the visible means and
        of the missing units' means given the hidden magnetisations: each layer's
        units are independent given the other's, so every half-sweep is the exact
        update of one block of the variational free energy, which never increases;
        each row stops at its own fixed point (a change below ``tol``), from the
        ``start`` means.

        Parameters
        ----------
        rows : ndarray of int
            The rows.
        tol : float, default=MEAN_FIELD_TOL
            The largest change of a mean at a row's fixed point.

        Returns
        -------
        hidden : ndarray of shape (len(rows), n_hidden)
            The hidden magnetisations.
        visible : ndarray of shape (len(rows), n_visible)
            The observed values and the missing units' means.
        """
        key = ("mean_field", rows.tobytes(), tol)
        if key in self._cache:
            return self._cache[key]
        view = self.view
        visible, hidden, weights = view.visible, view.hidden, view.weights
        V, missing = self.V[rows], self.missing[rows]
        means = np.where(missing, self.start, V)
        magnetisations = hidden.mean(visible.seen_states(means) @ weights.T)
        active = np.arange(rows.size)
        for _ in range(MEAN_FIELD_MAX_SWEEPS):
            if not active.size:
                break
            updated = np.where(missing[active],
                               visible.mean(magnetisations[active] @ weights), V[active])
            change = np.abs(updated - means[active]).max(axis=1, initial=0.0)
            means[active] = updated
            fresh = hidden.mean(visible.seen_states(updated) @ weights.T)
            change = np.maximum(change, np.abs(fresh - magnetisations[active]).max(
                axis=1, initial=0.0))
            magnetisations[active] = fresh
            active = active[change > tol]
        self._cache[key] = magnetisations, means
        return magnetisations, means

    def clamped_gibbs(self, rows, start, rng, n_steps, visit=None):
        """Block Gibbs chains of the given rows with their observed units clamped.

        Parameters
        ----------
        rows : ndarray of int
            The rows (one chain each; repeat a row for more chains).
        start : ndarray of shape (len(rows), n_visible)
            The chains' visible start (means are fine: the first step draws h).
        rng : numpy.random.Generator or RowStreams
            Source of randomness.
        n_steps : int
            Steps v -> h -> v.
        visit : callable or None, default=None
            Called with each step's hidden states (and the visible layer's input
            they make).

        Returns
        -------
        V : ndarray of shape (len(rows), n_visible)
            The chains' last visible states.
        """
        view = self.view
        visible, hidden, weights = view.visible, view.hidden, view.weights
        V, missing = self.V[rows], self.missing[rows]
        states = np.where(missing, start, V)
        for _ in range(n_steps):
            H = hidden.sample(visible.seen_states(states) @ weights.T, rng)
            inputs = H @ weights
            if visit is not None:
                visit(H, inputs)
            states = np.where(missing, visible.sample(inputs, rng), V)
        return states

    def _row_chains(self, rows, seed, n_chains, n_steps, visit=None):
        """``n_chains`` clamped chains per row, each row's seeded by ``seed`` and the
        row itself, from its mean-field fixed point: their last states."""
        stacked = np.repeat(rows, n_chains)
        streams = RowStreams([(seed, row_seed(self.V[row], self.missing[row]))
                              for row in rows], n_chains)
        start = np.repeat(self.mean_field(rows)[1], n_chains, axis=0)
        return self.clamped_gibbs(stacked, start, streams, n_steps, visit), streams

    def _chain_average(self, rows, seed):
        """The rows with their missing units at the average of E[v_m | h] over clamped
        chains after their burn-in."""
        visible = self.view.visible
        total = np.zeros((rows.size * AVERAGE_CHAINS, self.view.n_visible))
        counted = [0]

        def visit(H, inputs):
            counted[0] += 1
            if counted[0] > AVERAGE_BURN_IN:
                total[...] += visible.mean(inputs)

        self._row_chains(rows, seed, AVERAGE_CHAINS, AVERAGE_BURN_IN + AVERAGE_STEPS, visit)
        means = total.reshape(rows.size, AVERAGE_CHAINS, -1).mean(axis=1) / AVERAGE_STEPS
        return np.where(self.missing[rows], means, self.V[rows])

    def _importance_sampling(self, rows, seed):
        """log p*(v_o) of the given rows by importance sampling, and standard errors."""
        values, errors = np.empty(rows.size), np.empty(rows.size)
        for first in range(0, rows.size, ROW_BLOCK):
            block = slice(first, first + ROW_BLOCK)
            values[block], errors[block] = self._importance_sampling_block(rows[block], seed)
        return values, errors

    def _importance_sampling_block(self, rows, seed):
        view = self.view
        visible, hidden, weights = view.visible, view.hidden, view.weights
        n_rows, n_hidden = rows.size, view.n_hidden
        # The proposal of each row: a mixture of independent hidden units, P(h | v) of
        # each chain's final state and of the mean-field fixed point.
        chains, streams = self._row_chains(rows, seed, IS_CHAINS, IS_BURN_IN)
        states = np.concatenate([chains.reshape(n_rows, IS_CHAINS, -1),
                                 self.mean_field(rows)[1][:, None, :]], axis=1)
        fields = visible.seen_states(states.reshape(-1, view.n_visible)) @ weights.T
        fields = (fields + hidden.bias).reshape(n_rows, IS_CHAINS + 1, n_hidden)
        log_on, log_off = -np.logaddexp(0, -fields), -np.logaddexp(0, fields)
        # IS_SAMPLES hidden states per row, evenly from each component
        component = np.arange(IS_SAMPLES) % (IS_CHAINS + 1)
        uniform = streams.per_row(IS_SAMPLES).random((n_rows * IS_SAMPLES, n_hidden))
        H = (uniform.reshape(n_rows, IS_SAMPLES, -1)
             < np.exp(log_on[:, component])).astype(np.float64)
        log_q = H @ log_on.transpose(0, 2, 1) + (1 - H) @ log_off.transpose(0, 2, 1)
        log_proposal = _log_mean_exp(log_q, axis=2)
        flat = H.reshape(-1, n_hidden)
        absent = np.repeat(self.missing_entries[rows].astype(np.float64), IS_SAMPLES, axis=0)
        log_joint = (-hidden.energy(flat)
                     + np.einsum("rsj,rj->rs", H, self.hidden_input[rows]).ravel()
                     + np.einsum("ne,ne->n", visible.entry_log_partitions(flat @ weights),
                                 absent))
        log_w = log_joint.reshape(n_rows, IS_SAMPLES) - log_proposal
        log_w += self.own[rows][:, None]
        relative = np.exp(log_w - log_w.max(axis=1, keepdims=True))
        errors = relative.std(axis=1, ddof=1) / (relative.mean(axis=1) * np.sqrt(IS_SAMPLES))
        return _log_mean_exp(log_w, axis=1), errors


__all__ = ["EXACT_ROW_COST", "IncompleteRows", "missing_units", "row_seed"]
