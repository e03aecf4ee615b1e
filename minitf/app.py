"""``tf.app`` and ``tf.flags``: command-line flags and ``tf.app.run(main)``.

TF1 programs declare their command-line options at the top::

    flags = tf.app.flags
    flags.DEFINE_string("job_name", None, "job name: worker or ps")
    flags.DEFINE_integer("task_index", None, "index of the task within its job")
    flags.DEFINE_boolean("sync_replicas", False, "aggregate gradients synchronously")
    FLAGS = flags.FLAGS

    def main(unused_argv):
        print(FLAGS.job_name, FLAGS.task_index)

    if __name__ == "__main__":
        tf.app.run()          # parses sys.argv, then calls main(remaining argv)

TF's flags *are* absl's (``absl.flags``): minitf uses the same library, so
``--sync_replicas``/``--nosync_replicas``, ``--flagfile``, ``--helpfull`` and
absl's error messages behave exactly as under TF. Two TF touches are kept:
reading a flag before ``tf.app.run`` parses ``sys.argv`` then (TF 1's
convenience), and the old keyword names ``flag_name``/``default_value``/
``docstring`` are accepted.
"""

import functools
import sys

from absl import flags as _absl

__all__ = ["flags", "run"]

_RENAMED = {"flag_name": "name", "default_value": "default", "docstring": "help"}


def _define(define):
    @functools.wraps(define)
    def wrapper(*args, **kwargs):
        for old, new in _RENAMED.items():
            if old in kwargs:
                kwargs[new] = kwargs.pop(old)
        return define(*args, **kwargs)
    return wrapper


class _FlagValues:
    """absl's FLAGS, parsing ``sys.argv`` on the first read of a flag if nobody
    has parsed it yet (as TF's wrapper does)."""

    def __init__(self, wrapped):
        self.__dict__["_wrapped"] = wrapped

    def __getattr__(self, name):
        wrapped = self.__dict__["_wrapped"]
        if not wrapped.is_parsed():
            wrapped(sys.argv, known_only=True)
        return getattr(wrapped, name)

    def __setattr__(self, name, value):
        setattr(self.__dict__["_wrapped"], name, value)

    def __delattr__(self, name):
        delattr(self.__dict__["_wrapped"], name)

    def __getitem__(self, name):
        return self.__dict__["_wrapped"][name]

    def __setitem__(self, name, flag):
        self.__dict__["_wrapped"][name] = flag

    def __contains__(self, name):
        return name in self.__dict__["_wrapped"]

    def __iter__(self):
        return iter(self.__dict__["_wrapped"])

    def __len__(self):
        return len(self.__dict__["_wrapped"])

    def __dir__(self):
        return dir(self.__dict__["_wrapped"])

    def __call__(self, *args, **kwargs):
        return self.__dict__["_wrapped"](*args, **kwargs)

    def __str__(self):
        return str(self.__dict__["_wrapped"])


class _FlagsModule:
    """What ``tf.app.flags`` (and ``tf.flags``) is: absl's flags, with TF's wrappers."""

    def __init__(self):
        self.FLAGS = _FlagValues(_absl.FLAGS)
        self.DEFINE_string = _define(_absl.DEFINE_string)
        self.DEFINE_boolean = _define(_absl.DEFINE_boolean)
        self.DEFINE_bool = self.DEFINE_boolean
        self.DEFINE_float = _define(_absl.DEFINE_float)
        self.DEFINE_integer = _define(_absl.DEFINE_integer)

    def __getattr__(self, name):
        # everything else absl.flags has: DEFINE_list, DEFINE_enum, mark_flag_as_required...
        return getattr(_absl, name)

    def __dir__(self):
        return sorted(set(dir(_absl)) | {"FLAGS"})


flags = _FlagsModule()


def run(main=None, argv=None):
    """Parse the flags in ``argv`` (default ``sys.argv``), call ``main(argv)`` with
    what is left, and exit with its return value (absl's ``app.run``, which TF
    uses). Flags nobody defined are tolerated, as in TF."""
    from absl import app as _absl_app   # lazy: absl.app sets up absl logging on import
    main = main or sys.modules["__main__"].main
    _absl_app.run(main=main, argv=argv, flags_parser=lambda args: _absl.FLAGS(
        sys.argv if args is None else args, known_only=True))
