"""Query strategies: score a pool, then select.

Every strategy is a plain function ``strategy(estimator, X_pool, n_instances=1,
random_state=None, **kwargs) -> (indices, scores)`` (modAL's call contract): it
needs ``predict_proba`` (and ``sample_proba`` for BALD), returns distinct indices
into ``X_pool``, most informative first, with their scores, and breaks ties at
random with ``random_state``. The pool goes to the estimator as it is: a list of
strings for a text ``Pipeline``, a DataFrame with its column names, a sparse
matrix. Entropy and margin sampling choose a batch jointly under a skvan
classifier's ``q`` (``batch="auto"``, :mod:`skvan.active._joint`), and take the
top scores for any other classifier.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.utils import check_random_state
from sklearn.utils.validation import _num_samples, check_array

from .._warnings import NOT_PASSED, renamed
from ._joint import PoolPosterior, select_jointly


def _entropy(proba, axis=-1):
    p = np.clip(proba, 1e-300, 1.0)
    return -np.sum(p * np.log(p), axis=axis)


def _check_pool(X_pool, n_instances):
    """The number of points to return (at most the pool's size)."""
    if int(n_instances) != n_instances or n_instances < 1:
        raise ValueError(f"n_instances must be a positive integer, got {n_instances!r}.")
    n_pool = _num_samples(X_pool)
    if n_pool == 0:
        raise ValueError("X_pool is empty: there is nothing to query.")
    return min(int(n_instances), n_pool)


#: Scores closer than this, relative to the largest, are ties.
TIE_RTOL = 1e-9


def _rounded(scores):
    """``scores`` on a grid of ``TIE_RTOL`` times their largest magnitude."""
    finite = np.isfinite(scores)
    scale = np.max(np.abs(scores[finite]), initial=0.0) * TIE_RTOL
    if scale == 0:
        return scores
    return np.where(finite, np.round(scores / scale), scores)


def _squared_distances(X, i):
    """``||x_j - x_i||^2`` for every row ``j`` (exact differences when dense)."""
    if sp.issparse(X):
        return euclidean_distances(X, X[i], squared=True).ravel()
    return np.sum((X - X[i]) ** 2, axis=1)


BATCH_MODES = ("auto", "joint", "top")


def _select_batch(estimator, X_pool, n, random_state, score, batch, diversity):
    """Indices and scores of ``n`` pool points under the per-point ``score`` of
    the predictive probabilities (higher is more informative).

    ``batch="joint"``: greedily under ``q`` conditioned on the picks before
    (:mod:`skvan.active._joint`), which needs a skvan classifier with a full
    covariance (or a Pipeline ending in one); ``"top"``: the best ``n`` scores
    (with ``diversity``, :func:`select`'s distance bonus); ``"auto"``: joint where
    the estimator allows it and ``diversity`` is 0, top otherwise."""
    if batch not in BATCH_MODES:
        raise ValueError(f"batch must be one of {BATCH_MODES}, got {batch!r}.")
    rng = check_random_state(random_state)
    posterior = None
    if batch != "top" and n > 1:
        if batch == "joint" and diversity > 0:
            raise ValueError("batch='joint' selects without a distance bonus: use diversity=0, "
                             "or batch='top' with diversity.")
        posterior = PoolPosterior.of(estimator, X_pool) if diversity <= 0 else None
        if posterior is None and batch == "joint":
            raise TypeError(
                f"batch='joint' conditions a Gaussian posterior over a linear model and "
                f"needs a skvan classifier with covariance='full' (or a Pipeline ending in "
                f"one); {type(estimator).__name__} is not. Use batch='top'."
            )
    if posterior is not None:  # (its probabilities are the estimator's predict_proba)
        return select_jointly(posterior, score(posterior.proba()), n, rng, _rounded)
    scores = score(estimator.predict_proba(X_pool))
    idx = select(scores, n, rng, X_pool, diversity)
    return idx, scores[idx]


def _margin(proba):
    """``1 - (p_(1) - p_(2))`` per row: higher where the two likeliest classes are closer."""
    top = np.sort(proba, axis=1)
    return 1.0 - (top[:, -1] - top[:, -2])


def select(scores, n_instances, random_state=None, X_pool=None, diversity=0.0):
    """Indices of the ``n_instances`` best ``scores`` (higher is more informative).

    ``diversity=0`` is plain top-k with random tie-breaking. Scores within
    ``TIE_RTOL`` of each other (relative to the largest) count as ties: equally
    informative points must not be ordered by rounding, which differs between
    CPUs and between dense and sparse arithmetic. ``diversity > 0`` selects
    greedily: after each pick, a candidate's score gains ``diversity`` times its
    distance to the nearest point picked so far, divided by the largest such
    distance (scores are first scaled to ``[0, 1]``), so that a batch does not
    spend its labels on near-duplicates.
    """
    rng = check_random_state(random_state)
    scores = np.asarray(scores, dtype=np.float64)
    n = min(int(n_instances), scores.shape[0])
    ties = rng.random_sample(scores.shape[0])
    if diversity <= 0 or n == 1:
        return np.lexsort((ties, -_rounded(scores)))[:n]
    if X_pool is None:
        raise ValueError("diversity > 0 needs X_pool to measure distances.")
    try:
        X = check_array(X_pool, accept_sparse="csr", dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "diversity > 0 measures distances between pool points and needs numeric "
            f"features ({exc}); use diversity=0 with this pool."
        ) from None
    span = np.ptp(scores)
    base = (scores - scores.min()) / span if span > 0 else np.zeros_like(scores)
    chosen = [int(np.lexsort((ties, -_rounded(base)))[0])]
    nearest = _squared_distances(X, chosen[0])
    for _ in range(n - 1):
        far = np.sqrt(nearest)
        gain = base + diversity * far / (far.max() if far.max() > 0 else 1.0)
        gain[chosen] = -np.inf
        pick = int(np.lexsort((ties, -_rounded(gain)))[0])
        chosen.append(pick)
        nearest = np.minimum(nearest, _squared_distances(X, pick))
    return np.array(chosen)


def entropy_sampling(estimator, X_pool, n_instances=1, random_state=None, diversity=0.0,
                     batch="auto"):
    """Query the points whose predictive distribution has the largest entropy.

    ``score(x) = -sum_y p(y|x) log p(y|x)`` with ``p = estimator.predict_proba``; for
    skvan's classifiers that is ``p(y|x) = E_q[p(y|x, theta)]`` (the paper's
    sVAN-Active criterion).

    Parameters
    ----------
    estimator : object
        A fitted classifier with ``predict_proba``.
    X_pool : array-like of shape (n_pool, n_features)
        Candidate points.
    n_instances : int, default=1
        How many to return (at most ``n_pool``).
    random_state : int, RandomState instance or None, default=None
        Breaks ties.
    diversity : float, default=0.0
        Weight of the distance bonus of :func:`select` (0: plain top-k).
    batch : {"auto", "joint", "top"}, default="auto"
        How the ``n_instances`` are chosen. "joint": one at a time, each score
        multiplied by the fraction of the point's predictive variance that the
        picks before it leave under the estimator's ``q`` (labelling a point
        adds its Fisher information, whatever its label: near-duplicates of a
        pick fall to 0; :mod:`skvan.active._joint`); needs a skvan classifier
        with ``covariance="full"``, or a Pipeline ending in one. "top": the best
        scores (with ``diversity``, :func:`select`'s distance bonus). "auto":
        joint where the estimator allows it and ``diversity`` is 0, top
        otherwise.

    Returns
    -------
    indices : ndarray of shape (n_instances,)
        Distinct rows of ``X_pool``, most informative first (a joint batch: in
        the order picked).
    scores : ndarray of shape (n_instances,)
        Their entropies (a joint batch: times the fraction of their predictive
        variance left at their pick).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skvan import VANLogisticRegression
    >>> from skvan.active import entropy_sampling
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(), VANLogisticRegression()).fit(X[:50], y[:50])
    >>> idx, scores = entropy_sampling(clf, X[50:], n_instances=3, random_state=0)
    >>> idx.shape, bool(np.all(scores[:-1] >= scores[1:]))
    ((3,), True)
    """
    n = _check_pool(X_pool, n_instances)
    return _select_batch(estimator, X_pool, n, random_state, _entropy, batch, diversity)


def margin_sampling(estimator, X_pool, n_instances=1, random_state=None, diversity=0.0,
                    batch="auto"):
    """Query the points with the smallest margin between the two likeliest classes.

    ``score(x) = 1 - (p_(1)(x) - p_(2)(x))``, so that higher is more informative.

    Parameters
    ----------
    estimator : object
        A fitted classifier with ``predict_proba``.
    X_pool : array-like of shape (n_pool, n_features)
        Candidate points.
    n_instances : int, default=1
        How many to return.
    random_state : int, RandomState instance or None, default=None
        Breaks ties.
    diversity : float, default=0.0
        Weight of the distance bonus of :func:`select`.
    batch : {"auto", "joint", "top"}, default="auto"
        How the ``n_instances`` are chosen, as in :func:`entropy_sampling`.

    Returns
    -------
    indices : ndarray of shape (n_instances,)
        Distinct rows of ``X_pool``, most informative first (a joint batch: in
        the order picked).
    scores : ndarray of shape (n_instances,)
        Their scores (a joint batch: times the fraction of their predictive
        variance left at their pick).

    Examples
    --------
    With three classes (iris), the margin looks at the two likeliest:

    >>> from sklearn.datasets import load_iris
    >>> from skvan import VANLogisticRegression
    >>> from skvan.active import margin_sampling
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = VANLogisticRegression().fit(X[::10], y[::10])
    >>> idx, scores = margin_sampling(clf, X, n_instances=3, random_state=0)
    >>> idx.shape, bool(np.all(scores[:-1] >= scores[1:]))
    ((3,), True)
    """
    n = _check_pool(X_pool, n_instances)
    return _select_batch(estimator, X_pool, n, random_state, _margin, batch, diversity)


def _sampler(estimator):
    """The object with ``sample_proba`` and the transformation of the pool that
    reaches it: ``estimator`` itself, or a ``Pipeline``'s final step after the
    other steps' ``transform``."""
    if hasattr(estimator, "sample_proba"):
        return estimator, lambda X: X
    steps = getattr(estimator, "steps", None)
    if steps and hasattr(steps[-1][1], "sample_proba"):
        return steps[-1][1], estimator[:-1].transform
    raise TypeError(
        f"bald_sampling needs an estimator with sample_proba(X, n_samples, random_state), "
        f"or a Pipeline ending in one; {type(estimator).__name__} is neither. Use "
        "entropy_sampling or margin_sampling."
    )


def bald_sampling(estimator, X_pool, n_instances=1, random_state=None, n_samples=100,
                  diversity=0.0, *, n_draws=NOT_PASSED):
    """Query the points where label and parameters share the most information (BALD).

    ``score(x) = H[E_q p(y|x, theta)] - E_q H[p(y|x, theta)]``: the epistemic part of
    the predictive uncertainty, high where parameters drawn from ``q`` disagree,
    which a point estimate cannot give. Estimated from ``n_samples`` draws of
    ``estimator.sample_proba``.

    Parameters
    ----------
    estimator : object
        A fitted classifier with ``sample_proba(X, n_samples, random_state)``, or
        a fitted ``Pipeline`` ending in one.
    X_pool : array-like of shape (n_pool, n_features)
        Candidate points.
    n_instances : int, default=1
        How many to return.
    random_state : int, RandomState instance or None, default=None
        Seeds the draws and breaks ties.
    n_samples : int, default=100
        Parameter vectors drawn from ``q``.
    diversity : float, default=0.0
        Weight of the distance bonus of :func:`select`.
    n_draws : int
        Deprecated name of ``n_samples`` (a ``FutureWarning``; removed in 0.3).

    Returns
    -------
    indices : ndarray of shape (n_instances,)
        Distinct rows of ``X_pool``, most informative first.
    scores : ndarray of shape (n_instances,)
        Their mutual information (nats).

    Examples
    --------
    BALD needs draws from a posterior (``objective="vi"``):

    >>> from sklearn.datasets import load_wine
    >>> from sklearn.preprocessing import scale
    >>> from skvan import VANLogisticRegression
    >>> from skvan.active import bald_sampling
    >>> X, y = load_wine(return_X_y=True)
    >>> X = scale(X)
    >>> clf = VANLogisticRegression(objective="vi").fit(X[::6], y[::6])
    >>> idx, scores = bald_sampling(clf, X, n_instances=3, random_state=0, n_samples=50)
    >>> idx.shape, bool(np.all(scores[:-1] >= scores[1:]))
    ((3,), True)
    """
    n_samples = renamed("n_draws", "n_samples", n_draws, n_samples)
    sampler, transform = _sampler(estimator)
    n = _check_pool(X_pool, n_instances)
    rng = check_random_state(random_state)
    draws = sampler.sample_proba(transform(X_pool), n_samples=n_samples, random_state=rng)
    scores = np.maximum(_entropy(draws.mean(axis=0)) - _entropy(draws).mean(axis=0), 0.0)
    idx = select(scores, n, rng, X_pool, diversity)
    return idx, scores[idx]


def random_sampling(estimator, X_pool, n_instances=1, random_state=None):
    """Query points uniformly at random (the baseline).

    Parameters
    ----------
    estimator : object
        Ignored (kept for the common signature).
    X_pool : array-like of shape (n_pool, n_features)
        Candidate points.
    n_instances : int, default=1
        How many to return.
    random_state : int, RandomState instance or None, default=None
        Seeds the choice.

    Returns
    -------
    indices : ndarray of shape (n_instances,)
        Distinct rows of ``X_pool``.
    scores : ndarray of shape (n_instances,)
        The uniform random keys that ranked them.

    Examples
    --------
    >>> import numpy as np
    >>> from skvan.active import random_sampling
    >>> idx, _ = random_sampling(None, np.zeros((10, 2)), n_instances=3, random_state=0)
    >>> idx.shape
    (3,)
    """
    n = _check_pool(X_pool, n_instances)
    scores = check_random_state(random_state).random_sample(_num_samples(X_pool))
    idx = np.argsort(-scores)[:n]
    return idx, scores[idx]


STRATEGIES = {
    "entropy": entropy_sampling,
    "bald": bald_sampling,
    "margin": margin_sampling,
    "random": random_sampling,
}
