"""``tf.summary.FileWriter``: what TensorBoard reads, appended to an event file.

An *event file* (``events.out.tfevents.<time>.<host>...`` in a log
directory) is a sequence of records, each an ``Event`` protocol buffer with
a wall time, an optional step, and one payload:

* ``file_version`` - the first event of every file;
* ``graph_def`` - the graph (the Graphs dashboard); ``meta_graph_def``;
* ``summary`` - the values of summary ops (Scalars, Histograms, Images, Text);
* ``tagged_run_metadata`` - one step's trace, under a tag (the Graphs
  dashboard shows each node's device, compute time and memory for it);
* ``session_log`` - START/STOP/CHECKPOINT markers.

The writer is TF1's: ``FileWriter(logdir, graph)`` writes the graph (and its
meta graph) at once; ``add_summary(bytes_or_proto, global_step)``,
``add_run_metadata(run_metadata, tag, global_step)``, ``flush``, ``close``,
``reopen``. Events are queued and written by a background thread (the
tensorboard package's ``EventFileWriter``, which also frames each record with
its length and CRCs), at the latest every ``flush_secs`` and on ``flush()``.

Summaries are computed by ops, wherever they run (a summary op pinned to a
parameter server runs there); what reaches the writer is the serialized
``Summary`` a ``sess.run`` fetched, so a FileWriter works the same with a
local session and with a remote one.
"""

import threading
import time
import warnings

from minitf.framework.graph import Graph, get_default_graph
from minitf.framework.protos import proto, tensorboard_module
from minitf.runtime.run_metadata_proto import run_metadata_to_proto
from minitf.train import meta_graph


class FileWriter:
    """Writes ``Event`` protocol buffers to an event file in ``logdir``.

    ``graph`` (or the deprecated ``graph_def``), when given, is written at once
    with its meta graph, as TF does. ``max_queue``: events kept in memory
    before ``add_*`` waits for the writer thread; ``flush_secs``: how often
    that thread flushes; ``filename_suffix``: appended to the file's name.
    """

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        if session is not None:
            raise NotImplementedError(
                "minitf's FileWriter writes event files from Python (TF1's default); "
                "session= (a summary writer resource inside the graph) is not supported. "
                "Leave session unset.")
        self._logdir = str(logdir)
        self._max_queue = int(max_queue)
        self._flush_secs = flush_secs
        self._suffix = filename_suffix or ""
        self._lock = threading.Lock()
        self._seen_metadata_tags = set()
        self._run_tags = set()
        self._closed = False
        self._writer = self._open()
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)
            source = graph if isinstance(graph, Graph) else None
            self.add_meta_graph(meta_graph.create_meta_graph_def(
                graph_def=None if source is not None else self._graph_def_of(graph, graph_def),
                graph=source))

    def _open(self):
        event_file_writer = tensorboard_module("summary.writer.event_file_writer")
        return event_file_writer.EventFileWriter(self._logdir, self._max_queue,
                                                 self._flush_secs, self._suffix)

    # -- what TF's FileWriter offers -------------------------------------------------------
    def get_logdir(self):
        """The directory the event file is in."""
        return self._logdir

    def add_event(self, event):
        """Append one ``Event`` proto (wall time and step as given)."""
        if self._closed:
            warnings.warn("Attempting to use a closed FileWriter. The operation will be a "
                          "noop unless the FileWriter is explicitly reopened.")
            return
        self._writer.add_event(event)

    def _add_event(self, event, step):
        event.wall_time = time.time()
        if step is not None:
            event.step = int(step)
        self.add_event(event)

    def add_summary(self, summary, global_step=None):
        """Append a ``Summary`` (the bytes a summary op returned, or the proto).
        A value's plugin metadata is kept only the first time its tag is seen."""
        summary_pb2 = proto("summary_pb2")
        if isinstance(summary, (bytes, bytearray)):
            parsed = summary_pb2.Summary()
            parsed.ParseFromString(bytes(summary))
            summary = parsed
        elif not isinstance(summary, summary_pb2.Summary):
            raise TypeError("add_summary takes a Summary protocol buffer or its serialized "
                            "bytes (what running a summary op returns), not %s"
                            % type(summary).__name__)
        for value in summary.value:
            if not value.HasField("metadata"):
                continue
            if value.tag in self._seen_metadata_tags:
                value.ClearField("metadata")
            else:
                self._seen_metadata_tags.add(value.tag)
        self._add_event(proto("event_pb2").Event(summary=summary), global_step)

    def add_session_log(self, session_log, global_step=None):
        """Append a ``SessionLog`` (START, STOP or CHECKPOINT)."""
        self._add_event(proto("event_pb2").Event(session_log=session_log), global_step)

    @staticmethod
    def _graph_def_of(graph, graph_def):
        graph_pb2 = proto("graph_pb2")
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        source = graph if graph is not None else graph_def
        if isinstance(source, Graph):
            return source.as_graph_def(add_shapes=True)
        if isinstance(source, graph_pb2.GraphDef):
            return source
        raise TypeError("The passed graph must be an instance of `Graph` or the deprecated "
                        "`GraphDef`")

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Append the graph (a ``Graph``, or a ``GraphDef``) for the Graphs
        dashboard; a Graph is written with its ops' output shapes."""
        self._add_event(proto("event_pb2").Event(
            graph_def=self._graph_def_of(graph, graph_def).SerializeToString()), global_step)

    def add_meta_graph(self, meta_graph_def, global_step=None):
        """Append a ``MetaGraphDef`` (graph, collections, saver)."""
        meta_graph_pb2 = proto("meta_graph_pb2")
        if not isinstance(meta_graph_def, meta_graph_pb2.MetaGraphDef):
            raise TypeError("meta_graph_def must be type MetaGraphDef, saw type: %s"
                            % type(meta_graph_def))
        self._add_event(proto("event_pb2").Event(
            meta_graph_def=meta_graph_def.SerializeToString()), global_step)

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Append one step's ``RunMetadata`` (minitf's or TF's) under ``tag``:
        the Graphs dashboard then offers that step, each node coloured by the
        device it ran on, with its compute time and memory."""
        if tag in self._run_tags:
            raise ValueError("The provided tag was already used for this event type")
        self._run_tags.add(tag)
        tagged = proto("event_pb2").TaggedRunMetadata(
            tag=tag, run_metadata=run_metadata_to_proto(run_metadata).SerializeToString())
        self._add_event(proto("event_pb2").Event(tagged_run_metadata=tagged), global_step)

    def flush(self):
        """Write every queued event to disk now."""
        if not self._closed:
            self._writer.flush()

    def close(self):
        """Flush and close the file; later events are dropped until :meth:`reopen`."""
        with self._lock:
            if not self._closed:
                self._writer.close()
                self._closed = True

    def reopen(self):
        """After :meth:`close`: go on writing, into a new event file in the same
        directory."""
        with self._lock:
            if self._closed:
                self._writer = self._open()
                self._closed = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<tf.summary.FileWriter logdir=%r%s>" % (self._logdir,
                                                        " closed" if self._closed else "")


class FileWriterCache:
    """One shared ``FileWriter`` per log directory (TF's ``FileWriterCache``),
    created with the default graph; hooks and programs that write to the same
    directory share it."""

    _cache = {}
    _lock = threading.RLock()

    @staticmethod
    def get(logdir):
        with FileWriterCache._lock:
            writer = FileWriterCache._cache.get(logdir)
            if writer is None:
                writer = FileWriter(logdir, graph=get_default_graph())
                FileWriterCache._cache[logdir] = writer
            return writer

    @staticmethod
    def clear():
        """Close every cached writer and forget them."""
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache = {}
