"""Collection settings for the doctests of ``skvan/`` (``pytest tests skvan``):
modules whose examples need an optional extra are skipped without it."""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("skactiveml") is None:
    collect_ignore.append("skvan/active/_skactiveml.py")
