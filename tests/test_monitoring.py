"""Training records, the overfitting gap, verbose output and early stopping."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.datasets import load_digits

import skboltz.utils._runtime
from skboltz import RBM
from skboltz.utils._runtime import make_generator
from skboltz.exceptions import SlowEstimateWarning
from skboltz.partition import AIS


@pytest.fixture(scope="module")
def binary_digits():
    return (load_digits().data > 7).astype(float)


def held_out_rows(X, fraction, random_state):
    """The rows fit holds out (same generator, same first draw)."""
    order = make_generator(random_state).permutation(X.shape[0])
    return X[np.sort(order[: int(round(fraction * X.shape[0]))])]


#: Every test of this kind runs on NumPy rows and on array-api-strict rows under
#: array API dispatch (the records, early stopping and verbose output are the same
#: there).
on_namespaces = pytest.mark.parametrize("dispatch", [False, True],
                                        ids=["numpy", "dispatched"])


def fitted(estimator, X, dispatch):
    """``estimator`` fitted on ``X``, as array-api-strict rows under dispatch."""
    from sklearn import config_context

    from _namespaces import xp_strict

    with config_context(array_api_dispatch=dispatch):
        return estimator.fit(xp_strict.asarray(X) if dispatch else X)


def scored(rbm, X, dispatch, method="score"):
    """``rbm``'s ``method`` of rows ``X`` (as the model was fitted), on the host."""
    from sklearn import config_context

    from _namespaces import to_host, xp_strict

    with config_context(array_api_dispatch=dispatch):
        result = getattr(rbm, method)(xp_strict.asarray(X) if dispatch else X)
    return result if np.isscalar(result) else to_host(result)


@on_namespaces
def test_history_has_gap_and_likelihoods(binary_digits, dispatch):
    X = binary_digits[:500]
    rbm = fitted(RBM(n_components=8, n_iter=3, validation_fraction=0.2,
                     monitor_likelihood=True, random_state=0), X, dispatch)
    history = rbm.history_
    expected = {"epoch", "time", "reconstruction_error", "free_energy_train",
                "reconstruction_error_valid", "free_energy_valid", "free_energy_gap",
                "log_likelihood_train", "log_likelihood_valid", "log_z_time"}
    assert set(history) == expected
    assert all(len(values) == 3 for values in history.values())
    assert_allclose(history["free_energy_gap"],
                    np.subtract(history["free_energy_valid"], history["free_energy_train"]))
    # the last record describes the published model
    valid = held_out_rows(X, 0.2, 0)
    assert_allclose(history["log_likelihood_valid"][-1], scored(rbm, valid, dispatch),
                    rtol=1e-10)
    assert_allclose(history["free_energy_valid"][-1],
                    scored(rbm, valid, dispatch, "free_energy").mean())


def test_overfitting_shows_as_a_growing_gap(binary_digits):
    """A big RBM on few rows overfits: held-out free energy rises above training's."""
    X = binary_digits[:120]
    rbm = RBM(n_components=64, n_iter=60, learning_rate=0.1,
              weight_decay=0.0, validation_fraction=0.5, random_state=0).fit(X)
    gap = rbm.history_["free_energy_gap"]
    assert gap[-1] > gap[0] + 1.0


@on_namespaces
def test_verbose_prints_one_line_per_epoch(binary_digits, capsys, dispatch):
    fitted(RBM(n_components=4, n_iter=2, verbose=1, random_state=0), binary_digits[:100],
           dispatch)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("[RBM] Iteration 1, reconstruction error = ")
    assert lines[1].endswith("s") and "time = " in lines[1]


@on_namespaces
def test_early_stopping_stops_and_keeps_the_best_epoch(binary_digits, dispatch):
    X = binary_digits[:400]
    rbm = fitted(RBM(n_components=8, n_iter=100, learning_rate=0.2, momentum=0.5,
                     validation_fraction=0.25, n_iter_no_change=3, monitor_likelihood=True,
                     tol=0.0, random_state=0), X, dispatch)
    history = rbm.history_
    assert rbm.n_iter_ < 100
    assert len(history["epoch"]) == rbm.n_iter_
    best = int(np.argmax(history["log_likelihood_valid"]))
    assert best == rbm.n_iter_ - 1 - 3  # three epochs without improvement after it
    valid = held_out_rows(X, 0.25, 0)
    assert_allclose(scored(rbm, valid, dispatch), history["log_likelihood_valid"][best],
                    rtol=1e-10)


@on_namespaces
def test_early_stopping_on_training_reconstruction_without_validation(binary_digits,
                                                                      dispatch):
    rbm = fitted(RBM(n_components=4, n_iter=200, n_iter_no_change=2, tol=1e-3,
                     random_state=0), binary_digits[:200], dispatch)
    assert rbm.n_iter_ < 200


@on_namespaces
def test_validation_fraction_needs_rows_on_both_sides(dispatch):
    with pytest.raises(ValueError, match="validation_fraction"):
        fitted(RBM(n_components=2, validation_fraction=0.1), np.zeros((3, 4)), dispatch)


@on_namespaces
def test_weighted_records_weight_the_rows(binary_digits, dispatch):
    """A row of weight 2 counts as two copies of it in the records."""
    X = binary_digits[:60]
    weights = np.ones(60)
    weights[:20] = 2.0
    from sklearn import config_context

    from _namespaces import xp_strict

    rbm = RBM(n_components=4, n_iter=1, random_state=0, monitor_likelihood=True)
    with config_context(array_api_dispatch=dispatch):
        rbm.fit(xp_strict.asarray(X) if dispatch else X, sample_weight=weights)
    free = scored(rbm, X, dispatch, "free_energy")
    log_z = rbm.estimate_log_partition().value
    expected = np.average(-free, weights=weights) - log_z
    assert_allclose(rbm.history_["log_likelihood_train"][-1], expected, rtol=1e-10)


# -- progress of long log Z estimates (issues 12 and 24) ------------------------------------
def _ais_scored_rbm(binary_digits, max_time=60.0, **params):
    # a small AIS: quick, but it reports its progress as a long one would
    return RBM(n_components=32, n_iter=1,
               z_estimator=AIS(n_chains=16, n_betas=50, max_time=max_time),
               random_state=0, **params).fit(binary_digits[:100])


@pytest.mark.parametrize("max_time", [None, 60.0])
def test_a_slow_log_z_estimate_warns_once_with_its_progress(binary_digits, monkeypatch,
                                                            max_time):
    rbm = _ais_scored_rbm(binary_digits, max_time)
    monkeypatch.setattr(skboltz.utils._runtime, "SLOW_LOG_Z_SECONDS", 0.0)  # every estimate "slow"
    # Elapsed time, the work done and the caps; the advice fits the settings.
    expected = (r"RBM: estimating log Z \(ais\) has run \d+ s and done [\d,]+ steps; it "
                r"stops by " + (r"[\d,]+ steps\. A smaller budget .*max_transitions"
                                if max_time is None else r"[\d,]+ steps or 60 s\. verbose=1"))
    with pytest.warns(SlowEstimateWarning, match=expected) as caught:
        rbm.score(binary_digits[:10])
    assert sum(issubclass(w.category, SlowEstimateWarning) for w in caught) == 1
    with warnings.catch_warnings():  # cached: no second estimate, no second warning
        warnings.simplefilter("error", SlowEstimateWarning)
        rbm.score(binary_digits[:10])


def test_the_slow_warning_does_not_advise_verbose_when_it_is_on(binary_digits, monkeypatch):
    rbm = _ais_scored_rbm(binary_digits, verbose=1)
    monkeypatch.setattr(skboltz.utils._runtime, "SLOW_LOG_Z_SECONDS", 0.0)
    with pytest.warns(SlowEstimateWarning) as caught:
        rbm.score(binary_digits[:10])
    assert "verbose" not in str(caught[0].message)


def test_a_quick_log_z_estimate_is_silent_and_verbose_reports_it(binary_digits, monkeypatch,
                                                                  capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error", SlowEstimateWarning)
        _ais_scored_rbm(binary_digits).score(binary_digits[:10])
    assert capsys.readouterr().out == ""
    monkeypatch.setattr(skboltz.utils._runtime, "LOG_Z_REPORT_SECONDS", 0.0)
    rbm = _ais_scored_rbm(binary_digits, verbose=1)
    capsys.readouterr()
    rbm.score(binary_digits[:10])
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(line.startswith("[RBM] log Z (ais): ") for line in lines)
    # Work done only grows, and the caps stay put: no share of a growing plan.
    done = [int(line.split(": ")[1].split(" steps")[0].replace(",", "")) for line in lines]
    caps = {line.split("stops by ")[1] for line in lines}
    assert done == sorted(done) and len(caps) == 1 and "%" not in lines[-1]


@pytest.mark.parametrize("dispatch", [False, True], ids=["numpy", "dispatched"])
def test_partial_fit_keeps_the_latest_records(monkeypatch, dispatch):
    """RBM.partial_fit, one epoch a call, keeps the records of the latest
    HISTORY_EPOCHS epochs (every call's before), on NumPy and under dispatch."""
    import skboltz.core._training as training
    from sklearn import config_context

    from _namespaces import xp_strict

    monkeypatch.setattr(training, "HISTORY_EPOCHS", 4)
    X = (np.random.default_rng(0).random((20, 6)) < 0.5).astype(float)
    rows = xp_strict.asarray(X) if dispatch else X
    rbm = RBM(n_components=3, random_state=0)
    with config_context(array_api_dispatch=dispatch):
        for _ in range(30):
            rbm.partial_fit(rows)
    assert rbm.n_iter_ == 30
    assert rbm.history_["epoch"] == [27, 28, 29, 30]
    assert len(rbm.history_["reconstruction_error"]) == 4
    assert all(len(values) <= 8 for values in rbm._training_state.history.values())


def test_the_history_bound_is_the_documented_one():
    from skboltz.core._training import HISTORY_EPOCHS

    assert f"latest {HISTORY_EPOCHS:,} epochs" in RBM.history_.__doc__


@on_namespaces
@pytest.mark.parametrize("kind", ["gaussian", "tabular", "categorical"])
def test_other_restricted_models_record_and_stop_alike(kind, dispatch):
    """GaussianRBM (whitened), TabularRBM (standardised) and CategoricalRBM hold out,
    record and stop early as RBM does, their records the log-likelihoods their scores
    give (the input transform's log-Jacobian included)."""
    from skboltz import CategoricalRBM, GaussianRBM, TabularRBM

    rng = np.random.default_rng(0)
    if kind == "gaussian":
        X = 3.0 * rng.normal(size=(300, 5))
        X[:, 1] += X[:, 0]
        model = GaussianRBM(n_components=3, whiten=True)
    elif kind == "tabular":
        X = np.column_stack([5.0 * rng.normal(size=300), rng.integers(0, 3, (300, 2))])
        model = TabularRBM(n_components=3)
    else:
        X = rng.integers(0, 3, (300, 5)).astype(float)
        model = CategoricalRBM(n_components=3)
    model.set_params(n_iter=40, validation_fraction=0.25, monitor_likelihood=True,
                     n_iter_no_change=2, tol=0.0, random_state=0)
    history = fitted(model, X, dispatch).history_
    assert {"log_likelihood_valid", "free_energy_gap"} <= set(history)
    assert len(history["epoch"]) == model.n_iter_
    best = int(np.argmax(history["log_likelihood_valid"]))
    if model.n_iter_ < 40:  # stopped: two epochs without improvement after the best
        assert best == model.n_iter_ - 1 - 2
    published = best if model.n_iter_ < 40 else -1  # the best epoch's, or the last's
    valid = held_out_rows(X, 0.25, 0)
    assert_allclose(scored(model, valid, dispatch),
                    history["log_likelihood_valid"][published], rtol=1e-8)
