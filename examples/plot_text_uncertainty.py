"""
Sparse text classification: which words is the model unsure about?
===================================================================

A TF-IDF matrix is wide (more words than documents) and sparse. Here
:class:`~skvan.VANLogisticRegression` takes it as it is, inside a
:class:`~sklearn.pipeline.Pipeline`: ``covariance="auto"`` keeps the Gaussian
over the 3,000 word weights in its dual form, through the 1,500 documents
(``n x n`` systems instead of ``p x p``), and ``sigma_`` holds the marginal
variances. With ``objective="vi"`` those are posterior variances: a word seen
in few documents keeps most of its prior spread, whatever its weight.

The documents are generated (nothing is downloaded): two topics, each with its
own words, over a shared Zipf-distributed vocabulary.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import make_pipeline

from skvan import VANLogisticRegression

rng = np.random.default_rng(0)
n_words, n_docs = 3_000, 1_500
vocabulary = np.array([f"word{i:04d}" for i in range(n_words)])
frequency = np.arange(1, n_words + 1) ** -1.1
frequency /= frequency.sum()
topic_words = [rng.choice(n_words, 40, replace=False) for _ in range(2)]

documents, labels = [], []
for _ in range(n_docs):
    label = int(rng.integers(2))
    words = list(rng.choice(n_words, size=rng.poisson(40) + 1, p=frequency))
    words += list(rng.choice(topic_words[label], size=rng.poisson(3)))
    documents.append(" ".join(vocabulary[words]))
    labels.append(label)
labels = np.array(labels)

model = make_pipeline(TfidfVectorizer(), VANLogisticRegression(C=10.0, objective="vi"))
model.fit(documents, labels)
tfidf, clf = model[0], model[-1]
words = tfidf.get_feature_names_out()
print(f"{clf.covariance_!r} form over {len(words)} words from {n_docs} documents; "
      f"training accuracy {model.score(documents, labels):.3f}")

# %%
# Weight against posterior spread
# -------------------------------
# Every point is a word. The topic words carry large weights; among them, the
# rare ones (few documents) are the uncertain ones. Common words are pinned
# near 0 by many documents.
coef, sd = clf.coef_[0], np.sqrt(clf.sigma_[0])
df = np.asarray((tfidf.transform(documents) > 0).sum(axis=0)).ravel()
fig, ax = plt.subplots(figsize=(6, 4.5))
points = ax.scatter(coef, sd, c=np.log10(df), s=6, cmap="viridis")
fig.colorbar(points, label="log10(documents containing the word)")
ax.set_xlabel("posterior mean of the weight")
ax.set_ylabel("posterior standard deviation")
for j in np.r_[np.argsort(coef)[:2], np.argsort(-coef)[:2]]:
    ax.annotate(words[j], (coef[j], sd[j]), fontsize=7)
fig.tight_layout()

# %%
# The most uncertain strong words
# -------------------------------
strong = np.argsort(-np.abs(coef))[:15]
order = strong[np.argsort(sd[strong])]
fig, ax = plt.subplots(figsize=(6, 4.5))
ax.errorbar(coef[order], np.arange(order.size), xerr=2 * sd[order], fmt="o", ms=4)
ax.set_yticks(np.arange(order.size), [f"{words[j]} ({df[j]} docs)" for j in order], fontsize=7)
ax.axvline(0, color="grey", lw=0.5)
ax.set_xlabel("weight: posterior mean +- 2 sd")
fig.tight_layout()
plt.show()
