"""The check at the end of fit that a model still resembles its training data."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.utils.validation import check_is_fitted

from skboltz import DBM, RBM, BoltzmannMachine, GaussianRBM, RBMClassifier
from skboltz import _degeneracy as degeneracy
from skboltz.utils._energy import logit_of_rates
from skboltz.estimators._rbm import RBMLayout
from skboltz.exceptions import DegenerateModelWarning
from skboltz.views import BinaryUnits, BMView, RBMView

X_DIGITS = load_digits().data[:300] / 16
Y_DIGITS = load_digits().target[:300]


def blank_mode_view(n_visible, n_hidden=4, visible_bias=-6.0):
    """An RBM whose visible units are all off with probability ~0.85 (64 units)."""
    return RBMView(np.zeros((n_hidden, n_visible)), np.full(n_visible, visible_bias),
                   np.zeros(n_hidden))


def diagnose(view, rows, n_steps=50, start=None, units=BinaryUnits):
    start = rows.mean(axis=0) if start is None else start
    return degeneracy.diagnose(view, rows, start, np.random.default_rng(0), n_steps,
                               units=units)


def test_a_planted_blank_mode_is_degenerate():
    diagnosis = diagnose(blank_mode_view(64), X_DIGITS)
    assert diagnosis.is_degenerate(64)
    assert diagnosis.collapsed_share > 0.5
    assert not diagnosis.collapsed_state.any()
    # -F(blank) = 0 against -F(row) = -6 * (the row's sum, 19 on average)
    assert diagnosis.free_energy_gap > 50
    assert "all zeros" in diagnosis.describe(64)


def test_independent_units_at_the_data_rates_are_not_degenerate():
    # The exact model of the pixels' marginals: its samples have the data's means.
    rates = X_DIGITS.mean(axis=0)
    view = RBMView(np.zeros((4, 64)), logit_of_rates(rates), np.zeros(4))
    diagnosis = diagnose(view, X_DIGITS)
    assert not diagnosis.is_degenerate(64)
    assert abs(diagnosis.free_energy_gap) < degeneracy.GAP_NATS


def test_a_frequent_state_of_few_units_is_no_collapse():
    # 3 units at rate 1/2: each state holds 1/8 of the draws, a third of the chains
    # may share one without anything being wrong (a DBN's small top layer).
    rows = np.random.default_rng(0).integers(0, 2, (200, 3)).astype(float)
    view = RBMView(np.zeros((2, 3)), np.zeros(3), np.zeros(2))
    for seed in range(20):
        diagnosis = degeneracy.diagnose(view, rows, rows.mean(axis=0),
                                        np.random.default_rng(seed), 30, units=BinaryUnits)
        assert not diagnosis.is_degenerate(3)


def test_a_state_the_data_holds_often_is_no_collapse():
    # Half the training rows are blank: chains that end blank half the time are right.
    rows = X_DIGITS.copy()
    rows[::2] = 0
    rates = rows.mean(axis=0)
    view = RBMView(np.zeros((2, 64)), logit_of_rates(rates), np.zeros(2))
    assert degeneracy.collapse_threshold(np.zeros(64), rows) >= 5.0


def test_the_check_costs_a_fraction_of_the_fit():
    assert degeneracy.check_steps(0) == degeneracy.MIN_STEPS
    assert degeneracy.check_steps(10**9) == degeneracy.MAX_STEPS
    rows = 200_000  # 4,000 rows x 50 epochs
    steps = degeneracy.check_steps(rows)
    assert steps * degeneracy.N_CHAINS <= degeneracy.CHECK_COST_FRACTION * rows


#: Sparse binary rows (64 units on with probability 0.05: 3 on per row, 4 % blank).
X_SPARSE = (np.random.default_rng(0).random((300, 64)) < 0.05).astype(float)


class PlantedBlankRBM(RBM):
    """An RBM that starts (and, at a negligible learning rate, stays) degenerate.

    Visible biases of -5 (pixel rates 0.007 against the data's 0.05) put 65 % of the
    probability on the blank image, which holds 4 % of the rows: on sparse rows still
    a far better model than the uniform distribution (so not diverged), and yet its
    samples are mostly blank.
    """

    def _new_training_state(self, X, y, learning, rng):
        state = super()._new_training_state(X, y, learning, rng)
        for params in {id(p): p for p in (state.params, getattr(state, "iterate", None))
                       if p is not None}.values():
            params[RBMLayout.weights] = 0.0
            params[RBMLayout.visible_bias] = -5.0
        return state


def test_fit_warns_about_a_degenerate_model_and_still_publishes_it():
    rbm = PlantedBlankRBM(n_components=4, n_iter=1, learning_rate=1e-9, random_state=0)
    with pytest.warns(DegenerateModelWarning, match="all zeros") as caught:
        rbm.fit(X_SPARSE)
    message = str(caught[0].message)
    assert "PlantedBlankRBM looks degenerate" in message
    assert "learning_rate" in message  # what to try
    check_is_fitted(rbm)
    assert (rbm.sample(100, n_steps=20).sum(axis=1) == 0).mean() > 0.5


def test_partial_fit_checks_once_enough_rows_were_trained():
    rbm = PlantedBlankRBM(n_components=4, learning_rate=1e-9, batch_size=300,
                          random_state=0)
    needed = degeneracy.MIN_STEPS * degeneracy.N_CHAINS / degeneracy.CHECK_COST_FRACTION
    with pytest.warns(DegenerateModelWarning):
        rbm.partial_fit(X_SPARSE)  # the first call is checked
    calls = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegenerateModelWarning)
        while not caught:
            rbm.partial_fit(X_SPARSE)
            calls += 1
    assert calls == int(np.ceil(needed / X_SPARSE.shape[0]))


class NoCheck(degeneracy.DegeneracyCheck):
    """The check disabled."""

    def when_due(self, *args, **kwargs):
        return None


def test_the_check_leaves_training_and_sampling_streams_alone():
    # Its chains draw from their own stream: a model trained with the check disabled
    # is bit-identical, and so are its samples.
    a = RBM(n_components=8, n_iter=3, random_state=0).fit(X_DIGITS)
    original = degeneracy.diagnose
    try:
        degeneracy.diagnose = lambda *args, **kwargs: original(*args, **kwargs)
        b = RBM(n_components=8, n_iter=3, random_state=0)
        b._degeneracy_check_class = NoCheck
        b.fit(X_DIGITS)
    finally:
        degeneracy.diagnose = original
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.sample(5, n_steps=10), b.sample(5, n_steps=10))


def standardized(X):
    X = X[:, X.std(axis=0) > 0.2]
    return (X - X.mean(axis=0)) / X.std(axis=0)


@pytest.mark.parametrize("estimator, data", [
    (RBM(n_components=16, n_iter=10, random_state=0), "binary"),
    (GaussianRBM(n_components=8, n_iter=10, random_state=0), "standardized"),
    (BoltzmannMachine(n_hidden=4, n_iter=5, random_state=0), "binary"),
    (DBM(hidden_layer_sizes=(16, 8), n_iter=5, random_state=0), "binary"),
    (RBMClassifier(n_components=16, n_iter=10, random_state=0), "labelled"),
], ids=lambda value: type(value).__name__ if not isinstance(value, str) else value)
def test_every_density_model_is_checked_without_false_alarm(estimator, data):
    X = standardized(X_DIGITS) if data == "standardized" else X_DIGITS
    called = []

    class Spy(degeneracy.DegeneracyCheck):
        def when_due(self, *args, **kwargs):
            result = super().when_due(*args, **kwargs)
            called.append(result)
            return result

    estimator._degeneracy_check_class = Spy
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateModelWarning)
        estimator.fit(X, Y_DIGITS) if data == "labelled" else estimator.fit(X)
    assert called == [None]


def test_a_planted_mode_of_a_boltzmann_machine_is_degenerate():
    n_visible, n_hidden = 64, 4
    n_units = n_visible + n_hidden
    view = BMView(np.zeros((n_units, n_units)), np.full(n_units, -6.0), n_visible)
    diagnosis = diagnose(view, X_DIGITS)
    assert diagnosis.is_degenerate(n_visible)


def test_scores_warn_about_a_row_holding_much_of_the_probability():
    # A mode the end-of-fit chains may never reach is still seen by log Z: the
    # planted model puts sigmoid(5) ** 64 = 65 % of its probability on the blank row.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateModelWarning)
        rbm = PlantedBlankRBM(n_components=4, n_iter=1, learning_rate=1e-9,
                              random_state=0).fit(X_SPARSE)
    with pytest.warns(DegenerateModelWarning, match="65% of its probability on the all-zeros"):
        scores = rbm.score_samples(X_SPARSE)
    blank = rbm.score_samples(np.zeros((1, 64)))[0]
    assert blank == pytest.approx(64 * np.log(1 / (1 + np.exp(-5.0))), abs=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateModelWarning)  # once per fitted model
        np.testing.assert_array_equal(rbm.score_samples(X_SPARSE), scores)


def test_scores_of_a_model_of_the_data_do_not_warn():
    rbm = RBM(n_components=8, n_iter=5, random_state=0).fit(X_DIGITS)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateModelWarning)
        rbm.score(X_DIGITS)


# -- samples unlike the data (issue 41) -------------------------------------------------
def test_samples_far_from_the_data_warn_and_samples_like_it_do_not():
    """The check's chains start where sample() starts them (training rows) and their
    mean and column means are compared with the data's: a model checked against rows
    unlike those it was trained on is flagged; against its own rows it is not."""
    from skboltz.core._monitoring import MonitoringRows

    rng = np.random.default_rng(0)
    rates = np.linspace(0.05, 0.35, 30)
    A = (rng.random((2000, 30)) < rates).astype(float)
    rbm = RBM(n_components=8, n_iter=20, random_state=0).fit(A)
    assert rbm._training_state.sampling_rows.shape[1] == 30
    check = degeneracy.DegeneracyCheck(rbm)
    state = rbm._training_state
    own = check.when_due(state, MonitoringRows(train=A[:300]), 100_000, False)
    assert own is None
    B = (rng.random((300, 30)) < 1 - rates).astype(float)  # mean 0.8 against 0.2
    far = check.when_due(state, MonitoringRows(train=B), 100_000, False)
    assert far is not None and far.unlike_data is not None
    assert far.unlike_data.mean_off > 0.5
    assert "started as sample() starts them" in far.describe(30)


def test_sample_statistics_measure_the_noise_of_few_samples():
    rng = np.random.default_rng(1)
    rows = (rng.random((5000, 40)) < 0.3).astype(float)
    like = degeneracy.sample_statistics((rng.random((32, 40)) < 0.3).astype(float), rows)
    assert not like.unlike and like.column_error < 2 * like.column_noise
    unlike = degeneracy.sample_statistics((rng.random((32, 40)) < 0.6).astype(float),
                                          rows)
    assert unlike.unlike and unlike.mean_off > 0.5
