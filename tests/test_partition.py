"""Partition-function estimators against exact enumeration, on small RBMs and BMs."""

import numpy as np
import pytest
from _bm_reference import random_bm
from scipy.special import logsumexp

from skboltz import RBM
from skboltz.utils._energy import binary_states
from skboltz.models._rbm_energy import RBMView
from skboltz.exceptions import MeanFieldConvergenceWarning
from skboltz.partition import (
    AIS,
    TAP,
    Z_ESTIMATORS,
    Exact,
    LogZ,
    MeanField,
    VisitedStates,
    beta_schedule,
    split_half_log_partition,
)
from skboltz.partition._mean_field import mean_field_fixed_point, mean_field_free_energy

SEEDS = [0, 1, 2]
SCALES = [0.3, 1.0]


def random_rbm(n_visible, n_hidden, scale, rng):
    return RBMView(
        rng.normal(0, scale, (n_hidden, n_visible)),
        rng.normal(0, scale, n_visible),
        rng.normal(0, scale, n_hidden),
    )


def brute_force_rbm_log_z(view):
    """log Z over all joint (v, h) states, from the joint energy."""
    V = binary_states(view.n_visible)
    H = binary_states(view.n_hidden)
    VV = np.repeat(V, H.shape[0], axis=0)
    HH = np.tile(H, (V.shape[0], 1))
    return logsumexp(-view.energy(VV, HH))


def models(seed, scale):
    rng = np.random.default_rng(seed)
    return [random_rbm(7, 5, scale, rng), random_bm(8, 5, scale, rng)]


# -- exact enumeration -------------------------------------------------------------
@pytest.mark.parametrize("n_units", [1, 2, 5, 9, 12])
@pytest.mark.parametrize("temperature", [1.0, 2.5])
@pytest.mark.parametrize("scale", [1.0, 400.0])
def test_split_half_matches_brute_force(n_units, temperature, scale):
    """Exact to ~1e-15 relative, also when couplings of hundreds push some sums of the
    exp-space matrix product below float64's range (recomputed in log space)."""
    view = random_bm(n_units, 1, scale, np.random.default_rng(n_units), temperature)
    expected = logsumexp(view.brute_force_log_weights())
    got = split_half_log_partition(view.coupling_matrix(), view.bias_vector(), 8)
    assert got == pytest.approx(expected, rel=1e-13, abs=1e-12)
    assert Exact().estimate(view).value == pytest.approx(expected, rel=1e-13, abs=1e-12)


@pytest.mark.parametrize("scale", [0.1, 1.0, 30.0, 1000.0])
@pytest.mark.parametrize("chunk_size", [4, 4096])
def test_exact_rbm_matches_free_energy_sum(scale, chunk_size):
    """The factorised enumeration (and its log-space fallback for inputs beyond 600)
    against a plain log-sum-exp of -F(v) over all visible states."""
    view = random_rbm(11, 13, scale, np.random.default_rng(int(scale * 10)))
    if scale == 30.0:  # Z dominated by states whose hidden inputs are all far negative
        weights = np.where(np.arange(11) < 6, scale, -scale) * np.ones((13, 1))
        view = RBMView(weights, np.where(np.arange(11) < 6, 0.0, 2 * scale), np.zeros(13))
    expected = logsumexp(-view.free_energy(binary_states(11)))
    got = Exact(chunk_size=chunk_size).estimate(view).value
    assert got == pytest.approx(expected, rel=1e-13, abs=1e-12)
    flipped = RBMView(view.weights.T, view.hidden_bias, view.visible_bias)  # enumerate h
    assert Exact(chunk_size=chunk_size).estimate(flipped).value == pytest.approx(
        expected, rel=1e-13, abs=1e-12)


@pytest.mark.parametrize("shape", [(3, 5), (6, 2)])
def test_exact_rbm_matches_joint_enumeration(shape):
    view = random_rbm(*shape, 1.0, np.random.default_rng(0))
    log_z = Exact(chunk_size=3).estimate(view)
    assert log_z.value == pytest.approx(brute_force_rbm_log_z(view), abs=1e-10)
    assert log_z.is_exact and log_z.std_error is None


def test_view_protocol_of_rbm_is_consistent():
    view = random_rbm(4, 3, 1.0, np.random.default_rng(1))
    coupling, bias = view.coupling_matrix(), view.bias_vector()
    assert np.allclose(coupling, coupling.T) and np.all(np.diag(coupling) == 0)
    # The RBM as a general BM over (v, h) has the same partition function.
    assert split_half_log_partition(coupling, bias) == pytest.approx(
        Exact().estimate(view).value, abs=1e-10
    )
    # interpolate(0) is the base model, whose log Z is base_log_partition.
    base_bias = view.base_bias_from_rates(np.array([0.1, 0.5, 0.0, 1.0]))
    base = view.interpolate(0.0, base_bias)
    assert Exact().estimate(base).value == pytest.approx(
        view.base_log_partition(base_bias), abs=1e-10
    )


# -- AIS ---------------------------------------------------------------------------
def test_beta_schedule():
    betas = beta_schedule(14501)
    assert betas[0] == 0 and betas[-1] == 1 and np.all(np.diff(betas) > 0)
    steps = np.diff(betas)
    assert steps[:500] == pytest.approx(1e-3) and steps[-10000:] == pytest.approx(1e-5)
    assert beta_schedule(2).tolist() == [0.0, 1.0]
    assert np.all(np.diff(beta_schedule(7)) > 0) and beta_schedule(7).size == 7


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("scale", SCALES)
def test_ais_within_three_standard_errors(seed, scale):
    rng = np.random.default_rng(100 + seed)
    for view in models(seed, scale):
        exact = Exact().estimate(view).value
        rates = rng.random(view.n_visible)
        log_z = AIS(n_chains=100, n_betas=800).estimate(view, rng=rng, data_rates=rates)
        assert 0 < log_z.std_error < 0.2
        assert abs(log_z.value - exact) <= 3 * log_z.std_error, (log_z, exact)
        assert log_z.lower == pytest.approx(log_z.value - 3 * log_z.std_error)
        assert log_z.cost["n_chains"] == 100 and log_z.cost["n_betas"] == 800


def test_ais_is_exact_on_the_base_model():
    """With no couplings and the base biases equal to the model's, every weight is 1."""
    rates = np.array([0.2, 0.7, 0.5])
    view = RBMView(np.zeros((2, 3)), np.log(rates / (1 - rates)), np.zeros(2))
    log_z = AIS(n_chains=10, n_betas=20).estimate(view, rng=0, data_rates=rates)
    assert log_z.value == pytest.approx(Exact().estimate(view).value, abs=1e-10)
    assert log_z.std_error == pytest.approx(0.0, abs=1e-10)


def test_ais_float32_view_agrees():
    view = random_rbm(6, 4, 0.5, np.random.default_rng(3))
    a = AIS(n_chains=20, n_betas=200).estimate(view, rng=1)
    b = AIS(n_chains=20, n_betas=200).estimate(view.astype(np.float32), rng=1)
    assert a.value == pytest.approx(b.value, abs=1e-4)


def test_reverse_ais_brackets_the_log_likelihood():
    """Mean RAISE estimate <= exact mean log-likelihood <= mean forward-AIS estimate,
    on average over seeds, and both close."""
    reverse_gap, forward_gap, forward_se = [], [], []
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        view = random_rbm(8, 4, 1.5, rng)
        # Data: exact samples of the model.
        V = binary_states(view.n_visible)
        log_p = -view.free_energy(V)
        log_z = logsumexp(log_p)
        X = V[rng.choice(V.shape[0], size=200, p=np.exp(log_p - log_z))]
        rates = X.mean(axis=0)
        exact_ll = np.mean(-view.free_energy(X)) - log_z
        ais = AIS(n_chains=30, n_betas=100)
        reverse = ais.reverse_log_likelihood(view, X, rng=rng, data_rates=rates)
        assert reverse.shape == (200,)
        log_z = ais.estimate(view, rng=rng, data_rates=rates)
        forward = np.mean(-view.free_energy(X)) - log_z.value
        reverse_gap.append(np.mean(reverse) - exact_ll)
        forward_gap.append(forward - exact_ll)
        forward_se.append(log_z.std_error)
    # The forward estimate is above the truth on average, by less than its noise here:
    # at most 3 standard errors of the mean below it.
    assert np.mean(reverse_gap) <= 0
    assert np.mean(forward_gap) >= -3 * np.sqrt(np.sum(np.square(forward_se))) / len(SEEDS)
    assert np.mean(reverse_gap) > -1.0 and np.mean(forward_gap) < 1.0


def test_reverse_ais_is_unbiased_in_probability():
    """E[p_hat(x)] = p(x) when the transitions sample their distribution exactly
    (an independent model: one block-Gibbs step is an exact sample)."""
    rates = np.array([0.2, 0.9])
    view = RBMView(np.zeros((1, 2)), np.array([1.0, -0.5]), np.zeros(1))
    X = np.array([[1.0, 0.0]] * 20000)
    ll = AIS(n_betas=2).reverse_log_likelihood(view, X, rng=0, data_rates=rates)
    expected = np.exp(-view.free_energy(X[:1]) - Exact().estimate(view).value)[0]
    p_hat = np.exp(ll)
    assert abs(p_hat.mean() - expected) < 3 * p_hat.std() / np.sqrt(p_hat.size)
    assert np.mean(ll) < np.log(expected)  # and conservative in log space (Jensen)
    # When the base model is the model itself, every estimate is exact.
    same = 1 / (1 + np.exp(-view.visible_bias))
    ll = AIS(n_betas=5).reverse_log_likelihood(view, X[:3], rng=0, data_rates=same)
    assert np.allclose(ll, np.log(expected))


def test_reverse_ais_needs_visible_state():
    view = random_bm(5, 3, 0.5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="visible"):
        AIS().reverse_log_likelihood(view, np.zeros((2, 3)))


# -- mean field --------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore::skboltz.exceptions.MeanFieldConvergenceWarning")
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("scale", [0.3, 1.0, 3.0])
def test_naive_mean_field_is_a_lower_bound(seed, scale):
    for view in models(seed, scale):
        exact = Exact().estimate(view).value
        log_z = MeanField().estimate(view)
        assert log_z.lower == log_z.value <= exact + 1e-12
        assert log_z.upper is None and log_z.method == "mean_field"
        if scale == 0.3:  # and not a useless one at weak coupling
            assert exact - log_z.value < 0.5


def test_mean_field_bound_holds_at_any_magnetisation():
    view = random_bm(6, 3, 1.0, np.random.default_rng(4))
    exact = Exact().estimate(view).value
    m = np.random.default_rng(5).random((50, 6))
    values = [mean_field_free_energy(view.coupling_matrix(), view.bias_vector(), row)
              for row in m]
    assert max(values) <= exact


@pytest.mark.parametrize("seed", SEEDS)
def test_tap_closer_than_naive_at_weak_coupling(seed):
    for view in models(seed, 0.15):
        exact = Exact().estimate(view).value
        naive = MeanField().estimate(view).value
        tap = TAP().estimate(view)
        assert tap.method == "tap" and tap.lower is None and tap.upper is None
        assert abs(tap.value - exact) < abs(naive - exact)
        assert MeanField(order=2).estimate(view).value == tap.value


@pytest.mark.filterwarnings("ignore::skboltz.exceptions.MeanFieldConvergenceWarning")
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("scale", [0.3, 1.0, 3.0])
def test_fixed_point_iteration_climbs_and_tap_never_falls_below_naive(seed, scale):
    for view in models(seed, scale):
        coupling, bias = view.coupling_matrix(), view.bias_vector()
        for order in (1, 2):
            values = [
                mean_field_free_energy(coupling, bias, mean_field_fixed_point(
                    coupling, bias, np.full(bias.size, 0.5), order=order,
                    max_iter=n_iter)[0], order)
                for n_iter in (1, 2, 3, 5, 10, 30)
            ]
            assert np.all(np.diff(values) >= -1e-10), values
        assert TAP().estimate(view).value >= MeanField().estimate(view).value - 1e-10


def test_tap_closer_than_naive_on_a_digits_model():
    """On an RBM trained on binarized digits, plain damped TAP iteration stopped on a
    saddle point 5 nats below naive mean field; climbing from the naive solution lands
    within a nat of log Z."""
    from sklearn.datasets import load_digits

    X = (load_digits().data > 7).astype(float)
    rbm = RBM(n_components=16, n_iter=30, random_state=0).fit(X)
    rates = X.mean(axis=0)
    view = rbm._model_view()
    exact = Exact().estimate(view).value
    naive = MeanField().estimate(view, data_rates=rates).value
    tap = TAP().estimate(view, data_rates=rates).value
    assert naive <= exact
    assert abs(tap - exact) < abs(naive - exact), (tap - exact, naive - exact)


def test_mean_field_warns_when_not_converged():
    view = random_rbm(5, 4, 1.0, np.random.default_rng(0))
    with pytest.warns(MeanFieldConvergenceWarning, match="did not converge"):
        log_z = MeanField(max_iter=2).estimate(view)
    assert log_z.cost == {"n_iter": 2, "converged": False}


# -- visited states ----------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("scale", SCALES)
def test_visited_states_is_a_lower_bound(seed, scale):
    rng = np.random.default_rng(seed)
    for view in models(seed, scale):
        exact = Exact().estimate(view).value
        few = VisitedStates(n_chains=3, n_steps=5).estimate(view, rng=rng)
        assert few.value <= exact + 1e-12 and few.lower == few.value
        assert few.cost["n_distinct_states"] <= 18


def test_visited_states_exact_when_every_state_is_visited():
    view = random_rbm(5, 3, 0.5, np.random.default_rng(0))
    log_z = VisitedStates(n_chains=50, n_steps=200).estimate(view, rng=0)
    assert log_z.cost["n_distinct_states"] == 2**5
    assert log_z.value == pytest.approx(Exact().estimate(view).value, abs=1e-10)


# -- registry and the RBM estimator --------------------------------------------------
def test_registry_names():
    assert {"exact", "ais", "mean_field", "tap", "visited_states"} <= set(Z_ESTIMATORS)
    assert Z_ESTIMATORS["tap"]().order == 2


def _digits_like(n_rows=60, n_features=8, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random((n_rows, n_features)) < np.linspace(0.1, 0.8, n_features)).astype(
        float
    )


@pytest.mark.parametrize("z_estimator", ["ais", "mean_field", "tap", VisitedStates(10, 20)])
def test_rbm_scores_with_each_estimator(z_estimator):
    X = _digits_like()
    # the data-rate start gives a peaked model, on which the visited-states lower
    # bound is within the tolerance below
    rbm = RBM(n_components=4, z_estimator=z_estimator, n_iter=2,
              visible_bias_init="data_rates", random_state=0).fit(X)
    assert rbm._log_z_cache == {}  # fit pays for no estimate
    scores = rbm.score_samples(X)
    assert np.array_equal(scores, rbm.score_samples(X))
    assert np.array_equal(rbm.score_samples(X[::-1])[::-1], scores)
    exact = rbm.estimate_log_partition("exact").value
    log_z = rbm.estimate_log_partition()
    assert isinstance(log_z, LogZ) and log_z is rbm.estimate_log_partition()
    assert abs(log_z.value - exact) < 0.5
    # Refitting with the same seed reproduces the estimate.
    assert rbm.fit(X).estimate_log_partition().value == log_z.value


def test_auto_switches_to_ais_for_large_models():
    X = _digits_like(n_features=21)
    rbm = RBM(n_components=21, n_iter=0, random_state=0).fit(X)
    assert isinstance(rbm.z_estimator_, AIS)
    small = RBM(n_components=4, n_iter=0, random_state=0).fit(X)
    assert isinstance(small.z_estimator_, Exact)


def test_exact_reports_progress_and_forecasts_its_cost():
    view = random_rbm(22, 12, 0.3, np.random.default_rng(3))  # enumerates 2**12 states
    calls = []
    log_z = Exact(chunk_size=256).estimate(
        view, progress=lambda done, total: calls.append((done, total)))
    done, total = np.array(calls).T
    assert np.all(np.diff(done) > 0) and np.all(total == 2**12) and done[-1] == 2**12
    assert len(calls) == 2**12 // 256 + 1 and log_z.cost["n_states"] == 2**12
    seconds = Exact().estimated_seconds(random_rbm(22, 19, 0.3, np.random.default_rng(3)))
    assert np.isfinite(seconds) and seconds > 0
    assert Exact().estimated_seconds(view) is None  # at most 2**18 states: quick
    bm = random_bm(20, 3, 0.3, np.random.default_rng(1))  # a view Exact cannot shrink
    assert Exact().estimated_seconds(bm) is None
    assert MeanField().estimated_seconds(view) is None
