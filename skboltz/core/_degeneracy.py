"""Does a fitted model still resemble the data it was trained on?

A density can be degenerate while its features and its training curves look fine: an
RBM trained by CD-1 with visible means on real handwritten digits put 76-85 % of its
probability on the blank image, every ``sample()`` was blank, and nothing said so.
Contrastive divergence never visits states far from the data, so nothing in its
gradient pushes such a mode down.

The check at the end of ``fit`` runs a few Gibbs chains from the start ``sample`` uses
and compares where they end with the training rows, in two ways that need no log Z:

- **the free-energy gap**: the mean of -F(v) over the chains' states minus its mean
  over the training rows, in nats per row. Under a model that fits, samples and data
  are alike and the gap is small (a few nats on 784-pixel images); a model whose chains
  sit in a mode the data never visits gives those states tens to hundreds of nats more
  than its own training rows: the rows are then far less probable than the model's
  favourite states, whose probability mass cannot be the data's;
- **collapse**: the share of the chains that ended in one and the same state (binary
  visible units), such as the blank image.

A third measure needs chains that start where ``sample`` starts its own (at training
rows, for binary units):

- **samples unlike the data**: the mean visible value of those chains off the data's by
  more than half (of the mean, or of one minus it when that is smaller), or their
  column means off the data's by far more than the sampling noise of so few chains
  (:func:`sample_statistics`).

Any of them, beyond its threshold, is a :class:`~skboltz.exceptions.DegenerateModelWarning`
that says what the chains did and what to try (an estimator's :class:`DegeneracyCheck`
runs the check and warns). The chains cost about
``CHECK_COST_FRACTION`` of the fit's own Gibbs work (between ``MIN_STEPS`` and
``MAX_STEPS`` steps of ``N_CHAINS`` chains), so a short fit pays little for it.

Chains that start near the data may never reach a mode far from it (a CD-1 model
trained with visible samples put 94 % of its probability on the blank image while its
chains wandered in bright noise), but log Z sees it: scores check the all-zeros and
all-ones rows once log Z is known (:func:`favoured_extreme_row`).
"""

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..units._layers import BinaryUnits
from ..utils._runtime import warn_user
from ..exceptions import DegenerateModelWarning

#: Chains of the check (started as ``sample`` starts its chains).
N_CHAINS = 32
#: Gibbs steps of each chain: the fit's Gibbs work times CHECK_COST_FRACTION, spread
#: over the chains, within these bounds.
MIN_STEPS, MAX_STEPS = 25, 200
CHECK_COST_FRACTION = 0.02
#: Training rows whose free energies the chains' are compared with.
DATA_ROWS = 256

#: Warn when the chains' states have this much more -F(v) than the training rows, per
#: row: in nats, at least GAP_NATS and at least GAP_NATS_PER_FEATURE per feature.
GAP_NATS = 20.0
GAP_NATS_PER_FEATURE = 0.1
#: Warn when more than this share of the chains ended in one state, and more than
#: DATA_MULTIPLE times the share it would have in a fine model (:func:`collapse_threshold`).
COLLAPSED_SHARE = 0.25
DATA_MULTIPLE = 10.0
#: Fewer visible units have too few states for a shared one to mean much (2 units: 4
#: states), and the free-energy gap covers them.
MIN_COLLAPSE_UNITS = 8

#: Training rows kept with a fitted model (binary units) where ``sample``'s chains start.
SAMPLING_ROWS = 256
#: Samples are unlike the data when their mean visible value is off the data's by more
#: than this share of it (of 1 - mean when that is smaller), or when the mean absolute
#: error of their column means exceeds COLUMN_NOISE_MULTIPLE times what the sampling
#: noise of N_CHAINS chains gives a model that fits (and MIN_COLUMN_ERROR).
MEAN_OFF_SHARE = 0.5
COLUMN_NOISE_MULTIPLE = 4.0
MIN_COLUMN_ERROR = 0.05


@dataclass(frozen=True)
class Diagnosis:
    """What the check's chains did, against the training rows."""

    #: Mean -F(v) of the chains' final states minus that of the training rows (nats).
    free_energy_gap: float
    #: Share of the chains in their most common final state when beyond its
    #: allowance (:func:`collapse_threshold`), else 0 (always 0 for real-valued units).
    collapsed_share: float
    #: That state, or None.
    collapsed_state: object
    #: Mean visible value of the chains' states and of the training rows.
    chain_mean: float
    data_mean: float
    n_steps: int
    #: Of the chains started where ``sample`` starts (None: not run): their
    #: :class:`SampleStatistics`, when unlike the data, else None.
    unlike_data: object = None

    def is_degenerate(self, n_features):
        return (self.free_energy_gap > gap_limit(n_features) or self.collapsed_share > 0
                or self.unlike_data is not None)

    def describe(self, n_features):
        """One sentence of what the chains did (for the warning)."""
        parts = []
        if self.collapsed_share:
            parts.append(
                f"{self.collapsed_share:.0%} of {N_CHAINS} Gibbs chains ended in the same "
                f"state ({_state_name(self.collapsed_state)})"
            )
        if self.unlike_data is not None:
            parts.append(self.unlike_data.describe())
        if self.free_energy_gap > gap_limit(n_features):
            parts.append(
                f"the states its Gibbs chains reach are {self.free_energy_gap:.3g} nats "
                "more probable (unnormalised, -F(v)) than its own training rows on "
                "average"
            )
        return (
            "; ".join(parts)
            + f" (after {self.n_steps} steps; mean visible value {self.chain_mean:.3g} "
            f"in the chains, {self.data_mean:.3g} in the training data)"
        )


def gap_limit(n_features):
    """The free-energy gap (nats per row) beyond which a model is degenerate."""
    return max(GAP_NATS, GAP_NATS_PER_FEATURE * n_features)


def _state_name(state):
    if state is None:
        return "one state"
    if not state.any():
        return "all zeros"
    if state.all():
        return "all ones"
    return f"{int(state.sum())} of {state.size} units on"


def is_due(fit_gibbs_rows):
    """Whether training of ``fit_gibbs_rows`` rows pays for the check's shortest run
    (``partial_fit`` calls are checked once they have)."""
    return CHECK_COST_FRACTION * fit_gibbs_rows >= MIN_STEPS * N_CHAINS


def check_steps(fit_gibbs_rows):
    """Gibbs steps of the check's chains for a fit that made ``fit_gibbs_rows`` row
    updates of Gibbs work (rows times steps)."""
    steps = int(CHECK_COST_FRACTION * fit_gibbs_rows / N_CHAINS)
    return min(MAX_STEPS, max(MIN_STEPS, steps))


def allowance(state, rates, data_share, floor, units=BinaryUnits):
    """How much of the model's probability (or of its chains) ``state`` may hold before
    the model counts as collapsed there: ``floor``, or DATA_MULTIPLE times what the
    state would have if the model were fine, when that is more: its share of the
    training rows, its probability under independent units at the data's rates, or
    under the uniform distribution (with few units, states come up often: 3 units at
    rates 1/2 give each 1/8)."""
    independent = units.state_probability(state, rates)
    if independent is None:  # a type without the allowance: not judged
        return None
    uniform = 2.0 ** -len(state)
    return max(floor, DATA_MULTIPLE * max(independent, data_share, uniform))


def share_of_rows(state, rows):
    """The share of ``rows`` (rounded to binary) equal to ``state``."""
    return float(np.mean((np.rint(rows) == state).all(axis=1)))


def collapse_threshold(state, rows, units=BinaryUnits):
    """The share of the check's chains in ``state`` above which the model has
    collapsed there (:func:`allowance` with COLLAPSED_SHARE; None: not judged)."""
    return allowance(state, rows.mean(axis=0), share_of_rows(state, rows),
                     COLLAPSED_SHARE, units)


def diagnose(view, rows, start, rng, n_steps, *, units, free_energy=True):
    """Run the check's chains on ``view`` and compare them with ``rows`` (dense).

    ``start`` is where ``sample`` starts its chains; ``units``: the layer class of the
    rows (the states they stand for, and whether chains collapsed into one state can
    be judged: binary units); ``free_energy``: the view's free energy is cheap enough
    to compare (otherwise the gap is not measured: 0).
    """
    rows = rows[:: max(1, rows.shape[0] // DATA_ROWS)]
    chains = view.draw_samples(N_CHAINS, n_steps, start, rng)
    gap = 0.0
    if free_energy:
        # The states the rows stand for: binary units read values in [0, 1] as
        # probabilities. (-F is convex in v, so a grey row has less of it than the
        # binary states around it: 15 nats on the digits' 64 pixels.)
        states = units.states_of_rows(rows, rng)
        gap = float(np.mean(-view.free_energy(chains)) - np.mean(-view.free_energy(states)))
    collapsed_share, collapsed_state = 0.0, None
    if rows.shape[1] >= MIN_COLLAPSE_UNITS:
        states, counts = np.unique(chains, axis=0, return_counts=True)
        top = int(np.argmax(counts))
        share = counts[top] / N_CHAINS
        threshold = collapse_threshold(states[top], rows, units)
        if threshold is not None and share > threshold:
            collapsed_share, collapsed_state = share, states[top]
    return Diagnosis(gap, float(collapsed_share), collapsed_state, float(chains.mean()),
                     float(rows.mean()), n_steps)


#: A blank or all-ones row holding more of the probability than this (by log Z) makes
#: a model degenerate (no real image set has such a row in 1 % of its images).
FAVOURED_STATE_MASS = 0.01


def extreme_row_shares(rows, units=BinaryUnits):
    """The shares of ``rows`` (rounded) that are the layer's extreme states (binary
    units: all zeros and all ones)."""
    return tuple(share_of_rows(row, rows)
                 for row in units.extreme_states(rows.shape[1])[0])


@dataclass(frozen=True)
class SampleStatistics:
    """How samples of a model compare with its training rows (binary units)."""

    #: Mean visible value of the samples and of the rows.
    sample_mean: float
    data_mean: float
    #: Mean absolute difference of their column means, and what it would be from the
    #: sampling noise alone (rows and samples of the same rates).
    column_error: float
    column_noise: float
    n_samples: int

    @property
    def mean_off(self):
        """The samples' mean off the data's, as a share of the data's (of 1 - mean
        when that is smaller)."""
        room = min(self.data_mean, 1.0 - self.data_mean)
        return abs(self.sample_mean - self.data_mean) / max(room, 1e-12)

    @property
    def unlike(self):
        return (self.mean_off > MEAN_OFF_SHARE
                or self.column_error > max(COLUMN_NOISE_MULTIPLE * self.column_noise,
                                           MIN_COLUMN_ERROR))

    def describe(self):
        return (f"its samples ({self.n_samples} Gibbs chains started as sample() starts "
                f"them) have mean visible value {self.sample_mean:.3g} against "
                f"{self.data_mean:.3g} in the training data, and their column means are "
                f"{self.column_error:.2g} off the data's on average (sampling noise alone "
                f"gives about {self.column_noise:.2g})")


def sample_statistics(samples, rows):
    """Compare ``samples`` (states) with training ``rows`` (values in [0, 1]).

    The noise of the column error is the mean over columns of ``E|a - b|`` for the
    means ``a``, ``b`` of independent draws at the data's rate ``r`` (normal
    approximation: ``sqrt(2 / pi) * sqrt(r (1 - r) (1 / n_samples + 1 / n_rows))``).
    """
    rates = rows.mean(axis=0)
    spread = rates * (1.0 - rates) * (1.0 / samples.shape[0] + 1.0 / rows.shape[0])
    return SampleStatistics(
        float(samples.mean()), float(rows.mean()),
        float(np.mean(np.abs(samples.mean(axis=0) - rates))),
        float(np.mean(np.sqrt(2.0 / np.pi * spread))), samples.shape[0])


def sampling_rows(rows):
    """Up to SAMPLING_ROWS evenly spaced rows of ``rows`` (values in [0, 1]), where
    ``sample``'s chains start, in 256 levels (uint8: binary rows exactly, grey ones to
    1/255, as 8-bit images are; a fitted model keeps a few kilobytes of them)."""
    step = max(1, -(-rows.shape[0] // SAMPLING_ROWS))
    kept = np.clip(np.asarray(rows[::step][:SAMPLING_ROWS], dtype=np.float64), 0, 1)
    return np.rint(kept * 255).astype(np.uint8)


def kept_rows(state, dtype):
    """The training rows the state keeps (:func:`sampling_rows`) as values in [0, 1] of
    ``dtype``, or None."""
    rows = getattr(state, "sampling_rows", None)
    return None if rows is None else rows.astype(dtype) / dtype.type(255)


def favoured_extreme_row(view, log_z, rates, data_shares, units=BinaryUnits):
    """The layer's extreme state (binary units: the all-zeros or all-ones row) that
    holds more of the model's probability (by ``log_z``) than its :func:`allowance`
    (floor FAVOURED_STATE_MASS; ``data_shares``: the states' shares of the training
    rows): ``(name, log-probability)``, else None."""
    rows, names = units.extreme_states(view.n_visible, view.dtype)
    log_probability = -np.asarray(view.free_energy(rows), dtype=np.float64) - log_z
    for row, name, log_p, share in zip(rows, names, log_probability, data_shares):
        # (a positive log-probability is the log Z estimate's fault, which the
        # scores' own check reports)
        if 0 >= log_p > np.log(allowance(row, rates, share, FAVOURED_STATE_MASS, units)):
            return name, float(log_p)
    return None


class DegeneracyCheck:
    """An estimator's check, at the end of a call, that its fitted model still
    resembles the training data (made by the estimator: ``_degeneracy_check_class``).

    Parameters
    ----------
    estimator : BoltzmannBase
        The estimator being trained (its hooks and training state).
    """

    def __init__(self, estimator):
        self.estimator = estimator

    def remember_data(self, state, monitoring, first_call):
        """Keep, from a first call's training rows (``monitoring.train``), what the
        model's checks and ``sample`` need of them: the shares of the extreme rows
        (binary units: all zeros, all ones) and, for binary units, the rows
        ``sample``'s chains start at (:func:`sampling_rows`)."""
        units = self.estimator._input_units()
        if (first_call and units.extreme_states(0) is not None
                and monitoring.train.shape[0]):
            # what the scores' check of the extreme rows allows them
            state.extreme_row_shares = extreme_row_shares(monitoring.train, units)
            if units is BinaryUnits:
                state.sampling_rows = sampling_rows(monitoring.train)

    def when_due(self, state, monitoring, n_rows_trained, first_call):
        """The :class:`Diagnosis` of the trained model if it is degenerate, else None.

        Run at the end of every ``fit``, and of ``partial_fit`` calls once the calls
        since it last ran have trained on enough rows to pay for its shortest run (its
        chains cost about ``CHECK_COST_FRACTION`` of the training they check), on the
        call's monitoring rows (``monitoring``). Its random stream is its own (from
        the fit's sampling seed and the epoch count), so training and ``sample`` draw
        the same numbers with or without it.
        """
        estimator = self.estimator
        units = estimator._input_units()
        if n_rows_trained == 0:
            return None  # nothing trained (n_iter=0): the starting model
        if first_call:
            state.unchecked_degeneracy_rows = 0
        state.unchecked_degeneracy_rows += n_rows_trained
        if not first_call and not is_due(state.unchecked_degeneracy_rows):
            return None
        n_steps = check_steps(state.unchecked_degeneracy_rows)
        # Samples are judged against the data only after training long enough to pay
        # for the check's shortest run: a model barely trained is near uniform, its
        # samples unlike the data without being degenerate.
        trained_enough = is_due(state.unchecked_degeneracy_rows)
        state.unchecked_degeneracy_rows = 0
        if monitoring.train.shape[0] == 0:
            return None
        view = estimator._model_view_of(state)
        rng = np.random.default_rng([state.sampling_seed, state.n_iter])
        with np.errstate(over="ignore", invalid="ignore"):
            diagnosis = diagnose(
                view, monitoring.train, estimator._sampling_start_of(state), rng, n_steps,
                units=units,
                free_energy=getattr(view, "free_energy_is_cheap", True),
            )
            if state.sampling_rows is not None and trained_enough:
                # chains as sample() runs them, from the rows it starts at
                starts = estimator._sample_starts_of(state, view, N_CHAINS, rng)
                samples = view.draw_samples(N_CHAINS, n_steps, starts, rng)
                statistics = sample_statistics(samples, monitoring.train)
                if statistics.unlike:
                    diagnosis = dataclasses.replace(diagnosis, unlike_data=statistics)
        return diagnosis if diagnosis.is_degenerate(view.n_visible) else None

    def warn(self, diagnosis):
        """Warn that the fitted model is degenerate, as ``diagnosis`` found it."""
        estimator = self.estimator
        warn_user(
            f"{type(estimator).__name__} looks degenerate: "
            f"{diagnosis.describe(estimator.n_features_in_)}. Its samples and scores "
            "describe a distribution unlike the training data (its features may still "
            f"be useful). {self.hint()}",
            DegenerateModelWarning,
        )

    def hint(self):
        """What to try when the fitted model is degenerate (estimators refine it)."""
        return ("Try a smaller learning_rate, more weight_decay, or a learning strategy "
                "whose chains explore the model (persistent chains or parallel "
                "tempering).")
