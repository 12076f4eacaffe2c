"""Runtime helpers of the estimators: BLAS threads, memory, random streams, progress.

Nothing here knows about Boltzmann machines: the BLAS thread limit of small products,
the memory check before a large fit, the numpy Generators drawn from a ``random_state``,
the progress reporter of long log Z estimates, the callback contexts of
scikit-learn's callback API, and :func:`warn_user`, which points a warning at the
user's line.
"""

import contextlib
import functools
import os
import sys
import threading
import time
import warnings

import numpy as np
from sklearn.utils import check_random_state
from threadpoolctl import ThreadpoolController

from ..exceptions import SlowEstimateWarning

try:  # scikit-learn >= 1.9: est.set_callbacks(ProgressBar()) and other callbacks
    from sklearn.callback import CallbackSupportMixin
except ImportError:  # older scikit-learn: no callbacks, fit_callback_context does nothing

    class CallbackSupportMixin:
        """Stand-in for scikit-learn's callback mixin where it does not exist."""


@functools.cache
def _library_prefixes():
    """Path prefixes of the code between a user's call and a warning: skboltz, the
    scikit-learn and joblib layers a call may pass through (``Pipeline``,
    ``GridSearchCV``, ``Parallel``, ``_fit_context``), and the standard library's
    context-manager and decorator helpers."""
    import joblib
    import sklearn

    packages = [os.path.dirname(os.path.abspath(module.__file__)) + os.sep
                for module in (sys.modules[__package__.partition(".")[0]], sklearn, joblib)]
    helpers = [os.path.abspath(module.__file__) for module in (contextlib, functools)]
    return tuple(packages + helpers)


def warn_user(message, category, *, once_per=None):
    """``warnings.warn`` pointed at the user's line, whatever the route to it.

    The stack level is the first frame outside skboltz, scikit-learn and joblib, so a
    warning raised deep in a fit, a score or a log Z estimate names the line that
    called ``fit``, ``score``, ``Pipeline.fit`` or ``GridSearchCV.fit``, and the
    default filter shows it once per such line. (``warnings.warn``'s
    ``skip_file_prefixes`` does this from Python 3.12 on; skboltz supports 3.10.)

    ``once_per``, a hashable key of what the warning is about (a setting, not a
    fitted model), shows it once per user's line and key while that line runs, as the
    default filter would show one text: scikit-learn's parallel helper resets the
    filter's memory around every fit and score of a search, so a warning about a
    setting would otherwise come once per fold and candidate. Filters other than
    "default" (e.g. "always" in ``pytest.warns``, "error") see every occurrence.
    """
    prefixes = _library_prefixes()
    frame, level = sys._getframe(1), 2  # stacklevel 2: the caller of warn_user
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(
        prefixes
    ):
        frame, level = frame.f_back, level + 1
    if once_per is not None and _filter_action(message, category, frame) == "default":
        # Keyed by the line and by the frame running it: the same call (a search, a
        # loop) shows it once; a new call of that code (a test run again) shows it.
        key = (category, once_per, frame.f_code.co_filename, frame.f_lineno)
        if _SHOWN_ONCE.get(key) == id(frame):
            return
        _SHOWN_ONCE[key] = id(frame)
    warnings.warn(message, category, stacklevel=level)


#: (category, key, file, line) -> the frame that showed it (see ``warn_user``).
_SHOWN_ONCE = {}


def _filter_action(message, category, frame):
    """The action the warning filters take on ``message`` raised at ``frame``, as
    ``warnings.warn`` matches them (the first filter that matches, else the default)."""
    module = frame.f_globals.get("__name__", "<string>")
    for action, text, kind, module_pattern, line in warnings.filters:
        if ((text is None or text.match(message)) and issubclass(category, kind)
                and (module_pattern is None or module_pattern.match(module))
                and (line == 0 or frame.f_lineno == line)):
            return action
    return warnings.defaultaction


#: BLAS threads pay off only for large products. Below this many multiply-adds per
#: product, training runs with one BLAS thread; from it on, with the threads BLAS has.
#: Measured on 2 idle cores: two threads made RBM training 1.1x slower at 64x256 batch
#: 10 (1.6e5), and the products of a 784x500 batch-100 epoch (3.9e7) 1.6-1.8x faster.
#: (On cores busy with other work, more threads than free cores are much slower at
#: any size: limit them with threadpoolctl or OPENBLAS_NUM_THREADS.)
SINGLE_THREAD_PRODUCT_SIZE = 10**7


#: Created once: inspecting the loaded libraries costs ~0.3 ms, a limit ~13 us.
_BLAS_CONTROLLER = ThreadpoolController()


@functools.cache
def _blas_libraries():
    return [lib for lib in _BLAS_CONTROLLER.lib_controllers if lib.user_api == "blas"]


def blas_threads_for(product_size):
    """Context limiting BLAS to one thread for products smaller than the threshold.

    Only in the main thread. The BLAS thread count is global to the process: fits
    overlapping in several threads (a threading backend, a user's thread pool) that
    each saved and restored it left the process at one thread afterwards, even with
    the saves reference-counted. Worker threads therefore leave it alone (the user
    owns it there, e.g. with ``threadpoolctl.threadpool_limits``), and the main
    thread's limits are strictly nested, so every restore is in order. No limit is set
    when BLAS already runs one thread (setting one costs tens of microseconds, a good
    part of a ``partial_fit`` on one small minibatch).
    """
    if (
        product_size < SINGLE_THREAD_PRODUCT_SIZE
        and threading.current_thread() is threading.main_thread()
        and any(lib.num_threads != 1 for lib in _blas_libraries())
    ):
        return _BLAS_CONTROLLER.limit(limits=1, user_api="blas")
    return contextlib.nullcontext()



def available_memory():
    """Bytes of memory the system can still give this process, or None if unknown."""
    try:
        with open("/proc/meminfo") as meminfo:  # Linux: counts reclaimable caches
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def _gib(n_bytes):
    return f"{n_bytes / 2**30:.3g} GiB"


def check_memory(n_bytes, what, advice):
    """Fail at once, naming the size, when ``what`` needs more memory than is available.

    Without the check a too-large model fills the memory for many seconds before numpy
    raises a bare MemoryError (9.7 GB over 18 s for ``BoltzmannMachine(n_hidden=10**5)``).
    """
    available = available_memory()
    if available is not None and n_bytes > available:
        raise MemoryError(
            f"{what} needs about {_gib(n_bytes)}, more than the {_gib(available)} of "
            f"memory available. {advice}"
        )


def make_generator(random_state):
    """A numpy Generator drawn from an sklearn-style ``random_state``.

    An int gives the same generator every time; None or a RandomState gives a fresh
    stream (consuming from the RandomState).
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    seed = check_random_state(random_state).randint(0, np.iinfo(np.int32).max)
    return np.random.default_rng(seed)


def sub_estimator_seeds(random_state, n):
    """One seed per sub-estimator drawn from ``random_state``; None gives no seeds."""
    if random_state is None:
        return [None] * n
    return check_random_state(random_state).randint(np.iinfo(np.int32).max, size=n).tolist()


#: A log Z estimate still running after this many seconds warns once (SlowEstimateWarning).
SLOW_LOG_Z_SECONDS = 30.0
#: Seconds between two progress lines of a log Z estimate with ``verbose``.
LOG_Z_REPORT_SECONDS = 5.0


class _LogZProgress:
    """The ``progress(done, cap)`` callable an estimator's log Z estimate reports to.

    Reports what is known for sure: the time elapsed, the work done and the caps it
    stops by (the estimator's ``cap`` on its steps, its ``max_time``), never a share
    of a plan that may grow. With the estimator's ``verbose`` on, prints a line every
    LOG_Z_REPORT_SECONDS; otherwise stays silent unless the estimate runs past
    SLOW_LOG_Z_SECONDS, when it warns once (a ``score`` on a large model can
    otherwise run for a long time with nothing printed).
    """

    def __init__(self, owner, estimator):
        self.owner = type(owner).__name__
        self.method = getattr(estimator, "name", "") or type(estimator).__name__
        self.max_time = getattr(estimator, "max_time", None)
        self.verbose = getattr(owner, "verbose", 0)
        self.start = time.perf_counter()
        self.next_line = LOG_Z_REPORT_SECONDS
        self.warned = False

    def _caps(self, cap):
        caps = [f"{cap:,} steps"] if cap else []
        if self.max_time is not None:
            caps.append(f"{self.max_time:g} s")
        return " or ".join(caps) if caps else "no cap"

    def __call__(self, done, cap):
        elapsed = time.perf_counter() - self.start
        if self.verbose and elapsed >= self.next_line:
            self.next_line = elapsed + LOG_Z_REPORT_SECONDS
            print(f"[{self.owner}] log Z ({self.method}): {done:,} steps done in "
                  f"{elapsed:.0f} s (stops by {self._caps(cap)})", flush=True)
        if not self.warned and elapsed >= SLOW_LOG_Z_SECONDS:
            self.warned = True
            advice = []
            if self.max_time is None:
                advice.append("A smaller budget or a looser target ends it sooner, "
                              "e.g. z_estimator=AIS(max_transitions=100000) or "
                              "AIS(target_std_error=0.05)")
            if not self.verbose:
                advice.append("verbose=1 prints its progress")
            warn_user(
                f"{self.owner}: estimating log Z ({self.method}) has run {elapsed:.0f} s "
                f"and done {done:,} steps; it stops by {self._caps(cap)}."
                + "".join(f" {text}." for text in advice),
                SlowEstimateWarning,
            )


class RowProgress:
    """Progress of work done row by row (a deep Boltzmann machine's per-row estimates).

    Called with the rows done so far. With ``verbose`` on, prints a line every
    LOG_Z_REPORT_SECONDS with the rows done and the time the rest will take at this
    pace; otherwise stays silent unless the work runs past SLOW_LOG_Z_SECONDS, when it
    warns once (SlowEstimateWarning), as a slow log Z estimate does, saying how to
    make it shorter (``advice``).
    """

    def __init__(self, owner, what, n_rows, advice):
        self.owner = type(owner).__name__
        self.what, self.n_rows, self.advice = what, n_rows, advice
        self.verbose = getattr(owner, "verbose", 0)
        self.start = time.perf_counter()
        self.next_line = LOG_Z_REPORT_SECONDS
        self.warned = False

    def __call__(self, done):
        elapsed = time.perf_counter() - self.start
        if elapsed < min(self.next_line, SLOW_LOG_Z_SECONDS) or not done:
            return
        rest = elapsed * (self.n_rows - done) / done
        pace = (f"{done:,} of {self.n_rows:,} rows in {elapsed:.0f} s; about {rest:.0f} s "
                "more at this pace")
        if self.verbose and elapsed >= self.next_line:
            self.next_line = elapsed + LOG_Z_REPORT_SECONDS
            print(f"[{self.owner}] {self.what}: {pace}", flush=True)
        if not self.warned and elapsed >= SLOW_LOG_Z_SECONDS:
            self.warned = True
            warn_user(
                f"{self.owner}: {self.what} has done {pace}. {self.advice}"
                + ("" if self.verbose else " verbose=1 prints its progress."),
                SlowEstimateWarning,
            )


#: With ``verbose``, an epoch still running after this many seconds prints its progress,
#: and again every as many seconds (exact learning of a large machine, slow sampling).
EPOCH_REPORT_SECONDS = 5.0


class EpochProgress:
    """Prints the rows an epoch has done, its time and the rows in all, now and then
    (``verbose`` training of a slow model, e.g. exact learning of a large machine)."""

    def __init__(self, owner, epoch, n_rows):
        self.prefix = f"[{type(owner).__name__}] epoch {epoch}"
        self.n_rows = n_rows
        self.start = time.perf_counter()
        self.next_line = EPOCH_REPORT_SECONDS

    def __call__(self, rows_done):
        elapsed = time.perf_counter() - self.start
        if elapsed >= self.next_line:
            self.next_line = elapsed + EPOCH_REPORT_SECONDS
            print(f"{self.prefix}: {rows_done:,} of {self.n_rows:,} rows in {elapsed:.0f} s",
                  flush=True)


class _NoCallbacks:
    """A callback context that does nothing (no callback set, or scikit-learn < 1.9).

    It answers the calls skboltz makes on scikit-learn's ``CallbackContext``, so the
    training loops need no ``if`` around them and cost nothing without callbacks.
    """

    def subcontext(self, **task):
        return self

    def call_on_fit_task_begin(self, **arguments):
        return self

    def call_on_fit_task_end(self, **arguments):
        return False  # no callback asks to stop

    def propagate_callback_context(self, sub_estimator):
        return contextlib.nullcontext()


NO_CALLBACKS = _NoCallbacks()


def fit_callback_context(estimator, *, max_subtasks):
    """The root callback context of a ``fit``, or ``NO_CALLBACKS`` when none can listen.

    A context is built when the estimator has callbacks (``set_callbacks``) or runs
    inside a meta-estimator's task tree (``GridSearchCV``, ``Pipeline``, a DBN or a
    classifier with callbacks), so progress nests under the outer task.
    """
    if getattr(estimator, "_skl_callbacks", None) or hasattr(estimator, "_parent_callback_ctx"):
        return estimator._init_callback_context(max_subtasks=max_subtasks)
    return NO_CALLBACKS
