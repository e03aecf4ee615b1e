"""The five optimizers of TF1's ``tf.train``: each is a small update rule.

=====================  ==============================================  ============
optimizer              update of one variable ``w`` with gradient g    slots
=====================  ==============================================  ============
GradientDescent        ``w -= lr * g``                                 none
Momentum               ``a = m*a + g;  w -= lr * a``                   Momentum
Adagrad                ``a += g*g;  w -= lr * g / sqrt(a)``             Adagrad
RMSProp                ``ms = rho*ms + (1-rho)*g*g;``                   RMSProp,
                       ``mom = m*mom + lr*g/sqrt(ms+eps);  w -= mom``   RMSProp_1
Adam                   moment estimates m, v with bias correction       Adam, Adam_1
=====================  ==============================================  ============
"""

import numpy as np

from minitf.framework.graph import get_default_graph
from minitf.ops import math_ops, training_ops
from minitf.ops import variables as _variables
from minitf.ops.control_flow_ops import group
from minitf.train.optimizer import Optimizer


class GradientDescentOptimizer(Optimizer):
    _HYPER = (("learning_rate", "_learning_rate"),)

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _apply_dense(self, grad, var):
        return training_ops.apply_gradient_descent(
            var._ref(), self._tensor("learning_rate", var), grad,
            use_locking=self._use_locking).op


class MomentumOptimizer(Optimizer):
    _HYPER = (("learning_rate", "_learning_rate"), ("momentum", "_momentum"))

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _apply_dense(self, grad, var):
        accum = self.get_slot(var, "momentum")
        return training_ops.apply_momentum(
            var._ref(), accum._ref(), self._tensor("learning_rate", var),
            grad, self._tensor("momentum", var),
            use_locking=self._use_locking, use_nesterov=self._use_nesterov).op


class AdagradOptimizer(Optimizer):
    _HYPER = (("learning_rate", "_learning_rate"),)

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: %s"
                             % initial_accumulator_value)
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial = initial_accumulator_value

    def _create_slots(self, var_list):
        graph = get_default_graph()
        slots = self._slots.setdefault("accumulator", {})
        for v in var_list:
            if v not in slots:
                with graph.name_scope(""), graph.colocate_with(v.op):
                    slots[v] = _variables.Variable(
                        np.full(v.shape.as_list(), self._initial,
                                dtype=v.dtype.base_dtype.np_dtype),
                        name=v.op.name + "/" + self._name, trainable=False)

    def _apply_dense(self, grad, var):
        return training_ops.apply_adagrad(
            var._ref(), self.get_slot(var, "accumulator")._ref(),
            self._tensor("learning_rate", var), grad,
            use_locking=self._use_locking).op


class RMSPropOptimizer(Optimizer):
    _HYPER = (("learning_rate", "_learning_rate"), ("decay", "_decay"),
              ("momentum", "_momentum"), ("epsilon", "_epsilon"))

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking=False, centered=False, name="RMSProp"):
        if centered:
            raise ValueError("minitf's RMSPropOptimizer has no centered variant; use "
                             "centered=False")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon

    def _create_slots(self, var_list):
        graph = get_default_graph()
        rms = self._slots.setdefault("rms", {})
        for v in var_list:
            if v not in rms:
                # TF starts the mean square at ones, so the first steps are not huge.
                with graph.name_scope(""), graph.colocate_with(v.op):
                    rms[v] = _variables.Variable(
                        np.ones(v.shape.as_list(), dtype=v.dtype.base_dtype.np_dtype),
                        name=v.op.name + "/" + self._name, trainable=False)
            self._zeros_slot(v, "momentum", self._name + "_1")

    def _apply_dense(self, grad, var):
        t = lambda name: self._tensor(name, var)  # noqa: E731
        return training_ops.apply_rms_prop(
            var._ref(), self.get_slot(var, "rms")._ref(), self.get_slot(var, "momentum")._ref(),
            t("learning_rate"), t("decay"), t("momentum"), t("epsilon"), grad,
            use_locking=self._use_locking).op


class AdamOptimizer(Optimizer):
    _HYPER = (("learning_rate", "_lr"), ("beta1", "_beta1"), ("beta2", "_beta2"),
              ("epsilon", "_epsilon"))

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon

    def _create_slots(self, var_list):
        first = min(var_list, key=lambda v: v.name)
        self._non_slot_variable(self._beta1, "beta1_power", first)
        self._non_slot_variable(self._beta2, "beta2_power", first)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name + "_1")

    def _powers(self):
        return self._non_slot["beta1_power"], self._non_slot["beta2_power"]

    def _apply_dense(self, grad, var):
        b1p, b2p = self._powers()
        t = lambda name: self._tensor(name, var)  # noqa: E731
        dtype = var.dtype.base_dtype
        return training_ops.apply_adam(
            var._ref(), self.get_slot(var, "m")._ref(), self.get_slot(var, "v")._ref(),
            math_ops.cast(b1p.value(), dtype), math_ops.cast(b2p.value(), dtype),
            t("learning_rate"), t("beta1"), t("beta2"), t("epsilon"), grad,
            use_locking=self._use_locking).op

    def _finish(self, update_ops, name_scope_):
        """After the updates, advance the bias-correction powers."""
        graph = get_default_graph()
        b1p, b2p = self._powers()
        with graph.control_dependencies(update_ops), graph.colocate_with(b1p.op):
            update_b1 = b1p.assign(b1p.value() * self._hyper["beta1"],
                                   use_locking=self._use_locking)
            update_b2 = b2p.assign(b2p.value() * self._hyper["beta2"],
                                   use_locking=self._use_locking)
        return group(*(list(update_ops) + [update_b1, update_b2]),
                     name=name_scope_ or None)
