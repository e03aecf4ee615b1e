"""minitf: a small, readable graph runtime that runs TensorFlow 1.x-style code.

``import minitf.compat.v1 as tf`` gives the TF1 namespace. Importing minitf is
cheap: no kernel is compiled until a graph first runs an op that needs it.
"""

__version__ = "0.1.0"
