"""``tf.data`` (the compat.v1 flavour): Datasets and TF1 iterators.

See :mod:`minitf.data.dataset_ops` for how a pipeline runs inside
``sess.run`` and :mod:`minitf.ops.iterator_ops` for the iterator ops.
"""

import types as _types

from minitf.data.dataset_ops import (AUTOTUNE, Dataset, DatasetV1,  # noqa: F401
                                     TextLineDataset, TFRecordDataset)
from minitf.ops.iterator_ops import (Iterator, make_initializable_iterator,  # noqa: F401
                                      make_one_shot_iterator)

experimental = _types.ModuleType("minitf.data.experimental", "tf.data.experimental")
experimental.AUTOTUNE = AUTOTUNE
