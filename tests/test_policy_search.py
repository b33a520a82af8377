"""The policy-search code of the paper's Figure 4 (skvan._policy): runs on a tiny
budget when gymnasium is installed, skipped cleanly when it is not."""

import numpy as np
import pytest

from skvan._policy import METHODS, evaluate

gymnasium = pytest.importorskip("gymnasium")


@pytest.mark.parametrize("method", [m for m in METHODS if m != "CMA-ES"])
@pytest.mark.parametrize("task", ["MountainCarContinuous-v0", "CartPole-v1"])
def test_each_search_spends_its_budget_and_reports_checkpoints(task, method):
    from skvan._policy import make

    env, policy = make(task)
    records = METHODS[method](env, policy, 3000, [1000, 3000], seed=0)
    assert [steps for steps, _ in records] == [1000, 3000]
    for _, theta in records:
        assert theta.shape == (policy.n_params,) and np.all(np.isfinite(theta))
    assert np.isfinite(evaluate(env, policy, records[-1][1], n_episodes=2))


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
