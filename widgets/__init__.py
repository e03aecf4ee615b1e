"""Widgets that show what the runtime did (``minitf.widgets``).

* :class:`PlacementView`     - where each op ran, and what crossed devices
* :class:`TransferView`      - a step as a trace: device lanes, transfers
* :class:`VariableStateView` - the variables each server holds, polled live
* :class:`ClusterView`       - the tasks, their devices and what they hold

Each is a plain ``ipywidgets`` box around an SVG picture (hover any mark for
its details), so it works in JupyterLab, Notebook 7, VS Code and Colab, and
falls back to a PNG of the same picture (plus a stable text ``repr``) where
no widget front end runs. Each also reads real TensorFlow's ``RunMetadata``.
Every view colours a device the same way (:func:`device_color`).
"""

from .cluster_view import ClusterView
from .colors import device_color, reset_device_colors
from .placement_view import PlacementView
from .transfer_view import TransferView
from .variable_view import VariableStateView

__all__ = ["PlacementView", "TransferView", "VariableStateView", "ClusterView",
           "device_color", "reset_device_colors"]
