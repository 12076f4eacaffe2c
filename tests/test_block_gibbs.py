"""Block (chromatic) Gibbs sweeps of the general Boltzmann machine against exact answers.

Every sampler here is checked by the total variation between its chains' states and the
exact distribution (enumerated), against the noise floor of as many exact draws; the
last tests show that the same check fails on deliberately wrong samplers.
"""

import numpy as np
import pytest
from _oracles import (
    all_states,
    assert_samples_match,
    bm_log_probabilities,
    total_variation_excess,
)

import skboltz.models._boltzmann_energy as bm_energy_module
from skboltz import BoltzmannMachine
from skboltz.models._boltzmann_energy import BMView, GibbsSweep, bm_gibbs_sweep, greedy_colouring
from skboltz.estimators._boltzmann import connectivity_mask

N_CHAINS = 20000
N_SWEEPS = 40


def layered_mask(sizes):
    edges = np.cumsum([0, *sizes])
    mask = np.zeros((edges[-1], edges[-1]), dtype=bool)
    for k in range(len(sizes) - 1):
        lower, upper = slice(edges[k], edges[k + 1]), slice(edges[k + 1], edges[k + 2])
        mask[lower, upper] = mask[upper, lower] = True
    return mask


def sparse_mask(n_units, density, seed):
    upper = np.triu(np.random.default_rng(seed).random((n_units, n_units)) < density, 1)
    return upper | upper.T


def encoder_mask(n_group, n_hidden):
    mask = connectivity_mask("full", 2 * n_group, n_hidden)
    mask[:n_group, n_group : 2 * n_group] = mask[n_group : 2 * n_group, :n_group] = False
    return mask


#: (name, n_visible, mask) of 8-unit machines: 256 states.
MASKS = [
    ("full", 4, connectivity_mask("full", 4, 4)),
    ("no_hidden_hidden", 4, connectivity_mask("no_hidden_hidden", 4, 4)),
    ("bipartite", 4, connectivity_mask("bipartite", 4, 4)),
    ("layered 3-3-2", 3, layered_mask([3, 3, 2])),
    ("sparse", 4, sparse_mask(8, 0.4, seed=3)),
    ("encoder 3-2-3", 6, encoder_mask(3, 2)),
]
MASK_IDS = [name for name, _, _ in MASKS]


def masked_view(mask, n_visible, temperature=1.0, scale=1.0, seed=0):
    rng = np.random.default_rng(seed)
    n = mask.shape[0]
    W = np.triu(rng.normal(0, scale, size=(n, n)), 1)
    W = (W + W.T) * mask
    return BMView(W, rng.normal(0, scale, size=n), n_visible, temperature, mask)


def random_chains(n_units, dtype, seed=1):
    rng = np.random.default_rng(seed)
    return np.asfortranarray(rng.integers(0, 2, size=(N_CHAINS, n_units)).astype(dtype))


# -- the colouring ------------------------------------------------------------------------
@pytest.mark.parametrize("name, n_visible, mask", MASKS, ids=MASK_IDS)
def test_colours_partition_the_units_into_uncoupled_sets(name, n_visible, mask):
    classes = greedy_colouring(mask)
    units = np.sort(np.concatenate(classes))
    np.testing.assert_array_equal(units, np.arange(mask.shape[0]))
    for members in classes:
        assert not mask[np.ix_(members, members)].any()
    # Greedy in index order: each unit has a coupled unit before it in every lower colour.
    colour = np.empty(mask.shape[0], dtype=int)
    for c, members in enumerate(classes):
        colour[members] = c
    for unit in range(mask.shape[0]):
        earlier = np.flatnonzero(mask[unit, :unit])
        assert set(range(colour[unit])) <= set(colour[earlier])


def test_colourings_of_the_named_masks():
    assert [c.tolist() for c in greedy_colouring(connectivity_mask("full", 2, 2))] == [
        [0], [1], [2], [3]]
    assert [c.tolist() for c in greedy_colouring(connectivity_mask("bipartite", 2, 3))] == [
        [0, 1], [2, 3, 4]]
    assert [c.tolist() for c in greedy_colouring(
        connectivity_mask("no_hidden_hidden", 2, 3))] == [[0], [1], [2, 3, 4]]
    # A layered machine needs two colours: odd layers | even layers.
    assert [c.tolist() for c in greedy_colouring(layered_mask([2, 1, 2, 1]))] == [
        [0, 1, 3, 4], [2, 5]]
    assert greedy_colouring(np.zeros((0, 0), dtype=bool)) == ()


@pytest.mark.parametrize("name, n_visible, mask", MASKS, ids=MASK_IDS)
@pytest.mark.parametrize("units", [None, "hidden", "scattered"])
def test_a_colour_update_is_the_sequential_update_of_its_units(name, n_visible, mask, units):
    """Given the same noise, the block sweep equals single-unit updates in its visiting
    order (units of one colour do not see each other), and the clamped units stay."""
    view = masked_view(mask, n_visible, temperature=1.7, seed=4)
    n = mask.shape[0]
    units = {None: None, "hidden": np.arange(n_visible, n), "scattered": [6, 1, 3, 4]}[units]
    sweep = GibbsSweep(view.coupling, view.bias, units, np.float64, mask)
    rng = np.random.default_rng(0)
    S = np.asfortranarray(rng.integers(0, 2, size=(500, n)).astype(float))
    expected = np.array(S)
    for _ in range(3):
        noise = sweep.noise(rng, 500)
        for row, unit in enumerate(sweep.units):
            field = expected @ view.coupling[:, unit] + view.bias[unit]
            expected[:, unit] = field > view.temperature * noise[row]
        sweep(S.T, noise, view.temperature)
        np.testing.assert_array_equal(S, expected)


@pytest.mark.parametrize("name", ["full", "no_hidden_hidden", "bipartite"])
def test_masks_coloured_in_index_order_keep_the_sequential_visiting_order(name):
    mask = dict((n, m) for n, _, m in MASKS)[name]
    sweep = GibbsSweep(np.zeros(mask.shape), np.zeros(mask.shape[0]), None, None, mask)
    np.testing.assert_array_equal(sweep.units, np.arange(mask.shape[0]))


# -- stationary distributions against exact enumeration --------------------------------
@pytest.mark.parametrize("name, n_visible, mask", MASKS, ids=MASK_IDS)
@pytest.mark.parametrize("temperature", [1.0, 2.3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_block_gibbs_samples_the_exact_distribution(name, n_visible, mask, temperature, dtype):
    view = masked_view(mask, n_visible, temperature, seed=1).astype(dtype)
    log_p = bm_log_probabilities(view.coupling.astype(float), view.bias.astype(float),
                                 temperature)
    rng = np.random.default_rng(0)
    S = random_chains(mask.shape[0], dtype)
    for _ in range(N_SWEEPS):
        S = view.gibbs_step(S, rng)
    assert S.dtype == dtype
    assert_samples_match(S, log_p)


@pytest.mark.parametrize("name, n_visible, mask", MASKS, ids=MASK_IDS)
def test_clamped_sweeps_sample_the_hidden_units_given_the_visible_ones(name, n_visible, mask):
    view = masked_view(mask, n_visible, temperature=1.3, seed=2)
    n = mask.shape[0]
    joint = bm_log_probabilities(view.coupling, view.bias, view.temperature)
    v = (np.arange(n_visible) % 2).astype(float)
    keep = np.all(all_states(n)[:, :n_visible] == v, axis=1)
    conditional = joint[keep] - np.log(np.exp(joint[keep]).sum())
    rng = np.random.default_rng(1)
    S = random_chains(n, np.float64)
    S[:, :n_visible] = v
    hidden = np.arange(n_visible, n)
    for _ in range(N_SWEEPS):
        bm_gibbs_sweep(S, view.coupling, view.bias, rng, view.temperature, hidden, mask)
    assert np.all(S[:, :n_visible] == v)
    assert_samples_match(S[:, n_visible:], conditional)


@pytest.mark.parametrize("name, n_visible, mask", MASKS, ids=MASK_IDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_annealing_transitions_sample_the_path_at_their_beta(name, n_visible, mask, dtype):
    """AIS sweeps with the per-beta biases (the path between the base model and the
    machine) sample p_beta, which the view's ``interpolate`` gives exactly."""
    view = masked_view(mask, n_visible, temperature=0.8, scale=1.2, seed=5)
    base = view.annealing_base(np.linspace(0.2, 0.8, n_visible), "response")
    beta = 0.6
    path = view.interpolate(beta, base)
    log_p = bm_log_probabilities(path.coupling, path.bias, path.temperature)
    chains = view.annealing(base, N_CHAINS, np.random.default_rng(3), dtype)
    chains.set_states(random_chains(mask.shape[0], dtype))
    for _ in range(N_SWEEPS):
        chains.transition(beta)
    assert_samples_match(np.asarray(chains.states, dtype=float), log_p)


@pytest.mark.parametrize("connectivity", ["bipartite", "no_hidden_hidden",
                                          layered_mask([3, 2, 2])])
def test_sample_and_gibbs_use_the_connectivity_mask(connectivity):
    X = np.random.default_rng(0).integers(0, 2, size=(30, 3))
    bm = BoltzmannMachine(n_hidden=4, connectivity=connectivity, learning="gibbs", n_iter=2,
                          random_state=0).fit(X)
    mask = bm.connectivity_mask_
    view = masked_view(mask, 3, seed=6)
    bm.coupling_, bm.bias_ = view.coupling, view.bias
    joint = bm_log_probabilities(view.coupling, view.bias).reshape(8, 16)  # (v, h)
    marginal = np.log(np.exp(joint).sum(axis=1))
    assert_samples_match(bm.sample(N_CHAINS, random_state=0, n_steps=N_SWEEPS), marginal)
    if mask[3:, 3:].any():  # gibbs draws coupled hidden units approximately
        return
    # One gibbs step from exact draws of p(v) leaves p(v) invariant.
    rng = np.random.default_rng(1)
    V = all_states(3)[rng.choice(8, size=N_CHAINS, p=np.exp(marginal))]
    assert_samples_match(bm.gibbs(V, random_state=2), marginal)


# -- the checks above catch wrong samplers ---------------------------------------------
def test_total_variation_check_fails_for_a_synchronous_sweep(monkeypatch):
    """All units in one colour (every unit updated from the previous state of the
    others) has another stationary distribution: the check must see it."""
    name, n_visible, mask = MASKS[0]
    view = masked_view(mask, n_visible, seed=1)
    log_p = bm_log_probabilities(view.coupling, view.bias)
    monkeypatch.setattr(bm_energy_module, "greedy_colouring", lambda coupled: (
        np.arange(coupled.shape[0]),))
    rng = np.random.default_rng(0)
    S = random_chains(mask.shape[0], np.float64)
    for _ in range(N_SWEEPS):
        S = view.gibbs_step(S, rng)
    assert total_variation_excess(S, log_p) > 20


@pytest.mark.parametrize("name, n_visible, mask", MASKS, ids=MASK_IDS)
def test_total_variation_check_fails_for_a_wrong_conditional(name, n_visible, mask):
    """Sweeps that ignore the temperature (sigmoid(field) instead of sigmoid(field / T))
    sample the machine at T = 1: the check must see it at T = 2.3."""
    view = masked_view(mask, n_visible, temperature=2.3, seed=1)
    log_p = bm_log_probabilities(view.coupling, view.bias, view.temperature)
    sweep = GibbsSweep(view.coupling, view.bias, None, np.float64, mask)
    rng = np.random.default_rng(0)
    S = random_chains(mask.shape[0], np.float64)
    for _ in range(N_SWEEPS):
        sweep(S.T, sweep.noise(rng, N_CHAINS), temperature=1.0)
    assert total_variation_excess(S, log_p) > 20


def test_the_mask_follows_the_view_through_casts_slices_and_layouts():
    from skboltz.models._boltzmann_energy import BMLayout

    mask = layered_mask([3, 2, 2])
    view = masked_view(mask, 3, seed=7)
    assert view.astype(np.float32).mask is mask
    assert np.array_equal(view.with_fewer_enumerated_units(5).mask, mask[:5, :5])
    assert np.array_equal(view.conditional_hidden_view(np.ones(3)).mask, mask[3:, 3:])
    packed = BMLayout.pack(view.coupling, view.bias, np.float64)
    assert BMLayout.view(packed, 3, 1.0, mask).mask is mask
    assert view.interpolate(0.5, np.zeros(7)).mask is mask
