"""Check that a refactoring left every fit unchanged: a digest of many small fits.

Fits every estimator with every learning strategy (by name, as an object, and a user's
own), every log Z estimator and both dtypes on small data with fixed seeds, plus
``partial_fit`` sequences (a dtype switch, hand-edited parameters, a failed call rolled
back), early stopping, sparse input, DBN and BoltzmannClassifier, GaussianRBM with
whitening and BoltzmannMachine with each connectivity; RBMClassifier (labelled and
partly unlabelled rows), DBM (with and without pretraining), DBNClassifier and
LikelihoodOutlierDetector; and the update rule: RBM, GaussianRBM, RBMClassifier,
BoltzmannMachine and DBM with momentum (a constant and a schedule) and weight decay,
with and without iterate averaging, through every learning strategy (the RBM's fused
loop and the plain one), by fit and by partial_fit. For each it records the fitted
attributes (fitted sub-estimators as models of their own), ``history_`` without its
times, and the outputs of ``score_samples``, ``transform``, ``reconstruct``,
``free_energy``, ``gibbs``, ``sample``, ``estimate_log_partition``, ``predict_proba``,
``predict_log_proba``, ``decision_function`` and ``predict``; a case that raises records
the exception's type and message.

Write a digest of this checkout, then compare two digests (bitwise, and the largest
difference where they are not)::

    python benchmarks/check_same_fits.py --write /tmp/before.json
    python benchmarks/check_same_fits.py --write /tmp/after.json
    python benchmarks/check_same_fits.py --compare /tmp/before.json /tmp/after.json

``--checkout PATH`` writes the digest of another checkout's skboltz with this script's
cases (e.g. of the commit before a change, checked out as a git worktree), so both
digests come from the same cases::

    git worktree add /tmp/before HEAD~3
    python benchmarks/check_same_fits.py --checkout /tmp/before --write /tmp/before.json

``--compare`` exits with status 1 when a value differs by more than ``--tolerance``
(default 1e-12, absolute, relative to max(1, |value|)) or an outcome changed (a fit that
raised now fits, or the other way round); changed error messages are listed apart.
Uses only the public API, so the same script runs on the code before and after a change.
"""

import argparse
import json
import os
import sys

if __name__ == "__main__" and os.environ.get("PYTHONHASHSEED") != "0":
    # Refusals name sets of options ({'pt', 'cd', 'pcd'}) in the order of their string
    # hashes: fix the hash seed, so that equal refusals give equal messages.
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable, *sys.argv])

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy

import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path


def checkout_to_test(argv):
    """The checkout whose skboltz the digest is of: ``--checkout PATH`` (read before
    skboltz is imported), else the checkout this script lives in."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--checkout", type=Path,
                        default=Path(__file__).resolve().parents[1])
    checkout = parser.parse_known_args(argv)[0].checkout.resolve()
    if not (checkout / "skboltz" / "__init__.py").is_file():
        sys.exit(f"--checkout {checkout}: no skboltz/__init__.py there")
    return checkout


CHECKOUT = checkout_to_test(sys.argv[1:])
sys.path.insert(0, str(CHECKOUT))  # ahead of any installed (or editable) skboltz

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.datasets import load_digits, load_wine
from sklearn.preprocessing import StandardScaler

import skboltz
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
from skboltz.learning import (
    CD,
    PCD,
    BMLearningStrategy,
    ExactGradient,
    Gibbs,
    MeanFieldGradient,
    MeanFieldPCD,
    ParallelTempering,
    RBMLearningStrategy,
    TAPGradient,
)
from skboltz.partition import AIS, TAP, Exact, MeanField, VisitedStates

DTYPES = (np.float64, np.float32)

# -- data ---------------------------------------------------------------------------


def binary_data(n_rows=42, n_features=6, seed=0):
    rng = np.random.default_rng(seed)
    prototypes = np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1], [1, 0, 1, 0, 1, 0]])
    X = prototypes[rng.integers(0, 3, n_rows), :n_features].astype(float)
    return np.abs(X - (rng.random(X.shape) < 0.05))


def fractional_data():
    """Digit pixels in [0, 1]: 60 rows of 8 central pixels."""
    return load_digits().data[:60, 26:34] / 16


def real_data():
    """Standardised wine features: 60 rows, 5 features."""
    return StandardScaler().fit_transform(load_wine().data[::3, :5])


# -- users' own strategies (public extension points) ---------------------------------


class RandomRestart(RBMLearningStrategy):
    """A user's RBM negative phase without state."""

    def __init__(self, n_rows=9):
        self.n_rows = n_rows

    def negative_phase(self, model, batch, state, rng, progress):
        V = (rng.random((self.n_rows, model.n_visible)) < 0.5).astype(model.dtype)
        return model.gibbs_step(V, rng)


def visible_gibbs_step(model, V, rng):
    """One step v -> h -> v on visible rows (binary or Gaussian visible units)."""
    if hasattr(model, "variance"):  # GaussianRBMView: its gibbs_step is h -> v -> h
        return model.sample_visible(model.sample_hidden(V, rng), rng)
    return model.gibbs_step(V, rng)


class DictChains(RBMLearningStrategy):
    """A user's RBM negative phase with persistent chains in a dict."""

    def __init__(self, n_chains=8):
        self.n_chains = n_chains

    def init_state(self, model, X, batch_size, rng):
        return {"chains": (rng.random((self.n_chains, model.n_visible)) < 0.5).astype(
            model.dtype)}

    def negative_phase(self, model, batch, state, rng, progress):
        state["chains"] = visible_gibbs_step(model, state["chains"], rng)
        return state["chains"]


@dataclass
class Chains:
    visible: np.ndarray
    n_calls: int = 0


class DataclassChains(RBMLearningStrategy):
    """A user's RBM negative phase whose state is a dataclass (failed before issue 21).

    Raises on a minibatch of ``fail_rows`` rows (to check that a failed call is rolled
    back).
    """

    def __init__(self, n_chains=8, fail_rows=None):
        self.n_chains = n_chains
        self.fail_rows = fail_rows

    def init_state(self, model, X, batch_size, rng):
        return Chains((rng.random((self.n_chains, model.n_visible)) < 0.5).astype(model.dtype))

    def negative_phase(self, model, batch, state, rng, progress):
        state.n_calls += 1
        if batch.shape[0] == self.fail_rows:
            raise RuntimeError("planned failure")
        state.visible = visible_gibbs_step(model, state.visible, rng)
        return state.visible


class FailingDictChains(DictChains):
    """DictChains that raises on a minibatch of ``fail_rows`` rows."""

    def __init__(self, n_chains=8, fail_rows=None):
        self.n_chains = n_chains
        self.fail_rows = fail_rows

    def init_state(self, model, X, batch_size, rng):
        state = super().init_state(model, X, batch_size, rng)
        state["n_calls"] = 0
        return state

    def negative_phase(self, model, batch, state, rng, progress):
        state["n_calls"] += 1
        if batch.shape[0] == self.fail_rows:
            raise RuntimeError("planned failure")
        return super().negative_phase(model, batch, state, rng, progress)


class JointRestart(RBMLearningStrategy):
    """A user's RBMClassifier negative phase without state: one step of the features
    from the minibatch's, a class drawn for them (joint rows: features, one-hot class)."""

    def negative_phase(self, model, batch, state, rng, progress):
        features = model.gibbs_step(batch[:, : model.n_visible], rng)
        classes, _ = model.sample_class_and_hidden(features, rng)
        return np.hstack([features, classes])


class JointChains(RBMLearningStrategy):
    """A user's RBMClassifier negative phase with persistent feature chains in a dict."""

    def __init__(self, n_chains=6):
        self.n_chains = n_chains

    def init_state(self, model, X, batch_size, rng):
        return {"chains": X[: self.n_chains, : model.n_visible].astype(model.dtype)}

    def negative_phase(self, model, batch, state, rng, progress):
        state["chains"] = model.gibbs_step(state["chains"], rng)
        classes, _ = model.sample_class_and_hidden(state["chains"], rng)
        return np.hstack([state["chains"], classes])


class EnumeratingBM(BMLearningStrategy):
    """A user's BM strategy: factorised clamped phase, enumerated free phase."""

    def positive_phase(self, model, batch, state, rng):
        S = np.hstack([batch, model.hidden_probability(batch)])
        moments = S.T @ S / S.shape[0]
        np.fill_diagonal(moments, S.mean(axis=0))
        return moments

    def negative_phase(self, model, batch, state, rng, progress):
        n = model.n_units
        S = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(np.float64)
        log_p = model.log_unnormalized(S)
        p = np.exp(log_p - logsumexp(log_p))
        moments = S.T @ (S * p[:, None])
        np.fill_diagonal(moments, p @ S)
        return moments


# -- digests --------------------------------------------------------------------------


def encode(value):
    """A JSON-able record of a value: arrays keep dtype, shape and every value."""
    if isinstance(value, np.ndarray) or np.isscalar(value) and isinstance(value, np.generic):
        array = np.asarray(value)
        if array.dtype.kind in "fc":
            return {"dtype": str(array.dtype), "shape": list(array.shape),
                    "values": np.asarray(array, dtype=np.float64).ravel().tolist()}
        if array.dtype.kind in "biu":
            return {"dtype": str(array.dtype), "shape": list(array.shape),
                    "values": array.astype(np.float64).ravel().tolist()}
        return repr(value)
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    if hasattr(value, "value") and hasattr(value, "std_error"):  # LogZ
        return {"value": value.value, "std_error": value.std_error, "lower": value.lower,
                "upper": value.upper, "method": value.method,
                "cost": encode({k: v for k, v in value.cost.items() if k != "seconds"})}
    return repr(value)


def attempt(record, key, call):
    try:
        record[key] = encode(call())
    except Exception as error:  # noqa: BLE001 (recorded, compared)
        record[key] = {"error": type(error).__name__, "message": str(error)}


def digest_model(model, X):
    record = {}
    for name, value in sorted(vars(model).items()):
        if name.endswith("_") and not name.startswith("_") and name not in (
                "history_", *SUB_ESTIMATORS):
            record[name] = encode(value)
    for name in ("n_iter_", "learning_", "z_estimator_"):
        if hasattr(model, name):
            record[name] = encode(getattr(model, name))
    if hasattr(model, "history_"):
        # without the times ("time", "log_z_time"): they differ on every run
        record["history_"] = encode({k: v for k, v in model.history_.items()
                                     if not k.endswith("time")})
    rows = X[:7]
    for method in ("score_samples", "transform", "reconstruct", "free_energy"):
        if hasattr(model, method):
            attempt(record, method, lambda: getattr(model, method)(rows))
    if hasattr(model, "estimate_log_partition"):
        attempt(record, "log_z", model.estimate_log_partition)
    if hasattr(model, "gibbs"):
        attempt(record, "gibbs_1", lambda: model.gibbs(rows[:4]))
        attempt(record, "gibbs_2", lambda: model.gibbs(rows[:4]))  # the model's own stream
        attempt(record, "gibbs_seeded", lambda: model.gibbs(rows[:4], random_state=3))
    if hasattr(model, "sample"):
        attempt(record, "sample", lambda: model.sample(3, n_steps=6))
        attempt(record, "sample_seeded", lambda: model.sample(2, random_state=5, n_steps=4))
    for name in ("layers_", "estimators_"):
        if hasattr(model, name):
            record[name] = [digest_model(sub, sub_rows(sub, X, model, k))
                            for k, sub in enumerate(getattr(model, name))]
    for name in ("estimator_", "dbn_", "mlp_"):
        if hasattr(model, name):
            record[name] = digest_model(getattr(model, name), sub_rows(name, X, model, 0))
    for method in ("predict_proba", "predict_log_proba", "decision_function", "predict"):
        if hasattr(model, method):
            attempt(record, method, lambda: getattr(model, method)(rows))
    return record


#: Fitted sub-estimators: digested as models of their own, not as their repr.
SUB_ESTIMATORS = ("layers_", "estimators_", "estimator_", "dbn_", "mlp_")


def sub_rows(sub, X, model, k):
    """The rows a sub-estimator sees: a DBN layer its own input, others the model's
    (the DBNClassifier's network is fine-tuned from the pixels up)."""
    if isinstance(model, DBN):
        for layer in model.layers_[:k]:
            X = layer.transform(X)
    return X


def run_case(build, X):
    warnings.simplefilter("ignore")
    try:
        model = build()
    except Exception as error:  # noqa: BLE001 (an outcome too)
        return {"raised": type(error).__name__, "message": str(error)}
    return digest_model(model, X)


# -- the cases ------------------------------------------------------------------------


def rbm_learning():
    return {
        "pcd": "pcd", "cd": "cd", "pt": "pt", "exact": "exact", "tap": "tap",
        "CD(2)": CD(n_steps=(1, 3)), "PCD(7,2)": PCD(n_chains=7, n_steps=2),
        "PT(3)": ParallelTempering(n_temperatures=3, n_chains=5),
        "ExactGradient": ExactGradient(chunk_size=4), "TAP(2)": TAPGradient(max_iter=2),
        "RandomRestart": RandomRestart(), "DictChains": DictChains(),
        "DataclassChains": DataclassChains(),
    }


class GaussianRestart(RBMLearningStrategy):
    """A user's GaussianRBM negative phase without state: one step from the data."""

    def negative_phase(self, model, batch, state, rng, progress):
        return model.sample_visible(model.sample_hidden(batch, rng), rng)


def gaussian_learnings():
    return {
        "pt": "pt", "pcd": "pcd", "cd": "cd", "CD(2)": CD(n_steps=2),
        "PCD(5)": PCD(n_chains=5), "PT(3)": ParallelTempering(n_temperatures=3),
        "RandomRestartG": GaussianRestart(), "DictChains": DictChains(),
        "DataclassChains": DataclassChains(),
    }


def z_estimators(binary=True):
    estimators = {
        "auto": "auto", "exact": "exact", "ais": "ais", "visited_states": "visited_states",
        "AIS(small)": AIS(n_chains=16, n_betas=40, target_std_error=None),
        "Exact(obj)": Exact(chunk_size=8),
        "VisitedStates(obj)": VisitedStates(n_chains=10, n_steps=30),
    }
    if binary:
        estimators.update({"mean_field": "mean_field", "tap": "tap",
                           "MeanField(2)": MeanField(order=2), "TAP(obj)": TAP(max_iter=50)})
    return estimators


def cases():
    """Yield (name, data, build) for every case."""
    Xb, Xf, Xr = binary_data(), fractional_data(), real_data()
    fitted = lambda model, X: lambda: model.fit(X)  # noqa: E731

    # RBM: learning x z_estimator x dtype (z_estimator also monitored for some)
    for dtype in DTYPES:
        X = Xf.astype(dtype)
        for lname, learning in rbm_learning().items():
            for zname, z in z_estimators().items():
                model = RBM(n_components=4, learning=learning, z_estimator=z, n_iter=3,
                            batch_size=7, learning_rate=0.1, random_state=0)
                yield f"RBM/{lname}/{zname}/{dtype.__name__}", X, fitted(model, X)
        for lname, learning in rbm_learning().items():
            model = RBM(n_components=3, learning=learning, n_iter=4, batch_size=10,
                        momentum=(0.5, 0.9), weight_decay=1e-3, average_window=None,
                        visible_bias_init="data_rates", monitor_likelihood=True,
                        validation_fraction=0.25, random_state=1)
            yield f"RBM/options/{lname}/{dtype.__name__}", X, fitted(model, X)
        model = RBM(n_components=3, n_iter=12, validation_fraction=0.3, n_iter_no_change=2,
                    tol=0.5, random_state=2)
        yield f"RBM/early-stop-reconstruction/{dtype.__name__}", X, fitted(model, X)
        model = RBM(n_components=3, n_iter=12, validation_fraction=0.3, n_iter_no_change=2,
                    tol=0.01, monitor_likelihood=True, random_state=2)
        yield f"RBM/early-stop-likelihood/{dtype.__name__}", X, fitted(model, X)
        model = RBM(n_components=3, n_iter=12, n_iter_no_change=3, tol=0.0, random_state=2)
        yield f"RBM/early-stop-train/{dtype.__name__}", X, fitted(model, X)
        model = RBM(n_components=4, n_iter=3, batch_size=5, random_state=3)
        sparse = sp.csr_matrix(Xb.astype(dtype))
        yield f"RBM/sparse/{dtype.__name__}", sparse, fitted(model, sparse)
        model = RBM(n_components=5, n_iter=2, batch_size=200, momentum=0.5, random_state=4)
        yield f"RBM/one-batch/{dtype.__name__}", X, fitted(model, X)

    # RBM partial_fit sequences
    for lname in ("pcd", "cd", "pt", "exact", "tap", "DictChains", "DataclassChains"):
        for average_window in (100, None):
            def build(lname=lname, average_window=average_window):
                model = RBM(n_components=4, learning=rbm_learning()[lname], batch_size=6,
                            average_window=average_window, momentum=0.5, random_state=5)
                for start in range(0, 60, 12):
                    model.partial_fit(Xf[start : start + 12])
                model.partial_fit(Xf[:12].astype(np.float32))  # dtype switch
                model.partial_fit(Xf[12:30])
                model.components_ = model.components_ * 1.5  # a hand edit
                model.partial_fit(Xf[30:45])
                return model
            yield f"RBM/partial_fit/{lname}/avg{average_window}", Xf, build

    def rbm_fit_then_partial():
        model = RBM(n_components=4, n_iter=3, random_state=6).fit(Xf)
        model.partial_fit(Xf[:20])
        model.partial_fit(Xf[20:21])  # one row
        return model
    yield "RBM/fit-then-partial_fit", Xf, rbm_fit_then_partial

    for cls in (FailingDictChains, DataclassChains):
        def rolled_back(cls=cls):
            model = RBM(n_components=4, learning=cls(fail_rows=5), batch_size=6,
                        random_state=7)
            model.partial_fit(Xf[:12])
            for rows in (Xf[12:17], Xf[12:29]):  # fails at once; after two updates
                try:
                    model.partial_fit(rows)
                except RuntimeError:
                    pass
                else:
                    raise AssertionError("the planned failure did not happen")
            model.partial_fit(Xf[12:24])
            model.partial_fit(Xf[24:36])
            return model
        yield f"RBM/partial_fit-failure/{cls.__name__}", Xf, rolled_back

    # GaussianRBM: learning x z_estimator x dtype, whitening, variances, partial_fit
    gaussian_learning = gaussian_learnings()
    for dtype in DTYPES:
        X = Xr.astype(dtype)
        for lname, learning in gaussian_learning.items():
            for zname, z in z_estimators(binary=False).items():
                model = GaussianRBM(n_components=3, learning=learning, z_estimator=z,
                                    n_iter=3, batch_size=7, learning_rate=0.02,
                                    random_state=0)
                yield f"GaussianRBM/{lname}/{zname}/{dtype.__name__}", X, fitted(model, X)
        for whiten in (False, True):
            for learn_variance in (True, False):
                model = GaussianRBM(n_components=3, n_iter=4, whiten=whiten,
                                    learn_variance=learn_variance, average_window=None,
                                    monitor_likelihood=True, validation_fraction=0.2,
                                    n_iter_no_change=2, learning="pcd", random_state=1)
                yield (f"GaussianRBM/whiten{whiten}/variance{learn_variance}/"
                       f"{dtype.__name__}", X, fitted(model, X))
    for name, learning in (("exact", "exact"), ("tap", "tap"), ("TAPGradient", TAPGradient()),
                           ("ExactGradient", ExactGradient())):
        model = GaussianRBM(n_components=2, learning=learning, n_iter=1)
        yield f"GaussianRBM/refused-learning/{name}", Xr, fitted(model, Xr)
    for name, z in (("mean_field", "mean_field"), ("MeanField", MeanField()), ("TAP", TAP())):
        model = GaussianRBM(n_components=2, z_estimator=z, n_iter=1)
        yield f"GaussianRBM/refused-z/{name}", Xr, fitted(model, Xr)
    for whiten in (False, True):
        for lname in ("pt", "pcd", "DataclassChains"):
            def build(whiten=whiten, lname=lname):
                model = GaussianRBM(n_components=3, whiten=whiten, batch_size=5,
                                    learning=gaussian_learning[lname], random_state=2)
                for start in range(0, 60, 15):
                    model.partial_fit(Xr[start : start + 15])
                model.partial_fit(Xr[:15].astype(np.float32))
                model.variance_ = model.variance_ * 1.1  # a hand edit
                model.partial_fit(Xr[15:30])
                return model
            yield f"GaussianRBM/partial_fit/whiten{whiten}/{lname}", Xr, build

    def gaussian_whiten_changed():
        model = GaussianRBM(n_components=2, whiten=True, random_state=0).partial_fit(Xr)
        return model.set_params(whiten=False).partial_fit(Xr)
    yield "GaussianRBM/partial_fit-whiten-changed", Xr, gaussian_whiten_changed

    # BoltzmannMachine: learning x z_estimator x dtype; connectivity x learning x dtype
    bm_learning = {
        "gibbs": "gibbs", "exact": "exact", "mean_field": "mean_field",
        "Gibbs(obj)": Gibbs(n_chains=12, annealing=None, n_steps=2),
        "Gibbs(enum0)": Gibbs(n_chains=12, enumerate_hidden=0),
        "MF(fixed)": MeanFieldGradient(free_phase="fixed_point", linear_response=False),
        "MF(enum0)": MeanFieldGradient(enumerate_hidden=0),
        "ExactGradient": ExactGradient(), "EnumeratingBM": EnumeratingBM(),
    }
    Xbm = binary_data(n_rows=30, n_features=5)
    for dtype in DTYPES:
        X = Xbm.astype(dtype)
        for lname, learning in bm_learning.items():
            for zname, z in z_estimators().items():
                model = BoltzmannMachine(n_hidden=2, learning=learning, z_estimator=z,
                                         n_iter=2, batch_size=7, random_state=0)
                yield f"BM/{lname}/{zname}/{dtype.__name__}", X, fitted(model, X)
        mask = np.ones((7, 7), dtype=bool)
        np.fill_diagonal(mask, False)  # a unit is never coupled to itself
        mask[0, 3] = mask[3, 0] = mask[5, 6] = mask[6, 5] = False
        for cname, connectivity in (("no_hidden_hidden", "no_hidden_hidden"),
                                    ("bipartite", "bipartite"), ("mask", mask)):
            for lname, learning in bm_learning.items():
                if lname == "EnumeratingBM" and cname == "mask":
                    continue  # its clamped phase assumes uncoupled hidden units
                model = BoltzmannMachine(n_hidden=2, connectivity=connectivity,
                                         learning=learning, n_iter=2, batch_size=7,
                                         random_state=1)
                yield f"BM/{cname}/{lname}/{dtype.__name__}", X, fitted(model, X)
        for options in (dict(centering=False, code_entropy=0.0), dict(n_init=2),
                        dict(n_hidden=0), dict(temperature=2.0, momentum=0.3),
                        dict(validation_fraction=0.3, n_iter_no_change=1,
                             monitor_likelihood=True, n_iter=6)):
            settings = dict(n_hidden=2, n_iter=3, batch_size=6, random_state=2)
            settings.update(options)
            model = BoltzmannMachine(**settings)
            name = ",".join(f"{k}={v}" for k, v in options.items())
            yield f"BM/options/{name}/{dtype.__name__}", X, fitted(model, X)
    for lname in ("gibbs", "mean_field", "exact"):
        def build(lname=lname):
            model = BoltzmannMachine(n_hidden=2, learning=bm_learning[lname], batch_size=5,
                                     random_state=3)
            for start in range(0, 30, 10):
                model.partial_fit(Xbm[start : start + 10])
            model.partial_fit(Xbm[:10].astype(np.float32))
            model.coupling_ = model.coupling_ * 0.9
            model.partial_fit(Xbm[10:20])
            return model
        yield f"BM/partial_fit/{lname}", Xbm, build

    def bm_many_hidden():
        model = BoltzmannMachine(n_hidden=17, learning="mean_field", n_iter=1, batch_size=10,
                                 z_estimator=AIS(n_chains=8, n_betas=20,
                                                 target_std_error=None), random_state=4)
        return model.fit(Xbm[:10, :3])
    yield "BM/many-coupled-hidden", Xbm[:4, :3], bm_many_hidden
    for name, learning in (("PCD", PCD()), ("TAPGradient", TAPGradient())):
        yield f"BM/refused/{name}", Xbm, fitted(BoltzmannMachine(learning=learning), Xbm)
    for name, learning in (("Gibbs", Gibbs()), ("MeanFieldGradient", MeanFieldGradient())):
        yield f"RBM/refused/{name}", Xb, fitted(RBM(learning=learning), Xb)

    # DBN and BoltzmannClassifier
    for dtype in DTYPES:
        X = Xf.astype(dtype)
        dbn = DBN(hidden_layer_sizes=(5, 3), rbm=RBM(n_iter=2, batch_size=8), random_state=0)
        yield f"DBN/{dtype.__name__}", X, fitted(dbn, X)
        dbn = DBN(hidden_layer_sizes=(4, 2), first_layer=GaussianRBM(n_iter=2),
                  rbm=RBM(n_iter=2, learning="cd"), random_state=1)
        yield f"DBN/gaussian/{dtype.__name__}", Xr.astype(dtype), fitted(dbn, Xr.astype(dtype))

    def dbn_partial():
        dbn = DBN(hidden_layer_sizes=(4, 3), rbm=RBM(batch_size=5), random_state=2)
        for start in range(0, 60, 20):
            dbn.partial_fit(Xf[start : start + 20])
        return dbn
    yield "DBN/partial_fit", Xf, dbn_partial
    y = (Xf[:, 3] > 0.4).astype(int) + (Xf[:, 5] > 0.4)
    for name, estimator in (("default", None), ("RBM-pt", RBM(n_components=3, n_iter=3,
                                                               learning="pt")),
                            ("BM", BoltzmannMachine(n_hidden=1, n_iter=2)),
                            ("Gaussian", GaussianRBM(n_components=2, n_iter=2))):
        data = Xr if name == "Gaussian" else Xf
        clf = BoltzmannClassifier(estimator=estimator, random_state=0)
        yield f"BoltzmannClassifier/{name}", data, lambda clf=clf, data=data: clf.fit(data, y)

    yield from update_rule_cases()
    yield from rbm_classifier_cases()
    yield from dbm_cases()
    yield from dbn_classifier_cases()
    yield from outlier_cases()


# -- the update rule: momentum and weight decay through every training loop -----------

#: (momentum, weight_decay, average_window): each path of the update (momentum or the
#: step itself, decay or none, averaging or the iterate published, a momentum schedule).
#: The fits run 63 updates (9 minibatches, 7 epochs: the schedule switches after 5),
#: so the RBM's weight decay, applied every 16 updates, falls mid-epoch and carries
#: over epochs.
UPDATE_RULES = [(momentum, decay, window)
                for momentum, decay in ((0.0, 1e-2), (0.5, 0.0), (0.7, 1e-2),
                                        ((0.3, 0.8), 3e-3))
                for window in (100, None)]


def rule_name(momentum, decay, window):
    momentum = ",".join(map(str, momentum)) if isinstance(momentum, tuple) else momentum
    return f"m{momentum}-wd{decay:g}-avg{window}"


def streamed(model, X, y=None, first_call=None, edit="components_"):
    """Train by partial_fit calls of 12 rows (3 updates at batch_size 5: the decay
    interval of 16 falls inside a call), then a float32 call and a hand edit of
    ``edit`` (a fitted array or a list of arrays)."""
    def call(rows, dtype=np.float64, **options):
        args = (X[rows].astype(dtype),) if y is None else (X[rows].astype(dtype), y[rows])
        model.partial_fit(*args, **options)

    for start in range(0, 96, 12):
        options = (first_call or {}) if start == 0 else {}
        call(slice(start % 60, start % 60 + 12), **options)
    call(slice(0, 12), np.float32)  # a dtype switch
    value = getattr(model, edit)
    setattr(model, edit, [a * 1.2 for a in value] if isinstance(value, list) else value * 1.2)
    call(slice(12, 36))
    return model


def update_rule_cases():
    """RBM and GaussianRBM through every learning (the fused loop: "cd", "pcd", "pt"
    and their objects; the plain loop: "exact", "tap", users' strategies), and
    BoltzmannMachine, with momentum and weight decay, fit and partial_fit."""
    Xf, Xr = fractional_data(), real_data()
    for dtype in DTYPES:
        for momentum, decay, window in UPDATE_RULES:
            rule = rule_name(momentum, decay, window)
            settings = dict(n_iter=7, batch_size=7, momentum=momentum, weight_decay=decay,
                            average_window=window, random_state=11)
            X = Xf.astype(dtype)
            for lname, learning in rbm_learning().items():
                model = RBM(n_components=4, learning=learning, **settings)
                yield (f"update/RBM/{lname}/{rule}/{dtype.__name__}", X,
                       lambda model=model, X=X: model.fit(X))
            X = Xr.astype(dtype)
            for lname, learning in gaussian_learnings().items():
                model = GaussianRBM(n_components=3, learning=learning,
                                    learn_variance=window is not None, **settings)
                yield (f"update/GaussianRBM/{lname}/{rule}/"
                       f"variance{window is not None}/{dtype.__name__}", X,
                       lambda model=model, X=X: model.fit(X))
    streamed_rules = [(0.5, 1e-2, 100), (0.0, 1e-2, None), ((0.3, 0.8), 3e-3, None)]
    for momentum, decay, window in streamed_rules:
        rule = rule_name(momentum, decay, window)
        settings = dict(batch_size=5, momentum=momentum, weight_decay=decay,
                        average_window=window, random_state=12)
        for lname, learning in rbm_learning().items():
            model = RBM(n_components=4, learning=learning, **settings)
            yield (f"update/RBM/partial_fit/{lname}/{rule}", Xf,
                   lambda model=model: streamed(model, Xf))
        for lname, learning in gaussian_learnings().items():
            model = GaussianRBM(n_components=3, learning=learning, **settings)
            yield (f"update/GaussianRBM/partial_fit/{lname}/{rule}", Xr,
                   lambda model=model: streamed(model, Xr))
    Xbm = binary_data(n_rows=30, n_features=5)
    for momentum, decay, _ in UPDATE_RULES[::2]:
        for lname in ("gibbs", "exact", "mean_field"):
            model = BoltzmannMachine(n_hidden=2, learning=lname, n_iter=7, batch_size=7,
                                     momentum=momentum, weight_decay=decay, random_state=13)
            yield (f"update/BM/{lname}/{rule_name(momentum, decay, None)}", Xbm,
                   lambda model=model: model.fit(Xbm))
    # weight decay above the limit of a safe step (refused or warned about)
    for name, model, X in (
            ("RBM-cd", RBM(n_components=3, learning="cd", n_iter=2, weight_decay=0.3,
                           learning_rate=0.5, random_state=0), Xf),
            ("RBM-exact", RBM(n_components=3, learning="exact", n_iter=2, weight_decay=0.3,
                              learning_rate=0.5, random_state=0), Xf),
            ("GaussianRBM", GaussianRBM(n_components=2, n_iter=2, weight_decay=0.5,
                                        learning_rate=0.2, random_state=0), Xr)):
        yield f"update/large-decay/{name}", X, lambda model=model, X=X: model.fit(X)


# -- RBMClassifier, DBM, DBNClassifier, LikelihoodOutlierDetector ---------------------


def class_labels():
    """Three classes for the rows of :func:`fractional_data`, and the same labels with
    every third row unlabelled (-1)."""
    y = load_digits().target[:60] % 3
    return y, np.where(np.arange(60) % 3 == 1, -1, y)


def classifier_learning():
    return {
        "pcd": "pcd", "cd": "cd", "pt": "pt", "exact": "exact", "tap": "tap",
        "CD(2)": CD(n_steps=(1, 3)), "PCD(5,2)": PCD(n_chains=5, n_steps=2),
        "PCD(sample)": PCD(negative_visible="sample"),
        "PT(3)": ParallelTempering(n_temperatures=3, n_chains=4),
        "JointRestart": JointRestart(), "JointChains": JointChains(),
        "ExactGradient": ExactGradient(),
    }


def rbm_classifier_cases():
    Xf = fractional_data()
    y, y_partly = class_labels()
    for dtype in DTYPES:
        X = Xf.astype(dtype)
        for lname, learning in classifier_learning().items():
            for labels, marker, target in (("labelled", None, y), ("partly", -1, y_partly)):
                model = RBMClassifier(n_components=4, learning=learning, n_iter=3,
                                      batch_size=7, unlabelled_marker=marker,
                                      random_state=0)
                yield (f"RBMClassifier/{lname}/{labels}/{dtype.__name__}", X,
                       lambda model=model, X=X, target=target: model.fit(X, target))
        for momentum, decay, window in UPDATE_RULES:
            for lname in ("pcd", "cd", "pt", "JointChains"):
                model = RBMClassifier(n_components=4, learning=classifier_learning()[lname],
                                      n_iter=7, batch_size=7, momentum=momentum,
                                      weight_decay=decay, average_window=window,
                                      unlabelled_marker=-1, random_state=1)
                yield (f"update/RBMClassifier/{lname}/{rule_name(momentum, decay, window)}"
                       f"/{dtype.__name__}", X,
                       lambda model=model, X=X: model.fit(X, y_partly))
            model = RBMClassifier(n_components=4, generative_weight=0.0, n_iter=7,
                                  batch_size=7, momentum=momentum, weight_decay=decay,
                                  average_window=window, random_state=1)
            yield (f"update/RBMClassifier/discriminative/"
                   f"{rule_name(momentum, decay, window)}/{dtype.__name__}", X,
                   lambda model=model, X=X: model.fit(X, y))
        for name, options in (
                ("discriminative", dict(generative_weight=0.0)),
                ("unlabelled_weight0", dict(unlabelled_marker=-1, unlabelled_weight=0.0)),
                ("both-weights0", dict(unlabelled_marker=-1, unlabelled_weight=0.0,
                                       generative_weight=0.0)),
                ("heavy-unlabelled", dict(unlabelled_marker=-1, unlabelled_weight=1.0,
                                          generative_weight=1.0, learning_rate=0.3)),
                ("early-stop-log_loss", dict(validation_fraction=0.25, n_iter_no_change=2,
                                             n_iter=12)),
                ("early-stop-accuracy", dict(validation_fraction=0.25, n_iter_no_change=2,
                                             n_iter=12, early_stopping_score="accuracy",
                                             unlabelled_marker=-1)),
                ("early-stop-train", dict(n_iter_no_change=2, tol=0.0, n_iter=12)),
                ("z-exact", dict(z_estimator="exact")),
                ("z-ais", dict(z_estimator=AIS(n_chains=16, n_betas=40,
                                               target_std_error=None))),
                ("z-visited", dict(z_estimator="visited_states"))):
            settings = dict(n_components=4, n_iter=4, batch_size=7, random_state=2)
            settings.update(options)
            target = y_partly if "unlabelled_marker" in options else y
            model = RBMClassifier(**settings)
            yield (f"RBMClassifier/options/{name}/{dtype.__name__}", X,
                   lambda model=model, X=X, target=target: model.fit(X, target))
    for lname in ("pcd", "cd", "pt", "JointChains"):
        for labels, marker, target in (("labelled", None, y), ("partly", -1, y_partly)):
            model = RBMClassifier(n_components=4, learning=classifier_learning()[lname],
                                  batch_size=5, momentum=0.5, weight_decay=1e-2,
                                  unlabelled_marker=marker, random_state=3)
            yield (f"RBMClassifier/partial_fit/{lname}/{labels}", Xf,
                   lambda model=model, target=target: streamed(
                       model, Xf, target, first_call=dict(classes=[0, 1, 2])))

    def unknown_class():
        model = RBMClassifier(n_components=3, random_state=4)
        model.partial_fit(Xf[:12], y[:12], classes=[0, 1])
        return model
    yield "RBMClassifier/partial_fit-unknown-class", Xf, unknown_class


def dbm_cases():
    Xf = fractional_data()
    dbm_learning = {
        "mean_field_pcd": "mean_field_pcd",
        "MFPCD(2,bottom_up)": MeanFieldPCD(n_steps=2, start="bottom_up"),
        "MFPCD(6,damped)": MeanFieldPCD(n_chains=6, damping=0.3, max_iter=10, tol=1e-3),
        "pcd": "pcd",
    }
    for dtype in DTYPES:
        X = Xf.astype(dtype)
        for lname, learning in dbm_learning.items():
            for pretraining in (0, 2):
                model = DBM(hidden_layer_sizes=(3, 2), learning=learning, likelihood="exact",
                            pretraining_iter=pretraining, n_iter=3, batch_size=10,
                            random_state=0)
                yield (f"DBM/{lname}/pretraining{pretraining}/{dtype.__name__}", X,
                       lambda model=model, X=X: model.fit(X))
        for momentum, decay, window in UPDATE_RULES[::2]:
            for pretraining in (0, 3):
                model = DBM(hidden_layer_sizes=(3, 2), likelihood="exact", n_iter=7,
                            batch_size=7, pretraining_iter=pretraining, momentum=momentum,
                            weight_decay=decay, average_window=window, random_state=1)
                yield (f"update/DBM/{rule_name(momentum, decay, window)}/"
                       f"pretraining{pretraining}/{dtype.__name__}", X,
                       lambda model=model, X=X: model.fit(X))
    for zname, z in (("exact", "exact"), ("mean_field", "mean_field"), ("tap", "tap"),
                     ("AIS(small)", AIS(n_chains=16, n_betas=40, target_std_error=None)),
                     ("VisitedStates", VisitedStates(n_chains=10, n_steps=30))):
        model = DBM(hidden_layer_sizes=(3, 2), z_estimator=z, likelihood="exact", n_iter=3,
                    batch_size=10, random_state=2)
        yield f"DBM/z/{zname}", Xf, lambda model=model: model.fit(Xf)
    for name, options in (
            ("likelihood-bound", dict(likelihood="bound")),
            ("likelihood-auto", dict(likelihood="auto")),
            ("transform-all", dict(transform_layers="all", likelihood="exact")),
            ("no-centering", dict(centering=False, likelihood="exact")),
            ("one-layer", dict(hidden_layer_sizes=4, likelihood="exact")),
            ("three-layers", dict(hidden_layer_sizes=(3, 2, 2), likelihood="exact")),
            ("early-stop", dict(validation_fraction=0.25, n_iter_no_change=2, n_iter=8,
                                monitor_likelihood=True, likelihood="exact"))):
        settings = dict(hidden_layer_sizes=(3, 2), n_iter=3, batch_size=10, random_state=3)
        settings.update(options)
        model = DBM(**settings)
        yield f"DBM/options/{name}", Xf, lambda model=model: model.fit(Xf)
    for pretraining in (0, 2):
        model = DBM(hidden_layer_sizes=(3, 2), likelihood="exact", batch_size=5,
                    pretraining_iter=pretraining, random_state=4)
        yield (f"DBM/partial_fit/pretraining{pretraining}", Xf,
               lambda model=model: streamed(model, Xf, edit="weights_"))


def dbn_classifier_cases():
    Xf = fractional_data()
    y, y_partly = class_labels()
    rbm = RBM(n_iter=3, batch_size=8)
    for name, options, target in (
            ("sgd", dict(), y),
            ("adam", dict(solver="adam"), y),
            ("lbfgs", dict(solver="lbfgs"), y),
            ("two-layers", dict(hidden_layer_sizes=(5, 3)), y),
            ("partly-labelled", dict(unlabelled_marker=-1), y_partly),
            ("early-stopping", dict(early_stopping=True, n_iter_no_change=3), y),
            ("default-rbm", dict(rbm=None, max_iter=10), y)):
        settings = dict(hidden_layer_sizes=(4,), rbm=rbm, max_iter=20, random_state=0)
        settings.update(options)
        for dtype in DTYPES if name == "sgd" else (np.float64,):
            X = Xf.astype(dtype)
            model = DBNClassifier(**settings)
            yield (f"DBNClassifier/{name}/{dtype.__name__}", X,
                   lambda model=model, X=X, target=target: model.fit(X, target))


def outlier_cases():
    Xb, Xf, Xr = binary_data(), fractional_data(), real_data()
    for name, estimator, X in (
            ("default/binary", None, Xb),
            ("default/fractional", None, Xf),
            ("default/real", None, Xr),
            ("default/binary-float32", None, Xb.astype(np.float32)),
            ("RBM", RBM(n_components=3, n_iter=5, batch_size=6), Xf),
            ("RBM-exact", RBM(n_components=3, n_iter=5, learning="exact"), Xb),
            ("GaussianRBM", GaussianRBM(n_components=2, n_iter=5), Xr),
            ("BM", BoltzmannMachine(n_hidden=1, n_iter=3), Xb)):
        for contamination in ("auto", 0.1):
            model = LikelihoodOutlierDetector(estimator, contamination=contamination,
                                              random_state=0)
            yield (f"LikelihoodOutlierDetector/{name}/{contamination}", X,
                   lambda model=model, X=X: model.fit(X))


def write(path, only=None):
    digest, start = {}, time.perf_counter()
    package = Path(skboltz.__file__).resolve().parent
    if package != CHECKOUT / "skboltz":
        sys.exit(f"imported {package}, not the skboltz of {CHECKOUT}")
    print(f"digest of {package}", flush=True)
    all_cases = list(cases())
    for k, (name, X, build) in enumerate(all_cases):
        if only and only not in name:
            continue
        digest[name] = run_case(build, X)
        if (k + 1) % 100 == 0:
            print(f"{k + 1} of {len(all_cases)} cases, {time.perf_counter() - start:.0f} s",
                  flush=True)
    Path(path).write_text(json.dumps(digest, sort_keys=True))
    n_raised = sum("raised" in record for record in digest.values())
    print(f"wrote {len(digest)} cases ({n_raised} raised at fit) to {path} in "
          f"{time.perf_counter() - start:.0f} s")


def leaves(record, prefix=""):
    """Yield (path, leaf) for every leaf of a nested digest record."""
    if isinstance(record, dict) and not ("values" in record and "shape" in record):
        for key, value in record.items():
            yield from leaves(value, f"{prefix}/{key}")
    elif isinstance(record, list) and not (record and isinstance(record[0], float)):
        for k, value in enumerate(record):
            yield from leaves(value, f"{prefix}[{k}]")
    else:
        yield prefix, record


def difference(a, b):
    """0 if bitwise equal, the largest scaled difference of numbers, or inf if unlike."""
    if isinstance(a, dict) and isinstance(b, dict):  # arrays
        if a["dtype"] != b["dtype"] or a["shape"] != b["shape"]:
            return np.inf
        a, b = np.array(a["values"], dtype=np.float64), np.array(b["values"], dtype=np.float64)
        if np.array_equal(a, b, equal_nan=True):
            return 0.0
        if not np.array_equal(np.isnan(a), np.isnan(b)):
            return np.inf
        finite = ~np.isnan(a)
        return float(np.max(np.abs(a[finite] - b[finite])
                            / np.maximum(1.0, np.abs(a[finite]))))
    if isinstance(a, float) and isinstance(b, float):
        if a == b or (np.isnan(a) and np.isnan(b)):
            return 0.0
        return abs(a - b) / max(1.0, abs(a))
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return max((difference(x, y) for x, y in zip(a, b)), default=0.0)
    return 0.0 if a == b else np.inf


#: scikit-learn's InvalidParameterError is a ValueError: a refusal that moves between
#: the two is the same refusal.
REFINED = {"ValueError", "InvalidParameterError"}


def compare(before_path, after_path, tolerance):
    before = json.loads(Path(before_path).read_text())
    after = json.loads(Path(after_path).read_text())
    identical, close, differ, outcome, messages, refined = [], [], [], [], [], []
    added = set()
    for name in sorted(set(before) | set(after)):
        if name not in before or name not in after:
            outcome.append((name, "only in " + ("after" if name in after else "before")))
            continue
        b, a = before[name], after[name]
        if ("raised" in b) != ("raised" in a):
            outcome.append((name, f"{b.get('raised', 'fitted')} -> {a.get('raised', 'fitted')}"))
            continue
        if "raised" in b:
            if b["raised"] != a["raised"] and {b["raised"], a["raised"]} == REFINED:
                refined.append((name, f"{b['raised']} -> {a['raised']}"))
                messages.append((name, b["message"], a["message"]))
            elif b["raised"] != a["raised"]:
                outcome.append((name, f"{b['raised']} -> {a['raised']}"))
            elif b["message"] != a["message"]:
                messages.append((name, b["message"], a["message"]))
            else:
                identical.append(name)
            continue
        before_leaves, after_leaves = dict(leaves(b)), dict(leaves(a))
        worst, where = 0.0, ""
        for key in sorted(set(before_leaves) | set(after_leaves)):
            if key not in before_leaves and "/history_/" in key:
                # a new per-epoch record (diagnostics): reported, not a difference
                added.add(key.split("/history_/")[1].split("[")[0])
                continue
            if key not in before_leaves or key not in after_leaves:
                worst, where = np.inf, key + " (missing on one side)"
                break
            x, y = before_leaves[key], after_leaves[key]
            if key.endswith("/message") or key.endswith("message"):
                if x != y:
                    messages.append((name + key, x, y))
                continue
            d = difference(x, y)
            if d > worst:
                worst, where = d, key
        if worst == 0.0:
            identical.append(name)
        elif worst <= tolerance:
            close.append((name, worst, where))
        else:
            differ.append((name, worst, where))
    total = len(set(before) | set(after))
    print(f"{total} cases: {len(identical)} bitwise identical, {len(close)} within "
          f"{tolerance:g}, {len(differ)} differ, {len(outcome)} changed outcome, "
          f"{len(refined)} raise the other of ValueError / InvalidParameterError")
    for title, rows in (("within tolerance", close), ("DIFFER", differ)):
        if rows:
            print(f"\n{title}:")
            for name, worst, where in rows:
                print(f"  {name}: {worst:.3g} at {where}")
    if added:
        print(f"\nnew history_ records (not compared): {sorted(added)}")
    if refined:
        print("\nthe same refusal as ValueError / its subclass InvalidParameterError:")
        for name, what in refined:
            print(f"  {name}: {what}")
    if outcome:
        print("\nchanged outcome (before -> after):")
        for name, what in outcome:
            print(f"  {name}: {what}")
    if messages:
        print(f"\n{len(messages)} changed error messages:")
        for name, x, y in messages:
            print(f"  {name}:\n    before: {x}\n    after:  {y}")
    return 1 if differ or outcome else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", metavar="PATH", help="write this checkout's digest")
    parser.add_argument("--checkout", metavar="PATH", help="with --write: the digest of "
                        "the skboltz in this checkout (default: the one this script is in)")
    parser.add_argument("--only", help="with --write: only cases whose name contains this")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--tolerance", type=float, default=1e-12)
    args = parser.parse_args()
    if args.write:
        write(args.write, args.only)
    if args.compare:
        sys.exit(compare(*args.compare, args.tolerance))
    if not (args.write or args.compare):
        parser.print_help()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(2)
