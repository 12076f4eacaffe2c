"""Anomaly detection on ADBench's tables: LikelihoodOutlierDetector against the usual detectors.

The suite: the 29 classical tabular sets of ADBench (Han, Hu, Huang, Jiang & Zhao, "ADBench:
Anomaly Detection Benchmark", NeurIPS 2022), as ADBench ships them in
``../shared/data/adbench/NN_name.npz`` (``X`` and ``y``, ``y = 1`` for an anomaly). ADBench
gathered them from earlier collections: most from the ODDS library (Rayana, "ODDS Library",
Stony Brook University, 2016) and from the outlier-detection repository of Campos, Zimek,
Sander et al. ("On the evaluation of unsupervised outlier detection: measures, datasets, and
an empirical study", Data Mining and Knowledge Discovery, 2016), others from the UCI Machine
Learning Repository (Dua & Graff), CelebA (Liu, Luo, Wang & Tang, ICCV 2015) and the KDD Cup
2014 (donors); ADBench's paper lists each set's source.

Protocol, for each set and each split seed:

- a set of more than ``MAX_ROWS`` (20,000) rows is first subsampled to that many rows,
  stratified by ``y`` and seeded by the split seed (the output names those sets);
- a 60 / 40 stratified split (``train_test_split(stratify=y, random_state=seed)``);
- two settings: **unsupervised** (ADBench's): each detector is fitted on the whole
  training split, anomalies included; **novelty**: on the normal training rows only. The
  test split (normal rows and anomalies) is scored in both;
- the rows are scaled to [0, 1] by a ``MinMaxScaler`` fitted on the rows the detector is
  fitted on, the same rows for every detector (test rows may leave [0, 1]);
- the figures: ROC AUC and average precision of the anomaly score (``-score_samples``,
  or pyod's ``decision_function``) on the test split; per set the mean over the seeds,
  then the mean over the sets and the mean rank (1 = best AUC on a set; ties share).

Detectors (``random_state`` = the split seed where there is one):

- ``Likelihood``: skboltz's ``LikelihoodOutlierDetector()`` at its defaults, except
  ``contamination=0.1`` (one fit; "auto" adds five cross-validation fits for its
  threshold and fits the same final model, so the AUC and AP are the same);
- ``IsolationForest()``; ``LocalOutlierFactor(novelty=True)``; pyod's ``ECOD()`` (Li,
  Zhao, Hu, Botta, Ionescu & Chen, "ECOD: Unsupervised Outlier Detection Using Empirical
  Cumulative Distribution Functions", IEEE TKDE 2022);
- ``GaussianMixture`` with 1 to 4 full-covariance components chosen by BIC on the
  training rows;
- ``LedoitWolf``: the Mahalanobis distance to a Ledoit-Wolf Gaussian, the whitening the
  detector's Gaussian RBM starts from, alone.

A detector that raises on a set is reported as such (its row says "error") and the run
goes on. Fit times are wall-clock seconds of ``fit`` (the sum over the sets of one seed
and setting, and the largest set's), on a shared machine: compare within a run only.

Run: OPENBLAS_NUM_THREADS=1 python benchmarks/bench_adbench.py [--sets 15 39 42]
[--seeds 0 1 2] [--detectors Likelihood IsolationForest] [--quick]
(``--quick``: the sets under 5,000 rows, one seed). To run seeds side by side:
``--seeds 0 --save s0.json`` (and 1, 2), then ``--merge s0.json s1.json s2.json``; runs
of other detectors on the same seeds (``--detectors``) merge as more columns.
"""

import argparse
import glob
import json
import os
import time
import traceback
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from _machine import print_machine  # noqa: E402
from scipy.stats import rankdata  # noqa: E402
from sklearn.covariance import LedoitWolf  # noqa: E402
from sklearn.ensemble import IsolationForest  # noqa: E402
from sklearn.metrics import average_precision_score, roc_auc_score  # noqa: E402
from sklearn.mixture import GaussianMixture  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.neighbors import LocalOutlierFactor  # noqa: E402
from sklearn.preprocessing import MinMaxScaler  # noqa: E402

from skboltz import LikelihoodOutlierDetector  # noqa: E402

DATA_DIR = os.environ.get(
    "ADBENCH_DIR",
    os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data", "adbench"))
if not os.path.isdir(DATA_DIR):
    DATA_DIR = "/work/shared/data/adbench"
#: Sets above this many rows are subsampled (stratified, seeded) to it.
MAX_ROWS = 20_000
TEST_SIZE = 0.4
SEEDS = (0, 1, 2)
SETTINGS = ("unsupervised", "novelty")
#: Component counts GaussianMixture's BIC chooses from.
GMM_COMPONENTS = range(1, 5)
#: ``--quick``: the sets with fewer rows than this, one seed.
QUICK_ROWS = 5_000


class Scored:
    """A fitted detector with one anomaly score (higher = more anomalous)."""

    def __init__(self, fitted, anomaly_score):
        self.fitted, self.anomaly_score = fitted, anomaly_score


def likelihood_detector(X, seed):
    model = LikelihoodOutlierDetector(contamination=0.1, random_state=seed).fit(X)
    return Scored(model, lambda Z: -model.score_samples(Z))


def isolation_forest(X, seed):
    model = IsolationForest(random_state=seed).fit(X)
    return Scored(model, lambda Z: -model.score_samples(Z))


def local_outlier_factor(X, seed):
    model = LocalOutlierFactor(novelty=True).fit(X)
    return Scored(model, lambda Z: -model.score_samples(Z))


def ecod(X, seed):
    from pyod.models.ecod import ECOD

    model = ECOD().fit(X)
    return Scored(model, model.decision_function)


def gmm_by_bic(X, seed):
    fits = [GaussianMixture(k, random_state=seed).fit(X) for k in GMM_COMPONENTS]
    model = min(fits, key=lambda gmm: gmm.bic(X))
    return Scored(model, lambda Z: -model.score_samples(Z))


def ledoit_wolf(X, seed):
    model = LedoitWolf().fit(X)
    return Scored(model, model.mahalanobis)


DETECTORS = {
    "Likelihood": likelihood_detector,
    "IsolationForest": isolation_forest,
    "LOF": local_outlier_factor,
    "ECOD": ecod,
    "GMM(BIC)": gmm_by_bic,
    "LedoitWolf": ledoit_wolf,
}


def set_paths(only=None):
    """The sets' files in ADBench's order (by number), restricted to ``only`` (numbers
    or names)."""
    paths = sorted(glob.glob(os.path.join(DATA_DIR, "*.npz")),
                   key=lambda p: int(os.path.basename(p).split("_")[0]))
    if only:
        wanted = {str(w).lower() for w in only}
        paths = [p for p in paths
                 if {set_name(p).lower(), set_name(p).split("_")[0]} & wanted
                 or set_name(p).split("_", 1)[1].lower() in wanted]
    return paths


def set_name(path):
    return os.path.basename(path)[:-len(".npz")]


def load(path):
    data = np.load(path)
    return data["X"].astype(np.float64), data["y"].astype(int)


def splits(X, y, seed):
    """(X_train, X_test, y_train, y_test, subsampled) for one seed."""
    subsampled = len(y) > MAX_ROWS
    if subsampled:
        keep, _ = train_test_split(np.arange(len(y)), train_size=MAX_ROWS, stratify=y,
                                   random_state=seed)
        X, y = X[keep], y[keep]
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=TEST_SIZE, stratify=y, random_state=seed)
    return X_train, X_test, y_train, y_test, subsampled


def run_one(make, X_fit, X_test, y_test, seed):
    """(ROC AUC, average precision, fit seconds) of one detector, or the error."""
    scaler = MinMaxScaler().fit(X_fit)
    X_fit, X_test = scaler.transform(X_fit), scaler.transform(X_test)
    start = time.perf_counter()
    scored = make(X_fit, seed)
    seconds = time.perf_counter() - start
    score = np.asarray(scored.anomaly_score(X_test), dtype=np.float64)
    if not np.all(np.isfinite(score)):  # -inf log-likelihoods rank as the most anomalous
        score = np.nan_to_num(score, nan=np.inf, posinf=np.finfo(float).max,
                              neginf=-np.finfo(float).max)
    return roc_auc_score(y_test, score), average_precision_score(y_test, score), seconds


def evaluate(paths, seeds, detectors):
    """results[setting][set][detector] = list of (auc, ap, seconds) or an error string;
    the names of the subsampled sets; each set's number of rows."""
    results = {setting: {} for setting in SETTINGS}
    subsampled_sets, n_rows = [], {}
    for path in paths:
        name = set_name(path)
        X, y = load(path)
        n_rows[name] = len(y)
        for seed in seeds:
            X_train, X_test, y_train, y_test, subsampled = splits(X, y, seed)
            if subsampled and name not in subsampled_sets:
                subsampled_sets.append(name)
            for setting in SETTINGS:
                X_fit = X_train if setting == "unsupervised" else X_train[y_train == 0]
                for det_name, make in detectors.items():
                    cell = results[setting].setdefault(name, {}).setdefault(det_name, [])
                    if isinstance(cell, str):
                        continue
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            cell.append(run_one(make, X_fit, X_test, y_test, seed))
                    except Exception as error:  # reported, and the run goes on
                        message = f"{type(error).__name__}: {error}".splitlines()[0]
                        results[setting][name][det_name] = "error: " + message[:120]
                        print(f"  {name} seed {seed} {setting} {det_name}: {message}")
                        traceback.print_exc(limit=3)
        line = " ".join(
            f"{d}={np.mean([r[0] for r in c]):.3f}"
            for d, c in results["unsupervised"][name].items() if not isinstance(c, str))
        print(f"  done {name} {X.shape} (unsupervised AUC: {line})", flush=True)
    return results, subsampled_sets, n_rows


def table(results, setting, detectors, metric, label):
    """Print one setting's per-set table of ``metric`` (0: AUC, 1: AP) with means and ranks."""
    names = list(detectors)
    width = max(11, *(len(n) for n in names))
    print(f"-- {setting}: {label} (mean over seeds) --")
    print(f"{'set':20s} " + " ".join(f"{n[:width]:>{width}s}" for n in names))
    per_set = []
    for set_name_, cells in results[setting].items():
        row = []
        for n in names:
            cell = cells.get(n, [])
            row.append(np.nan if isinstance(cell, str) or not cell
                       else float(np.mean([r[metric] for r in cell])))
        per_set.append(row)
        print(f"{set_name_:20s} " + " ".join(
            f"{'error':>{width}s}" if np.isnan(v) else f"{v:{width}.3f}" for v in row))
    values = np.array(per_set)
    complete = ~np.isnan(values).any(axis=1)
    means = values[complete].mean(axis=0)
    ranks = np.array([rankdata(-row) for row in values[complete]]).mean(axis=0)
    print(f"{'mean':20s} " + " ".join(f"{v:{width}.4f}" for v in means))
    print(f"{'mean rank':20s} " + " ".join(f"{v:{width}.2f}" for v in ranks))
    if not complete.all():
        print(f"(means and ranks over the {complete.sum()} sets where no detector failed)")
    print()


def times(results, setting, detectors, largest):
    names = list(detectors)
    width = max(11, *(len(n) for n in names))
    total = [sum(np.mean([r[2] for r in cells[n]]) for cells in results[setting].values()
                 if not isinstance(cells.get(n, "x"), str)) for n in names]
    print(f"{'fit s, all sets':20s} " + " ".join(f"{v:{width}.1f}" for v in total))
    if largest in results[setting]:
        cells = results[setting][largest]
        row = [np.nan if isinstance(cells.get(n, "x"), str)
               else np.max([r[2] for r in cells[n]]) for n in names]
        print(f"{'fit s, ' + largest[:13]:20s} " + " ".join(f"{v:{width}.1f}" for v in row))
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", help="set numbers or names (default: all)")
    parser.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    parser.add_argument("--detectors", nargs="+", choices=list(DETECTORS),
                        default=list(DETECTORS))
    parser.add_argument("--quick", action="store_true",
                        help=f"the sets under {QUICK_ROWS:,} rows, one seed")
    parser.add_argument("--save", help="also write the results to this JSON file")
    parser.add_argument("--merge", nargs="+", metavar="JSON",
                        help="print the tables of saved runs together (e.g. one run per "
                             "seed, run side by side) instead of running")
    args = parser.parse_args()
    if args.merge:
        return print_tables(*merge(args.merge))
    paths = set_paths(args.sets)
    seeds = args.seeds
    if args.quick:
        paths = [p for p in paths if len(np.load(p)["y"]) < QUICK_ROWS]
        seeds = seeds[:1]
    detectors = {name: DETECTORS[name] for name in args.detectors}
    print_machine()
    print(f"ADBench (Han, Hu, Huang, Jiang & Zhao, NeurIPS 2022): {len(paths)} sets from "
          f"{DATA_DIR}, seeds {list(seeds)}, 60/40 stratified splits, MinMax scaling "
          "fitted on each detector's training rows\n", flush=True)
    results, subsampled_sets, n_rows = evaluate(paths, seeds, detectors)
    print()
    if args.save:
        with open(args.save, "w") as file:
            json.dump({"results": results, "subsampled": subsampled_sets,
                       "n_rows": n_rows, "detectors": list(detectors),
                       "seeds": list(seeds)}, file)
    print_tables(results, subsampled_sets, n_rows, detectors)


def merge(paths):
    """The saved runs' results as one run's (each cell's seeds together)."""
    results, subsampled_sets, n_rows, detectors, seeds = {}, [], {}, [], []
    for path in paths:
        with open(path) as file:
            run = json.load(file)
        # runs of other detectors on the same seeds (e.g. the anchors once, the
        # detector after each change) add their columns
        detectors += [name for name in run["detectors"] if name not in detectors]
        seeds += [seed for seed in run["seeds"] if seed not in seeds]
        n_rows.update(run["n_rows"])
        subsampled_sets += [n for n in run["subsampled"] if n not in subsampled_sets]
        for setting, sets in run["results"].items():
            for name, cells in sets.items():
                merged = results.setdefault(setting, {}).setdefault(name, {})
                for det_name, cell in cells.items():
                    if isinstance(cell, str) or isinstance(merged.get(det_name), str):
                        merged[det_name] = merged.get(det_name) if isinstance(
                            merged.get(det_name), str) else cell
                    else:
                        merged.setdefault(det_name, []).extend(cell)
    print(f"Merged runs {paths} (seeds {seeds})\n")
    return results, subsampled_sets, n_rows, {name: None for name in detectors}


def print_tables(results, subsampled_sets, n_rows, detectors):
    if subsampled_sets:
        print(f"Subsampled to {MAX_ROWS:,} rows (stratified, seeded by the split seed): "
              + ", ".join(subsampled_sets) + "\n")
    largest = max(n_rows, key=n_rows.get)
    for setting in SETTINGS:
        table(results, setting, detectors, 0, "ROC AUC")
        table(results, setting, detectors, 1, "average precision")
        times(results, setting, detectors, largest)


if __name__ == "__main__":
    main()
