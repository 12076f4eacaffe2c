"""RBM against exact enumeration, and its behaviour as a scikit-learn estimator."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from _oracles import (
    all_states,
    grbm_exact_samples,
    random_grbm,
    random_rbm,
    rbm_hidden_log_probabilities,
    rbm_joint_log_weights,
    rbm_log_partition,
    rbm_visible_log_probabilities,
    state_index,
    total_variation,
)
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler

from skboltz import RBM
from skboltz.utils._energy import RATE_CLIP
from skboltz.models._gaussian_rbm_energy import AugmentedGaussianRBM
from skboltz.models._rbm_energy import AugmentedRBM
from skboltz.exceptions import (
    DataRangeWarning,
    TooManyStatesError,
    TrainingDivergedError,
)
from skboltz.learning import CD, PCD, ParallelTempering
from skboltz.learning._base import steps_at
from skboltz.views import GaussianRBMView


def rbm_with_parameters(weights, visible_bias, hidden_bias, **params):
    """An RBM fitted on dummy data, then given the parameters by hand."""
    n_hidden, n_visible = weights.shape
    rng = np.random.default_rng(0)
    rbm = RBM(n_components=n_hidden, n_iter=1, random_state=0, **params)
    rbm.fit(rng.random((20, n_visible)))
    rbm.components_ = np.array(weights)
    rbm.intercept_visible_ = np.array(visible_bias)
    rbm.intercept_hidden_ = np.array(hidden_bias)
    return rbm


def exact_samples(log_probabilities, n_visible, n_samples, seed):
    rng = np.random.default_rng(seed)
    index = rng.choice(len(log_probabilities), size=n_samples, p=np.exp(log_probabilities))
    return all_states(n_visible)[index]


@pytest.fixture(scope="module")
def digits():
    return load_digits().data / 16


# -- exact answers ------------------------------------------------------------------
@pytest.mark.parametrize("n_visible, n_hidden", [(5, 3), (3, 6), (6, 6)])
@pytest.mark.parametrize("scale", [0.3, 2.0])
def test_log_probabilities_match_enumeration(n_visible, n_hidden, scale):
    """exp(score_samples) sums to 1 and equals brute force, whichever layer is enumerated."""
    params = random_rbm(n_visible, n_hidden, scale, seed=n_visible * 10 + n_hidden)
    rbm = rbm_with_parameters(*params)
    V = all_states(n_visible)
    log_p = rbm.score_samples(V)
    assert_allclose(np.exp(log_p).sum(), 1.0, rtol=1e-10)
    assert_allclose(log_p, rbm_visible_log_probabilities(*params), atol=1e-10)
    assert_allclose(rbm.estimate_log_partition().value, rbm_log_partition(*params), atol=1e-10)


def test_free_energy_is_brute_force_marginalisation():
    weights, visible_bias, hidden_bias = random_rbm(4, 5, 1.0, seed=3)
    rbm = rbm_with_parameters(weights, visible_bias, hidden_bias)
    V = all_states(4)
    H = all_states(5)
    joint = V @ weights.T @ H.T + (V @ visible_bias)[:, None] + (H @ hidden_bias)[None, :]
    brute_force = -np.log(np.exp(joint).sum(axis=1))
    assert_allclose(rbm.free_energy(V), brute_force, atol=1e-10)


def model_expectation(weights, visible_bias, hidden_bias):
    """Exact E_p[P(h|v) v^T] in the augmented layout of AugmentedRBM.statistics."""
    V = all_states(weights.shape[1])
    p = np.exp(rbm_visible_log_probabilities(weights, visible_bias, hidden_bias))
    H = 1 / (1 + np.exp(-(V @ weights.T + hidden_bias)))
    V1 = np.hstack([V, np.ones((len(V), 1))])
    H1 = np.hstack([H, np.ones((len(V), 1))])
    return (H1 * p[:, None]).T @ V1


def mean_field_expectation(weights, visible_bias, hidden_bias):
    """Exact expectation of the ``negative_visible="mean"`` statistics at equilibrium.

    The chains' hidden states h follow the model's marginal p(h); each gives the
    visible mean m = P(v = 1 | h) and the hidden probabilities P(h = 1 | m):
    sum over h of p(h) [P(h | m); 1] [m; 1]^T, in the augmented layout.
    """
    H = all_states(weights.shape[0])
    p = np.exp(rbm_hidden_log_probabilities(weights, visible_bias, hidden_bias))
    M = 1 / (1 + np.exp(-(H @ weights + visible_bias)))
    H_of_M = 1 / (1 + np.exp(-(M @ weights.T + hidden_bias)))
    M1 = np.hstack([M, np.ones((len(H), 1))])
    H1 = np.hstack([H_of_M, np.ones((len(H), 1))])
    return (H1 * p[:, None]).T @ M1


STRATEGIES = [
    strategy(**settings, negative_visible=negative_visible)
    for negative_visible in ("sample", "mean")
    for strategy, settings in [(CD, {}), (CD, {"n_steps": 3}), (PCD, {}),
                               (ParallelTempering, {"n_temperatures": 4})]
]


@pytest.mark.parametrize("strategy", STRATEGIES, ids=repr)
def test_negative_phase_matches_exact_expectation(strategy):
    """Each sampler, fed (or burnt in to) the model distribution, gives its statistics:
    the model's expectations with visible samples, their mean-field counterpart (also
    by enumeration) with visible means. The two differ by 4 times the tolerance."""
    params = random_rbm(4, 3, 2.0, seed=2)
    exact = (model_expectation if strategy.negative_visible == "sample"
             else mean_field_expectation)(*params)
    assert np.abs(model_expectation(*params) - mean_field_expectation(*params)).max() > 0.08
    log_p = rbm_visible_log_probabilities(*params)
    data = exact_samples(log_p, 4, 6000, seed=1)
    model = AugmentedRBM(
        np.block([[params[0], params[2][:, None]], [params[1][None, :], np.zeros((1, 1))]])
    )
    rng = np.random.default_rng(0)
    positive = model.augment(data)
    state = strategy.init_state(model.view(), data, 6000, rng)
    rounds = [strategy._negative_statistics(model, positive, state, rng, 1.0)
              for _ in range(30)]
    estimate = np.mean(rounds[10:], axis=0)
    assert_allclose(estimate, exact, atol=0.02)


@pytest.mark.parametrize(
    "strategy",
    [PCD(n_steps=2, negative_visible="sample"), PCD(negative_visible="mean"),
     PCD(n_steps=2, negative_visible="mean"),
     ParallelTempering(n_temperatures=5, negative_visible="sample"),
     ParallelTempering(n_temperatures=5, negative_visible="mean")],
    ids=repr,
)
def test_persistent_chains_reach_exact_distribution(strategy):
    """Total variation between the persistent (beta = 1) chains and p(v) is small: with
    visible means in the statistics too, the chains keep sampling the model. (PCD-1
    chains that drew their hidden states from the means instead came out at 0.11.)"""
    params = random_rbm(4, 3, 2.0, seed=8)  # strongly coupled: far from independent units
    log_p = rbm_visible_log_probabilities(*params)
    model = AugmentedRBM(
        np.block([[params[0], params[2][:, None]], [params[1][None, :], np.zeros((1, 1))]])
    )
    rng = np.random.default_rng(2)
    start = np.zeros((50, 4))  # a bad start: the chains must mix away from it
    state = strategy.init_state(model.view(), start, 5000, rng)
    for _ in range(40):
        strategy._negative_statistics(model, model.augment(start), state, rng, 1.0)
    cold = state["chains"][:5000, :-1]
    assert total_variation(cold, log_p) < 0.04
    # the bound is tight enough to catch a sampler that ignores the couplings
    independent = (rng.random((5000, 4)) < np.exp(log_p) @ all_states(4)).astype(float)
    assert total_variation(independent, log_p) > 0.12


def run_negative_phases(strategy, model, data, n_updates):
    """Negative statistics of ``n_updates`` updates of ``strategy`` on a fixed model,
    from a fixed random stream, and the strategy's state after them."""
    rng = np.random.default_rng(1)
    state = strategy.init_state(model.view(), data, len(data), rng)
    statistics = [strategy._negative_statistics(model, model.augment(data), state, rng, 1.0)
                  for _ in range(n_updates)]
    return state, statistics


def binary_training_form():
    params = random_rbm(5, 4, 1.5, seed=3)
    data = (np.random.default_rng(0).random((20, 5)) < 0.5).astype(float)
    return AugmentedRBM(np.block([[params[0], params[2][:, None]],
                                  [params[1][None, :], np.zeros((1, 1))]])), data


def gaussian_training_form():
    params = random_grbm(3, 3, 1.2, seed=6)
    data, _ = grbm_exact_samples(*params, n_samples=20, seed=1)
    return AugmentedGaussianRBM.from_view(GaussianRBMView(*params)), data


@pytest.mark.parametrize("strategy", [PCD, ParallelTempering])
def test_visible_means_leave_the_chains_draws_unchanged(strategy):
    """The means enter the statistics only: given the same parameters and random
    stream, the chains make exactly the draws they make with visible samples."""
    model, data = binary_training_form()
    sampled, sample_statistics = run_negative_phases(
        strategy(negative_visible="sample"), model, data, 5)
    meaned, mean_statistics = run_negative_phases(
        strategy(negative_visible="mean"), model, data, 5)
    assert_array_equal(meaned["chains"], sampled["chains"])
    assert set(np.unique(meaned["chains"])) == {0.0, 1.0}
    assert not np.allclose(mean_statistics[-1], sample_statistics[-1])


@pytest.mark.parametrize("strategy", [CD, PCD, ParallelTempering])
@pytest.mark.parametrize("units, auto_is", [("binary", "mean"), ("gaussian", "sample")])
def test_auto_negative_visible_follows_the_units(strategy, units, auto_is):
    """"auto": the means for binary visible units (better features), the draws for
    Gaussian ones (the means gave lower held-out densities)."""
    model, data = (binary_training_form if units == "binary" else gaussian_training_form)()
    statistics = {option: run_negative_phases(strategy(negative_visible=option), model,
                                              data, 1)[1][0]
                  for option in ("auto", "mean", "sample")}
    other = "sample" if auto_is == "mean" else "mean"
    assert_array_equal(statistics["auto"], statistics[auto_is])
    assert not np.allclose(statistics["auto"], statistics[other])


def test_sample_matches_exact_distribution():
    params = random_rbm(4, 3, 1.5, seed=5)
    rbm = rbm_with_parameters(*params)
    samples = rbm.sample(4000, random_state=0, n_steps=50)
    assert total_variation(samples, rbm_visible_log_probabilities(*params)) < 0.04
    assert_array_equal(samples, rbm.sample(4000, random_state=0, n_steps=50))


def test_gibbs_step_leaves_distribution_invariant():
    params = random_rbm(4, 3, 1.5, seed=9)
    log_p = rbm_visible_log_probabilities(*params)
    rbm = rbm_with_parameters(*params)
    start = exact_samples(log_p, 4, 8000, seed=4)
    after = rbm.gibbs(start, random_state=1)
    assert total_variation(after, log_p) < 0.03
    assert not np.array_equal(after, start)


# -- scoring is deterministic and row-wise ------------------------------------------
def test_score_samples_deterministic_and_rowwise(digits):
    X = digits[:300]
    rbm = RBM(n_components=12, n_iter=2, random_state=0).fit(X)
    scores = rbm.score_samples(X)
    assert_array_equal(scores, rbm.score_samples(X))
    order = np.random.default_rng(0).permutation(len(X))
    assert_allclose(rbm.score_samples(X[order]), scores[order], rtol=1e-12)
    assert_allclose(rbm.score_samples(X[17:41]), scores[17:41], rtol=1e-12)
    assert rbm.score(X) == pytest.approx(scores.mean())


def test_log_z_cache_follows_parameter_edits():
    params = random_rbm(4, 3, 1.0, seed=1)
    rbm = rbm_with_parameters(*params)
    first = rbm.estimate_log_partition().value
    rbm.components_ = rbm.components_ * 2
    assert rbm.estimate_log_partition().value != first
    assert_allclose(rbm.estimate_log_partition().value,
                    rbm_log_partition(params[0] * 2, params[1], params[2]))


# -- training -----------------------------------------------------------------------
def test_training_raises_likelihood(digits):
    X = (digits > 0.5).astype(float)
    untrained = RBM(n_components=10, n_iter=1, learning_rate=1e-6, random_state=0).fit(X)
    trained = RBM(n_components=10, n_iter=10, learning_rate=0.02, random_state=0).fit(X)
    assert trained.score(X) > untrained.score(X) + 2.0


def test_float32_is_kept(digits):
    X64 = digits[:400]
    rbm32 = RBM(n_components=8, n_iter=3, random_state=0).fit(X64.astype(np.float32))
    rbm64 = RBM(n_components=8, n_iter=3, random_state=0).fit(X64)
    assert rbm32.components_.dtype == np.float32
    assert rbm32.transform(X64.astype(np.float32)).dtype == np.float32
    assert rbm64.components_.dtype == np.float64


@pytest.mark.parametrize("learning", ["pcd", "cd", "pt", PCD(negative_visible="sample"),
                                      CD(negative_visible="sample")], ids=repr)
def test_float32_and_float64_fits_agree_to_float32_precision(digits, learning):
    # Same rows, same random_state: both dtypes draw the same float32 random numbers,
    # so their sampled states agree and the fits differ by float32 rounding only
    # (before float32 noise, by up to 8 % in transform). scikit-learn's BernoulliRBM
    # has the same check (100 digits, 16 units, batch 5, 5 epochs).
    X64 = digits[:100]
    X32 = X64.astype(np.float32)
    settings = dict(n_components=16, batch_size=5, n_iter=5, learning=learning,
                    random_state=42)
    rbm64, rbm32 = RBM(**settings).fit(X64), RBM(**settings).fit(X32)
    assert_allclose(rbm32.transform(X32), rbm64.transform(X64), rtol=1e-6, atol=0)
    assert_allclose(rbm32.intercept_hidden_, rbm64.intercept_hidden_, rtol=1e-5, atol=1e-7)
    assert_allclose(rbm32.intercept_visible_, rbm64.intercept_visible_, rtol=1e-5, atol=1e-7)
    assert_allclose(rbm32.components_, rbm64.components_, rtol=1e-3, atol=1e-6)
    if rbm64.learning_.name != "cd":  # the persistent chains made the same draws
        assert_array_equal(rbm32._training_state.sampler["chains"],
                           rbm64._training_state.sampler["chains"])


def test_partial_fit_continues_exactly_like_fit(digits):
    X = digits[:200]
    fitted = RBM(n_components=6, n_iter=3, random_state=0).fit(X)
    stepped = RBM(n_components=6, n_iter=3, random_state=0)
    for _ in range(3):
        assert stepped.partial_fit(X) is stepped
    assert stepped.n_iter_ == fitted.n_iter_ == 3
    assert_array_equal(stepped.components_, fitted.components_)
    assert_array_equal(stepped.intercept_visible_, fitted.intercept_visible_)


def test_refit_is_reproducible_and_forgets_previous_fit(digits):
    X = digits[:200]
    rbm = RBM(n_components=6, n_iter=2, random_state=0).fit(X)
    first = rbm.components_.copy()
    rbm.partial_fit(X)
    rbm.fit(X)
    assert_array_equal(rbm.components_, first)
    assert rbm.n_iter_ == 2 and len(rbm.history_["epoch"]) == 2


def test_history_records_each_epoch(digits):
    rbm = RBM(n_components=6, n_iter=4, random_state=0).fit(digits[:200])
    history = rbm.history_
    assert history["epoch"] == [1, 2, 3, 4]
    assert all(t > 0 for t in history["time"])
    assert all(0 < e < 0.25 for e in history["reconstruction_error"])


def test_user_strategy_object_is_cloned_not_mutated(digits):
    strategy = PCD(n_chains=5)
    rbm = RBM(n_components=4, learning=strategy, n_iter=1, random_state=0).fit(digits[:50])
    assert rbm.learning_ is not strategy
    assert rbm.learning_.get_params() == strategy.get_params()
    assert strategy.get_params() == {"n_steps": 1, "n_chains": 5, "negative_visible": "auto"}


def test_steps_schedule_grows_from_start_to_stop():
    assert [steps_at((1, 9), p) for p in (0.0, 0.5, 1.0)] == [1, 5, 9]
    assert steps_at(3, 0.7) == 3
    with pytest.raises(ValueError, match="n_steps"):
        RBM(learning=CD(n_steps=(0, 2)), n_iter=1).fit(np.zeros((5, 3)))


def test_sparse_input_trains_like_dense(digits):
    X = (digits[:150] > 0.5).astype(float)
    dense = RBM(n_components=5, n_iter=2, random_state=0).fit(X)
    sparse = RBM(n_components=5, n_iter=2, random_state=0).fit(sp.csr_matrix(X))
    assert_allclose(sparse.components_, dense.components_, atol=1e-10)
    assert_allclose(sparse.score_samples(sp.csr_matrix(X)), dense.score_samples(X))


# -- bad input and failure --------------------------------------------------------
def test_out_of_range_values_warn_with_a_fix():
    with pytest.warns(DataRangeWarning, match="MinMaxScaler"):
        RBM(n_components=2, n_iter=1).fit(np.array([[0.0, 2.0], [1.0, 0.5]]))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input_is_rejected(bad):
    X = np.zeros((4, 3))
    X[1, 2] = bad
    if np.isnan(bad):  # a missing entry is taken (test_missing.py); a column never observed is not
        X[:, 2] = bad
    with pytest.raises(ValueError, match="(NaN|infinity)"):
        RBM(n_components=2, n_iter=1).fit(X)


def test_wrong_number_of_features_after_fit(digits):
    rbm = RBM(n_components=3, n_iter=1).fit(digits[:20])
    with pytest.raises(ValueError, match="features"):
        rbm.transform(digits[:5, :10])


def test_exact_refuses_large_models_and_names_alternatives():
    rbm = RBM(n_components=30, n_iter=1, z_estimator="exact", random_state=0)
    rbm.fit(np.random.default_rng(0).random((40, 30)))
    with pytest.raises(TooManyStatesError, match="ais"):
        rbm.score(np.zeros((2, 30)))


def test_divergence_raises_and_leaves_model_untouched(digits):
    rbm = RBM(n_components=4, n_iter=2, random_state=0).fit(digits[:100])
    before = (rbm.components_.copy(), rbm.n_iter_, rbm.score(digits[:100]))
    rbm.set_params(learning_rate=1e30)
    with pytest.raises(TrainingDivergedError, match="learning rate"):
        rbm.partial_fit(digits[:100])
    assert_array_equal(rbm.components_, before[0])
    assert rbm.n_iter_ == before[1]
    assert rbm.score(digits[:100]) == before[2]
    with pytest.raises(TrainingDivergedError):
        RBM(n_components=4, n_iter=2, learning_rate=1e30).fit(digits[:100])


class _InterruptedPCD(PCD):
    """PCD that raises KeyboardInterrupt at its ``fail_at``-th update (counted globally)."""

    updates = 0
    fail_at = None

    def _fused_sampler(self, model, state, noise, progress):
        sampler = super()._fused_sampler(model, state, noise, progress)
        sample = sampler.sample

        def interrupted(positive, out, positive_input=None):
            type(self).updates += 1
            if type(self).updates == type(self).fail_at:
                raise KeyboardInterrupt
            sample(positive, out, positive_input)

        sampler.sample = interrupted
        return sampler


@pytest.mark.parametrize("average_window", [100, None])
def test_interrupted_partial_fit_leaves_the_training_state_as_it_was(digits, average_window):
    # partial_fit shares the random generators, noise streams and history with the
    # previous state and check-points them instead of copying: an interrupted call
    # must put them back, so that training then continues exactly as if the call had
    # never happened.
    X = digits[:200]
    settings = dict(n_components=6, batch_size=10, learning=_InterruptedPCD(), n_iter=1,
                    average_window=average_window, random_state=0)
    _InterruptedPCD.fail_at = None
    reference = RBM(**settings).fit(X).partial_fit(X)
    interrupted = RBM(**settings).fit(X)
    history = interrupted.history_
    _InterruptedPCD.updates, _InterruptedPCD.fail_at = 0, 7  # mid-epoch
    with pytest.raises(KeyboardInterrupt):
        interrupted.partial_fit(X)
    assert interrupted.history_ == history and interrupted.n_iter_ == 1
    _InterruptedPCD.fail_at = None
    interrupted.partial_fit(X)
    assert_array_equal(interrupted.components_, reference.components_)
    assert_array_equal(interrupted.intercept_visible_, reference.intercept_visible_)
    untimed = [{k: v for k, v in model.history_.items() if k != "time"}
               for model in (interrupted, reference)]
    assert untimed[0] == untimed[1]
    reference.partial_fit(X)
    interrupted.partial_fit(X)
    assert_array_equal(interrupted.components_, reference.components_)


# -- scikit-learn workflows ---------------------------------------------------------
def test_pickle_round_trip_keeps_scores_and_training(digits):
    rbm = RBM(n_components=5, n_iter=2, random_state=0).fit(digits[:100])
    restored = pickle.loads(pickle.dumps(rbm))
    assert_array_equal(restored.score_samples(digits[:30]), rbm.score_samples(digits[:30]))
    rbm.partial_fit(digits[:100])
    restored.partial_fit(digits[:100])
    assert_array_equal(restored.components_, rbm.components_)


def test_grid_search_in_a_pipeline_uses_log_likelihood(digits):
    """GridSearchCV over strategies and their settings with the default scorer."""
    X = load_digits().data[:600]
    pipeline = Pipeline([("scale", MinMaxScaler()),
                         ("rbm", RBM(n_iter=2, batch_size=20, random_state=0))])
    grid = {
        "rbm__learning": [CD(), PCD()],
        "rbm__learning__n_steps": [1, 2],
        "rbm__n_components": [4, 8],
        "rbm__learning_rate": [0.01, 0.05],
    }
    search = GridSearchCV(pipeline, grid, cv=KFold(3)).fit(X)
    assert len(search.cv_results_["params"]) == 16
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores)) and np.all(scores < 0)
    # the default scorer is the held-out mean log-likelihood
    best = clone(pipeline).set_params(**search.best_params_)
    manual = cross_val_score(best, X, cv=KFold(3))
    assert_allclose(manual.mean(), search.best_score_)
    assert search.best_estimator_.named_steps["rbm"].learning_.n_steps == (
        search.best_params_["rbm__learning__n_steps"]
    )


def test_state_index_oracle_is_consistent():
    states = all_states(3)
    assert_array_equal(state_index(states), np.arange(8))


def test_same_random_state_gives_identical_models_and_samples(digits):
    first = RBM(n_components=5, learning="pt", n_iter=2, random_state=3).fit(digits[:150])
    second = RBM(n_components=5, learning="pt", n_iter=2, random_state=3).fit(digits[:150])
    assert_array_equal(first.components_, second.components_)
    assert_array_equal(first.sample(20, n_steps=5), second.sample(20, n_steps=5))
    other = RBM(n_components=5, learning="pt", n_iter=2, random_state=4).fit(digits[:150])
    assert not np.array_equal(first.components_, other.components_)


# -- iterate averaging --------------------------------------------------------------
def _augmented(rbm):
    return np.vstack([
        np.column_stack([rbm.components_, rbm.intercept_hidden_]),
        np.append(rbm.intercept_visible_, 0.0),
    ])


def test_averaging_publishes_the_moving_average_of_unchanged_iterates(digits):
    """The published parameters are the documented average of the plain iterates.

    With batch_size 4, a partial_fit call on 64 rows is 16 updates: one averaging
    step, taken after the call's last update.
    """
    X = digits[:64]
    window = 48
    plain = RBM(n_components=5, batch_size=4, average_window=None, random_state=0)
    averaged = RBM(n_components=5, batch_size=4, average_window=window, random_state=0)
    average = _augmented(clone(plain).set_params(n_iter=0).fit(X))
    n_averaged = 1  # the initial parameters count as one update
    for _ in range(6):
        plain.partial_fit(X)
        averaged.partial_fit(X)
        n_averaged += 16
        step = 16 / min(n_averaged, window)  # the mean first, then exponential
        average += step * (_augmented(plain) - average)
        assert_allclose(_augmented(averaged), average, rtol=1e-12, atol=1e-12)
    # the iterates themselves are untouched by the averaging
    iterate = averaged._training_state.iterate
    assert_array_equal(iterate[:-1, :-1], plain.components_)
    assert not np.allclose(averaged.components_, plain.components_)


def test_averaging_takes_in_epochs_shorter_than_the_averaging_interval(digits):
    X = digits[:50]  # 5 updates of batch 10
    plain = RBM(n_components=3, n_iter=1, average_window=None, random_state=0).fit(X)
    averaged = clone(plain).set_params(average_window=100).fit(X)
    initial = _augmented(clone(plain).set_params(n_iter=0).fit(X))
    # the start and 5 updates: the iterate stands for 5 of the 6
    expected = initial + 5 / 6 * (_augmented(plain) - initial)
    assert_allclose(_augmented(averaged), expected, rtol=1e-12, atol=1e-12)


def test_averaging_continues_from_hand_edited_parameters(digits):
    rbm = RBM(n_components=4, n_iter=3, random_state=0).fit(digits[:200])
    edited = rbm.components_ + 5.0
    rbm.components_ = edited.copy()
    rbm.set_params(learning_rate=1e-9).partial_fit(digits[:200])  # 20 updates
    # Training restarted from the edit (only the old momentum still moves it a
    # little); averaging towards the old iterate would have moved it by >= 0.8.
    assert_allclose(rbm.components_, edited, atol=0.05)


def test_averaging_gives_a_better_steadier_model():
    """Held-out exact log-likelihood over epochs 15-20 on the binarized digits.

    Plain PCD iterates (visible samples, BernoulliRBM's algorithm) swing by 1-2 nats
    from epoch to epoch (seed 0: mean -21.1, drops summing to 2.3 nats); their average
    improves steadily (mean -19.7, drops 0.03). (The default CD-1 with visible means
    makes steadier updates: averaging gained 0.1-0.2 nats there.)
    """
    X = (load_digits().data / 16 > 0.5).astype(float)
    train, test = X[:1200], X[1200:]
    curves = {}
    for window in (None, 100):
        # the step that swings (binary rows' automatic step is 0.02, which swings less)
        rbm = RBM(n_components=12, n_iter=15, average_window=window, weight_decay=1e-4,
                  learning_rate=0.1, learning=PCD(negative_visible="sample"),
                  random_state=0)
        curve = [rbm.fit(train).score(test)]
        for _ in range(5):
            curve.append(rbm.partial_fit(train).score(test))
        curves[window] = np.array(curve)
    drops = {w: -np.minimum(np.diff(c), 0).sum() for w, c in curves.items()}
    assert curves[100].mean() > curves[None].mean() + 0.5
    assert drops[100] < drops[None] / 4


class _Recording:
    """Records, per update of the fused loop, the parameters, minibatch and negative
    rows, and what the negative rows came from: the persistent chains' hidden states
    (PCD), or the minibatch's hidden inputs (CD, which draws its hidden states from
    them)."""

    records = []

    def _fused_sampler(self, model, state, noise, progress):
        sampler = super()._fused_sampler(model, state, noise, progress)
        sample = sampler.sample

        def recording(positive, out, positive_input=None):
            if positive_input is not None:
                source = positive_input[:, :-1].copy()
            else:
                source = state["hidden"][:, :-1].copy()
            sample(positive, out, positive_input)
            negative = out[: sampler.n_negative(positive.shape[0]), :-1].copy()
            self.records.append((model.params.copy(), positive[:, :-1].copy(), negative,
                                 source))

        sampler.sample = recording
        return sampler


class _RecordingPCD(_Recording, PCD):
    pass


class _RecordingCD(_Recording, CD):
    pass


@pytest.mark.parametrize(
    "momentum, weight_decay, average_window, learning",
    [(0.0, 0.0, None, "sample"), (0.5, 0.0, None, "sample"),
     ((0.2, 0.7), 0.0, None, "sample"), (0.5, 0.01, None, "sample"),
     (0.0, 0.01, 20, "sample"), ((0.2, 0.7), 0.01, 20, "sample"),
     (0.0, 0.0, None, "mean"), ((0.2, 0.7), 0.01, 20, "mean"),
     (0.0, 0.0, None, "cd sample"), ((0.2, 0.7), 0.01, 20, "cd mean")],
)
def test_sampling_updates_are_the_textbook_formula_with_momentum(momentum, weight_decay,
                                                            average_window, learning):
    # The stacked-row loop folds learning_rate, momentum, the row counts and both phases
    # into one product; check each update against the textbook formula written out
    # here: step = <h v^T>_data - <h v^T>_negative for W, likewise b and c, with
    # h = P(h | v), and velocity = m * velocity + (1 - m) * lr * step (BernoulliRBM's
    # update when m is 0); a pair switches momentum after 5 epochs. Every
    # DECAY_INTERVAL = 16 updates the velocity takes 16 updates' worth of weight decay,
    # velocity_W -= 16 (1 - m) lr decay W. With averaging, the published parameters are
    # the running average of the iterates, moved 16 updates after its last move (its
    # own counter, not the decay's) and at each epoch's end, by weight
    # n / min(n_averaged, average_window) for the n updates since the last move
    # (n_averaged counting the start as one). The loop computes the hidden probabilities'
    # elementwise part in float32 for float64 models too (SIGMOID_DTYPE): a relative
    # rounding of ~6e-8 per probability, hence the tolerances (a wrong term of the
    # formula, e.g. the decay's sign, is off by orders of magnitude more). With
    # negative_visible="mean" the negative rows are P(v = 1 | h) of the chains' hidden
    # states h, and the formula is the same with them in place of visible states. CD
    # (chains of 5 rows, the minibatches') draws its first hidden states from the
    # minibatch's hidden inputs, which the loop computes first for it.
    tolerance = dict(rtol=1e-6, atol=1e-7)
    _Recording.records = []
    negative_visible = learning.rpartition(" ")[2]
    if learning.startswith("cd"):
        strategy, n_negative = _RecordingCD(negative_visible=negative_visible), (5, 5, 3)
    else:
        strategy, n_negative = _RecordingPCD(n_chains=6,
                                             negative_visible=negative_visible), (6, 6, 6)
    rng = np.random.default_rng(3)
    X = rng.random((13, 5))  # 2 minibatches of 5 and one of 3 per epoch
    lr, n_iter, per_epoch = 0.4, 11, 3  # 33 updates: weight decay at 16 and 32
    rbm = RBM(n_components=4, batch_size=5, learning=strategy,
              n_iter=n_iter, learning_rate=lr, momentum=momentum,
              weight_decay=weight_decay, average_window=average_window,
              random_state=0).fit(X)
    records = _Recording.records
    assert len(records) == n_iter * per_epoch
    initial, final = momentum if isinstance(momentum, tuple) else (momentum, momentum)
    velocity = np.zeros_like(records[0][0])
    average, n_averaged, since_average = records[0][0].copy(), 1, 0

    def move_average(iterate):
        nonlocal n_averaged, since_average
        if since_average:
            n_averaged += since_average
            weight = min(1.0, since_average / min(n_averaged, average_window))
            average[...] += weight * (iterate - average)
            since_average = 0

    for t, (params, positive, negative, source) in enumerate(records):
        m = initial if t // per_epoch < 5 else final
        W, b, c = params[:-1, :-1], params[-1, :-1], params[:-1, -1]
        assert negative.shape == (n_negative[t % per_epoch], 5)
        if negative_visible == "sample":
            assert set(np.unique(negative)) <= {0.0, 1.0}
        elif learning.startswith("cd"):
            assert np.all((negative > 0) & (negative < 1))
        else:
            assert_allclose(negative, 1 / (1 + np.exp(-(source @ W + b))), rtol=1e-12)
        if learning.startswith("cd"):  # the minibatch's hidden inputs
            assert_allclose(source, positive @ W.T + c, rtol=1e-12)

        def hidden(v):
            return 1 / (1 + np.exp(-(v @ W.T + c)))

        hp, hn = hidden(positive), hidden(negative)
        step = np.zeros_like(params)
        step[:-1, :-1] = hp.T @ positive / len(positive) - hn.T @ negative / len(negative)
        step[-1, :-1] = positive.mean(axis=0) - negative.mean(axis=0)
        step[:-1, -1] = hp.mean(axis=0) - hn.mean(axis=0)
        velocity = m * velocity + (1 - m) * lr * step
        if (t + 1) % 16 == 0:
            velocity[:-1, :-1] -= 16 * (1 - m) * lr * weight_decay * W
        expected = params + velocity
        since_average += 1
        if average_window is not None and (since_average == 16 or (t + 1) % per_epoch == 0):
            move_average(expected)
        following = records[t + 1][0] if t + 1 < len(records) else None
        if following is None:
            following = rbm._training_state.iterate.copy()
            following[-1, -1] = params[-1, -1]
        assert_allclose(following, expected, **tolerance)
    published = expected if average_window is None else average
    assert_allclose(rbm.components_, published[:-1, :-1], **tolerance)
    assert_allclose(rbm.intercept_visible_, published[-1, :-1], **tolerance)
    assert_allclose(rbm.intercept_hidden_, published[:-1, -1], **tolerance)


def test_statistics_updates_are_the_gradient_formula_with_momentum_and_decay():
    # The plain loop (strategies returning statistics) follows the same rule as the
    # stacked-row loop, weight decay included: velocity = m * velocity + (1 - m) * lr *
    # gradient, and every DECAY_INTERVAL = 16 updates velocity_W -= 16 (1 - m) lr
    # weight_decay W. One full-batch update per epoch, and exact model expectations by
    # enumeration, so the whole run can be replayed here.
    X = (np.random.default_rng(4).random((12, 4)) < 0.4).astype(float)
    lr, m, decay, n_iter = 0.3, 0.5, 0.05, 20  # weight decay at update 16
    settings = dict(n_components=3, learning="exact", batch_size=12, learning_rate=lr,
                    momentum=m, weight_decay=decay, average_window=None, random_state=0)
    start = RBM(**settings, n_iter=0).fit(X)
    W, b, c = start.components_, start.intercept_visible_, start.intercept_hidden_
    V, H = all_states(4), all_states(3)
    velocity = [np.zeros_like(W), np.zeros_like(b), np.zeros_like(c)]
    for t in range(n_iter):
        joint = np.exp(rbm_joint_log_weights(W, b, c))
        joint /= joint.sum()
        hp = 1 / (1 + np.exp(-(X @ W.T + c)))
        gradient = [hp.T @ X / len(X) - H.T @ joint.T @ V,
                    X.mean(axis=0) - joint.sum(axis=1) @ V,
                    hp.mean(axis=0) - joint.sum(axis=0) @ H]
        velocity = [m * v + (1 - m) * lr * g for v, g in zip(velocity, gradient)]
        if (t + 1) % 16 == 0:
            velocity[0] -= 16 * (1 - m) * lr * decay * W
        W, b, c = W + velocity[0], b + velocity[1], c + velocity[2]
    rbm = RBM(**settings, n_iter=n_iter).fit(X)
    assert_allclose(rbm.components_, W, rtol=1e-10, atol=1e-12)
    assert_allclose(rbm.intercept_visible_, b, rtol=1e-10, atol=1e-12)
    assert_allclose(rbm.intercept_hidden_, c, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("visible_bias_init", ["data_rates", "zero"])
def test_visible_bias_init(visible_bias_init):
    # n_iter=0 publishes the starting parameters.
    X = np.random.default_rng(0).random((50, 6)) * np.linspace(0.1, 0.9, 6)
    X[:, 0] = 0  # a feature that is never on: its logit is clipped, not -inf
    rbm = RBM(n_components=3, n_iter=0, visible_bias_init=visible_bias_init,
              random_state=0).fit(X)
    if visible_bias_init == "zero":
        expected = np.zeros(6)
    else:
        rates = np.clip(X.mean(axis=0), RATE_CLIP, 1 - RATE_CLIP)
        expected = np.log(rates) - np.log1p(-rates)
        assert np.all(np.diff(expected[1:]) > 0)  # the logit follows the rates
    assert_allclose(rbm.intercept_visible_, expected, rtol=1e-12)
    assert_array_equal(rbm.intercept_hidden_, np.zeros(3))
    assert 0.005 < rbm.components_.std() < 0.015  # N(0, 0.01)
