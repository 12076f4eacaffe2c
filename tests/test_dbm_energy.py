"""The deep Boltzmann machine's math (``skboltz.models._dbm_energy``) against exact answers.

Every quantity is checked on machines small enough to list all their joint states
(brute force over all layers, written here independently of the module's sums).
"""

import numpy as np
import pytest
from _oracles import (
    assert_samples_match,
    sampling_total_variation,
    state_index,
    total_variation_excess,
)
from scipy.special import logsumexp
from test_ais import _PreviousBetaChains, assert_log_ratios_match_the_float64_path

from skboltz.models._boltzmann_energy import BMView
from skboltz.models._dbm_energy import (
    DBMView,
    dbm_gibbs_sweep,
    dbm_mean_field,
    dbm_mean_field_log_bound,
)
from skboltz.exceptions import TooManyStatesError
from skboltz.partition import AIS, TAP, Exact, MeanField, VisitedStates
from skboltz.partition._ais import anneal_forward, beta_schedule

N_SWEEPS = 40


def random_dbm(sizes, scale=1.0, seed=0):
    """Weights of spread ``scale`` * 2 / sqrt(fan-in) (strong enough to matter)."""
    rng = np.random.default_rng(seed)
    weights = [rng.normal(0, 2 * scale / np.sqrt(sizes[k - 1]), (sizes[k], sizes[k - 1]))
               for k in range(1, len(sizes))]
    return DBMView(weights, [rng.normal(0, scale, n) for n in sizes])


def all_bits(n_units, start=0, stop=None):
    """Binary rows of the codes start..stop, first unit the highest bit (as _oracles)."""
    stop = 2**n_units if stop is None else stop
    codes = np.arange(start, stop)
    return ((codes[:, None] >> np.arange(n_units)[::-1]) & 1).astype(float)


def brute_force(view, chunk=2**16):
    """Every joint state's -E(x), chunk by chunk: yields (states, layers, log weights)."""
    sizes = view.layer_sizes
    edges = np.cumsum([0, *sizes])
    for start in range(0, 2 ** sum(sizes), chunk):
        S = all_bits(sum(sizes), start, min(start + chunk, 2 ** sum(sizes)))
        layers = [S[:, edges[k] : edges[k + 1]] for k in range(len(sizes))]
        log_w = sum(x @ b for x, b in zip(layers, view.biases))
        for k, W in enumerate(view.weights, start=1):
            log_w = log_w + np.einsum("ni,ij,nj->n", layers[k], W, layers[k - 1])
        yield S, layers, log_w


def exact_log_z(view):
    return logsumexp(np.concatenate([log_w for _, _, log_w in brute_force(view)]))


def marginal_log_weights(view, columns):
    """log sum of exp(-E) over the other units, for every state of ``columns``."""
    out = np.full(2 ** len(columns), -np.inf)
    for S, _, log_w in brute_force(view):
        codes = state_index(S[:, columns])
        top = log_w.max()
        sums = np.bincount(codes, weights=np.exp(log_w - top), minlength=out.size)
        with np.errstate(divide="ignore"):
            out = np.logaddexp(out, np.log(sums) + top)
    return out


def even_columns(view):
    edges = np.cumsum([0, *view.layer_sizes])
    return np.concatenate([np.arange(edges[k], edges[k + 1])
                           for k in range(0, len(view.layer_sizes), 2)])


#: 12 visible, 4 and 4 hidden (the issue's size); three hidden layers; an odd colour
#: larger than the even one; one hidden layer (an RBM); no hidden layer.
EXACT_SIZES = [(12, 4, 4), (6, 4, 3, 3), (3, 7, 2), (5, 4), (4,)]


# -- the view's shape and its checks ---------------------------------------------------
def test_sizes_and_layouts():
    view = random_dbm((5, 4, 3, 2))
    assert view.layer_sizes == (5, 4, 3, 2)
    assert (view.n_visible, view.n_hidden, view.n_units) == (5, 9, 14)
    assert view.n_state_units == 8  # v and x_2
    assert view.n_enumerated_units == 6  # x_1 and x_3
    assert view.temperature == 1.0 and view.dtype == np.float64
    assert view.astype(np.float32).weights[1].dtype == np.float32
    with pytest.raises(ValueError, match="needs as many bias vectors"):
        DBMView([np.zeros((3, 2))], [np.zeros(2)])
    with pytest.raises(ValueError, match=r"must have shape \(n_1, n_0\) = \(3, 2\)"):
        DBMView([np.zeros((2, 3))], [np.zeros(2), np.zeros(3)])


def test_energy_and_couplings_are_those_of_the_general_machine():
    view = random_dbm((4, 3, 2), seed=1)
    bm = BMView(view.coupling_matrix(), view.bias_vector(), view.n_visible)
    for S, layers, log_w in brute_force(view):
        np.testing.assert_allclose(view.energy(layers), -log_w, atol=1e-12)
        np.testing.assert_allclose(bm.energy(S), -log_w, atol=1e-12)
    assert Exact().estimate(bm).value == pytest.approx(Exact().estimate(view).value, abs=1e-10)


# -- exact sums --------------------------------------------------------------------------
@pytest.mark.parametrize("sizes", EXACT_SIZES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_exact_log_z_equals_brute_force(sizes, dtype):
    view = random_dbm(sizes, seed=2).astype(dtype)
    expected = exact_log_z(view.astype(np.float64))
    assert Exact(chunk_size=5).estimate(view).value == pytest.approx(expected, abs=1e-9)
    assert Exact().estimate(view).cost["n_states"] == 2**view.n_enumerated_units


@pytest.mark.parametrize("sizes", EXACT_SIZES)
def test_log_unnormalized_sums_out_the_odd_layers(sizes):
    view = random_dbm(sizes, seed=3)
    columns = even_columns(view)
    expected = marginal_log_weights(view, columns)
    np.testing.assert_allclose(view.log_unnormalized(all_bits(columns.size)), expected,
                               atol=1e-10)


#: One hidden layer; the odd hidden layers enumerated (3, 3 / 2, 3, 2 units); the even
#: ones enumerated (h_1 summed per row: 6, 2 / 3, 2, 3 units).
HIDDEN_SIZES = [(5, 4), (5, 3, 3), (4, 2, 3, 2), (5, 6, 2), (4, 3, 2, 3)]


@pytest.mark.parametrize("sizes", HIDDEN_SIZES)
def test_free_energy_and_hidden_marginals_equal_brute_force(sizes):
    view = random_dbm(sizes, seed=4)
    n_visible, n_units = sizes[0], sum(sizes)
    V = all_bits(n_visible)
    np.testing.assert_allclose(-view.free_energy(V),
                               marginal_log_weights(view, np.arange(n_visible)), atol=1e-10)
    totals, weighted = np.zeros(2**n_visible), np.zeros((2**n_visible, n_units - n_visible))
    log_z = exact_log_z(view)
    for S, _, log_w in brute_force(view):
        p = np.exp(log_w - log_z)
        codes = state_index(S[:, :n_visible])
        totals += np.bincount(codes, weights=p, minlength=totals.size)
        for j in range(n_units - n_visible):
            weighted[:, j] += np.bincount(codes, weights=p * S[:, n_visible + j],
                                          minlength=totals.size)
    np.testing.assert_allclose(view.hidden_probability(V), weighted / totals[:, None],
                               atol=1e-10)


def test_free_energy_refuses_too_many_hidden_states():
    view = DBMView([np.zeros((30, 3)), np.zeros((30, 30))], [np.zeros(3), np.zeros(30),
                                                              np.zeros(30)])
    with pytest.raises(TooManyStatesError, match="mean-field bound"):
        view.free_energy(np.zeros((1, 3)))


# -- two-colour block Gibbs ----------------------------------------------------------------
SAMPLER_SIZES = [(4, 3, 3), (3, 2, 2, 2)]


def run_sweeps(view, n_chains, seed, sweep=dbm_gibbs_sweep, clamped=None):
    rng = np.random.default_rng(seed)
    layers = [(rng.random((n_chains, n)) < 0.5).astype(float) for n in view.layer_sizes]
    if clamped is not None:
        layers[0][...] = clamped
    for _ in range(N_SWEEPS):
        sweep(layers, view.weights, view.biases, rng, clamp_visible=clamped is not None)
    return layers


@pytest.mark.parametrize("sizes", SAMPLER_SIZES)
def test_two_colour_sampler_total_variation_shrinks_like_sampling_noise(sizes):
    view = random_dbm(sizes, seed=5)
    log_z = exact_log_z(view)
    log_p = np.concatenate([log_w for _, _, log_w in brute_force(view)]) - log_z
    tv = {}
    for n_chains in (10000, 40000):
        samples = np.hstack(run_sweeps(view, n_chains, seed=n_chains))
        assert_samples_match(samples, log_p)
        counts = np.bincount(state_index(samples), minlength=log_p.size) / n_chains
        tv[n_chains] = 0.5 * np.abs(counts - np.exp(log_p)).sum()
    expected = (sampling_total_variation(log_p, 40000)[0]
                / sampling_total_variation(log_p, 10000)[0])
    assert tv[40000] / tv[10000] == pytest.approx(expected, abs=0.15)


def synchronous_sweep(layers, weights, biases, rng, clamp_visible=False):
    """Deliberately wrong: every layer drawn from the old state of its neighbours."""
    old = [x.copy() for x in layers]
    for k in range(len(biases)):
        field = biases[k] + sum(
            [old[k - 1] @ weights[k - 1].T] if k > 0 else []) + sum(
            [old[k + 1] @ weights[k]] if k + 1 < len(biases) else [])
        layers[k][...] = rng.random(field.shape) < 1 / (1 + np.exp(-field))


def test_the_sampler_check_fails_for_a_synchronous_sampler():
    view = random_dbm(SAMPLER_SIZES[0], seed=5)
    log_p = np.concatenate([log_w for _, _, log_w in brute_force(view)])
    log_p -= logsumexp(log_p)
    samples = np.hstack(run_sweeps(view, 10000, seed=1, sweep=synchronous_sweep))
    assert total_variation_excess(samples, log_p) > 20


@pytest.mark.parametrize("sizes", SAMPLER_SIZES)
def test_clamped_sweeps_sample_the_hidden_posterior(sizes):
    view = random_dbm(sizes, seed=6)
    v = (np.arange(sizes[0]) % 2).astype(float)
    joint = []
    for S, _, log_w in brute_force(view):
        joint.append(log_w[np.all(S[:, : sizes[0]] == v, axis=1)])
    log_p = np.concatenate(joint)
    log_p -= logsumexp(log_p)
    layers = run_sweeps(view, 20000, seed=2, clamped=v)
    assert np.all(layers[0] == v)
    assert_samples_match(np.hstack(layers[1:]), log_p)


@pytest.mark.parametrize("sizes", SAMPLER_SIZES + [(5, 4)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gibbs_step_samples_the_even_layers(sizes, dtype):
    view = random_dbm(sizes, seed=7).astype(dtype)
    log_p = view.log_unnormalized(all_bits(view.n_state_units))
    log_p -= logsumexp(log_p)
    rng = np.random.default_rng(3)
    S = (rng.random((20000, view.n_state_units)) < 0.5).astype(dtype)
    for _ in range(N_SWEEPS):
        S = view.gibbs_step(S, rng)
    assert S.dtype == dtype
    assert_samples_match(S, log_p)


# -- mean field -----------------------------------------------------------------------
@pytest.mark.parametrize("sizes", [(12, 4, 4), (6, 4, 3, 3), (5, 4)])
@pytest.mark.parametrize("scale", [0.5, 1.5])
def test_mean_field_bound_is_below_the_exact_log_likelihood_for_every_row(sizes, scale):
    view = random_dbm(sizes, scale=scale, seed=8)
    V = all_bits(sizes[0])[:: max(1, 2 ** sizes[0] // 500)]
    log_z = Exact().estimate(view).value
    exact = -view.free_energy(V) - log_z
    magnetisations, converged = view.mean_field(V)
    assert converged
    bound = view.mean_field_log_bound(V, magnetisations) - log_z
    assert np.all(bound <= exact + 1e-10)
    assert np.all(bound > exact - 3.0)  # a real bound, not a trivial one
    # The fixed point: one more update of every layer moves nothing.
    layers = [V, *[mu.copy() for mu in magnetisations]]
    dbm_mean_field(layers, view.weights, view.biases, max_iter=1)
    for before, after in zip(magnetisations, layers[1:]):
        np.testing.assert_allclose(after, before, atol=1e-6)


def test_mean_field_updates_never_lower_the_bound():
    view = random_dbm((8, 5, 5, 4), scale=2.0, seed=9)
    V = all_bits(8)[::7]
    weights, biases = view.weights, view.biases
    for damping in (0.0, 0.5):
        layers = [V] + [np.full((V.shape[0], n), 0.5) for n in view.layer_sizes[1:]]
        previous = dbm_mean_field_log_bound(layers, weights, biases)
        for _ in range(20):
            dbm_mean_field(layers, weights, biases, damping=damping, max_iter=1)
            bound = dbm_mean_field_log_bound(layers, weights, biases)
            assert np.all(bound >= previous - 1e-12)
            previous = bound


# -- the annealing path and AIS ---------------------------------------------------------
AIS_SIZES = [(12, 4, 4), (8, 4, 4, 4)]


def test_path_ends_and_base_layout():
    view = random_dbm((4, 3, 2, 2), seed=10)
    rates = np.array([0.2, 0.5, 0.7, 0.9])
    base = view.annealing_base(rates, "response")
    assert base.shape == (view.n_units,)
    np.testing.assert_allclose(base[:4], np.log(rates / (1 - rates)))
    # State units first: v, x_2 (bottom-up inputs), then x_1, x_3.
    r1 = 1 / (1 + np.exp(-(view.weights[0] @ rates + view.biases[1])))
    np.testing.assert_allclose(base[6:9], view.weights[0] @ rates + view.biases[1])
    np.testing.assert_allclose(base[4:6], view.weights[1] @ r1 + view.biases[2])
    assert view.base_log_partition(base) == pytest.approx(
        Exact().estimate(view.interpolate(0.0, base)).value, abs=1e-10)
    states = all_bits(view.n_state_units)
    np.testing.assert_allclose(view.interpolate(1.0, base).log_unnormalized(states),
                               view.log_unnormalized(states), atol=1e-12)
    short = view.base_bias_from_rates(rates)  # state units only: odd layers uniform
    assert short.shape == (view.n_state_units,) and not short[4:].any()
    assert view.base_log_partition(short) == pytest.approx(
        Exact().estimate(view.interpolate(0.0, short)).value, abs=1e-10)
    assert not view.annealing_base(rates)[4:].any()
    np.testing.assert_allclose(  # "model": the machine's own biases, state units first
        view.annealing_base(rates, "model"),
        np.concatenate([view.biases[k] for k in (0, 2, 1, 3)]))
    with pytest.raises(ValueError, match="kind must be one of"):
        view.annealing_base(rates, "other")
    with pytest.raises(ValueError, match="base_bias must have 11 entries"):
        view.interpolate(0.5, np.zeros(4))


@pytest.mark.parametrize("kind", ["data", "response", "model"])
def test_log_ratios_match_the_float64_path(kind):
    rng = np.random.default_rng(0)
    view = random_dbm((5, 3, 3, 2), seed=11)
    assert_log_ratios_match_the_float64_path(
        view, kind, rng, {np.float64: 1e-12, np.float32: 1e-6}, states_kept=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_annealing_transitions_sample_the_path_at_their_beta(dtype):
    view = random_dbm((3, 2, 2, 2), seed=12)
    base = view.annealing_base(np.array([0.3, 0.6, 0.8]), "response")
    beta = 0.7
    log_p = view.interpolate(beta, base).log_unnormalized(all_bits(view.n_state_units))
    log_p -= logsumexp(log_p)
    n = 20000
    chains = view.annealing(base, n, np.random.default_rng(4), dtype)
    chains.start_from_base()
    chains.add_log_ratio(0.5, beta, np.zeros(n), then_sample_at=beta)  # the cached path
    chains.transition(beta)
    for _ in range(N_SWEEPS):
        chains.transition(beta)
    assert_samples_match(chains.states, log_p)


def test_few_betas_many_chains_is_unbiased_and_sees_a_wrong_transition():
    """With 4 betas the mean weight is still unbiased for Z / Z_base; transitions at the
    previous beta are many standard errors off."""
    view = random_dbm((5, 3, 3, 2), scale=0.8, seed=13)
    base = view.annealing_base(np.linspace(0.2, 0.8, 5), "response")
    exact = Exact().estimate(view).value
    betas = beta_schedule(4, "linear")
    z = {}
    for wrong in (False, True):
        chains = view.annealing(base, 30000, np.random.default_rng(0))
        if wrong:
            chains = _PreviousBetaChains(chains, betas)
        log_w = anneal_forward(chains, betas)
        w = np.exp(log_w - log_w.max())
        value = view.base_log_partition(base) + log_w.max() + np.log(w.mean())
        z[wrong] = (value - exact) / (w.std() / w.mean() / np.sqrt(w.size))
    assert abs(z[False]) < 4 and abs(z[True]) > 8, z


@pytest.mark.parametrize("sizes", AIS_SIZES)
def test_ais_covers_the_exact_log_z(sizes):
    view = random_dbm(sizes, seed=14)
    exact = Exact().estimate(view).value
    rates = np.linspace(0.1, 0.6, sizes[0])
    for seed in range(3):
        log_z = AIS(n_chains=200, n_betas=500, target_std_error=None).estimate(
            view, rng=seed, data_rates=rates)
        assert abs(log_z.value - exact) < 3 * log_z.std_error, (log_z, exact)
        assert log_z.lower < exact < log_z.upper


def test_per_row_hidden_sums_by_annealing_with_v_clamped():
    """log p(v) = b_0 . v + log Z(hidden layers given v) - log Z: the conditional view
    gives each row's hidden sum to any log Z estimator."""
    view = random_dbm((12, 4, 4), seed=15)
    V = all_bits(12)[::409]
    exact = -view.free_energy(V)
    for row, v in enumerate(V):
        conditional = view.conditional_hidden_view(v)
        assert conditional.layer_sizes == (4, 4)
        offset = v @ view.biases[0]
        assert offset + Exact().estimate(conditional).value == pytest.approx(exact[row],
                                                                             abs=1e-10)
        estimate = AIS(n_chains=100, n_betas=300, target_std_error=None).estimate(
            conditional, rng=row)
        assert abs(offset + estimate.value - exact[row]) < 3 * estimate.std_error
    with pytest.raises(ValueError, match="without hidden layers"):
        DBMView([], [np.zeros(3)]).conditional_hidden_view(np.zeros(3))


# -- the partition estimators through the view protocol ---------------------------------
def test_partition_estimators_work_on_the_view():
    view = random_dbm((8, 5, 4), seed=16)
    exact = Exact().estimate(view).value
    assert MeanField().estimate(view).lower <= exact
    assert np.isfinite(TAP().estimate(view).value)
    assert VisitedStates(n_chains=50, n_steps=200).estimate(view, rng=0).lower <= exact + 1e-9
    estimate = AIS().estimate(view, rng=0, data_rates=np.full(8, 0.3))
    assert estimate.cost["base"] in ("data", "response", "model")
    assert abs(estimate.value - exact) < 4 * estimate.std_error
    with pytest.raises(ValueError, match="even-layer units"):
        AIS().reverse_log_likelihood(view, np.zeros((2, 8)))


def test_the_view_declares_what_it_offers():
    # The partition estimators that suit a deep Boltzmann machine accept it by
    # declaration; the learning strategies of the other models' rules do not.
    from skboltz.learning import PCD, ExactGradient, Gibbs, MeanFieldGradient
    from skboltz.views import LAYERED, supports

    assert LAYERED in DBMView.capabilities.operations
    assert DBMView.capabilities.unit_types == {"binary"}
    for estimator in (Exact, AIS, MeanField, TAP, VisitedStates):
        assert supports(DBMView, estimator)
    for strategy in (PCD, ExactGradient, Gibbs, MeanFieldGradient):
        assert not supports(DBMView, strategy)
