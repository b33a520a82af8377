"""Sphinx configuration for skvan."""

import os
import sys

sys.path.insert(0, os.path.abspath(".."))

import skvan  # noqa: E402

project = "skvan"
author = "the skvan developers"
copyright = "2026, the skvan developers"
release = skvan.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

templates_path = []
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip"]
html_theme = "alabaster"
html_static_path = []

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": "/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
}


def _skip_sklearn_plumbing(app, what, name, obj, skip, options):
    """Metadata-routing setters (``set_*_request``) and ``score`` come from
    scikit-learn with its own cross-references; scikit-learn documents them."""
    if (name.startswith("set_") and name.endswith("_request")) or name == "score":
        return True
    return skip


def setup(app):
    app.connect("autodoc-skip-member", _skip_sklearn_plumbing)
