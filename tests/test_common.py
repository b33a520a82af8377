"""scikit-learn's estimator checks over every public estimator."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from skvan import (
    ActiveVANClassifier,
    VANElasticNet,
    VANElasticNetCV,
    VANLassoCV,
    VANLassoRegressor,
    VANLogisticRegression,
)

ESTIMATORS = [
    VANLogisticRegression(),
    VANLogisticRegression(covariance="diag", max_iter=1000, tol=1e-5),
    VANLogisticRegression(objective="vi"),
    VANLogisticRegression(expectation="mc", random_state=0),
    ActiveVANClassifier(random_state=0),
    ActiveVANClassifier(query_strategy="bald", refit=False, random_state=0),
    ActiveVANClassifier(query_strategy="entropy", refit=False, random_state=0),
    VANLassoRegressor(),
    VANLassoRegressor(alpha=0.1, covariance="diag"),
    VANLassoRegressor(objective="vi"),
    VANLassoRegressor(batch_size=4, random_state=0),
    VANLassoRegressor(alpha=0.1, positive=True),
    VANLassoCV(alphas=5, cv=3),
    VANElasticNet(alpha=0.1),
    VANElasticNet(alpha=0.1, objective="vi"),
    VANElasticNetCV(l1_ratio=[0.5, 1.0], alphas=4, cv=3),
]


def _on_dense_and_sparse_data(check, reason):
    return {f"{check}_on_{kind}_data": reason for kind in ("dense", "sparse")}


def _expected_failed_checks(estimator):
    """Checks expected to fail, each with its reason (``xfail_strict``: a check
    that passes here fails the suite, so the list stays true)."""
    if isinstance(estimator, ActiveVANClassifier):
        failing = _on_dense_and_sparse_data(
            "check_sample_weight_equivalence",
            "sVAN-Active chooses which rows to learn from, one batch at a time: "
            "repeating a row changes the pool and so the batches, not only the weights.",
        )
        if estimator.query_strategy == "entropy" and not estimator.refit:
            # (with refit=True the Laplace posterior of the chosen rows passes)
            failing["check_class_weight_classifiers"] = (
                "Entropy sampling with class weights 1000 and 1e-4 on three noisy "
                "unscaled blobs picks rows of the light classes, and the streamed "
                "model predicts class 0 for 70% of the test rows where the check "
                "wants 87% (BALD's rows: 100%; VANLogisticRegression on all rows: 100%)."
            )
        return failing
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda est: type(est).__name__)
def test_parameter_names_read_once_are_scikit_learns(estimator):
    """The names read once per class are those scikit-learn reads off the
    signature at each call, and a caller changing the list it got changes no
    later answer."""
    from sklearn.base import BaseEstimator

    cls = type(estimator)
    expected = BaseEstimator.__dict__["_get_param_names"].__func__(cls)
    names = cls._get_param_names()
    assert names == expected
    names.append("not a parameter")
    assert cls._get_param_names() == expected
    assert sorted(estimator.get_params(deep=False)) == expected
