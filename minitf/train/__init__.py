"""Training and input-pipeline helpers behind ``tf.train``.

The input-pipeline part (issue 4) is three small modules:

* :mod:`minitf.train.queue_runner` - ``QueueRunner``: threads that keep
  running enqueue ops so a queue stays full, and close it at the end;
* :mod:`minitf.train.coordinator` - ``Coordinator``: how those threads (and
  yours) agree to stop, and how an error in one reaches the main thread;
* :mod:`minitf.train.input` - ``string_input_producer``, ``batch``,
  ``shuffle_batch``...: the queue-plus-runner patterns TF1 programs use.

They are imported lazily through ``tf.train`` (see ``minitf/compat/v1.py``).
"""
