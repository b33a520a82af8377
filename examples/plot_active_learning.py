"""
Active learning with the VAN posterior
======================================

:class:`~skvan.ActiveVANClassifier` keeps a Gaussian ``q`` over the weights of a
logistic regression. Starting from 20 random labels of digits' 10 classes,
each round it ``query``-s 10 pool points and ``teach``-es itself their labels.
By default it queries the points whose two likeliest classes are closest under
``q`` (margin sampling), choosing each batch jointly: every pick is scored under
``q`` conditioned on the picks before it, so that a batch does not spend its
labels on near-duplicates; and it refits on all its labels after every
``teach`` (their Laplace posterior). The reference is what a user would do
without it: label random points and refit scikit-learn's
``LogisticRegression``. The paper's sVAN-Active (entropy, one streaming step
per batch, ``refit=False``) is shown too. ``python benchmarks/bench_active.py
--curves`` runs the full comparison (seven data sets, four budgets, five seeds).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skvan import ActiveVANClassifier

X, y = load_digits(return_X_y=True)
X = StandardScaler().fit_transform(X)
start, step, budget = 20, 10, 200


class RandomLabels:
    """Random labels and a LogisticRegression refit on all of them."""

    def __init__(self, seed):
        self.rng, self.rows = np.random.RandomState(seed), []

    def teach(self, X_new, y_new, classes=None):
        self.X = X_new if not self.rows else np.vstack([self.X, X_new])
        self.y = y_new if not self.rows else np.r_[self.y, y_new]
        self.rows.append(len(y_new))
        self.model = LogisticRegression(max_iter=1000).fit(self.X, self.y)
        return self

    def query(self, X_pool):
        return self.rng.permutation(len(X_pool))[:step], None

    def score(self, X_test, y_test):
        return self.model.score(X_test, y_test)


learners = {
    "ActiveVANClassifier()": lambda seed: ActiveVANClassifier(batch_size=step,
                                                              random_state=seed),
    "sVAN-Active (entropy, refit=False)": lambda seed: ActiveVANClassifier(
        query_strategy="entropy", refit=False, batch_size=step, random_state=seed),
    "random labels + LogisticRegression": RandomLabels,
}
curves = {name: [] for name in learners}
for seed in range(3):
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
    rng = np.random.RandomState(seed)
    first = [rng.choice(np.flatnonzero(y_tr == c)) for c in range(10)]
    rest = rng.choice(np.setdiff1d(np.arange(len(y_tr)), first), start - 10, replace=False)
    taught = np.r_[first, rest]
    for name, make in learners.items():
        learner = make(seed).teach(X_tr[taught], y_tr[taught], classes=np.arange(10))
        pool = np.setdiff1d(np.arange(len(y_tr)), taught)
        acc = [learner.score(X_te, y_te)]
        for _ in range((budget - start) // step):
            idx, _ = learner.query(X_tr[pool])
            learner.teach(X_tr[pool[idx]], y_tr[pool[idx]])
            pool = np.delete(pool, idx)
            acc.append(learner.score(X_te, y_te))
        curves[name].append(acc)

labels = start + step * np.arange(len(acc))
fig, ax = plt.subplots(figsize=(6, 4))
for name, runs in curves.items():
    ax.plot(labels, np.mean(runs, axis=0), label=name)
    print(f"{name:36s} accuracy at {labels[-1]} labels: {np.mean(runs, axis=0)[-1]:.3f}")
ax.set_xlabel("labels")
ax.set_ylabel("test accuracy (digits, mean of 3 splits)")
ax.legend()
fig.tight_layout()
plt.show()
