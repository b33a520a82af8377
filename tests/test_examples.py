"""Every gallery example runs to the end (the docs build re-runs only the
examples that changed, so a broken one could otherwise go unnoticed: the sinc
example's callback was, for a whole session)."""

import importlib.util
import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("plot_*.py"))
#: Optional packages an example needs beyond the test extra's.
NEEDS = {"plot_policy_search.py": "gymnasium"}


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, monkeypatch):
    """Each example runs as ``python examples/plot_x.py`` would run it, in this
    process (a process per example spent about 3 s importing the libraries),
    its figures drawn off screen and closed."""
    pytest.importorskip("matplotlib")
    needed = NEEDS.get(path.name)
    if needed is not None and importlib.util.find_spec(needed) is None:
        pytest.skip(f"{path.name} needs {needed}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.setattr(plt, "show", lambda *args, **kwargs: None)
    monkeypatch.chdir(path.parent)
    monkeypatch.setattr(sys, "argv", [str(path)])
    try:
        runpy.run_path(str(path), run_name="__main__")
    finally:
        plt.close("all")
