"""Table-driven bad-input tests: every public estimator and method, each bad input.

Each row states the documented behaviour: a ValueError/TypeError whose message says
what is wrong, a warning that says how to fix the data, or acceptance.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose

from skboltz import RBM, BoltzmannMachine
from skboltz.exceptions import DataRangeWarning, TooManyStatesError
from skboltz.learning import CD, PCD

# Factories of small unfitted estimators; other models join this table as they land.
ESTIMATORS = {
    "RBM": lambda: RBM(n_components=3, n_iter=2, random_state=0),
    "BoltzmannMachine": lambda: BoltzmannMachine(n_hidden=2, learning="exact", max_iter=2,
                                                 random_state=0),
    "BoltzmannMachine-gibbs": lambda: BoltzmannMachine(n_hidden=2, max_iter=2,
                                                       random_state=0),
}

RNG = np.random.default_rng(0)
GOOD = (RNG.random((30, 5)) > 0.5).astype(float)

# (name, bad input, exception type, message pattern)
BAD_INPUTS = [
    ("nan", np.where(GOOD > 0, np.nan, 0.0), ValueError, "NaN"),
    ("inf", np.where(GOOD > 0, np.inf, 0.0), ValueError, "infinity"),
    ("empty", np.zeros((0, 5)), ValueError, "0 sample"),
    ("one-d", GOOD[0], ValueError, "2D array"),
    ("three-d", GOOD[None], ValueError, "dim 3"),
    ("strings", np.array([["a"] * 5] * 4), ValueError, "(string|float)"),
]

FITTED_METHODS = ["transform", "score_samples", "score", "free_energy", "partial_fit"]


@pytest.fixture(params=sorted(ESTIMATORS))
def make_estimator(request):
    return ESTIMATORS[request.param]


@pytest.mark.parametrize("name, X, error, message", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_fit_rejects_bad_input(make_estimator, name, X, error, message):
    with pytest.raises(error, match=message):
        make_estimator().fit(X)


@pytest.mark.parametrize("method", FITTED_METHODS)
@pytest.mark.parametrize("name, X, error, message", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_fitted_methods_reject_bad_input_and_keep_the_model(
    make_estimator, method, name, X, error, message
):
    estimator = make_estimator().fit(GOOD)
    before = estimator.score_samples(GOOD)
    with pytest.raises(error, match=message):
        getattr(estimator, method)(X)
    assert_allclose(estimator.score_samples(GOOD), before)


@pytest.mark.parametrize("method", FITTED_METHODS)
def test_wrong_number_of_features_after_fit(make_estimator, method):
    estimator = make_estimator().fit(GOOD)
    with pytest.raises(ValueError, match="5 features"):
        getattr(estimator, method)(GOOD[:, :4])


@pytest.mark.parametrize("method", ["transform", "score_samples", "free_energy"])
def test_methods_before_fit_say_so(make_estimator, method):
    with pytest.raises(Exception, match="not fitted"):
        getattr(make_estimator(), method)(GOOD)


def test_single_sample_is_accepted(make_estimator):
    estimator = make_estimator().fit(GOOD[:1])
    assert estimator.transform(GOOD[:1]).shape[0] == 1
    assert np.isfinite(estimator.score(GOOD[:1]))


@pytest.mark.parametrize("to_sparse", [sp.csr_matrix, sp.csc_matrix, sp.coo_matrix,
                                       sp.csr_array], ids=lambda f: f.__name__)
def test_sparse_formats_match_dense(make_estimator, to_sparse):
    dense = make_estimator().fit(GOOD)
    sparse = make_estimator().fit(to_sparse(GOOD))
    assert_allclose(sparse.score_samples(to_sparse(GOOD)), dense.score_samples(GOOD))
    assert_allclose(sparse.transform(to_sparse(GOOD)), dense.transform(GOOD))


def test_non_contiguous_and_read_only_arrays_work(make_estimator):
    reference = make_estimator().fit(GOOD)
    fortran = np.asfortranarray(GOOD)
    strided = np.repeat(GOOD, 2, axis=1)[:, ::2]
    read_only = GOOD.copy()
    read_only.flags.writeable = False
    for X in (fortran, strided, read_only):
        fitted = make_estimator().fit(X)
        assert_allclose(fitted.score_samples(X), reference.score_samples(GOOD))


def test_out_of_range_values_are_accepted_with_a_warning(make_estimator):
    with pytest.warns(DataRangeWarning, match="MinMaxScaler"):
        estimator = make_estimator().fit(GOOD * 3 - 1)
    assert np.all(np.isfinite(estimator.transform(GOOD * 3 - 1)))


def test_too_large_for_exact_enumeration_names_alternatives():
    estimator = RBM(n_components=40, n_iter=1, z_estimator="exact", random_state=0)
    estimator.fit((RNG.random((50, 40)) > 0.5).astype(float))
    with pytest.raises(TooManyStatesError, match="'ais'.*'mean_field'"):
        estimator.score_samples(np.zeros((1, 40)))
    with pytest.raises(TooManyStatesError, match="max_states"):
        estimator.estimate_log_partition("exact")


def test_unknown_strategy_names_are_rejected_with_choices(make_estimator):
    with pytest.raises(ValueError, match="learning"):
        make_estimator().set_params(learning="nonsense").fit(GOOD)
    estimator = make_estimator().fit(GOOD)
    with pytest.raises(ValueError, match="choose one of"):
        estimator.estimate_log_partition("nonsense")


@pytest.mark.parametrize("params, message", [
    ({"n_components": 0}, "n_components"),
    ({"learning_rate": -1.0}, "learning_rate"),
    ({"batch_size": 0}, "batch_size"),
    ({"momentum": 1.5}, "momentum"),
    ({"momentum": (0.5, 1.5)}, "momentum"),
    ({"learning": PCD(n_chains=0)}, "n_chains"),
    ({"learning": CD(n_steps=0)}, "n_steps"),
    ({"validation_fraction": 1.0}, "validation_fraction"),
])
def test_invalid_parameters_are_named(params, message):
    with pytest.raises(ValueError, match=message):
        RBM(**params).fit(GOOD)
