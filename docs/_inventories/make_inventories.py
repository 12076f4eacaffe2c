"""Write the intersphinx inventories of scikit-learn, NumPy and SciPy used by the docs.

The docs build offline, so intersphinx cannot download these projects' ``objects.inv``.
This script writes equivalent inventories from the *installed* packages: every public
name (a module's ``__all__``, and the public members of its classes) is mapped to its
page by the URL scheme each project's documentation uses. Run it from the repository
root after upgrading the packages the docs link to, and commit the result::

    python docs/_inventories/make_inventories.py

A name missing from an inventory makes the docs build fail (``conf.py`` turns an
unresolved reference into sklearn, numpy or scipy into a warning, and the build runs
with ``-W``); a wrong page for a listed name is what the URL schemes below must avoid,
so keep them to the patterns the projects document.
"""

import importlib
import inspect
import pkgutil
import sys
import warnings
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Inventory file stem -> project name. The pages written below are relative to the base
# URLs of conf.py's intersphinx_mapping (the projects' "stable" documentation).
PROJECTS = {"sklearn": "scikit-learn", "numpy": "NumPy", "scipy": "SciPy"}

# SciPy documents these modules in its API reference (pages reference/<name>.html).
SCIPY_MODULES = [
    "cluster", "cluster.hierarchy", "cluster.vq", "constants", "datasets", "fft",
    "integrate", "interpolate", "io", "linalg", "ndimage", "odr", "optimize", "signal",
    "signal.windows", "sparse", "sparse.csgraph", "sparse.linalg", "spatial",
    "spatial.distance", "spatial.transform", "special", "stats", "stats.contingency",
    "stats.qmc",
]


# -- inspection --------------------------------------------------------------------------
def _public(names):
    return sorted(name for name in names if not name.startswith("_"))


def _object_role(obj):
    """The Python-domain role intersphinx files an object under."""
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if inspect.ismodule(obj):
        return "module"
    if type(obj).__module__.startswith("scipy.stats"):  # distributions: callable objects
        return "data"
    return "function" if callable(obj) else "data"


def _member_role(cls, name):
    """Role of a class member, looked up without calling descriptors."""
    try:
        member = inspect.getattr_static(cls, name)
    except AttributeError:
        return None
    if isinstance(member, property) or type(member).__name__ in (
            "getset_descriptor", "member_descriptor", "cached_property"):
        return "property"
    if isinstance(member, (classmethod, staticmethod)) or callable(member):
        return "method"
    try:  # other descriptors that give a function, such as scikit-learn's available_if
        return "method" if inspect.isroutine(getattr(cls, name)) else "attribute"
    except AttributeError:
        return "attribute"


def _all_names(module):
    """(name, object) of a module's public names, not modules.

    The names in ``__all__``; without one, the public names defined in the module.
    """
    if hasattr(module, "__all__"):
        names = _public(module.__all__)
    else:
        names = [name for name in _public(vars(module))
                 if getattr(getattr(module, name), "__module__", None) == module.__name__]
    for name in names:
        try:
            obj = getattr(module, name)
        except AttributeError:
            continue
        if not inspect.ismodule(obj):
            yield name, obj


def _page_stems(module):
    """{name: (object, page stem)} for a module's names, as both projects' docs name pages.

    A page is named after the full name, except a function named like a class of its
    module (``dbscan`` and ``DBSCAN``), whose page is ``dbscan-function``, so the two files
    can coexist on case-insensitive file systems.
    """
    names = dict(_all_names(module))
    classes = {name.lower() for name, obj in names.items() if inspect.isclass(obj)}
    return {
        name: (obj, f"{name}-function"
               if _object_role(obj) == "function" and name.lower() in classes
               else f"{module.__name__}.{name}")
        for name, obj in names.items()
    }


def _members(cls):
    """(name, role) of the public members of a class documented with its page."""
    if issubclass(cls, BaseException):  # exceptions are documented without members
        return
    for name in _public(dir(cls)):
        role = _member_role(cls, name)
        if role is not None:
            yield name, role


def _import(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return importlib.import_module(name)
        except Exception:  # an optional dependency of a submodule is missing
            return None


# -- scikit-learn: modules/generated/<name>.html, members on the class page --------------
def sklearn_entries():
    import sklearn

    # The subpackages in __all__ (it also lists a few functions), and two it omits.
    for top in [*sklearn.__all__, "base", "utils"]:
        package = _import(f"sklearn.{top}")
        if package is None:
            continue
        modules = [package]
        if hasattr(package, "__path__"):
            for info in pkgutil.iter_modules(package.__path__):
                if not info.name.startswith("_") and info.name != "tests":
                    sub = _import(f"sklearn.{top}.{info.name}")
                    if sub is not None:
                        modules.append(sub)
        for module in modules:
            yield module.__name__, "module", f"api/sklearn.{top}.html#module-{module.__name__}"
            for name, (obj, stem) in _page_stems(module).items():
                full = f"{module.__name__}.{name}"
                page = f"modules/generated/{stem}.html"
                yield full, _object_role(obj), f"{page}#{full}"
                if inspect.isclass(obj):
                    for member, role in _members(obj):
                        yield f"{full}.{member}", role, f"{page}#{full}.{member}"
    for name, obj in _all_names(sklearn):
        full = f"sklearn.{name}"
        yield full, _object_role(obj), f"modules/generated/{full}.html#{full}"


# -- NumPy: reference/generated/<name>.html, with numpy.random on its own pages ----------
def numpy_entries():
    import numpy as np

    yield "numpy", "module", "reference/index.html#module-numpy"
    for name, obj in _all_names(np):
        full = f"numpy.{name}"
        if inspect.isclass(obj) and issubclass(obj, np.generic):
            yield full, "class", f"reference/arrays.scalars.html#{full}"
        elif not inspect.isclass(obj) and not callable(obj):
            yield full, "data", f"reference/constants.html#{full}"
        else:
            yield full, _object_role(obj), f"reference/generated/{full}.html#{full}"
    for member, role in _members(np.ndarray):
        full = f"numpy.ndarray.{member}"
        yield full, role, f"reference/generated/{full}.html#{full}"

    yield "numpy.linalg", "module", "reference/routines.linalg.html#module-numpy.linalg"
    for name, obj in _all_names(np.linalg):
        full = f"numpy.linalg.{name}"
        yield full, _object_role(obj), f"reference/generated/{full}.html#{full}"

    random = "reference/random/"
    yield "numpy.random", "module", f"{random}index.html#module-numpy.random"
    pages = {  # the classes and constructors documented on overview pages
        "Generator": "generator.html", "default_rng": "generator.html",
        "RandomState": "legacy.html",
        "SeedSequence": "bit_generators/generated/numpy.random.SeedSequence.html",
        "BitGenerator": "bit_generators/generated/numpy.random.BitGenerator.html",
        "MT19937": "bit_generators/mt19937.html", "PCG64": "bit_generators/pcg64.html",
        "PCG64DXSM": "bit_generators/pcg64dxsm.html", "Philox": "bit_generators/philox.html",
        "SFC64": "bit_generators/sfc64.html",
    }
    for name, obj in _all_names(np.random):
        full = f"numpy.random.{name}"
        page = pages.get(name, f"generated/{full}.html")
        yield full, _object_role(obj), f"{random}{page}#{full}"
    for cls in ("Generator", "RandomState"):
        for member, role in _members(getattr(np.random, cls)):
            full = f"numpy.random.{cls}.{member}"
            yield full, role, f"{random}generated/{full}.html#{full}"

    yield "numpy.typing", "module", "reference/typing.html#module-numpy.typing"
    for name in ("ArrayLike", "DTypeLike", "NDArray"):
        yield f"numpy.typing.{name}", "data", f"reference/typing.html#numpy.typing.{name}"


# -- SciPy: reference/generated/<name>.html, one page per class member too ---------------
def scipy_entries():
    for short in SCIPY_MODULES:
        module = _import(f"scipy.{short}")
        if module is None:
            continue
        yield module.__name__, "module", f"reference/{short}.html#module-{module.__name__}"
        for name, (obj, stem) in _page_stems(module).items():
            full = f"{module.__name__}.{name}"
            role = _object_role(obj)
            if short == "constants" and role == "data":  # listed on the module's page
                yield full, role, f"reference/constants.html#{full}"
                continue
            yield full, role, f"reference/generated/{stem}.html#{full}"
            if inspect.isclass(obj):
                for member, role in _members(obj):
                    member_full = f"{full}.{member}"
                    yield (member_full, role,
                           f"reference/generated/{member_full}.html#{member_full}")


# -- writing -----------------------------------------------------------------------------
def write_inventory(path, project, version, entries):
    """Write a version-2 Sphinx inventory (the format of ``objects.inv``)."""
    seen = {}
    for name, role, uri in entries:
        seen.setdefault((name, role), uri)  # first page wins for re-exported names
    lines = [f"{name} py:{role} 1 {uri} -" for (name, role), uri in sorted(seen.items())]
    header = (
        "# Sphinx inventory version 2\n"
        f"# Project: {project}\n"
        f"# Version: {version}\n"
        "# The remainder of this file is compressed using zlib.\n"
    )
    body = zlib.compress(("\n".join(lines) + "\n").encode("utf-8"), 9)
    path.write_bytes(header.encode("utf-8") + body)
    return len(lines)


def main(out_dir=HERE):
    for key, entries in (("sklearn", sklearn_entries), ("numpy", numpy_entries),
                         ("scipy", scipy_entries)):
        project = PROJECTS[key]
        version = importlib.import_module(key).__version__
        count = write_inventory(Path(out_dir) / f"{key}.inv", project, version, entries())
        print(f"{key}.inv: {project} {version}, {count} names")


if __name__ == "__main__":
    main(*sys.argv[1:])
