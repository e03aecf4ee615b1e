"""minitf's own BLAS (minitf/kernels/cpu/blas.py): the products it computes,
the operand layouts it reads in place, and the kernels it loads."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from minitf.kernels.cpu import blas

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _operand(rng, rows, cols, dtype, how):
    """A ``rows x cols`` operand laid out as ``how``: contiguous, a transposed
    view, a row slice of a wider array, or a strided view BLAS cannot read."""
    if how == "c":
        return rng.standard_normal((rows, cols)).astype(dtype)
    if how == "t":
        return rng.standard_normal((cols, rows)).astype(dtype).T
    if how == "wide":
        return rng.standard_normal((rows, cols + 3)).astype(dtype)[:, 1:cols + 1]
    return rng.standard_normal((rows, 2 * cols)).astype(dtype)[:, ::2]


@pytest.fixture(params=["library", "numpy"])
def route(request, monkeypatch):
    """Both ways a product can go: the library's ctypes call, or ``np.matmul``
    when numpy's OpenBLAS runs the same kernels (``blas._numpy_same``)."""
    blas.ready()
    monkeypatch.setattr(blas, "_numpy_same", request.param == "numpy")
    return request.param


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("how_a", ["c", "t", "wide", "strided"])
@pytest.mark.parametrize("how_b", ["c", "t", "wide", "strided"])
def test_gemm_matches_numpy_for_every_layout(dtype, how_a, how_b, route):
    rng = np.random.default_rng(1)
    a = _operand(rng, 7, 5, dtype, how_a)
    b = _operand(rng, 5, 3, dtype, how_b)
    out = blas.gemm(a, b, one_thread=route == "numpy")
    assert out.dtype == dtype and out.shape == (7, 3) and out.flags.c_contiguous
    np.testing.assert_allclose(out, a.astype(np.float64) @ b.astype(np.float64),
                               rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)


def test_gemm_writes_into_the_given_rows(route):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((4, 6)).astype(np.float32), \
        rng.standard_normal((6, 5)).astype(np.float32)
    big = np.full((10, 5), 7.0, np.float32)
    assert blas.gemm(a, b, big[3:7], one_thread=route == "numpy") is not None
    np.testing.assert_allclose(big[3:7], a @ b, rtol=1e-5)
    assert (big[:3] == 7).all() and (big[7:] == 7).all()


@pytest.mark.parametrize("shape", [(0, 4, 3), (3, 0, 4), (3, 4, 0), (1, 1, 1), (1, 9, 1)])
def test_gemm_edge_shapes(shape, route):
    m, k, n = shape
    a = np.ones((m, k), np.float32)
    b = np.ones((k, n), np.float32)
    out = blas.gemm(a, b, one_thread=route == "numpy")
    assert out.shape == (m, n)
    assert (out == k).all()


def test_batched_matmul_broadcasts_as_numpy():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3, 40, 30)).astype(np.float32)
    b = rng.standard_normal((3, 30, 50)).astype(np.float32)     # 60k multiply-adds each
    out = blas.matmul(a, b)
    assert out.shape == (2, 3, 40, 50)
    np.testing.assert_allclose(out, np.matmul(a, b), rtol=1e-4, atol=1e-4)
    small = blas.matmul(a[..., :4, :4], b[..., :4, :4])          # below BATCH_MIN_PRODUCT
    np.testing.assert_allclose(small, np.matmul(a[..., :4, :4], b[..., :4, :4]), rtol=1e-5)


def test_coretype_follows_the_cpu_and_minitf_variable_not_openblas_variable():
    avx512 = set(blas.SKYLAKEX_FLAGS) | {"avx2", "fma"}
    assert blas.coretype(avx512, {}) == "SkylakeX"
    assert blas.coretype(avx512, {"OPENBLAS_CORETYPE": "Haswell"}) == "SkylakeX"
    assert blas.coretype({"avx2", "fma", "avx512f"}, {}) is None   # not all four subsets
    assert blas.coretype(avx512, {"MINITF_BLAS_CORETYPE": "Haswell"}) == "Haswell"


def _status_in_new_process(**env):
    code = ("import json, os, numpy as np; from minitf.kernels.cpu import blas; "
            "out = blas.gemm(np.eye(3, dtype=np.float32), np.ones((3, 2), np.float32)); "
            "print(json.dumps([blas.status(), [os.environ.get('OPENBLAS_CORETYPE'), "
            "os.environ.get('OPENBLAS_THREAD_TIMEOUT')], out.tolist()]))")
    full = dict(os.environ, PYTHONPATH=REPO, **env)
    for k, v in list(full.items()):
        if v is None:
            del full[k]
    out = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True,
                         text=True, timeout=60, check=True)
    return json.loads(out.stdout)


@pytest.mark.skipif(not blas.SKYLAKEX_FLAGS[0] in blas.cpu_flags(),
                    reason="this CPU has no AVX-512")
def test_loads_avx512_kernels_and_leaves_the_environment_as_it_was():
    pytest.importorskip("scipy_openblas32")
    (loaded, why), env_after, out = _status_in_new_process(OPENBLAS_CORETYPE="Haswell")
    assert loaded and "SkylakeX kernels" in why, why
    assert env_after == ["Haswell", None]    # put back for numpy and child processes
    assert out == [[1.0, 1.0]] * 3
    (loaded, why), _, _ = _status_in_new_process(MINITF_BLAS_CORETYPE="Haswell")
    assert loaded and "Haswell kernels (MINITF_BLAS_CORETYPE)" in why, why


def test_minitf_blas_numpy_opts_out():
    (loaded, why), _, out = _status_in_new_process(MINITF_BLAS="numpy")
    assert not loaded and "MINITF_BLAS=numpy" in why
    assert out == [[1.0, 1.0]] * 3


def test_openblas_thread_timeout_is_kept_when_set():
    _, env_after, _ = _status_in_new_process(OPENBLAS_THREAD_TIMEOUT="25")
    assert env_after[1] == "25"


class _Switch:
    """A BLAS thread switch that records what it was set to."""

    def __init__(self):
        self.counts = []

    def set_num_threads(self, n):
        self.counts.append(n)


def test_products_from_1m_multiply_adds_use_every_thread_unless_cores_are_shared(monkeypatch):
    from minitf.kernels import threads
    switch = _Switch()
    monkeypatch.setattr(threads, "_controllers", [(switch, 2)])
    monkeypatch.setattr(threads, "_current", None)
    monkeypatch.setattr(threads, "_shared", False)
    threads.use_threads_for((1 << 20) - 1)        # one thread
    threads.use_threads_for(256 * 64 * 128)       # an MLP's 2M product: both
    threads.use_threads_for(256 * 64 * 128)       # (no switch when nothing changes)
    threads.share_cores()                         # a server of a local cluster
    threads.use_threads_for(256 * 64 * 128)
    threads.use_threads_for(1 << 26)
    assert switch.counts == [1, 2, 1, 2]


def test_a_product_beside_another_runs_on_one_thread(monkeypatch):
    """OpenBLAS has one thread count for the library: two products started
    side by side with a thread per core each put four threads on two cores.
    While another product runs, or while the executor says it runs kernels
    side by side, a product keeps to one thread; alone, it has them all."""
    from minitf.kernels import threads
    switch = _Switch()
    monkeypatch.setattr(threads, "_controllers", [(switch, 2)])
    monkeypatch.setattr(threads, "_current", None)
    monkeypatch.setattr(threads, "_shared", False)
    monkeypatch.setattr(threads, "_running", 0)
    monkeypatch.setattr(threads, "_beside", 0)
    big = 1 << 26
    with threads.product(big):                    # alone: both threads
        assert switch.counts == [2]
        with threads.product(big):                # started beside it: one
            assert switch.counts == [2, 1]
    assert threads._running == 0
    with threads.product(big):                    # alone again
        pass
    threads.begin_beside()                        # the executor hands one over
    with threads.product(big):
        pass
    threads.end_beside()
    with threads.product(big):
        pass
    assert switch.counts == [2, 1, 2, 1, 2]
    with threads.product(0):                      # a convolution's chunks: one
        pass
    assert switch.counts[-1] == 1 and threads._running == 0 and threads._beside == 0


def test_products_go_through_numpy_when_it_runs_the_same_kernels(monkeypatch):
    """A ctypes call costs 10-14 us more than numpy's own call into BLAS: when
    numpy's OpenBLAS runs the kernels minitf's would, a product on one thread
    goes to ``np.matmul``. One on several threads still calls the library
    (numpy's copy spins its threads for 0.1 s after each), and so does one
    added into its output (beta = 1)."""
    from minitf.kernels import threads
    if not blas.ready():
        pytest.skip("minitf's own BLAS is not loaded: " + blas.status()[1])
    assert blas._numpy_same == (blas._lib.core.lower() in threads.numpy_blas_cores())
    calls = []
    real = blas.np.matmul

    def matmul(*args, **kwargs):
        calls.append(args[0].shape)
        return real(*args, **kwargs)
    monkeypatch.setattr(blas.np, "matmul", matmul)
    a, b = np.ones((3, 4), np.float32), np.ones((4, 2), np.float32)
    for same in (True, False):
        monkeypatch.setattr(blas, "_numpy_same", same)
        del calls[:]
        out = blas.gemm(a, b, one_thread=True)
        np.testing.assert_array_equal(out, np.full((3, 2), 4.0, np.float32))
        assert calls == ([(3, 4)] if same else [])
        del calls[:]
        blas.gemm(a, b, out)                                # threaded: the library
        np.testing.assert_array_equal(out, np.full((3, 2), 4.0, np.float32))
        assert calls == []
        blas.gemm(a, b, out, accumulate=True, one_thread=True)   # beta = 1: the library
        np.testing.assert_array_equal(out, np.full((3, 2), 8.0, np.float32))
        assert calls == []
