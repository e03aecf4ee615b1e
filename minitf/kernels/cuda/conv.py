"""Convolutions, pooling and batch normalization on the GPU: one thread per output.

A GPU has thousands of threads, so the simplest layout is also a good first
one: each thread computes one element of the result on its own, reading
whatever it needs. Images are read through their four strides ``(sn, sh, sw,
sc)`` (elements per step along N, H, W, C), so one kernel serves NHWC and NCHW
alike: element ``(n, h, w, c)`` is at ``n*sn + h*sh + w*sw + c*sc``.

``conv2d_kernel`` -- thread = one output element ``y[n, p, q, o]``::

    acc = 0
    for i, j in taps: r, s = p*strh + i*dilh - top, q*strw + j*dilw - left
        if (r, s) inside the image:
            for c: acc += x[n, r, s, c] * w[i, j, c, o]
    y[n, p, q, o] = acc

``backprop_input_kernel`` -- thread = one input element ``dx[n, r, s, c]``, the
*gather* form of the gradient: which outputs read this element through tap
``(i, j)``? Those with ``p*strh = r + top - i*dilh``, when that divides::

    for i, j: p, q = (r + top - i*dilh) / strh, (s + left - j*dilw) / strw
        if both divide exactly and (p, q) is an output position:
            for o: acc += dy[n, p, q, o] * w[i, j, c, o]

``backprop_filter_kernel`` -- thread = one filter element ``dw[i, j, c, o]``,
summing ``x[n, r, s, c] * dy[n, p, q, o]`` over every image and output position.

Pooling: ``max_pool_kernel``/``avg_pool_kernel`` one thread per output;
``max_pool_grad_kernel`` one thread per output window, which finds the
window's winner and adds its gradient there with ``cuda.atomic.add``
(windows may overlap, so two threads can hit the same element);
``avg_pool_grad_kernel`` one thread per input element, gathering from the
windows that contain it.

Batch normalization: ``bn_stats_kernel`` one *block* per channel; its threads
stride over the channel's ``N*H*W`` elements and meet in a shared-memory tree
(as in ``reductions.py``), twice: for the mean, then for the squared
deviations from it. ``bn_grad_sums_kernel`` is the same for ``sum(dy)`` and
``sum(dy * (x - mean))``. ``bn_apply_kernel`` then computes every element as
``a[c] * u + b[c] * v + d[c]``. Everything accumulates in float64.
"""

import math

from numba import config, cuda, float64

THREADS = 8 if config.ENABLE_CUDASIM else 128   # per block in the per-channel kernels


@cuda.jit(device=True)
def _unravel4(t, d1, d2, d3):
    """``t`` -> ``(a, b, c, d)`` for a C-ordered ``[_, d1, d2, d3]`` index."""
    d = t % d3
    t //= d3
    c = t % d2
    t //= d2
    return t // d1, t % d1, c, d


@cuda.jit(cache=True)
def conv2d_kernel(x, xs, w, y, ys, H, W, C, KH, KW, OC, OH, OW, strh, strw, dilh, dilw,
                  top, left, total):
    t = cuda.grid(1)
    if t >= total:
        return
    n, p, q, o = _unravel4(t, OH, OW, OC)
    acc = 0.0
    for i in range(KH):
        r = p * strh + i * dilh - top
        if r < 0 or r >= H:
            continue
        for j in range(KW):
            s = q * strw + j * dilw - left
            if s < 0 or s >= W:
                continue
            base = n * xs[0] + r * xs[1] + s * xs[2]
            for c in range(C):
                acc += x[base + c * xs[3]] * w[((i * KW + j) * C + c) * OC + o]
    y[n * ys[0] + p * ys[1] + q * ys[2] + o * ys[3]] = acc


@cuda.jit(cache=True)
def backprop_input_kernel(dy, ds, w, dx, xs, H, W, C, KH, KW, OC, OH, OW, strh, strw, dilh,
                          dilw, top, left, total):
    t = cuda.grid(1)
    if t >= total:
        return
    n, r, s, c = _unravel4(t, H, W, C)
    acc = 0.0
    for i in range(KH):
        pn = r + top - i * dilh
        if pn < 0 or pn % strh != 0 or pn // strh >= OH:
            continue
        p = pn // strh
        for j in range(KW):
            qn = s + left - j * dilw
            if qn < 0 or qn % strw != 0 or qn // strw >= OW:
                continue
            q = qn // strw
            base = n * ds[0] + p * ds[1] + q * ds[2]
            for o in range(OC):
                acc += dy[base + o * ds[3]] * w[((i * KW + j) * C + c) * OC + o]
    dx[n * xs[0] + r * xs[1] + s * xs[2] + c * xs[3]] = acc


@cuda.jit(cache=True)
def backprop_filter_kernel(x, xs, dy, ds, dw, N, H, W, C, KH, KW, OC, OH, OW, strh, strw,
                           dilh, dilw, top, left, total):
    t = cuda.grid(1)
    if t >= total:
        return
    i, j, c, o = _unravel4(t, KW, C, OC)
    acc = 0.0
    for n in range(N):
        for p in range(OH):
            r = p * strh + i * dilh - top
            if r < 0 or r >= H:
                continue
            for q in range(OW):
                s = q * strw + j * dilw - left
                if s < 0 or s >= W:
                    continue
                acc += x[n * xs[0] + r * xs[1] + s * xs[2] + c * xs[3]] * \
                    dy[n * ds[0] + p * ds[1] + q * ds[2] + o * ds[3]]
    dw[t] = acc


@cuda.jit(cache=True)
def max_pool_kernel(x, xs, y, ys, H, W, C, KH, KW, OH, OW, strh, strw, top, left, lowest,
                    total):
    """TF's rule: start at the dtype's lowest value, take only greater ones."""
    t = cuda.grid(1)
    if t >= total:
        return
    n, p, q, c = _unravel4(t, OH, OW, C)
    best = lowest
    for r in range(max(p * strh - top, 0), min(p * strh - top + KH, H)):
        for s in range(max(q * strw - left, 0), min(q * strw - left + KW, W)):
            v = x[n * xs[0] + r * xs[1] + s * xs[2] + c * xs[3]]
            if v > best:
                best = v
    y[n * ys[0] + p * ys[1] + q * ys[2] + c * ys[3]] = best


@cuda.jit(cache=True)
def max_pool_grad_kernel(x, xs, dy, ds, dx, H, W, C, KH, KW, OH, OW, strh, strw, top, left,
                         total):
    """The window's winner: its first element, replaced by any later greater one."""
    t = cuda.grid(1)
    if t >= total:
        return
    n, p, q, c = _unravel4(t, OH, OW, C)
    r0 = max(p * strh - top, 0)
    s0 = max(q * strw - left, 0)
    where = n * xs[0] + r0 * xs[1] + s0 * xs[2] + c * xs[3]
    best = x[where]
    for r in range(r0, min(p * strh - top + KH, H)):
        for s in range(s0, min(q * strw - left + KW, W)):
            at = n * xs[0] + r * xs[1] + s * xs[2] + c * xs[3]
            if best < x[at]:
                best = x[at]
                where = at
    cuda.atomic.add(dx, where, dy[n * ds[0] + p * ds[1] + q * ds[2] + c * ds[3]])


@cuda.jit(cache=True)
def avg_pool_kernel(x, xs, y, ys, H, W, C, KH, KW, OH, OW, strh, strw, top, left, total):
    t = cuda.grid(1)
    if t >= total:
        return
    n, p, q, c = _unravel4(t, OH, OW, C)
    r0, r1 = max(p * strh - top, 0), min(p * strh - top + KH, H)
    s0, s1 = max(q * strw - left, 0), min(q * strw - left + KW, W)
    acc = 0.0
    for r in range(r0, r1):
        for s in range(s0, s1):
            acc += x[n * xs[0] + r * xs[1] + s * xs[2] + c * xs[3]]
    y[n * ys[0] + p * ys[1] + q * ys[2] + c * ys[3]] = acc / ((r1 - r0) * (s1 - s0))


@cuda.jit(cache=True)
def avg_pool_grad_kernel(dy, ds, dx, xs, H, W, C, KH, KW, OH, OW, strh, strw, top, left,
                         total):
    """Gather: the windows ``p`` whose rows ``p*strh - top .. + KH`` contain ``r``."""
    t = cuda.grid(1)
    if t >= total:
        return
    n, r, s, c = _unravel4(t, H, W, C)
    acc = 0.0
    p_lo = max(0, (r + top - KH) // strh + 1)
    q_lo = max(0, (s + left - KW) // strw + 1)
    for p in range(p_lo, min(OH, (r + top) // strh + 1)):
        rows = min(p * strh - top + KH, H) - max(p * strh - top, 0)
        for q in range(q_lo, min(OW, (s + left) // strw + 1)):
            cols = min(q * strw - left + KW, W) - max(q * strw - left, 0)
            acc += dy[n * ds[0] + p * ds[1] + q * ds[2] + c * ds[3]] / (rows * cols)
    dx[n * xs[0] + r * xs[1] + s * xs[2] + c * xs[3]] = acc


# -- batch normalization -----------------------------------------------------------------------
@cuda.jit(device=True)
def _at(xs, HW, W, k, c):
    """Offset of the ``k``-th element (over N, H, W) of channel ``c``."""
    n = k // HW
    hw = k % HW
    return n * xs[0] + (hw // W) * xs[1] + (hw % W) * xs[2] + c * xs[3]


@cuda.jit(device=True)
def _block_sum(cache, value):
    """The sum of ``value`` over the block's threads (a shared-memory tree)."""
    t = cuda.threadIdx.x
    cache[t] = value
    cuda.syncthreads()
    s = THREADS // 2
    while s > 0:
        if t < s:
            cache[t] += cache[t + s]
        cuda.syncthreads()
        s //= 2
    total = cache[0]
    cuda.syncthreads()
    return total


@cuda.jit(cache=True)
def bn_stats_kernel(x, xs, R, HW, W, mean, var):
    """Block ``c``: ``mean[c]`` and the biased ``var[c]`` of channel ``c`` (two passes)."""
    c = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cache = cuda.shared.array(THREADS, float64)
    acc = 0.0
    for k in range(t, R, THREADS):
        acc += x[_at(xs, HW, W, k, c)]
    m = _block_sum(cache, acc) / R
    acc = 0.0
    for k in range(t, R, THREADS):
        d = x[_at(xs, HW, W, k, c)] - m
        acc += d * d
    v = _block_sum(cache, acc) / R
    if t == 0:
        mean[c] = m
        var[c] = v


@cuda.jit(cache=True)
def bn_grad_sums_kernel(dy, x, xs, R, HW, W, mean, sum_dy, sum_dy_xc):
    """Block ``c``: ``sum(dy)`` and ``sum(dy * (x - mean))`` over channel ``c``."""
    c = cuda.blockIdx.x
    t = cuda.threadIdx.x
    cache = cuda.shared.array(THREADS, float64)
    a = 0.0
    b = 0.0
    for k in range(t, R, THREADS):
        at = _at(xs, HW, W, k, c)
        g = dy[at]
        a += g
        b += g * (x[at] - mean[c])
    a = _block_sum(cache, a)
    b = _block_sum(cache, b)
    if t == 0:
        sum_dy[c] = a
        sum_dy_xc[c] = b


@cuda.jit(cache=True)
def bn_apply_kernel(u, v, xs, out, a, b, d, C, HW, W, total):
    """``out = a[c] * u + b[c] * v + d[c]`` elementwise (``v`` unused when ``b`` is 0)."""
    t = cuda.grid(1)
    if t >= total:
        return
    c = t % C
    k = t // C
    at = _at(xs, HW, W, k, c)
    out[at] = a[c] * u[at] + b[c] * v[at] + d[c]


@cuda.jit(cache=True)
def bn_coefficients_kernel(mean, var, scale, offset, epsilon, a, d, C):
    """Per channel: ``a = scale / sqrt(var + eps)``, ``d = offset - mean * a``."""
    c = cuda.grid(1)
    if c < C:
        a[c] = scale[c] / math.sqrt(var[c] + epsilon)
        d[c] = offset[c] - mean[c] * a[c]


@cuda.jit(cache=True)
def bn_outputs_kernel(mean, var, old_mean, old_var, factor, count, out_mean, out_var, C):
    """TF's reported statistics: the unbiased variance, blended with the running
    values by ``exponential_avg_factor`` (``factor`` 1: the batch's alone)."""
    c = cuda.grid(1)
    if c < C:
        unbiased = var[c] * count / max(count - 1, 1)
        if factor == 1.0:
            out_mean[c] = mean[c]
            out_var[c] = unbiased
        else:
            out_mean[c] = (1 - factor) * old_mean[c] + factor * mean[c]
            out_var[c] = (1 - factor) * old_var[c] + factor * unbiased


@cuda.jit(cache=True)
def bn_grad_coefficients_kernel(sum_dy, sum_dy_xc, mean, var, scale, epsilon, count,
                                training, a, b, d, dscale, C):
    """Per channel, the gradient's ``dx = a*dy + b*x + d`` and ``dscale``."""
    c = cuda.grid(1)
    if c < C:
        inv = 1.0 / math.sqrt(var[c] + epsilon)
        ds = sum_dy_xc[c] * inv
        dscale[c] = ds
        a[c] = scale[c] * inv
        if training and count > 0:
            b[c] = -a[c] * inv * ds / count
            d[c] = -a[c] * sum_dy[c] / count - mean[c] * b[c]
        else:
            b[c] = 0.0
            d[c] = 0.0
