"""Three ways to use several devices or tasks for one training job.

* **In-graph replication** (data parallelism, one client): one *tower* per
  device computes the loss on its slice of the batch; the towers' gradients
  are averaged (:func:`average_gradients`) and applied once to variables that
  live in one place. With equal slices this is exactly one full-batch step.
* **Model parallelism**: one network split by layers across devices
  (:func:`split_mlp`); activations flow from device to device, so each
  device holds only its layers' weights, at the price of a transfer per
  layer boundary and devices waiting for each other.
* **One network per device** (the hyperparameter-search pattern):
  independent models, each pinned to its own device, trained by one
  ``sess.run`` - the executor runs the devices in parallel
  (:func:`independent_models`).

Between-graph replication (one client per worker, variables on ps tasks) is
the other pattern; see ``replica_device_setter`` and
``SyncReplicasOptimizer``.
"""

from minitf.framework.graph import get_default_graph
from minitf.layers import dense
from minitf.ops import array_ops, math_ops, nn_ops
from minitf.ops.core import name_scope
from minitf.ops.control_flow_ops import group
from minitf.ops.variable_scope import variable_scope


def average_gradients(tower_grads):
    """``tower_grads``: one ``[(grad, var), ...]`` list per tower, all in the
    same variable order. Returns ``[(mean grad, var), ...]``."""
    averaged = []
    for pairs in zip(*tower_grads):
        grads = [g for g, _ in pairs if g is not None]
        var = pairs[0][1]
        if not grads:
            averaged.append((None, var))
            continue
        with name_scope(None, "average_gradients", grads):
            mean = math_ops.add_n(grads) / float(len(grads)) if len(grads) > 1 else grads[0]
        averaged.append((mean, var))
    return averaged


def in_graph_replicas(make_variables, build_loss, inputs, devices, optimizer,
                      global_step=None, variables_device=None):
    """One tower per device on a slice of ``inputs``; returns
    ``(train_op, tower_losses, variables)``.

    ``make_variables()`` creates the model's variables once, on
    ``variables_device`` (default: the first device), and returns them as a
    dict. ``build_loss(variables, *input_slices)`` builds one tower's loss from
    them; it runs once per device. ``inputs``: tensors whose first dimension
    is split evenly over the devices.
    """
    graph = get_default_graph()
    n = len(devices)
    with graph.device(variables_device or devices[0]):
        params = make_variables()
    var_list = list(params.values())
    slices = [array_ops.unstack(array_ops.reshape(t, [n, -1] + t.shape.as_list()[1:]), num=n)
              for t in inputs]
    tower_grads, losses = [], []
    for i, device in enumerate(devices):
        with graph.device(device), name_scope("tower_%d" % i):
            loss = build_loss(params, *[s[i] for s in slices])
            losses.append(loss)
            tower_grads.append(optimizer.compute_gradients(loss, var_list=var_list))
    with graph.device(variables_device or devices[0]):
        train_op = optimizer.apply_gradients(average_gradients(tower_grads),
                                             global_step=global_step)
    return train_op, losses, params


def split_mlp(x, layer_sizes, devices, activation=None, seed=0):
    """A fully connected net whose layer ``i`` (weights and math) lives on
    ``devices[i % len(devices)]``; returns the logits."""
    graph = get_default_graph()
    activation = activation or nn_ops.relu
    h = x
    for i, units in enumerate(layer_sizes):
        last = i == len(layer_sizes) - 1
        with graph.device(devices[i % len(devices)]):
            h = dense(h, units, activation=None if last else activation,
                      name="layer_%d" % i, seed=seed + i)
    return h


def independent_models(build_train_op, configs, devices):
    """One model per config, model ``i`` pinned to ``devices[i % n]``.

    ``build_train_op(config, index)`` builds one model in its own variable
    scope ``model_i`` (so two models may name their layers alike; see
    ``tf.variable_scope``) and returns ``(train_op, loss)``. Returns ``(group of all train ops,
    [loss per model])``: running the group steps every model at once.
    """
    graph = get_default_graph()
    train_ops, losses = [], []
    for i, config in enumerate(configs):
        with graph.device(devices[i % len(devices)]), variable_scope("model_%d" % i):
            train_op, loss = build_train_op(config, i)
        train_ops.append(train_op)
        losses.append(loss)
    return group(*train_ops, name="train_all"), losses
