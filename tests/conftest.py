import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.preprocessing import StandardScaler


@pytest.fixture(scope="session")
def breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="session")
def digits_binary():
    """Digits 0-4 against 5-9, standardised (constant pixels stay zero)."""
    X, y = load_digits(return_X_y=True)
    return StandardScaler().fit_transform(X), (y >= 5).astype(int)


@pytest.fixture
def rng():
    return np.random.RandomState(0)
