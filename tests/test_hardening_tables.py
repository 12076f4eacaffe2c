"""Tables, categories, pandas and the imputer under hostile input (issue 44): numbers
in a column of declared categories, numeric columns of huge magnitude, chains and
categories bounded by the rows, pandas' nullable dtypes, and an imputer whose refit
fails. Each test failed before its fix."""

import numpy as np
import pandas as pd
import pytest
from sklearn import config_context

from skboltz import CategoricalRBM, GaussianRBM, RBMImputer, TabularRBM
from skboltz.utils._array_api import to_numpy
from skboltz.exceptions import DataRangeWarning, TrainingDivergedError

from _namespaces import xp_strict


def small_tabular(**settings):
    return TabularRBM(**{"n_components": 3, "learning": "pcd", "n_iter": 2,
                         "random_state": 0, **settings})


@pytest.fixture(scope="module")
def table():
    """A numeric column, a Categorical of the numbers 1, 2, 3, and a column of codes."""
    rng = np.random.default_rng(0)
    level = rng.integers(1, 4, 60)
    return pd.DataFrame({"x": level + rng.normal(size=60),
                         "level": pd.Categorical(level),
                         "code": rng.integers(0, 3, 60)})


# -- numbers in a column of declared categories ----------------------------------------
def test_numbers_in_a_column_of_categories_are_its_values(table):
    model = small_tabular(categorical_features=["level", "code"]).fit(table)
    assert list(model.categories_[0]) == [1, 2, 3]
    read_back = table.assign(level=table["level"].to_numpy().astype(np.int64))
    np.testing.assert_array_equal(model.score_samples(read_back),
                                  model.score_samples(table))
    np.testing.assert_array_equal(model.transform(read_back.astype({"level": float})),
                                  model.transform(table))
    with pytest.raises(ValueError, match=r"'level' holds the category 4, which the model "
                       r"does not know \(its categories: \[1, 2, 3\].*looked up in "
                       "categories_"):
        model.score_samples(read_back.assign(level=read_back["level"] + 1))
    # a column of codes still reads numbers as codes, and refuses one beyond them
    with pytest.raises(ValueError, match="'code' holds the code 3, but the model knows 3"):
        model.score_samples(table.assign(code=table["code"] + 1))


# -- numeric columns of huge magnitude -------------------------------------------------
@pytest.mark.parametrize("exponent", [532, 1000])  # magnitudes of about 1e160, 1e301
def test_a_huge_numeric_column_is_standardised_without_overflow(exponent):
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(size=60), rng.normal(size=60),
                         rng.integers(0, 3, 60)])
    huge = X.copy()
    huge[:, 0] = np.ldexp(X[:, 0], exponent)  # exactly 2**exponent times
    small = small_tabular(categorical_features=[2]).fit(X)
    model = small_tabular(categorical_features=[2]).fit(huge)
    # the standardised columns, hence the model, are the small table's exactly
    assert model.numeric_scale_[0] == np.ldexp(small.numeric_scale_[0], exponent)
    assert model.numeric_mean_[0] == np.ldexp(small.numeric_mean_[0], exponent)
    np.testing.assert_array_equal(model.components_, small.components_)
    # and the density is in the input's units: the log-Jacobian of the factor
    np.testing.assert_allclose(model.score_samples(huge),
                               small.score_samples(X) - exponent * np.log(2), rtol=1e-12)
    with config_context(array_api_dispatch=True):
        dispatched = small_tabular(categorical_features=[2]).fit(xp_strict.asarray(huge))
        scores = to_numpy(dispatched.score_samples(xp_strict.asarray(huge)), xp_strict)
    assert float(to_numpy(dispatched.numeric_scale_, xp_strict)[0]) == \
        model.numeric_scale_[0]
    assert np.isfinite(scores).all()


def test_gaussian_rbm_says_a_column_is_constant_because_it_was_clipped():
    rng = np.random.default_rng(2)
    X = np.column_stack([1e160 * (1 + rng.uniform(size=40)), rng.normal(size=40)])
    with pytest.warns(DataRangeWarning), pytest.raises(
            ValueError, match=r"feature\(s\) \[0\]: their values lie beyond \+-1.16e\+77, "
                              "where they were clipped"):
        GaussianRBM(n_components=2, n_iter=1).fit(X)


# -- chains and categories bounded by the rows -----------------------------------------
def test_categorical_rbm_chains_never_outnumber_the_rows():
    X = np.random.default_rng(3).integers(0, 3, size=(80, 4))
    model = CategoricalRBM(n_components=3, batch_size=10**9, n_iter=1,
                           random_state=0).fit(X)  # was a MemoryError naming n_chains
    assert model.learning_.n_chains is None
    assert model._training_state.sampler["chains"].shape[0] == 80
    default = CategoricalRBM(n_components=3, n_iter=1, random_state=0).fit(X)
    assert default.learning_.n_chains == 100  # the default's 100 chains stay
    assert default._training_state.sampler["chains"].shape[0] == 100


def codes_with(code, column=1, n_rows=80):
    X = np.random.default_rng(4).integers(0, 3, size=(n_rows, 3)).astype(float)
    X[7, column] = code
    return X


@pytest.mark.parametrize("code, shown", [(1e5, "100000, which would make 100,001"),
                                         (1e9, "1000000000, which would make "
                                               "1,000,000,001"),
                                         (1e20, r"1e\+20, which would make 1e\+20")])
def test_a_code_far_beyond_the_rows_is_refused(code, shown):
    X = codes_with(code)
    message = f"the column {{}} holds the code {shown} categories"
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    cases = [
        (CategoricalRBM(n_components=2, n_iter=1), X, "1"),
        (small_tabular(categorical_features=[1]), X, "1"),
        (small_tabular(categorical_features=["b"]), frame, "'b'"),
    ]
    for estimator, rows, name in cases:
        with pytest.raises(ValueError, match=message.format(name)):
            estimator.fit(rows)
        if not isinstance(rows, pd.DataFrame):
            with config_context(array_api_dispatch=True), pytest.raises(
                    ValueError, match=message.format(name)):
                estimator.fit(xp_strict.asarray(rows))


def test_the_category_limit_and_min_categories():
    # 80 rows: at most max(1000, 10 x 80) = 1000 categories, codes 0 to 999
    model = CategoricalRBM(n_components=2, n_iter=1).fit(codes_with(999.0))
    assert model.n_categories_[1] == 1000
    with pytest.raises(ValueError, match="at most max.1000, 10 x rows. = 1,000"):
        CategoricalRBM(n_components=2, n_iter=1).fit(codes_with(1000.0))
    # 120 rows: 1200 categories
    assert CategoricalRBM(n_components=2, n_iter=1).fit(
        codes_with(1199.0, n_rows=120)).n_categories_[1] == 1200
    # declared categories lift the limit
    model = CategoricalRBM(n_components=2, n_iter=1,
                           min_categories=[1, 1500, 1]).fit(codes_with(1499.0))
    assert model.n_categories_[1] == 1500


def test_a_huge_code_in_a_later_call_is_named_by_the_model_that_refuses_it():
    X = codes_with(2.0)
    wrong = codes_with(1e20)
    model = small_tabular(categorical_features=[1]).fit(X)
    with pytest.raises(ValueError, match=r"TabularRBM: the column 1 holds the code "
                                         r"1e\+20, but the model knows 3 categories"):
        model.score_samples(wrong)
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).astype({"b": np.int64})
    model = small_tabular(categorical_features=["b"]).fit(frame)
    with pytest.raises(ValueError, match=r"'b' holds the code 1e\+20, but the model "
                                         "knows 3 categories"):
        model.score_samples(pd.DataFrame(wrong, columns=["a", "b", "c"]))


# -- pandas' nullable dtypes -------------------------------------------------------------
def test_nullable_integer_and_float_columns_are_numeric(table):
    nullable = table.convert_dtypes()
    assert str(nullable.dtypes["x"]) == "Float64" and str(nullable.dtypes["code"]) == "Int64"
    plain = small_tabular().fit(table)
    model = small_tabular().fit(nullable)
    np.testing.assert_array_equal(model.is_categorical_, [False, True, False])
    np.testing.assert_array_equal(model.components_, plain.components_)
    missing, with_nan = nullable.copy(), table.astype({"code": float})
    missing.loc[[2, 5], "x"] = pd.NA
    missing.loc[[3], "code"] = pd.NA
    with_nan.loc[[2, 5], "x"] = np.nan
    with_nan.loc[[3], "code"] = np.nan
    np.testing.assert_array_equal(model.score_samples(missing),
                                  plain.score_samples(with_nan))


def test_the_imputer_fills_a_nullable_numeric_frame():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 3))
    X[::4, 1] = np.nan
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    nullable = frame.convert_dtypes()
    assert nullable["b"].isna().sum() == 15
    estimator = GaussianRBM(n_components=2, n_iter=2)
    expected = RBMImputer(estimator, random_state=0).fit_transform(frame)
    filled = RBMImputer(estimator, random_state=0).fit_transform(nullable)
    np.testing.assert_array_equal(filled, expected)


def test_pandas_output_of_a_mixed_frame_keeps_the_columns_kinds():
    rng = np.random.default_rng(6)
    frame = pd.DataFrame({"x": rng.normal(size=60),
                          "colour": pd.Categorical(rng.choice(["red", "blue"], 60)),
                          "n": rng.integers(0, 4, 60)})
    frame.loc[::5, "x"] = np.nan
    frame.loc[1::5, "colour"] = np.nan
    imputer = RBMImputer(small_tabular(), add_indicator=True, random_state=0)
    out = imputer.set_output(transform="pandas").fit_transform(frame)
    assert list(out.columns) == ["x", "colour", "n", "missingindicator_x",
                                 "missingindicator_colour"]
    assert out["x"].dtype == np.float64 and out["n"].dtype == np.float64
    assert out["colour"].dtype == frame["colour"].dtype
    assert out["missingindicator_x"].dtype == bool
    assert not out.isna().any().any()
    plain = imputer.set_output(transform="default").transform(frame)
    assert plain.dtype == object  # the default output is unchanged
    np.testing.assert_array_equal(out.to_numpy(dtype=object), plain)


# -- an imputer whose refit fails ---------------------------------------------------------
class InterruptedGaussianRBM(GaussianRBM):
    def fit(self, X, y=None, sample_weight=None):
        raise KeyboardInterrupt


@pytest.mark.parametrize("failing, error", [
    (GaussianRBM(n_components=4, learning_rate=1e4), TrainingDivergedError),
    (InterruptedGaussianRBM(n_components=2), KeyboardInterrupt),
])
def test_a_failed_refit_keeps_the_fitted_imputer(failing, error):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(80, 4))
    X[::4, 1] = np.nan
    imputer = RBMImputer(GaussianRBM(n_components=2, n_iter=3), random_state=0).fit(X)
    fitted, before = imputer.estimator_, imputer.transform(X)
    for rows in (X, X[:, :3]):  # the same columns, or fewer
        with pytest.raises(error):
            imputer.set_params(estimator=failing).fit(rows)
        assert imputer.estimator_ is fitted and imputer.n_features_in_ == 4
        np.testing.assert_array_equal(imputer.transform(X), before)


def test_imputer_weights_are_relative_in_its_standardisation():
    rng = np.random.default_rng(8)
    X = 3 + rng.normal(size=(80, 3))
    X[::4, 1] = np.nan
    weights = rng.uniform(1, 2, 80)
    estimator = GaussianRBM(n_components=2, n_iter=1)
    plain = RBMImputer(estimator, random_state=0).fit(X, sample_weight=weights)
    scaled = RBMImputer(estimator, random_state=0).fit(X, sample_weight=weights * 1e306)
    # the raw weights' sums overflowed: NaN location and scale
    np.testing.assert_allclose(scaled._location, plain._location, rtol=1e-13)
    np.testing.assert_allclose(scaled._scale, plain._scale, rtol=1e-13)
