"""skvan.optimize.VANOptimizer: the same solver as minimize, driven by the user's loop."""

import pickle
import warnings

import numpy as np
import pytest
from scipy.optimize import rosen, rosen_der, rosen_hess

from skvan import VANOptimizer, minimize

X0 = np.array([-1.2, 1.0, -1.2, 1.0])

CASES = {
    "values, ranks": (0, {}),
    "values, raw": (0, dict(fitness_shaping=False, beta_growth=1.1)),
    "gradients": (1, {}),
    "gradients, diagonal": (1, dict(covariance="diag")),
    "gradients, VAG": (1, dict(hessian="gauss_newton")),
    "hessians": (2, {}),
}


def _drive(opt, max_steps=None):
    steps = 0
    while not opt.stop and (max_steps is None or steps < max_steps):
        X = opt.ask()
        derivatives = [np.array([rosen_der(x) for x in X]),
                       np.array([rosen_hess(x) for x in X])][:opt.order]
        opt.tell(np.array([rosen(x) for x in X]), *derivatives)
        steps += 1
    return opt


@pytest.mark.parametrize("case", list(CASES))
def test_ask_tell_reproduces_minimize_bit_for_bit(case):
    order, kw = CASES[case]
    oracles = [{}, dict(jac=rosen_der), dict(jac=rosen_der, hess=rosen_hess)][order]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = minimize(rosen, X0, expectation="mc", max_iter=150, random_state=3, **oracles, **kw)
        opt = _drive(VANOptimizer(X0, order=order, max_iter=150, random_state=3, **kw))
    np.testing.assert_array_equal(opt.mean, ref.x)
    np.testing.assert_array_equal(opt.covariance, ref.covariance)
    res = opt.result()
    assert res.nit == ref.nit and res.status == ref.status
    # minimize evaluates f once more, at the final mean (f only: jac is a callable).
    assert (res.nfev, res.njev, res.nhev) == (ref.nfev - 1, ref.njev, ref.nhev)


def test_a_pickled_optimiser_resumes_identically():
    opt = _drive(VANOptimizer(X0, order=1, random_state=0), max_steps=20)
    clone = pickle.loads(pickle.dumps(opt))
    _drive(opt)
    _drive(clone)
    assert opt.status == clone.status == "converged"
    np.testing.assert_array_equal(opt.mean, clone.mean)
    np.testing.assert_array_equal(opt.precision, clone.precision)
    assert opt.n_iter == clone.n_iter and opt.nfev == clone.nfev


def test_the_protocol_is_checked():
    opt = VANOptimizer(np.zeros(2), order=1, random_state=0)
    with pytest.raises(RuntimeError, match="without ask"):
        opt.tell(np.zeros(6), np.zeros((6, 2)))
    X = opt.ask()
    with pytest.raises(RuntimeError, match="before tell"):
        opt.ask()
    with pytest.raises(ValueError, match="gradients of shape"):
        opt.tell(np.zeros(len(X)))
    with pytest.raises(ValueError, match=r"values must have shape \(6,\)"):
        opt.tell(np.zeros(5), np.zeros((6, 2)))
    with pytest.raises(ValueError, match="NaN or inf"):
        opt.tell(np.r_[np.nan, np.zeros(5)], np.zeros((6, 2)))
    opt.tell(np.sum(X**2, axis=1), 2 * X)  # still pending after the errors above
    assert opt.n_iter == 1 and opt.nfev == 6
    with pytest.raises(ValueError, match="order must be"):
        VANOptimizer(np.zeros(2), order=3)
    with pytest.raises(ValueError, match="fitness_shaping"):
        VANOptimizer(np.zeros(2), order=1, fitness_shaping=True)


def test_the_budget_ends_the_run_with_a_warning():
    opt = VANOptimizer(np.zeros(3), max_iter=4, random_state=0)
    with pytest.warns(Warning, match="max_iter=4"):
        while not opt.stop:
            X = opt.ask()
            opt.tell(np.sum((X - 1.0) ** 2, axis=1))
    assert opt.status == "max_iter" and opt.n_iter == 4 and opt.result().status == 1
    with pytest.raises(RuntimeError, match="has ended"):
        opt.ask()


def test_noisy_minibatch_values_still_converge():
    """A user's loop with its own noise (a minibatch estimate of a least-squares
    loss): the mean reaches the full-data solution within the noise."""
    rng = np.random.RandomState(0)
    A = rng.standard_normal((2000, 3))
    b = A @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.standard_normal(2000)
    opt = VANOptimizer(np.zeros(3), order=1, random_state=0, max_iter=300)
    while not opt.stop:
        X = opt.ask()
        rows = rng.choice(2000, 200, replace=False)
        R = X @ A[rows].T - b[rows]  # (points, rows)
        opt.tell(0.5 * np.mean(R**2, axis=1), R @ A[rows] / len(rows))
    np.testing.assert_allclose(opt.mean, np.linalg.lstsq(A, b, rcond=None)[0], atol=0.05)
