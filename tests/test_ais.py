"""AIS: the fast float32 chains against float64 references, exact transitions, the
adaptive precision and time settings, and a test sensitive to a transition at the
wrong beta."""

import numpy as np
import pytest
from _bm_reference import random_bm
from scipy.special import logsumexp

from skboltz.models._boltzmann_energy import BMView
from skboltz.utils._energy import binary_states
from skboltz.models._rbm_energy import RBMView
from skboltz.partition import AIS, Exact
from skboltz.partition._ais import _InterpolatedChains, anneal_forward, beta_schedule


def random_rbm(n_visible, n_hidden, scale, rng):
    return RBMView(
        rng.normal(0, scale, (n_hidden, n_visible)),
        rng.normal(0, scale, n_visible),
        rng.normal(0, scale, n_hidden),
    )


def bm_view(n_units, n_visible, scale, rng, temperature=1.0):
    reference = random_bm(n_units, n_visible, scale, rng, temperature)
    return BMView(reference.coupling, reference.bias, n_visible, temperature)


def fast_models(rng):
    return [random_rbm(7, 5, 1.0, rng), bm_view(8, 5, 1.0, rng, temperature=1.5)]


# -- the fast chains against float64 references ---------------------------------------
def assert_log_ratios_match_the_float64_path(view, kind, rng, tolerances,
                                             states_kept=False):
    """A view's own annealing chains add the same log ratios (and, negated, at
    ``sign=-1``) as the generic float64 interpolation, at ``tolerances[dtype]``;
    ``states_kept``: the call leaves the chains' states as they were."""
    base = view.annealing_base(rng.random(view.n_visible), kind)
    states = (rng.random((50, view.n_state_units)) < 0.5).astype(float)
    for beta, beta_next in [(0.0, 0.001), (0.3, 0.31), (0.99, 1.0), (0.0, 1.0)]:
        expected = np.zeros(50)
        reference = _InterpolatedChains(view, base, 50, rng)
        reference.set_states(states)
        reference.add_log_ratio(beta, beta_next, expected)
        for dtype, tolerance in tolerances.items():
            chains = view.annealing(base, 50, rng, dtype)
            chains.set_states(states)
            got = np.full(50, 3.0)
            chains.add_log_ratio(beta, beta_next, got, sign=-1.0, then_sample_at=beta)
            np.testing.assert_allclose(3.0 - got, expected, atol=tolerance)
            if states_kept:
                np.testing.assert_array_equal(chains.states, states)


@pytest.mark.parametrize("hidden", ["data", "response", "model"])
def test_log_ratios_match_the_float64_path(hidden):
    rng = np.random.default_rng(0)
    for view in [random_rbm(9, 70, 1.0, rng), bm_view(8, 5, 1.0, rng, 1.5)]:
        assert_log_ratios_match_the_float64_path(
            view, hidden, rng, {np.float64: 1e-10, np.float32: 2e-5})


def test_float32_log_weights_follow_float64_over_a_whole_run():
    """The rounding of float32 increments does not accumulate: same states, 2000 betas."""
    rng = np.random.default_rng(1)
    view = random_rbm(20, 64, 0.5, rng)
    base = view.annealing_base(rng.random(20), "response")
    chains = {dtype: view.annealing(base, 40, rng, dtype) for dtype in (np.float32, np.float64)}
    log_w = {dtype: np.zeros(40) for dtype in chains}
    betas = beta_schedule(2000, "linear")
    for k in range(1, betas.size):
        states = (rng.random((40, 20)) < 0.5).astype(float)  # any states will do
        for dtype, chain in chains.items():
            chain.set_states(states)
            chain.add_log_ratio(betas[k - 1], betas[k], log_w[dtype])
    assert np.max(np.abs(log_w[np.float32] - log_w[np.float64])) < 1e-4


def rbm_transition_matrix(view, base, beta):
    """Exact P(v' | v) of one block-Gibbs step v -> h -> v' at beta (rows: v)."""
    path = view.interpolate(beta, base)
    V = binary_states(view.n_visible)
    H = binary_states(view.n_hidden)
    p_h = path.hidden_probability(V)  # (states, hidden)
    prob_h = np.prod(np.where(H[None] == 1, p_h[:, None], 1 - p_h[:, None]), axis=2)
    p_v = path.visible_probability(H)  # (hidden states, visible)
    prob_v = np.prod(np.where(V[None] == 1, p_v[:, None], 1 - p_v[:, None]), axis=2)
    return prob_h @ prob_v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rbm_transition_samples_its_conditional(dtype):
    rng = np.random.default_rng(2)
    view = random_rbm(3, 2, 1.5, rng)
    base = view.annealing_base(np.array([0.2, 0.6, 0.9]), "response")
    beta = 0.6
    expected = rbm_transition_matrix(view, base, beta)
    n = 40000
    chains = view.annealing(base, n, rng, dtype)
    codes = 1 << np.arange(3)
    for start in (0, 5):
        chains.set_states(np.broadcast_to(binary_states(3)[start], (n, 3)))
        # Through the cached path of a log ratio (as AIS does), then the plain one.
        chains.add_log_ratio(0.5, beta, np.zeros(n), then_sample_at=beta)
        chains.transition(beta)
        counts = np.bincount((chains.states @ codes).astype(int), minlength=8) / n
        assert 0.5 * np.abs(counts - expected[start]).sum() < 0.015
        chains.set_states(np.broadcast_to(binary_states(3)[start], (n, 3)))
        chains.transition(beta)
        counts = np.bincount((chains.states @ codes).astype(int), minlength=8) / n
        assert 0.5 * np.abs(counts - expected[start]).sum() < 0.015


def test_bm_transition_keeps_its_distribution():
    """Chains drawn from p_beta stay distributed as p_beta after one sweep at beta."""
    rng = np.random.default_rng(3)
    view = bm_view(4, 2, 1.5, rng, temperature=0.8)
    base = view.annealing_base(np.array([0.3, 0.8]), "response")
    beta = 0.4
    S = binary_states(4)
    log_p = view.interpolate(beta, base).log_unnormalized(S)
    p = np.exp(log_p - logsumexp(log_p))
    n = 60000
    chains = view.annealing(base, n, rng)
    chains.set_states(S[rng.choice(16, size=n, p=p)])
    chains.transition(beta)
    codes = np.asarray(chains.states, dtype=float) @ (1 << np.arange(4))
    counts = np.bincount(codes.astype(int), minlength=16) / n
    assert 0.5 * np.abs(counts - p).sum() < 0.01
    # Not a vacuous check: the same sweep at another beta moves the distribution.
    chains.set_states(S[rng.choice(16, size=n, p=p)])
    chains.transition(1.0)
    codes = np.asarray(chains.states, dtype=float) @ (1 << np.arange(4))
    counts = np.bincount(codes.astype(int), minlength=16) / n
    assert 0.5 * np.abs(counts - p).sum() > 0.03


# -- unbiasedness with few betas: catches a transition at the wrong beta -------------
class _PreviousBetaChains:
    """Deliberately wrong: each transition runs at the previous beta of the path."""

    def __init__(self, chains, betas):
        self._chains, self._previous = chains, dict(zip(betas[1:], betas[:-1]))
        self.n_chains = chains.n_chains

    def start_from_base(self):
        self._chains.start_from_base()

    def add_log_ratio(self, beta, beta_next, log_w, sign=1.0, then_sample_at=None):
        self._chains.add_log_ratio(beta, beta_next, log_w, sign)

    def transition(self, beta):
        self._chains.transition(self._previous[beta])


def few_beta_models():
    rng = np.random.default_rng(11)
    rbm = random_rbm(6, 4, 1.5, rng)
    bm = bm_view(6, 4, 1.5, rng)
    reference_bm = random_bm(6, 4, 1.5, rng)
    return [("rbm", rbm), ("bm", bm), ("reference_bm", reference_bm)]


@pytest.mark.parametrize("name, view", few_beta_models())
def test_few_betas_many_chains_is_unbiased_and_sees_a_wrong_transition(name, view):
    """With 4 betas the weights are far from 1, but their mean is unbiased for Z /
    Z_base for any number of betas: 30,000 chains pin it to ~0.01 nats. Running each
    transition at the previous beta (a small bias at 10,000 betas) is ~10 standard
    errors off here."""
    exact = Exact().estimate(view).value
    rates = np.linspace(0.2, 0.8, view.n_visible)
    hidden = "response" if hasattr(view, "annealing_base") else None
    base = (view.annealing_base(rates, hidden) if hidden
            else view.base_bias_from_rates(rates))
    betas = beta_schedule(4, "linear")
    z = {}
    for wrong in (False, True):
        rng = np.random.default_rng(5)
        if hasattr(view, "annealing"):
            chains = view.annealing(base, 30000, rng)
        else:
            chains = _InterpolatedChains(view, base, 30000, rng)
        if wrong:
            chains = _PreviousBetaChains(chains, betas)
        log_w = anneal_forward(chains, betas)
        shift = log_w.max()
        w = np.exp(log_w - shift)
        value = view.base_log_partition(base) + shift + np.log(w.mean())
        std_error = w.std() / w.mean() / np.sqrt(w.size)
        z[wrong] = (value - exact) / std_error
    assert abs(z[False]) < 4, z
    assert abs(z[True]) > 8, z


# -- precision and time as the knobs ---------------------------------------------------
def test_target_std_error_is_reached_and_deterministic():
    view = random_rbm(8, 6, 1.5, np.random.default_rng(4))
    rates = np.linspace(0.1, 0.9, 8)
    ais = AIS(n_chains=20, n_betas=50, target_std_error=0.01)
    log_z = ais.estimate(view, rng=0, data_rates=rates)
    assert log_z.std_error <= 0.01
    assert log_z.cost["stopped_by"] == "target_std_error"
    assert log_z.cost["n_chains"] > 20  # needed more than the first batch
    assert log_z.cost["n_transitions"] >= log_z.cost["n_chains"] * (log_z.cost["n_betas"] - 1)
    assert log_z.cost["base"] in ("data", "response", "model")
    again = ais.estimate(view, rng=0, data_rates=rates)
    assert again.value == log_z.value and again.cost["n_chains"] == log_z.cost["n_chains"]
    assert ais.estimate(view, rng=1, data_rates=rates).value != log_z.value
    assert abs(log_z.value - Exact().estimate(view).value) < 4 * log_z.std_error


def test_fixed_size_without_target():
    view = random_rbm(5, 4, 1.0, np.random.default_rng(5))
    for base in ("data", "auto"):
        log_z = AIS(n_chains=30, n_betas=40, target_std_error=None,
                    base=base).estimate(view, rng=0)
        assert log_z.cost["n_chains"] == 30 and log_z.cost["n_betas"] == 40
        assert log_z.cost["stopped_by"] == "n_chains"
    # The 30 chains are shared between the three bases, which agree.
    assert sorted(log_z.cost["bases"]) == ["data", "model", "response"]
    assert [b["n_chains"] for b in log_z.cost["bases"].values()] == [10, 10, 10]
    assert log_z.cost["n_transitions"] == 30 * 39


def test_max_time_stops_early():
    view = random_rbm(6, 5, 1.5, np.random.default_rng(6))
    log_z = AIS(n_chains=10, n_betas=100, target_std_error=1e-6,
                max_time=1e-3).estimate(view, rng=0)
    assert log_z.cost["stopped_by"] == "max_time"
    assert log_z.cost["n_chains"] >= 2 and np.isfinite(log_z.value)


def test_wide_log_weights_double_the_betas():
    view = random_rbm(10, 8, 2.0, np.random.default_rng(7))
    log_z = AIS(n_chains=40, n_betas=5, target_std_error=0.05).estimate(view, rng=0)
    assert log_z.cost["n_betas"] > 5
    assert abs(log_z.value - Exact().estimate(view).value) < 4 * log_z.std_error


def test_progress_and_cost_forecast():
    view = random_rbm(6, 5, 1.0, np.random.default_rng(8))
    calls = []
    ais = AIS(n_chains=20, n_betas=200, target_std_error=None, max_time=None)
    log_z = ais.estimate(view, rng=0, progress=lambda done, total: calls.append((done, total)))
    done, cap = np.array(calls).T
    # Work done only grows, against a cap that never moves (never a share that falls).
    assert np.all(np.diff(done) > 0) and np.all(done <= cap)
    assert np.all(cap == cap[0])
    assert done[-1] == log_z.cost["n_transitions"]
    # The cap is the budget of transitions: by default ("auto") the model's, else the
    # one given, or 2**27 without one.
    for budget, expected in (("auto", AIS().transition_budget(view)), (5000, 5000),
                             (None, 2**27)):
        calls.clear()
        AIS(n_chains=20, n_betas=50, max_transitions=budget).estimate(
            view, rng=0, progress=lambda *c: calls.append(c))
        assert calls and all(cap == expected for _, cap in calls)
    seconds = ais.estimated_seconds(view, rng=0)
    assert np.isfinite(seconds) and seconds > 0
    assert AIS(max_time=0.5).estimated_seconds(view) <= 0.5


@pytest.mark.parametrize("seed", range(4))
def test_fast_chains_cover_exact_within_three_standard_errors(seed):
    rng = np.random.default_rng(200 + seed)
    for view in fast_models(rng):
        log_z = AIS(n_chains=100, n_betas=300, target_std_error=0.02).estimate(
            view, rng=rng, data_rates=rng.random(view.n_visible))
        exact = Exact().estimate(view).value
        assert log_z.std_error <= 0.02
        assert abs(log_z.value - exact) <= 3 * log_z.std_error, (log_z, exact)


def test_reverse_on_the_fast_chains_brackets_the_log_likelihood():
    rng = np.random.default_rng(9)
    view = random_rbm(8, 5, 1.5, rng)
    V = binary_states(8)
    log_p = -view.free_energy(V)
    log_z = logsumexp(log_p)
    X = V[rng.choice(V.shape[0], size=3000, p=np.exp(log_p - log_z))]
    exact_ll = np.mean(-view.free_energy(X)) - log_z
    reverse = AIS(n_betas=30).reverse_log_likelihood(view, X, rng=0, data_rates=X.mean(0))
    gap = np.mean(reverse) - exact_ll
    assert -0.3 < gap <= 3 * np.std(reverse) / np.sqrt(X.shape[0])


def test_reverse_annealing_refuses_a_gaussian_rbm_even_with_as_many_hidden_units():
    # A Gaussian RBM's sampler state is its hidden units; with n_hidden == n_visible the
    # counts match, and rows would silently be taken for hidden states.
    from skboltz.views import GaussianRBMView

    rng = np.random.default_rng(0)
    view = GaussianRBMView(rng.normal(0, 0.1, (3, 3)), np.zeros(3), np.zeros(3), np.ones(3))
    with pytest.raises(ValueError, match="hidden units"):
        AIS(n_betas=10).reverse_log_likelihood(view, rng.normal(size=(4, 3)), rng=0)


def test_default_estimates_are_unbiased_with_honest_error_bars():
    """z = (AIS - exact) / std_error over 600 default estimates (100 seeds on each of
    six 16 x 12 RBMs of binarized digit pixels, where the first batch of chains nearly
    meets the target): mean near 0 and RMS near 1 (-0.11 and 1.02 here). Reusing the
    first batch's chains, with the narrowest path chosen by them and the paths
    weighted by their estimated errors, gave mean z -0.31 and RMS 1.22 (3-sigma misses
    in 2.5 % of the estimates)."""
    from sklearn.datasets import load_digits

    from skboltz import RBM

    X = (load_digits().data > 7).astype(float)
    z = []
    for k in range(6):
        model = RBM(n_components=12, n_iter=10, random_state=k).fit(
            X[200 * k : 200 * (k + 1), 20:36])
        view, rates = model._model_view(), model._training_state.data_rates
        exact = Exact().estimate(view).value
        for seed in range(100):
            log_z = AIS().estimate(view, rng=1000 * k + seed, data_rates=rates)
            z.append((log_z.value - exact) / log_z.std_error)
    z = np.array(z)
    assert abs(z.mean()) < 3 / np.sqrt(z.size) + 0.1
    assert np.sqrt(np.mean(z**2)) < 1.1


@pytest.mark.parametrize("seed", range(3))
def test_chains_from_a_mixture_of_training_rows_cover_exact(seed):
    """The "rows" path (a mixture of independent models centred on training rows) is
    an importance sample like the others: its estimate covers the exact log Z."""
    from skboltz.partition._ais import _log_mean_exp

    rng = np.random.default_rng(seed)
    view = random_rbm(10, 7, 1.0, rng)
    rows = (rng.random((30, 10)) < 0.4).astype(float)
    chains = view.annealing_from_rows(rows, 400, rng)
    log_w = anneal_forward(chains, beta_schedule(200, "linear"))
    value, std_error = _log_mean_exp(log_w + chains.base_log_partition)
    assert abs(value - Exact().estimate(view).value) < 3 * std_error + 1e-3
    # and AIS with rows anneals from them as a fourth path
    log_z = AIS(target_std_error=0.05).estimate(view, rng=seed, data_rows=rows,
                                                data_rates=rows.mean(axis=0))
    assert "rows" in log_z.cost["bases"]
    assert abs(log_z.value - Exact().estimate(view).value) < 3 * log_z.std_error


def test_the_rows_mixture_weights_rows_by_their_probability():
    """The "rows" path's components: the rows' nearest binary states, repeated in
    proportion to exp(ROWS_TEMPERATURE * -F(x)); weighted so, the chains' log weights
    spread less than from a mixture that weights every row alike (whose chains, stuck
    near rows of very different probability, differ by their rows' free energies), and
    the estimate still covers the exact log Z."""
    from skboltz.partition._ais import (ROWS_COMPONENTS, ROWS_TEMPERATURE, _log_mean_exp,
                                        weighted_rows)

    rng = np.random.default_rng(3)
    view = random_rbm(12, 8, 2.0, rng)
    rows = rng.random((40, 12))  # grey rows: components at their nearest binary states
    entries = weighted_rows(view, rows)
    states = np.unique(np.rint(rows), axis=0)
    assert entries.shape == (ROWS_COMPONENTS, 12) and set(np.unique(entries)) <= {0.0, 1.0}
    counts = np.array([np.all(entries == state, axis=1).sum() for state in states])
    share = np.exp(ROWS_TEMPERATURE * -view.free_energy(states))
    share *= ROWS_COMPONENTS / share.sum()
    assert counts.sum() == ROWS_COMPONENTS and np.all(np.abs(counts - share) < 1)
    exact = Exact().estimate(view).value
    betas = beta_schedule(100, "linear")
    spread = {}
    for name, mixture in (("alike", np.rint(rows)), ("weighted", entries)):
        chains = view.annealing_from_rows(mixture, 2000, np.random.default_rng(0))
        log_w = anneal_forward(chains, betas) + chains.base_log_partition
        value, std_error = _log_mean_exp(log_w)
        assert abs(value - exact) < 3 * std_error + 1e-3, (name, value, exact)
        spread[name] = np.std(log_w)
    assert spread["weighted"] < 0.7 * spread["alike"], spread
