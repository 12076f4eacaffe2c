"""Fits as transactions: all-or-nothing publication of an estimator's attributes.

A fit works on a private copy of its training state and publishes the fitted
attributes in one store (:func:`publish`), so an exception (divergence, interrupt, bad
input) never leaves a half-updated model; :func:`all_or_nothing` puts back what input
validation recorded before a fit that did not publish; :func:`held_updates` makes
several fits (a meta-estimator's layers) one update that happens entirely or not at
all; :func:`reads_one_publication` makes a method read one publication of the
attributes, never a mix of two fits made in other threads.
"""

import contextlib
import contextvars
import functools


#: What validate_data(reset=True) sets on an estimator before any training happens (an
#: estimator adds what its own validation sets, e.g. a classifier's ``classes_``, in its
#: class attribute ``_input_attributes``).
_INPUT_ATTRIBUTES = ("n_features_in_", "feature_names_in_")


#: Counts an estimator's publications (tells a failed fit from one that finished).
_GENERATION = "_fit_generation"


def publish(estimator, attributes):
    """Set an estimator's fitted attributes all at once.

    The new ``__dict__`` is built aside and stored in one assignment. A
    ``KeyboardInterrupt`` (or any signal handler's exception) arrives between
    bytecodes, so it lands before the store (nothing changed) or after it (everything
    new), never with some attributes from the old fit and some from the new one.
    """
    attributes[_GENERATION] = estimator.__dict__.get(_GENERATION, 0) + 1
    estimator.__dict__ = {**estimator.__dict__, **attributes}


@contextlib.contextmanager
def all_or_nothing(estimator):
    """Undo validate_data's input bookkeeping if the fit in the block does not publish.

    Fits publish their results only at the end (:func:`publish`), but
    ``validate_data(reset=True)`` records ``n_features_in_`` (and ``feature_names_in_``)
    at the start, and an estimator's own validation may record more (its class
    attribute ``_input_attributes``, e.g. a classifier's ``classes_``); restoring them
    keeps a failed or interrupted fit from leaving them out of step with the kept
    model. The restore is one store, like the publication.
    """
    names = getattr(estimator, "_input_attributes", _INPUT_ATTRIBUTES)
    saved = {k: estimator.__dict__[k] for k in names if k in estimator.__dict__}
    generation = estimator.__dict__.get(_GENERATION, 0)
    try:
        yield
    except BaseException:
        if estimator.__dict__.get(_GENERATION, 0) == generation:  # nothing published
            restored = {
                k: v for k, v in estimator.__dict__.items() if k not in names
            }
            restored.update(saved)
            estimator.__dict__ = restored
        raise


#: The update journal of the innermost ``held_updates`` block of this thread, if any.
_HELD_UPDATES = contextvars.ContextVar("skboltz_held_updates", default=None)


class _UpdateJournal:
    """What ``held_updates`` needs to put its estimators back: their attributes when
    the block began, and the undo of every update made in it (see
    :meth:`~skboltz.core._training.TrainingState.begin_update`)."""

    def __init__(self, estimators):
        self.held = {id(estimator) for estimator in estimators}
        self.saved = [(estimator, dict(estimator.__dict__)) for estimator in estimators]
        self.undos = []

    def holds(self, estimator):
        return id(estimator) in self.held

    def roll_back(self):
        for undo in reversed(self.undos):  # the latest update first
            undo()
        for estimator, attributes in self.saved:
            estimator.__dict__ = attributes


@contextlib.contextmanager
def held_updates(estimators):
    """Make every ``fit`` and ``partial_fit`` of ``estimators`` in the block one update
    that happens entirely or not at all.

    Each call publishes as usual, but what its training shares with the state it
    replaced (random generators' positions, the history) stays undoable until the block
    ends: if the block raises, every estimator is put back exactly as it was when the
    block began (attributes, random streams, history), as one failed call of its own
    would leave it; if the block finishes, the updates stand. A meta-estimator whose
    one call trains several models (a DBN's ``partial_fit``, one epoch of each layer)
    holds them across all of them. A block inside another joins it (the outer block
    decides). Only the thread that opened the block is held.
    """
    outer = _HELD_UPDATES.get()
    if outer is not None:
        outer.held.update(id(estimator) for estimator in estimators)
        outer.saved.extend((estimator, dict(estimator.__dict__)) for estimator in estimators
                           if not any(estimator is kept for kept, _ in outer.saved))
        yield
        return
    journal = _UpdateJournal(estimators)
    token = _HELD_UPDATES.set(journal)
    try:
        yield
    except BaseException:
        journal.roll_back()
        raise
    finally:
        _HELD_UPDATES.reset(token)


def _hold_undo(estimator, undo):
    """Keep ``undo`` of a finished update while a ``held_updates`` block holds the
    estimator (it is dropped otherwise: the update stands)."""
    journal = _HELD_UPDATES.get()
    if journal is not None and journal.holds(estimator):
        journal.undos.append(undo)


def reads_one_publication(method):
    """Run ``method`` on one publication of the estimator's attributes.

    A fit publishes its attributes in one store (:func:`publish`); a method that reads
    several of them (parameters, log Z cache, training state) could otherwise read some
    from one fit and some from another fit running in another thread (a score made of
    one fit's free energies and the other's log Z). The method runs on a shallow
    instance over the ``__dict__`` the estimator has when the call starts: one read,
    and an object allocation per call. What the method stores (log Z estimates, the
    sampling stream) lands in that fit's attributes, as before.
    """

    @functools.wraps(method)
    def on_one_publication(self, *args, **kwargs):
        published = object.__new__(type(self))
        published.__dict__ = self.__dict__  # the same dict object: one read
        return method(published, *args, **kwargs)

    return on_one_publication


__all__ = ["all_or_nothing", "held_updates", "publish", "reads_one_publication"]
