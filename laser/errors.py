"""The one exception type the CLI turns into a clean one-line message, and warnings that reach
the Python API's caller."""
from __future__ import annotations

import os
import sys
import warnings


class LaserError(Exception):
    """A user-facing error: bad input, a missing model, a mismatch. Never a bug."""


def located(path: str, line_number: int, message: str) -> LaserError:
    """An error that names the file and the 1-based line it concerns."""
    return LaserError(f"{path}:{line_number}: {message}")


class ModelChoiceWarning(UserWarning):
    """A note on the model the Python API chose (the shipped default for lack of a download):
    shown once a process, at the caller's line."""


warnings.filterwarnings("once", category=ModelChoiceWarning, append=True)


def warn_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """`warnings.warn` attributed to the first frame outside the laser package: the line of
    the user's code that called into it."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 2  # 1 would name this function
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
