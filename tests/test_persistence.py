"""Pickle round trips, training continued after unpickling, and reproducibility."""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from skboltz import DBN, RBM, BoltzmannMachine

X = (np.random.default_rng(0).random((60, 6)) < 0.4).astype(float)

MODELS = {
    "RBM-pcd": lambda seed: RBM(n_components=4, n_iter=2, random_state=seed),
    "RBM-pt": lambda seed: RBM(n_components=4, learning="pt", n_iter=2, random_state=seed),
    "BM-gibbs": lambda seed: BoltzmannMachine(n_hidden=2, n_iter=2, random_state=seed),
    "BM-exact": lambda seed: BoltzmannMachine(n_hidden=2, learning="exact", n_iter=2,
                                              random_state=seed),
    "DBN": lambda seed: DBN(hidden_layer_sizes=(4, 3), rbm=RBM(n_iter=2), random_state=seed),
}


def parameters(model):
    """Every fitted parameter array of a model, in a fixed order."""
    if isinstance(model, DBN):
        return [a for layer in model.layers_ for a in parameters(layer)]
    if isinstance(model, RBM):
        return [model.components_, model.intercept_hidden_, model.intercept_visible_]
    return [model.coupling_, model.bias_]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_pickle_round_trip_then_partial_fit_continues_identically(name):
    model = MODELS[name](0).fit(X)
    restored = pickle.loads(pickle.dumps(model))
    assert_array_equal(restored.transform(X), model.transform(X))
    model.partial_fit(X)
    restored.partial_fit(X)
    for original, copy in zip(parameters(model), parameters(restored)):
        assert_array_equal(copy, original)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_same_random_state_gives_identical_models_and_samples(name):
    first, second, other = MODELS[name](3).fit(X), MODELS[name](3).fit(X), MODELS[name](4).fit(X)
    for a, b in zip(parameters(first), parameters(second)):
        assert_array_equal(a, b)
    assert not all(np.array_equal(a, c) for a, c in zip(parameters(first), parameters(other)))
    assert_array_equal(first.sample(5, random_state=1), second.sample(5, random_state=1))


@pytest.mark.parametrize("learning", ["pcd", "pt", "cd"])
def test_pickle_holds_the_training_state_not_drawn_noise(learning):
    # What continuing needs: the average, the iterate, the velocity and the chains,
    # besides the public parameters; the training noise is pickled as the generator
    # states its blocks were drawn from (a few hundred bytes), not as the blocks
    # (0.5 MB), and continues exactly (test above).
    model = RBM(n_components=16, learning=learning, n_iter=2, random_state=0).fit(X)
    state = model._training_state
    arrays = [model.components_, model.intercept_hidden_, model.intercept_visible_,
              state.params, state.iterate, state.velocity,
              *[v for v in (state.sampler or {}).values() if isinstance(v, np.ndarray)]]
    needed = sum(a.nbytes for a in arrays)
    assert len(pickle.dumps(model)) < needed + 6000


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_and_dense_rows_give_bit_identical_fits(dtype):
    """The data's rates (biases, centring offsets, the samplers' base) were means that
    scipy computes otherwise: a DBM fitted on sparse rows differed from the dense fit
    by 4e-14, float32 rates by 6e-6."""
    import scipy.sparse as sp

    from skboltz import DBM, RBMClassifier
    from skboltz.utils._energy import column_means

    rows = (np.random.default_rng(1).random((200, 12)) < 0.3).astype(dtype)
    rows[:, 0] *= 0.37  # grey levels: sums that round
    sparse = sp.csr_matrix(rows)
    assert_array_equal(column_means(sparse), column_means(rows))
    y = np.arange(200) % 3
    makes = [
        lambda: DBM(hidden_layer_sizes=(5, 3), pretraining_iter=2, n_iter=2,
                    random_state=0),
        lambda: DBM(hidden_layer_sizes=(5, 3), n_iter=2, random_state=0),
        lambda: RBM(n_components=4, visible_bias_init="data_rates", n_iter=2,
                    random_state=0),
        lambda: RBMClassifier(n_components=4, n_iter=2, random_state=0),
        lambda: BoltzmannMachine(n_hidden=2, n_iter=2, random_state=0),
    ]
    for make in makes:
        dense_fit, sparse_fit = make().fit(rows, y), make().fit(sparse, y)
        for name, value in vars(dense_fit).items():
            if name.endswith("_") and not name.startswith("_") and name != "classes_":
                other = getattr(sparse_fit, name)
                if isinstance(value, list):
                    value, other = np.concatenate(value, None), np.concatenate(other, None)
                if isinstance(value, np.ndarray):
                    assert_array_equal(other, value, err_msg=f"{make()!r}.{name}")
        assert_array_equal(sparse_fit._training_state.data_rates,
                           dense_fit._training_state.data_rates)
