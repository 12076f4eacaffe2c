"""Divergence judged by what the model does, not only by the size of its numbers."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy.special import logsumexp

from skboltz import (
    DBM,
    DBN,
    RBM,
    BoltzmannClassifier,
    BoltzmannMachine,
    GaussianRBM,
    RBMClassifier,
)
import skboltz.core._divergence as divergence
from skboltz.core._divergence import MEAN_FIELD_STEPS, PARTIAL_FIT_CHECK_ROWS
from skboltz.utils._energy import binary_states
from skboltz.exceptions import TrainingDivergedError
from skboltz.views import BMView, RBMView


@pytest.fixture(scope="module")
def digits():
    from sklearn.datasets import load_digits

    return load_digits().data / 16


def _exact_mean_log_likelihood(view, rows):
    states = binary_states(view.n_visible)
    log_z = logsumexp(-view.free_energy(states))
    return float(np.mean(-view.free_energy(rows)) - log_z)


@pytest.mark.parametrize("seed", range(12))
def test_the_bound_is_an_upper_bound_on_the_log_likelihood(seed):
    rng = np.random.default_rng(seed)
    n_visible, n_hidden = 6, int(rng.integers(1, 5))
    scale = [0.5, 3.0, 20.0][seed % 3]  # weak, strong and diverged-like couplings
    rbm = RBMView(rng.normal(0, scale, (n_hidden, n_visible)), rng.normal(0, scale, n_visible),
                  rng.normal(0, scale, n_hidden))
    coupling = np.triu(rng.normal(0, scale, (n_visible + 2, n_visible + 2)), 1)
    bm = BMView(coupling + coupling.T, rng.normal(0, scale, n_visible + 2), n_visible)
    binary = (rng.random((40, n_visible)) < 0.4).astype(float)
    fractional = rng.random((40, n_visible))
    chains = (rng.random((10, n_visible + 2)) < 0.5).astype(float)
    for view in (rbm, bm):
        for rows in (binary, fractional):
            bound = divergence.likelihood_upper_bound(view, rows, chains)
            assert bound >= _exact_mean_log_likelihood(view, rows) - 1e-9


def test_a_diverged_rbm_fit_raises_and_keeps_the_previous_fit(digits):
    rbm = RBM(n_components=16, n_iter=3, random_state=0).fit(digits)
    before = rbm.components_.copy()
    with pytest.raises(TrainingDivergedError, match=r"far below the -44.36 of the uniform.*"
                       r"learning_rate=100"):
        rbm.set_params(learning_rate=100).fit(digits)
    assert_array_equal(rbm.components_, before)


@pytest.mark.parametrize("seed", range(3))
def test_a_fit_that_ends_far_below_uniform_raises(digits, seed):
    """RBM(n_components=16, n_iter=5, learning_rate=30, batch_size=100) scored 20-30
    nats per image below the uniform model with no error: the bound's candidates all
    sat away from the model's modes and missed 36 nats of log Z. Mean-field steps
    from the best candidates find them."""
    rbm = RBM(n_components=16, n_iter=5, learning_rate=30, batch_size=100,
              random_state=seed)
    with pytest.raises(TrainingDivergedError, match=r"far below the -44.36 of the uniform"
                       r".*learning_rate=30"):
        rbm.fit(digits)
    assert not hasattr(rbm, "components_")


@pytest.mark.parametrize("seed", range(3))
def test_no_false_alarm_on_the_digits_at_the_defaults(digits, seed):
    """The check never fires on a healthy model: the defaults, on the digits scaled
    and binarized, fitted and streamed one minibatch per partial_fit call (each call
    is checked), with the other strategies and at a high but sane learning rate."""
    for X in (digits, (digits > 0.5).astype(float)):
        RBM(random_state=seed).fit(X)
        streamed = RBM(random_state=seed)
        for start in range(0, X.shape[0], 10):
            streamed.partial_fit(X[start : start + 10])
    RBM(learning=("cd", "pt", "tap")[seed], random_state=seed).fit(digits)
    RBM(n_components=16, learning_rate=10, random_state=seed).fit(digits)
    BoltzmannMachine(n_iter=5, random_state=seed).fit((digits[:, 20:36] > 0.5).astype(float))


def test_a_diverged_boltzmann_machine_fit_raises(digits):
    X = (digits[:, 20:36] > 0.5).astype(float)
    bm = BoltzmannMachine(n_hidden=4, n_iter=2, learning_rate=1e3, random_state=0)
    with pytest.raises(TrainingDivergedError, match="far below the -11.09 of the uniform"):
        bm.fit(X)
    assert not hasattr(bm, "coupling_")


def test_a_diverging_partial_fit_raises_and_keeps_the_stream(digits):
    rbm = RBM(n_components=16, random_state=0)
    for start in range(0, 600, 200):
        rbm.partial_fit(digits[start : start + 200])
    before = (rbm.components_.copy(), rbm.n_iter_)
    with pytest.raises(TrainingDivergedError):
        rbm.set_params(learning_rate=100).partial_fit(digits[600:1400])
    assert_array_equal(rbm.components_, before[0])
    assert rbm.n_iter_ == before[1]
    rbm.set_params(learning_rate=0.05).partial_fit(digits[600:800])  # the stream goes on


def test_an_already_poor_model_is_not_blamed_on_a_gentle_call(digits):
    rbm = RBM(n_components=4, n_iter=3, random_state=0).fit(digits[:200])
    rbm.components_ = rbm.components_ + 5.0  # far worse than uniform, by hand
    rbm.set_params(learning_rate=1e-9).partial_fit(digits[:200])


def test_healthy_fits_at_high_but_sane_learning_rates_pass(digits):
    RBM(n_components=16, n_iter=3, learning_rate=10, random_state=0).fit(digits)
    BoltzmannMachine(n_hidden=4, n_iter=2, learning_rate=0.5, random_state=0).fit(
        (digits[:, 20:36] > 0.5).astype(float))


def test_models_built_from_diverging_layers_raise(digits):
    y = np.arange(digits.shape[0]) % 3
    with pytest.raises(TrainingDivergedError):
        BoltzmannClassifier(RBM(n_components=16, n_iter=3, learning_rate=100,
                                random_state=0)).fit(digits, y)
    with pytest.raises(TrainingDivergedError):
        DBN(hidden_layer_sizes=(16, 4),
            rbm=RBM(n_iter=3, learning_rate=100, random_state=0)).fit(digits)


def test_divergence_messages_name_the_likely_cause(digits):
    X = (digits[:, :8] > 0.5).astype(float)
    with pytest.raises(TrainingDivergedError, match="temperature=1e-300"):
        BoltzmannMachine(n_hidden=2, temperature=1e-300, n_iter=2, random_state=0).fit(X)


@pytest.mark.parametrize(
    "make, message",
    [(lambda: RBM(weight_decay=1e6, n_iter=1), r"weight_decay=1e\+06 is far too strong "
      r"for the step 0.1: .*Use a weight_decay below 0.625"),
     # 6 epochs of 3 updates: the decay acts every 16 updates
     (lambda: DBM(hidden_layer_sizes=(16, 8), weight_decay=1e6, n_iter=6),
      r"weight_decay=1e\+06 is far too strong for the step 0.204"),
     (lambda: GaussianRBM(weight_decay=1e6, n_iter=1), "weight_decay=1e\\+06 is far"),
     (lambda: RBMClassifier(weight_decay=1e6, n_iter=2), "weight_decay=1e\\+06 is far"),
     (lambda: RBMClassifier(generative_weight=1e6, n_iter=1),
      r"generative_weight=1e\+06 times the step 0.993 is the step of the generative "
      r"term's RBM, 9.93e\+05; keep generative_weight \* learning_rate well below 1"),
     (lambda: RBMClassifier(unlabelled_weight=1e6, unlabelled_marker=-1, n_iter=1),
      r"unlabelled_weight=1e\+06 times the step 0.993 "),
     (lambda: RBMClassifier(n_components=16, learning_rate=1e6, n_iter=1),
      r"The learning rate is probably too high \(learning_rate=1e\+06\)"),
     (lambda: DBM(hidden_layer_sizes=(16, 8), learning_rate=1e4, n_iter=1),
      r"learning rate is probably too high \(learning_rate=10000\)")],
    ids=["RBM-decay", "DBM-decay", "GaussianRBM-decay", "RBMClassifier-decay",
         "generative-weight", "unlabelled-weight", "learning-rate", "DBM-learning-rate"],
)
def test_divergence_hints_blame_the_setting_at_fault(digits, make, message):
    # A huge weight decay or generative weight was blamed on the learning rate.
    X = digits[:300]
    estimator = make().set_params(random_state=0)
    y = np.arange(300) % 10
    if getattr(estimator, "unlabelled_marker", None) == -1:
        y = np.where(np.arange(300) % 3 == 0, y, -1)
    if isinstance(estimator, GaussianRBM):  # the varying pixels, standardised
        X = X[:, X.std(axis=0) > 0]
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    args = (X, y) if isinstance(estimator, RBMClassifier) else (X,)
    with np.errstate(all="ignore"), pytest.raises(TrainingDivergedError, match=message):
        estimator.fit(*args)


def test_a_learning_rate_auto_hint_shows_the_step_it_resolved_to(digits):
    # It printed learning_rate=auto, not the step that diverged.
    y = np.arange(300) % 10
    clf = RBMClassifier(n_components=16, n_iter=1, random_state=0)

    def huge_step(self, state, learning=None):
        return 1e6

    with np.errstate(all="ignore"), pytest.raises(
            TrainingDivergedError,
            match=r"too high \(learning_rate='auto', a step of 1e\+06 here\)"):
        type(clf)._learning_rate_of, saved = huge_step, type(clf)._learning_rate_of
        try:
            clf.fit(digits[:300], y)
        finally:
            type(clf)._learning_rate_of = saved


def test_small_partial_fit_calls_are_checked_together(digits):
    # Checked once their rows reach PARTIAL_FIT_CHECK_ROWS, against the model the run
    # started from: the error names the earlier calls, whose updates stay applied.
    rbm = RBM(n_components=16, batch_size=10, random_state=0)
    for start in range(0, 600, 200):
        rbm.partial_fit(digits[start : start + 200])
    rbm.set_params(learning_rate=1000)
    n_calls = 0
    with pytest.raises(TrainingDivergedError, match="partial_fit calls since the last check"):
        for start in range(600, 600 + PARTIAL_FIT_CHECK_ROWS, 10):
            n_calls += 1
            rbm.partial_fit(digits[start : start + 10])
    assert n_calls == -(-PARTIAL_FIT_CHECK_ROWS // 10)  # the first call reaching them
    assert rbm.n_iter_ == 3 + n_calls - 1  # only the failing call is rolled back


def test_a_run_of_small_calls_is_checked_with_the_mean_field_steps(digits, monkeypatch):
    # One call on one minibatch makes too few updates to pay for the steps; the run of
    # calls a check covers makes enough (here 26 updates of 10 rows).
    steps = []
    bound = divergence.likelihood_upper_bound

    def recording(view, rows, chains=None, mean_field_steps=MEAN_FIELD_STEPS, *entropy):
        steps.append(mean_field_steps)
        return bound(view, rows, chains, mean_field_steps, *entropy)

    rbm = RBM(n_components=8, batch_size=10, random_state=0).partial_fit(digits[:10])
    monkeypatch.setattr(divergence, "likelihood_upper_bound", recording)
    for start in range(10, 10 + PARTIAL_FIT_CHECK_ROWS, 10):
        rbm.partial_fit(digits[start : start + 10])
    assert steps and set(steps) == {MEAN_FIELD_STEPS}
