"""``tf.train.Optimizer``: turn a loss into variable updates.

``opt.minimize(loss)`` is two steps you can also take yourself:

1. ``compute_gradients(loss, var_list)`` -> ``[(gradient, variable), ...]``,
   built by ``tf.gradients``;
2. ``apply_gradients(grads_and_vars, global_step)`` -> one op that, when run,
   updates every variable with its gradient (one of the ``Apply*`` ops of
   ``minitf/ops/training_ops.py``) and then adds 1 to ``global_step``.

Each update op is *colocated with its variable*, and so are the optimizer's
*slot variables* (Adam's two moment estimates ``w/Adam`` and ``w/Adam_1``,
Momentum's ``w/Momentum``): with variables on a parameter server, the update
arithmetic and the optimizer state stay there, and only gradients travel.
"""

import numpy as np

from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.ops import gradients as _gradients
from minitf.ops import math_ops
from minitf.ops import variables as _variables
from minitf.ops.control_flow_ops import group
from minitf.ops.core import convert_to_tensor, name_scope


class Optimizer:
    """Base class: subclasses define ``_create_slots``, ``_prepare`` and
    ``_apply_dense`` (and ``_finish`` for extra state, as Adam's powers)."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots = {}  # slot name -> {variable: slot variable}
        self._non_slot = {}  # name -> variable

    def get_name(self):
        return self._name

    # -- step 1 --------------------------------------------------------------------------
    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """``[(gradient or None, variable)]`` for each variable in ``var_list``
        (default: the trainable variables)."""
        if callable(loss):
            raise TypeError("minitf builds graphs: pass the loss tensor, not a function")
        loss = convert_to_tensor(loss)
        if var_list is None:
            var_list = _variables.trainable_variables()
        var_list = list(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = _gradients.gradients(loss, var_list,
                                     grad_ys=None if grad_loss is None else [grad_loss],
                                     gate_gradients=(gate_gradients == Optimizer.GATE_OP),
                                     colocate_gradients_with_ops=colocate_gradients_with_ops)
        return list(zip(grads, var_list))

    # -- step 2 --------------------------------------------------------------------------
    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """One op that applies every gradient (then bumps ``global_step``)."""
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise ValueError("No gradients provided for any variable, check your graph for "
                             "ops that do not support gradients, between variables %s and "
                             "loss." % [v.name for _, v in grads_and_vars])
        graph = get_default_graph()
        var_list = [v for _, v in pairs]
        self._create_slots(var_list)
        with name_scope(name, self._name, []) as scope:
            self._prepare()
            update_ops = []
            for grad, var in pairs:
                with graph.name_scope("update_" + var.op.name), graph.colocate_with(var.op):
                    update_ops.append(self._apply_dense(convert_to_tensor(grad), var))
            if global_step is None:
                apply_updates = self._finish(update_ops, scope)
            else:
                with graph.control_dependencies([self._finish(update_ops, "update")]):
                    with graph.colocate_with(global_step.op):
                        apply_updates = _variables.assign_add(global_step, 1, name=scope).op
        train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
        if apply_updates not in train_ops:
            train_ops.append(apply_updates)
        return apply_updates

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None):
        """``compute_gradients`` then ``apply_gradients``."""
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        if not [g for g, _ in grads_and_vars if g is not None]:
            raise ValueError("No gradients provided for any variable, check your graph for "
                             "ops that do not support gradients, between variables %s and "
                             "loss %s." % ([str(v) for _, v in grads_and_vars], loss))
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    # -- slots -----------------------------------------------------------------------------
    def _zeros_slot(self, var, slot_name, op_name):
        """A zero-initialised variable shaped like ``var``, named ``var/op_name``,
        on ``var``'s device."""
        slots = self._slots.setdefault(slot_name, {})
        if var not in slots:
            graph = get_default_graph()
            shape = var.shape.as_list()
            with graph.name_scope(""), graph.colocate_with(var.op):
                slots[var] = _variables.Variable(
                    np.zeros(shape, dtype=var.dtype.base_dtype.np_dtype),
                    name=var.op.name + "/" + op_name, trainable=False)
        return slots[var]

    def _non_slot_variable(self, initial_value, name, colocate_with):
        if name not in self._non_slot:
            graph = get_default_graph()
            with graph.name_scope(""), graph.colocate_with(colocate_with.op):
                self._non_slot[name] = _variables.Variable(
                    np.float32(initial_value), name=name, trainable=False)
        return self._non_slot[name]

    def get_slot(self, var, name):
        return self._slots.get(name, {}).get(var)

    def get_slot_names(self):
        return sorted(self._slots)

    def variables(self):
        out = list(self._non_slot.values())
        for slots in self._slots.values():
            out.extend(slots.values())
        return sorted(out, key=lambda v: v.name)

    # -- for subclasses ----------------------------------------------------------------------
    def _create_slots(self, var_list):
        pass

    #: ``(name, attribute)`` of the hyperparameters: ``_prepare`` makes each a
    #: tensor once per ``apply_gradients`` (``GradientDescent/learning_rate``),
    #: which every update op then reads, as in TF.
    _HYPER = ()

    def _prepare(self):
        self._hyper = {name: convert_to_tensor(getattr(self, attr), name=name)
                       for name, attr in self._HYPER}

    def _apply_dense(self, grad, var):
        raise TypeError("%s must define _apply_dense" % type(self).__name__)

    def _finish(self, update_ops, name_scope_):
        # A scope ("GradientDescent/") names the op itself, as in TF.
        return group(*update_ops, name=name_scope_ or None)

    def _tensor(self, name, var):
        """Hyperparameter ``name`` in ``var``'s dtype: TF casts the tensor made
        by ``_prepare`` (a float32 ``0.1`` for a float64 variable is
        0.10000000149...)."""
        return math_ops.cast(self._hyper[name], var.dtype.base_dtype)
