"""``tf.train.SyncReplicasOptimizer``: synchronous data parallelism.

Wraps another optimizer. Each step of each worker (replica):

1. computes its gradients and *applies* them to one ConditionalAccumulator
   per variable (on the variable's ps), stamped with the worker's
   ``local_step``: gradients older than the current global step are dropped;
2. waits for a *token* from the token queue, and takes the token's value
   (the global step) as its next ``local_step``.

The chief, meanwhile, runs a queue runner whose op *takes* the average of
``replicas_to_aggregate`` gradients from every accumulator, applies them with
the wrapped optimizer (bumping the global step), and puts
``total_num_replicas`` new tokens in the queue - which releases the workers
for the next round. So a step of the model is one averaged update from
several workers, and no update uses a gradient older than one step.

``make_session_run_hook(is_chief)`` does the set-up in a MonitoredSession:
the chief initialises the accumulators' steps, fills the first tokens and
starts the queue runner; the others initialise their local step.
"""

import numpy as np

from minitf.framework import dtypes
from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.ops import array_ops
from minitf.ops import variables as _variables
from minitf.ops.accumulator_ops import ConditionalAccumulator
from minitf.ops.control_flow_ops import group, no_op
from minitf.ops.data_flow_ops import FIFOQueue
from minitf.train.hooks import SessionRunHook
from minitf.train.optimizer import Optimizer
from minitf.train.queue_runner import QueueRunner


class SyncReplicasOptimizer(Optimizer):
    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None,
                 variable_averages=None, variables_to_average=None, use_locking=False,
                 name="sync_replicas"):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        super().__init__(use_locking, name)
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._gradients_applied = False
        self._global_step = None
        self._sync_token_queue = None
        self._chief_queue_runner = None
        self._accumulator_list = []

    def compute_gradients(self, *args, **kwargs):
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        graph = get_default_graph()
        self._global_step = global_step
        step_dtype = global_step.dtype.base_dtype
        local_anchor = no_op()
        with graph.device(local_anchor.device):  # "" keeps the enclosing device
            # The local step lives on the worker, not on the ps.
            self._local_step = _variables.Variable(
                np.zeros((), dtype=step_dtype.np_dtype), trainable=False,
                collections=[GraphKeys.LOCAL_VARIABLES], name="sync_rep_local_step")
        self.local_step_init_op = _variables.assign(self._local_step, global_step)
        chief_init_ops = [self.local_step_init_op]
        self.ready_for_local_init_op = _variables.report_uninitialized_variables(
            _variables.global_variables())
        train_ops, aggregated, var_list = [], [], []
        with graph.name_scope(self._name):
            for grad, var in grads_and_vars:
                var_list.append(var)
                with graph.device(var.device):
                    if grad is None:
                        aggregated.append(None)
                        continue
                    accum = ConditionalAccumulator(grad.dtype, shape=var.shape,
                                                   shared_name=var.name + "/grad_accum")
                    train_ops.append(accum.apply_grad(grad, local_step=self._local_step))
                    aggregated.append(accum.take_grad(self._replicas_to_aggregate))
                    self._accumulator_list.append((accum, var.device))
            with graph.device(global_step.device), graph.name_scope(""):
                update_op = self._opt.apply_gradients(list(zip(aggregated, var_list)),
                                                      global_step)
            with graph.device(global_step.device), graph.name_scope(""):
                self._sync_token_queue = FIFOQueue(-1, step_dtype, shapes=[[]],
                                                   name="sync_token_q",
                                                   shared_name="sync_token_q")
                dummy_queue = FIFOQueue(1, dtypes.int32, shapes=[[]], name="dummy_queue",
                                        shared_name="dummy_queue")
            with graph.device(global_step.device), graph.name_scope(""):
                with graph.control_dependencies(train_ops):
                    token = self._sync_token_queue.dequeue()
                train_op = _variables.assign(self._local_step, token)
                with graph.control_dependencies([update_op]):
                    tokens = array_ops.fill([self._tokens_per_step], global_step)
                    sync_op = self._sync_token_queue.enqueue_many((tokens,))
                self._chief_queue_runner = QueueRunner(dummy_queue, [sync_op])
                # minitf: when the chief finishes it closes the token queue, so
                # workers waiting for a token end with OutOfRangeError (which a
                # MonitoredSession treats as a clean stop) instead of hanging.
                self._close_tokens_op = self._sync_token_queue.close()
            for accum, device in self._accumulator_list:
                with graph.device(device):
                    chief_init_ops.append(accum.set_global_step(global_step,
                                                                name="SetGlobalStep"))
            self.chief_init_op = group(*chief_init_ops)
        self._gradients_applied = True
        return train_op

    def get_chief_queue_runner(self):
        if not self._gradients_applied:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_init_tokens_op(self, num_tokens=-1):
        """An op that puts the first tokens in the queue (run once by the chief)."""
        if not self._gradients_applied:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError("Too few tokens to finish the first step: %d (given) vs %d "
                             "(needed)" % (num_tokens, tokens_needed))
        if num_tokens > 0:
            graph = get_default_graph()
            with graph.device(self._global_step.device), graph.name_scope(""):
                tokens = array_ops.fill([num_tokens], self._global_step)
                return self._sync_token_queue.enqueue_many((tokens,))
        return no_op(name="no_init_tokens")

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._opt.variables()

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)


class _SyncReplicasOptimizerHook(SessionRunHook):
    def __init__(self, sync_optimizer, is_chief, num_tokens):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self):
        opt = self._sync_optimizer
        if not opt._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before "
                             "using the hook.")
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._q_runner = opt.get_chief_queue_runner()
            self._init_tokens_op = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op
            self._q_runner = None
            self._init_tokens_op = None
        self._ready_for_local_init_op = opt.ready_for_local_init_op

    def after_create_session(self, session, coord):
        missing = session.run(self._ready_for_local_init_op)
        if len(missing):
            raise RuntimeError("Init operations did not make model ready for "
                               "SyncReplicasOptimizer local_init. Init op: %s, error: "
                               "uninitialized %s" % (self._local_init_op.name, list(missing)))
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)

    def end(self, session):
        if self._is_chief:
            session.run(self._sync_optimizer._close_tokens_op)
