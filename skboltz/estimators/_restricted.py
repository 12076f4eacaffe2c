"""What the two restricted Boltzmann machines, RBM and GaussianRBM, share.

Both have ``n_components`` binary hidden units in one layer, coupled to the visible
units only, and train by the restricted learning rule: the data's statistics in closed
form, the model's from a learning strategy, in a packed parameter array whose blocks
the model's layout names (``_rbm_energy.RBMLayout``, ``_gaussian_rbm_energy.
GaussianRBMLayout``). Both average their iterates (``average_window``). The two
estimators are siblings on this base; each keeps its own parameters, layout, training
form and checks.
"""

import hashlib
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from ..core._base import BoltzmannBase
from ..models._missing import missing_units
from ..core._monitoring import Monitor, MonitoringRows
from ..utils._noise import Noise
from ..models._rbm_energy import AugmentedRBM
from ..models._restricted_energy import RestrictedLayout
from ..core._scoring import parameter_fingerprint
from ..core._training import IterateAverage

#: Block Gibbs steps, with the observed entries clamped, that redraw the completion of
#: a training row with missing entries each time a minibatch holds it; a fit keeps the
#: completions from epoch to epoch (persistent), a partial_fit call starts them at the
#: mean-field fixed point of its rows.
IMPUTATION_STEPS = 1

#: The completions start at the mean-field fixed point to this tolerance (a start:
#: the Gibbs steps take them on).
START_TOL = 1e-2


class RestrictedEpoch(NamedTuple):
    """What a restricted estimator's updates work with in one epoch (the ``model`` of
    its gradient hook)."""

    #: The training form of the parameters the updates move.
    form: object
    #: The learning strategy's fused sampler bound to ``form`` (a
    #: :class:`~skboltz.learning._base.FusedSampler`), or None: the strategy's
    #: ``_negative_statistics`` (rows of its ``negative_phase``, or a closed form).
    sampler: object


@dataclass(eq=False)
class PersistentCompletions:
    """The completions of one call's training rows with missing entries."""

    #: The rows (dense, the data's dtype), each missing unit holding its completion.
    filled: np.ndarray
    #: The missing units.
    missing: np.ndarray
    #: The rows with a missing unit.
    incomplete: np.ndarray


#: numpydoc text of the missing entries (NaN), shared by the estimators' Notes.
MISSING_ENTRIES_DOC = """Missing entries: ``fit``, ``partial_fit``, ``transform``, ``score``
    and ``score_samples`` take NaN as an unobserved entry (a categorical column's NaN leaves
    its whole one-of-K group out), never as a value. Training draws each missing entry
    from the model given the row's observed entries (one block-Gibbs step with them
    clamped each time a minibatch holds the row; a fit keeps each row's completion from
    epoch to epoch, a ``partial_fit`` call starts it at the mean-field fixed point), and
    rows without NaN train as they would otherwise. On rows drawn from a known model (20
    binary columns, 6 hidden units, learning="exact") with 30 % of the entries removed
    at random, the fitted model's held-out log-likelihood came 0.045-0.054 nats per row
    below the model fitted on the complete rows, and 0.15 above one fitted on the rows
    with each column's mean filled in. ``transform`` gives P(h = 1 | x_observed) and
    ``score_samples`` log p(x_observed) in nats, the missing entries summed (or
    integrated) out: exactly when the hidden states or the completions of the row's
    missing entries are few enough to list (about 4 million operations a row),
    otherwise ``transform`` gives the mean-field fixed point with the observed entries
    clamped and ``score_samples`` an estimate by importance sampling over the hidden
    states, whose standard error ``score_samples_std_error`` gives (log Z's, shared by
    every row, is apart). Both are deterministic and row by row. A column with no
    observed value in the first call's rows is refused; ``reconstruct``,
    ``free_energy``, ``gibbs`` and ``estimate_log_likelihood_bounds`` take complete rows
    only. :class:`~skboltz.RBMImputer` fills missing entries from such a model."""


class RestrictedMonitor(Monitor):
    """The monitor of a restricted model whose rows may have missing entries.

    Rows with missing entries are reconstructed on their observed entries (with the
    missing ones at their columns' means); their free
    energies and log-likelihoods are those of the observed entries (the estimator's
    ``_free_energy_of``). The end-of-call checks see the rows with each missing value
    at its column's mean.
    """

    def select_rows(self, X, y, validation, weights=None):
        rows = super().select_rows(X, y, validation, weights)
        #: The missing units of each split's rows (None: complete), found once a call.
        self.missing = {name: self.estimator._missing_of(part)
                        for name, part, _ in rows.splits()}
        return rows

    def record(self, state, *, epoch_seconds=0.0):
        self._fill = self.estimator._sampling_start_of(state)
        return super().record(state, epoch_seconds=epoch_seconds)

    def reconstruction_error(self, view, rows, weights=None):
        if all(mask is None for mask in self.missing.values()):
            return super().reconstruction_error(view, rows, weights)
        missing = self.estimator._missing_of(rows)
        if missing is None:
            return super().reconstruction_error(view, rows, weights)
        # the observed entries' reconstruction, the missing ones at their columns' means
        filled = self.estimator._with_missing_filled(rows, self._fill)
        squared = np.square(view.reconstruct(filled) - filled)
        if weights is not None:  # each observed entry counts by its row's weight
            counted = np.where(missing, 0.0, weights[:, None])
            return float(np.sum(counted * squared, dtype=np.float64)
                         / max(float(counted.sum()), np.finfo(np.float64).tiny))
        return float(np.sum(squared, where=~missing, dtype=np.float64)
                     / max(int((~missing).sum()), 1))

    def rows_for_checks(self, state):
        rows = self.rows
        if all(mask is None for mask in self.missing.values()):
            return rows
        fill = self.estimator._sampling_start_of(state)
        filled = {name: self.estimator._with_missing_filled(getattr(rows, name), fill)
                  for name in ("train", "valid") if getattr(rows, name) is not None}
        if all(filled[name] is getattr(rows, name) for name in filled):
            return rows
        return MonitoringRows(filled["train"], filled.get("valid"), rows.train_labels,
                              rows.valid_labels, rows.train_weights, rows.valid_weights)


class RestrictedBoltzmannBase(BoltzmannBase):
    """Base of :class:`~skboltz.RBM` and :class:`~skboltz.GaussianRBM`.

    On top of :class:`~skboltz.core._base.BoltzmannBase`'s hooks a subclass declares
    ``_training_form`` (the class holding the packed parameters the learning
    strategies' fused samplers work on, e.g. ``AugmentedRBM``; override
    :meth:`_training_form_of` when it takes more than the parameters) and ``_layout``
    (the blocks ``weights``, ``hidden_bias``, ``visible_bias`` and ``constant``), and
    keeps its training state in an :class:`~skboltz.core._training.AveragedTrainingState`
    made by :meth:`_fresh_state`. Each epoch's ``model`` (:class:`RestrictedEpoch`) is
    the training form of the parameters the updates move and the strategy's fused
    sampler bound to it.

    An estimator whose ``_accepts_missing`` is True takes NaN as a missing entry
    wherever its visible layer can leave entries out (``handles_missing``; see
    :data:`MISSING_ENTRIES_DOC`): the base fills the rows of its training state's
    starting statistics (``_with_missing_filled``, which ``_new_training_state`` calls),
    keeps each call's completions (:class:`PersistentCompletions`) and scores and
    transforms incomplete rows through :mod:`skboltz.models._missing`.
    """

    #: The training form of the packed parameters (see the class docstring).
    _training_form = AugmentedRBM
    #: Whether ``X`` may mark missing entries with NaN (when the visible layer can
    #: leave entries unobserved): ``fit``, ``partial_fit``, ``transform`` and
    #: ``score_samples`` take them (see "Missing entries" below).
    _accepts_missing = False
    _monitor_class = RestrictedMonitor

    # -- training --------------------------------------------------------------------
    def _average_window(self, state):
        return self.average_window

    def _training_product_size(self, X):
        return self._effective_batch_size(X) * X.shape[1] * self.n_components

    def _training_bytes(self, X):
        # ~6 parameter-sized arrays (parameters, iterate, velocity, gradient, scratch,
        # published copy) and a few minibatch-sized ones.
        rows = 2 * self._effective_batch_size(X)
        n_visible, n_hidden = X.shape[1] + 1, self.n_components + 2
        return np.dtype(X.dtype).itemsize * (6 * n_hidden * n_visible
                                             + 4 * rows * (n_visible + n_hidden))

    def _units_per_chain(self, X):
        return X.shape[1] + self.n_components

    def _size_description(self, X):
        return (
            f"An RBM with {self.n_components} hidden units on {X.shape[1]} features",
            "Use fewer hidden units (n_components) or a smaller batch_size.",
        )

    def _fresh_state(self, state_class, model, X, learning, rng, **fields):
        """A new training state of ``state_class`` around ``model.params`` (the
        iterate, average, velocity, strategy state and noise both RBMs start with)."""
        params = model.params
        averaging = self.average_window is not None
        return state_class(
            params=params,
            iterate=params.copy() if averaging else params,
            average=IterateAverage() if averaging else None,
            velocity=np.zeros_like(params),
            sampler=learning.init_state(model.view(), X, self._effective_batch_size(X), rng),
            rng=rng,
            noise=Noise.seeded_from(rng),
            **fields,
        )

    @staticmethod
    def _match_dtype(state, learning):
        """Cast the training state to the parameters' dtype (partial_fit may switch it)."""
        dtype = state.params.dtype
        if state.velocity.dtype != dtype:
            state.velocity = state.velocity.astype(dtype)
            state.scratch = None
            state.sampler = learning.cast_state(state.sampler, dtype)

    def _begin_epoch(self, state, learning):
        self._match_dtype(state, learning)
        # The constant units' coupling is not learnt: its gradient is zero up to
        # rounding (both units are always on), and it starts each epoch afresh.
        state.params[self._layout.constant] = self._training_form.ALWAYS_ON
        state.velocity[self._layout.constant] = 0
        return state.resume(self._average_window(state) is not None)

    def _training_model(self, X, params, state, learning):
        form = self._training_form_of(params, state)
        sampler = learning._fused_sampler(form, state.sampler, state.noise,
                                          self._progress(state))
        return RestrictedEpoch(form, sampler)

    def _training_form_of(self, params, state):
        """The training form of ``params`` (the class's ``_training_form``)."""
        return self._training_form(params)

    def _train_minibatches(self, X, y, state, learning, model, rule, update):
        super()._train_minibatches(X, y, state, learning, model, rule, update)
        if model.sampler is not None:
            model.sampler.release()

    def _minibatch_gradient(self, model, batch, labels, state, learning, rule,
                            weights=None):
        # The data's statistics in closed form (each row counting by its weight in a
        # weighted fit), minus the strategy's estimate of the model's, in the packed
        # layout (one matrix product gives every block).
        form, sampler = model
        batch = form.augment(batch)
        positive = form.statistics(form.hidden_probability(batch), batch, weights=weights)
        positive /= batch.shape[0]
        if sampler is not None:  # the strategy's samplers draw buffered noise
            negative = sampler.negative_statistics(batch, weights)
        else:
            negative = learning._negative_statistics(
                form, batch, state.sampler, state.rng, rule.progress
            )
        positive -= negative
        positive *= rule.step
        return positive

    # -- missing entries (NaN) ---------------------------------------------------------
    # A missing entry is unobserved, never a value: training draws it from the model
    # given the row's observed entries (the positive phase), transform gives P(h | v_o)
    # and the scores log p(v_o), the missing entries summed out (skboltz.models._missing).
    # Complete rows take the paths they take without any NaN.
    def _takes_missing(self):
        """Whether ``X`` may hold NaN (missing entries)."""
        return self._accepts_missing and self._view_class.visible_units.handles_missing

    def _missing_of(self, X):
        """The missing units of validated rows ``X`` (the model's visible units), or
        None when there are none (or the estimator takes no NaN)."""
        if not self._takes_missing() or sp.issparse(X):
            return None
        return missing_units(X)

    def _check_missing_input(self, X):
        """Refuse NaN where the estimator takes none, and in sparse input."""
        if sp.issparse(X) and self._takes_missing() and np.isnan(X.data).any():
            raise ValueError(
                f"{type(self).__name__} takes missing entries (NaN) in dense input only: "
                "densify the rows with missing values (X.toarray()).")

    def _entry_starts(self):
        """The first visible unit of each entry (None: one unit each)."""
        return None

    def _entry_columns(self):
        """The input column of each entry of the visible layer (None: in order)."""
        return None

    def _check_first_rows(self, X, *, partial):
        super()._check_first_rows(X, partial=partial)
        missing = self._missing_of(X)
        if missing is None:
            return
        starts = self._entry_starts()
        never = missing.all(axis=0) if starts is None else missing[:, starts].all(axis=0)
        if never.any():
            columns = np.flatnonzero(never)
            order = self._entry_columns()
            columns = columns if order is None else np.sort(order[columns])
            names = getattr(self, "feature_names_in_", None)
            shown = [str(names[i]) if names is not None else int(i) for i in columns[:10]]
            raise ValueError(
                f"{type(self).__name__}: column(s) {shown}"
                f"{' + ...' if columns.size > 10 else ''} hold no observed value (all NaN) "
                f"in the rows of this {'first partial_fit call' if partial else 'fit'}: "
                "the model starts each column from its observed values, and a column "
                "that is always missing carries no information. Drop it (e.g. "
                "sklearn.feature_selection.VarianceThreshold does not; select the "
                "observed columns), or give the first call rows that observe it.")

    def _with_missing_filled(self, X, start=None, weights=None):
        """``X`` with each missing value replaced by ``start`` (by default each
        column's mean over its observed values, the rows counted by their ``weights``
        if any); ``X`` itself when complete."""
        missing = self._missing_of(X)
        if missing is None:
            return X
        if start is None:
            observed = np.where(missing, 0.0, X)
            if weights is None:
                start = (observed.sum(axis=0, dtype=np.float64)
                         / np.maximum((~missing).sum(axis=0), 1))
            else:
                counted = np.where(missing, 0.0, weights[:, None])
                start = ((counted * observed).sum(axis=0)
                         / np.maximum(counted.sum(axis=0), np.finfo(np.float64).tiny))
        return np.where(missing, np.asarray(start).astype(X.dtype), X)

    def _chain_starts(self, X, y):
        if self._missing_of(X) is None:
            return super()._chain_starts(X, y)
        return self._with_missing_filled(X, self._sampling_start_of(self._training_state))

    def _train(self, X, y, state, learning, n_epochs, monitor, **kwargs):
        found = getattr(monitor, "missing", None)
        if not self._takes_missing():
            missing = None
        elif found is not None and monitor.rows.train is X:  # the monitor's (few rows)
            missing = found["train"]
        else:
            missing = self._missing_of(X)
        if missing is None:
            super()._train(X, y, state, learning, n_epochs, monitor, **kwargs)
            return
        # The completions persist over the call's epochs, starting at the mean-field
        # fixed point of each row under the model the call starts from.
        incomplete = missing.any(axis=1)
        rows = np.flatnonzero(incomplete)
        filled = np.array(X)
        view = self._model_view_of(state)
        filled[rows] = view.incomplete_rows(X[rows], self._sampling_start_of(state)).mean_field(
            np.arange(rows.size), tol=START_TOL)[1]
        state.imputation = PersistentCompletions(filled, missing, incomplete)
        try:
            super()._train(X, y, state, learning, n_epochs, monitor, **kwargs)
        finally:
            state.imputation = None

    def _minibatch_rows(self, X, rows, state, model):
        completions = state.imputation
        if completions is None:
            return super()._minibatch_rows(X, rows, state, model)
        # the rows' completions, first redrawn given the observed entries and kept
        batch = completions.filled[rows]
        incomplete = completions.incomplete[rows]
        if incomplete.any():
            redrawn = rows[incomplete]
            form = model.form
            completed = form.fill_missing(
                form.augment(batch[incomplete]), completions.missing[redrawn], state.noise,
                IMPUTATION_STEPS)[RestrictedLayout.units]
            batch[incomplete] = completed
            completions.filled[redrawn] = completed
        return batch

    def _training_rows(self, X, state):
        """The training rows as the model sees them in a call: the completions of rows
        with missing entries."""
        return X if state.imputation is None else state.imputation.filled

    def _incomplete_rows(self, view, X):
        """The :class:`~skboltz.models._missing.IncompleteRows` of rows of ``X`` under ``view``
        (mean field and chains start at the data's means)."""
        state = getattr(self, "_training_state", None)
        start = None if state is None else self._sampling_start_of(state)
        return view.incomplete_rows(X, start)

    def _observed_log_weights(self, view, X, missing):
        """log p*(v_o) of each row and its standard error (0 where exact): -F(v) of
        complete rows as without NaN, the missing entries summed out of the others."""
        log_weight = -super()._free_energy_of(view, np.where(missing, 0, X))
        errors = np.zeros(X.shape[0])
        rows = np.flatnonzero(missing.any(axis=1))
        known = self._known_incomplete_scores(view)
        seed = getattr(getattr(self, "_training_state", None), "log_z_seed", 0)
        keys = [hashlib.blake2b(np.packbits(missing[row]).tobytes()
                                + np.where(missing[row], 0, X[row]).tobytes(),
                                digest_size=16).digest() for row in rows]
        todo = [i for i, key in enumerate(keys) if key not in known]
        if todo:
            values, std_errors = self._incomplete_rows(view, X[rows[todo]]).log_weights(seed)
            for i, value, std_error in zip(todo, values, std_errors):
                known[keys[i]] = (float(value), float(std_error))
        for row, key in zip(rows, keys):
            log_weight[row], errors[row] = known[key]
        return log_weight, errors

    def _known_incomplete_scores(self, view):
        """The log p*(v_o) of rows with missing entries found so far under these
        parameters (row digest -> (value, standard error)); one parameter set at a
        time, kept with the log Z cache."""
        cache = getattr(self, "_log_z_cache", None)
        if cache is None:
            return {}
        key = parameter_fingerprint(view)
        slot = cache.get("incomplete rows")
        if slot is None or slot[0] != key:
            slot = cache["incomplete rows"] = (key, {})
        return slot[1]

    def _free_energy_of(self, view, rows):
        missing = self._missing_of(rows)
        if missing is None:
            return super()._free_energy_of(view, rows)
        return -self._observed_log_weights(view, rows, missing)[0]

    def _log_weights_of(self, view, X):
        missing = self._missing_of(X)
        if missing is None:
            return super()._log_weights_of(view, X)
        log_weight, errors = self._observed_log_weights(view, X, missing)
        transform = self._input_transform()
        if transform is not None:  # the observed entries' density: their Jacobian only
            log_weight += transform.missing_log_abs_det(missing)
        # nothing observed: probability 1, whatever the estimate of log Z
        empty = missing.all(axis=1)
        if empty.any():
            log_weight[empty], errors[empty] = self._log_normalizer(), 0.0
        return log_weight, errors

    def _hidden_marginals_of(self, view, X):
        missing = self._missing_of(X)
        if missing is None:
            return super()._hidden_marginals_of(view, X)
        out = super()._hidden_marginals_of(view, np.where(missing, 0, X))
        rows = np.flatnonzero(missing.any(axis=1))
        out[rows] = self._incomplete_rows(view, X[rows]).hidden_marginals()
        return out

    def _check_complete(self, X, method):
        if self._missing_of(X) is not None:
            raise ValueError(
                f"{type(self).__name__}.{method} takes complete rows; X holds NaN. "
                "NaN marks a missing entry, which fit, partial_fit, transform and "
                "score_samples take (summed out of the model); fill the missing values "
                "first for this method, e.g. with skboltz.RBMImputer.")

    def _complete_rows(self, X, random_state=None):
        """Input rows with every missing entry filled from the model given the row's
        observed entries: each entry's conditional mean (a categorical column's most
        probable category), or with ``random_state`` (a Generator) a draw of all the
        row's missing entries together. What :class:`~skboltz.RBMImputer` fills in."""
        check_is_fitted(self, "_training_state")
        V = self._validate_X(X, reset=False)
        missing = self._missing_of(V)
        if missing is None:
            return self._visible_out(np.array(V))
        view = self._model_view()
        rows = np.flatnonzero(missing.any(axis=1))
        incomplete = self._incomplete_rows(view, V[rows])
        filled = np.array(V)
        if random_state is None:
            filled[rows] = incomplete.visible_means(self._training_state.log_z_seed)
        else:
            filled[rows] = incomplete.draw(random_state)
        return self._visible_out(filled)

    def score_samples_std_error(self, X):
        """Standard error of each row's :meth:`score_samples` from its own estimate.

        A row with missing entries (NaN) scores log p(x_observed), its missing entries
        summed out: exactly when the hidden states or the completions of its missing
        entries are few enough to list (error 0), otherwise by importance sampling
        over the hidden states, whose standard error this is. Complete rows are exact
        (0). The error of log Z, shared by every row, is apart
        (``estimate_log_partition().std_error``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows, NaN marking missing entries.

        Returns
        -------
        std_error : ndarray of shape (n_samples,)
            The standard error of each row's estimate, in nats.
        """
        check_is_fitted(self, "_training_state")
        X = self._validate_X(X, reset=False)
        errors = self._log_weights_of(self._model_view(), X)[1]
        return np.zeros(X.shape[0]) if errors is None else errors

    # -- fitted attributes -----------------------------------------------------------
    def _fitted_attributes(self, state):
        state.prepare_publication()
        params, layout = state.params, self._layout
        return {
            "components_": params[layout.weights].copy(),
            "intercept_hidden_": params[layout.hidden_bias].copy(),
            "intercept_visible_": params[layout.visible_bias].copy(),
        }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self._takes_missing()
        return tags

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    # -- the down pass of a deep belief net ------------------------------------------
    def _visible_given_hidden(self, H, rng, sample=True):
        """A draw from p(v | h) for each row of ``H`` (or its mean when not ``sample``),
        in the units of the input."""
        view = self._model_view().astype(H.dtype)
        V = view.sample_visible(H, rng) if sample else view.visible_mean(H)
        return self._visible_out(V)


__all__ = ["RestrictedBoltzmannBase", "RestrictedEpoch"]
