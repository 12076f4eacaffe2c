"""Sphinx configuration of the skboltz documentation.

Build (from the repository root; warnings are errors):

    python -m sphinx -W -b html docs docs/_build/html

The build is offline: no downloads at build time (intersphinx reads inventories kept in
docs/_inventories/, see below), no remote images or fonts. With sphinx-mathjax-offline
installed, the pages render their formulas offline too.
"""

import importlib
import inspect
import os
import re
import sys
from pathlib import Path

# Examples and doctests share the machine with other work: one BLAS thread is faster for
# these small models (see DESIGN.md sec 5) and keeps timings stable. Set before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # document this checkout even without an install

import skboltz  # noqa: E402

project = "skboltz"
author = "the skboltz developers"
copyright = "the skboltz developers"
version = release = skboltz.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

# Formulas: MathJax renders them in the reader's browser, by default from a CDN, so
# pages read without a network show raw LaTeX. The sphinx-mathjax-offline package ships
# MathJax 3 and copies it into _static/ (it should be in the docs extra); without it
# the build still works and the pages use the CDN.
try:
    importlib.import_module("sphinx-mathjax-offline")
except ImportError:
    pass
else:
    extensions.append("sphinx-mathjax-offline")

templates_path = ["_templates"]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip"]
default_role = "py:obj"

# -- links to scikit-learn, NumPy and SciPy -----------------------------------------------
# intersphinx normally downloads each project's objects.inv at build time; these builds
# must work offline, and no package on PyPI ships those files. So the inventories are
# written from the installed packages by docs/_inventories/make_inventories.py (every
# public name, mapped to its page by the URL scheme each project's docs use; checked
# against real objects.inv files of earlier releases) and committed; intersphinx reads
# them as local files (the second element of each entry). Rerun that script after
# upgrading scikit-learn, NumPy or SciPy. The build is nitpicky: a reference that
# resolves nowhere (a misspelt or vanished name, here or in those projects) is a
# warning, so with -W it fails the build instead of rendering silently as plain text.
intersphinx_mapping = {
    "sklearn": ("https://scikit-learn.org/stable/", "_inventories/sklearn.inv"),
    "numpy": ("https://numpy.org/doc/stable/", "_inventories/numpy.inv"),
    "scipy": ("https://docs.scipy.org/doc/scipy/", "_inventories/scipy.inv"),
}
nitpicky = True
nitpick_ignore = [
    ("py:obj", "n_features_in_"),  # scikit-learn's shape notation, (`n_features_in_`,)
]

# -- API reference -----------------------------------------------------------------------
autosummary_generate = True
autodoc_default_options = {}  # the templates in _templates/ say what to include
autodoc_typehints = "none"
numpydoc_show_class_members = False  # autosummary templates list the members
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# -- gallery -----------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "FileNameSortKey",
    "doc_module": ("skboltz",),
    "backreferences_dir": "generated/backreferences",
    "reference_url": {"skboltz": None},  # local links only: no fetching at build time
    "remove_config_comments": True,
    "capture_repr": (),  # no "<Figure size ...>" under cells that end with a plot call
    "plot_gallery": "True",
    "abort_on_example_error": False,  # report every broken example; -W then fails the build
    "only_warn_on_example_error": False,
    "matplotlib_animations": False,
    "min_reported_time": 1,
    "show_memory": False,
    "thumbnail_size": (400, 280),
}

# -- HTML --------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"skboltz {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]  # a wider content column; code blocks scroll
html_show_sourcelink = False
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "secondary_sidebar_items": ["page-toc"],
}
html_context = {"default_mode": "light"}


def _skip_foreign_members(app, what, name, obj, skip, options):
    """Document skboltz's own members only.

    Methods inherited from scikit-learn (``get_params``, ``set_output``, metadata
    routing, ...) are documented by scikit-learn, and their docstrings point to labels
    that only exist in scikit-learn's docs; the "Methods" table of each class page
    links them to scikit-learn's pages instead (see _add_methods_table).
    """
    function = getattr(obj, "fget", obj)  # properties: look at the getter
    module = getattr(function, "__module__", None) or ""
    if what == "class" and module and not module.startswith("skboltz"):
        return True
    return skip


def _sklearn_methods():
    """The method names in the scikit-learn inventory (docs/_inventories/sklearn.inv)."""
    from sphinx.util.inventory import InventoryFile

    with open(Path(__file__).parent / "_inventories" / "sklearn.inv", "rb") as stream:
        inventory = InventoryFile.load(stream, "", lambda base, uri: uri)
    inventory = getattr(inventory, "data", inventory)  # Sphinx >= 8.2 wraps the dict
    return set(inventory.get("py:method", {}))


_ROLE = re.compile(r":[\w:+-]+:`(?:([^`<]*?)\s*<[^>]*>|~?([^`]*))`")


def _summary(function):
    """First sentence of a docstring, with roles reduced to their text.

    Plain text, so a summary of scikit-learn's that refers to labels of its own docs
    (``:ref:`accuracy <accuracy_score>```) cannot break this build.
    """
    paragraph = (inspect.getdoc(function) or "").split("\n\n")[0].replace("\n", " ")
    sentence = re.split(r"(?<=\.)\s", paragraph, maxsplit=1)[0]
    return _ROLE.sub(lambda m: m.group(1) or m.group(2).rsplit(".", 1)[-1], sentence)


def _methods_rows(cls, documented_name, sklearn_methods):
    """(reference, summary) for every public method of ``cls``, inherited ones included.

    skboltz's own methods link to their entry on the class page; methods from
    scikit-learn link to the first public scikit-learn class in the MRO that documents
    them (``sklearn.base.TransformerMixin.set_output``, ...); the metadata-routing
    setters scikit-learn generates per class (``set_score_request``) are listed without
    a link. Methods of ``object`` or ``tuple`` are left out.
    """
    rows = []
    for name in sorted(dir(cls)):
        function = getattr(cls, name, None)
        if name.startswith("_") or not inspect.isroutine(function):
            continue
        owner = next((k for k in cls.__mro__ if name in vars(k)), None)
        own = owner is not None and owner.__module__.startswith("skboltz")
        if own and (getattr(function, "__module__", None) or "").startswith("skboltz"):
            rows.append((f":meth:`~{documented_name}.{name}`", _summary(function)))
            continue
        target = next((t for t in (f"{k.__module__}.{k.__qualname__}.{name}"
                                   for k in cls.__mro__) if t in sklearn_methods), None)
        if target is not None:
            rows.append((f":meth:`~{target}`", _summary(function)))
        elif own:  # generated by scikit-learn for this class
            rows.append((f"``{name}``", _summary(function)))
    return rows


def _add_methods_table(app, what, name, obj, options, lines):
    """End each class docstring with a "Methods" table that includes inherited methods."""
    if what != "class" or not inspect.isclass(obj):
        return
    if not hasattr(app, "_sklearn_methods"):
        app._sklearn_methods = _sklearn_methods()
    rows = _methods_rows(obj, name, app._sklearn_methods)
    if rows:
        lines += ["", ".. rubric:: Methods", "", ".. list-table::",
                  "   :class: autosummary longtable", "   :widths: 30 70", ""]
        for reference, summary in rows:
            lines += [f"   * - {reference}", f"     - {summary}"]
        lines.append("")


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign_members)
    # After numpydoc (priority 500) has turned the docstring into reST.
    app.connect("autodoc-process-docstring", _add_methods_table, priority=900)
