"""Widgets that show what the runtime did (``minitf.widgets``).

* :class:`PlacementView`     - where each op ran, and what crossed devices
* :class:`TransferView`      - a timeline of a step, with its transfers
* :class:`VariableStateView` - the variables each server holds, polled live
* :class:`ClusterView`       - the tasks, their devices and what they hold

All are plain ``ipywidgets`` boxes with a matplotlib picture, so they work in
JupyterLab, Notebook 7, VS Code and Colab, and fall back to a PNG (plus a
stable text ``repr``) where no widget front end runs.
"""

from .cluster_view import ClusterView
from .placement_view import PlacementView
from .transfer_view import TransferView
from .variable_view import VariableStateView

__all__ = ["PlacementView", "TransferView", "VariableStateView", "ClusterView"]
