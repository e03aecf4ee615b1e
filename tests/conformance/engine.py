"""Pick the TensorFlow engine a conformance program runs against.

Every program under programs/ starts with ``from engine import tf``.  The
environment variable MINITF_ENGINE chooses what ``tf`` is:

  minitf (default)  ``import minitf.compat.v1 as tf``
  tf                ``import tensorflow.compat.v1 as tf`` (the real thing,
                    the oracle the golden files were recorded from)

Both call ``tf.disable_v2_behavior()`` so the programs read like real TF1 code.
"""
import os

ENGINE = os.environ.get("MINITF_ENGINE", "minitf")

if ENGINE == "tf":
    # Hide TF's C++ INFO/WARNING log lines (and the oneDNN banner that
    # precedes them).  This does NOT hide log_device_placement output: TF
    # writes each placement line bare to the C stdout with printf, whatever
    # this level is; only its extra stderr copy ("I... placer.cc:NNN] ...")
    # disappears.  See test_conformance.py for the details.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    # TF 2.21's tf.layers and tf.nn.rnn_cell exist only with Keras 2 (the
    # tf_keras package, installed beside TF by scripts/setup_tf_oracle.sh).
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import tensorflow.compat.v1 as tf

    tf.get_logger().setLevel("ERROR")  # Python-side deprecation warnings
    tf.disable_v2_behavior()
elif ENGINE == "minitf":
    import minitf.compat.v1 as tf

    tf.disable_v2_behavior()
else:
    raise SystemExit(f"MINITF_ENGINE must be 'minitf' or 'tf', not {ENGINE!r}")

__all__ = ["tf", "ENGINE"]
