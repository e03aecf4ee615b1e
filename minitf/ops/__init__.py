"""The op table and the ``tf.*`` functions that build ops: one module per op family.

Each family module declares its op types (rows of the table, see
``minitf/framework/op_def.py``: inputs, attrs, flags, the dtypes each device
runs, the kernel, the gradient...) next to the functions a program calls:

* :mod:`.core`             -- ``Const``; ``convert_to_tensor``, ``make_op``
* :mod:`.elementwise`      -- how an elementwise op is declared, its kernel
* :mod:`.math_ops`         -- arithmetic, comparisons, ``cast``, ``add_n``, ``matmul``
* :mod:`.special_math_ops` -- trigonometry, ``expm1``/``log1p``, ``erf``, ``lgamma``...
* :mod:`.reduction_ops`    -- ``reduce_sum`` & co., ``argmax``/``argmin``
* :mod:`.scan_ops`         -- ``cumsum``, ``cumprod``
* :mod:`.sort_ops`         -- ``top_k``, ``in_top_k``, ``sort``, ``argsort``
* :mod:`.array_ops`        -- shapes, slices, stacking, ``where``, ``gather_nd``...
* :mod:`.linalg_ops`       -- inverses, solves, Cholesky, diagonals, ``einsum``...
* :mod:`.nn_ops`           -- ``relu``, the softmax family, dropout...
* :mod:`.conv_ops`         -- ``conv2d``, ``max_pool``, ``avg_pool`` and their gradients
* :mod:`.batch_norm_ops`   -- ``fused_batch_norm`` (FusedBatchNormV3), ``batch_normalization``
* :mod:`.embedding_ops`    -- ``embedding_lookup`` over sharded tables
* :mod:`.variables`        -- ``tf.Variable``, ``assign``, the variable buffer
* :mod:`.random_ops`       -- random numbers and TF's seed rules
* :mod:`.control_flow_ops` -- ``group``, ``tuple``, ``tf.cond`` (Switch/Merge)
* :mod:`.data_flow_ops`    -- queues (their resources in :mod:`.queues`, rows in
  :mod:`.queue_stores`)
* :mod:`.io_ops`           -- readers (resources in :mod:`.readers`), ``decode_csv``
* :mod:`.iterator_ops`     -- tf.data's iterator ops
* :mod:`.accumulator_ops`  -- ``tf.ConditionalAccumulator``
* :mod:`.training_ops`     -- the optimizers' ``Apply*`` updates
* :mod:`.debug_ops`        -- ``tf.Print``, ``check_numerics``
* :mod:`.sendrecv_ops`     -- ``_Send``/``_Recv``/``_Arg`` between tasks
* :mod:`.compression_ops`  -- 8-bit encoding of tensors that cross tasks
* :mod:`.summary_ops`      -- ``tf.summary.scalar`` & co.: serialized ``Summary`` values
* :mod:`.save_restore_ops` -- ``SaveV2``/``RestoreV2``, what a ``Saver`` runs
* :mod:`.importer`         -- ``tf.import_graph_def``: a GraphDef's nodes as ops

Importing this package imports every family, so the table is complete: the
kernel registry (``minitf/kernels/registry.py``) is built from it.
:mod:`.gradients` walks the graph backwards using each row's gradient.
"""

from minitf.ops import (accumulator_ops, array_ops, batch_norm_ops,  # noqa
                        compression_ops, control_flow_ops, conv_ops, core, data_flow_ops,
                        debug_ops, elementwise, embedding_ops, gradients, io_ops,
                        iterator_ops, linalg_ops, math_ops, nn_ops, random_ops, reduction_ops,
                        save_restore_ops, scan_ops, sendrecv_ops, sort_ops, special_math_ops,
                        stack_ops, summary_ops, tensor_array_ops, training_ops, variables,
                        while_loop)
