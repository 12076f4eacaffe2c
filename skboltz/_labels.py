"""Class labels with an optional unlabelled marker: the convention of both classifiers.

:class:`~skboltz.DBNClassifier` and :class:`~skboltz.RBMClassifier` take partly
labelled data the way :mod:`sklearn.semi_supervised` does, with one difference: the
marker is a parameter, ``unlabelled_marker``, and None by default (every value of y is a
class), because -1 is also an ordinary class label (scikit-learn's common checks use the
classes -1 and 1). This module holds the parameter's constraint, its validation of y and
its error messages, so that both classifiers read y the same way.
"""

from numbers import Integral

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

#: The ``_parameter_constraints`` entry of ``unlabelled_marker``.
UNLABELLED_MARKER_CONSTRAINT = {"unlabelled_marker": [None, Integral, str]}


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


def labelled_rows(y, marker):
    """Mask of the rows of the 1-d labels ``y`` that are labelled, after checking that
    those rows make a classification problem of at least two classes."""
    labelled = ~is_marker(y, marker)
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
    return labelled


def checked_classes(classes, marker):
    """The sorted unique labels of ``classes`` (``partial_fit(X, y, classes=...)``),
    checked: at least two, none of them the marker."""
    classes = column_or_1d(classes)
    check_classification_targets(classes)
    known = np.unique(classes)
    if known.size < 2:
        raise ValueError(
            f"classes={classes.tolist()!r} names fewer than 2 classes; a classifier "
            "needs at least 2."
        )
    if is_marker(known, marker).any():
        raise ValueError(
            f"classes={classes.tolist()!r} holds the unlabelled marker {marker!r}, "
            "which is not a class."
        )
    return known
