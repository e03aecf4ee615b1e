"""Small data sets made with numpy, so lessons train something visible
without downloading anything."""

import numpy as np


def spiral(points_per_class=100, classes=3, noise=0.2, seed=0):
    """``classes`` interleaved spiral arms in the plane.

    Returns ``(x, y)``: float32 points of shape [N, 2] in about [-1, 1] and
    int32 labels of shape [N]. A linear model cannot separate the arms; a
    small MLP can, which makes the effect of training easy to see.
    """
    rng = np.random.RandomState(seed)
    n = points_per_class * classes
    x = np.zeros((n, 2), np.float32)
    y = np.zeros(n, np.int32)
    for c in range(classes):
        idx = slice(points_per_class * c, points_per_class * (c + 1))
        r = np.linspace(0.0, 1.0, points_per_class)
        t = np.linspace(c * 4.0, (c + 1) * 4.0, points_per_class) + \
            rng.randn(points_per_class) * noise
        x[idx] = np.c_[r * np.sin(t), r * np.cos(t)]
        y[idx] = c
    order = rng.permutation(n)
    return x[order], y[order]


def linear_regression(n=256, features=3, noise=0.05, seed=0):
    """Points of ``y = x @ w + b + noise`` with known ``w`` and ``b``.

    Returns ``(x, y, w, b)``: x float32 [n, features], y float32 [n, 1].
    """
    rng = np.random.RandomState(seed)
    w = rng.uniform(-2, 2, (features, 1)).astype(np.float32)
    b = np.float32(rng.uniform(-1, 1))
    x = rng.uniform(-1, 1, (n, features)).astype(np.float32)
    y = (x @ w + b + noise * rng.randn(n, 1)).astype(np.float32)
    return x, y, w, b
