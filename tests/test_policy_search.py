"""The policy-search code of the paper's Figure 4 (skvan._policy): runs on a tiny
budget when gymnasium is installed, skipped cleanly when it is not."""

import importlib.util
from types import SimpleNamespace

import numpy as np
import pytest

from skvan._policy import METHODS, LinearPolicy, QuadraticPolicy, evaluate

needs_gymnasium = pytest.mark.skipif(importlib.util.find_spec("gymnasium") is None,
                                     reason="gymnasium is not installed")


def _pendulum_like():
    """What the policies read of Pendulum-v1: its declared bounds."""
    def box(low, high):
        return SimpleNamespace(low=np.array(low), high=np.array(high), shape=(len(low),))

    return SimpleNamespace(observation_space=box([-1.0, -1.0, -8.0], [1.0, 1.0, 8.0]),
                           action_space=box([-2.0], [2.0]))


def test_the_quadratic_policy_adds_the_products_of_the_scaled_observation():
    env = _pendulum_like()
    linear, quadratic = LinearPolicy(env), QuadraticPolicy(env)
    assert (linear.n_params, quadratic.n_params) == (4, 10)
    obs = np.array([1.0, 0.0, 4.0])  # scaled: (1, 0, 0.5)
    np.testing.assert_array_equal(linear.features(obs), [1.0, 0.0, 0.5, 1.0])
    # (s, s_i s_j for i <= j in the order 00 01 02 11 12 22, 1)
    np.testing.assert_array_equal(quadratic.features(obs),
                                  [1.0, 0.0, 0.5, 1.0, 0.0, 0.5, 0.0, 0.0, 0.25, 1.0])
    theta = np.arange(10.0)
    assert quadratic.act(theta, obs) == np.clip(theta @ quadratic.features(obs), -2, 2)


@needs_gymnasium
def test_the_quadratic_family_holds_a_pendulum_swing_up():
    """QuadraticPolicy's claim: torque against the sine (hold the top) plus a
    velocity gain through ``cos t * t'`` that pumps energy at the bottom and
    damps at the top swings Pendulum-v1 up (a return near the task's best,
    about -150), where linear policies stay near -1000."""
    from skvan._policy import make

    env, policy = make("Pendulum-v1")
    assert isinstance(policy, QuadraticPolicy)
    theta = np.zeros(policy.n_params)
    # features (c, s, w, cc, cs, cw, ss, sw, ww, 1) with c = cos t, s = sin t
    theta[1], theta[2], theta[5] = -5.0, 2.0, -20.0
    assert evaluate(env, policy, theta, n_episodes=5) > -300.0


@needs_gymnasium
@pytest.mark.parametrize("method", [m for m in METHODS if m != "CMA-ES"])
@pytest.mark.parametrize("task", ["MountainCarContinuous-v0", "CartPole-v1", "Pendulum-v1"])
def test_each_search_spends_its_budget_and_reports_checkpoints(task, method):
    from skvan._policy import make

    env, policy = make(task)
    records = METHODS[method](env, policy, 3000, [1000, 3000], seed=0)
    assert [steps for steps, _ in records] == [1000, 3000]
    for _, theta in records:
        assert theta.shape == (policy.n_params,) and np.all(np.isfinite(theta))
    assert np.isfinite(evaluate(env, policy, records[-1][1], n_episodes=2))


@needs_gymnasium
def test_van_explores_a_plateau_instead_of_stalling():
    """MountainCarContinuous pays nothing until the car reaches the flag, and
    costs for pushing: at first every draw returns about the same. VAN (with
    CMA-ES's flat-fitness rule in its step-size path) still reaches the flag
    within 20,000 steps from seed 0."""
    from skvan._policy import make, van_search

    env, policy = make("MountainCarContinuous-v0")
    (_, theta), = van_search(env, policy, 20_000, [20_000], seed=0)
    assert evaluate(env, policy, theta, n_episodes=3) > 50.0


def test_the_flat_fitness_rule_widens_q():
    from skvan.expectations import CumulativeScale

    csa = CumulativeScale(3, beta=1.0)
    Z = np.random.RandomState(0).standard_normal((3, 3))
    shift = csa.update(np.vstack([Z, -Z]), np.zeros(6))  # every draw tied
    assert shift < 0  # the precision falls: q widens
