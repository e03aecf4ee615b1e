"""Convolutions, pooling and batch normalization as Numba loop nests (NHWC).

A 2-D convolution, written as the loop nest it is::

    for n, p, q in output positions:                       # N x OH x OW
        for o in range(OC):
            y[n, p, q, o] = 0
            for i in range(KH):                            # the window's taps
                for j in range(KW):
                    r, s = p*sh + i*dh - top, q*sw + j*dw - left
                    if 0 <= r < H and 0 <= s < W:          # padding reads as 0
                        for c in range(C):
                            y[n, p, q, o] += x[n, r, s, c] * w[i, j, c, o]

The three inner loops over ``(i, j, c)`` are one dot product of length
``K = KH*KW*C`` between the patch under the window and a column of
``w.reshape(K, OC)``. So the fast way (:func:`im2col_kernel`, "image to
columns") first copies every patch into a row of a matrix ``cols[N*OH*OW, K]``
and then lets BLAS compute ``y = cols @ w`` at the speed of a matrix product:
the copy costs K times the input's size, the product does the work in
cache-sized blocks with every vector lane busy. The gradients are products
of the same matrix: ``dw = cols.T @ dy`` and ``dcols = dy @ w.T``, whose rows
:func:`col2im_kernel` adds back onto the input positions they came from.

The direct loop nest is here as well (:func:`conv_direct_kernel`); the front
(``minitf/kernels/cpu/__init__.py``) picks the faster one for a shape, and
tests/benchmarks/bench_cnn.py measures both.

Pooling and batch normalization are one pass (or two) over the input, with
the channels innermost so that the compiler can use vector instructions across
channels. Every kernel takes a ``parallel`` flag that picks a ``prange`` loop
over independent items (images, output rows, chunks of rows) or a plain one
(see ``compile.py``).
"""

import numba
import numpy as np
from numba import prange

from minitf.kernels.cpu.reductions import readonly

_F64 = np.dtype(np.float64)


# -- im2col / col2im -------------------------------------------------------------------------
# Both take the image as ``[N, H, W*C]`` (a free reshape of NHWC) and the channel
# count ``C``: with dilation 1, the taps of one window row that lie inside the
# image are one contiguous run of that row, copied (or added) in one flat loop.

@numba.njit(inline="always")
def _tap_range(q, sw, dw, pl, kw, W):
    """The taps ``j0 <= j < j1`` of window column ``q`` that fall inside the image."""
    j0 = 0
    while j0 < kw and q * sw + j0 * dw - pl < 0:
        j0 += 1
    j1 = kw
    while j1 > j0 and q * sw + (j1 - 1) * dw - pl >= W:
        j1 -= 1
    return j0, j1


@numba.njit(inline="always")
def _patch_row(x, C, n, p, q, kh, kw, sh, sw, dh, dw, pt, pl, out):
    H, W = x.shape[1], x.shape[2] // C
    j0, j1 = _tap_range(q, sw, dw, pl, kw, W)
    run = kw * C
    for i in range(kh):
        base = i * run
        r = p * sh + i * dh - pt
        # Slices indexed from 0 in every loop: numba then drops its negative-
        # index checks and the loops vectorize. (No ``row[:] = 0``: in a
        # parallel=True kernel an array expression becomes a threaded loop.)
        row = out[base:base + run]
        if r < 0 or r >= H:
            for k in range(run):
                row[k] = 0
            continue
        for k in range(j0 * C):
            row[k] = 0
        tail = row[j1 * C:]
        for k in range(tail.size):
            tail[k] = 0
        xr = x[n, r]
        if dw == 1:
            # the taps inside the image: one contiguous run of the image row
            start = (q * sw + j0 - pl) * C
            length = (j1 - j0) * C
            dst = row[j0 * C:j0 * C + length]
            src = xr[start:start + length]
            for k in range(length):
                dst[k] = src[k]
        else:
            for j in range(j0, j1):
                dst = row[j * C:j * C + C]
                src = xr[(q * sw + j * dw - pl) * C:]
                for c in range(C):
                    dst[c] = src[c]


def im2col_kernel(x, C, kh, kw, sh, sw, dh, dw, pt, pl, oh, ow, n0, cols, parallel):
    """``cols[row, (i*KW + j)*C + c] = x[n, r, s, c]`` (0 in the padding) for every
    output position ``row = ((n - n0)*OH + p)*OW + q`` of images ``n0..``::

        for row in prange(rows):
            n, p, q = unravel(row)
            for i, j in taps:  r, s = p*sh + i*dh - top, q*sw + j*dw - left
                cols[row, tap*C : tap*C + C] = x[n, r, s, :]   (or 0)
    """
    rows = cols.shape[0]
    if parallel:
        for row in prange(rows):
            n = n0 + row // (oh * ow)
            pq = row % (oh * ow)
            _patch_row(x, C, n, pq // ow, pq % ow, kh, kw, sh, sw, dh, dw, pt, pl, cols[row])
    else:
        for row in range(rows):
            n = n0 + row // (oh * ow)
            pq = row % (oh * ow)
            _patch_row(x, C, n, pq // ow, pq % ow, kh, kw, sh, sw, dh, dw, pt, pl, cols[row])


@numba.njit(inline="always")
def _tap_row(x, k, kh, kw, sh, dh, dw, pt, pl, oh, ow, n0, out):
    """Row ``k`` (tap ``i, j``) of the one-channel columns: for every output row
    ``(n, p)``, the image row under that tap, shifted by the tap's column."""
    H, W = x.shape[1], x.shape[2]
    i, j = k // kw, k % kw
    off = j * dw - pl
    q0 = min(max(-off, 0), ow)            # the q whose column q + off is in the image
    q1 = max(min(W - off, ow), q0)
    for b in range(out.shape[0] // ow):
        r = (b % oh) * sh + i * dh - pt
        dst = out[b * ow:(b + 1) * ow]
        if r < 0 or r >= H:
            for q in range(ow):
                dst[q] = 0
            continue
        for q in range(q0):
            dst[q] = 0
        for q in range(q1, ow):
            dst[q] = 0
        part = dst[q0:q1]
        src = x[n0 + b // oh, r, q0 + off:q1 + off]
        for q in range(part.size):
            part[q] = src[q]


def im2col_one_channel_kernel(x, kh, kw, sh, dh, dw, pt, pl, oh, ow, n0, cols, parallel):
    """im2col for a one-channel image with column stride 1, written transposed:
    ``cols[i*KW + j, row] = x[n, r, q + j*dw - left]`` (0 in the padding).

    With one channel, a row of :func:`im2col_kernel`'s matrix is KW runs of one
    to KW numbers each, too short for the copy loops to pay. Transposed, the
    taps are rows and each output row ``(n, p)`` is one contiguous run of the
    image row under the tap, OW numbers long; BLAS reads ``cols.T`` in place
    as the same ``[rows, K]`` matrix::

        for tap in prange(KH*KW):
            for (n, p):  cols[tap, (n, p, :)] = x[n, r, j*dw - left : ... + OW]
    """
    if parallel:
        for k in prange(cols.shape[0]):
            _tap_row(x, k, kh, kw, sh, dh, dw, pt, pl, oh, ow, n0, cols[k])
    else:
        for k in range(cols.shape[0]):
            _tap_row(x, k, kh, kw, sh, dh, dw, pt, pl, oh, ow, n0, cols[k])


@numba.njit(inline="always")
def _add_patches(cols, C, n, n0, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, dx):
    H, W = dx.shape[1], dx.shape[2] // C
    run = kw * C
    image = dx[n]
    for r in range(H):              # (zeroed here, while the image is about to be used)
        row = image[r]
        for k in range(row.size):
            row[k] = 0
    for p in range(oh):
        for q in range(ow):
            row = cols[((n - n0) * oh + p) * ow + q]
            j0, j1 = _tap_range(q, sw, dw, pl, kw, W)
            for i in range(kh):
                r = p * sh + i * dh - pt
                if r < 0 or r >= H:
                    continue
                base = i * run
                out = dx[n, r]
                if dw == 1:
                    start = (q * sw + j0 - pl) * C
                    length = (j1 - j0) * C
                    dst = out[start:start + length]
                    src = row[base + j0 * C:base + j0 * C + length]
                    for k in range(length):
                        dst[k] += src[k]
                else:
                    for j in range(j0, j1):
                        dst = out[(q * sw + j * dw - pl) * C:]
                        src = row[base + j * C:]
                        for c in range(C):
                            dst[c] += src[c]


def col2im_kernel(cols, C, kh, kw, sh, sw, dh, dw, pt, pl, oh, ow, n0, dx, parallel):
    """The transpose of :func:`im2col_kernel`: ``dx[n, r, s, c] += cols[row, tap*C + c]``
    (each image of ``dx`` is zeroed first, so ``dx`` may come uninitialised).

    Patches of one image overlap (when the stride is smaller than the window),
    so the parallel items are whole images: two threads never add into the
    same element::

        for n in prange(images):
            for p, q, i, j: dx[n, r, s, :] += cols[row(n, p, q), tap*C : tap*C + C]
    """
    images = cols.shape[0] // (oh * ow)
    if parallel:
        for m in prange(images):
            _add_patches(cols, C, n0 + m, n0, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, dx)
    else:
        for m in range(images):
            _add_patches(cols, C, n0 + m, n0, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, dx)


def im2col_signature(np_dtype):
    t = numba.from_dtype(np_dtype)
    i = numba.int64
    return numba.void(readonly(np_dtype, 3), i, i, i, i, i, i, i, i, i, i, i, i, t[:, ::1],
                      numba.boolean)


def im2col_one_channel_signature(np_dtype):
    t = numba.from_dtype(np_dtype)
    i = numba.int64
    return numba.void(readonly(np_dtype, 3), i, i, i, i, i, i, i, i, i, i, t[:, ::1],
                      numba.boolean)


def col2im_signature(np_dtype):
    t = numba.from_dtype(np_dtype)
    i = numba.int64
    return numba.void(readonly(np_dtype, 2), i, i, i, i, i, i, i, i, i, i, i, i, t[:, :, ::1],
                      numba.boolean)


# -- the direct loop nest --------------------------------------------------------------------
@numba.njit(inline="always")
def _direct_row(x, w, n, p, sh, sw, dh, dw, pt, pl, y):
    H, W, C = x.shape[1], x.shape[2], x.shape[3]
    kh, kw, OC = w.shape[0], w.shape[1], w.shape[3]
    for q in range(y.shape[2]):
        acc = y[n, p, q]
        for o in range(OC):
            acc[o] = 0
        for i in range(kh):
            r = p * sh + i * dh - pt
            if r < 0 or r >= H:
                continue
            for j in range(kw):
                s = q * sw + j * dw - pl
                if s < 0 or s >= W:
                    continue
                for c in range(C):
                    v = x[n, r, s, c]
                    wr = w[i, j, c]
                    for o in range(OC):
                        acc[o] += v * wr[o]


def conv_direct_kernel(x, w, sh, sw, dh, dw, pt, pl, y, parallel):
    """Conv2D as the loop nest of the module docstring, with ``o`` innermost (both
    ``w[i, j, c, :]`` and ``y[n, p, q, :]`` are contiguous, so that loop runs in
    vector registers)::

        for (n, p) in prange(N * OH):
            for q: y[n, p, q, :] = 0
                for i, j (inside the image), c:
                    y[n, p, q, :] += x[n, r, s, c] * w[i, j, c, :]
    """
    items = y.shape[0] * y.shape[1]
    oh = y.shape[1]
    if parallel:
        for item in prange(items):
            _direct_row(x, w, item // oh, item % oh, sh, sw, dh, dw, pt, pl, y)
    else:
        for item in range(items):
            _direct_row(x, w, item // oh, item % oh, sh, sw, dh, dw, pt, pl, y)


def direct_signature(np_dtype):
    t = numba.from_dtype(np_dtype)
    i = numba.int64
    return numba.void(readonly(np_dtype, 4), readonly(np_dtype, 4), i, i, i, i, i, i,
                      t[:, :, :, ::1], numba.boolean)


# -- pooling ---------------------------------------------------------------------------------
@numba.njit(inline="always")
def _max_row(x, n, p, kh, kw, sh, sw, pt, pl, lowest, y):
    H, W, C = x.shape[1], x.shape[2], x.shape[3]
    for q in range(y.shape[2]):
        out = y[n, p, q]
        for c in range(C):
            out[c] = lowest
        for i in range(kh):
            r = p * sh + i - pt
            if r < 0 or r >= H:
                continue
            for j in range(kw):
                s = q * sw + j - pl
                if s < 0 or s >= W:
                    continue
                xr = x[n, r, s]
                for c in range(C):
                    if xr[c] > out[c]:
                        out[c] = xr[c]


def max_pool_kernel(x, kh, kw, sh, sw, pt, pl, lowest, y, parallel):
    """``y[n, p, q, c]`` = the largest ``x`` in the window, TF's way: start at the
    dtype's lowest value and take only greater values (NaN never wins)::

        for (n, p) in prange(N * OH):
            for q: y[n, p, q, :] = lowest
                for i, j inside the image: y[n, p, q, :] = max(y[n, p, q, :], x[n, r, s, :])
    """
    oh = y.shape[1]
    if parallel:
        for item in prange(y.shape[0] * oh):
            _max_row(x, item // oh, item % oh, kh, kw, sh, sw, pt, pl, lowest, y)
    else:
        for item in range(y.shape[0] * oh):
            _max_row(x, item // oh, item % oh, kh, kw, sh, sw, pt, pl, lowest, y)


@numba.njit(inline="always")
def _max_grad_image(x, dy, n, kh, kw, sh, sw, pt, pl, dx, best, winner):
    # Elements are indexed in full (x[n, r, s, c]), not through row views: a view
    # costs a reference-count update, and a parallel launch's threads all update
    # the same count.
    H, W, C = x.shape[1], x.shape[2], x.shape[3]
    image = dx[n].reshape(H * W * C)
    for k in range(image.size):     # (zeroed here, while the image is about to be used)
        image[k] = 0
    for p in range(dy.shape[1]):
        r0 = max(p * sh - pt, 0)
        r1 = min(p * sh - pt + kh, H)
        for q in range(dy.shape[2]):
            s0 = max(q * sw - pl, 0)
            s1 = min(q * sw - pl + kw, W)
            first = (r0 * W + s0) * C
            for c in range(C):
                best[n, c] = x[n, r0, s0, c]
                winner[n, c] = first + c
            for r in range(r0, r1):
                for s in range(s0, s1):
                    here = (r * W + s) * C
                    for c in range(C):          # branch-free, so that it vectorizes
                        v = x[n, r, s, c]
                        take = best[n, c] < v
                        best[n, c] = v if take else best[n, c]
                        winner[n, c] = here + c if take else winner[n, c]
            for c in range(C):                  # the window's gradient to its winners
                image[winner[n, c]] += dy[n, p, q, c]


def max_pool_grad_kernel(x, dy, kh, kw, sh, sw, pt, pl, dx, best, winner, parallel):
    """TF's MaxPoolGrad: each window's gradient to the element that won it, found
    again from ``x``: the first element of the window, replaced by any later one
    that is strictly greater (ties go to the first, as in TF); each image of
    ``dx`` is zeroed first, so ``dx`` may come uninitialised. The search runs
    across the channels, so it vectorizes; windows overlap, so the parallel
    items are images (``best``/``winner``: scratch rows ``[N, C]``, ``winner``
    the flat index of each channel's winner in the image)::

        for n in prange(N):
            for p, q:
                best[:] = x[first cell];  winner[:] = first cell
                for each cell:  where best < x[cell]: best, winner = x[cell], cell
                dx[n].flat[winner] += dy[n, p, q, :]
    """
    if parallel:
        for n in prange(x.shape[0]):
            _max_grad_image(x, dy, n, kh, kw, sh, sw, pt, pl, dx, best, winner)
    else:
        for n in range(x.shape[0]):
            _max_grad_image(x, dy, n, kh, kw, sh, sw, pt, pl, dx, best, winner)


@numba.njit(inline="always")
def _avg_row(x, n, p, kh, kw, sh, sw, pt, pl, y):
    H, W, C = x.shape[1], x.shape[2], x.shape[3]
    r0 = max(p * sh - pt, 0)
    r1 = min(p * sh - pt + kh, H)
    for q in range(y.shape[2]):
        s0 = max(q * sw - pl, 0)
        s1 = min(q * sw - pl + kw, W)
        out = y[n, p, q]
        for c in range(C):
            out[c] = 0
        for r in range(r0, r1):
            for s in range(s0, s1):
                xr = x[n, r, s]
                for c in range(C):
                    out[c] += xr[c]
        scale = 1.0 / ((r1 - r0) * (s1 - s0))
        for c in range(C):
            out[c] *= scale


def avg_pool_kernel(x, kh, kw, sh, sw, pt, pl, y, parallel):
    """``y[n, p, q, :]`` = the mean of the window's elements inside the image::

        for (n, p) in prange(N * OH):
            for q: y[n, p, q, :] = sum(x[n, r, s, :] for r, s in window & image) / count
    """
    oh = y.shape[1]
    if parallel:
        for item in prange(y.shape[0] * oh):
            _avg_row(x, item // oh, item % oh, kh, kw, sh, sw, pt, pl, y)
    else:
        for item in range(y.shape[0] * oh):
            _avg_row(x, item // oh, item % oh, kh, kw, sh, sw, pt, pl, y)


@numba.njit(inline="always")
def _avg_grad_image(dy, n, kh, kw, sh, sw, pt, pl, dx):
    H, W, C = dx.shape[1], dx.shape[2], dx.shape[3]
    for p in range(dy.shape[1]):
        r0 = max(p * sh - pt, 0)
        r1 = min(p * sh - pt + kh, H)
        for q in range(dy.shape[2]):
            s0 = max(q * sw - pl, 0)
            s1 = min(q * sw - pl + kw, W)
            scale = 1.0 / ((r1 - r0) * (s1 - s0))
            g = dy[n, p, q]
            for r in range(r0, r1):
                for s in range(s0, s1):
                    out = dx[n, r, s]
                    for c in range(C):
                        out[c] += g[c] * scale


def avg_pool_grad_kernel(dy, kh, kw, sh, sw, pt, pl, dx, parallel):
    """AvgPoolGrad: each window's gradient, divided by its count, added to every
    element of the window inside the image (per image, as windows overlap)::

        for n in prange(N):
            for p, q, r, s in window & image: dx[n, r, s, :] += dy[n, p, q, :] / count
    """
    if parallel:
        for n in prange(dx.shape[0]):
            _avg_grad_image(dy, n, kh, kw, sh, sw, pt, pl, dx)
    else:
        for n in range(dx.shape[0]):
            _avg_grad_image(dy, n, kh, kw, sh, sw, pt, pl, dx)


def pool_signature(np_dtype):
    t = numba.from_dtype(np_dtype)
    i = numba.int64
    return numba.void(readonly(np_dtype, 4), i, i, i, i, i, i, t, t[:, :, :, ::1],
                      numba.boolean)


def max_grad_signature(np_dtype, grad_dtype):
    t = numba.from_dtype(np_dtype)
    g = numba.from_dtype(grad_dtype)
    i = numba.int64
    return numba.void(readonly(np_dtype, 4), readonly(grad_dtype, 4), i, i, i, i, i, i,
                      g[:, :, :, ::1], t[:, ::1], numba.int64[:, ::1], numba.boolean)


def avg_signature(np_dtype):
    t = numba.from_dtype(np_dtype)
    i = numba.int64
    return numba.void(readonly(np_dtype, 4), i, i, i, i, i, i, t[:, :, :, ::1], numba.boolean)


def avg_grad_signature(np_dtype):
    t = numba.from_dtype(np_dtype)
    i = numba.int64
    return numba.void(readonly(np_dtype, 4), i, i, i, i, i, i, t[:, :, :, ::1], numba.boolean)


# -- batch normalization ---------------------------------------------------------------------
def channel_sums_kernel(x, center, partial, parallel):
    """Per-channel sums of ``x[R, C]`` around ``center[C]``, in float64, one partial
    sum per chunk of rows: ``partial[k, 0, c] = sum(x[r, c] - center[c])`` and
    ``partial[k, 1, c] = sum((x[r, c] - center[c]) ** 2)`` over the rows of chunk
    ``k`` (the caller adds the chunks up)::

        for k in prange(chunks):
            for r in rows of chunk k:  d = x[r, :] - center
                partial[k, 0, :] += d;  partial[k, 1, :] += d * d
    """
    chunks = partial.shape[0]
    rows = x.shape[0]
    step = (rows + chunks - 1) // chunks
    if parallel:
        for k in prange(chunks):
            _sum_chunk(x, center, k * step, min(rows, (k + 1) * step), partial[k])
    else:
        for k in range(chunks):
            _sum_chunk(x, center, k * step, min(rows, (k + 1) * step), partial[k])


@numba.njit(inline="always")
def _sum_chunk(x, center, r0, r1, out):
    C = x.shape[1]
    for c in range(C):
        out[0, c] = 0.0
        out[1, c] = 0.0
    for r in range(r0, r1):
        xr = x[r]
        for c in range(C):
            d = xr[c] - center[c]
            out[0, c] += d
            out[1, c] += d * d


def channel_sums_signature(np_dtype):
    return numba.void(readonly(np_dtype, 2), readonly(_F64, 1), numba.float64[:, :, ::1],
                      numba.boolean)


def grad_sums_kernel(dy, x, mean, partial, parallel):
    """``partial[k, 0, c] = sum(dy[r, c])``, ``partial[k, 1, c] = sum(dy[r, c] *
    (x[r, c] - mean[c]))`` over chunk ``k`` of the rows (float64)."""
    chunks = partial.shape[0]
    rows = x.shape[0]
    step = (rows + chunks - 1) // chunks
    if parallel:
        for k in prange(chunks):
            _grad_chunk(dy, x, mean, k * step, min(rows, (k + 1) * step), partial[k])
    else:
        for k in range(chunks):
            _grad_chunk(dy, x, mean, k * step, min(rows, (k + 1) * step), partial[k])


@numba.njit(inline="always")
def _grad_chunk(dy, x, mean, r0, r1, out):
    C = x.shape[1]
    for c in range(C):
        out[0, c] = 0.0
        out[1, c] = 0.0
    for r in range(r0, r1):
        xr = x[r]
        gr = dy[r]
        for c in range(C):
            out[0, c] += gr[c]
            out[1, c] += gr[c] * (xr[c] - mean[c])


def grad_sums_signature(np_dtype):
    return numba.void(readonly(np_dtype, 2), readonly(np_dtype, 2), readonly(_F64, 1),
                      numba.float64[:, :, ::1], numba.boolean)


def affine_rows_kernel(x, a, b, y, parallel):
    """``y[r, c] = x[r, c] * a[c] + b[c]``: normalization once the per-channel
    factors are known (``a = scale / sqrt(var + eps)``, ``b = offset - mean * a``)::

        for r in prange(R): y[r, :] = x[r, :] * a + b
    """
    if parallel:
        for r in prange(x.shape[0]):
            _affine_row(x[r], a, b, y[r])
    else:
        for r in range(x.shape[0]):
            _affine_row(x[r], a, b, y[r])


@numba.njit(inline="always")
def _affine_row(xr, a, b, yr):
    for c in range(xr.size):
        yr[c] = xr[c] * a[c] + b[c]


def affine_signature(np_dtype):
    t = numba.from_dtype(np_dtype)
    return numba.void(readonly(np_dtype, 2), readonly(np_dtype, 1), readonly(np_dtype, 1),
                      t[:, ::1], numba.boolean)


def bn_backprop_kernel(dy, x, a, b, d, dx, parallel):
    """``dx[r, c] = dy[r, c] * a[c] + x[r, c] * b[c] + d[c]``: the training gradient
    ``scale*inv * (dy - mean(dy) - xhat * mean(dy * xhat))`` with the per-channel
    terms folded into ``a``, ``b`` and ``d`` by the caller::

        for r in prange(R): dx[r, :] = dy[r, :] * a + x[r, :] * b + d
    """
    if parallel:
        for r in prange(x.shape[0]):
            _backprop_row(dy[r], x[r], a, b, d, dx[r])
    else:
        for r in range(x.shape[0]):
            _backprop_row(dy[r], x[r], a, b, d, dx[r])


@numba.njit(inline="always")
def _backprop_row(gr, xr, a, b, d, out):
    for c in range(xr.size):
        out[c] = gr[c] * a[c] + xr[c] * b[c] + d[c]


def bn_backprop_signature(np_dtype):
    t = numba.from_dtype(np_dtype)
    return numba.void(readonly(np_dtype, 2), readonly(np_dtype, 2), readonly(np_dtype, 1),
                      readonly(np_dtype, 1), readonly(np_dtype, 1), t[:, ::1], numba.boolean)


# -- BiasAdd ---------------------------------------------------------------------------------
def bias_rows_kernel(x, b, y, parallel):
    """Channels last: ``y[r, c] = x[r, c] + b[c]`` over rows ``[R, C]``::

        for r in prange(R): y[r, :] = x[r, :] + b
    """
    if parallel:
        for r in prange(x.shape[0]):
            _bias_row(x[r], b, y[r])
    else:
        for r in range(x.shape[0]):
            _bias_row(x[r], b, y[r])


@numba.njit(inline="always")
def _bias_row(xr, b, yr):
    for c in range(xr.size):
        yr[c] = xr[c] + b[c]


def bias_relu_rows_kernel(y, b, relu, parallel):
    """A fused kernel's epilogue (a convolution's, see ``conv2d(..., bias=, relu=)``,
    or a matrix product's, ``bias_relu``), in place on rows ``[R, C]`` of its
    output while they are still in the cache: the bias add and, with ``relu``,
    the Relu after it (NaN stays NaN, as in Relu)::

        for r in prange(R):
            v = y[r, :] + b
            y[r, :] = v if not relu else (v where v > 0 or v is NaN, else 0)
    """
    if parallel:
        for r in prange(y.shape[0]):
            _bias_relu_row(y[r], b, relu)
    else:
        for r in range(y.shape[0]):
            _bias_relu_row(y[r], b, relu)


@numba.njit(inline="always")
def _bias_relu_row(yr, b, relu):
    if relu:
        for c in range(yr.size):
            v = yr[c] + b[c]
            yr[c] = v if v > 0 or v != v else 0
    else:
        for c in range(yr.size):
            yr[c] = yr[c] + b[c]


def bias_planes_kernel(x, b, y, parallel):
    """Channels first: ``y[n, c, k] = x[n, c, k] + b[c]`` over ``[N, C, H*W]``::

        for (n, c) in prange(N * C): y[n, c, :] = x[n, c, :] + b[c]
    """
    C = x.shape[1]
    if parallel:
        for item in prange(x.shape[0] * C):
            _bias_plane(x[item // C, item % C], b[item % C], y[item // C, item % C])
    else:
        for item in range(x.shape[0] * C):
            _bias_plane(x[item // C, item % C], b[item % C], y[item // C, item % C])


@numba.njit(inline="always")
def _bias_plane(xp, bc, yp):
    for k in range(xp.size):
        yp[k] = xp[k] + bc


def bias_rows_signature(np_dtype):
    t = numba.from_dtype(np_dtype)
    return numba.void(readonly(np_dtype, 2), readonly(np_dtype, 1), t[:, ::1], numba.boolean)


def bias_relu_rows_signature(np_dtype):
    t = numba.from_dtype(np_dtype)
    return numba.void(t[:, ::1], readonly(np_dtype, 1), numba.boolean, numba.boolean)


def bias_planes_signature(np_dtype):
    t = numba.from_dtype(np_dtype)
    return numba.void(readonly(np_dtype, 3), readonly(np_dtype, 1), t[:, :, ::1],
                      numba.boolean)
