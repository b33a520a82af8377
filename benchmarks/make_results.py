"""Regenerate benchmarks/RESULTS.md: one current table per benchmark.

Each section's table is the saved output of its command, in
``benchmarks/results/<key>.txt`` (the first line records when and on what it
ran). ``--run KEY [KEY ...]`` runs those commands and saves their output (one
at a time: the machine is shared, and two benchmarks at once time each other);
without it the script writes RESULTS.md from the saved outputs.

    python benchmarks/make_results.py --run lasso_wide lasso_path
    python benchmarks/make_results.py            # RESULTS.md from the outputs
    python benchmarks/make_results.py --list     # the sections and their commands
"""

import argparse
import datetime
import os
import platform
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUTPUTS = os.path.join(HERE, "results")

HEADER = ("# Benchmark results\n\n"
          "Current tables, one per benchmark, each after the command that prints it and "
          "the date it ran (`python benchmarks/make_results.py --run KEY` reruns one and "
          "this file is rewritten from the saved outputs). The machine is a shared 2-core "
          "one: only ratios within one run mean anything, and each table says how its "
          "times were taken (alternating repeats, minimum or median). Evaluation, "
          "iteration and pass counts do not depend on the machine; times move by 10-30% "
          "between runs of the same code, and more when another process competes for the "
          "cores. `python benchmarks/snapshot.py compare` checks that a table's fits are "
          "unchanged since it ran. The CHANGELOG records how the figures moved.")

#: ``(key, title, command, before, after)``: the table of ``command`` (run from
#: the repository's root) under ``title``, with what to read before and after it.
SECTIONS = [
    ("logistic", "Logistic regression against scikit-learn at matched accuracy",
     "python benchmarks/bench_logistic.py --quick",
     "Ratio: VAN's time over the faster of newton-cholesky and lbfgs at the loosest "
     "tol reaching VAN's accuracy; medians of alternating repeats, each timed fit "
     "after 0.2 s of untimed fits of its own.",
     "The small bundled sets sit near 1.1-1.5, where scikit-learn's input checks and "
     "VAN's set-up around 7-9 iterations weigh; the large generated ones near 1. "
     "This run's machine was slow (newton-cholesky on 20,000 x 100 at 100 ms, 54 ms in "
     "a quieter run): a run minutes before gave breast_cancer 2.1, this one 1.3."),
    ("vi_exact", "VI: Anderson acceleration of the fixed-point iteration",
     "python benchmarks/bench_vi.py",
     "Memory 0 is the plain iteration; iterations, median ms of 5 alternating "
     "repeats, and the distance to a fit at tol=1e-10 (coefficients / covariance).",
     "Where the plain map contracts slowly (a weak prior) the extrapolation halves "
     "the iterations; where it contracts fast nothing changes. The Gauss-Newton "
     "curvature keeps the plain step (its fixed point is not the VI objective's "
     "stationary point)."),
    ("lasso", "The Lasso: single fits",
     "python benchmarks/bench_lasso.py",
     "The error of the raw VAN mean against data passes (the paper's Figure 2a-b), "
     "then the estimator's wall time at 1e-3 relative error.",
     "The raw mean converges linearly but slowly; the estimator does not return it: "
     "VAN stops as soon as the support read off `q` passes the Lasso's KKT check "
     "and returns the exact solution on it (`corr`: the corrections the check made)."),
    ("lasso_speed", "The Lasso against scikit-learn's fastest solver",
     "python benchmarks/bench_lasso.py --speed --quick",
     "VAN's time over the fastest of `Lasso`, `Lasso(precompute=True)` and "
     "`LassoLars` at matched accuracy; medians of alternating repeats after 0.2 s "
     "of untimed fits each. This run's peers took about 1.5 times their times in the "
     "quieter run before (diabetes' `Lasso` 0.5 ms against 0.3 ms); between the two "
     "runs ratios moved by up to 0.3, on the large sets too, whose fits did not "
     "change (their BLAS passes share the machine).", ""),
    ("lasso_path", "Lasso paths and cross-validation",
     "python benchmarks/bench_lasso.py --path",
     "`VANLassoCV` against `LassoCV`, 100 alphas, 5 folds, minima of alternating "
     "repeats; `alpha_` compared with `LassoCV` solved at tol=1e-12; VAN "
     "iterations along the path, then those of cold fits at every alpha. The small "
     "p > n problems' ratios are noisy: a run minutes before this one gave 2.2 for "
     "synthetic 100 x 300 (VAN's minimum 0.139 s), this one 1.5.", ""),
    ("lasso_wide", "Lasso paths on wide collinear data",
     "python benchmarks/bench_lasso.py --wide",
     "Coefficients are not unique here, so the objective is compared: 30 alphas "
     "from `alpha_max` to `1e-2 alpha_max`; each peer at the loosest tol of 1e-4 "
     "... 1e-10 reaching a 1e-6 relative objective gap at every alpha (`>`: none "
     "did within 120 s, the time a lower bound); `LassoCV` at `lasso_path`'s tol; "
     "\"VAN gap\": VAN's objective over the best any peer reached, worst alpha.",
     "VAN's path: the homotopy over the grid while the support is small or its events "
     "few (at most two per alpha), then batched KKT corrections per alpha on the Gram "
     "matrix's columns (formed as supports need them, the likely entries in the same "
     "pass over the rows)."),
    ("enet_path", "Elastic-net cross-validation",
     "python benchmarks/bench_lasso.py --enet-path",
     "`VANElasticNetCV` against `ElasticNetCV`, `l1_ratio=0.5`, 100 alphas, 5 folds.",
     ""),
    ("mc_rate", "Monte Carlo expectations: convergence in n_mc_samples",
     "python benchmarks/bench_mc_rate.py", "",
     "Under VI the error falls at the Monte Carlo rate `S^-1/2`; under VO `q` "
     "collapses and the sampling noise with it."),
    ("minimize", "skvan.minimize on a suite of functions",
     "python benchmarks/bench_minimize.py --starts 10 --methods \"VAN zero order\" "
     "\"CMA-ES (cma)\" \"VAN first order\" BFGS \"VAN second order\"",
     "Each method with its defaults from the same 10 random starts (needs the "
     "`benchmarks` extra for `cma`); \"median evals\": all calls of `fun`, `jac` and "
     "`hess` up to each method's own termination; \"to target\": calls until a point "
     "was within the target, median over the runs that got there. Counts are "
     "deterministic.", ""),
    ("minimize_explore", "skvan.minimize: exploration from a non-global basin",
     "python benchmarks/bench_minimize.py --explore --starts 100",
     "Rotated tilted double wells, ripples and Rastrigin's function in 2, 5 and 10 "
     "dimensions, 100 starts in a non-global basin each, `sigma0=1` and defaults "
     "otherwise; \"success\": the final point in the global basin; \"max_iter\": "
     "VAN runs that ended there (a ConvergenceWarning). Counts are deterministic.",
     "With derivatives the continuation crosses the wells' ridges in 2 and 5 "
     "dimensions, where BFGS and CMA-ES stay; on ripples of period `sigma0` the "
     "sampled derivatives are mostly noise and most runs end at max_iter."),
    ("minimize_bounds", "skvan.minimize with bounds",
     "python benchmarks/bench_minimize.py --bounds",
     "The bounded problems of `skvan._functions.bounded_problems`, against "
     "L-BFGS-B and CMA-ES with the same bounds.", ""),
    ("active", "Active learning against random labels with a refit",
     "python benchmarks/bench_active.py --curves --seeds 5",
     "Seven sets (four with 3 to 10 classes, three binary), 70/30 splits, 20 random "
     "labels with every class present, then rounds of 10: held-out accuracy of each "
     "learner's own model at 50/100/200/400 labels (mean of 5 seeds), labels to 97% of "
     "the full-data accuracy (median; loops go on past 400 labels until they reach it), "
     "and seconds per loop to the last budget (query and teach, not the scoring; one "
     "run, other processes quiet).",
     "On breast_cancer the 20 starting labels reach the target, and the ratio to random "
     "sampling's labels leaves it out; on wine one round does, for every learner (its "
     "ratio is 1 whatever the queries). The refit costs its time on digits' 10 classes "
     "(a Laplace refit per round, about 0.1 s). The round times are noisy on this "
     "shared machine: single repeats' ratios span the range shown, and the round "
     "timing alone, run minutes before, gave 2.3 for query + teach (1.8 here). scikit-activeml's "
     "BatchBALD row differs between runs of the same code (its picks do)."),
    ("wide", "Wide and sparse data",
     "python benchmarks/bench_wide.py --repeats 7",
     "Matched accuracy: relative coefficient error at most 1e-3; medians of 7 "
     "alternating repeats (the ratio of the minima beside the medians').",
     "The small problems (n < p <= 512) take milliseconds and their ratios are noisy on "
     "this shared machine (the logistic ones' medians spanned 2.4-5.0x over four runs). "
     "Where the Lasso's support nears the number of rows, the working sets' corrections "
     "hand over to the homotopy from alpha_max (`skvan.sparse.kkt_descend`) and VAN "
     "beats `Lasso`; where an elastic net keeps most of 1,000 or 2,000 columns, exact "
     "support solves cost many times coordinate descent's sweeps: a 26-31x cliff over "
     "two runs (the 200 x 2,000 one took 2.9 s, over 300x, before its working sets "
     "shared the rows), as is the 100 x 400 elastic net's 7x (its ridge, a row per "
     "feature, keeps `auto` full) and, above 3x, the small Lasso and logistic fits. "
     "The machine was busier in this run than in the one before (the Lasso 100 x 400 "
     "took 15.7 ms against 10.2)."),
    ("multinomial", "Multinomial logistic regression",
     "python benchmarks/bench_multinomial.py --repeats 3",
     "Matched accuracy, `C=1`, medians of 3 alternating repeats; then held-out "
     "log-loss of the VI posterior averaged, at its mean, and scikit-learn's MAP. "
     "Digits, the 2,000 x 500 set and the sparse one keep the precision as an operator "
     "(`covariance=\"auto\"` by its cost per iteration: conjugate-gradient Newton "
     "steps, `O(n K p)` per product); the others factorise it, each iteration making "
     "two passes over the rows for every pair of classes (the rows' predictor "
     "covariances and the curvature's Gram blocks; under VO the second-order "
     "expansion in place of the cubature on rows up to a trace of 1); newton-cholesky "
     "makes one pass. The small "
     "sets' ratios are fixed costs around fits of a few ms. This run's machine was 2-3x "
     "slower than usual (iris' newton-cholesky at 8.9 ms against 3.0-4.8 ms in the day's "
     "other runs): the small sets' ratios moved between 1.5 and 2.3 across those runs, "
     "the larger sets' by up to 30%.", ""),
    ("blas_rate", "The Hessian pass against the BLAS",
     "python benchmarks/bench_passes.py --blas-rate",
     "The pass that forms the curvature in default fits of the binary and "
     "multinomial logistic and Lasso speed problems (those of 1 ms and more), against "
     "numpy's `D.T @ (D * w)` on the same design once per Gram block: 1 is the BLAS's "
     "rate, above 1 less arithmetic than a product per block (the symmetric product, "
     "the feature pairs); one run. The large binary and Lasso passes run at about "
     "the BLAS's rate. Fits whose precision is an operator (digits' ten classes, the "
     "2,000 x 500 and the sparse multinomial sets) form no Hessian and are not listed.", ""),
    ("stochastic", "Stochastic VAN",
     "python benchmarks/bench_stochastic.py --passes",
     "Logistic regression, `C=1`: passes over the data (epochs, iterations) to "
     "reach 1e-3 / 1e-6 relative of the optimal objective (deterministic); last "
     "column one sVAN pass over one of `SGDClassifier.partial_fit`, minimum of 3 "
     "alternating repeats (two runs agreed within 4%).", ""),
    ("one_pass", "One pass of a stream",
     "python benchmarks/bench_stochastic.py --one-pass",
     "One pass of `partial_fit` in batches of 1% of the rows: held-out log-loss over "
     "the full-batch VO fit's, mean (worst) over the splits; the last column the "
     "distance of the stream's mean to the full VI posterior's. A sequential-Bayes "
     "stream approximates the posterior: on breast_cancer the full VI posterior "
     "itself predicts 6.35% worse than the VO fit, so no such stream ends within 1% "
     "of the VO fit there.", ""),
    ("dask", "Fits on dask arrays",
     "python benchmarks/bench_stochastic.py --dask --quick",
     "Against the same rows in memory; minimum of 3 alternating repeats.", ""),
    ("fuzz_sparse", "The Lasso family on degenerate designs",
     "python benchmarks/fuzz_sparse.py",
     "300 generated problems (5 to 1,000 rows, 2 to 300 correlated features over "
     "`e^-4..e^4`, duplicated and constant columns); a fit is bad when it ends "
     "above scikit-learn's objective at `tol=1e-14` by more than 1e-7 relative "
     "without a warning. Seeded.", ""),
    ("fuzz_logistic", "VANLogisticRegression on generated problems",
     "python benchmarks/fuzz_logistic.py",
     "483 problems (10 to 1,000 rows, 1 to 50 features, 2 to 5 classes, weights, "
     "`C` from 0.01 to 1e4); bad: objective above scikit-learn's at `tol=1e-12` "
     "by more than 1e-6 relative without a warning. Seeded.", ""),
    ("vae", "VAE: sVAN-D and sVAG-D against Adam (the paper's Figure 2c)",
     "python benchmarks/bench_vae.py",
     "A one-hidden-layer numpy VAE on digits trained through "
     "`VANOptimizer(covariance=\"diag\", stochastic=True)`; the same minibatches and "
     "latent draws for all; \"to Adam\": the first pass at or below Adam's value "
     "after 40 passes. `sigma0` is VAN's step dial: too large diverges in the first "
     "pass.", ""),
    ("rl", "Policy search: parameter-space exploration (the paper's Figure 4)",
     "python benchmarks/bench_rl.py --seeds 30 --tasks CartPole-v1 "
     "MountainCarContinuous-v0 Pendulum-v1 --methods 'VAN (parameter space)' CMA-ES",
     "Needs `gymnasium` and `cma`; mean +- sd over 30 seeds, then the standard "
     "error of each mean; the returns are deterministic.",
     "On Pendulum (a quadratic policy: no linear one swings it up) VAN's mean "
     "return is the highest at every checkpoint; on CartPole and MountainCar VAN "
     "and CMA-ES are level within 1.4 standard errors of the difference. "
     "`python benchmarks/bench_rl.py` adds random search and REINFORCE, which "
     "never reach MountainCar's flag (a deceptive reward)."),
]


def _path(key):
    return os.path.join(OUTPUTS, f"{key}.txt")


def run(key):
    """Run ``key``'s command from the repository's root and save its output."""
    _, _, command, _, _ = next(s for s in SECTIONS if s[0] == key)
    root = os.path.dirname(HERE)
    print(f"running {command}", flush=True)
    done = subprocess.run(shlex.split(command), cwd=root, capture_output=True, text=True,
                          check=True)
    stamp = (f"# ran {datetime.date.today().isoformat()} on {platform.machine()}, "
             f"Python {platform.python_version()}")
    os.makedirs(OUTPUTS, exist_ok=True)
    with open(_path(key), "w") as out:
        out.write(stamp + "\n" + done.stdout.rstrip() + "\n")


def compose():
    """RESULTS.md from the saved outputs (a section without one says so)."""
    parts = [HEADER]
    for key, title, command, before, after in SECTIONS:
        parts.append(f"## {title}")
        if os.path.exists(_path(key)):  # the command, the date it ran and the protocol
            stamp, _, table = open(_path(key)).read().partition("\n")
            parts.append(f"`{command}` ({stamp.lstrip('# ')}.) {before}".rstrip())
            parts.append("```\n" + table.rstrip() + "\n```")
        else:
            parts.append(f"`{command}` {before} Not run yet: `python benchmarks/make_results.py "
                         f"--run {key}`.".strip())
        if after:
            parts.append(after)
    with open(os.path.join(HERE, "RESULTS.md"), "w") as out:
        out.write("\n\n".join(parts) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", nargs="*", default=(), metavar="KEY")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    if args.list:
        for key, title, command, _, _ in SECTIONS:
            print(f"{key:<16}{command}")
        return
    for key in args.run:
        run(key)
    compose()


if __name__ == "__main__":
    sys.exit(main())
