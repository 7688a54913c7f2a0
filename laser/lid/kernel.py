"""laser lid's C kernel (_features.c: fastText's per-line features, a quantised matrix
decoded), built with the package; a checkout builds it in place."""
from __future__ import annotations

from types import ModuleType

from ..errors import LaserError


def kernel() -> ModuleType:
    """The kernel's module; a one-line error where it is not built."""
    try:
        from . import _features
    except ImportError:
        raise LaserError("laser lid's C kernel (laser/lid/_features.c) is not built here: run "
                         "`make install`, or `python setup.py build_ext --inplace` in a "
                         "checkout") from None
    return _features
