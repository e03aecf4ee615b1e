"""``tf.train.summary_iterator``: the ``Event`` protos of an event file, in order.

The records are read by the tensorboard package's own loader (each record
framed by its length and CRCs, as ``FileWriter`` wrote it) and parsed as
TF's ``Event`` message: a program can read back what it wrote, as TF1
programs do to check their summaries.
"""

import os

from minitf.framework.protos import proto, tensorboard_module


def summary_iterator(path):
    """Yield every ``Event`` of the event file ``path`` (the first one holds
    the file version; then graphs, summaries, run metadata, session logs)."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError("No event file at %s (give the path of one "
                                "events.out.tfevents.* file, not its directory)" % path)
    loader = tensorboard_module("backend.event_processing.event_file_loader")
    event_pb2 = proto("event_pb2")
    for record in loader.RawEventFileLoader(path).Load():
        yield event_pb2.Event.FromString(record)
