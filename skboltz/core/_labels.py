"""Class labels with an optional unlabelled marker: the convention of both classifiers.

:class:`~skboltz.DBNClassifier` and :class:`~skboltz.RBMClassifier` take partly
labelled data the way :mod:`sklearn.semi_supervised` does, with one difference: the
marker is a parameter, ``unlabelled_marker``, and None by default (every value of y is a
class), because -1 is also an ordinary class label (scikit-learn's common checks use the
classes -1 and 1). Labels that look like the semi-supervised convention (-1 among at
least two other classes) with no marker set are read as classes, with a
:class:`~skboltz.exceptions.LabelConventionWarning`; a marker that can never match the
labels' type although one of them spells it (``"-1"`` against integer labels holding
-1) is refused. This module holds the parameter's constraint, its validation of y and
its messages, so that both classifiers read y the same way.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import assert_all_finite
from sklearn.utils.multiclass import check_classification_targets

from ..utils._runtime import warn_user
from ..exceptions import LabelConventionWarning

#: The ``_parameter_constraints`` entry of ``unlabelled_marker``.
UNLABELLED_MARKER_CONSTRAINT = {"unlabelled_marker": [None, Integral, str]}

#: How :mod:`sklearn.semi_supervised` marks an unlabelled row.
SEMI_SUPERVISED_MARKER = -1


def is_marker(values, marker):
    """Elementwise ``values == marker`` (False where the types cannot be compared, and
    everywhere when ``marker`` is None)."""
    values = np.asarray(values)
    if marker is None:
        return np.zeros(values.shape, dtype=bool)
    if values.dtype.kind in "iufb" and isinstance(marker, str):
        return np.zeros(values.shape, dtype=bool)
    if values.dtype.kind in "US" and not isinstance(marker, str):
        return np.zeros(values.shape, dtype=bool)
    return np.asarray(values == marker, dtype=bool)


def _spells(label, marker):
    """Whether ``label`` is ``marker`` written in another type (the number -1 for the
    string "-1", or the other way round)."""
    if isinstance(label, str) == isinstance(marker, str):
        return False
    text, number = (label, marker) if isinstance(label, str) else (marker, label)
    if not isinstance(number, (Integral, Real)) or isinstance(number, (bool, np.bool_)):
        return False
    try:
        return float(text) == float(number)
    except ValueError:
        return False


def check_labels_against_marker(labels, marker, *, what="y"):
    """Refuse labels that hold ``marker`` spelled in another type.

    ``unlabelled_marker="-1"`` never matches integer labels (nor -1 string labels), so
    the rows it was meant to mark would silently make a class of their own. A marker
    that simply does not occur (a minibatch with every row labelled) is fine.
    ``labels``: the unique labels.
    """
    if marker is None or is_marker(labels, marker).any():
        return
    for label in np.asarray(labels).tolist():
        if _spells(label, marker):
            kind = "a string" if isinstance(marker, str) else "a number"
            raise ValueError(
                f"unlabelled_marker={marker!r} is {kind}, but {what} holds {label!r}, "
                f"which it never matches: those rows would become a class of their own. "
                f"Pass unlabelled_marker={label!r} to mark them unlabelled."
            )


def warn_if_semi_supervised_convention(classes, marker, owner):
    """Warn when there is no marker and ``classes`` look like scikit-learn's
    semi-supervised convention: -1 among at least two other classes (with one other
    class, -1 can only be a class)."""
    if marker is not None:  # the user chose a convention
        return
    minus_one = is_marker(classes, SEMI_SUPERVISED_MARKER)
    if minus_one.any() and np.count_nonzero(~minus_one) >= 2:
        warn_user(
            f"{owner} takes -1 as a class (its classes are "
            f"{_shown(np.asarray(classes).tolist())}). If -1 marks unlabelled rows, as "
            "in sklearn.semi_supervised, pass unlabelled_marker=-1; if it is a class, "
            "silence this warning with warnings.filterwarnings('ignore', "
            "category=skboltz.exceptions.LabelConventionWarning).",
            LabelConventionWarning,
        )


def _shown(values, limit=12):
    """A list of labels for a message (the first ``limit`` of a long one)."""
    return repr(values) if len(values) <= limit else repr(values[:limit])[:-1] + ", ...]"


def unlabelled_mask(y, marker):
    """Mask of the rows of the 1-d labels ``y`` that carry ``marker``, after refusing
    a marker that ``y`` spells in another type (:func:`check_labels_against_marker`)."""
    marked = is_marker(y, marker)
    if marker is not None and not marked.any():  # a marker of the labels' type is fine
        check_labels_against_marker(_unique(y) if y.dtype.kind == "O" else np.unique(y),
                                    marker)
    return marked


def labelled_rows(y, marker, owner="The classifier"):
    """Mask of the rows of the 1-d labels ``y`` that are labelled, after checking that
    those rows make a classification problem of at least two classes (``owner``, the
    classifier's name, warns if they look like the semi-supervised convention)."""
    labelled = ~unlabelled_mask(y, marker)
    if not labelled.any():
        raise ValueError(
            f"Every row of y is marked unlabelled ({marker!r}): a classifier needs "
            "labelled rows of at least 2 classes."
        )
    check_classification_targets(y[labelled])
    classes = np.unique(y[labelled])
    if classes.size < 2:
        rows = "y holds" if labelled.all() else "The labelled rows of y hold"
        raise ValueError(
            f"{rows} one class only ({classes.tolist()[0]!r}); a classifier needs at "
            "least 2 classes."
        )
    warn_if_semi_supervised_convention(classes, marker, owner)
    return labelled


def unknown_labels_message(unknown, classes, marker):
    """The error of labels missing from the classes a first ``partial_fit`` named."""
    message = (
        f"y holds labels that are not among the classes {_shown(list(classes))}: "
        f"{_shown(list(unknown))}. Name every class in the first call to "
        "partial_fit(X, y, classes=...), or call fit."
    )
    if marker is None and is_marker(np.asarray(unknown), SEMI_SUPERVISED_MARKER).any():
        message += (" If -1 marks unlabelled rows, as in sklearn.semi_supervised, pass "
                    "unlabelled_marker=-1.")
    return message


def _unique(values):
    """The distinct values of an object array (any mix of types), in first-seen order."""
    seen = {}
    for value in values.tolist():
        seen.setdefault((type(value), value), value)
    return np.array(list(seen.values()), dtype=object)


def checked_classes(classes, marker, owner=None):
    """The sorted unique labels of ``classes`` (``partial_fit(X, y, classes=...)``),
    checked: a 1-d array of at least two finite labels, none of them the marker (and,
    with ``owner``, the classifier's name, a warning if they look like the
    semi-supervised convention)."""
    given = np.asarray(classes)
    if given.ndim != 1:
        raise ValueError(
            f"classes must be a 1-d array of every class label, e.g. np.unique(y_all); "
            f"got an array of shape {given.shape}."
        )
    if given.dtype.kind in "fc":
        assert_all_finite(given, input_name="classes")
    check_classification_targets(given)
    known = np.unique(given)
    if known.size < 2:
        raise ValueError(
            f"classes={given.tolist()!r} names fewer than 2 classes; a classifier "
            "needs at least 2."
        )
    check_labels_against_marker(known, marker, what="classes")
    if is_marker(known, marker).any():
        raise ValueError(
            f"classes={given.tolist()!r} holds the unlabelled marker {marker!r}, "
            "which is not a class."
        )
    if owner is not None:
        warn_if_semi_supervised_convention(known, marker, owner)
    return known


def check_marker_is_no_class(classes, marker):
    """Refuse a marker set (``set_params``) between ``partial_fit`` calls that is one
    of the classes the first call named, as the first call refuses it."""
    if is_marker(classes, marker).any():
        raise ValueError(
            f"unlabelled_marker={marker!r} is one of the classes "
            f"{_shown(np.asarray(classes).tolist())} named by the first call to "
            "partial_fit: a marker cannot be a class. Set unlabelled_marker back, or "
            "call fit to start again."
        )
    check_labels_against_marker(classes, marker, what="classes_")
