"""Every gallery example runs to the end (the docs build re-runs only the
examples that changed, so a broken one could otherwise go unnoticed: the sinc
example's callback was, for a whole session)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("plot_*.py"))
#: Optional packages an example needs beyond the test extra's.
NEEDS = {"plot_policy_search.py": "gymnasium"}

RUN = """
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.show = lambda *args, **kwargs: None
import runpy, sys
runpy.run_path(sys.argv[1], run_name="__main__")
"""


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path):
    pytest.importorskip("matplotlib")
    needed = NEEDS.get(path.name)
    if needed is not None and importlib.util.find_spec(needed) is None:
        pytest.skip(f"{path.name} needs {needed}")
    done = subprocess.run([sys.executable, "-c", RUN, str(path)], capture_output=True, text=True,
                          timeout=600, cwd=path.parent)
    assert done.returncode == 0, done.stderr[-3000:]
