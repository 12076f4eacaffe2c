"""Classification with one density model per class (Bayes' rule)."""

import time
from numbers import Integral

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils import get_tags
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import check_is_fitted, validate_data

from ..estimators._rbm import RBM
from ..utils._runtime import (
    NO_CALLBACKS,
    CallbackSupportMixin,
    fit_callback_context,
    sub_estimator_seeds,
)
from ..utils._sklearn import HasMethods, _fit_context
from ..core._transactions import all_or_nothing, publish
from ..utils._weights import FIT_SAMPLE_WEIGHT_DOC, score_weights

#: Hidden units of the default per-class RBM: 2**16 hidden states, so "auto" computes
#: every class's log Z exactly, in well under a second.
DEFAULT_N_COMPONENTS = 16
#: Epochs of the default per-class RBM (a class has a tenth of the data, so it needs
#: more epochs than one model of all the data for the same number of updates).
DEFAULT_N_ITER = 30


class BoltzmannClassifier(CallbackSupportMixin, ClassifierMixin, BaseEstimator):
    """Classifier with one Boltzmann machine (or other density model) per class.

    ``fit`` trains a clone of ``estimator`` on the rows of each class;
    ``predict_proba`` applies Bayes' rule,
    p(y | x) = p(x | y) p(y) / sum_k p(x | k) p(k),
    with log p(x | y) from each class model's ``score_samples``: a model trained on
    threes can tell threes from not-threes by how probable it finds a digit, and one
    model per class generalises this to any number of classes.

    **Why log Z matters.** An RBM's ``score_samples`` is ``-F(x) - log Z``. The free
    energies F of different models are not comparable by themselves: each class's
    normalising constant log Z must be right, or the classifier is biased towards the
    class whose log Z is underestimated. An error of d nats in one class's log Z
    multiplies that class's odds by exp(d) for every input. The default per-class RBM
    therefore has 16 hidden units, so its log Z is computed *exactly* (``"auto"``
    enumerates 2**16 hidden states). With larger models, ``"auto"`` switches to a
    sampling estimator (AIS) whose standard errors (see ``log_partitions_``) carry
    straight into the log-odds between classes; keep them well below 1 nat.

    Parameters
    ----------
    estimator : estimator or None, default=None
        Density model cloned for each class: anything with ``fit(X)`` and
        ``score_samples(X)`` returning a *normalised* log-density, e.g. any skboltz
        model, or :class:`sklearn.neighbors.KernelDensity`. None means
        ``RBM(n_components=16, n_iter=30)`` (exact log Z, see above).
    priors : array-like of shape (n_classes,) or None, default=None
        Prior class probabilities p(y). None uses the class frequencies of the
        training data.
    n_jobs : int or None, default=None
        Number of class models fitted in parallel (with joblib). None means 1 unless
        in a ``joblib.parallel_config`` context; -1 means all processors. The
        fitted models do not depend on it. Each model keeps its own BLAS setting
        (skboltz models train small products with one BLAS thread).
    random_state : int, RandomState instance or None, default=None
        None leaves each class model with the template's ``random_state``; otherwise
        a different seed for each class is drawn from it (for models that have a
        ``random_state`` parameter), so that repeated fits give the same classifier.
    verbose : int, default=0
        With a positive value, ``fit`` prints a line when each class model starts and
        one with its time when it is done, and the class models are trained with this
        ``verbose`` when they have that parameter. 0 leaves them with the template's.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    estimators_ : list of estimators
        The fitted density model of each class, in the order of ``classes_``.
    class_count_ : ndarray of shape (n_classes,)
        Training rows of each class.
    class_prior_ : ndarray of shape (n_classes,)
        The prior p(y) used by ``predict_proba``.
    log_partitions_ : list of LogZ or None
        Each class model's log Z estimate (with its standard error for sampling
        estimators), or None for models without ``estimate_log_partition``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``, when they are all strings.

    See Also
    --------
    sklearn.naive_bayes.BernoulliNB : The same rule with independent units per class.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skboltz import RBM, BoltzmannClassifier
    >>> X, y = load_digits(return_X_y=True)
    >>> X = X / 16
    >>> clf = BoltzmannClassifier(RBM(n_components=8, n_iter=5, random_state=0))
    >>> clf = clf.fit(X[:1000], y[:1000])
    >>> clf.predict_proba(X[1000:1003]).sum(axis=1).round(6)
    array([1., 1., 1.])
    >>> bool(clf.score(X[1000:], y[1000:]) > 0.8)
    True
    """

    _parameter_constraints = {
        "estimator": [None, HasMethods(["fit", "score_samples"])],
        "priors": [None, "array-like"],
        "n_jobs": [None, Integral],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, estimator=None, priors=None, n_jobs=None, random_state=None, verbose=0):
        self.estimator = estimator
        self.priors = priors
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _template(self):
        if self.estimator is None:
            return RBM(n_components=DEFAULT_N_COMPONENTS, n_iter=DEFAULT_N_ITER)
        return self.estimator

    def _class_models(self, n_classes):
        """Unfitted clones of the template, one per class, seeded and with ``verbose``."""
        template = self._template()
        settable = template.get_params(deep=False)
        models = []
        for seed in sub_estimator_seeds(self.random_state, n_classes):
            model = clone(template)
            if seed is not None and "random_state" in settable:
                model.set_params(random_state=seed)
            if self.verbose and "verbose" in settable:
                model.set_params(verbose=self.verbose)
            models.append(model)
        return models

    def _validate_X(self, X, *, reset):
        return validate_data(
            self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=reset
        )

    def _class_prior(self, class_count):
        if self.priors is None:
            return class_count / class_count.sum()
        priors = np.asarray(self.priors, dtype=np.float64)
        if priors.shape != class_count.shape:
            raise ValueError(
                f"Number of priors ({priors.size}) must match the number of classes "
                f"({class_count.size})."
            )
        if np.any(priors < 0):
            raise ValueError("Priors must be non-negative.")
        if not np.isclose(priors.sum(), 1.0):
            raise ValueError(f"The sum of the priors should be 1, got {priors.sum()}.")
        return priors

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Fit one density model to the rows of each class.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data (values in [0, 1] for Bernoulli models).
        y : array-like of shape (n_samples,)
            Class labels.
        {sample_weight} Each class's model is fitted with its rows' weights (the
            model's ``fit`` must take ``sample_weight``), and the class counts, hence
            the priors, are the sums of the weights.

        Returns
        -------
        self : object
            The fitted classifier.
        """
        with all_or_nothing(self):
            X, y = validate_data(
                self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32], reset=True
            )
            check_classification_targets(y)
            sample_weight = score_weights(sample_weight, X)  # validated, or None
            if sample_weight is not None:  # a row of weight 0 is no row
                kept = np.flatnonzero(sample_weight > 0)
                X, y, sample_weight = X[kept], y[kept], sample_weight[kept]
            classes, y_index, class_count = np.unique(
                y, return_inverse=True, return_counts=True
            )
            if sample_weight is not None:
                class_count = np.bincount(y_index, weights=sample_weight)
            class_prior = self._class_prior(class_count.astype(np.float64))
            n_classes = len(classes)
            if n_classes < 2:
                raise ValueError(
                    f"{type(self).__name__} needs at least 2 classes to compare their "
                    f"densities; y has only one class ({classes[0]!r}). For a density of "
                    "one class, fit the density model itself (e.g. RBM().fit(X)) and use "
                    "its score_samples."
                )
            # Every class is one task for callbacks; its model's own tasks nest inside.
            # The contexts are made here, in order, before any of them runs in a worker.
            callback_ctx = fit_callback_context(self, max_subtasks=n_classes)
            callback_ctx.call_on_fit_task_begin(estimator=self, X=X, y=y)
            class_contexts = [
                callback_ctx.subcontext(task_name=f"class {label}") for label in classes
            ]
            # Workers get the classifier (and its previous fit) only for callbacks.
            caller = None if callback_ctx is NO_CALLBACKS else self
            fitted = Parallel(n_jobs=self.n_jobs)(
                delayed(_fit_class_model)(
                    model, X[y_index == k], callback_ctx=class_contexts[k], caller=caller,
                    sample_weight=(None if sample_weight is None
                                   else sample_weight[y_index == k]),
                    name=f"class {k + 1}/{n_classes} (label {classes[k]}, "
                    f"{class_count[k]} rows)",
                    verbose=self.verbose,
                )
                for k, model in enumerate(self._class_models(n_classes))
            )
            publish(self, {  # all at once: an interrupt never leaves a mix
                "classes_": classes,
                "class_count_": class_count,
                "class_prior_": class_prior,
                "estimators_": [model for model, _ in fitted],
                "log_partitions_": [log_z for _, log_z in fitted],
            })
        callback_ctx.call_on_fit_task_end(estimator=self, X=X, y=y, reconstruction_attributes={})
        return self

    fit.__doc__ = fit.__doc__.replace("{sample_weight}", FIT_SAMPLE_WEIGHT_DOC)

    def predict_joint_log_proba(self, X):
        """Joint log-probability log p(x, y) = log p(x | y) + log p(y) per row and class.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to classify.

        Returns
        -------
        joint_log_proba : ndarray of shape (n_samples, n_classes)
            Each class model's log-likelihood of the row plus the class's log prior.
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        with np.errstate(divide="ignore"):
            log_prior = np.log(self.class_prior_)
        log_likelihood = np.column_stack([est.score_samples(X) for est in self.estimators_])
        return log_likelihood + log_prior

    def _log_posterior(self, X):
        joint = self.predict_joint_log_proba(X)
        evidence = logsumexp(joint, axis=1, keepdims=True)
        # A row every class model gives zero density (log-likelihood -inf, as
        # KernelDensity does far from its data) tells the classes nothing apart: its
        # posterior is the prior, not NaN.
        unexplained = np.isneginf(evidence[:, 0])
        if unexplained.any():
            with np.errstate(divide="ignore"):
                joint[unexplained] = np.log(self.class_prior_)
            evidence[unexplained] = 0.0
        return joint - evidence

    def predict_log_proba(self, X):
        """Log posterior class probabilities log p(y | x), the log of ``predict_proba``.

        A posterior below the smallest positive float64 (log p(y | x) below about
        -745) is 0 in :meth:`predict_proba`, and -inf here, its log; the finite
        log-odds of such rows are differences of :meth:`predict_joint_log_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        log_proba = self._log_posterior(X)
        # Where exp underflows, predict_proba holds 0: keep the two consistent.
        log_proba[np.exp(log_proba) == 0] = -np.inf
        return log_proba

    def predict_proba(self, X):
        """Posterior class probabilities p(y | x) by Bayes' rule.

        Computed from the log posteriors (log-sum-exp over the classes), so no class
        likelihood overflows; a posterior below the smallest positive float64 is 0.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Rows sum to 1; columns in the order of ``classes_``.
        """
        return np.exp(self._log_posterior(X))

    def predict(self, X):
        """The most probable class of each row.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The class of highest posterior probability for each row.
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self._log_posterior(X), axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = get_tags(self._template()).input_tags.sparse
        return tags


def _fit_class_model(model, X, *, callback_ctx, caller, name, verbose, sample_weight=None):
    """Fit one class's density model (and its log Z, if any) in a joblib worker, with
    the rows' weights if any."""
    with callback_ctx.propagate_callback_context(model):
        callback_ctx.call_on_fit_task_begin(estimator=caller, X=X)
        if verbose:
            print(f"[BoltzmannClassifier] {name}: fitting", flush=True)
        start = time.perf_counter()
        try:
            if sample_weight is None:
                model.fit(X)
            else:
                model.fit(X, sample_weight=sample_weight)
            # Estimated here, so that log Z estimates run in parallel too; the model
            # caches it, so scoring never estimates it again.
            log_z = (
                model.estimate_log_partition()
                if hasattr(model, "estimate_log_partition")
                else None
            )
        except Exception as error:
            raise _naming_the_class(error, name) from error
        if verbose:
            elapsed = time.perf_counter() - start
            print(f"[BoltzmannClassifier] {name}: done in {elapsed:.2f}s", flush=True)
        callback_ctx.call_on_fit_task_end(estimator=caller, X=X)
    return model, log_z


def _naming_the_class(error, name):
    """``error`` of a class model's fit, with a message that starts with the class
    (e.g. which class has too few rows); ``error`` itself if its type cannot be made
    from a message."""
    try:
        named = type(error)(f"The model of {name} failed: {error}")
    except Exception:
        return error
    return named if str(named).endswith(str(error)) else error


__all__ = ["BoltzmannClassifier"]
