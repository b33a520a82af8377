"""
Active learning with the VAN posterior
======================================

:class:`~skvan.ActiveVANClassifier` keeps a Gaussian ``q`` over the logistic
regression weights. Starting from one labelled point per class, each round it
``query``-s the 5 pool points whose predictive distribution ``E_q[p(y|x)]`` has the
largest entropy (or the largest BALD score, the part of the uncertainty due to
not knowing the weights), and ``teach``-es itself their labels with one streaming
VAN step, without refitting. Against labelling random points, fewer labels reach
the same test accuracy. The log-loss panel is the paper's Figure 3 measure.
``benchmarks/bench_active.py`` runs the full comparison (10 seeds, two datasets,
a non-Bayesian peer).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skvan import ActiveVANClassifier

X, y = load_breast_cancer(return_X_y=True)
X = StandardScaler().fit_transform(X)
budget, step = 100, 5

curves = {"entropy": [], "bald": [], "random": []}
for seed in range(3):
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
    rng = np.random.RandomState(seed)
    start = np.array([rng.choice(np.flatnonzero(y_tr == c)) for c in (0, 1)])
    for strategy in curves:
        clf = ActiveVANClassifier(query_strategy=strategy, batch_size=step, random_state=seed)
        clf.teach(X_tr[start], y_tr[start], classes=[0, 1])
        pool = np.setdiff1d(np.arange(len(y_tr)), start)
        acc, loss = [], []
        while clf.n_labels_ < budget:
            idx, _ = clf.query(X_tr[pool])
            clf.teach(X_tr[pool[idx]], y_tr[pool[idx]])
            pool = np.delete(pool, idx)
            acc.append(clf.score(X_te, y_te))
            loss.append(log_loss(y_te, clf.predict_proba(X_te)))
        curves[strategy].append((acc, loss))

labels = 2 + step * np.arange(1, len(acc) + 1)
fig, axes = plt.subplots(1, 2, figsize=(10, 4))
for strategy, runs in curves.items():
    for ax, k in zip(axes, (0, 1)):
        ax.plot(labels, np.mean([r[k] for r in runs], axis=0), label=strategy)
axes[0].set_ylabel("test accuracy")
axes[1].set_ylabel("test log-loss")
axes[1].set_yscale("log")
for ax in axes:
    ax.set_xlabel("labels")
axes[0].legend()
fig.tight_layout()
plt.show()
