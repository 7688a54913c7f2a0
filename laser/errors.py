"""The one exception type the CLI turns into a clean one-line message."""


class LaserError(Exception):
    """A user-facing error: bad input, a missing model, a mismatch. Never a bug."""


def located(path: str, line_number: int, message: str) -> LaserError:
    """An error that names the file and the 1-based line it concerns."""
    return LaserError(f"{path}:{line_number}: {message}")
