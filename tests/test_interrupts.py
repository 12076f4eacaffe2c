"""Interrupt-safe fits: an interrupt at any line of the publishing code leaves the
estimator wholly as it was or wholly refitted, never a mix of the two."""

import contextlib
import inspect
import sys

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.base import clone

import skboltz.core._base as base
import skboltz.core._transactions as transactions
from skboltz import (
    DBN,
    RBM,
    BoltzmannClassifier,
    BoltzmannMachine,
    DBNClassifier,
    RBMClassifier,
)
from skboltz.meta._dbn_classifier import start_from_pretrained

OLD = (np.random.default_rng(0).random((40, 5)) < 0.5).astype(float)
NEW = (np.random.default_rng(1).random((30, 4)) < 0.3).astype(float)

MODELS = {
    "RBM": (RBM(n_components=3, n_iter=2, random_state=0), "components_"),
    "BoltzmannMachine": (
        BoltzmannMachine(n_hidden=2, learning="exact", n_iter=2, random_state=0),
        "coupling_",
    ),
}


def _code(function):
    function = inspect.unwrap(function)
    return function.__code__


def _publishing_code(model):
    """Code objects of everything that runs from the end of training to the return."""
    return {
        _code(base.BoltzmannBase._fit_unguarded),
        _code(base.BoltzmannBase._fit),
        _code(type(model)._fitted_attributes),
        _code(transactions.publish),
        _code(transactions.all_or_nothing),
    }


def _fit_interrupted_at_line(model, X, line, traced):
    """Fit, raising KeyboardInterrupt at the ``line``-th line run in ``traced`` code.

    Returns True if the interrupt happened (False: the fit ran fewer lines).
    """
    return _interrupted_at_line(lambda: model.fit(X), line, traced)


def _interrupted_at_line(run, line, traced):
    """Call ``run()``, raising KeyboardInterrupt at the ``line``-th line run in
    ``traced`` code; True if the interrupt happened (False: ``run`` ran fewer lines)."""
    seen = 0

    def local(frame, event, arg):
        nonlocal seen
        if event == "line":
            seen += 1
            if seen == line:
                raise KeyboardInterrupt
        return local

    def tracer(frame, event, arg):
        return local if frame.f_code in traced else None

    sys.settrace(tracer)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            run()
            return False
        return True
    finally:
        sys.settrace(None)


def _snapshot(model, attribute):
    return {
        "n_features_in_": model.n_features_in_,
        attribute: getattr(model, attribute).copy(),
        "n_iter_": model.n_iter_,
        "features": model._training_state.data_rates.shape[0],
        "learning_": repr(model.learning_),
    }


def _same(a, b):
    return a.keys() == b.keys() and all(
        np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k]
        for k in a
    )


@pytest.mark.parametrize("name", sorted(MODELS))
def test_an_interrupt_at_any_publishing_line_leaves_old_or_new(name):
    template, attribute = MODELS[name]
    old = _snapshot(clone(template).fit(OLD), attribute)
    new = _snapshot(clone(template).fit(NEW), attribute)
    traced = _publishing_code(template)
    outcomes = set()
    for line in range(1, 10_000):
        model = clone(template).fit(OLD)
        interrupted = _fit_interrupted_at_line(model, NEW, line, traced)
        state = _snapshot(model, attribute)
        if _same(state, old):
            outcomes.add("old")
            model.transform(OLD)  # and it still works
        else:
            assert _same(state, new), f"mixed model after an interrupt at line {line}"
            outcomes.add("new")
            assert_array_equal(model.transform(NEW), clone(template).fit(NEW).transform(NEW))
        if not interrupted:
            break
    assert line > 20  # the publishing code really was walked through
    assert outcomes == {"old", "new"}  # late interrupts land after the publication


LABELS_OLD = np.arange(40) % 2
LABELS_NEW = np.arange(30) % 3


def test_an_interrupted_classifier_keeps_its_old_classes_or_takes_the_new():
    # RBMClassifier learns classes_ while validating, before training: an interrupt
    # anywhere from there to the publication leaves all of the old fit or the new one.
    template = RBMClassifier(n_components=3, n_iter=2, random_state=0)
    traced = _publishing_code(template) | {
        _code(RBMClassifier._fit), _code(RBMClassifier._validate_y),
    }

    def snapshot(model):
        return {**_snapshot(model, "class_weights_"), "classes_": list(model.classes_)}

    old = snapshot(clone(template).fit(OLD, LABELS_OLD))
    new = snapshot(clone(template).fit(NEW, LABELS_NEW))
    outcomes = set()
    for line in range(1, 10_000):
        model = clone(template).fit(OLD, LABELS_OLD)
        interrupted = _interrupted_at_line(
            lambda: model.fit(NEW, LABELS_NEW), line, traced  # noqa: B023 (called now)
        )
        state = snapshot(model)
        if _same(state, old):
            outcomes.add("old")
            model.predict(OLD)  # and it still works
        else:
            assert _same(state, new), f"mixed model after an interrupt at line {line}"
            outcomes.add("new")
        if not interrupted:
            break
    assert line > 20
    assert outcomes == {"old", "new"}


META = {
    "DBN": (
        DBN(hidden_layer_sizes=(3, 2), rbm=RBM(n_iter=1), random_state=0),
        {inspect.unwrap(DBN.fit).__code__},
        lambda model: (model.n_features_in_, [layer.components_.copy() for layer in
                                              model.layers_]),
        lambda model, X, y: model.fit(X),
    ),
    "BoltzmannClassifier": (
        BoltzmannClassifier(RBM(n_components=2, n_iter=1), random_state=0),
        {inspect.unwrap(BoltzmannClassifier.fit).__code__},
        lambda model: (model.n_features_in_, list(model.classes_),
                       [est.components_.copy() for est in model.estimators_]),
        lambda model, X, y: model.fit(X, y),
    ),
    "DBNClassifier": (
        DBNClassifier(3, rbm=RBM(n_iter=1), max_iter=3, random_state=0),
        {inspect.unwrap(DBNClassifier.fit).__code__, _code(start_from_pretrained)},
        lambda model: (model.n_features_in_, list(model.classes_),
                       [coef.copy() for coef in model.mlp_.coefs_]),
        lambda model, X, y: model.fit(X, y),
    ),
}


def _same_nested(a, b):
    if isinstance(a, np.ndarray | list | tuple):
        return (len(a) == len(b) if not isinstance(a, np.ndarray) else a.shape == b.shape) \
            and all(_same_nested(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("name", sorted(META))
def test_meta_estimators_publish_in_one_step(name):
    template, own_code, snapshot, fit = META[name]
    traced = own_code | {_code(transactions.publish), _code(transactions.all_or_nothing)}
    old = snapshot(fit(clone(template), OLD, LABELS_OLD))
    new = snapshot(fit(clone(template), NEW, LABELS_NEW))
    outcomes = set()
    for line in range(1, 10_000):
        model = fit(clone(template), OLD, LABELS_OLD)
        interrupted = _interrupted_at_line(
            lambda: fit(model, NEW, LABELS_NEW), line, traced  # noqa: B023 (called now)
        )
        state = snapshot(model)
        if _same_nested(state, old):
            outcomes.add("old")
        else:
            assert _same_nested(state, new), f"mixed model after an interrupt at line {line}"
            outcomes.add("new")
        if not interrupted:  # the fit ran to the end without reaching this line
            break
    assert outcomes == {"old", "new"}
