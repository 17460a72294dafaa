"""The interpolation methods, one module each (like Kerncraft's ``models/``).

What a method is (:class:`.method.Method`) and the registry :data:`METHODS` are in
:mod:`.method`; each module defines one method and registers it.  Add a method by
adding a module and importing it here: the order of the imports is the order
``--method`` lists the names in.
"""

from __future__ import annotations

# isort: off
from . import linear, pchip, logcurve  # noqa: F401 (importing registers the method)

# isort: on
from .method import DEFAULT_METHOD, METHODS, Method

__all__ = ["DEFAULT_METHOD", "METHODS", "Method"]
