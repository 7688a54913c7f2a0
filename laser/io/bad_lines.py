"""Lines that are not UTF-8 text (invalid UTF-8, a NUL byte), as web text has them: an error
naming the file and line (`fail`, the default), dropped (`skip`) or decoded with U+FFFD in
place of each bad byte (`replace`); the lines skipped or replaced are counted, the first few
named by file and line. The readers of `laser.io.sources` take a `BadLines`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..errors import LaserError, located

BAD_LINE_POLICIES = ("fail", "skip", "replace")
EMBED_BAD_LINES = ("fail", "replace")  # where every line keeps its row
NAMED_LINES = 5  # the bad lines a report names; the others are counted
REPLACEMENT = "\ufffd"


@dataclass
class BadLines:
    """What the readers do with a line that is not UTF-8 text (`policy`: fail, skip or
    replace; `option`: the command-line option that chooses it, named in the error of `fail`,
    with the `choices` it offers), and the lines found so far: how many, the first few as
    `FILE:LINE (problem)`."""

    policy: str = "fail"
    option: Optional[str] = None
    choices: tuple[str, ...] = BAD_LINE_POLICIES
    count: int = 0
    named: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.policy not in self.choices:
            raise LaserError(f"unknown bad-line policy {self.policy!r}; choose one of "
                             f"{', '.join(self.choices)}")

    def decoded(self, name: str, number: int, raw: bytes) -> Optional[str]:
        """The text of line `number` of `name` (its bytes without '\\n'); None to skip it."""
        problem = line_problem(raw)
        if problem is None:
            return raw.decode("utf-8")
        if self.policy == "fail":
            raise located(name, number, problem + self._hint())
        self.count += 1
        if len(self.named) < NAMED_LINES:
            self.named.append(f"{name}:{number} ({problem})")
        if self.policy == "skip":
            return None
        return raw.decode("utf-8", "replace").replace("\x00", REPLACEMENT)

    def _hint(self) -> str:
        others = [choice for choice in self.choices if choice != "fail"]
        if not self.option or not others:
            return ""
        how = {"skip": "skip drops such lines", "replace": "replace decodes them with U+FFFD"}
        return f" ({self.option} {' or '.join(how[choice] for choice in others)})"

    def again(self) -> "BadLines":
        """The same policy for another read of the same lines, counted apart (a command
        reading its input twice reports the lines once)."""
        return BadLines(self.policy, self.option, self.choices)

    def merge(self, count: int, named: list[str]) -> None:
        """Add the lines another reader found (a shard task's record)."""
        self.count += count
        self.named += named[:NAMED_LINES - len(self.named)]

    def record(self) -> dict:
        """What a sidecar or a task's record keeps of them."""
        return {"policy": self.policy, "count": self.count, "named": list(self.named)}

    def summary(self) -> Optional[str]:
        """One line for stderr: how many lines were skipped or replaced and the first few
        (None when there were none)."""
        if not self.count:
            return None
        done = "skipped" if self.policy == "skip" else "replaced bad bytes with U+FFFD in"
        more = f", and {self.count - len(self.named)} more" if self.count > len(self.named) else ""
        return (f"{done} {self.count} line{'s' * (self.count != 1)} that "
                f"{'are' if self.count != 1 else 'is'} not UTF-8 text "
                f"({self.option or 'bad lines'} {self.policy}): {', '.join(self.named)}{more}")


def line_problem(raw: bytes) -> Optional[str]:
    """Why a line's bytes are not UTF-8 text (a NUL byte, invalid UTF-8 at a byte), or None."""
    if b"\x00" in raw:
        return "contains a NUL byte; is this a text file?"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"invalid UTF-8 at byte {error.start + 1}"
    return None
