"""Monitoring and early stopping: what a fit records every epoch, and when it stops.

A fit makes one :class:`Monitor` per ``fit`` / ``partial_fit`` call, of the class its
estimator names in ``_monitor_class``, over the call's :class:`MonitoringRows`: each
epoch it computes the records that ``history_`` keeps (reconstruction error, free
energies and their gap on held-out rows, the log-likelihood through a time-budgeted
log Z estimate) and names the record that early stopping (:class:`EarlyStopping`)
follows. An estimator with other records (a classifier's log-loss and accuracy)
subclasses :class:`Monitor`.
"""

import time
import warnings
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone

from ..utils._runtime import warn_user
from ..utils._sklearn import Interval
from ..utils._validation import as_dense
from ..utils._weights import weighted_mean, weighted_phase
from ..exceptions import LogZAccuracyWarning

#: Training rows used for the per-epoch monitoring records.
MONITOR_ROWS = 1000

#: Of those, rows whose reconstruction error is recorded every epoch (cheap enough to
#: stay a few percent of a digits epoch, enough for a smooth curve).
RECONSTRUCTION_ROWS = 256

#: Likelihood monitoring with a default z_estimator gives each epoch's log Z estimate
#: the epoch's training time, and at least this many seconds.
MONITOR_LOG_Z_SECONDS = 1.0

#: Constraints of the monitoring and early-stopping parameters every model shares.
MONITORING_CONSTRAINTS = {
    "validation_fraction": [Interval(Real, 0, 1, closed="neither"), None],
    "n_iter_no_change": [Interval(Integral, 1, None, closed="left"), None],
    "tol": [Interval(Real, 0, None, closed="left")],
    "monitor_likelihood": ["boolean"],
}

#: numpydoc text of those parameters, shared by the models' docstrings.
MONITORING_PARAMETERS_DOC = """validation_fraction : float or None, default=None
        Fraction of the rows ``fit`` holds out (not trained on) to monitor
        overfitting: each epoch records the held-out reconstruction error and mean
        free energy, and the free-energy gap. Ignored by ``partial_fit``.
    n_iter_no_change : int or None, default=None
        Early stopping: ``fit`` stops when the criterion has not improved by more
        than ``tol`` for this many epochs. The criterion is the held-out
        log-likelihood when ``monitor_likelihood=True``, else the held-out
        reconstruction error (on training rows when ``validation_fraction`` is
        None). With a validation set, the best epoch's parameters are kept.
    tol : float, default=1e-4
        Minimum improvement of the early-stopping criterion.
    monitor_likelihood : bool, default=False
        Record the mean log-likelihood of the monitoring rows every epoch (through
        ``z_estimator``; costs one log Z estimate per epoch). With a default
        ``z_estimator`` each epoch's estimate gets a cheap time budget, the epoch's
        own training time (at least one second), and its time and standard error are
        recorded (``log_z_time``, ``log_z_std_error``) and printed with ``verbose``;
        pass an estimator object (e.g. ``AIS(max_time=None)``) for another budget."""


def new_history():
    """The ``history_`` of a fresh fit: the records every epoch has, none yet."""
    return {"epoch": [], "time": []}


@dataclass(eq=False)
class MonitoringRows:
    """The rows each epoch's records are computed on (dense).

    ``train``: up to MONITOR_ROWS evenly spaced training rows; ``valid``: the rows
    ``validation_fraction`` held out of ``fit`` (None without); and, for an estimator
    trained on ``(X, y)``, their labels.
    """

    train: np.ndarray
    valid: np.ndarray | None = None
    train_labels: np.ndarray | None = None
    valid_labels: np.ndarray | None = None
    #: The rows' relative weights in a weighted fit (None: unweighted), by which the
    #: records' means over the rows count them.
    train_weights: np.ndarray | None = None
    valid_weights: np.ndarray | None = None

    def splits(self):
        """``(name, rows, weights)`` of the training rows, then of the held-out ones if
        any (``weights``: None when unweighted)."""
        yield "train", self.train, self.train_weights
        if self.valid is not None:
            yield "valid", self.valid, self.valid_weights


class EarlyStopping:
    """Stops a fit when a per-epoch score has stopped improving (a monitor object in
    the spirit of hmmlearn's ``ConvergenceMonitor``).

    Fed every epoch's record, it follows ``sign * record[key]`` (larger is better):
    after ``patience`` epochs without an improvement of more than ``tol`` it says
    stop, and with ``keep_best`` it puts back the parameters of the best epoch. The
    score can be anything an estimator records: a held-out log-likelihood or
    reconstruction error, or a classifier's held-out accuracy.

    Parameters
    ----------
    key : str
        The record's entry to follow.
    sign : float
        1.0 when larger values are better, -1.0 when smaller ones are.
    patience : int
        Epochs without improvement before stopping.
    tol : float
        The smallest improvement that counts.
    keep_best : bool
        Keep a copy of the best epoch's parameters and restore them at the stop.
    """

    def __init__(self, key, sign, patience, tol, keep_best, owner="The estimator"):
        self.key, self.sign, self.patience, self.tol = key, sign, patience, tol
        self.keep_best, self.owner = keep_best, owner
        self.best_score, self.best_params, self.epochs_no_change = -np.inf, None, 0
        self.warned = False

    def update(self, record, params):
        """Take an epoch's record (``params``: its parameters); return True to stop.

        A NaN score (nothing to measure it on) does not count as an epoch without
        improvement, which would end the fit silently after ``patience`` of them: the
        epoch is skipped, with a warning (once per fit).
        """
        score = self.sign * record[self.key]
        if np.isnan(score):
            if not self.warned:
                self.warned = True
                warn_user(
                    f"{self.owner}: early stopping has no {self.key} to follow in epoch "
                    f"{record.get('epoch', '?')} (it is NaN); epochs without one do not "
                    "count towards n_iter_no_change, so the fit goes on.",
                    UserWarning,
                )
            return False
        if score > self.best_score + self.tol:
            self.best_score, self.epochs_no_change = score, 0
            if self.keep_best:
                # packed NumPy parameters are moved in place, so copied; a dispatched
                # model's dict of arrays gets new arrays at each update, so a new dict
                # holding the current ones keeps them
                self.best_params = params.copy()
        else:
            self.epochs_no_change += 1
        if self.epochs_no_change < self.patience:
            return False
        if self.best_params is not None:  # keep the best validated parameters
            if isinstance(params, dict):
                params.update(self.best_params)
            else:
                params[...] = self.best_params
        return True


class Monitor:
    """The per-epoch records and the early-stopping criterion of one call's fit.

    Made by the estimator (its class attribute ``_monitor_class``) at each ``fit`` or
    ``partial_fit`` call, over ``rows``, the call's :class:`MonitoringRows` chosen by
    :meth:`select_rows`. A density model records the reconstruction error of up to
    RECONSTRUCTION_ROWS training rows; with held-out rows their reconstruction error,
    both mean free energies and their gap; with ``monitor_likelihood`` the mean
    log-likelihood of each split. Early stopping follows the held-out log-likelihood
    or reconstruction error (:meth:`stopping_criterion`). An estimator with other
    records overrides :meth:`record` and :meth:`stopping_criterion` (and
    :meth:`select_rows` to choose other rows).

    Parameters
    ----------
    estimator : BoltzmannBase
        The estimator being fitted (its settings and hooks).
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        The call's training rows (after the validation split).
    y : ndarray of shape (n_samples,) or None
        Their labels (None for a density model).
    validation : tuple or None
        ``(X_valid, y_valid)`` held out of ``fit``, or None.
    """

    def __init__(self, estimator, X, y=None, validation=None, weights=None):
        self.estimator = estimator
        self.rows = self.select_rows(X, y, validation, weights)

    def select_rows(self, X, y, validation, weights=None):
        """The :class:`MonitoringRows` of a call: evenly spaced training rows
        (deterministic, and no draw from the training stream, so repeated
        ``partial_fit`` calls follow exactly the path of one fit) and the held-out
        ``validation`` triple (rows, labels, weights), if any; ``weights``: those of
        the training rows (None: unweighted)."""
        rows = monitoring_positions(X.shape[0])
        if rows is None:
            monitor = MonitoringRows(as_dense(X), train_labels=y, train_weights=weights)
        else:
            monitor = MonitoringRows(as_dense(X[rows]),
                                     train_labels=None if y is None else y[rows],
                                     train_weights=None if weights is None else weights[rows])
        if validation is not None:
            monitor.valid, monitor.valid_labels, monitor.valid_weights = (
                as_dense(validation[0]), validation[1], validation[2])
        return monitor

    def early_stopping(self):
        """The early-stopping monitor of a ``fit`` (None without ``n_iter_no_change``);
        with held-out rows it keeps the best epoch's parameters."""
        estimator = self.estimator
        if estimator.n_iter_no_change is None:
            return None
        sign, key = self.stopping_criterion()
        return EarlyStopping(key, sign, estimator.n_iter_no_change, estimator.tol,
                             keep_best=self.rows.valid is not None,
                             owner=type(estimator).__name__)

    def stopping_criterion(self):
        """(sign, history key) of the early-stopping criterion, larger sign*value better."""
        return stopping_criterion(self.estimator, self.rows.valid is not None)

    def rows_for_checks(self, state):
        """The :class:`MonitoringRows` the divergence and degeneracy checks run on at
        the end of a call (the monitoring rows; complete rows where they may have
        missing entries)."""
        return self.rows

    def reconstruction_error(self, view, rows, weights=None):
        """The reconstruction error of ``rows`` under ``view`` (the estimator's; each
        row's weighted by ``weights`` in a weighted fit)."""
        estimator = self.estimator
        return weighted_phase(estimator._reconstruction_error, estimator, view, rows,
                              weights=weights, required=False)

    def record(self, state, *, epoch_seconds=0.0):
        """The per-epoch records computed on the monitoring rows."""
        estimator, monitor = self.estimator, self.rows
        error, free_energy = self.reconstruction_error, estimator._free_energy_of
        view = estimator._model_view_of(state)
        train = monitor.train
        step = -(-train.shape[0] // RECONSTRUCTION_ROWS)  # at most that many rows
        train_weights, valid_weights = monitor.train_weights, monitor.valid_weights
        record = {"reconstruction_error": error(
            view, train[::step], None if train_weights is None else train_weights[::step])}
        if monitor.valid is not None:
            # Free energies only matter as a gap to held-out rows: computed only then.
            record["free_energy_train"] = weighted_mean(free_energy(view, train),
                                                        monitor.train_weights)
            valid = monitor.valid
            record["reconstruction_error_valid"] = error(view, valid, valid_weights)
            record["free_energy_valid"] = weighted_mean(free_energy(view, valid),
                                                        monitor.valid_weights)
            record["free_energy_gap"] = record["free_energy_valid"] - record["free_energy_train"]
        if estimator.monitor_likelihood:
            start = time.perf_counter()
            z_estimator = self.z_estimator(view, epoch_seconds)
            with warnings.catch_warnings():
                # Its standard error is recorded instead: a warning every epoch would
                # bury the one that matters.
                warnings.simplefilter("ignore", LogZAccuracyWarning)
                log_z = z_estimator.estimate(
                    view,
                    rng=np.random.default_rng(state.log_z_seed),
                    data_rates=state.data_rates,
                )
            # log p(x) of the rows as the user gave them: the input transform's
            # log-Jacobian too (a whitening, a standardisation), as score_samples
            transform = state.input_transform
            log_normalizer = log_z.value + (0.0 if transform is None
                                            else transform.log_abs_det)
            for split, rows, weights in monitor.splits():
                record[f"log_likelihood_{split}"] = (
                    weighted_mean(-free_energy(view, rows), weights) - log_normalizer
                )
            if log_z.std_error is not None:
                record["log_z_std_error"] = log_z.std_error
            record["log_z_time"] = time.perf_counter() - start
        return record

    def z_estimator(self, view, epoch_seconds):
        """The log Z estimator of ``monitor_likelihood``: ``z_estimator``, with a cheap
        time budget when it is a default one (the epoch's own time, at least
        MONITOR_LOG_Z_SECONDS), so that monitoring a large model costs about as much
        as training it; an estimator object passed by the user is used as it is."""
        spec = self.estimator.z_estimator
        return with_monitoring_budget(spec, self.estimator._resolve_z_estimator(spec, view),
                                      epoch_seconds)

def monitoring_positions(n_rows):
    """The positions of the at most MONITOR_ROWS evenly spaced training rows the records
    are computed on, or None for all of them."""
    if n_rows <= MONITOR_ROWS:
        return None
    # at least one row apart: the truncated positions are distinct
    return np.linspace(0, n_rows - 1, MONITOR_ROWS).astype(np.intp)


def held_out_split(validation_fraction, n_rows, rng):
    """``(train, valid)``: the sorted row numbers of a fit's training rows and of the
    ``validation_fraction`` it holds out, from ``rng``'s next permutation."""
    n_valid = int(round(validation_fraction * n_rows))
    if n_valid < 1 or n_valid >= n_rows:
        raise ValueError(
            f"validation_fraction={validation_fraction} leaves no rows for "
            f"{'validation' if n_valid < 1 else 'training'} out of {n_rows} "
            "samples; use more samples or set validation_fraction=None."
        )
    order = rng.permutation(n_rows)
    return np.sort(order[n_valid:]), np.sort(order[:n_valid])


def stopping_criterion(estimator, held_out):
    """(sign, history key) of ``estimator``'s early-stopping criterion (larger sign *
    value is better): the held-out rows' record when there are (``held_out``), the
    training rows' otherwise; their log-likelihood with ``monitor_likelihood``, else
    their reconstruction error."""
    split = "valid" if held_out else "train"
    if estimator.monitor_likelihood:
        return 1.0, f"log_likelihood_{split}"
    return -1.0, "reconstruction_error" + ("_valid" if held_out else "")


def with_monitoring_budget(spec, z_estimator, epoch_seconds):
    """The log Z estimator of ``monitor_likelihood``: ``z_estimator`` (resolved from the
    setting ``spec``) with a cheap time budget when the setting is a name (the epoch's
    own time, at least MONITOR_LOG_Z_SECONDS), so that monitoring a large model costs
    about as much as training it; an estimator object passed by the user is used as it
    is."""
    if isinstance(spec, str) and "max_time" in z_estimator.get_params():
        budget = max(MONITOR_LOG_Z_SECONDS, epoch_seconds)
        if z_estimator.max_time is None or z_estimator.max_time > budget:
            z_estimator = clone(z_estimator).set_params(max_time=budget)
    return z_estimator


def print_record(estimator, record):
    """Print an epoch's record (``verbose``), one line."""
    shown = ", ".join(
        f"{key.replace('_', ' ').replace('log z', 'log Z')} = "
        + (f"{value:.2f}s" if key.endswith("_time") else f"{value:.4f}")
        for key, value in record.items()
        if key not in ("epoch", "time")
    )
    print(
        f"[{type(estimator).__name__}] Iteration {record['epoch']}, {shown}, "
        f"time = {record['time']:.2f}s"
    )


def finish_epoch(estimator, record, history, params, *, epoch_ctx, stopping, X, y):
    """End an epoch of a fit: its record appended to ``history`` (and printed with
    ``verbose``), the epoch's callbacks told, and early stopping fed. Returns True
    when the fit stops here (a callback asked, or ``stopping`` said so, having put
    the best epoch's parameters back into ``params``)."""
    for key, value in record.items():
        history.setdefault(key, []).append(value)
    if estimator.verbose:
        print_record(estimator, record)
    if epoch_ctx.call_on_fit_task_end(estimator=estimator, X=X, y=y):
        return True  # a callback asked to stop; the parameters are this epoch's
    if stopping is not None and stopping.update(record, params):
        if estimator.verbose:
            print_stop(estimator, stopping.key)
        return True
    return False


def print_stop(estimator, key):
    """Print why early stopping ended a fit (``verbose``)."""
    print(
        f"[{type(estimator).__name__}] {key} did not improve by more than "
        f"tol={estimator.tol} for {estimator.n_iter_no_change} epochs; stopping."
    )


__all__ = ["EarlyStopping", "Monitor", "MonitoringRows"]
