"""How many threads the BLAS gets for skvan's dense work.

numpy and scipy each bring an OpenBLAS (the wheels' ``libscipy_openblas``), each
with its own pool of threads. A threaded call in one right after a threaded call
in the other waits for a core: the first pool's workers keep spinning for a while
after their work. A solver that alternates the two (a pass over the rows with
numpy, then a Cholesky factor with scipy's LAPACK) pays that at each iteration,
and small LAPACK calls that thread at all gain nothing from it
(``python benchmarks/bench_passes.py --lapack-threads``). The contexts here put
the BLAS on one thread around such work (every library, or scipy's alone
around its LAPACK calls), through threadpoolctl, as scikit-learn limits the
BLAS around its own small kernels.

The passes over the rows run on the user's threads, at every size: a
one-thread limit around the whole loop of small fits makes them slower once each
fit follows fits of its own, and protects them only from another library's
threads still spinning right after that library's work (``python
benchmarks/bench_passes.py --blas-threads`` compares the two).
"""

import contextlib
import functools
import os
import threading


#: The context that does nothing (reusable), where no limit is needed.
_NO_CONTEXT = contextlib.nullcontext()


@functools.lru_cache(maxsize=None)
def _blas_libraries():
    """threadpoolctl's controllers of the loaded BLAS libraries, inspected once."""
    from threadpoolctl import ThreadpoolController

    return tuple(ThreadpoolController().select(user_api="blas").lib_controllers)


@functools.lru_cache(maxsize=None)
def _lapack_libraries():
    """The BLAS libraries scipy's LAPACK runs on: the one its wheel brings (under
    scipy's directory or the ``scipy.libs`` beside it), else every library (a
    scipy built on a shared BLAS)."""
    import scipy

    package = os.path.dirname(os.path.abspath(scipy.__file__))
    places = (package + os.sep, os.path.join(os.path.dirname(package), "scipy.libs") + os.sep)
    own = tuple(lib for lib in _blas_libraries()
                if os.path.abspath(lib.filepath).startswith(places))
    return own or _blas_libraries()


class _OneBlasThread:
    """Each BLAS library on one thread inside the context, as it was after.

    What ``ThreadpoolController.limit(limits=1, user_api="blas")`` does, through
    the controllers :func:`_blas_libraries` found once: a path enters it hundreds
    of times, and the limit inspects every library again at each. The KKT work
    (:func:`_one_blas_thread`) uses it. The outermost context (of any thread)
    sets and restores the counts; nested ones, such as the KKT work inside a
    path's, only count themselves."""

    _lock = threading.Lock()
    _depth = 0
    _saved = ()
    _libraries = staticmethod(_blas_libraries)

    def __enter__(self):
        cls = type(self)
        with cls._lock:
            if cls._depth == 0:
                cls._saved = [(lib, lib.num_threads) for lib in cls._libraries()]
                for lib, n_threads in cls._saved:
                    if n_threads != 1:
                        lib.set_num_threads(1)
            cls._depth += 1
        return self

    def __exit__(self, *exc_info):
        cls = type(self)
        with cls._lock:
            cls._depth -= 1
            if cls._depth == 0:
                for lib, n_threads in cls._saved:
                    if n_threads != 1:
                        lib.set_num_threads(n_threads)


#: Below this many parameters the KKT work runs as it is: its systems are too
#: small for the BLAS to thread, and a limit costs microseconds a call, which a
#: path of small fits makes by the hundred (``python benchmarks/bench_lasso.py
#: --path``).
ONE_THREAD_FROM = 64


def _one_blas_thread(n_params):
    """A context with the BLAS on one thread (threadpoolctl, as scikit-learn
    limits it around small kernels) for the KKT work on ``n_params`` parameters:
    its solves are dense systems of the support's size, where a second thread
    gains little and, on a machine whose cores are shared, waits for its
    wake-up (``python benchmarks/bench_wide.py``'s wide Lasso)."""
    if n_params < ONE_THREAD_FROM:
        return _NO_CONTEXT
    return _OneBlasThread()


#: The sizes ``n`` of ``n x n`` LAPACK work (Cholesky factors, their inverses,
#: triangular solves) that runs on one BLAS thread (:func:`lapack_one_thread`):
#: right after a threaded numpy product a second thread waits for its wake-up
#: far longer than small factorisations take, and only from a few thousand does
#: it pay (``python benchmarks/bench_passes.py --lapack-threads`` measures both);
#: below 16 the factorisations do not thread, but the inverse from a factor
#: (``potri``) does at every size (``lapack_one_thread(n, inverse=True)``).
#: :func:`lapack_threading` changes it for a block.
LAPACK_ONE_THREAD = (16, 2048)
_lapack_sizes = [LAPACK_ONE_THREAD]


@contextlib.contextmanager
def lapack_threading(sizes):
    """Within the block, the LAPACK work on ``n x n`` matrices with ``low <= n <=
    high`` (``sizes = (low, high)``) runs on one thread, as the benchmarks
    compare rules (``(inf, 0)``: none does)."""
    _lapack_sizes.append(tuple(sizes))
    try:
        yield
    finally:
        _lapack_sizes.pop()


#: How deep the current thread is in :class:`_LapackOneThread` contexts.
_in_lapack_context = threading.local()


class _LapackOneThread(_OneBlasThread):
    """:class:`_OneBlasThread` for scipy's LAPACK library alone
    (:func:`_lapack_libraries`): numpy's threads are not in its calls' way, and
    one library costs half the switching (a few microseconds, at each of a
    fit's factorisations)."""

    _lock = threading.Lock()
    _depth = 0
    _saved = ()
    _libraries = staticmethod(_lapack_libraries)

    def __enter__(self):
        _in_lapack_context.depth = getattr(_in_lapack_context, "depth", 0) + 1
        return super().__enter__()

    def __exit__(self, *exc_info):
        _in_lapack_context.depth -= 1
        return super().__exit__(*exc_info)


def lapack_one_thread(n, inverse=False):
    """A context with scipy's LAPACK on one thread for work on an ``n x n``
    matrix if ``n`` is within :data:`LAPACK_ONE_THREAD` (or the sizes of the
    :func:`lapack_threading` block), else none; with ``inverse`` (``potri``,
    which threads at every size) from ``n = 1`` up to the same largest size.

    None either inside such a context of the same thread (the solver enters one
    around its whole loop): a nested one only counted itself, at the price of a
    lock and an object at each factorisation, solve and inverse of an iteration."""
    low, high = _lapack_sizes[-1]
    if inverse and low <= high:
        low = 1
    if low <= n <= high and not getattr(_in_lapack_context, "depth", 0):
        return _LapackOneThread()
    return _NO_CONTEXT
