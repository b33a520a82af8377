"""scikit-learn's estimator checks over every public estimator."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from skvan import VANLogisticRegression

ESTIMATORS = [
    VANLogisticRegression(),
    VANLogisticRegression(covariance="diag", max_iter=2000),
    VANLogisticRegression(objective="vi"),
    VANLogisticRegression(expectation="mc", random_state=0),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
