"""The divergence check: did a call's training make the model provably far worse?

Every epoch of a fit checks that the parameters stay finite and moderate (``_train``);
at the end of every ``fit``, and of runs of ``partial_fit`` calls, the estimator's
:class:`DivergenceCheck` (its class attribute ``_divergence_check_class``) judges the
trained model on its own training rows. A density model of binary visible units bounds
its log-likelihood from above (:func:`likelihood_upper_bound`) and is refused when the
bound ends far below the uniform distribution's; an estimator with another objective
(a classifier's log-loss) or other units subclasses the check. A refused call raises a
:class:`~skboltz.exceptions.TrainingDivergedError` whose message names the likely cause
(:meth:`DivergenceCheck.hint`: the data, a setting, else the learning rate).
"""

import numpy as np

from ..utils._energy import binary_entropy_row_sums
from ..exceptions import TrainingDivergedError

#: A weight decay whose step (learning rate times weight_decay) reaches this shrinks
#: the weights to nothing within 16 updates (the RBMs apply 16 updates' decay at once,
#: so it overshoots zero there): the likely cause of a diverged fit. Usual settings
#: make it 1e-2 at most.
DECAY_STEP_LIMIT = 1 / 16

#: A model whose log-likelihood on its own training rows is provably lower than the
#: uniform distribution's by more than this fraction has diverged (see
#: :meth:`DivergenceCheck.check_likelihood`). Healthy fits score far above uniform.
DIVERGED_BELOW_UNIFORM = 0.25

#: Of the monitoring rows, rows on which the end of each fit / partial_fit is checked
#: for divergence.
LIKELIHOOD_CHECK_ROWS = 32

#: The divergence check's bound on log Z takes this many mean-field steps from its best
#: candidate (see :func:`likelihood_upper_bound`) when the calls it checks made at
#: least this many minibatch updates: the steps cost about as much as a small model's
#: update, so a check of a few partial_fit calls on one minibatch each (a hot path)
#: goes without them.
MEAN_FIELD_STEPS = 2
MEAN_FIELD_CHECK_UPDATES = 10

#: partial_fit calls are checked for divergence together once they have trained on
#: this many rows (see :meth:`DivergenceCheck.when_due`).
PARTIAL_FIT_CHECK_ROWS = 256


class DivergenceCheck:
    """An estimator's check that training did not make its model diverge, and the
    hints of the error that says so.

    Made by the estimator (``_divergence_check_class(estimator)``) where a check or a
    hint is needed. A subclass refines :meth:`check` (another objective),
    :meth:`settings_hint` (settings of its own that make training diverge) or
    :meth:`data_hint` (what in the data does).

    Parameters
    ----------
    estimator : BoltzmannBase
        The estimator being trained (its settings and hooks).
    """

    def __init__(self, estimator):
        self.estimator = estimator

    # -- when --------------------------------------------------------------------------
    def when_due(self, state, learning, monitoring, n_rows, n_updates, first_call):
        """Run :meth:`check` at the end of every ``fit``, and of ``partial_fit`` calls
        once the calls since it last ran have trained on PARTIAL_FIT_CHECK_ROWS rows.

        The likelihood check costs about as much as the update of a minibatch of 32
        rows (a free-energy pass over LIKELIHOOD_CHECK_ROWS rows and their roundings),
        whatever the call's size: on every ``partial_fit`` call it was a tenth of a call
        at batch 100, a quarter at batch 10. Calls are therefore checked together (at
        batch 100 every third call, at batch 10 every 26th), on the last call's rows
        (``monitoring``, its :class:`~skboltz.core._monitoring.MonitoringRows`), against the
        model the first of them started from, so that a model a run of unchecked calls
        made poor is still blamed on them; ``n_updates`` counts the updates of the
        calls checked. A hand edit of the parameters starts a new run, judged against
        the edit; where the training state cannot tell edits (no iterate averaging)
        every call is checked. Every call still checks the parameters' size
        (``_train``).
        """
        if first_call:
            state.unchecked_rows, state.unchecked_updates = 0, 0
            state.check_reference = None
            self.check(state, learning, monitoring, n_updates=n_updates)
            return
        if state.unchecked_rows == 0 or state.hand_edited is not False:
            # a new run of calls: judged against the public model before this call
            state.unchecked_rows, state.unchecked_updates = 0, 0
            state.check_reference = self.estimator._model_view()
        state.unchecked_rows += n_rows
        state.unchecked_updates += n_updates
        if state.unchecked_rows < PARTIAL_FIT_CHECK_ROWS and state.hand_edited is False:
            return
        try:
            self.check(state, learning, monitoring, state.check_reference,
                       n_updates=state.unchecked_updates)
        except TrainingDivergedError as error:
            earlier = state.unchecked_rows - n_rows
            if not earlier:
                raise
            raise TrainingDivergedError(
                f"{error} The partial_fit calls since the last check ({earlier} rows "
                "before this call's) were checked with it; their updates stay applied."
            ) from None
        state.unchecked_rows, state.unchecked_updates = 0, 0
        state.check_reference = None

    # -- what --------------------------------------------------------------------------
    def check(self, state, learning, monitoring, previous_view=None, *, n_updates):
        """Raise TrainingDivergedError if this call made the model provably far worse.

        Run at the end of every ``fit`` and of runs of ``partial_fit`` calls (see
        :meth:`when_due`; the parameters' magnitude is checked after every epoch).
        ``monitoring`` holds the call's monitoring rows (and their labels),
        ``previous_view`` the model the calls started from (None for a fresh fit),
        ``n_updates`` the updates the calls made. Density models bound their
        log-likelihood (:meth:`check_likelihood`; with mean-field steps only after
        enough updates to have moved the model); an estimator with another objective
        checks that.
        """
        self.check_likelihood(
            state, learning, monitoring.train, previous_view,
            mean_field_steps=(MEAN_FIELD_STEPS
                              if n_updates >= MEAN_FIELD_CHECK_UPDATES else 0),
        )

    def check_likelihood(self, state, learning, rows, previous_view=None,
                         mean_field_steps=MEAN_FIELD_STEPS):
        """Raise TrainingDivergedError if training made the model provably far worse.

        Diverged means: the bound of :func:`likelihood_upper_bound` on the training
        log-likelihood ends far below the uniform distribution's, and (for
        ``partial_fit`` calls continuing ``previous_view``) far below where the calls
        started, so a model that was already poor (e.g. edited by hand) is not blamed
        on them. A healthy fit is never flagged: the bound is an upper bound. Only
        for binary visible units with a cheap exact free energy (real-valued units
        have their own checks). ``mean_field_steps`` tightens the bound (0 for the
        cheap bound of a call that made few updates).
        """
        estimator = self.estimator
        view = estimator._model_view_of(state)
        entropy = estimator._input_units().entropy  # None: the layer has no such bound
        if (rows.shape[0] == 0 or entropy is None
                or not getattr(view, "free_energy_is_cheap", True)):
            return
        # float32 whatever the model's dtype: the bound's rounding (about 1e-5 nats per
        # nat of free energy) is far below the margin, and float64 exp and log cost 3-5
        # times as much on CPUs without AVX-512 (partial_fit calls pay for this)
        if view.dtype != np.float32:
            view = view.astype(np.float32)
        step = max(1, rows.shape[0] // LIKELIHOOD_CHECK_ROWS)
        rows = rows[::step]
        chains = learning.persistent_chains(state.sampler)
        upper = likelihood_upper_bound(view, rows, chains, mean_field_steps, entropy)
        uniform = -rows.shape[1] * np.log(2.0)
        margin = DIVERGED_BELOW_UNIFORM * -uniform
        if upper >= uniform - margin:
            return
        if previous_view is not None:
            if previous_view.dtype != np.float32:
                previous_view = previous_view.astype(np.float32)
            before = likelihood_upper_bound(previous_view, rows, chains, mean_field_steps,
                                            entropy)
            if upper >= before - margin:
                return
        raise TrainingDivergedError(
            f"{type(estimator).__name__} diverged: on its own training rows it scores at "
            f"most {upper:.4g} nats per row (an upper bound on the log-likelihood), far "
            f"below the {uniform:.4g} of the uniform distribution. "
            f"{self.hint(rows, state, learning)} The estimator was left as it "
            "was before this call."
        )

    # -- why ---------------------------------------------------------------------------
    def hint(self, X, state=None, learning=None):
        """The likely cause of a diverged fit, and what to do about it (``state`` and
        ``learning`` give the step an "auto" learning rate resolved to)."""
        estimator = self.estimator
        hint = self.data_hint(X)
        if hint is not None:
            return hint
        step = estimator.learning_rate
        if state is not None:
            step = estimator._learning_rate_of(state, learning)
        if isinstance(step, str):
            return (f"The learning rate is probably too high (learning_rate={step!r}); "
                    "lower it, or raise batch_size.")
        shown = (f"learning_rate={estimator.learning_rate!r}, a step of {step:.3g} here"
                 if isinstance(estimator.learning_rate, str) else f"learning_rate={step:g}")
        return self.settings_hint(step) or (
            f"The learning rate is probably too high ({shown}); lower it, or raise "
            "batch_size."
        )

    def settings_hint(self, step):
        """A setting other than the learning rate that makes training at ``step``
        diverge, and the fix (None: none): a weight decay beyond the usual range
        (above 1e-2) whose updates overshoot."""
        weight_decay = self.estimator.weight_decay
        if isinstance(weight_decay, str):  # "auto": at most 1e-2
            return None
        if weight_decay > 1e-2 and step * weight_decay >= DECAY_STEP_LIMIT:
            return (
                f"weight_decay={weight_decay:g} is far too strong for the step "
                f"{step:.3g}: an update shrinks the weights by weight_decay times the "
                "step, which overshoots zero here. Use a weight_decay below "
                f"{DECAY_STEP_LIMIT / step:.3g} (usual values are 1e-5 to 1e-2)."
            )
        return None

    def data_hint(self, X):
        """What in the data could make training diverge, and the fix (None: nothing).

        Binary visible units see their rows clipped into [0, 1] (with a warning), so
        their data never does; real-valued units name the scale they find."""
        return None


def likelihood_upper_bound(view, rows, chains=None, mean_field_steps=MEAN_FIELD_STEPS,
                           entropy=binary_entropy_row_sums):
    """An upper bound on the mean log-likelihood of ``rows`` (values in [0, 1]).

    For any m in [0, 1]^n, log Z >= -F(m) + H(m): Gibbs' inequality with the
    independent distribution of means m, then Jensen's inequality (the hidden
    log-sum in -F is convex in v; pairwise visible terms with a zero diagonal have
    the same mean under that distribution as at m). The best of a few candidates
    (the rows, their roundings, the persistent chains' states, which sit near the
    model's modes, and ``mean_field_steps`` mean-field steps from the best of
    them) bounds log Z from below, so mean(-F(v)) - bound is an upper bound on the
    log-likelihood. Without the mean-field steps the bound missed much of log Z on
    models trained at huge learning rates (31-40 nats on 64 x 16 RBMs of the digits,
    whose candidates all sat away from the modes); one step from the best candidate
    found all of it. Computed in the view's dtype: float32 rounding is far below the
    margins it is compared with. For layers whose units take the values 0 and 1 and
    whose ``entropy`` gives H (binary units: their states are candidates, values in
    [0, 1] their means): the view's ``free_energy`` and ``reconstruct`` are all it
    asks of the model.
    """
    rows = rows.astype(view.dtype, copy=False)
    n_rows, n_visible = rows.shape
    rounded = np.rint(rows)
    fractional = bool((rounded != rows).any())
    n_chains = 0
    if isinstance(chains, np.ndarray):  # persistent chains: states near the modes
        chains = chains[:: max(1, chains.shape[0] // LIKELIHOOD_CHECK_ROWS), :n_visible]
        n_chains = chains.shape[0]
    # One array, filled in place (a partial_fit on one small minibatch pays for
    # every call here).
    candidates = np.empty((n_rows * (1 + fractional) + n_chains, n_visible), view.dtype)
    candidates[:n_rows] = rows
    if fractional:
        candidates[n_rows : 2 * n_rows] = rounded
    if n_chains:
        np.clip(chains, 0, 1, out=candidates[candidates.shape[0] - n_chains :])
    with np.errstate(over="ignore", invalid="ignore"):
        log_weights = -np.asarray(view.free_energy(candidates), dtype=np.float64)
        mean_log_weight = float(log_weights[:n_rows].sum()) / n_rows
        if fractional:  # binary candidates have zero entropy
            log_weights[:n_rows] += entropy(rows)
        best = int(np.argmax(log_weights))
        log_z_bound = float(log_weights[best])
        if mean_field_steps:
            # Mean-field steps m <- E[v | P(h | m)] from the best candidate climb
            # towards the mode it is nearest.
            means = candidates[best : best + 1]
            for _ in range(mean_field_steps):
                means = view.reconstruct(means)
            log_z_bound = max(log_z_bound, float(
                -view.free_energy(means)[0] + entropy(means)[0]))
        return mean_log_weight - log_z_bound


__all__ = ["DivergenceCheck", "likelihood_upper_bound"]
