"""Docstrings: numpydoc validation of the public API, and the doctests of every module.

Policy (numpydoc validation codes, https://numpydoc.readthedocs.io/en/latest/validation.html):

- Every public class and function (the names in ``__all__`` of ``skboltz`` and of its
  public modules) passes all checks except those in ``IGNORED``; in particular it must
  have an Examples section (EX01), and the examples are run below.
- Public methods and properties pass the same checks except EX01 (their usage is shown
  in the class example). A method with no docstring of its own that overrides a
  documented one inherits that documentation (Sphinx shows it) and is checked through
  the base class instead.

Ignored everywhere:

- ES01 (no extended summary): a one-paragraph summary is often all a name needs.
- SA01 (no See Also section): optional.
- RT02 (return value named, as in ``self : object``): scikit-learn's convention.
"""

import doctest
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import numpy as np
import pytest

import skboltz

numpydoc_validate = pytest.importorskip("numpydoc.validate")

IGNORED = {"ES01", "SA01", "RT02"}
IGNORED_FOR_MEMBERS = IGNORED | {"EX01"}

#: Public modules whose ``__all__`` is the public API (besides ``skboltz`` itself).
PUBLIC_MODULES = sorted(
    {
        f"skboltz.{name}"
        for name in skboltz.__all__
        if inspect.ismodule(getattr(skboltz, name))
    }
    | {"skboltz.plotting"}
)


def _public_objects():
    """(qualified name, object) of every public class and function."""
    found = {}
    for module_name in ["skboltz", *PUBLIC_MODULES]:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                # One entry per object, under the shortest public path.
                found.setdefault(obj, f"{module_name}.{name}")
    return sorted((name, obj) for obj, name in found.items())


PUBLIC_OBJECTS = _public_objects()


def _public_members():
    """Qualified names of public methods and properties defined in skboltz classes."""
    names = []
    for qualified, cls in PUBLIC_OBJECTS:
        if not inspect.isclass(cls) or issubclass(cls, BaseException):
            continue
        for attr in sorted(dir(cls)):
            if attr.startswith("_"):
                continue
            owner = next(klass for klass in cls.__mro__ if attr in vars(klass))
            if not owner.__module__.startswith("skboltz"):
                continue  # inherited from scikit-learn or object: documented there
            member = vars(owner)[attr]
            if not (inspect.isfunction(member) or isinstance(member, property)):
                continue  # plain class attributes and dataclass fields
            if getattr(member, "__doc__", None) is None:
                # Overrides a documented method of a base class without a docstring.
                # (the nearest base that documents it: what inspect.getdoc and
                # Sphinx show)
                if any(vars(k)[attr].__doc__ for k in owner.__mro__[1:] if attr in vars(k)):
                    continue
            names.append(f"{qualified}.{attr}")
    return names


def _errors(name, ignored):
    result = numpydoc_validate.validate(name)
    return [f"{code}: {message}" for code, message in result["errors"] if code not in ignored]


def test_public_api_is_found():
    # The collection must see the API, or every check below would pass vacuously.
    names = {name for name, _ in PUBLIC_OBJECTS}
    assert {"skboltz.RBM", "skboltz.learning.PCD", "skboltz.partition.Exact",
            "skboltz.partition.LogZ", "skboltz.plotting.plot_filters"} <= names
    assert "skboltz.RBM.score_samples" in _public_members()


@pytest.mark.parametrize("name", [name for name, _ in PUBLIC_OBJECTS])
def test_public_docstring(name):
    obj = dict(PUBLIC_OBJECTS)[name]
    # A typing.Protocol is never instantiated: its (*args, **kwargs) constructor has
    # nothing to document.
    protocol = getattr(obj, "_is_protocol", False)
    errors = _errors(name, IGNORED | ({"PR01"} if protocol else set()))
    assert not errors, f"{name}:\n" + "\n".join(errors)


@pytest.mark.parametrize("name", _public_members())
def test_member_docstring(name):
    errors = _errors(name, IGNORED_FOR_MEMBERS)
    assert not errors, f"{name}:\n" + "\n".join(errors)


def _lacks_examples(x):
    """Return x.

    Parameters
    ----------
    x : object
        Anything.

    Returns
    -------
    object
        The same object.
    """
    return x


def test_validator_catches_a_missing_example():
    # Guard against a set-up in which validation accepts anything.
    errors = _errors(f"{__name__}._lacks_examples", IGNORED)
    assert [error[:4] for error in errors] == ["EX01"]
    assert _errors(f"{__name__}._lacks_examples", IGNORED_FOR_MEMBERS) == []


# -- doctests --------------------------------------------------------------------------
ALL_MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(skboltz.__path__, prefix="skboltz.")
    if info.name != "skboltz.__main__"
) + ["skboltz"]


@pytest.mark.parametrize("module_name", ALL_MODULES)
def test_doctests(module_name):
    if module_name == "skboltz.plotting":
        matplotlib = pytest.importorskip("matplotlib")
        matplotlib.use("Agg")
    module = importlib.import_module(module_name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    state = np.random.get_state()
    try:
        for test in finder.find(module, module_name):
            runner.run(test)
    finally:
        np.random.set_state(state)
        if module_name == "skboltz.plotting":
            import matplotlib.pyplot as plt

            plt.close("all")
    results = runner.summarize(verbose=False)
    assert results.failed == 0, f"{results.failed} doctest(s) failed in {module_name}"


# -- doctests of the documentation pages -----------------------------------------------
DOCS = Path(__file__).resolve().parent.parent / "docs"
DOC_PAGES = sorted(
    str(path.relative_to(DOCS))
    for path in DOCS.rglob("*.rst")
    if not {"_build", "generated", "auto_examples"} & set(path.parts) and ">>> " in path.read_text()
)


def test_doc_pages_with_doctests_are_found():
    assert "user_guide/extending.rst" in DOC_PAGES


@pytest.mark.parametrize("page", DOC_PAGES)
def test_doc_page_doctests(page):
    # Every ">>>" line of the page runs, as a user would paste it, in one namespace.
    state = np.random.get_state()
    try:
        results = doctest.testfile(
            str(DOCS / page), module_relative=False, report=True, globs={},
            optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        )
    finally:
        np.random.set_state(state)
    assert results.attempted > 0
    assert results.failed == 0, f"{results.failed} doctest(s) failed in docs/{page}"


def _documented_default(text):
    """The value of a numpydoc type's ``default=...`` (None when it is not a literal)."""
    try:
        # literals: 1e-4, 2**16, "cd", (), and np.nan (an imputer's missing_values)
        return True, eval(text, {"__builtins__": {}, "np": np})
    except Exception:
        return False, None


@pytest.mark.parametrize(
    "name", [name for name, obj in PUBLIC_OBJECTS
             if inspect.isclass(obj) and not issubclass(obj, BaseException)]
)
def test_documented_defaults_are_the_signatures(name):
    # A default changed in __init__ but not in the Parameters section misleads users.
    from numpydoc.docscrape import ClassDoc

    cls = dict(PUBLIC_OBJECTS)[name]
    signature = inspect.signature(cls).parameters
    for parameter in ClassDoc(cls)["Parameters"]:
        documented = parameter.type.partition("default=")[2].strip()
        if not documented or parameter.name not in signature:
            continue
        literal, value = _documented_default(documented)
        actual = signature[parameter.name].default
        assert literal, f"{name}({parameter.name}): default={documented} is not a literal"
        both_nan = all(isinstance(v, float) and np.isnan(v) for v in (value, actual))
        assert value == actual or both_nan or (not value and not actual), (
            f"{name}({parameter.name}): documented default={documented}, "
            f"signature {actual!r}"
        )


def test_user_facing_text_cites_sources_a_user_can_look_up():
    """Issue 31: the partition guide spoke of "the seed's pairing", a text of the
    project's background that no user can look up; sources are cited by author and
    title (here Peterson and Anderson's deterministic Boltzmann machine)."""
    root = DOCS.parent
    texts = {path: path.read_text() for path in [*DOCS.rglob("*.rst"), *DOCS.rglob("*.py"),
                                                 *(root / "skboltz").rglob("*.py"),
                                                 root / "README.md"]
             if not {"_build", "generated", "auto_examples"} & set(path.parts)}
    possessive = re.compile(r"\bthe seeds?'s?(?=\W)", re.IGNORECASE)
    assert not [str(path) for path, text in texts.items() if possessive.search(text)]
    assert "Peterson and Anderson" in (DOCS / "user_guide" / "partition.rst").read_text()
