"""What DBNClassifier and RBMClassifier share: the unlabelled-row convention (the same
parameter, default, meaning and errors; skboltz/core/_labels.py) and scikit-learn's accuracy
yardstick on inputs in their range."""

import inspect
import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import MinMaxScaler
from sklearn.utils import shuffle

from skboltz import RBM, DBNClassifier, RBMClassifier
from skboltz.core._labels import is_marker, labelled_rows
from skboltz.exceptions import LabelConventionWarning

X = (np.random.default_rng(0).random((60, 6)) < 0.5).astype(float)

CLASSIFIERS = {
    "DBNClassifier": lambda **params: DBNClassifier(
        (4,), rbm=RBM(n_iter=1), max_iter=5, random_state=0, **params),
    "RBMClassifier": lambda **params: RBMClassifier(
        n_components=4, n_iter=2, random_state=0, **params),
}


def fit_quietly(classifier, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return classifier.fit(X, y)


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_the_marker_parameter_is_the_same(name):
    cls = type(CLASSIFIERS[name]())
    assert inspect.signature(cls).parameters["unlabelled_marker"].default is None
    assert (cls._parameter_constraints["unlabelled_marker"]
            == DBNClassifier._parameter_constraints["unlabelled_marker"])


@pytest.mark.parametrize("name", CLASSIFIERS)
@pytest.mark.parametrize(
    "y, marker, message",
    [
        (np.full(60, -1), -1, r"Every row of y is marked unlabelled \(-1\): a classifier"),
        (np.where(np.arange(60) < 20, 4, -1), -1,
         r"^The labelled rows of y hold one class only \(4\); a classifier needs"),
        (np.full(60, "a"), None, r"^y holds one class only \('a'\); a classifier needs"),
        (np.full(60, "a"), "?", r"^y holds one class only \('a'\)"),  # marker type
        (np.linspace(0, 1, 60), None, "Unknown label type"),
        (np.where(np.arange(60) < 30, 0.5, -1), -1, "Unknown label type"),
    ],
    ids=["all-unlabelled", "one-labelled-class", "one-class", "absent-marker",
         "continuous", "continuous-labelled-rows"],
)
def test_both_classifiers_refuse_the_same_labels_the_same_way(name, y, marker, message):
    classifier = CLASSIFIERS[name](unlabelled_marker=marker)
    with pytest.raises(ValueError, match=message):
        classifier.fit(X, y)
    assert not hasattr(classifier, "classes_")


@pytest.mark.parametrize("name", CLASSIFIERS)
@pytest.mark.parametrize(
    "labels, marker, classes",
    [
        (np.array([-1, 1] * 30), None, [-1, 1]),  # no marker: -1 is a class
        (np.array(["odd", "even"] * 20 + ["?"] * 20), "?", ["even", "odd"]),
        (np.array(["odd", "even"] * 20 + [-1] * 20, dtype=object), -1, ["even", "odd"]),
        (np.array([3.0, 7.0] * 20 + [-1.0] * 20), -1, [3.0, 7.0]),
        (np.array([3, 7] * 30), "?", [3, 7]),  # a marker of another type, never equal
    ],
    ids=["minus-one-a-class", "str-marker", "object-labels", "float-labels",
         "absent-marker"],
)
def test_both_classifiers_read_the_marker_the_same_way(name, labels, marker, classes):
    classifier = fit_quietly(CLASSIFIERS[name](unlabelled_marker=marker), X, labels)
    assert classifier.classes_.tolist() == classes
    assert set(classifier.predict(X).tolist()) <= set(classes)


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_minus_one_among_classes_without_a_marker_warns_naming_the_marker(name):
    # sklearn.semi_supervised's convention: 40 labelled rows, the rest -1. Without
    # the marker -1 is a class, as in any scikit-learn classifier, but not silently.
    y = np.where(np.arange(60) < 40, np.arange(60) % 2, -1)
    with pytest.warns(LabelConventionWarning, match=r"takes -1 as a class \(its classes "
                      r"are \[-1, 0, 1\]\).*pass unlabelled_marker=-1"):
        classifier = fit_quietly(CLASSIFIERS[name](), X, y)
    assert classifier.classes_.tolist() == [-1, 0, 1]
    # the marker reads them as unlabelled rows; any marker chosen (-1 a class) or -1
    # beside one other class (which only a class can be: scikit-learn's checks use
    # the classes -1 and 1) says nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error", LabelConventionWarning)
        assert fit_quietly(CLASSIFIERS[name](unlabelled_marker=-1), X, y
                           ).classes_.tolist() == [0, 1]
        assert fit_quietly(CLASSIFIERS[name](unlabelled_marker=-99), X, y
                           ).classes_.tolist() == [-1, 0, 1]
        assert fit_quietly(CLASSIFIERS[name](), X, np.where(y == 0, 1, y)
                           ).classes_.tolist() == [-1, 1]


def test_partial_fit_warns_of_the_convention_once_and_names_the_marker():
    y = np.where(np.arange(60) < 20, np.arange(60) % 2, -1)
    clf = CLASSIFIERS["RBMClassifier"]()
    with pytest.warns(LabelConventionWarning, match="pass unlabelled_marker=-1"):
        clf.partial_fit(X, y, classes=[-1, 0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", LabelConventionWarning)
        clf.partial_fit(X, y, classes=[-1, 0, 1])
    # -1 in y but not among the classes: the error says what -1 may mean
    with pytest.raises(ValueError, match=r"not among the classes \[0, 1\]: \[-1\].*"
                                         "pass unlabelled_marker=-1"):
        CLASSIFIERS["RBMClassifier"]().partial_fit(X, y, classes=[0, 1])


@pytest.mark.parametrize("name", CLASSIFIERS)
@pytest.mark.parametrize(
    "labels, marker, message",
    [(np.where(np.arange(60) < 20, np.arange(60) % 2 + 3, -1), "-1",
      r"unlabelled_marker='-1' is a string, but y holds -1, which it never matches.*"
      r"Pass unlabelled_marker=-1 "),
     (np.where(np.arange(60) < 20, np.array(["a", "b"] * 30), "-1"), -1,
      r"unlabelled_marker=-1 is a number, but y holds '-1'.*"
      r"Pass unlabelled_marker='-1' "),
     (np.where(np.arange(60) < 20, np.arange(60) % 2 + 3.0, -1.0), "-1",
      r"y holds -1.0, which it never matches")],
    ids=["str-marker-int-labels", "int-marker-str-labels", "str-marker-float-labels"],
)
def test_a_marker_that_y_spells_in_another_type_is_refused(name, labels, marker,
                                                            message):
    classifier = CLASSIFIERS[name](unlabelled_marker=marker)
    with pytest.raises(ValueError, match=message):
        classifier.fit(X, labels)
    assert not hasattr(classifier, "classes_")


def test_partial_fit_refuses_a_marker_spelled_in_another_type():
    clf = CLASSIFIERS["RBMClassifier"](unlabelled_marker="-1")
    y = np.where(np.arange(60) < 20, np.arange(60) % 2, -1)
    with pytest.raises(ValueError, match="classes holds -1, which it never matches"):
        clf.partial_fit(X, np.arange(60) % 2, classes=[-1, 0, 1])
    with pytest.raises(ValueError, match="y holds -1, which it never matches"):
        clf.partial_fit(X, y, classes=[0, 1])
    assert not hasattr(clf, "classes_")


def test_a_marker_set_between_partial_fit_calls_is_refused_if_it_is_a_class():
    y = np.arange(60) % 3 - 1  # the classes -1, 0 and 1
    clf = CLASSIFIERS["RBMClassifier"](unlabelled_marker="?")
    clf.partial_fit(X, y, classes=[-1, 0, 1])
    before = clf.components_.copy()
    for marker in (-1, 0):  # as the first call refuses classes holding the marker
        with pytest.raises(ValueError, match=f"unlabelled_marker={marker} is one of the "
                           r"classes \[-1, 0, 1\] named by the first call to partial_fit"):
            clf.set_params(unlabelled_marker=marker).partial_fit(X, y)
        assert_array_equal(clf.components_, before)
    with pytest.raises(ValueError, match="y holds '-1', which it never matches"):
        clf.set_params(unlabelled_marker=-1).partial_fit(X, y.astype(str))
    clf.set_params(unlabelled_marker=7).partial_fit(X, np.where(y == 1, 7, y))
    assert clf.classes_.tolist() == [-1, 0, 1]


@pytest.mark.parametrize(
    "classes, message",
    [(np.arange(4).reshape(2, 2), r"classes must be a 1-d array of every class label, "
                                  r"e.g. np.unique\(y_all\); got an array of shape "
                                  r"\(2, 2\)"),
     ([0.0, 1.0, np.nan], "Input classes contains NaN")],
    ids=["2-d", "nan"],
)
def test_partial_fit_classes_get_clear_errors(classes, message):
    clf = CLASSIFIERS["RBMClassifier"]()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warning first
        with pytest.raises(ValueError, match=message):
            clf.partial_fit(X, np.arange(60) % 2, classes=classes)
    assert not hasattr(clf, "classes_")


def test_is_marker_compares_only_comparable_types():
    assert_array_equal(is_marker(np.array([1, -1]), -1), [False, True])
    assert_array_equal(is_marker(np.array([1, -1]), "-1"), [False, False])
    assert_array_equal(is_marker(np.array(["-1", "a"]), -1), [False, False])
    assert_array_equal(is_marker(np.array(["a", -1], dtype=object), -1), [False, True])
    assert_array_equal(is_marker(np.array([1, -1]), None), [False, False])
    assert_array_equal(labelled_rows(np.array([0, -1, 1]), -1), [True, False, True])


@pytest.mark.parametrize("cls", [DBNClassifier, RBMClassifier])
def test_the_defaults_classify_scikit_learns_blobs_scaled_into_the_unit_interval(cls):
    # What check_classifiers_train measures (0.83 accuracy on the training rows; the
    # poor_score tag skips it there, where the blobs are standardised, outside [0, 1]).
    X, y = make_blobs(n_samples=300, random_state=0)
    X, y = shuffle(X, y, random_state=7)
    X = MinMaxScaler().fit_transform(X)
    for rows in (slice(None), y != 2):
        clf = fit_quietly(cls(random_state=0), X[rows], y[rows])
        assert clf.score(X[rows], y[rows]) > 0.83
