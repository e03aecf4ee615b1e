"""Which engine runs a session: the session *factory*, chosen by the target.

``tf.Session()`` runs in this process; ``tf.Session("grpc://host:port")`` runs
on the server at that address. As in TF (whose factories are called
DIRECT_SESSION and GRPC_SESSION), each kind of target has a registered
factory: the local one here, the remote one by ``minitf.distributed.client``
when it is imported (``import minitf`` imports it). A factory makes a
*runtime*, the object a session hands its steps to::

    runtime.run(fetches, targets, feeds, feed_values, options, run_metadata)
    runtime.list_devices(), runtime.close(), runtime.cancel_running_steps()

and resets a target's containers for ``tf.Session.reset``.
"""

from minitf.framework import errors

_FACTORIES = []   # (name, accepts(target), connect(target, graph, config), reset)


def register(name, accepts, connect, reset=None):
    """Add a factory: ``accepts(target)`` says whether it serves ``target``."""
    if any(n == name for n, *_ in _FACTORIES):
        raise ValueError("a session factory named %s is registered twice" % name)
    _FACTORIES.append((name, accepts, connect, reset))


def _factory(target):
    for entry in _FACTORIES:
        if entry[1](target):
            return entry
    raise errors.NotFoundError(
        None, None, "No session factory registered for the given session options: "
        "{target: \"%s\"} Registered factories are {%s}. A server target starts with "
        "grpc://, e.g. Session(server.target) or Session(\"grpc://localhost:2222\")."
        % (target, ", ".join(n for n, *_ in _FACTORIES)))


def connect(target, graph, config):
    """The runtime a session on ``target`` runs its steps on."""
    return _factory(target)[2](target, graph, config)


def reset(target, containers, config):
    """``tf.Session.reset``: clear ``containers`` on the cluster behind ``target``."""
    name, _, _, reset_fn = _factory(target)
    if reset_fn is None:
        raise errors.InvalidArgumentError(
            None, None, "Session.reset needs the target of a server (e.g. server.target); "
                        "a local session keeps no shared state.")
    reset_fn(target, containers, config)
