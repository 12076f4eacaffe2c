"""Warnings and errors raised by skboltz."""


class TrainingDivergedError(FloatingPointError):
    """Training produced non-finite parameters or statistics.

    The estimator is left exactly as it was before the call that diverged. The usual
    cure is a smaller ``learning_rate`` (or a larger ``batch_size``).

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz import RBM
    >>> from skboltz.exceptions import TrainingDivergedError
    >>> X = np.random.default_rng(0).random((50, 6)).round()
    >>> try:
    ...     with np.errstate(all="ignore"):  # numpy would also warn about the overflow
    ...         RBM(n_components=4, learning_rate=1e30, random_state=0).fit(X)
    ... except TrainingDivergedError:
    ...     print("diverged; lower the learning rate")
    diverged; lower the learning rate
    """


class TooManyStatesError(ValueError):
    """Exact enumeration was asked for a model with too many states.

    Examples
    --------
    >>> import numpy as np
    >>> from skboltz.views import RBMView
    >>> from skboltz.exceptions import TooManyStatesError
    >>> from skboltz.partition import Exact
    >>> model = RBMView(np.zeros((30, 30)), np.zeros(30), np.zeros(30))
    >>> try:
    ...     Exact(max_states=2**20).estimate(model)
    ... except TooManyStatesError:
    ...     print("too many states for exact enumeration")
    too many states for exact enumeration
    """


class DataRangeWarning(UserWarning):
    """Input values lie outside [0, 1], the range Bernoulli units model.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from skboltz import RBM
    >>> from skboltz.exceptions import DataRangeWarning
    >>> X = np.random.default_rng(0).random((20, 4)) * 16  # e.g. unscaled pixel values
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = RBM(n_components=2, n_iter=1, random_state=0).fit(X)
    >>> any(issubclass(w.category, DataRangeWarning) for w in caught)
    True
    """


class DegenerateModelWarning(UserWarning):
    """A fitted model puts its probability where the training data are not.

    Raised at the end of ``fit`` (and of runs of ``partial_fit`` calls) when Gibbs
    chains of the fitted model, started as ``sample`` starts them, end in states far
    more probable under the model than its own training rows, or many of them in one
    and the same state (such as the blank image): the model's samples and its
    ``score_samples`` then describe a distribution unlike the data, even where its
    features still serve a classifier. The message gives the numbers and what to try
    (persistent chains or parallel tempering, a smaller learning rate, more weight
    decay). See the reliability page of the user guide.

    Examples
    --------
    >>> import warnings
    >>> from skboltz.exceptions import DegenerateModelWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", DegenerateModelWarning)  # make it fatal
    ...     try:
    ...         warnings.warn("28 of 32 chains ended blank", DegenerateModelWarning)
    ...     except DegenerateModelWarning as caught:
    ...         print("fatal:", caught)
    fatal: 28 of 32 chains ended blank
    """


class BelowIndependentWarning(DegenerateModelWarning):
    """A fitted density of binary rows is worse than independent columns.

    At the end of ``fit``, :class:`~skboltz.RBM` and
    :class:`~skboltz.BoltzmannMachine` compare the mean log-likelihood of their own
    training rows (up to a few thousand of them) with that of independent columns at
    the rows' frequencies (add-one smoothed), a model with no parameters worth the
    name. A model more than 3 nats per row below it is a worse density than no model,
    and warns, saying what to change (fewer hidden units, a smaller step, parallel
    tempering). Fits of fewer than 1,000 updates are not judged (a model near its
    start is below independent columns only for want of epochs); nor are
    ``partial_fit`` calls, grey rows, or a model the degeneracy check already warned
    about. The comparison is exact when log Z can be enumerated in a moment (at
    most 2**16 states to sum over); otherwise a short annealed importance sampling run
    estimates log Z, and since such a run errs low (the model looks better than it is)
    only gross failures are caught. A subclass of
    :class:`DegenerateModelWarning`: filters of that class cover it. See the density
    guide (docs/user_guide/density.rst).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from skboltz import RBM
    >>> from skboltz.exceptions import BelowIndependentWarning
    >>> rng = np.random.default_rng(0)
    >>> X = (rng.random((500, 12)) < 0.1).astype(float)  # sparse independent columns
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     # a step so small that 1,250 updates leave the model near uniform
    ...     _ = RBM(n_components=8, learning_rate=1e-5, n_iter=25, random_state=0).fit(X)
    >>> any(issubclass(w.category, BelowIndependentWarning) for w in caught)
    True
    """


class DataScaleWarning(UserWarning):
    """Features are far from standardised, the scale Gaussian visible units assume.

    :class:`~skboltz.GaussianRBM` starts its variances at 1 and its learning rate
    assumes features of unit variance; a feature with a huge or a zero variance trains
    badly. The warning names the features and the fix (``StandardScaler``, or dropping
    constant features).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from skboltz import GaussianRBM
    >>> from skboltz.exceptions import DataScaleWarning
    >>> X = np.random.default_rng(0).normal(size=(50, 3)) * [1.0, 1.0, 50.0]
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = GaussianRBM(n_components=2, n_iter=1, random_state=0).fit(X)
    >>> any(issubclass(w.category, DataScaleWarning) for w in caught)
    True
    """


class LabelConventionWarning(UserWarning):
    """A classifier's labels look like scikit-learn's semi-supervised convention.

    :mod:`sklearn.semi_supervised` marks unlabelled rows with the label -1. The
    classifiers of skboltz (:class:`~skboltz.RBMClassifier`,
    :class:`~skboltz.DBNClassifier`) read a marker only when ``unlabelled_marker`` names
    one, since -1 is also an ordinary class label; with none, labels holding -1 beside
    at least two other classes are taken as classes, with this warning. Pass
    ``unlabelled_marker=-1`` if -1 marks unlabelled rows; if it is a class, filter the
    warning.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from skboltz import RBMClassifier
    >>> from skboltz.exceptions import LabelConventionWarning
    >>> X = np.random.default_rng(0).random((30, 4))
    >>> y = np.repeat([-1, 0, 1], 10)  # -1: a class, or unlabelled rows?
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     clf = RBMClassifier(n_components=2, n_iter=1, random_state=0).fit(X, y)
    >>> any(issubclass(w.category, LabelConventionWarning) for w in caught)
    True
    >>> clf.classes_
    array([-1,  0,  1])
    >>> semi = RBMClassifier(n_components=2, n_iter=1, unlabelled_marker=-1,
    ...                      random_state=0).fit(X, y)  # -1: unlabelled rows
    >>> semi.classes_
    array([0, 1])
    """


class MeanFieldConvergenceWarning(UserWarning):
    """A mean-field fixed-point iteration stopped before converging.

    The result may be inaccurate; check the iteration and damping settings of the
    mean-field method that warned.

    Examples
    --------
    >>> import warnings
    >>> from skboltz.exceptions import MeanFieldConvergenceWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", MeanFieldConvergenceWarning)  # make it fatal
    ...     try:
    ...         warnings.warn("stopped after 100 iterations", MeanFieldConvergenceWarning)
    ...     except MeanFieldConvergenceWarning as caught:
    ...         print("fatal:", caught)
    fatal: stopped after 100 iterations
    """


class LogZAccuracyWarning(UserWarning):
    """A log Z estimate is less accurate than it was asked to be, or may be off.

    Raised by :class:`~skboltz.partition.AIS` when it stops (at its time budget or
    its caps) with a standard error above its ``target_std_error``, and when its
    annealing paths from different base models disagree beyond their standard errors
    (the highest estimate is kept, since annealed importance sampling errs low, but
    the reported standard error then understates the error). The message gives the
    numbers and what to do (a longer budget, more betas).

    Examples
    --------
    >>> import warnings
    >>> from skboltz.exceptions import LogZAccuracyWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", LogZAccuracyWarning)  # make it fatal
    ...     try:
    ...         warnings.warn("standard error 0.3 above the target 0.02",
    ...                       LogZAccuracyWarning)
    ...     except LogZAccuracyWarning as caught:
    ...         print("fatal:", caught)
    fatal: standard error 0.3 above the target 0.02
    """


class ApproximateScoreWarning(UserWarning):
    """A score uses a bound, an approximation or an unfinished estimate of log Z.

    That is, a lower bound or an approximation of log Z, or an estimate that stopped
    short of its accuracy criterion.
    ``score`` and ``score_samples`` are ``-F(x) - log Z``. With a lower bound on log Z
    (naive mean field, visited states) they are upper bounds on the log-likelihood:
    optimistic, by an amount that differs from model to model, so models compared on
    them can be ranked wrongly. With TAP they are approximations of unknown sign. A
    :class:`~skboltz.DBM` scored by the mean-field bound on each row's hidden sum
    (``likelihood="bound"``, the default for large machines) warns too: its scores are
    lower bounds on the log-likelihood. Each fitted model warns once, on the first
    score that uses such a log Z or bound; the
    :class:`~skboltz.partition.LogZ` itself says what it is (``kind``, ``converged``,
    :meth:`~skboltz.partition.LogZ.describe`).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from skboltz import BoltzmannMachine
    >>> from skboltz.exceptions import ApproximateScoreWarning
    >>> X = np.random.default_rng(0).integers(0, 2, size=(50, 6))
    >>> bm = BoltzmannMachine(n_hidden=2, z_estimator="mean_field", n_iter=2,
    ...                       random_state=0).fit(X)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = bm.score(X)
    >>> any(issubclass(w.category, ApproximateScoreWarning) for w in caught)
    True
    """


class SlowEstimateWarning(UserWarning):
    """A log Z estimate (for ``score``, ``score_samples``, ...) is taking long.

    Raised once per estimate that has run for 30 seconds without finishing, with the
    share of its planned work done so far and how to cap it: a time budget
    (``AIS(max_time=...)``), a looser ``target_std_error``, or ``verbose=1`` on the
    estimator to follow the progress. Quick estimates never raise it.

    Examples
    --------
    >>> import warnings
    >>> from skboltz.exceptions import SlowEstimateWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", SlowEstimateWarning)  # silence it
    ...     warnings.warn("log Z has run 30 s", SlowEstimateWarning)
    """


__all__ = [
    "ApproximateScoreWarning",
    "BelowIndependentWarning",
    "DataRangeWarning",
    "DegenerateModelWarning",
    "DataScaleWarning",
    "LabelConventionWarning",
    "LogZAccuracyWarning",
    "MeanFieldConvergenceWarning",
    "SlowEstimateWarning",
    "TooManyStatesError",
    "TrainingDivergedError",
]
