"""Linear algebra: inverses, determinants, solves, Cholesky, diagonals, einsum.

Every op works on the last two axes and batches over the others
(``tf.matrix_inverse`` of a ``[5, 3, 3]`` tensor inverts five matrices).

* ``MatrixInverse``, ``MatrixDeterminant``, ``Cholesky``, ``MatrixSolve``,
  ``MatrixTriangularSolve``: rows whose kernels call the backend (LAPACK
  through numpy on the CPU, one thread per matrix on a GPU);
* ``MatrixDiagV3``, ``MatrixDiagPartV3``, ``MatrixSetDiagV3``,
  ``MatrixBandPart``: they only move data, so their kernels are numpy (as
  array ops are) and run on every device;
* ``Einsum``: the equation is planned once when the op is built into a
  kernel - which letters are batch, contracted and free - and every step
  is then transposes and one batched matmul, the same plan ``tensordot``
  (built from ``Transpose``/``Reshape``/``MatMul`` ops, as TF does) spells
  out in the graph.

``tf.eye``, ``tf.trace``, ``tf.matrix_transpose`` and ``tf.tensordot`` are
built from these ops as TF builds them. Gradients are TF's
(``tensorflow/python/ops/linalg_grad.py``); they need only these ops and
matmul.
"""

import numpy as np

from minitf.framework import dtypes, errors
from minitf.framework.op_def import ANY_DTYPE, BACKEND, OpDef, declare
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops, math_ops, reduction_ops
from minitf.ops.core import (CONST, FLOAT_TYPES, NUMBER_TYPES, check_dtype, convert_to_tensor,
                             make_op, name_scope, shape_str)

_LAPACK = ("float32", "float64")


def _square_check(x, what):
    if x.ndim < 2:
        raise errors.InvalidArgumentError(None, None, "Input must have rank >= 2, got %d"
                                          % x.ndim)
    if x.shape[-1] != x.shape[-2]:
        raise errors.InvalidArgumentError(
            None, None, "Input matrix must be square: %s is %dx%d" % (what, x.shape[-2],
                                                                     x.shape[-1]))


def _matrices(n, dtype, k=0, batch=()):
    """Well-conditioned example matrices: diagonally dominant, symmetric positive
    definite (so every op of this module is defined on them)."""
    r = ((np.arange(int(np.prod(batch)) * n * n) * 5 + k) % 7 - 3).reshape(batch + (n, n))
    m = r * 0.25 + np.swapaxes(r, -1, -2) * 0.25 + np.eye(n) * (n + 2)
    return m.astype(dtype)


def _lapack_row(name, inputs, attrs, kernel, gradient, examples):
    return declare(OpDef(name, inputs=inputs, attrs=attrs, gradient=gradient,
                         devices={"CPU": _LAPACK, "GPU": _LAPACK}, kernel=kernel,
                         kernel_reads=BACKEND, examples=examples))


# ================================================================= MatrixInverse ===
def _inverse_kernel(op, backend):
    adjoint, inverse = op.get_attr("adjoint"), backend.matrix_inverse

    def compute(ctx, inputs):
        _square_check(inputs[0], "MatrixInverse")
        return [inverse(inputs[0], adjoint)]
    return compute


def _inverse_grad(op, grad):
    """``d inv(A) = -inv(A) dA inv(A)``, so ``dL/dA = -inv(A)^T G inv(A)^T``."""
    ainv = op.outputs[0]
    adjoint = op.get_attr("adjoint")
    return [-math_ops.matmul(ainv, math_ops.matmul(grad, ainv, adjoint_a=adjoint,
                                                   adjoint_b=not adjoint),
                             adjoint_a=not adjoint)]


MATRIX_INVERSE = _lapack_row(
    "MatrixInverse", ("input",), ("adjoint", "T"), _inverse_kernel, _inverse_grad,
    lambda dt: [([_matrices(3, dt)], lambda x: matrix_inverse(x)),
                ([_matrices(4, dt, 1, (2,))], lambda x: matrix_inverse(x, adjoint=True))])


# ============================================================= MatrixDeterminant ===
def _determinant_kernel(op, backend):
    det = backend.matrix_determinant

    def compute(ctx, inputs):
        _square_check(inputs[0], "MatrixDeterminant")
        return [det(inputs[0])]
    return compute


def _determinant_grad(op, grad):
    """``d det(A) / dA = det(A) * inv(A)^T``."""
    a, c = op.inputs[0], op.outputs[0]
    multipliers = array_ops.expand_dims(array_ops.expand_dims(grad * c, -1), -1)
    return [multipliers * matrix_inverse(a, adjoint=True)]


MATRIX_DETERMINANT = _lapack_row(
    "MatrixDeterminant", ("input",), ("T",), _determinant_kernel, _determinant_grad,
    lambda dt: [([_matrices(3, dt)], lambda x: matrix_determinant(x)),
                ([_matrices(2, dt, 3, (3,))], lambda x: matrix_determinant(x))])


# ====================================================================== Cholesky ===
def _cholesky_kernel(op, backend):
    chol = backend.cholesky

    def compute(ctx, inputs):
        _square_check(inputs[0], "Cholesky")
        return [chol(inputs[0])]
    return compute


def _cholesky_grad(op, grad):
    """TF's (Murray 2016): with ``L = chol(A)``,
    ``dA = sym(L^-T Phi(L^T dL) L^-1) / 2`` where Phi takes the lower triangle
    and halves the diagonal."""
    lower = op.outputs[0]
    n = lower.shape[-1].value
    if n is None:
        raise LookupError("minitf needs the matrix size of %s to differentiate it" % op.name)
    batch = lower.shape.as_list()[:-2]
    if None in batch:
        raise LookupError("minitf needs the batch shape of %s to differentiate it" % op.name)
    dt = lower.dtype.base_dtype
    l_inverse = matrix_triangular_solve(lower, eye(n, batch_shape=batch, dtype=dt), lower=True)
    middle = math_ops.matmul(lower, grad, adjoint_a=True)
    middle = matrix_set_diag(middle, 0.5 * matrix_diag_part(middle))
    middle = matrix_band_part(middle, -1, 0)
    grad_a = math_ops.matmul(math_ops.matmul(l_inverse, middle, adjoint_a=True), l_inverse)
    grad_a = grad_a + matrix_transpose(grad_a)
    return [grad_a * 0.5]


CHOLESKY = _lapack_row(
    "Cholesky", ("input",), ("T",), _cholesky_kernel, _cholesky_grad,
    lambda dt: [([_matrices(3, dt)], lambda x: cholesky(x)),
                ([_matrices(4, dt, 2, (2,))], lambda x: cholesky(x))])


# =================================================================== MatrixSolve ===
def _rhs(n, m, dtype, k=0, batch=()):
    return (((np.arange(int(np.prod(batch)) * n * m) * 3 + k) % 5 - 2) * 0.5).reshape(
        batch + (n, m)).astype(dtype)


def _check_rhs(a, b):
    _square_check(a, "matrix")
    if b.ndim != a.ndim or b.shape[-2] != a.shape[-1] or b.shape[:-2] != a.shape[:-2]:
        raise errors.InvalidArgumentError(
            None, None, "Input matrix and right-hand side must have the same number of rows "
            "and batch shape: %s vs. %s" % (list(a.shape), list(b.shape)))


def _solve_kernel(op, backend):
    adjoint, solve = op.get_attr("adjoint"), backend.matrix_solve

    def compute(ctx, inputs):
        _check_rhs(*inputs)
        return [solve(inputs[0], inputs[1], adjoint)]
    return compute


def _solve_grad(op, grad):
    a = op.inputs[0]
    adjoint = op.get_attr("adjoint")
    c = op.outputs[0]
    grad_b = matrix_solve(a, grad, adjoint=not adjoint)
    if adjoint:
        grad_a = -math_ops.matmul(c, grad_b, adjoint_b=True)
    else:
        grad_a = -math_ops.matmul(grad_b, c, adjoint_b=True)
    return grad_a, grad_b


MATRIX_SOLVE = _lapack_row(
    "MatrixSolve", ("matrix", "rhs"), ("adjoint", "T"), _solve_kernel, _solve_grad,
    lambda dt: [([_matrices(3, dt), _rhs(3, 2, dt)], lambda a, b: matrix_solve(a, b)),
                ([_matrices(3, dt, 1, (2,)), _rhs(3, 1, dt, 1, (2,))],
                 lambda a, b: matrix_solve(a, b, adjoint=True))])


def _triangular_kernel(op, backend):
    lower, adjoint = op.get_attr("lower"), op.get_attr("adjoint")
    solve = backend.triangular_solve

    def compute(ctx, inputs):
        _check_rhs(*inputs)
        return [solve(inputs[0], inputs[1], lower, adjoint)]
    return compute


def _triangular_grad(op, grad):
    a = op.inputs[0]
    adjoint, lower = op.get_attr("adjoint"), op.get_attr("lower")
    c = op.outputs[0]
    grad_b = matrix_triangular_solve(a, grad, lower=lower, adjoint=not adjoint)
    if adjoint:
        grad_a = -math_ops.matmul(c, grad_b, adjoint_b=True)
    else:
        grad_a = -math_ops.matmul(grad_b, c, adjoint_b=True)
    grad_a = matrix_band_part(grad_a, -1, 0) if lower else matrix_band_part(grad_a, 0, -1)
    return grad_a, grad_b


MATRIX_TRIANGULAR_SOLVE = _lapack_row(
    "MatrixTriangularSolve", ("matrix", "rhs"), ("lower", "adjoint", "T"), _triangular_kernel,
    _triangular_grad,
    lambda dt: [([_matrices(3, dt), _rhs(3, 2, dt)],
                 lambda a, b: matrix_triangular_solve(a, b)),
                ([_matrices(4, dt, 1, (2,)), _rhs(4, 3, dt, 2, (2,))],
                 lambda a, b: matrix_triangular_solve(a, b, lower=False, adjoint=True))])


# ============================================= diagonals and bands: data movement ===
# The ``k`` input of the V3 diagonal ops may name a band of diagonals in TF;
# minitf handles one diagonal (``k`` a single offset, 0 for the main one).

def _offset(k):
    k = np.asarray(k).reshape(-1)
    if k.size != 1:
        raise errors.UnimplementedError(None, None, "minitf's matrix diagonal ops take one "
                                        "diagonal (k a single offset), got k=%s" % k.tolist())
    return int(k[0])


def _diagonal_index(rows, cols, k):
    """Row and column indices of diagonal ``k`` of a rows x cols matrix."""
    start_r, start_c = max(-k, 0), max(k, 0)
    n = max(0, min(rows - start_r, cols - start_c))
    return np.arange(n) + start_r, np.arange(n) + start_c


def _diag_size(n, k, rows, cols):
    """TF's output size of MatrixDiag: unspecified sizes (-1) make the smallest
    matrix diagonal ``k`` of length ``n`` fits in, square if both are unspecified."""
    if rows == -1 and cols == -1:
        return n + abs(k), n + abs(k)
    if rows == -1:
        return n + max(-k, 0), cols
    if cols == -1:
        return rows, n + max(k, 0)
    return rows, cols


def _matrix_diag_kernel(op, backend):
    def compute(ctx, inputs):
        diagonal, k, num_rows, num_cols, padding = inputs
        k = _offset(k)
        n = diagonal.shape[-1]
        rows, cols = _diag_size(n, k, int(num_rows), int(num_cols))
        out = np.full(diagonal.shape[:-1] + (rows, cols), padding, dtype=diagonal.dtype)
        r, c = _diagonal_index(rows, cols, k)
        if r.size != n:
            raise errors.InvalidArgumentError(
                None, None, "The number of diagonal elements (%d) does not fit diagonal %d of "
                "a %dx%d matrix" % (n, k, rows, cols))
        out[..., r, c] = diagonal
        return [out]
    return compute


def _matrix_diag_grad(op, grad):
    return (matrix_diag_part(grad, k=op.inputs[1]), None, None, None, None)


_DIAG_DEVICES = {"CPU": ANY_DTYPE, "GPU": ("bool",) + tuple(d.name for d in FLOAT_TYPES)}
MATRIX_DIAG_V3 = declare(OpDef(
    "MatrixDiagV3", inputs=("diagonal", "k", "num_rows", "num_cols", "padding_value"),
    attrs=("T", "align"), gradient=_matrix_diag_grad, devices=_DIAG_DEVICES,
    kernel=_matrix_diag_kernel, host_memory_inputs=(1, 2, 3)))


def _matrix_diag_part_kernel(op, backend):
    def compute(ctx, inputs):
        x, k, padding = inputs
        r, c = _diagonal_index(x.shape[-2], x.shape[-1], _offset(k))
        return [np.ascontiguousarray(x[..., r, c])]
    return compute


def _matrix_diag_part_grad(op, grad):
    x = op.inputs[0]
    return (matrix_set_diag(array_ops.zeros_like(x), grad, k=op.inputs[1]), None, None)


MATRIX_DIAG_PART_V3 = declare(OpDef(
    "MatrixDiagPartV3", inputs=("input", "k", "padding_value"), attrs=("T", "align"),
    gradient=_matrix_diag_part_grad, devices=_DIAG_DEVICES,
    kernel=_matrix_diag_part_kernel, host_memory_inputs=(1,)))


def _matrix_set_diag_kernel(op, backend):
    def compute(ctx, inputs):
        x, diagonal, k = inputs
        r, c = _diagonal_index(x.shape[-2], x.shape[-1], _offset(k))
        if diagonal.shape != x.shape[:-2] + (r.size,):
            raise errors.InvalidArgumentError(
                None, None, "diagonal must have shape %s, got %s"
                % (list(x.shape[:-2] + (r.size,)), list(diagonal.shape)))
        out = np.array(x, copy=True)
        out[..., r, c] = diagonal
        return [out]
    return compute


def _matrix_set_diag_grad(op, grad):
    k = op.inputs[2]
    diagonal = op.inputs[1]
    return (matrix_set_diag(grad, array_ops.zeros_like(diagonal), k=k),
            matrix_diag_part(grad, k=k), None)


MATRIX_SET_DIAG_V3 = declare(OpDef(
    "MatrixSetDiagV3", inputs=("input", "diagonal", "k"), attrs=("T", "align"),
    gradient=_matrix_set_diag_grad, devices=_DIAG_DEVICES,
    kernel=_matrix_set_diag_kernel, host_memory_inputs=(2,)))


def _band_part_kernel(op, backend):
    """Keep ``0 <= row - col <= num_lower`` and ``0 <= col - row <= num_upper``
    (a negative bound keeps that whole triangle); zero the rest."""
    def compute(ctx, inputs):
        x, lower, upper = inputs
        lower, upper = int(lower), int(upper)
        rows, cols = x.shape[-2], x.shape[-1]
        if lower > rows or upper > cols:
            raise errors.InvalidArgumentError(
                None, None, "num_lower must be negative or less or equal to number of rows "
                "(%d) got: %d" % (rows, lower) if lower > rows else
                "num_upper must be negative or less or equal to number of columns (%d) got: %d"
                % (cols, upper))
        d = np.arange(rows)[:, None] - np.arange(cols)[None, :]
        keep = ((lower < 0) | (d <= lower)) & ((upper < 0) | (-d <= upper))
        return [np.where(keep, x, np.zeros((), x.dtype))]
    return compute


def _band_part_grad(op, grad):
    return matrix_band_part(grad, op.inputs[1], op.inputs[2]), None, None


MATRIX_BAND_PART = declare(OpDef(
    "MatrixBandPart", inputs=("input", "num_lower", "num_upper"), attrs=("T", "Tindex"),
    gradient=_band_part_grad, devices=_DIAG_DEVICES, kernel=_band_part_kernel,
    host_memory_inputs=(1, 2)))


# ======================================================================== Einsum ===
def parse_equation(equation, n_inputs):
    """``"ij,jk->ik"`` as (["ij", "jk"], "ik"); without ``->`` the output is the
    letters that appear once, in alphabetical order (numpy's and TF's rule)."""
    eq = equation.replace(" ", "")
    if "." in eq:
        raise errors.UnimplementedError(None, None, "minitf's einsum does not support "
                                        "ellipsis ('...') in %r" % equation)
    if "->" in eq:
        lhs, out = eq.split("->")
    else:
        lhs = eq
        letters = lhs.replace(",", "")
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    ins = lhs.split(",")
    if len(ins) != n_inputs:
        raise ValueError("Expected %d inputs for equation %r, got %d" % (len(ins), equation,
                                                                         n_inputs))
    if n_inputs not in (1, 2):
        raise errors.UnimplementedError(None, None, "minitf's einsum takes one or two "
                                        "operands, got %d" % n_inputs)
    for term in ins + [out]:
        if not term.isalpha() and term:
            raise ValueError("Invalid einsum equation %r" % equation)
        if len(set(term)) != len(term):
            raise errors.UnimplementedError(
                None, None, "minitf's einsum does not support a letter repeated within one "
                "operand (%r in %r): take the diagonal with tf.matrix_diag_part" % (term,
                                                                                  equation))
    for c in out:
        if not any(c in term for term in ins):
            raise ValueError("Output subscript %r does not appear in an input of %r"
                             % (c, equation))
    return ins, out


class _EinsumPlan:
    """How one equation runs: per operand, the letters summed away first and the
    permutation to ``[batch, free, contracted]`` (``[batch, contracted, free]``
    for the second); then one batched matmul and the output permutation."""

    def __init__(self, ins, out):
        self.ins, self.out = ins, out
        if len(ins) == 1:
            (a,) = ins
            self.sum_a = [i for i, c in enumerate(a) if c not in out]
            kept = [c for c in a if c in out]
            self.out_perm = [kept.index(c) for c in out]
            return
        a, b = ins
        self.batch = [c for c in a if c in b and c in out]
        self.contracted = [c for c in a if c in b and c not in out]
        self.free_a = [c for c in a if c not in b and c in out]
        self.free_b = [c for c in b if c not in a and c in out]
        self.sum_a = [i for i, c in enumerate(a) if c not in b and c not in out]
        self.sum_b = [i for i, c in enumerate(b) if c not in a and c not in out]
        rest_a = [c for c in a if c in b or c in out]
        rest_b = [c for c in b if c in a or c in out]
        self.perm_a = [rest_a.index(c) for c in self.batch + self.free_a + self.contracted]
        self.perm_b = [rest_b.index(c) for c in self.batch + self.contracted + self.free_b]
        made = self.batch + self.free_a + self.free_b
        self.out_perm = [made.index(c) for c in out]

    def run(self, backend, x, y=None):
        if y is None:
            if self.sum_a:
                x = backend.reduce("sum", x, tuple(self.sum_a), False)
            return backend.permute(x, self.out_perm)
        sizes = {}
        for term, value in zip(self.ins, (x, y)):
            for c, d in zip(term, value.shape):
                if sizes.setdefault(c, d) != d:
                    raise errors.InvalidArgumentError(
                        None, None, "Expected dimension %d for subscript %r of the einsum "
                        "operands, got %d (shapes %s and %s)"
                        % (sizes[c], c, d, list(x.shape), list(y.shape)))
        if self.sum_a:
            x = backend.reduce("sum", x, tuple(self.sum_a), False)
        if self.sum_b:
            y = backend.reduce("sum", y, tuple(self.sum_b), False)
        size = lambda letters: int(np.prod([sizes[c] for c in letters]))  # noqa: E731
        nb, nfa, nc, nfb = (size(self.batch), size(self.free_a), size(self.contracted),
                            size(self.free_b))
        x3 = backend.permute(x, self.perm_a).reshape(nb, nfa, nc)
        y3 = backend.permute(y, self.perm_b).reshape(nb, nc, nfb)
        z = backend.matmul(x3, y3).reshape(tuple(sizes[c] for c in
                                                 self.batch + self.free_a + self.free_b))
        return backend.permute(z, self.out_perm)


def _einsum_kernel(op, backend):
    plan = _EinsumPlan(*parse_equation(op.get_attr("equation"), op.get_attr("N")))
    return lambda ctx, inputs: [plan.run(backend, *inputs)]


def _einsum_grad(op, grad):
    """Each operand's gradient is itself an einsum: of the output gradient with
    the other operand, to the operand's letters. Letters only that operand had
    (summed away in the forward pass) are broadcast back."""
    ins, out = parse_equation(op.get_attr("equation"), op.get_attr("N"))
    grads = []
    for i, (term, x) in enumerate(zip(ins, op.inputs)):
        others = [t for j, t in enumerate(ins) if j != i]
        present = out + "".join(others)
        kept = "".join(c for c in term if c in present)
        operands = [grad] + [op.inputs[j] for j in range(len(ins)) if j != i]
        g = einsum("%s->%s" % (",".join([out] + others), kept), *operands)
        if kept != term:
            dims = x.shape.as_list() if x.shape.ndims is not None else None
            if dims is None or None in dims:
                raise LookupError("minitf needs the static shape of %s to differentiate "
                                  "%s" % (x.name, op.name))
            g = array_ops.reshape(g, [d if c in present else 1 for c, d in zip(term, dims)])
            g = g * array_ops.ones_like(x)
        grads.append(g)
    return grads


def _einsum_examples(dtype):
    def m(shape, k=0):
        return ((np.arange(int(np.prod(shape))) * 3 + k) % 7 - 3).reshape(shape).astype(dtype)
    return [([m((2, 3)), m((3, 4), 1)], lambda a, b: einsum("ij,jk->ik", a, b)),
            ([m((2, 2, 3)), m((2, 3, 4), 1)], lambda a, b: einsum("bij,bjk->bik", a, b)),
            ([m((3,)), m((4,), 2)], lambda a, b: einsum("i,j->ij", a, b)),
            ([m((2, 3)), m((2, 3), 3)], lambda a, b: einsum("ij,ij->i", a, b)),
            ([m((2, 3, 4))], lambda a: einsum("ijk->kj", a)),
            ([m((2, 3)), m((4, 3), 1)], lambda a, b: einsum("ij,kj", a, b))]


_EINSUM_CPU = ("float16", "bfloat16", "float32", "float64", "int32", "int64")
EINSUM = declare(OpDef(
    "Einsum", inputs=("*inputs",), attrs=("equation", "N", "T"), gradient=_einsum_grad,
    devices={"CPU": _EINSUM_CPU, "GPU": ("float16", "bfloat16", "float32", "float64")},
    kernel=_einsum_kernel, kernel_reads=BACKEND, examples=_einsum_examples))


# ============================================================ the tf.* functions ===
def _matrix_input(x, name, allowed=FLOAT_TYPES):
    t = convert_to_tensor(x, name=name)
    check_dtype(t, allowed, arg=name)
    if t.shape.ndims is not None and t.shape.ndims < 2:
        raise ValueError("Shape must be at least rank 2 but is rank %d" % t.shape.ndims)
    return t


def _square_shape(t, op_name):
    if t.shape.ndims is not None:
        rows, cols = t.shape[-2].value, t.shape[-1].value
        if rows is not None and cols is not None and rows != cols:
            raise ValueError("Dimensions must be equal, but are %d and %d for '{{node %s}}'"
                             % (rows, cols, op_name))
    return t.shape


def matrix_inverse(input, adjoint=False, name=None):  # noqa: A002
    """The inverse of each matrix (InvalidArgumentError if one is singular)."""
    with name_scope(name, "MatrixInverse", [input]) as scope:
        x = _matrix_input(input, "input")
        shape = _square_shape(x, scope[:-1])
        return make_op(MATRIX_INVERSE, [x], [x.dtype.base_dtype], [shape], name=scope,
                       attrs={"T": x.dtype.base_dtype, "adjoint": bool(adjoint)}).outputs[0]


def matrix_determinant(input, name=None):  # noqa: A002
    """The determinant of each matrix."""
    with name_scope(name, "MatrixDeterminant", [input]) as scope:
        x = _matrix_input(input, "input")
        shape = _square_shape(x, scope[:-1])
        out = TensorShape(None) if shape.ndims is None else TensorShape(shape.as_list()[:-2])
        return make_op(MATRIX_DETERMINANT, [x], [x.dtype.base_dtype], [out], name=scope,
                       attrs={"T": x.dtype.base_dtype}).outputs[0]


def cholesky(input, name=None):  # noqa: A002
    """Lower-triangular ``L`` with ``L L^T = input`` for each symmetric positive
    definite matrix (only the lower triangle is read; a matrix that is not
    positive definite gives NaN, as in TF)."""
    with name_scope(name, "Cholesky", [input]) as scope:
        x = _matrix_input(input, "input")
        shape = _square_shape(x, scope[:-1])
        return make_op(CHOLESKY, [x], [x.dtype.base_dtype], [shape], name=scope,
                       attrs={"T": x.dtype.base_dtype}).outputs[0]


def _solve(row, matrix, rhs, attrs, name):
    with name_scope(name, row.name, [matrix, rhs]) as scope:
        a = _matrix_input(matrix, "matrix")
        b = convert_to_tensor(rhs, dtype=a.dtype.base_dtype, name="rhs")
        _square_shape(a, scope[:-1])
        attrs = dict(attrs, T=a.dtype.base_dtype)
        return make_op(row, [a, b], [a.dtype.base_dtype], [b.shape], name=scope,
                       attrs=attrs).outputs[0]


def matrix_solve(matrix, rhs, adjoint=False, name=None):
    """``x`` with ``matrix @ x = rhs`` (``matrix^T`` with ``adjoint``)."""
    return _solve(MATRIX_SOLVE, matrix, rhs, {"adjoint": bool(adjoint)}, name)


def matrix_triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """``x`` with ``tri(matrix) @ x = rhs``, reading only the lower (or upper)
    triangle of ``matrix``."""
    return _solve(MATRIX_TRIANGULAR_SOLVE, matrix, rhs,
                  {"lower": bool(lower), "adjoint": bool(adjoint)}, name)


def _k_and_padding(k, padding_value, dtype):
    k_t = convert_to_tensor(k, dtype=dtypes.int32, name="k")
    pad = convert_to_tensor(padding_value, dtype=dtype, name="padding_value")
    return k_t, pad


def _static_offset(k_t):
    if k_t.op.op_def is CONST:
        return _offset(k_t.op.get_attr("value"))
    return None


def matrix_diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0,
                align="RIGHT_LEFT"):
    """A matrix (per batch entry) with ``diagonal`` on diagonal ``k``, the rest
    ``padding_value``."""
    with name_scope(name, "diag", [diagonal]) as scope:
        d = convert_to_tensor(diagonal, name="diagonal")
        k_t, pad = _k_and_padding(k, padding_value, d.dtype.base_dtype)
        rows_t = convert_to_tensor(num_rows, dtype=dtypes.int32, name="num_rows")
        cols_t = convert_to_tensor(num_cols, dtype=dtypes.int32, name="num_cols")
        shape = TensorShape(None)
        kv = _static_offset(k_t)
        if d.shape.ndims is not None and kv is not None and d.shape[-1].value is not None \
                and rows_t.op.op_def is CONST and cols_t.op.op_def is CONST:
            n = d.shape[-1].value
            rows, cols = _diag_size(n, kv, int(rows_t.op.get_attr("value")),
                                    int(cols_t.op.get_attr("value")))
            shape = TensorShape(d.shape.as_list()[:-1] + [rows, cols])
        return make_op(MATRIX_DIAG_V3, [d, k_t, rows_t, cols_t, pad], [d.dtype.base_dtype],
                       [shape], name=scope, attrs={"T": d.dtype.base_dtype,
                                                   "align": align}).outputs[0]


def matrix_diag_part(input, name="diag_part", k=0, padding_value=0,  # noqa: A002
                     align="RIGHT_LEFT"):
    """Diagonal ``k`` of each matrix."""
    with name_scope(name, "diag_part", [input]) as scope:
        x = _matrix_input(input, "input", NUMBER_TYPES + (dtypes.bool,))
        k_t, pad = _k_and_padding(k, padding_value, x.dtype.base_dtype)
        shape = TensorShape(None)
        kv = _static_offset(k_t)
        if x.shape.ndims is not None:
            dims = x.shape.as_list()
            rows, cols = dims[-2], dims[-1]
            n = None if rows is None or cols is None or kv is None else \
                max(0, min(rows - max(-kv, 0), cols - max(kv, 0)))
            shape = TensorShape(dims[:-2] + [n])
        return make_op(MATRIX_DIAG_PART_V3, [x, k_t, pad], [x.dtype.base_dtype], [shape],
                       name=scope, attrs={"T": x.dtype.base_dtype, "align": align}).outputs[0]


def matrix_set_diag(input, diagonal, name="set_diag", k=0,  # noqa: A002
                    align="RIGHT_LEFT"):
    """``input`` with diagonal ``k`` of each matrix replaced by ``diagonal``."""
    with name_scope(name, "set_diag", [input, diagonal]) as scope:
        x = _matrix_input(input, "input", NUMBER_TYPES + (dtypes.bool,))
        d = convert_to_tensor(diagonal, dtype=x.dtype.base_dtype, name="diagonal")
        k_t = convert_to_tensor(k, dtype=dtypes.int32, name="k")
        return make_op(MATRIX_SET_DIAG_V3, [x, d, k_t], [x.dtype.base_dtype], [x.shape],
                       name=scope, attrs={"T": x.dtype.base_dtype, "align": align}).outputs[0]


def matrix_band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """Keep the ``num_lower`` diagonals below and ``num_upper`` above the main one
    (negative: all of them); zero the rest. ``(-1, 0)`` is the lower triangle."""
    with name_scope(name, "MatrixBandPart", [input]) as scope:
        x = _matrix_input(input, "input", NUMBER_TYPES + (dtypes.bool,))
        lower = convert_to_tensor(num_lower, dtype=dtypes.int64, name="num_lower")
        upper = convert_to_tensor(num_upper, dtype=dtypes.int64, name="num_upper")
        return make_op(MATRIX_BAND_PART, [x, lower, upper], [x.dtype.base_dtype], [x.shape],
                       name=scope, attrs={"T": x.dtype.base_dtype,
                                          "Tindex": dtypes.int64}).outputs[0]


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """Swap the last two axes (a batch of transposes)."""
    with name_scope(name, "matrix_transpose", [a]):
        a = convert_to_tensor(a, name="a")
        rank = a.shape.ndims
        if rank is None:
            raise ValueError("minitf's matrix_transpose needs the rank of %s" % a.name)
        if rank < 2:
            raise ValueError("Argument `a` should be a (batch) matrix with rank >= 2.  "
                             "Received `a` = %s with shape: %s" % (a, a.shape))
        return array_ops.transpose(a, list(range(rank - 2)) + [rank - 1, rank - 2])


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """The identity matrix (``num_rows x num_columns``, optionally a batch of them)."""
    with name_scope(name, "eye", []):
        for v in (num_rows, num_columns):
            if v is not None and not isinstance(v, (int, np.integer)):
                raise errors.UnimplementedError(None, None, "minitf's eye needs Python int "
                                                "sizes (got %r)" % (v,))
        square = num_columns is None or num_columns == num_rows
        num_columns = num_rows if num_columns is None else num_columns
        batch = list(batch_shape or [])
        ones = array_ops.ones(batch + [min(num_rows, num_columns)], dtype=dtype)
        if square:
            return matrix_diag(ones)
        return matrix_set_diag(array_ops.zeros(batch + [num_rows, num_columns], dtype=dtype),
                               ones)


def trace(x, name=None):
    """The sum of each matrix's diagonal."""
    with name_scope(name, "Trace", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return reduction_ops.reduce_sum(matrix_diag_part(x), [-1], name=scope)


def einsum(equation, *inputs, **kwargs):
    """Einstein summation for one or two operands: ``einsum("ij,jk->ik", a, b)``
    is matmul, ``"ij->ji"`` a transpose, ``"i,i->"`` a dot product, ``"bij,bjk->bik"``
    a batched matmul. Letters on both inputs but not the output are summed."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError("Invalid keyword arguments for einsum: %s" % ", ".join(kwargs))
    with name_scope(name, "einsum", list(inputs)):
        xs = [convert_to_tensor(x, name="inputs") for x in inputs]
        ins, out = parse_equation(equation, len(xs))
        dt = xs[0].dtype.base_dtype
        for x, term in zip(xs, ins):
            if x.dtype.base_dtype != dt:
                raise TypeError("Tensors in list passed to 'inputs' of 'Einsum' Op have "
                                "types [%s] that don't all match."
                                % ", ".join(t.dtype.name for t in xs))
            if x.shape.ndims is not None and x.shape.ndims != len(term):
                raise ValueError("The number of subscripts in %r (%d) does not match the rank "
                                 "of input %s (%d)" % (term, len(term), x.name, x.shape.ndims))
        sizes = {}
        for x, term in zip(xs, ins):
            dims = x.shape.as_list() if x.shape.ndims is not None else [None] * len(term)
            for c, d in zip(term, dims):
                known = sizes.get(c)
                if known is not None and d is not None and known != d:
                    raise ValueError("Expected dimension %d at axis %d of the input shaped %s "
                                     "but got dimension %d" % (known, term.index(c),
                                                               shape_str(x.shape), d))
                if d is not None:
                    sizes[c] = d
        shape = TensorShape([sizes.get(c) for c in out])
        op = make_op(EINSUM, xs, [dt], [shape], name="Einsum",
                     attrs={"equation": equation.replace(" ", ""), "N": len(xs), "T": dt})
    return op.outputs[0]


def tensordot(a, b, axes, name=None):
    """Contract ``axes`` of ``a`` with ``axes`` of ``b``: ``axes=1`` is matmul,
    ``axes=[[1], [0]]`` names them. As TF builds it: transpose each operand so
    the contracted axes meet, reshape both to matrices, one ``MatMul``, and
    reshape to ``a``'s free axes followed by ``b``'s (steps that change nothing
    are left out)."""
    with name_scope(name, "Tensordot", [a, b]) as scope:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b", dtype=a.dtype.base_dtype)
        if a.shape.ndims is None or b.shape.ndims is None:
            raise ValueError("minitf's tensordot needs the ranks of both operands")
        ra, rb = a.shape.ndims, b.shape.ndims
        if isinstance(axes, (int, np.integer)):
            n = int(axes)
            if n < 0 or n > min(ra, rb):
                raise ValueError("'axes' must be at most the rank of a and b, got %d" % n)
            a_axes, b_axes = list(range(ra - n, ra)), list(range(n))
        else:
            a_axes, b_axes = ([int(v) for v in np.atleast_1d(x)] for x in axes)
        a_axes = [x % ra for x in a_axes]
        b_axes = [x % rb for x in b_axes]
        if len(a_axes) != len(b_axes):
            raise ValueError("Different number of contraction axes 'a' and 'b', %d != %d."
                             % (len(a_axes), len(b_axes)))
        da, db = a.shape.as_list(), b.shape.as_list()
        for i, j in zip(a_axes, b_axes):
            if da[i] is not None and db[j] is not None and da[i] != db[j]:
                raise ValueError("Dimensions must be equal, but are %d and %d" % (da[i], db[j]))
        free_a = [i for i in range(ra) if i not in a_axes]
        free_b = [i for i in range(rb) if i not in b_axes]
        a2, a_free = _to_matrix(a, free_a, a_axes, contract_last=True)
        b2, b_free = _to_matrix(b, free_b, b_axes, contract_last=False)
        product = math_ops.matmul(a2, b2)
        out = a_free + b_free
        if product.shape.is_fully_defined() and product.shape.as_list() == out:
            return product
        return array_ops.reshape(product, [-1 if d is None else d for d in out]
                                 if out.count(None) <= 1 else _free_shape(a, b, free_a, free_b),
                                 name=scope)


def _to_matrix(x, free, contracted, contract_last):
    """``x`` transposed and reshaped to ``[free, contracted]`` (or the other way
    round); returns it and the free dims."""
    dims = x.shape.as_list()
    perm = free + contracted if contract_last else contracted + free
    if perm != list(range(len(dims))):
        x = array_ops.transpose(x, perm)
    f = [dims[i] for i in free]
    c = [dims[i] for i in contracted]
    nf = int(np.prod(f)) if None not in f else -1
    nc = int(np.prod(c)) if None not in c else -1
    if nf == -1 and nc == -1:
        raise ValueError("minitf's tensordot needs the free or the contracted dimensions of "
                         "%s to be known" % x.name)
    shape = [nf, nc] if contract_last else [nc, nf]
    if x.shape.as_list() != shape:
        x = array_ops.reshape(x, shape)
    return x, f


def _free_shape(a, b, free_a, free_b):
    """The output shape as a tensor when several free dims are unknown."""
    sa = array_ops.gather(array_ops.shape(a), free_a)
    sb = array_ops.gather(array_ops.shape(b), free_b)
    return array_ops.concat([sa, sb], 0)
