"""minitf's distributed runtime: clusters, the wire, and who may talk to whom.

* :mod:`minitf.distributed.cluster_spec` -- ``tf.train.ClusterSpec``: the jobs
  and tasks of a cluster and their ``host:port`` addresses.
* :mod:`minitf.distributed.wire` -- how two processes exchange messages:
  length-prefixed frames over TCP, a small msgpack header, tensor bytes sent as
  raw buffers (never pickled), deadlines on every blocking call, and errors
  that travel as ``(code, message)`` and are raised as the right
  ``tf.errors`` class on the other side.
* :mod:`minitf.distributed.auth` -- the cluster secret and the mutual HMAC
  challenge-response that every connection passes before any request is read.

Servers (the master and worker services) are built on these three modules.
"""
