"""``tf.summary``: summary ops and the event files TensorBoard reads.

Two halves, as in TF1:

* summary *ops* (``minitf/ops/summary_ops.py``) - ``scalar``, ``histogram``,
  ``image``, ``text``, ``tensor_summary``, ``merge``, ``merge_all`` - built into
  the graph and run like any op; each returns a serialized ``Summary``;
* :class:`FileWriter` (``writer.py``) - appends those summaries, the graph,
  the meta graph and a step's run metadata to an event file in a log
  directory, which TensorBoard (``tensorboard --logdir DIR``, or
  ``%tensorboard --logdir DIR`` in a notebook) draws.

The formats are TF's: the messages come from ``tensorboard.compat.proto``
and the records are written by the tensorboard package's own event-file
writer. That package is optional: ``pip install 'minitf-edu[tensorboard]'``.
"""

from minitf.framework.protos import proto as _proto
from minitf.ops.summary_ops import (histogram, image, merge, merge_all, scalar,  # noqa: F401
                                    tensor_summary, text)
from minitf.summary.writer import FileWriter, FileWriterCache  # noqa: F401

# TF's message classes under their tf.summary names (imported on first use).
_PROTOS = {"Summary": "summary_pb2", "SummaryDescription": "summary_pb2",
           "SummaryMetadata": "summary_pb2", "Event": "event_pb2", "SessionLog": "event_pb2",
           "TaggedRunMetadata": "event_pb2"}


def __getattr__(name):
    module = _PROTOS.get(name)
    if module is None:
        raise AttributeError("module 'tf.summary' has no attribute '%s'" % name)
    return getattr(_proto(module), name)


__all__ = ["scalar", "histogram", "image", "text", "tensor_summary", "merge", "merge_all",
           "FileWriter", "FileWriterCache"] + sorted(_PROTOS)
