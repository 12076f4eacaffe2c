"""Array API dispatch of the tables' estimators: CategoricalRBM and TabularRBM on
array-api-strict (always) and torch CPU (where installed).

Their namespace-generic path (skboltz/estimators/_array_api_tables.py, adapters of
skboltz/estimators/_array_api_restricted.py) computes in the input's namespace and on its device;
these tests check where results live, that a dispatched model computes what the NumPy
path computes with the same parameters (exact log Z, to 1e-10), AIS against exact
enumeration, the codes that sample and reconstruct return, partial_fit and pickling,
the refusals, scikit-learn's own array API checks and statistical agreement with the
NumPy path on a table drawn from a known categorical RBM.
"""

import copy
import itertools
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn import config_context
from sklearn.utils._array_api import yield_namespace_device_dtype_combinations
from sklearn.utils.estimator_checks import (
    check_array_api_input,
    check_array_api_same_namespace,
)

from skboltz import CategoricalRBM, TabularRBM
from skboltz.utils._array_api import to_numpy
from skboltz.exceptions import DegenerateModelWarning
from skboltz.learning import CD, PCD, ParallelTempering

from _namespaces import NAMESPACES, as_namespace, namespace_of, to_host, torch, xp_strict





def codes_table(seed=0, n_rows=1200, sizes=(3,) * 6, n_hidden=4):
    """Rows of codes drawn exactly from a categorical RBM with random parameters
    (its visible states enumerated)."""
    rng = np.random.default_rng(seed)
    W = rng.normal(0, 1.2, size=(n_hidden, sum(sizes)))
    b, c = rng.normal(0, 0.5, sum(sizes)), rng.normal(0, 0.5, n_hidden)
    states = np.array(list(itertools.product(*[range(k) for k in sizes])))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    V = np.zeros((len(states), sum(sizes)))
    V[np.arange(len(states))[:, None], starts + states] = 1
    log_p = V @ b + np.logaddexp(0, V @ W.T + c).sum(axis=1)
    p = np.exp(log_p - log_p.max())
    return states[rng.choice(len(states), size=n_rows, p=p / p.sum())].astype(float)


@pytest.fixture(scope="module")
def codes():
    return codes_table()


@pytest.fixture(scope="module")
def mixed():
    """A table of two numeric and two categorical columns (at 1 and 3) that depend
    on each other."""
    rng = np.random.default_rng(1)
    colour = rng.integers(0, 3, 300)
    size = np.where(colour == 0, 10.0, 20.0) + rng.normal(size=300)
    kind = (colour + rng.integers(0, 2, 300)) % 4
    weight = 3 * kind + rng.normal(scale=2.0, size=300)
    return np.column_stack([size, colour, weight, kind]).astype(float)


def tabular(**settings):
    return TabularRBM(**{"n_components": 4, "learning": "pcd", "learning_rate": 0.01,
                         "n_iter": 3, "categorical_features": [1, 3], "random_state": 0,
                         **settings})


# -- where the results live ----------------------------------------------------------
@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("learning", ["pcd", "cd", CD(n_steps=2, negative_visible="mean"),
                                      PCD(n_chains=7, n_steps=(1, 2)),
                                      ParallelTempering(n_temperatures=3)])
def test_categorical_computes_in_the_input_namespace(codes, name, learning):
    Xa = as_namespace(name, codes[:200])
    model = CategoricalRBM(n_components=4, n_iter=2, learning=learning,
                           momentum=(0.5, 0.9), min_categories=[3, 4, 3, 3, 3, 5],
                           random_state=0)
    with config_context(array_api_dispatch=True):
        model.fit(Xa)
        for attribute in ("components_", "intercept_hidden_", "intercept_visible_",
                          "n_categories_"):
            assert namespace_of(getattr(model, attribute)) == name, attribute
        assert to_host(model.n_categories_).tolist() == [3, 4, 3, 3, 3, 5]
        assert [to_host(c).tolist() for c in model.categories_][1] == [0, 1, 2, 3]
        assert model.components_.shape == (4, 21)
        outputs = {
            "transform": model.transform(Xa), "reconstruct": model.reconstruct(Xa),
            "free_energy": model.free_energy(Xa),
            "score_samples": model.score_samples(Xa),
            "sample": model.sample(50, n_steps=5),
            "sample_means": model.sample(3, n_steps=5, return_means=True),
        }
        for method, output in outputs.items():
            assert namespace_of(output) == name, method
        assert isinstance(model.score(Xa), float) and model.score(Xa) < 0
        assert model.estimate_log_partition().kind == "exact"
        model.partial_fit(Xa[:10, ...])
        assert model.n_iter_ == 3 and namespace_of(model.components_) == name
    if learning == "pcd":
        assert model.learning_.n_chains == 100  # the NumPy path's default
    assert model.average_window_ == 100 and model.learning_rate_ == 0.1
    for key in ("sample", "reconstruct", "sample_means"):
        rows = to_host(outputs[key])
        assert np.array_equal(rows, np.round(rows)) and rows.min() >= 0
        assert (rows < np.array([3, 4, 3, 3, 3, 5])).all()


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("categorical", [[1, 3], None, [0, 1, 2, 3]])
@pytest.mark.parametrize("learning", ["pcd", "pt"])  # "pt": TabularRBM's default
def test_tabular_computes_in_the_input_namespace(mixed, name, categorical, learning):
    X = mixed if categorical != [0, 1, 2, 3] else np.round(np.abs(mixed) % 3)
    Xa = as_namespace(name, X)
    model = tabular(categorical_features=categorical, momentum=(0.5, 0.9),
                    learning=learning)
    with config_context(array_api_dispatch=True):
        model.fit(Xa)
        for attribute in ("components_", "intercept_hidden_", "intercept_visible_",
                          "variance_", "numeric_mean_", "numeric_scale_",
                          "is_categorical_", "n_categories_"):
            assert namespace_of(getattr(model, attribute)) == name, attribute
        outputs = {
            "transform": model.transform(Xa), "reconstruct": model.reconstruct(Xa),
            "free_energy": model.free_energy(Xa),
            "score_samples": model.score_samples(Xa),
            "sample": model.sample(40, n_steps=5),
        }
        for method, output in outputs.items():
            assert namespace_of(output) == name, method
        model.partial_fit(Xa[:20, ...])
        assert model.n_iter_ == 4
    mask = to_host(model.is_categorical_)
    assert mask.tolist() == [j in (categorical or []) for j in range(4)]
    n_categories = to_host(model.n_categories_)
    for key in ("sample", "reconstruct"):
        rows = to_host(outputs[key])
        assert rows.shape == (len(rows), 4)
        assert np.array_equal(rows[:, mask], np.round(rows[:, mask]))
        assert (rows[:, mask] >= 0).all() and (rows[:, mask] < n_categories).all()
    if categorical == [1, 3]:  # numeric columns back in the input's units
        assert abs(to_host(outputs["sample"])[:, 0].mean() - 15) < 5


@pytest.mark.parametrize("estimator", [CategoricalRBM(n_components=4, n_iter=1),
                                       tabular()], ids=["categorical", "tabular"])
def test_float32_and_integer_input(codes, mixed, estimator):
    X = codes[:100] if isinstance(estimator, CategoricalRBM) else mixed[:100]
    with config_context(array_api_dispatch=True):
        model = estimator.fit(xp_strict.asarray(X.astype(np.float32)))
        assert model.components_.dtype == xp_strict.float32
        assert model.transform(xp_strict.asarray(X.astype(np.float32))).dtype == \
            xp_strict.float32
        assert model.score_samples(xp_strict.asarray(X.astype(np.float32))).dtype == \
            xp_strict.float64
    if isinstance(estimator, CategoricalRBM):  # codes of an integer dtype
        with config_context(array_api_dispatch=True):
            model = CategoricalRBM(n_components=4, n_iter=1, random_state=0).fit(
                xp_strict.asarray(X.astype(np.int64)))
            assert model.components_.dtype == xp_strict.float64
            assert model.sample(2).dtype == xp_strict.float64


def test_array_api_strict_other_device(codes, mixed):
    device = xp_strict.Device("device1")
    for model, X in ((CategoricalRBM(n_components=4, n_iter=1), codes[:100]),
                     (tabular(), mixed)):
        Xa = xp_strict.asarray(X, device=device)
        with config_context(array_api_dispatch=True):
            model.fit(Xa)
            assert model.components_.device == device
            assert model.n_categories_.device == device
            assert model.transform(Xa).device == device
            assert model.score_samples(Xa).device == device
            assert model.sample(2, n_steps=2).device == device
            assert model.reconstruct(Xa).device == device


# -- the same numbers as the NumPy path ---------------------------------------------
def _with_parameters_of(model, numpy_model, xp):
    """``model`` (fitted under dispatch) given the parameters of ``numpy_model``."""
    names = ["components_", "intercept_visible_", "intercept_hidden_"]
    if isinstance(model, TabularRBM):
        names += ["variance_", "numeric_mean_", "numeric_scale_"]
    for name in names:
        setattr(model, name, xp.asarray(getattr(numpy_model, name)))
    return model


@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("kind", ["categorical", "tabular", "tabular_numeric",
                                  "tabular_codes"])
def test_same_parameters_same_results_as_numpy(codes, mixed, name, kind):
    if kind == "categorical":
        X, make = codes[:300], lambda: CategoricalRBM(n_components=5, n_iter=2,
                                                      random_state=0)
    else:
        categorical = {"tabular": [1, 3], "tabular_numeric": None,
                       "tabular_codes": [0, 1, 2, 3]}[kind]
        X = mixed if kind != "tabular_codes" else np.round(np.abs(mixed) % 3)
        make = lambda: tabular(n_iter=5, categorical_features=categorical)  # noqa: E731
    numpy_model = make().fit(X)
    Xa = as_namespace(name, X)
    xp = torch if name == "torch" else xp_strict
    with config_context(array_api_dispatch=True):
        model = _with_parameters_of(make().fit(Xa), numpy_model, xp)
        results = {method: to_host(getattr(model, method)(Xa))
                   for method in ("transform", "free_energy", "score_samples")}
        reconstruct = to_host(model.reconstruct(Xa))
        log_z = model.estimate_log_partition("exact").value
    assert log_z == pytest.approx(numpy_model.estimate_log_partition("exact").value,
                                  abs=1e-10)
    for method, result in results.items():
        np.testing.assert_allclose(result, getattr(numpy_model, method)(X), rtol=0,
                                   atol=1e-10, err_msg=method)
    # the codes equal, the numbers to rounding
    np.testing.assert_allclose(reconstruct, numpy_model.reconstruct(X), rtol=0, atol=1e-10)


@pytest.mark.parametrize("kind", ["categorical", "tabular"])
def test_ais_agrees_with_exact(codes, mixed, kind):
    if kind == "categorical":  # the visible groups annealed
        model, X = CategoricalRBM(n_components=8, n_iter=5, random_state=0), codes[:400]
    else:  # the hidden units annealed, the visible groups summed out
        model, X = tabular(n_components=8, n_iter=20), mixed
    with config_context(array_api_dispatch=True):
        model.fit(xp_strict.asarray(X))
        exact = model.estimate_log_partition("exact")
        ais = model.estimate_log_partition("ais")
    assert ais.method == "ais" and exact.method == "exact"
    assert abs(ais.value - exact.value) < max(4 * ais.std_error, 0.02)


def test_categories_learnt_as_the_numpy_path_learns_them(codes, mixed):
    with config_context(array_api_dispatch=True):
        model = CategoricalRBM(n_components=3, n_iter=1, min_categories=4,
                               random_state=0).fit(xp_strict.asarray(codes[:50]))
        table = tabular(n_iter=1).fit(xp_strict.asarray(mixed))
    numpy_model = CategoricalRBM(n_components=3, n_iter=1, min_categories=4).fit(codes[:50])
    assert to_host(model.n_categories_).tolist() == numpy_model.n_categories_.tolist()
    numpy_table = tabular(n_iter=1).fit(mixed)
    for name in ("n_categories_", "is_categorical_", "numeric_mean_", "numeric_scale_"):
        np.testing.assert_array_equal(to_host(getattr(table, name)),
                                      getattr(numpy_table, name))
    assert [to_host(c).tolist() for c in table.categories_] == \
        [c.tolist() for c in numpy_table.categories_]


def test_same_seed_same_fit_and_numpy_path_unchanged(codes, mixed):
    for make, X in ((lambda: CategoricalRBM(n_components=4, n_iter=2, random_state=3),
                     codes[:200]), (lambda: tabular(n_iter=2), mixed)):
        with config_context(array_api_dispatch=True):
            first = make().fit(xp_strict.asarray(X))
            second = make().fit(xp_strict.asarray(X))
            numpy_dispatched = make().fit(X)
        np.testing.assert_array_equal(to_host(first.components_),
                                      to_host(second.components_))
        assert type(numpy_dispatched.components_) is np.ndarray
        np.testing.assert_array_equal(numpy_dispatched.components_,
                                      make().fit(X).components_)


@pytest.mark.filterwarnings("ignore::skboltz.exceptions.DataScaleWarning")
def test_data_frames_take_the_numpy_path(mixed):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(mixed, columns=["size", "colour", "weight", "kind"])
    with config_context(array_api_dispatch=True):
        model = tabular(categorical_features=["colour", "kind"]).fit(frame)
    assert type(model.components_) is np.ndarray


# -- training continues, models pickle ----------------------------------------------------
@pytest.mark.parametrize("name", NAMESPACES)
@pytest.mark.parametrize("kind", ["categorical", "tabular"])
def test_pickled_model_continues_alike(codes, mixed, name, kind):
    make, X = ((lambda: CategoricalRBM(n_components=4, n_iter=1, random_state=0),
                codes[:100]) if kind == "categorical" else (tabular, mixed))
    Xa = as_namespace(name, X)
    with config_context(array_api_dispatch=True):
        model = make().fit(Xa)
        copy = pickle.loads(pickle.dumps(model))
        np.testing.assert_array_equal(to_host(copy.score_samples(Xa)),
                                      to_host(model.score_samples(Xa)))
        model.partial_fit(Xa)
        copy.partial_fit(Xa)
        np.testing.assert_array_equal(to_host(copy.components_), to_host(model.components_))
        np.testing.assert_array_equal(to_host(copy.sample(3, random_state=0)),
                                      to_host(model.sample(3, random_state=0)))


def test_partial_fit_from_scratch_and_after_edits(mixed):
    Xa = xp_strict.asarray(mixed)
    with config_context(array_api_dispatch=True):
        model = tabular()
        for start in range(0, 300, 100):
            model.partial_fit(Xa[start:start + 100, ...])
        assert model.n_iter_ == 3
        # edited variances count, as on the NumPy path
        before = to_host(model.score_samples(Xa))
        model.variance_ = model.variance_ * 2.0
        assert not np.allclose(to_host(model.score_samples(Xa)), before)
        model.partial_fit(Xa)
        assert model.n_iter_ == 4


# -- what is refused ----------------------------------------------------------------
@pytest.mark.parametrize("estimator", [CategoricalRBM(n_components=2, n_iter=1),
                                       tabular()], ids=["categorical", "tabular"])
def test_missing_entries_are_refused_and_zero_weights_are_no_rows(codes, mixed,
                                                                  estimator):
    X = (codes if isinstance(estimator, CategoricalRBM) else mixed)[:50].copy()
    X_missing = X.copy()
    X_missing[3, 1] = np.nan
    with config_context(array_api_dispatch=True):
        with pytest.raises(ValueError, match="missing entries .NaN. are not supported"):
            estimator.fit(xp_strict.asarray(X_missing))
        assert not hasattr(estimator, "n_features_in_")  # put back
        keep = np.arange(50) % 5 != 0
        weighted = clone(estimator).set_params(random_state=0).fit(
            xp_strict.asarray(X), sample_weight=keep.astype(float))
        kept = clone(estimator).set_params(random_state=0).fit(xp_strict.asarray(X[keep]))
        np.testing.assert_array_equal(to_numpy(weighted.components_, xp_strict),
                                      to_numpy(kept.components_, xp_strict))
        estimator.fit(xp_strict.asarray(X))
        with pytest.raises(ValueError, match="missing entries .NaN. are not supported"):
            estimator.score_samples(xp_strict.asarray(X_missing))


def test_codes_are_checked_as_on_the_numpy_path(codes, mixed):
    cases = [
        (CategoricalRBM(n_components=2, n_iter=1), codes[:50], 1, -1.0,
         "Negative values in data passed to CategoricalRBM"),
        (CategoricalRBM(n_components=2, n_iter=1), codes[:50], 1, 0.5,
         "integer category codes; column 1 holds 0.5"),
        (CategoricalRBM(n_components=2, n_iter=1), codes[:50], 1, 7.0,
         "column 1 holds the code 7, but the model knows 3 categories"),
        (tabular(), mixed, 1, -1.0, "the categorical column 1 holds -1"),
        (tabular(), mixed, 3, 1.5, "the categorical column 3 holds 1.5"),
        (tabular(), mixed, 3, 9.0, "column 3 holds the code 9, but the model knows 4"),
    ]
    for estimator, X, column, value, message in cases:
        wrong = X.copy()
        wrong[5, column] = value
        with config_context(array_api_dispatch=True):
            model = estimator.fit(xp_strict.asarray(X))
            with pytest.raises(ValueError, match=message):
                model.transform(xp_strict.asarray(wrong))
            with pytest.raises(ValueError, match=message):
                model.partial_fit(xp_strict.asarray(wrong))
            if value < 7:  # a first fit refuses it too (a larger code is a category)
                with pytest.raises(ValueError, match=message):
                    estimator.fit(xp_strict.asarray(wrong))
        with pytest.raises(ValueError, match=message):  # the NumPy path's own error
            estimator.fit(X).transform(wrong)


def test_a_constant_numeric_column_is_refused(mixed):
    X = mixed.copy()
    X[:, 2] = 1.0
    with config_context(array_api_dispatch=True), pytest.raises(
            ValueError, match="cannot model the constant numeric column"):
        tabular().fit(xp_strict.asarray(X))


@pytest.mark.parametrize("estimator, setting", [
    (CategoricalRBM(z_estimator="visited_states"), "z_estimator='visited_states'"),
    (tabular(z_estimator="visited_states"), "z_estimator='visited_states'"),
])
def test_unsupported_settings_are_refused(codes, estimator, setting):
    assert not estimator.__sklearn_tags__().array_api_support
    with config_context(array_api_dispatch=True), pytest.raises(
            ValueError, match="not available under array API dispatch"):
        estimator.fit(xp_strict.asarray(codes[:50]))
    assert CategoricalRBM().__sklearn_tags__().array_api_support
    assert TabularRBM().__sklearn_tags__().array_api_support


def test_namespace_mismatch_is_refused(codes):
    X = codes[:100]
    with config_context(array_api_dispatch=True):
        model = CategoricalRBM(n_components=2, n_iter=1).fit(xp_strict.asarray(X))
        with pytest.raises(ValueError, match="must use the same namespace"):
            model.score_samples(X)
    with pytest.raises(ValueError, match="array_api_dispatch=True"):
        model.transform(X)


# -- scikit-learn's checks ----------------------------------------------------------
ARRAY_API_ESTIMATORS = [
    CategoricalRBM(n_components=3, n_iter=3),
    TabularRBM(n_components=3, n_iter=3),  # parallel tempering
    CategoricalRBM(n_components=3, z_estimator="ais", min_categories=4, n_iter=2),
    TabularRBM(n_components=3, learning="pcd", learning_rate=0.01, n_iter=3),
    TabularRBM(n_components=3, learning="cd", learning_rate=0.01, n_iter=3,
               categorical_features=[0, 3]),
]


@pytest.mark.parametrize("estimator", ARRAY_API_ESTIMATORS, ids=repr)
@pytest.mark.parametrize(
    "array_namespace, device_name, dtype_name",
    list(yield_namespace_device_dtype_combinations()),
)
def test_sklearn_array_api_input_check(estimator, array_namespace, device_name,
                                       dtype_name):
    if device_name == "cuda" and (torch is None or not torch.cuda.is_available()):
        pytest.skip("no CUDA device")
    assert estimator.__sklearn_tags__().array_api_support
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateModelWarning)
        check_array_api_input(type(estimator).__name__, estimator, array_namespace,
                              device_name=device_name, dtype_name=dtype_name)


@pytest.mark.parametrize("estimator", ARRAY_API_ESTIMATORS[:2],
                         ids=repr)
def test_sklearn_array_api_same_namespace_check(estimator):
    check_array_api_same_namespace(type(estimator).__name__, estimator,
                                   "array_api_strict")


# -- statistical agreement --------------------------------------------------------
def test_statistical_agreement_with_numpy():
    """The held-out mean log-likelihood (exact log Z) of CategoricalRBM at its
    defaults (PCD with 100 chains, averaging) within 0.2 nats of the NumPy path's, as
    means over three seeds, on 800 rows of six 3-category columns drawn from a known
    categorical RBM (400 held out). The two paths draw different random numbers, so
    they are different fits; measured here, the means were within 0.005 nats
    (-3.442 for both, on array-api-strict and torch CPU alike)."""
    X = codes_table()
    train, test = X[:800], X[800:]
    name = "torch" if torch is not None else "array_api_strict"
    numpy_scores, dispatched_scores = [], []
    for seed in range(3):
        settings = {"n_components": 6, "n_iter": 20, "random_state": seed}
        numpy_scores.append(CategoricalRBM(**settings).fit(train).score(test))
        with config_context(array_api_dispatch=True):
            model = CategoricalRBM(**settings).fit(as_namespace(name, train))
            dispatched_scores.append(model.score(as_namespace(name, test)))
    assert abs(np.mean(dispatched_scores) - np.mean(numpy_scores)) < 0.2, (
        dispatched_scores, numpy_scores)


def test_tabular_statistical_agreement_with_numpy():
    """The same for TabularRBM at its defaults (parallel tempering) but 4 hidden
    units and 20 epochs, on 600 rows of a mixed table (two numeric columns, two
    categorical ones that they depend on; 300 held out): the held-out mean log
    density (exact log Z, in the input's units) within 0.2 nats of the NumPy path's,
    as means over three seeds. Measured on torch CPU: -6.296 (NumPy) and -6.302."""
    rng = np.random.default_rng(1)
    colour = rng.integers(0, 3, 900)
    size = np.where(colour == 0, 10.0, 20.0) + rng.normal(size=900)
    kind = (colour + rng.integers(0, 2, 900)) % 4
    weight = 3 * kind + rng.normal(scale=2.0, size=900)
    X = np.column_stack([size, colour, weight, kind])
    train, test = X[:600], X[600:]
    name = "torch" if torch is not None else "array_api_strict"
    numpy_scores, dispatched_scores = [], []
    for seed in range(3):
        settings = {"n_components": 4, "n_iter": 20, "categorical_features": [1, 3],
                    "random_state": seed}
        numpy_scores.append(TabularRBM(**settings).fit(train).score(test))
        with config_context(array_api_dispatch=True):
            model = TabularRBM(**settings).fit(as_namespace(name, train))
            dispatched_scores.append(model.score(as_namespace(name, test)))
    assert abs(np.mean(dispatched_scores) - np.mean(numpy_scores)) < 0.2, (
        dispatched_scores, numpy_scores)


def test_collapsed_variance_names_the_column(mixed):
    """The per-epoch check of the dispatched path names a numeric column whose variance
    collapsed, with the NumPy path's message."""
    from skboltz.estimators._array_api_tables import TabularRBMArrayAPI
    from skboltz.exceptions import TrainingDivergedError

    with config_context(array_api_dispatch=True):
        model = tabular(n_iter=1).fit(xp_strict.asarray(mixed))
        state = copy.copy(model._training_state)
        log_variance = np.zeros(2)
        log_variance[1] = -20.0  # the second numeric column: position 2 in the table
        state.iterate = {**state.iterate, "log_variance": xp_strict.asarray(log_variance)}
        with pytest.raises(TrainingDivergedError, match=r"column\(s\) 2 collapsed"):
            TabularRBMArrayAPI.check_epoch(model, state, None)
