"""Active learning with VAN: learning curves, labels to target, query cost.

For each dataset and seed: a random 70/30 split, one labelled point per class,
then rounds of `query` (5 points) and `teach` until the budget. Strategies:
ActiveVANClassifier streamed (refit=False) with entropy, BALD, random, and
entropy with a diversity bonus; the non-Bayesian peer is scikit-learn's
LogisticRegression refitted on the labelled set each round with entropy
sampling. All use C=1.

Reports: the labels needed to reach 97% of the full-data test accuracy (a VAN
fit on the whole training split), median over seeds; the mean curves of test
accuracy and log-loss (saved as benchmarks/results/active_<dataset>.png); the
time to score a 100,000 x 100 pool; and the time of teach(10 points) against a refit.

The log-loss curve of "VAN entropy" against "VAN random" is the paper's Figure 3
measure: test log-loss against examples processed, sVAN-Active against random
minibatches.

Run: python benchmarks/bench_active.py [--seeds 10]
     python benchmarks/bench_active.py --loop --seeds 3   (digits, 20 -> 200 labels)
     python benchmarks/bench_active.py --curves --seeds 5 (against random labels + a refit)
     python benchmarks/bench_active.py --curves --held-out --seeds 5 (four other sets)
"""

import argparse
import functools
import os
import subprocess
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    load_iris,
    load_wine,
    make_classification,
)
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skvan import ActiveVANClassifier, VANLogisticRegression
from skvan.active import bald_sampling, entropy_sampling, margin_sampling, to_skactiveml

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
                return entropy_sampling(est, X_pool, n_instances, random_state, diversity=diversity,
                                    batch="top")
            return ActiveVANClassifier(query_strategy=strategy_fn, refit=False, batch_size=STEP,
                                       random_state=seed)
        return ActiveVANClassifier(query_strategy=strategy, refit=False, batch_size=STEP,
                                   random_state=seed)
    return make


class RefitLearner:
    """scikit-learn's ``LogisticRegression`` (C=1) refitted on every label after
    each round, querying with ``strategy`` (a skvan strategy function, or
    "random" for uniformly random labels): what a user does without skvan."""

    def __init__(self, strategy, seed):
        self.strategy, self.rng = strategy, np.random.RandomState(seed)
        self.X = self.y = None

    def hold(self, X, y):
        """Add labelled rows to those held."""
        self.X = X if self.X is None else np.vstack([self.X, X])
        self.y = y if self.y is None else np.r_[self.y, y]

    def teach(self, X, y, classes=None):
        self.hold(X, y)
        self.model = LogisticRegression(C=1.0, max_iter=1000).fit(self.X, self.y)
        return self

    def query(self, X_pool, n_instances):
        if self.strategy == "random":
            return self.rng.permutation(len(X_pool))[:n_instances], None
        return self.strategy(self.model, X_pool, n_instances, self.rng)

    def predict_proba(self, X):
        return self.model.predict_proba(X)

    def score(self, X, y):
        return self.model.score(X, y)


METHODS = {
    "VAN entropy": van_learner("entropy"),
    "VAN BALD": van_learner("bald"),
    "VAN random": van_learner("random"),
    "VAN entropy+diversity": van_learner("entropy", diversity=1.0),
    "LogisticRegression entropy": functools.partial(RefitLearner, entropy_sampling),
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
            learner = (RefitLearner(entropy_sampling, seed) if label.startswith("Logistic")
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


#: Label budgets of the ``--curves`` table, the labels each loop starts from and
#: the labels queried per round.
CURVE_BUDGETS = (50, 100, 200, 400)
CURVE_START = 20
CURVE_ROUND = 10


def curve_sets(held_out=False):
    """Four multiclass sets with 3 to 10 classes and three binary ones, bundled or
    generated (inputs standardised in :func:`curves_table`); ``held_out``: four
    others, kept out of the choice of the defaults."""
    if held_out:
        X, y = load_iris(return_X_y=True)
        yield "iris (3)", X, y
        X, y = load_digits(return_X_y=True)
        keep = np.isin(y, (3, 5, 8))
        yield "digits 3/5/8 (3)", X[keep], y[keep]
        yield ("generated (8)", *make_classification(
            2500, 25, n_informative=15, n_classes=8, n_clusters_per_class=2, class_sep=1.5,
            flip_y=0.01, random_state=11))
        yield ("generated (2), 70/30", *make_classification(
            2000, 15, n_informative=5, weights=[0.7], flip_y=0.02, random_state=12))
        return
    X, y = load_digits(return_X_y=True)
    yield "digits (10 classes)", X, y
    X, y = load_wine(return_X_y=True)
    yield "wine (3)", X, y
    yield ("generated (6)", *make_classification(
        3000, 20, n_informative=10, n_redundant=4, n_classes=6, n_clusters_per_class=1,
        flip_y=0.02, random_state=1))
    yield ("generated (4)", *make_classification(
        2000, 30, n_informative=8, n_classes=4, n_clusters_per_class=2, class_sep=1.2,
        flip_y=0.03, random_state=2))
    X, y = load_breast_cancer(return_X_y=True)
    yield "breast_cancer (2)", X, y
    X, y = load_digits(return_X_y=True)
    yield "digits odd/even (2)", X, y % 2
    yield ("generated (2)", *make_classification(
        3000, 48, n_informative=12, n_redundant=10, class_sep=0.8, flip_y=0.05, random_state=3))


class SkactivemlLearner(RefitLearner):
    """A scikit-activeml query strategy (``make_query()``) over the whole training
    split with the unlabelled rows missing, its classifier ``make_clf()`` refitted
    on the labels each round."""

    def __init__(self, make_query, make_clf):
        self.query_strategy, self.model = make_query(), make_clf()
        self.X = self.y = None

    def teach(self, X, y, classes=None):
        self.hold(X, y)
        self.model.fit(self.X, self.y)
        return self

    def query(self, X_pool, n_instances):
        X = np.vstack([self.X, X_pool])
        y = np.r_[self.y, np.full(len(X_pool), np.nan)]
        idx = self.query_strategy.query(X, y, self.model, batch_size=n_instances)
        return np.asarray(idx) - len(self.y), None


def curve_learners(classes, seed):
    """The learners of the ``--curves`` table, by label: skvan's classifier with
    its defaults (margin, joint batches, ``refit=True``), with top-k margin
    batches, and as the paper's sVAN-Active (entropy, ``refit=False``); random
    labels and margin sampling with a ``LogisticRegression`` refit (scikit-activeml's
    ``UncertaintySampling(method="margin_sampling")`` with the same classifier
    picks the same labels); and on two classes scikit-activeml's BatchBALD over
    ``VANLogisticRegression(objective="vi")`` through
    :func:`~skvan.active.to_skactiveml`, where scikit-activeml is installed."""
    def van(**params):
        return functools.partial(ActiveVANClassifier, batch_size=CURVE_ROUND,
                                 random_state=seed, **params)

    learners = {
        "ActiveVANClassifier()": van(),
        "margin, top-k batches": van(query_strategy=functools.partial(margin_sampling,
                                                                      batch="top")),
        "entropy, refit=False": van(query_strategy="entropy", refit=False),
        "random + LR refit": lambda: RefitLearner("random", seed),
        "margin + LR refit": lambda: RefitLearner(margin_sampling, seed),
    }
    if len(classes) > 2:
        return learners  # (a VI fit per round on many classes takes seconds: issue 50)
    try:
        from skactiveml.pool import BatchBALD
    except ImportError:
        return learners
    learners["skactiveml BatchBALD + VAN"] = lambda: SkactivemlLearner(
        lambda: BatchBALD(sample_predictions_method_name="sample_proba",
                          sample_predictions_dict={"n_samples": 30}, random_state=seed),
        lambda: to_skactiveml(VANLogisticRegression(objective="vi"), classes=classes,
                              random_state=seed))
    return learners


def curve(make, X_tr, y_tr, X_te, y_te, classes, budget, seed, target=np.inf, cap=None):
    """Test accuracy after each round of one loop (``CURVE_START`` random labels
    with every class present, then ``CURVE_ROUND`` per round up to ``budget``, and
    on past it until the accuracy reaches ``target`` or the labels ``cap``) with
    the learner's own model, and the loop's time to ``budget`` without the
    scoring."""
    rng = np.random.RandomState(seed)
    first = [rng.choice(np.flatnonzero(y_tr == c)) for c in classes]
    rest = np.setdiff1d(np.arange(len(y_tr)), first)
    taught = first + list(rng.choice(rest, CURVE_START - len(first), replace=False))
    pool = np.setdiff1d(np.arange(len(y_tr)), taught)
    start = time.perf_counter()
    learner = make().teach(X_tr[taught], y_tr[taught], classes=classes)
    elapsed = time.perf_counter() - start
    labels, acc = [len(taught)], [learner.score(X_te, y_te)]
    cap = budget if cap is None else max(cap, budget)
    while labels[-1] < budget or (labels[-1] < cap and max(acc) < target):
        start = time.perf_counter()
        idx, _ = learner.query(X_tr[pool], n_instances=CURVE_ROUND)
        learner.teach(X_tr[pool[idx]], y_tr[pool[idx]])
        if labels[-1] < budget:
            elapsed += time.perf_counter() - start
        pool = np.delete(pool, idx)
        labels.append(labels[-1] + len(idx))
        acc.append(learner.score(X_te, y_te))
    return np.array(labels), np.array(acc), elapsed


def curves_table(seeds, held_out=False):
    """Per data set and learner: the mean test accuracy at each budget of
    ``CURVE_BUDGETS`` that fits in 80% of the training split, the labels needed to
    reach 97% of the full-data accuracy (``LogisticRegression`` on the whole
    training split; median over seeds, ">" where some seed never reached it), and
    the loop's mean time to the last budget. Loops go on past the last budget
    until they reach the target or label 80% of the training split, so that
    the labels to target are measured on every set, not only where random
    sampling reached it by the last budget. Each budget's winner against
    "random + LR refit" is counted at the end, and the labels to target over
    random sampling's are averaged over the sets where random sampling needed
    more labels than the loop starts with (elsewhere the start alone reaches
    the target and the ratio says nothing of the queries)."""
    wins, labels_ratio = {}, {}
    for name, X, y in curve_sets(held_out):
        X = StandardScaler().fit_transform(X)
        classes = np.unique(y)
        results, splits = {}, []
        for seed in range(seeds):
            X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=seed,
                                                      stratify=y)
            full = LogisticRegression(C=1.0, max_iter=1000).fit(X_tr, y_tr).score(X_te, y_te)
            splits.append((X_tr, X_te, y_tr, y_te, full))
        full = np.mean([split[-1] for split in splits])
        target = 0.97 * full
        for seed, (X_tr, X_te, y_tr, y_te, _) in enumerate(splits):
            budgets = [b for b in CURVE_BUDGETS if b <= 0.8 * len(y_tr)]
            for label, make in curve_learners(classes, seed).items():
                results.setdefault(label, []).append(
                    curve(make, X_tr, y_tr, X_te, y_te, classes, budgets[-1], seed, target,
                          cap=int(0.8 * len(y_tr))))
        labels = results["random + LR refit"][0][0]
        at = [int(np.flatnonzero(labels == b)[0]) for b in budgets]
        width = at[-1] + 1  # the rounds to the last budget (loops may go on past it)
        title = f"{name} [{len(y)} x {X.shape[1]}, full-data {full:.3f}]"
        print(f"{title:<44}" + "".join(f"{b:>8}" for b in budgets)
              + f"{'to target':>11}{'time':>8}")
        reference = np.mean([r[1][:width] for r in results["random + LR refit"]], axis=0)
        needed_random = _median_labels(results["random + LR refit"], target)
        for label, runs in results.items():
            acc = np.mean([r[1][:width] for r in runs], axis=0)
            needed = _median_labels(runs, target)
            print(f"  {label:<42}" + "".join(f"{acc[i]:>8.3f}" for i in at)
                  + f"{needed[0]:>11}{np.mean([r[2] for r in runs]):>7.1f}s", flush=True)
            wins.setdefault(label, []).extend(acc[i] >= reference[i] for i in at)
            informative = CURVE_START < needed_random[1] < np.inf
            labels_ratio.setdefault(label, []).append(
                needed[1] / needed_random[1] if informative else np.nan)
    print(f"budgets where a learner's accuracy is at least random + LR refit's (mean of "
          f"{seeds} seeds), and its labels to target over random's (mean over the sets where "
          "random sampling needed more than the starting labels; a loop that never reached the "
          "target counts its cap):")
    for label, won in wins.items():
        ratio = np.array(labels_ratio[label])
        counted = ratio[~np.isnan(ratio)]
        print(f"  {label:<42}{sum(won):>3}/{len(won)}   {np.mean(counted):5.2f}x over "
              f"{counted.size} of {ratio.size} sets")


#: The learners of :func:`round_times`, by label.
ROUND_LEARNERS = ("LogisticRegression refit + predict_proba", "ActiveVANClassifier() query",
                  "ActiveVANClassifier() query + teach", "refit=False query + teach")


def round_block(label, rounds=8, warm_up=3):
    """Seconds of one round of one learner of :func:`round_times`: the fastest of
    ``rounds`` rounds in a row after ``warm_up`` untimed ones (the labels held
    grow by 10 a round; the fastest round is the one least slowed by the other
    processes of a shared machine)."""
    X, y = make_classification(3200, 20, n_informative=12, n_classes=10,
                               n_clusters_per_class=1, random_state=4)
    X = StandardScaler().fit_transform(X)
    held, pool = np.arange(200), X[200:3200]

    def new(k):  # the labels of round k (the pool's last rows, 10 per round)
        return slice(3200 - 10 * (k + 1), 3200 - 10 * k)

    if label.startswith("LogisticRegression"):
        def round_(k):  # every label so far, as teach keeps them
            labelled = np.r_[held, np.arange(3200 - 10 * (k + 1), 3200)]
            model = LogisticRegression(C=1.0, max_iter=1000).fit(X[labelled], y[labelled])
            margin_sampling(model, pool, n_instances=10, batch="top")
    else:
        learner = ActiveVANClassifier(random_state=0, refit=not label.startswith("refit=False"))
        learner.teach(X[held], y[held], classes=np.arange(10))

        def round_(k):
            learner.query(pool)
            if label.endswith("teach"):
                learner.teach(X[new(k)], y[new(k)])
    for k in range(warm_up):
        round_(k)
    times = []
    for k in range(warm_up, warm_up + rounds):
        start = time.perf_counter()
        round_(k)
        times.append(time.perf_counter() - start)
    return min(times)


def round_times(repeats=9):
    """One labelling round on a pool of 3,000 rows with 10 classes (20 features,
    200 labels held, 10 more per round): the default classifier's ``query`` (10
    points) and ``teach``, its ``query`` alone, and ``refit=False``'s round, against
    ``LogisticRegression`` refitted on the labels plus ``predict_proba`` on the
    pool and margin sampling's top 10 (:func:`round_block`). Each learner's
    rounds run in a process of their own, as a labelling loop does: in one
    process, a round right after another library's was slowed, for a few
    rounds, by the state of the BLAS threads that one left (scikit-learn's
    refit after skvan's rounds took twice its time alone, and skvan's after
    scikit-learn's as long). Per learner, the median over ``repeats``
    alternating repeats of :func:`round_block`'s fastest round."""
    times = {label: [] for label in ROUND_LEARNERS}
    for _ in range(repeats):
        for label in ROUND_LEARNERS:
            out = subprocess.run([sys.executable, __file__, "--round-block", label],
                                 capture_output=True, text=True, check=True).stdout
            times[label].append(float(out.split()[-1]))
    base = np.median(times[ROUND_LEARNERS[0]])
    print("\none round on a 3,000 x 20 pool with 10 classes, 200+ labels held (a process per "
          f"learner: 3 rounds, then the fastest of 8; medians of {repeats} alternating "
          "repeats; the range: each repeat's ratio to the peer's time in the same repeat):")
    for label, values in times.items():
        ratios = np.divide(values, times[ROUND_LEARNERS[0]])
        print(f"  {label:<44}{1e3 * np.median(values):>8.1f} ms  x{np.median(values) / base:5.1f}"
              f"   ({ratios.min():.1f} - {ratios.max():.1f})")


def _median_labels(runs, target):
    """Median over seeds of the labels at which accuracy first reached ``target``
    (a loop that never did counts as infinite: "> budget")."""
    needed = [labels_to_target(labels, acc, target) for labels, acc, _ in runs]
    needed = np.where(np.isnan(needed), np.inf, needed)
    value = float(np.median(needed))
    text = f"> {max(labels[-1] for labels, _, _ in runs)}" if np.isinf(value) else f"{value:.0f}"
    return text, value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--loop", action="store_true",
                        help="instead: the 20 -> 200 label loop on digits' 10 classes, timed "
                             "per strategy against a LogisticRegression refit per round")
    parser.add_argument("--curves", action="store_true",
                        help="instead: accuracy at 50/100/200/400 labels and labels to 97%% "
                             "of full-data accuracy on seven sets, against random labels with "
                             "a LogisticRegression refit")
    parser.add_argument("--round-block", choices=ROUND_LEARNERS,
                        help="internal: time one learner's rounds (round_times) and print "
                             "seconds per round")
    parser.add_argument("--held-out", action="store_true",
                        help="with --curves: four sets kept out of the choice of the defaults")
    args = parser.parse_args()
    if args.round_block:
        warnings.simplefilter("ignore")
        print(round_block(args.round_block))
        return None
    if args.curves:
        warnings.simplefilter("ignore")
        curves_table(args.seeds, args.held_out)
        return None if args.held_out else round_times()
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
