"""Sphinx configuration of the skboltz documentation.

Build (from the repository root; warnings are errors):

    python -m sphinx -W -b html docs docs/_build/html

The build is offline: no intersphinx, no remote images or fonts at build time. With
sphinx-mathjax-offline installed, the pages render their formulas offline too.
"""

import importlib
import os
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
nitpicky = False

# -- API reference -----------------------------------------------------------------------
autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": True}
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
html_static_path = []
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
    that only exist in scikit-learn's docs.
    """
    function = getattr(obj, "fget", obj)  # properties: look at the getter
    module = getattr(function, "__module__", None) or ""
    if what == "class" and module and not module.startswith("skboltz"):
        return True
    return skip


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign_members)
