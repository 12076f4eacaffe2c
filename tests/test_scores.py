"""Scores users can trust (issue 24): one yardstick, paths that disagree, a bounded
time, labelled bounds, whole error bars, nothing non-finite accepted."""

import math
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV, KFold

import skboltz.utils._runtime
import skboltz.partition._ais as ais_module
from skboltz import RBM, BoltzmannMachine
from skboltz.core._monitoring import MONITOR_LOG_Z_SECONDS, Monitor
from skboltz.models._boltzmann_energy import BMView
from skboltz.models._rbm_energy import RBMView
from skboltz.exceptions import (
    ApproximateScoreWarning,
    DataRangeWarning,
    LogZAccuracyWarning,
    TooManyStatesError,
)
from skboltz.learning import ExactGradient
from skboltz.partition import (
    AIS,
    Exact,
    LogZ,
    ZEstimator,
    beta_schedule,
    held_out_score,
    held_out_scoring,
    log_likelihood_bounds,
    paired_score_difference,
)
from skboltz.partition._ais import anneal_forward


def random_rbm(n_visible, n_hidden, scale, rng):
    return RBMView(rng.normal(0, scale, (n_hidden, n_visible)),
                   rng.normal(0, scale, n_visible), rng.normal(0, scale, n_hidden))


@pytest.fixture(scope="module")
def binary_digits():
    return (load_digits().data > 7).astype(float)


# -- LogZ: what it is, and nothing non-finite ---------------------------------------
@pytest.mark.parametrize("value, error", [
    (float("nan"), ValueError), (float("inf"), ValueError), (-float("inf"), ValueError),
    ("12.3", TypeError), (True, TypeError), (None, TypeError), ([1.0], TypeError),
])
def test_logz_refuses_what_is_not_a_finite_number(value, error):
    with pytest.raises(error, match="LogZ.value must be"):
        LogZ(value)


@pytest.mark.parametrize("field", ["std_error", "lower", "upper"])
def test_logz_refuses_non_finite_errors_and_bounds(field):
    with pytest.raises(ValueError, match=f"LogZ.{field} must be finite"):
        LogZ(1.0, **{field: float("nan")})
    with pytest.raises(ValueError, match="std_error must be >= 0"):
        LogZ(1.0, std_error=-0.1)


def test_logz_says_what_it_is():
    assert LogZ(2.0, lower=2.0, upper=2.0).kind == "exact"
    assert LogZ(2.0, 0.1).kind == "estimate"
    assert LogZ(2.0, lower=2.0).kind == "lower_bound"
    assert LogZ(2.0, upper=2.0).kind == "upper_bound"
    assert LogZ(2.0).kind == "approximation"
    assert LogZ(2.0, kind="lower_bound").kind == "lower_bound"
    with pytest.raises(ValueError, match="kind"):
        LogZ(2.0, kind="guess")
    bound = LogZ(9.6, lower=9.6, method="mean_field")
    assert not bound.is_reliable and "upper bound (optimistic)" in bound.describe()
    assert LogZ(1.0, 0.01).is_reliable and not LogZ(1.0, 0.01, converged=False).is_reliable
    # np.float32 and friends are numbers too, and come out as floats
    assert type(LogZ(np.float32(1.5)).value) is float


class _Garbage(ZEstimator):
    def __init__(self, result=None):
        self.result = result

    def estimate(self, model, *, rng=None, data_rates=None):
        return self.result() if callable(self.result) else self.result


@pytest.mark.parametrize("result, error, message", [
    (lambda: LogZ(-np.inf), ValueError, "must be finite"),
    (lambda: LogZ(np.nan, 0.1), ValueError, "must be finite"),
    (lambda: LogZ("abc"), TypeError, "finite real number"),
    (-12.0, TypeError, "must return a skboltz.partition.LogZ"),
    ("abc", TypeError, "must return a skboltz.partition.LogZ"),
])
def test_a_garbage_log_z_fails_at_once_with_a_clear_error(binary_digits, result, error,
                                                          message):
    model = RBM(n_components=3, n_iter=1, z_estimator=_Garbage(result),
                random_state=0).fit(binary_digits[:50, :8])
    with pytest.raises(error, match=message):
        model.score(binary_digits[:50, :8])


def test_a_log_z_of_minus_1e300_is_refused_not_scored_zero(binary_digits):
    model = RBM(n_components=3, n_iter=1, z_estimator=_Garbage(LogZ(-1e300)),
                random_state=0).fit(binary_digits[:50, :8])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateScoreWarning)
        with pytest.raises(ValueError, match="is impossible"):
            model.score_samples(binary_digits[:50, :8])


# -- one yardstick -------------------------------------------------------------------
def test_auto_measures_every_learning_method_the_same_way(binary_digits):
    """A grid over ``learning`` on 24 units (not enumerated by "auto"): every candidate
    is scored with an AIS estimate, and each score is the exact-log-Z score within the
    estimate's error. (With the mean-field bound the mean-field candidate scored
    0.45-0.8 nats too high.)"""
    X = binary_digits[:450, 20:36]
    search = GridSearchCV(BoltzmannMachine(n_hidden=8, n_iter=3, random_state=0),
                          {"learning": ["gibbs", "mean_field"]}, cv=KFold(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ApproximateScoreWarning)  # no bound anywhere
        search.fit(X)
    for k, learning in enumerate(["gibbs", "mean_field"]):
        scores = []
        for train, test in KFold(2).split(X):
            model = BoltzmannMachine(n_hidden=8, n_iter=3, learning=learning,
                                     random_state=0).fit(X[train])
            assert model.z_estimator_.name == "ais"
            log_z = model.estimate_log_partition()
            exact = model.estimate_log_partition(Exact(max_states=2**24)).value
            assert abs(log_z.value - exact) <= 3 * log_z.std_error
            scores.append(model.score(X[test]))
        assert search.cv_results_["mean_test_score"][k] == pytest.approx(np.mean(scores))


def test_the_mean_field_pairing_is_asked_for_by_name_and_labelled_a_bound(binary_digits):
    X = binary_digits[:300, 20:30]
    model = BoltzmannMachine(n_hidden=4, learning="mean_field", z_estimator="mean_field",
                             n_iter=3, random_state=0).fit(X)
    log_z = model.estimate_log_partition()
    assert log_z.kind == "lower_bound"
    with pytest.warns(ApproximateScoreWarning, match="upper bound"):
        bound_score = model.score(X)
    with warnings.catch_warnings():  # once per fitted model
        warnings.simplefilter("error", ApproximateScoreWarning)
        model.score(X)
    exact_score = -np.mean(model.free_energy(X)) - model.estimate_log_partition("exact").value
    assert bound_score >= exact_score


@pytest.mark.parametrize("z_estimator, warns", [
    ("exact", False), ("ais", False), ("mean_field", True), ("tap", True),
    ("visited_states", True),
])
def test_scores_from_bounds_and_approximations_warn_on_first_use(binary_digits,
                                                                 z_estimator, warns):
    model = RBM(n_components=4, n_iter=2, z_estimator=z_estimator,
                random_state=0).fit(binary_digits[:200, :12])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.score(binary_digits[:200, :12])
    flagged = [w for w in caught if issubclass(w.category, ApproximateScoreWarning)]
    assert bool(flagged) == warns
    assert model.estimate_log_partition().is_reliable != warns


# -- AIS: several paths, the highest consistent ones kept -----------------------------
def small_models():
    rng = np.random.default_rng(24)
    rbm = random_rbm(7, 5, 1.2, rng)
    coupling = np.triu(rng.normal(0, 0.8, (8, 8)), 1)
    bm = BMView(coupling + coupling.T, rng.normal(0, 0.5, 8), 5, 1.3)
    return [("rbm", rbm), ("bm", bm)]


@pytest.mark.parametrize("base", ["data", "response", "model"])
@pytest.mark.parametrize("name, view", small_models())
def test_every_base_is_within_three_standard_errors_of_exact(base, name, view):
    exact = Exact().estimate(view).value
    rates = np.linspace(0.2, 0.8, view.n_visible)
    for seed in range(2):
        log_z = AIS(base=base, target_std_error=0.02).estimate(view, rng=seed,
                                                               data_rates=rates)
        assert log_z.cost["base"] == base and log_z.std_error <= 0.02
        assert abs(log_z.value - exact) <= 3 * log_z.std_error, (base, name, log_z)


def test_chains_from_several_bases_in_one_batch_match_separate_chains():
    rng = np.random.default_rng(3)
    view = random_rbm(9, 30, 1.0, rng)
    rates = rng.random(9)
    bases = [view.annealing_base(rates, kind) for kind in ("data", "response", "model")]
    states = (rng.random((30, 9)) < 0.5).astype(float)
    stacked = view.annealing(np.repeat(bases, 10, axis=0), 30, rng, np.float64)
    stacked.set_states(states)
    together = np.zeros(30)
    stacked.add_log_ratio(0.3, 0.35, together, then_sample_at=0.35)
    for k, base in enumerate(bases):
        alone = view.annealing(base, 10, rng, np.float64)
        alone.set_states(states[10 * k : 10 * k + 10])
        separate = np.zeros(10)
        alone.add_log_ratio(0.3, 0.35, separate)
        assert_allclose(together[10 * k : 10 * k + 10], separate, atol=1e-10)
    # and they start from (and move towards) their own base: the all-on and all-off
    # bases stay apart after a transition at a small beta
    extreme = np.repeat([np.r_[np.full(9, 30.0), np.zeros(30)],
                         np.r_[np.full(9, -30.0), np.zeros(30)]], 50, axis=0)
    chains = view.annealing(extreme, 100, rng)
    chains.start_from_base()
    chains.transition(1e-3)
    assert chains.states[:50].mean() > 0.99 and chains.states[50:].mean() < 0.01


class _MissingMass:
    """An RBM view whose paths from one base miss ``shift(n_betas)`` nats of log Z,
    with the tight error bars of a path that never finds a mode."""

    anneals_several_bases = False  # one base per batch: the shift applies per batch

    def __init__(self, view, rates, name, shift):
        self._view, self._rates, self._name, self._shift = view, rates, name, shift

    def __getattr__(self, attribute):
        return getattr(self._view, attribute)

    def annealing(self, base, n_chains, rng):
        chains = self._view.annealing(base, n_chains, rng)
        if not np.array_equal(base, self._view.annealing_base(self._rates, self._name)):
            return chains
        shift, inner = self._shift, chains

        class Shifted:
            def __getattr__(self, attribute):
                return getattr(inner, attribute)

            def add_log_ratio(self, beta, beta_next, log_w, sign=1.0, then_sample_at=None):
                inner.add_log_ratio(beta, beta_next, log_w, sign, then_sample_at)
                n_betas = round(1.0 / (beta_next - beta)) + 1  # linear schedule
                log_w -= shift(n_betas) * (beta_next - beta)

        return Shifted()


def test_a_path_that_stays_low_is_dropped_and_the_others_kept():
    """The issue's failure: one path 20 nats low at every length with a tight error
    bar. The default keeps the paths that agree, says the paths disagreed, and gets
    log Z within its errors."""
    rng = np.random.default_rng(5)
    view = random_rbm(12, 10, 1.0, rng)
    rates = np.linspace(0.1, 0.9, 12)
    exact = Exact().estimate(view).value
    for missing in ("data", "response", "model"):
        wrong = _MissingMass(view, rates, missing, lambda n_betas: 20.0)
        with pytest.warns(LogZAccuracyWarning, match=f"paths disagree.*{missing}"):
            log_z = AIS(schedule="linear", n_betas=20).estimate(wrong, rng=0,
                                                                 data_rates=rates)
        assert log_z.cost["bases"][missing]["stage"] in ("disagrees", "dropped")
        assert missing not in (log_z.cost["base"],) and not log_z.converged
        assert abs(log_z.value - exact) <= 3 * log_z.std_error + 1e-9


def test_a_low_path_that_keeps_rising_is_not_dropped():
    """Short paths are all low; one that rises as its betas double is still annealed."""
    rng = np.random.default_rng(6)
    view = random_rbm(12, 10, 1.5, rng)
    rates = np.linspace(0.1, 0.9, 12)
    slow = _MissingMass(view, rates, "model", lambda n_betas: 2000.0 / n_betas)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LogZAccuracyWarning)
        log_z = AIS(schedule="linear", n_betas=20, target_std_error=0.001,
                    max_time=None).estimate(slow, rng=0, data_rates=rates)
    assert log_z.cost["bases"]["model"]["n_betas"] == log_z.cost["n_betas"] > 20


def test_paths_that_agree_are_combined():
    """One batch: the chains of the paths that agree are one importance sample."""
    view = random_rbm(8, 6, 0.8, np.random.default_rng(7))
    rates = np.linspace(0.2, 0.8, 8)
    log_z = AIS(target_std_error=None, n_chains=60).estimate(view, rng=0, data_rates=rates)
    bases = log_z.cost["bases"]
    assert all(record["stage"] == "kept" for record in bases.values())
    assert log_z.cost["n_chains"] == sum(record["n_chains"] for record in bases.values())
    # every chain weighted alike: between the paths' values, more precise than most
    values = [record["log_z"] for record in bases.values()]
    assert min(values) <= log_z.value <= max(values)
    assert log_z.std_error < np.median([record["std_error"] for record in bases.values()])
    assert abs(log_z.value - Exact().estimate(view).value) <= 3 * log_z.std_error


# -- bounded time ----------------------------------------------------------------------
class _FakeMachine:
    """A clock that advances by a fixed cost per Gibbs transition the chains make."""

    def __init__(self, monkeypatch, seconds_per_transition):
        self.now = 0.0
        self.rate = seconds_per_transition
        monkeypatch.setattr(ais_module, "_clock", lambda: self.now)
        run = ais_module.anneal_forward

        def timed(chains, betas, *args, **kwargs):
            self.now += self.rate * chains.n_chains * (len(betas) - 1)
            return run(chains, betas, *args, **kwargs)

        monkeypatch.setattr(ais_module, "anneal_forward", timed)


def test_the_time_budget_stops_the_search_reports_and_warns(monkeypatch):
    machine = _FakeMachine(monkeypatch, 1e-3)  # a slow machine: 1 ms per transition
    view = random_rbm(10, 8, 2.0, np.random.default_rng(8))
    with pytest.warns(LogZAccuracyWarning, match=r"time budget \(max_time=30 s\).*above "
                                                 r"target_std_error=0.0001"):
        log_z = AIS(target_std_error=1e-4, max_time=30).estimate(view, rng=0)
    assert log_z.cost["stopped_by"] == "max_time" and not log_z.converged
    assert log_z.cost["seconds"] <= 30 and machine.now <= 30
    assert log_z.std_error > 1e-4 and np.isfinite(log_z.value)
    # Without a budget the same search goes on (to its target or its caps).
    machine.now = 0.0
    log_z = AIS(target_std_error=0.01, max_time=None).estimate(view, rng=0)
    assert log_z.cost["stopped_by"] == "target_std_error" and machine.now > 30


def test_the_default_budget_is_work_not_time(monkeypatch):
    """The default AIS stops by its budget of transitions: the same estimate on a fast
    machine and on one a thousand times slower (a clock that runs while it works)."""
    view = random_rbm(10, 8, 2.0, np.random.default_rng(8))
    ais = AIS(target_std_error=1e-4, max_transitions=20_000)
    with pytest.warns(LogZAccuracyWarning, match=r"budget of 20,000 Gibbs transitions"):
        fast = ais.estimate(view, rng=0)
    _FakeMachine(monkeypatch, 1.0)  # one second per transition
    with pytest.warns(LogZAccuracyWarning):
        slow = ais.estimate(view, rng=0)
    assert slow.value == fast.value and slow.std_error == fast.std_error
    assert fast.cost["stopped_by"] == "max_transitions"
    assert fast.cost["n_transitions"] <= 20_000 == fast.cost["max_transitions"]
    assert AIS().max_time is None and AIS().max_transitions == "auto"
    # "auto": a fixed amount of work, more transitions on smaller models
    big = random_rbm(784, 500, 0.01, np.random.default_rng(0))
    assert AIS().transition_budget(big) == 2**36 // (784 * 500 + 128 * (784 + 500))
    assert AIS().transition_budget(view) == 2**19


def test_without_a_budget_the_estimate_is_reproducible():
    view = random_rbm(8, 6, 1.0, np.random.default_rng(9))
    first, second = (AIS(max_time=None).estimate(view, rng=4) for _ in range(2))
    assert first.value == second.value and first.cost["n_chains"] == second.cost["n_chains"]


def test_monitoring_gives_a_default_estimator_a_cheap_budget(binary_digits, capsys):
    X = binary_digits[:200, :40]  # 40 x 24: "auto" is AIS
    rbm = RBM(n_components=24, n_iter=2, monitor_likelihood=True, verbose=1,
              random_state=0).fit(X)
    view = rbm._model_view()
    assert Monitor(rbm, X).z_estimator(view, 0.01).max_time == MONITOR_LOG_Z_SECONDS
    assert Monitor(rbm, X).z_estimator(view, 7.0).max_time == 7.0
    history = rbm.history_
    assert len(history["log_z_time"]) == 2 and len(history["log_z_std_error"]) == 2
    assert "log Z time = " in capsys.readouterr().out
    own = RBM(n_components=24, z_estimator=AIS(max_time=None)).fit(X)
    assert Monitor(own, X).z_estimator(view, 0.01).max_time is None  # the user's choice


def test_exact_learning_beyond_its_cap_forecasts_its_time(binary_digits):
    X = binary_digits[:300, 20:36]
    with pytest.raises(TooManyStatesError,
                       match=r"about .+ per update here \(timed on a smaller enumeration\), "
                             r".+ per epoch of 30 minibatches"):
        BoltzmannMachine(n_hidden=4, learning="exact").fit(X)


def test_slow_epochs_report_their_progress_under_verbose(binary_digits, monkeypatch, capsys):
    monkeypatch.setattr(skboltz.utils._runtime, "EPOCH_REPORT_SECONDS", 0.0)
    X = binary_digits[:40, 20:28]
    BoltzmannMachine(n_hidden=2, learning=ExactGradient(), n_iter=1, verbose=1).fit(X)
    lines = [line for line in capsys.readouterr().out.splitlines() if " rows in " in line]
    assert lines and lines[-1].startswith("[BoltzmannMachine] epoch 1: ")
    done = [int(line.split(": ")[1].split(" of ")[0]) for line in lines]
    assert done == sorted(done) and all(" of 40 rows" in line for line in lines)


# -- reverse annealing checks its rows -------------------------------------------------
def test_reverse_log_likelihood_checks_its_rows_as_score_samples_does():
    view = random_rbm(5, 3, 1.0, np.random.default_rng(10))
    ais = AIS(n_betas=20)
    X = (np.random.default_rng(0).random((6, 5)) < 0.5).astype(float)
    with pytest.raises(ValueError, match="NaN"):
        ais.reverse_log_likelihood(view, np.where(X > 0, np.nan, X), rng=0)
    with pytest.raises(ValueError, match="4 features, but the model has 5 visible"):
        ais.reverse_log_likelihood(view, X[:, :4], rng=0)
    with pytest.warns(DataRangeWarning, match="6 of 6 rows .* clipped into"):
        outside = ais.reverse_log_likelihood(view, 3 * X - 1, rng=0)
    assert_allclose(outside, ais.reverse_log_likelihood(view, np.clip(3 * X - 1, 0, 1), rng=0))
    assert np.all(outside < 0)


# -- the two parts of a held-out score's error ---------------------------------------
def test_held_out_score_gives_both_parts(binary_digits):
    train, test = binary_digits[:1000, :16], binary_digits[1000:, :16]
    exact = RBM(n_components=8, n_iter=3, random_state=0).fit(train)
    score = held_out_score(exact, test)
    rows = exact.score_samples(test)
    assert score.mean == pytest.approx(exact.score(test))
    assert score.rows_std_error == pytest.approx(np.std(rows, ddof=1) / np.sqrt(rows.size))
    assert score.log_z_std_error == 0.0 and score.std_error == score.rows_std_error
    sampled = RBM(n_components=8, n_iter=3, z_estimator="ais", random_state=0).fit(train)
    score = held_out_score(sampled, test)
    assert score.log_z_std_error == sampled.estimate_log_partition().std_error > 0
    assert score.std_error == pytest.approx(math.hypot(score.rows_std_error,
                                                       score.log_z_std_error))
    bound = RBM(n_components=8, n_iter=3, z_estimator="mean_field", random_state=0).fit(train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateScoreWarning)
        assert held_out_score(bound, test).std_error is None  # a bound's error is unknown


def test_paired_differences_are_far_more_precise_than_each_score(binary_digits):
    train, test = binary_digits[:1000, :16], binary_digits[1000:, :16]
    a = RBM(n_components=8, n_iter=3, random_state=0).fit(train)
    b = RBM(n_components=6, n_iter=3, random_state=0).fit(train)
    difference = paired_score_difference(a, b, test)
    paired = a.score_samples(test) - b.score_samples(test)
    assert difference.difference == pytest.approx(a.score(test) - b.score(test))
    assert difference.rows_std_error == pytest.approx(
        np.std(paired, ddof=1) / np.sqrt(paired.size))
    assert difference.rows_std_error < 0.5 * held_out_score(a, test).rows_std_error
    assert difference.log_z_std_error == 0.0


def test_held_out_scoring_brings_the_errors_into_cv_results(binary_digits):
    X = binary_digits[:400, :16]
    search = GridSearchCV(RBM(n_iter=2, random_state=0), {"n_components": [4, 6]},
                          scoring=held_out_scoring(), refit="log_likelihood", cv=2).fit(X)
    results = search.cv_results_
    assert np.all(results["mean_test_rows_std_error"] > 0)
    assert np.all(results["mean_test_log_z_std_error"] == 0)  # exact here
    plain = GridSearchCV(RBM(n_iter=2, random_state=0), {"n_components": [4, 6]},
                         cv=2).fit(X)
    assert_allclose(results["mean_test_log_likelihood"], plain.cv_results_["mean_test_score"])


# -- bracketing the log-likelihood ---------------------------------------------------
def test_the_bounds_bracket_the_exact_log_likelihood(binary_digits):
    train, test = binary_digits[:1400], binary_digits[1400:]
    rbm = RBM(n_components=12, n_iter=5, random_state=0).fit(train)
    exact = rbm.score(test)  # exact log Z
    bounds = rbm.estimate_log_likelihood_bounds(test, max_rows=60)
    assert bounds.upper == pytest.approx(exact)
    assert bounds.lower <= exact + 3 * bounds.lower_std_error
    assert bounds.width < 1.0 and bounds.n_rows_reversed == 60
    assert list(bounds.gaps)[0] == 1000 and bounds.n_betas == max(bounds.gaps)
    fixed = rbm.estimate_log_likelihood_bounds(test, n_betas=300, max_rows=60)
    assert list(fixed.gaps) == [300]


def test_the_bounds_need_visible_sampler_states(binary_digits):
    bm = BoltzmannMachine(n_hidden=2, learning="exact", n_iter=1, random_state=0)
    bm.fit(binary_digits[:50, :6])
    with pytest.raises(ValueError, match="sampler state to be the visible units"):
        bm.estimate_log_likelihood_bounds(binary_digits[:50, :6])


def test_few_betas_many_chains_with_per_chain_bases_stay_unbiased():
    """Chains from three bases in one batch, 4 betas, 30,000 chains: each base's mean
    weight is unbiased for Z (a transition at the wrong beta is ~10 se off)."""
    view = random_rbm(6, 4, 1.5, np.random.default_rng(11))
    exact = Exact().estimate(view).value
    rates = np.linspace(0.2, 0.8, 6)
    kinds = ("data", "response", "model")
    bases = np.repeat([view.annealing_base(rates, kind) for kind in kinds], 10000, axis=0)
    log_w = anneal_forward(view.annealing(bases, 30000, np.random.default_rng(5)),
                           beta_schedule(4, "linear"))
    for k, kind in enumerate(kinds):
        mine = log_w[10000 * k : 10000 * (k + 1)]
        w = np.exp(mine - mine.max())
        value = view.base_log_partition(bases[10000 * k]) + mine.max() + np.log(w.mean())
        std_error = w.std() / w.mean() / np.sqrt(w.size)
        assert abs(value - exact) < 4 * std_error, kind


def test_a_bm_anneals_from_each_base_one_batch_each():
    # A BM's chains run one base per batch; the combination still estimates Z.
    view = small_models()[1][1]
    exact = Exact().estimate(view).value
    log_z = AIS(target_std_error=0.02).estimate(view, rng=1, data_rates=np.full(5, 0.4))
    assert sorted(log_z.cost["bases"]) == ["data", "model", "response"]
    assert abs(log_z.value - exact) <= 3 * log_z.std_error


def test_a_reverse_estimate_above_the_forward_one_warns():
    """RAISE above the forward end (here: a forward log Z 5 nats too high) is not a
    bracket: the width is negative and a warning says RAISE is not conservative yet."""
    rng = np.random.default_rng(12)
    view = random_rbm(6, 4, 1.0, rng)
    X = (rng.random((80, 6)) < 0.5).astype(float)
    exact = Exact().estimate(view)
    too_high = LogZ(exact.value + 5.0, lower=exact.value + 5.0, upper=exact.value + 5.0)
    with pytest.warns(UserWarning, match="not conservative yet"):
        bounds = log_likelihood_bounds(view, X, too_high, n_betas=200, rng=0)
    assert bounds.width < 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the exact forward end: a proper bracket
        bounds = log_likelihood_bounds(view, X, exact, n_betas=200, rng=0)
    assert bounds.width >= -3 * bounds.lower_std_error


# -- issue 31: what a score is, error bars that cover what the warnings say -----------
def test_a_bound_says_it_is_a_bound_in_every_score_result(binary_digits):
    """Issue 31: held_out_score on DBM(likelihood="bound") said log_z_kind='exact' and a
    standard error, and paired_score_difference of the same weights, bound against
    exact rows, gave z = -25,893. A bound says so; bound against exact is not
    comparable."""
    import copy

    from skboltz import DBM

    X = binary_digits[:, 20:36]
    bound = DBM((6, 4), n_iter=3, likelihood="bound", random_state=0).fit(X[:1000])
    exact = copy.deepcopy(bound).set_params(likelihood="exact")  # the same weights
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateScoreWarning)
        score = held_out_score(bound, X[1000:])
    assert (score.kind, score.log_z_kind) == ("lower_bound", "exact")
    assert not score.is_log_likelihood and score.std_error is None
    score = held_out_score(exact, X[1000:])
    assert score.kind == "exact" and score.is_log_likelihood
    assert score.std_error == score.rows_std_error > 0
    with pytest.warns(ApproximateScoreWarning, match="not comparable .*model a's are "
                                                     "lower bounds.*model b's are exact"):
        difference = paired_score_difference(bound, exact, X[1000:])
    assert difference.kinds == ("lower_bound", "exact") and not difference.comparable
    assert difference.z is None and difference.std_error is None
    with warnings.catch_warnings():
        warnings.simplefilter("error", ApproximateScoreWarning)  # exact against exact
        assert paired_score_difference(exact, exact, X[1000:]).z is None  # 0 / 0
    # and in a search's results
    search = GridSearchCV(bound, {"likelihood": ["bound", "exact"]}, cv=2,
                          scoring=held_out_scoring(), refit="log_likelihood")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateScoreWarning)
        results = search.fit(X[:600]).cv_results_
    assert results["mean_test_is_log_likelihood"].tolist() == [0.0, 1.0]


def test_what_a_score_is_follows_from_its_two_terms():
    from skboltz.partition._base import score_kind

    assert score_kind("exact") == "exact" and score_kind("estimate") == "estimate"
    assert score_kind("lower_bound") == "upper_bound"  # mean-field log Z: optimistic
    assert score_kind("estimate", "lower_bound") == "lower_bound"
    assert score_kind("upper_bound", "lower_bound") == "lower_bound"
    assert score_kind("lower_bound", "lower_bound") == "approximation"  # opposite sides
    assert score_kind("approximation", "exact") == "approximation"
    assert score_kind("exact", "estimate") == "estimate"


class _PathsThatDisagree(ZEstimator):
    """The default AIS on a view whose "model" path misses ``gap`` nats of log Z."""

    def __init__(self, gap=3.0):
        self.gap = gap

    def estimate(self, model, *, rng=None, data_rates=None):
        wrong = _MissingMass(model, data_rates, "model", lambda n_betas: self.gap)
        return AIS(schedule="linear").estimate(wrong, rng=rng, data_rates=data_rates)


def test_error_bars_cover_the_disagreement_of_the_paths(binary_digits):
    """Issue 31: paths that disagreed by 1.5 nats were reported with a standard error of
    0.019, in LogZ, held_out_score and cv_results_; one warning said AIS "stopped short
    of its accuracy criterion", another "stopped at its target", and the advice was
    z_estimator='auto', already in use."""
    X = binary_digits[:, 20:32]
    rbm = RBM(n_components=10, n_iter=5, z_estimator=_PathsThatDisagree(3.0),
              random_state=0).fit(X[:1000])
    with pytest.warns(LogZAccuracyWarning) as caught:
        log_z = rbm.estimate_log_partition()
    message = str(caught[0].message)
    assert "paths disagree" in message and "stopped at its target" not in message
    assert "sampling error reached target_std_error=0.02" in message
    gap = log_z.cost["bases"]["model"]["below_highest"]
    assert gap > 2.5 and log_z.cost["systematic_error"] == pytest.approx(gap, abs=1e-4)
    assert log_z.cost["sampling_std_error"] <= 0.02 < gap / 3 <= log_z.std_error
    low, high = log_z.interval()
    assert low <= log_z.cost["bases"]["model"]["log_z"] and high >= log_z.value + gap
    assert not log_z.converged and "disagree" in log_z.describe()
    assert "stopped short" not in log_z.describe()
    with pytest.warns(ApproximateScoreWarning) as caught:
        score = held_out_score(rbm, X[1000:])
    assert score.log_z_std_error == log_z.std_error
    assert score.std_error >= log_z.std_error
    assert "z_estimator='auto'" not in str(caught[0].message)  # AIS is in use already
    search = GridSearchCV(rbm, {"n_components": [10]}, cv=2, scoring=held_out_scoring(),
                          refit="log_likelihood")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = search.fit(X[:600]).cv_results_
    assert results["mean_test_log_z_std_error"][0] > 2.5 / 3


def test_a_search_mixing_bounds_and_estimates_says_so_once(binary_digits):
    """Issue 31: the optimism warning of a mean-field candidate came once per fold;
    it is about the setting, so a search shows it once."""
    X = binary_digits[:300, 20:32]
    search = GridSearchCV(RBM(n_components=6, n_iter=2, random_state=0),
                          {"z_estimator": ["mean_field", "exact"]}, cv=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        search.fit(X)
    said = [str(w.message) for w in caught
            if issubclass(w.category, ApproximateScoreWarning)]
    assert len(said) == 1 and "not measured alike" in said[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # asked for every one: every fold's
        search.fit(X)
    assert sum(issubclass(w.category, ApproximateScoreWarning) for w in caught) == 3


def test_logz_has_a_short_repr_and_its_details_on_demand():
    view = random_rbm(8, 6, 1.0, np.random.default_rng(3))
    log_z = AIS().estimate(view, rng=0)
    assert repr(log_z) == f"LogZ({log_z.value:.6g} +- {log_z.std_error:.3g}, " \
                          "kind='estimate', method='ais')"
    assert "bases" in log_z.cost and "sampling estimate" in log_z.describe()
    assert repr(LogZ(2.0, 0.1, converged=False)) == (
        "LogZ(2 +- 0.1, kind='estimate', converged=False)")


def test_bounds_that_cross_within_their_noise_say_so():
    """Issue 31: the bracket printed lower > upper (within noise) without a word."""
    rng = np.random.default_rng(2)
    view = random_rbm(6, 4, 0.5, rng)
    X = (rng.random((60, 6)) < 0.5).astype(float)
    bounds = log_likelihood_bounds(view, X, Exact().estimate(view), n_betas=200, rng=0)
    assert bounds.lower > bounds.upper and -bounds.width <= 2 * bounds.width_std_error
    assert bounds.note.startswith("lower is above upper by") and "ends agree" in bounds.note
    assert "note='lower is above upper" in repr(bounds)
    apart = log_likelihood_bounds(view, X, Exact().estimate(view), n_betas=3, rng=0)
    assert apart.width > 0 and apart.note == ""


@pytest.mark.parametrize("arguments, error, message", [
    ({"max_rows": 0}, ValueError, "max_rows == 0, must be >= 1"),
    ({"max_rows": 2.5}, TypeError, "max_rows must be an instance of int"),
    ({"n_betas": 1}, ValueError, "n_betas == 1, must be >= 2"),
    ({"max_time": -1.0}, ValueError, "max_time must be a positive number of seconds"),
])
def test_the_bounds_refuse_bad_arguments_clearly(binary_digits, arguments, error, message):
    """Issue 31: max_rows=0 said "Found array with 0 sample(s)"."""
    rbm = RBM(n_components=4, n_iter=1, random_state=0).fit(binary_digits[:100, :8])
    with pytest.raises(error, match=message):
        rbm.estimate_log_likelihood_bounds(binary_digits[:50, :8], **arguments)


def test_held_out_scores_refuse_a_model_without_a_log_likelihood(binary_digits):
    """Issue 31: held_out_score(BernoulliRBM()) gave an AttributeError."""
    from sklearn.neural_network import BernoulliRBM

    from skboltz import DBN

    X = binary_digits[:100, :8]
    sklearn_rbm = BernoulliRBM(n_components=4, n_iter=1, random_state=0).fit(X)
    with pytest.raises(TypeError, match="held_out_score needs a fitted skboltz density "
                                        "model.*BernoulliRBM has no estimate_log_partition."
                                        ".*skboltz.RBM is its drop-in replacement"):
        held_out_score(sklearn_rbm, X)
    dbn = DBN((3,), rbm=RBM(n_iter=1), random_state=0).fit(X)
    with pytest.raises(TypeError, match="DBN has no score_samples and no "
                                        "estimate_log_partition"):
        paired_score_difference(dbn, dbn, X)


# -- a default score always comes (issue 41) ---------------------------------------------
def _too_low_ais(monkeypatch, rows, by=30.0):
    """AIS estimates ``by`` nats below the rows' largest -F(v): an estimate that missed
    the model's probability near its training rows (as the default AIS did on RBM(500)
    models of real MNIST digits)."""
    def estimate(self, model, *, rng=None, data_rates=None, progress=None):
        value = float(np.max(-model.astype(np.float64).free_energy(rows))) - by
        return LogZ(value, 0.5, value - 1.5, value + 1.5, method="ais", kind="estimate",
                    converged=False, caveats=("it stopped at its budget",),
                    cost={"n_chains": 64})
    monkeypatch.setattr(AIS, "estimate", estimate)


def test_a_default_score_the_rows_prove_too_low_comes_with_one_warning(binary_digits,
                                                                       monkeypatch):
    X = binary_digits[:300, :40]  # 40 x 24: "auto" is AIS
    rbm = RBM(n_components=24, n_iter=2, random_state=0).fit(X)
    _too_low_ais(monkeypatch, X)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        score = rbm.score(X)
    assert np.isfinite(score) and score <= 0
    assert len(caught) == 1 and issubclass(caught[0].category, ApproximateScoreWarning)
    assert "did not converge within its default budget" in str(caught[0].message)
    log_z = rbm.estimate_log_partition()
    floor = float(np.max(-rbm.free_energy(X)))
    # raised to what the rows prove, its error as wide as what the estimate missed
    assert log_z.value >= floor - 1e-9 and log_z.lower >= floor - 1e-9
    assert log_z.std_error >= 25 and not log_z.converged
    assert "raised_to_data_bound" in log_z.cost
    assert rbm.score(X) == score  # the model's log Z from then on


def test_an_explicit_impossible_estimate_still_raises(binary_digits, monkeypatch):
    X = binary_digits[:300, :40]
    rbm = RBM(n_components=24, n_iter=2, z_estimator=AIS(), random_state=0).fit(X)
    _too_low_ais(monkeypatch, X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateScoreWarning)
        with pytest.raises(ValueError, match="is impossible.*max_transitions"):
            rbm.score(X)
