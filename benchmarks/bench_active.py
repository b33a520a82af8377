"""Active learning with VAN: learning curves, labels to target, query cost.

For each dataset and seed: a random 70/30 split, one labelled point per class,
then rounds of `query` (5 points) and `teach` until the budget. Strategies:
ActiveVANClassifier with entropy, BALD, random, and entropy with a diversity
bonus; the non-Bayesian peer is scikit-learn's LogisticRegression refitted on
the labelled set each round with entropy sampling. All use C=1.

Reports: the labels needed to reach 97% of the full-data test accuracy (a VAN
fit on the whole training split), median over seeds; the mean curves of test
accuracy and log-loss (saved as benchmarks/results/active_<dataset>.png); the
time to score a 100,000 x 100 pool; and the time of teach(10 points) against a refit.

The log-loss curve of "VAN entropy" against "VAN random" is the paper's Figure 3
measure: test log-loss against examples processed, sVAN-Active against random
minibatches.

Run: python benchmarks/bench_active.py [--seeds 10]
     python benchmarks/bench_active.py --loop --seeds 3   (digits, 20 -> 200 labels)
"""

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skvan import ActiveVANClassifier, VANLogisticRegression
from skvan.active import bald_sampling, entropy_sampling

STEP = 5


def datasets():
    X, y = load_digits(return_X_y=True)
    yield "digits", StandardScaler().fit_transform(X), (y >= 5).astype(int), 300
    X, y = load_breast_cancer(return_X_y=True)
    yield "breast_cancer", StandardScaler().fit_transform(X), y, 150


def van_learner(strategy, diversity=0.0):
    def make(seed):
        if diversity:
            def strategy_fn(est, X_pool, n_instances=1, random_state=None):
                return entropy_sampling(est, X_pool, n_instances, random_state, diversity=diversity)
            return ActiveVANClassifier(query_strategy=strategy_fn, batch_size=STEP, random_state=seed)
        return ActiveVANClassifier(query_strategy=strategy, batch_size=STEP, random_state=seed)
    return make


class RefitLogistic:
    """scikit-learn's LogisticRegression refitted on all labels seen, with entropy sampling."""

    def __init__(self, seed):
        self.seed = seed
        self.X, self.y = None, None

    def teach(self, X, y, classes=None):
        self.X = X if self.X is None else np.vstack([self.X, X])
        self.y = y if self.y is None else np.r_[self.y, y]
        self.model = LogisticRegression(C=1.0, max_iter=1000).fit(self.X, self.y)
        return self

    def query(self, X_pool, n_instances):
        return entropy_sampling(self.model, X_pool, n_instances, self.seed)

    def predict_proba(self, X):
        return self.model.predict_proba(X)

    def score(self, X, y):
        return self.model.score(X, y)


METHODS = {
    "VAN entropy": van_learner("entropy"),
    "VAN BALD": van_learner("bald"),
    "VAN random": van_learner("random"),
    "VAN entropy+diversity": van_learner("entropy", diversity=1.0),
    "LogisticRegression entropy": RefitLogistic,
}


def learning_curve(make, X_tr, y_tr, X_te, y_te, budget, seed):
    rng = np.random.RandomState(seed)
    start = np.array([rng.choice(np.flatnonzero(y_tr == c)) for c in (0, 1)])
    learner = make(seed).teach(X_tr[start], y_tr[start], classes=[0, 1])
    pool = np.setdiff1d(np.arange(len(y_tr)), start)
    labels, acc, loss = [2], [learner.score(X_te, y_te)], [log_loss(y_te, learner.predict_proba(X_te))]
    while labels[-1] < budget:
        idx, _ = learner.query(X_tr[pool], n_instances=STEP)
        learner.teach(X_tr[pool[idx]], y_tr[pool[idx]])
        pool = np.delete(pool, idx)
        labels.append(labels[-1] + len(idx))
        acc.append(learner.score(X_te, y_te))
        loss.append(log_loss(y_te, learner.predict_proba(X_te), labels=[0, 1]))
    return np.array(labels), np.array(acc), np.array(loss)


def labels_to_target(labels, acc, target):
    hit = np.flatnonzero(acc >= target)
    return labels[hit[0]] if hit.size else np.nan


def loop_table(seeds):
    """The labelling loop a user runs on digits' 10 classes: 20 labels (two per
    class), then ``query`` and ``teach`` 10 at a time up to 200, per strategy;
    against scikit-learn's ``LogisticRegression`` refitted each round and
    querying by entropy; and entropy with ``refit=True`` (the Laplace posterior of
    the labels held after every ``teach``). Per strategy: the loop's time (query +
    teach, or refit + query), and the test accuracy of the classifier's model and of a
    ``LogisticRegression`` refitted on the same 200 labels (mean over seeds)."""
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    print(f"digits, 10 classes, 20 -> 200 labels in rounds of 10 (mean of {seeds} seeds)")
    print(f"{'strategy':<28}{'loop time':>10}{'per round':>11}{'streamed acc':>14}"
          f"{'refit acc':>11}")
    for label in ("entropy", "margin", "bald", "random", "entropy, refit=True",
                  "LogisticRegression entropy"):
        times, streamed, refit = [], [], []
        for seed in range(seeds):
            X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=seed,
                                                      stratify=y)
            rng = np.random.RandomState(seed)
            start = np.concatenate([rng.choice(np.flatnonzero(y_tr == c), 2, replace=False)
                                    for c in range(10)])
            learner = (RefitLogistic(seed) if label.startswith("Logistic")
                       else ActiveVANClassifier(query_strategy=label.split(",")[0],
                                                refit=label.endswith("refit=True"),
                                                batch_size=10, random_state=seed))
            t0 = time.perf_counter()
            learner.teach(X_tr[start], y_tr[start], classes=np.arange(10))
            pool, taught = np.setdiff1d(np.arange(len(y_tr)), start), list(start)
            while len(taught) < 200:
                idx, _ = learner.query(X_tr[pool], n_instances=10)
                learner.teach(X_tr[pool[idx]], y_tr[pool[idx]])
                taught += list(pool[idx])
                pool = np.delete(pool, idx)
            times.append(time.perf_counter() - t0)
            streamed.append(learner.score(X_te, y_te))
            refit.append(LogisticRegression(C=1.0, max_iter=1000).fit(
                X_tr[taught], y_tr[taught]).score(X_te, y_te))
        print(f"{label:<28}{np.mean(times):>9.2f}s{1e3 * np.mean(times) / 18:>9.0f}ms"
              f"{np.mean(streamed):>14.3f}{np.mean(refit):>11.3f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--loop", action="store_true",
                        help="instead: the 20 -> 200 label loop on digits' 10 classes, timed "
                             "per strategy against a LogisticRegression refit per round")
    args = parser.parse_args()
    if args.loop:
        warnings.simplefilter("ignore")
        return loop_table(args.seeds)
    warnings.simplefilter("ignore")
    os.makedirs(os.path.join(os.path.dirname(__file__), "results"), exist_ok=True)
    for name, X, y, budget in datasets():
        curves = {m: [] for m in METHODS}
        needed = {m: [] for m in METHODS}
        for seed in range(args.seeds):
            X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
            full = VANLogisticRegression(C=1.0).fit(X_tr, y_tr).score(X_te, y_te)
            for method, make in METHODS.items():
                labels, acc, loss = learning_curve(make, X_tr, y_tr, X_te, y_te, budget, seed)
                curves[method].append((acc, loss))
                needed[method].append(labels_to_target(labels, acc, 0.97 * full))
        print(f"\n{name}: labels to reach 97% of the full-data accuracy "
              f"(median over {args.seeds} seeds; ratio to VAN random)")
        random_median = np.nanmedian(needed["VAN random"])
        for method in METHODS:
            med = np.nanmedian(needed[method])
            misses = int(np.sum(np.isnan(needed[method])))
            acc = np.mean([c[0] for c in curves[method]], axis=0)
            loss = np.mean([c[1] for c in curves[method]], axis=0)
            print(f"  {method:<28}{med:>6.0f} labels  x{med / random_median:4.2f}   "
                  f"(missed the target in {misses}/{args.seeds}); at {labels[-1]} labels: "
                  f"accuracy {acc[-1]:.3f}, log-loss {loss[-1]:.3f}")
        _plot(name, labels, curves)
    Xp, yp = make_classification(100_000, 100, random_state=0)
    model = VANLogisticRegression(objective="vi").fit(Xp[:2000], yp[:2000])
    for strategy in (entropy_sampling, bald_sampling):
        times = []
        for _ in range(5):
            start = time.perf_counter()
            strategy(model, Xp, n_instances=10, random_state=0)
            times.append(time.perf_counter() - start)
        print(f"\n{strategy.__name__} on a 100,000 x 100 pool: {np.median(times):.2f} s (median of 5)")
    active = ActiveVANClassifier(random_state=0).fit(Xp[:2000], yp[:2000])
    teach, refit = [], []
    for k in range(5):
        new = slice(2000 + 10 * k, 2010 + 10 * k)
        start = time.perf_counter()
        active.teach(Xp[new], yp[new])
        teach.append(time.perf_counter() - start)
        start = time.perf_counter()
        VANLogisticRegression(objective="vi").fit(Xp[: new.stop], yp[: new.stop])
        refit.append(time.perf_counter() - start)
    print(f"teach(10 new points): {1e3 * np.median(teach):.1f} ms; refit on all ~2,030 points: "
          f"{1e3 * np.median(refit):.1f} ms (medians of 5)")


def _plot(name, labels, curves):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for method, runs in curves.items():
        for ax, k in zip(axes, (0, 1)):
            values = np.array([r[k] for r in runs])
            mean, sd = values.mean(0), values.std(0)
            ax.plot(labels, mean, label=method)
            ax.fill_between(labels, mean - sd, mean + sd, alpha=0.15)
    axes[0].set_ylabel("test accuracy")
    axes[1].set_ylabel("test log-loss")
    axes[1].set_yscale("log")
    for ax in axes:
        ax.set_xlabel("labels")
    axes[0].legend(fontsize=8)
    fig.suptitle(name)
    fig.tight_layout()
    fig.savefig(os.path.join(os.path.dirname(__file__), "results", f"active_{name}.png"), dpi=80)


if __name__ == "__main__":
    main()
