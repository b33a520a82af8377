"""Linear policies on gymnasium's classic-control tasks, for the paper's Figure 4.

Not part of the public API: the code that ``examples/plot_policy_search.py``,
``benchmarks/bench_rl.py`` and ``tests/test_policy_search.py`` run. It needs
``gymnasium`` (an optional extra) only when a task is made.

Policies are linear in features of the observation scaled by the bounds the
environment declares (``s = (obs - centre) / half-width``; unbounded coordinates
as they are): a continuous action ``clip(W phi(s))`` or, for discrete two-action
tasks, ``1[w^T phi(s) > 0]``. :class:`LinearPolicy` has ``phi(s) = (s, 1)``;
:class:`QuadraticPolicy` adds the products ``s_i s_j`` (``i <= j``), the smallest
policy that can swing Pendulum-v1 up (:data:`POLICIES`).

Four ways to search the policy's parameters, each spending a budget of
environment steps and returning checkpoints ``(steps, parameters)``:

- :func:`van_search`: :class:`skvan.VANOptimizer` from returns (zero order,
  ``q`` over the parameters: exploration in parameter space);
- :func:`cma_search`: CMA-ES (``cma``) on the same returns;
- :func:`random_search`: basic random search, ARS V1 (Mania et al., 2018);
- :func:`reinforce`: REINFORCE with a mean-return baseline and Gaussian (or, for
  discrete actions, Bernoulli) action noise: exploration in action space.
"""

import warnings

import numpy as np

TASKS = ("Pendulum-v1", "MountainCarContinuous-v0", "CartPole-v1")


class LinearPolicy:
    """``a = clip(W s~ + b)`` (continuous) or ``1[w^T s~ + b > 0]`` (two actions),
    ``s~`` the observation scaled by the environment's declared bounds."""

    name = "linear"

    def __init__(self, env):
        space = env.observation_space
        low, high = np.asarray(space.low, float), np.asarray(space.high, float)
        # CartPole declares its velocities' bounds as float32's largest value.
        finite = (np.abs(low) < 1e6) & (np.abs(high) < 1e6)
        low, high = np.where(finite, low, -1.0), np.where(finite, high, 1.0)
        self.centre = np.where(finite, 0.5 * (low + high), 0.0)
        self.scale = np.where(finite, 0.5 * (high - low), 1.0)
        self.n_obs = low.shape[0]
        self.discrete = hasattr(env.action_space, "n")
        if self.discrete:
            self.n_act = 1
            self.low = self.high = None
        else:
            self.n_act = env.action_space.shape[0]
            self.low, self.high = env.action_space.low, env.action_space.high
        self.n_features = self._n_features(self.n_obs)
        self.n_params = self.n_act * self.n_features

    @staticmethod
    def _n_features(n_obs):
        return n_obs + 1

    def scaled(self, obs):
        """``s~``: the observation scaled by the declared bounds."""
        return (np.asarray(obs, float) - self.centre) / self.scale

    def features(self, obs):
        """``phi(s~) = (s~, 1)``."""
        return np.append(self.scaled(obs), 1.0)

    def mean_action(self, theta, obs):
        """The deterministic action (before noise): ``W phi(s~)``."""
        return theta.reshape(self.n_act, self.n_features) @ self.features(obs)

    def act(self, theta, obs):
        a = self.mean_action(theta, obs)
        if self.discrete:
            return int(a[0] > 0)
        return np.clip(a, self.low, self.high)


class QuadraticPolicy(LinearPolicy):
    """A policy linear in ``phi(s~) = (s~, s~_i s~_j for i <= j, 1)``: for ``k``
    observations ``k (k + 3) / 2 + 1`` parameters per action dimension.

    On Pendulum-v1 (observations ``cos t, sin t, t'``, torque at most 2, too weak
    to lift the pendulum at once) a linear policy cannot swing it up: pumping
    energy at the bottom needs torque with the velocity's sign, holding it at the
    top torque against it. The product ``cos t * t'`` gives a velocity gain that
    changes sign between the two, so the swing-up is in this family.
    """

    name = "quadratic"

    def __init__(self, env):
        super().__init__(env)
        self._pairs = np.triu_indices(self.n_obs)

    @staticmethod
    def _n_features(n_obs):
        return n_obs * (n_obs + 3) // 2 + 1

    def features(self, obs):
        """``(s~, s~_i s~_j for i <= j, 1)``."""
        s = self.scaled(obs)
        i, j = self._pairs
        return np.concatenate([s, s[i] * s[j], [1.0]])


#: The policy each task's benchmark searches: the linear one, except on
#: Pendulum-v1, where it cannot swing the pendulum up (every method then ends
#: near a return of -1000, and the comparison is between ways of failing).
POLICIES = {"Pendulum-v1": QuadraticPolicy}


def make(task, policy=None):
    """``(env, policy)`` for a gymnasium task id (needs ``gymnasium``); ``policy``
    is a policy class, by default the task's in :data:`POLICIES` (else
    :class:`LinearPolicy`)."""
    import gymnasium

    env = gymnasium.make(task)
    if policy is None:
        policy = POLICIES.get(task, LinearPolicy)
    return env, policy(env)


def rollout(env, policy, theta, seed, act=None):
    """One episode with parameters ``theta``: ``(return, steps)``. ``act(obs)``
    replaces the deterministic policy (used for action noise)."""
    obs, _ = env.reset(seed=int(seed))
    total, steps, done = 0.0, 0, False
    while not done:
        action = policy.act(theta, obs) if act is None else act(obs)
        obs, reward, terminated, truncated, _ = env.step(action)
        total += float(reward)
        steps += 1
        done = terminated or truncated
    return total, steps


def evaluate(env, policy, theta, n_episodes=10, seed=10_000):
    """Mean return of the deterministic policy over ``n_episodes`` fixed seeds
    (not counted in any budget)."""
    return float(np.mean([rollout(env, policy, theta, seed + k)[0] for k in range(n_episodes)]))


class _Budget:
    """Counts environment steps and records ``(steps, theta)`` each time a
    checkpoint is passed."""

    def __init__(self, budget, checkpoints):
        self.budget, self.steps = budget, 0
        self.pending = sorted(checkpoints)
        self.records = []

    def spend(self, steps, theta):
        self.steps += steps
        while self.pending and self.steps >= self.pending[0]:
            self.records.append((self.pending.pop(0), np.array(theta, copy=True)))

    @property
    def done(self):
        return self.steps >= self.budget

    def finish(self, theta):
        while self.pending:
            self.records.append((self.pending.pop(0), np.array(theta, copy=True)))
        return self.records


def van_search(env, policy, budget, checkpoints, seed, sigma0=1.0, options=None):
    """VAN from returns: ``q`` over the parameters, each draw one episode
    (``options``: :class:`~skvan.VANOptimizer`'s)."""
    from . import VANOptimizer

    rng = np.random.RandomState(seed)
    count = _Budget(budget, checkpoints)
    opt = VANOptimizer(np.zeros(policy.n_params), sigma0=sigma0, max_iter=10**6, tol=0.0,
                       random_state=seed, options=options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while not count.done and not opt.stop:
            values = []
            for theta in opt.ask():
                ret, steps = rollout(env, policy, theta, rng.randint(2**31))
                values.append(-ret)
                count.spend(steps, opt.mean)
            opt.tell(values)
    return count.finish(opt.mean)


def cma_search(env, policy, budget, checkpoints, seed, sigma0=1.0):
    """CMA-ES (``cma``) from returns, its own default population."""
    import cma

    rng = np.random.RandomState(seed)
    count = _Budget(budget, checkpoints)
    x0 = np.zeros(policy.n_params)
    if policy.n_params == 1:
        raise ValueError("cma needs at least 2 parameters.")
    es = cma.CMAEvolutionStrategy(x0, sigma0, {"seed": seed + 1, "verbose": -9})
    while not count.done and not es.stop():
        thetas = es.ask()
        values = []
        for theta in thetas:
            ret, steps = rollout(env, policy, np.asarray(theta), rng.randint(2**31))
            values.append(-ret)
            count.spend(steps, es.mean)
        es.tell(thetas, values)
    return count.finish(es.mean)


def random_search(env, policy, budget, checkpoints, seed, step=0.02, noise=0.03, directions=8):
    """Basic random search (ARS V1, Mania et al. 2018, their defaults):
    ``theta += step / (N sigma_R) sum_k (r_k+ - r_k-) delta_k`` over ``N``
    random directions, ``sigma_R`` the standard deviation of the ``2N`` returns."""
    rng = np.random.RandomState(seed)
    count = _Budget(budget, checkpoints)
    theta = np.zeros(policy.n_params)
    while not count.done:
        deltas = rng.standard_normal((directions, policy.n_params))
        returns = np.empty((directions, 2))
        for k, delta in enumerate(deltas):
            for j, sign in enumerate((1.0, -1.0)):
                returns[k, j], steps = rollout(env, policy, theta + sign * noise * delta,
                                               rng.randint(2**31))
                count.spend(steps, theta)
        spread = returns.std()
        if spread > 0:
            theta = theta + step / (directions * spread) * (returns[:, 0] - returns[:, 1]) @ deltas
    return count.finish(theta)


def reinforce(env, policy, budget, checkpoints, seed, action_sd=None, lr=0.05, episodes=10):
    """REINFORCE with a baseline (the batch's mean return) and action-space noise:
    Gaussian actions ``N(W s~ + b, action_sd^2)`` (``action_sd`` a quarter of the
    action range by default) or Bernoulli actions with ``P(1) = sigmoid(w^T s~ + b)``;
    Adam steps of ``lr`` on the policy gradient of ``episodes`` episodes."""
    rng = np.random.RandomState(seed)
    count = _Budget(budget, checkpoints)
    theta = np.zeros(policy.n_params)
    if not policy.discrete and action_sd is None:
        action_sd = 0.25 * float(np.mean(policy.high - policy.low))
    m1, m2, t = np.zeros_like(theta), np.zeros_like(theta), 0
    while not count.done:
        grads, returns = [], []
        for _ in range(episodes):
            score = np.zeros_like(theta)

            def act(obs, score=score):
                phi = policy.features(obs)
                a = policy.mean_action(theta, obs)
                if policy.discrete:
                    p = 1.0 / (1.0 + np.exp(-a[0]))
                    action = int(rng.uniform() < p)
                    score += (action - p) * phi
                    return action
                sample = a + action_sd * rng.standard_normal(a.shape)
                score += np.outer((sample - a) / action_sd**2, phi).ravel()
                return np.clip(sample, policy.low, policy.high)
            ret, steps = rollout(env, policy, theta, rng.randint(2**31), act=act)
            count.spend(steps, theta)
            grads.append(score)
            returns.append(ret)
        returns = np.array(returns)
        advantage = returns - returns.mean()
        spread = returns.std()
        g = (np.array(grads).T @ advantage) / (len(returns) * (spread if spread > 0 else 1.0))
        t += 1
        m1 = 0.9 * m1 + 0.1 * g
        m2 = 0.999 * m2 + 0.001 * g**2
        theta = theta + lr * (m1 / (1 - 0.9**t)) / (np.sqrt(m2 / (1 - 0.999**t)) + 1e-8)
    return count.finish(theta)


METHODS = {
    "VAN (parameter space)": van_search,
    "CMA-ES": cma_search,
    "random search (ARS V1)": random_search,
    "REINFORCE (action noise)": reinforce,
}
