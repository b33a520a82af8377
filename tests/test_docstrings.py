"""numpydoc validation of the public API (as celer and skglm do)."""

import inspect

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")

import skvan

# GL08: a method without a docstring inherited unchanged from scikit-learn;
# ES01: extended summary (optional); SA01/EX01 are required on classes only.
IGNORED = {"ES01", "GL08", "SA01", "EX01", "RT02"}


def _public_api():
    for name in skvan.__all__:
        obj = getattr(skvan, name)
        if not inspect.isclass(obj) and not inspect.isfunction(obj):
            continue
        yield f"skvan.{name}"
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if not attr.startswith("_") and inspect.isfunction(member):
                    yield f"skvan.{name}.{attr}"


@pytest.mark.parametrize("name", list(_public_api()))
def test_numpydoc(name):
    result = numpydoc_validate.validate(name)
    errors = [(code, msg) for code, msg in result["errors"] if code not in IGNORED]
    assert not errors, f"{name}: {errors}"


@pytest.mark.parametrize("name", [n for n in skvan.__all__ if n != "__version__"])
def test_public_names_have_see_also_references_and_examples(name):
    obj = getattr(skvan, name)
    doc = inspect.getdoc(obj)
    own = "Attributes" if inspect.isclass(obj) else "Returns"
    for section in ("Parameters", own, "See Also", "References", "Examples", "Notes"):
        assert section in doc, f"{name} docstring lacks {section}"
