"""Table-driven bad-input tests: every public estimator and method, each bad input.

Each row states the documented behaviour: a ValueError/TypeError whose message says
what is wrong, a warning that says how to fix the data, or acceptance.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

from skboltz import (
    DBM,
    DBN,
    RBM,
    BoltzmannClassifier,
    BoltzmannMachine,
    DBNClassifier,
    GaussianRBM,
    LikelihoodOutlierDetector,
    RBMClassifier,
)
from skboltz.exceptions import (
    ApproximateScoreWarning,
    DataRangeWarning,
    DegenerateModelWarning,
    TooManyStatesError,
    TrainingDivergedError,
)
from skboltz.learning import CD, PCD, Gibbs, MeanFieldPCD, ParallelTempering
from skboltz.partition import LogZ, ZEstimator

# Factories of small unfitted estimators, with the methods each one offers after fit.
DENSITY_METHODS = ["transform", "score_samples", "score", "free_energy", "partial_fit",
                   "gibbs", "reconstruct"]
ESTIMATORS = {
    "RBM": (lambda: RBM(n_components=3, n_iter=2, random_state=0), DENSITY_METHODS),
    "BoltzmannMachine": (
        lambda: BoltzmannMachine(n_hidden=2, learning="exact", n_iter=2, random_state=0),
        DENSITY_METHODS,
    ),
    "BoltzmannMachine-gibbs": (
        lambda: BoltzmannMachine(n_hidden=2, n_iter=2, random_state=0),
        DENSITY_METHODS,
    ),
    "GaussianRBM": (
        lambda: GaussianRBM(n_components=3, n_iter=2, random_state=0), DENSITY_METHODS
    ),
    "DBM": (
        lambda: DBM(hidden_layer_sizes=(3, 2), n_iter=2, random_state=0), DENSITY_METHODS
    ),
    "DBN": (
        lambda: DBN(hidden_layer_sizes=(3, 2), rbm=RBM(n_iter=2), random_state=0),
        ["transform", "partial_fit"],
    ),
    "BoltzmannClassifier": (
        lambda: BoltzmannClassifier(RBM(n_components=2, n_iter=2, random_state=0)),
        ["predict", "predict_proba", "predict_log_proba", "predict_joint_log_proba"],
    ),
    "DBNClassifier": (
        lambda: DBNClassifier(3, rbm=RBM(n_iter=2), max_iter=5, random_state=0),
        ["predict", "predict_proba", "predict_log_proba"],
    ),
    "RBMClassifier": (
        lambda: RBMClassifier(n_components=3, n_iter=2, random_state=0),
        ["predict", "predict_proba", "predict_log_proba", "transform", "score_samples",
         "free_energy", "gibbs", "reconstruct"],
    ),
    "LikelihoodOutlierDetector": (
        lambda: LikelihoodOutlierDetector(RBM(n_components=3, n_iter=2, random_state=0),
                                          contamination=0.1),
        ["score_samples", "decision_function", "predict"],
    ),
}
SUPERVISED = {"BoltzmannClassifier", "DBNClassifier", "RBMClassifier"}

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

LABELS = np.arange(30) % 2

#: The estimators and methods that take NaN as a missing entry (tests/test_missing.py):
#: the "nan" row is accepted there; their other methods refuse it, naming NaN.
TAKE_NAN = {name: {"fit", "partial_fit", "transform", "score_samples", "score"}
            for name in ("RBM", "GaussianRBM")}
#: the outlier detector passes NaN on to a model that takes it (here an RBM)
TAKE_NAN["LikelihoodOutlierDetector"] = {"fit", "score_samples", "decision_function",
                                         "predict"}
INCOMPLETE = np.where(RNG.random(GOOD.shape) < 0.3, np.nan, GOOD)


class Case:
    """An estimator factory with its fitted methods; fits with labels when it needs them."""

    def __init__(self, name):
        self.name = name
        self.factory, self.methods = ESTIMATORS[name]

    def __call__(self):
        return self.factory()

    def fit(self, estimator, X):
        if self.name in SUPERVISED:
            return estimator.fit(X, LABELS[: X.shape[0]] if X.ndim == 2 else LABELS)
        return estimator.fit(X)

    def fingerprint(self, estimator):
        """Outputs that change if the fitted model changes."""
        if self.name in SUPERVISED:
            return estimator.predict_proba(GOOD)
        if not hasattr(estimator, "transform"):  # an outlier detector
            return estimator.score_samples(GOOD)
        return estimator.transform(GOOD)


@pytest.fixture(params=sorted(ESTIMATORS))
def case(request):
    return Case(request.param)


METHOD_CASES = [(name, method) for name, (_, methods) in ESTIMATORS.items()
                for method in methods]
BAD_IDS = [b[0] for b in BAD_INPUTS]


@pytest.mark.parametrize("name, X, error, message", BAD_INPUTS, ids=BAD_IDS)
def test_fit_rejects_bad_input(case, name, X, error, message):
    if name == "nan" and "fit" in TAKE_NAN.get(case.name, ()):
        assert np.isfinite(case.fingerprint(case.fit(case(), INCOMPLETE))).all()
        return
    with pytest.raises(error, match=message):
        case.fit(case(), X)


@pytest.mark.parametrize("estimator_name, method", METHOD_CASES)
@pytest.mark.parametrize("name, X, error, message", BAD_INPUTS, ids=BAD_IDS)
def test_fitted_methods_reject_bad_input_and_keep_the_model(
    estimator_name, method, name, X, error, message
):
    case = Case(estimator_name)
    estimator = case.fit(case(), GOOD)
    before = case.fingerprint(estimator)
    if name == "nan" and method in TAKE_NAN.get(estimator_name, ()):
        result = getattr(estimator, method)(INCOMPLETE)
        if method != "partial_fit":
            assert np.isfinite(result).all()
            assert_allclose(case.fingerprint(estimator), before)
        return
    with pytest.raises(error, match=message):
        getattr(estimator, method)(X)
    assert_allclose(case.fingerprint(estimator), before)


@pytest.mark.parametrize("estimator_name, method", METHOD_CASES)
def test_wrong_number_of_features_after_fit(estimator_name, method):
    case = Case(estimator_name)
    estimator = case.fit(case(), GOOD)
    with pytest.raises(ValueError, match="5 features"):
        getattr(estimator, method)(GOOD[:, :4])


@pytest.mark.parametrize("estimator_name, method", METHOD_CASES)
def test_methods_before_fit_say_so(estimator_name, method):
    if method == "partial_fit":
        pytest.skip("partial_fit is how an estimator starts")
    with pytest.raises(Exception, match="not fitted"):
        getattr(Case(estimator_name)(), method)(GOOD)


def test_single_sample_is_accepted(case):
    if case.name in SUPERVISED:
        pytest.skip("one sample is one class; a classifier needs two")
    estimator = case.fit(case(), GOOD[:1])
    method = "transform" if hasattr(estimator, "transform") else "predict"
    assert getattr(estimator, method)(GOOD[:1]).shape[0] == 1
    if hasattr(estimator, "score"):
        assert np.isfinite(estimator.score(GOOD[:1]))


@pytest.mark.parametrize("to_sparse", [sp.csr_matrix, sp.csc_matrix, sp.coo_matrix,
                                       sp.csr_array], ids=lambda f: f.__name__)
def test_sparse_formats_match_dense(case, to_sparse):
    dense = case.fit(case(), GOOD)
    sparse = case.fit(case(), to_sparse(GOOD))
    assert_allclose(case.fingerprint(sparse), case.fingerprint(dense))
    if hasattr(dense, "score_samples"):
        assert_allclose(sparse.score_samples(to_sparse(GOOD)), dense.score_samples(GOOD))


def test_non_contiguous_and_read_only_arrays_work(case):
    reference = case.fingerprint(case.fit(case(), GOOD))
    fortran = np.asfortranarray(GOOD)
    strided = np.repeat(GOOD, 2, axis=1)[:, ::2]
    read_only = GOOD.copy()
    read_only.flags.writeable = False
    for X in (fortran, strided, read_only):
        assert_allclose(case.fingerprint(case.fit(case(), X)), reference)


def test_out_of_range_values_are_accepted_with_a_warning(case):
    if case.name == "GaussianRBM":
        pytest.skip("real-valued units take any range (unscaled data: test_gaussian.py)")
    with pytest.warns(DataRangeWarning, match="MinMaxScaler"):
        estimator = case.fit(case(), GOOD * 3 - 1)
    assert np.all(np.isfinite(case.fingerprint(estimator)))


def test_too_large_for_exact_enumeration_names_alternatives():
    estimator = RBM(n_components=40, n_iter=1, z_estimator="exact", random_state=0)
    estimator.fit((RNG.random((50, 40)) > 0.5).astype(float))
    with pytest.raises(TooManyStatesError, match="'ais'.*'mean_field'"):
        estimator.score_samples(np.zeros((1, 40)))
    with pytest.raises(TooManyStatesError, match="max_states"):
        estimator.estimate_log_partition("exact")


@pytest.mark.parametrize("estimator_name", ["RBM", "BoltzmannMachine"])
def test_unknown_strategy_names_are_rejected_with_choices(estimator_name):
    case = Case(estimator_name)
    with pytest.raises(ValueError, match="learning"):
        case().set_params(learning="nonsense").fit(GOOD)
    estimator = case().fit(GOOD)
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
    ({"learning": CD(negative_visible="probabilities")}, "negative_visible.*'mean'"),
    ({"learning": PCD(negative_visible=None)}, "negative_visible.*'sample'"),
    ({"learning": ParallelTempering(negative_visible="means")}, "negative_visible"),
    ({"validation_fraction": 1.0}, "validation_fraction"),
])
def test_invalid_parameters_are_named(params, message):
    with pytest.raises(ValueError, match=message):
        RBM(**params).fit(GOOD)


def test_failed_refit_keeps_the_input_bookkeeping_with_the_kept_model():
    """validate_data records n_features_in_ before training; a failure must undo it."""
    rbm = RBM(n_components=3, n_iter=2, random_state=0).fit(GOOD)
    wider = (RNG.random((30, 8)) > 0.5).astype(float)
    with pytest.raises(TrainingDivergedError):
        rbm.set_params(learning_rate=1e30).fit(wider)
    assert rbm.n_features_in_ == GOOD.shape[1] == rbm.components_.shape[1]
    assert rbm.transform(GOOD).shape == (30, 3)


def test_dbn_partial_fit_failing_in_an_upper_layer_leaves_every_layer_untouched():
    dbn = DBN(hidden_layer_sizes=(3, 2), rbm=RBM(n_iter=2), random_state=0).fit(GOOD)
    before = [layer.components_.copy() for layer in dbn.layers_]
    dbn.layers_[1].set_params(learning_rate=1e30)  # only the top layer will diverge
    with pytest.raises(TrainingDivergedError):
        dbn.partial_fit(GOOD)
    for layer, weights in zip(dbn.layers_, before):
        assert_array_equal(layer.components_, weights)
    assert dbn.layers_[0].n_iter_ == 2


def test_classifier_failing_to_estimate_log_z_publishes_nothing():
    X = (RNG.random((40, 30)) > 0.5).astype(float)
    y = np.arange(40) % 2
    model = BoltzmannClassifier(RBM(n_components=30, n_iter=1, z_estimator="exact",
                                    random_state=0))
    with pytest.raises(TooManyStatesError):
        model.fit(X, y)
    assert not hasattr(model, "estimators_") and not hasattr(model, "n_features_in_")


# -- scoring outside the model's support -------------------------------------------


class _TooLowLogZ(ZEstimator):
    """A deliberately wrong estimator: log Z below the truth, with a given error bar."""

    def __init__(self, value=-100.0, std_error=None, kind=None):
        self.value = value
        self.std_error = std_error
        self.kind = kind

    def estimate(self, model, *, rng=None, data_rates=None):
        return LogZ(self.value, self.std_error, method="too low", kind=self.kind)


@pytest.mark.parametrize("make", [
    lambda: RBM(n_components=3, n_iter=2, random_state=0),
    lambda: BoltzmannMachine(n_hidden=2, learning="exact", n_iter=2, random_state=0),
], ids=["RBM", "BoltzmannMachine"])
@pytest.mark.parametrize("transform", [lambda X: X - 5, lambda X: X * 16, lambda X: X * 1e300],
                         ids=["shifted", "times16", "times1e300"])
def test_scores_outside_the_unit_interval_warn_and_are_clipped(make, transform):
    model = make().fit(GOOD)
    bad = transform(GOOD)
    with pytest.warns(DataRangeWarning, match=r"30 of 30 rows .* clipped into \[0, 1\]"):
        scores = model.score_samples(bad)
    assert_allclose(scores, model.score_samples(np.clip(bad, 0, 1)))
    assert np.all(scores <= 0)


@pytest.mark.parametrize("make", [
    lambda: RBM(n_components=3, n_iter=2, random_state=0),
    lambda: BoltzmannMachine(n_hidden=2, learning="exact", n_iter=2, random_state=0),
], ids=["RBM", "BoltzmannMachine"])
@pytest.mark.parametrize("method", ["fit", "partial_fit"])
def test_training_rows_outside_the_unit_interval_are_clipped_as_for_scoring(make, method):
    """fit and score see the same rows: unscaled input (e.g. the digits as 0-16) is
    trained on at its clipped values, with the warning, as it is scored and
    transformed (it used to be trained on as it was and scored clipped)."""
    bad = GOOD * 16 - 3
    with pytest.warns(DataRangeWarning, match=r"30 of 30 rows .* clipped into \[0, 1\]"):
        model = getattr(make(), method)(bad)
    reference = getattr(make(), method)(np.clip(bad, 0, 1))
    assert_array_equal(model.transform(GOOD), reference.transform(GOOD))
    for call in ("transform", "free_energy", "reconstruct", "score_samples"):
        with pytest.warns(DataRangeWarning, match="30 of 30 rows"):
            result = getattr(model, call)(bad)
        assert_allclose(result, getattr(model, call)(np.clip(bad, 0, 1)))


def test_a_log_z_below_a_row_beyond_its_error_is_refused():
    """log Z >= -F(x) for every row: an estimate 100 nats below that is broken, and
    capping the scores at 0 would hide it (every row would score 0)."""
    model = RBM(n_components=3, n_iter=2, z_estimator=_TooLowLogZ(), random_state=0).fit(GOOD)
    assert model.estimate_log_partition().value == -100.0
    with pytest.raises(ValueError, match="log Z = -100 from too low .* is impossible"):
        model.score_samples(GOOD)


def test_a_log_probability_is_never_positive_within_the_error_or_for_a_bound():
    exact = RBM(n_components=3, n_iter=2, random_state=0).fit(GOOD)
    highest = float(np.max(-exact.free_energy(GOOD)))  # log Z >= this
    for estimator in (_TooLowLogZ(highest - 0.05, std_error=0.1),  # within 3 se
                      _TooLowLogZ(highest - 5.0, kind="lower_bound")):
        model = RBM(n_components=3, n_iter=2, z_estimator=estimator, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ApproximateScoreWarning)  # the bound's
            # a log Z this low puts most of the probability on one row
            warnings.simplefilter("ignore", DegenerateModelWarning)
            scores = model.fit(GOOD).score_samples(GOOD)
        assert np.all(scores <= 0) and np.any(scores == 0)
    # Beyond 3 standard errors the estimate is refused.
    model = RBM(n_components=3, n_iter=2, z_estimator=_TooLowLogZ(highest - 0.5, 0.1),
                random_state=0).fit(GOOD)
    with pytest.raises(ValueError, match=r"beyond 3 standard errors"):
        model.score_samples(GOOD)


def test_classifier_on_inputs_outside_the_unit_interval_warns():
    clf = BoltzmannClassifier(RBM(n_components=2, n_iter=2, random_state=0)).fit(GOOD, LABELS)
    with pytest.warns(DataRangeWarning):
        proba = clf.predict_proba(GOOD * 1e300)
    assert_allclose(proba, clf.predict_proba(np.clip(GOOD * 1e300, 0, 1)))


# -- arguments of methods ----------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda: RBM(n_components=3, n_iter=1, random_state=0),
    lambda: BoltzmannMachine(n_hidden=2, n_iter=1, random_state=0),
    lambda: DBN(hidden_layer_sizes=(3,), rbm=RBM(n_iter=1), random_state=0),
], ids=["RBM", "BoltzmannMachine", "DBN"])
@pytest.mark.parametrize("arguments, error, message", [
    ({"n_samples": -1}, ValueError, "n_samples == -1, must be >= 1"),
    ({"n_samples": 0}, ValueError, "n_samples == 0, must be >= 1"),
    ({"n_samples": 2.5}, TypeError, "n_samples must be an instance of int"),
    ({"n_samples": True}, TypeError, "n_samples must be an int, not a boolean"),
    ({"n_steps": -1}, ValueError, "n_steps == -1, must be >= 0"),
    ({"n_steps": 1.5}, TypeError, "n_steps must be an instance of int"),
])
def test_sample_arguments_are_checked(make, arguments, error, message):
    model = make().fit(GOOD)
    with pytest.raises(error, match=message):
        model.sample(**arguments)
    assert model.sample(2, n_steps=0).shape == (2, 5)  # n_steps=0: the starting draws


@pytest.mark.parametrize("model, parameter", [
    (RBM(), "n_components"), (RBM(), "batch_size"), (RBM(), "n_iter"),
    (BoltzmannMachine(), "n_hidden"),
])
def test_booleans_are_not_counts(model, parameter):
    with pytest.raises(ValueError, match=f"'{parameter}' parameter .* Got True"):
        model.set_params(**{parameter: True}).fit(GOOD)


# -- sizes -------------------------------------------------------------------------


@pytest.mark.parametrize("make, message", [
    (lambda: BoltzmannMachine(n_hidden=20_000), r"Boltzmann machine with 20005 units .* "
     r"needs about [0-9.]+ GiB, more than the 1 GiB of memory available"),
    (lambda: RBM(n_components=10**7), r"RBM with 10000000 hidden units on 5 features"
     r"(, with 10 persistent chains \(PCD\(\)\))? needs about [0-9.]+ GiB"),
])
def test_models_too_large_for_memory_fail_at_once(monkeypatch, make, message):
    import skboltz.utils._runtime

    monkeypatch.setattr(skboltz.utils._runtime, "available_memory", lambda: 2**30)
    model = make()
    with pytest.raises(MemoryError, match=message):
        model.fit(GOOD)
    assert not hasattr(model, "n_features_in_")


def test_batches_and_chains_never_exceed_the_rows():
    rbm = RBM(n_components=3, batch_size=10**7, learning="pcd", n_iter=2,
              random_state=0).fit(GOOD)
    assert rbm._training_state.sampler["chains"].shape[0] == GOOD.shape[0]
    bm = BoltzmannMachine(n_hidden=2, batch_size=10**7, n_iter=1, random_state=0).fit(GOOD)
    assert bm._training_state.sampler["chains"].shape[0] == 100  # Gibbs' minimum


@pytest.mark.parametrize("make, knobs", [
    (lambda: RBM(n_components=4, learning=PCD(n_chains=10**5)), "n_chains"),
    (lambda: RBM(n_components=4, learning=ParallelTempering(n_temperatures=10**4)),
     "n_chains or n_temperatures"),
    (lambda: BoltzmannMachine(n_hidden=2, learning=Gibbs(n_chains=10**5)), "n_chains"),
    (lambda: DBM((4, 3), learning=MeanFieldPCD(n_chains=10**5)), "n_chains"),
], ids=["PCD", "ParallelTempering", "Gibbs", "MeanFieldPCD"])
def test_persistent_chains_are_counted_in_the_memory_check(monkeypatch, make, knobs):
    """Issue 31: chains were outside the memory check: PCD(n_chains=10**8) ended in
    numpy's "Unable to allocate 47.7 GiB". (Here 10**5 chains, a few MB, against 1 MiB
    of memory: the test stays harmless if the check is missing.)"""
    import skboltz.utils._runtime

    monkeypatch.setattr(skboltz.utils._runtime, "available_memory", lambda: 2**20)
    model = make()
    with pytest.raises(MemoryError, match=r"100,000 persistent chains .* needs about "
                                          rf"[0-9.e+]+ GiB.* a smaller {knobs} of the "
                                          "learning strategy"):
        model.fit(GOOD)
    assert not hasattr(model, "n_features_in_")
    # and when partial_fit switches to such a strategy, the model stays as it was
    monkeypatch.setattr(skboltz.utils._runtime, "available_memory", lambda: None)
    model = RBM(n_components=4, n_iter=1, random_state=0).fit(GOOD)
    before, strategy = model.components_.copy(), model.learning_
    monkeypatch.setattr(skboltz.utils._runtime, "available_memory", lambda: 2**20)
    model.set_params(learning=PCD(n_chains=10**5))
    with pytest.raises(MemoryError, match="persistent chains"):
        model.partial_fit(GOOD)
    assert_array_equal(model.components_, before)
    assert model.learning_ is strategy


@pytest.mark.parametrize("make, layer", [
    (lambda: DBN((4, 10**7)), "DBN: layer 2 of 2 .*10000000 hidden units on 4 features"),
    (lambda: DBNClassifier((10**6, 10**6), rbm=RBM(n_iter=1)),
     "DBNClassifier: layer 2 of 2 .*1000000 hidden units on 1000000 features"),
], ids=["DBN", "DBNClassifier"])
def test_every_layer_is_checked_before_any_trains(monkeypatch, make, layer):
    """Issue 31: DBN((500, 10**6)) trained layer 1 before refusing layer 2 without naming
    it; DBNClassifier((10**6, 10**6)) trained 96 s and never checked layer 2."""
    import skboltz.utils._runtime

    def trained(*args, **kwargs):
        raise AssertionError("a layer trained before the check")

    monkeypatch.setattr(skboltz.utils._runtime, "available_memory", lambda: 2**31)
    monkeypatch.setattr(RBM, "fit", trained)
    monkeypatch.setattr(RBM, "partial_fit", trained)
    y = np.arange(GOOD.shape[0]) % 2
    model = make()
    with pytest.raises(MemoryError,
                       match=rf"{layer}.* Use a smaller hidden_layer_sizes\[1\]"):
        model.fit(GOOD, y)
    if isinstance(model, DBN):
        with pytest.raises(MemoryError, match=layer):
            model.partial_fit(GOOD)
    assert not hasattr(model, "n_features_in_")


def test_the_fine_tuned_network_is_checked_before_pretraining(monkeypatch):
    import skboltz.meta._dbn_classifier

    monkeypatch.setattr(skboltz.meta._dbn_classifier, "network_bytes", lambda *args: 2**60)
    monkeypatch.setattr(RBM, "fit", lambda *args: pytest.fail("pretrained first"))
    model = DBNClassifier((3,), rbm=RBM(n_iter=1))
    with pytest.raises(MemoryError, match="DBNClassifier: the whole network .*5 - 3, and "
                                          "the network fine-tuned from them"):
        model.fit(GOOD, np.arange(GOOD.shape[0]) % 2)


@pytest.mark.parametrize("make", [
    lambda: RBM(n_components=3, n_iter=1, random_state=0),
    lambda: BoltzmannMachine(n_hidden=2, n_iter=1, random_state=0),
], ids=["RBM", "BoltzmannMachine"])
@pytest.mark.parametrize("z_estimator, error, message", [
    ("nope", ValueError, r"Unknown z_estimator 'nope'; choose one of \['ais', 'exact'"),
    (3, ValueError, "Unknown z_estimator 3"),
])
def test_estimate_log_partition_rejects_unknown_estimators(make, z_estimator, error, message):
    model = make().fit(GOOD)
    with pytest.raises(error, match=message):
        model.estimate_log_partition(z_estimator)
