"""The runnable examples of README.md and docs/*.md, as the docs-example convention defines them.

Fenced blocks tagged ```sh and ```python are examples; they run per Markdown file, in order, in
one working directory. A hidden comment before a block adds setup (run as sh) or skips it:

    <!-- example-setup
    printf 'Hello world.\\n' > sentences.txt
    -->
    <!-- example: skip needs-download -->

Blocks tagged console, text, json, tsv (and the other SHOWN tags) are shown output, never run.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

RUNNABLE = ("sh", "python")
SHOWN = ("console", "text", "json", "jsonl", "tsv", "csv", "yaml", "toml", "ini", "diff")
SKIP_REASONS = ("needs-download", "needs-gpu", "needs-cluster", "needs-shared", "slow",
                "long-running")

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})\s*(?P<tag>[^\s`]*)")
SETUP_START = re.compile(r"^\s*<!--\s*example-setup\s*$")
SETUP_END = re.compile(r"^\s*-->\s*$")
SKIP = re.compile(r"^\s*<!--\s*example:\s*skip\b\s*(?P<reason>.*?)\s*-->\s*$")
# The first word of a line that would be typed at a prompt, for untagged blocks.
COMMAND_WORDS = {
    "laser", "python", "python3", "pip", "pip3", "make", "cd", "export", "printf", "echo", "cat",
    "ray", "git", "bash", "sh", "source", ".", "curl", "wget", "zcat", "gzip", "head", "tail",
    "mkdir", "ls", "rm", "cp", "mv", "docker", "uvicorn", "pytest", "nvidia-smi",
}


@dataclass
class Block:
    """One fenced block of a Markdown file (or one hidden setup comment, tag `setup`)."""
    path: Path
    line: int
    tag: str
    code: str
    skip: str | None = None
    setup: list[Block] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.path.name}:{self.line}"


@dataclass
class Problem:
    """A violation of the convention, at a file and line."""
    path: Path
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path.name}:{self.line}: {self.what}"


@dataclass
class Parsed:
    blocks: list[Block]          # every fenced block, in order
    problems: list[Problem]      # misplaced or malformed markers, unclosed fences

    @property
    def examples(self) -> list[Block]:
        """The runnable blocks, each carrying the setup comments written before it."""
        return [block for block in self.blocks if block.tag in RUNNABLE]


def _fence_body(lines: list[str], start: int, indent: int, fence: str) -> tuple[str, int] | None:
    """The text of the fence opened at `start` (indentation removed) and the index of its
    closing line; None when it is never closed."""
    closing = re.compile(rf"^ {{0,{indent + 3}}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
    for end in range(start + 1, len(lines)):
        if closing.match(lines[end]):
            body = [line[indent:] if line[:indent].strip() == "" else line.lstrip()
                    for line in lines[start + 1:end]]
            return "".join(line + "\n" for line in body), end
    return None


def parse(path: Path) -> Parsed:
    """The fenced blocks of `path` with their setup and skip comments attached."""
    lines = path.read_text(encoding="utf-8").split("\n")
    blocks: list[Block] = []
    problems: list[Problem] = []
    pending_setup: list[Block] = []
    pending_skip: tuple[int, str] | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        number = index + 1
        fence = FENCE.match(line)
        if fence:
            found = _fence_body(lines, index, len(fence["indent"]), fence["fence"])
            if found is None:
                problems.append(Problem(path, number, "fence never closed"))
                break
            body, index = found
            block = Block(path, number, fence["tag"].lower(), body)
            if block.tag in RUNNABLE:
                block.setup, pending_setup = pending_setup, []
                if pending_skip:
                    block.skip, pending_skip = pending_skip[1], None
            elif pending_skip:
                problems.append(Problem(path, pending_skip[0],
                                        f"skip comment before a ```{block.tag} block, not sh/python"))
                pending_skip = None
            blocks.append(block)
        elif SETUP_START.match(line):
            end = next((i for i in range(index + 1, len(lines)) if SETUP_END.match(lines[i])), None)
            if end is None:
                problems.append(Problem(path, number, "example-setup comment never closed (-->)"))
                break
            body = "".join(text + "\n" for text in lines[index + 1:end])
            pending_setup.append(Block(path, number, "setup", body))
            index = end
        elif SKIP.match(line):
            reason = SKIP.match(line)["reason"]
            if reason not in SKIP_REASONS:
                problems.append(Problem(path, number, f"skip reason {reason!r} is not one of "
                                                      f"{', '.join(SKIP_REASONS)}"))
            pending_skip = (number, reason)
        elif line.lstrip().startswith("<!--") and re.search(r"\bexample[:-]", line):
            problems.append(Problem(path, number, f"malformed example comment: {line.strip()}"))
        index += 1
    if pending_setup:
        problems.append(Problem(path, pending_setup[0].line, "example-setup with no sh/python "
                                                             "block after it"))
    if pending_skip:
        problems.append(Problem(path, pending_skip[0], "skip comment with no block after it"))
    return Parsed(blocks, problems)


def looks_like_commands(code: str) -> bool:
    """Whether an untagged block reads as commands to type (a `$ ` prompt, or a first line
    after any `#` comments starting with a command such as `laser` or `python`)."""
    lines = [line.strip() for line in code.splitlines() if line.strip()]
    if any(line.startswith("$ ") for line in lines):
        return True
    lines = [line for line in lines if not line.startswith("#")]
    if not lines:
        return False
    first_word = lines[0].split()[0]
    return first_word in COMMAND_WORDS or first_word.startswith((".venv/", "./"))


def _has_prompts(block: Block) -> bool:
    prompt = "$ " if block.tag == "sh" else ">>> "
    return any(line.startswith(prompt) for line in block.code.splitlines())


def tag_problems(parsed: Parsed) -> list[Problem]:
    """Blocks whose tag breaks the convention: an unknown tag (```bash would silently not
    run), or no tag on what reads as commands."""
    problems = []
    for block in parsed.blocks:
        if block.tag and block.tag not in RUNNABLE + SHOWN:
            problems.append(Problem(block.path, block.line,
                                    f"```{block.tag}: tag examples sh or python (they run), or "
                                    f"shown output {', '.join(SHOWN)}"))
        elif block.tag in RUNNABLE and _has_prompts(block):
            problems.append(Problem(block.path, block.line,
                                    f"```{block.tag} block with prompts ($ or >>>): write the "
                                    f"commands alone, the output in a ```console or ```text block"))
        elif not block.tag and looks_like_commands(block.code):
            problems.append(Problem(block.path, block.line,
                                    "untagged block of commands: tag it ```sh (runs) or "
                                    "```console (shown, with its output)"))
    return problems


BLOCK_TIMEOUT = 300          # seconds; an example that needs longer is marked `skip slow`
TAIL_LINES = 30
# Before an sh block: name the command that failed (bash runs it with -e, so a failing command
# stops the block; not pipefail, which users' shells do not set and `| head` would trip).
SH_PROLOGUE = "trap 'echo \"example: exit status $? from: $BASH_COMMAND\" >&2' ERR\n"


class ExampleFailed(Exception):
    """A block exited non-zero (or ran too long): its text, exit status and output tails."""


@dataclass
class ExampleSession:
    """One Markdown file's examples being run: its working directory, environment, and how far
    through its blocks it is (blocks run in order, each at most once)."""
    workdir: Path
    env: dict[str, str]
    done: int = 0

    def catch_up(self, examples: list[Block], index: int) -> None:
        """Run the blocks before `index` that have not run yet (just their setup when skipped),
        so that a block selected alone finds what the page made before it."""
        while self.done < index:
            block = examples[self.done]
            self.done += 1
            self.run(block, setup_only=block.skip is not None)

    def run(self, block: Block, setup_only: bool = False) -> None:
        for setup in block.setup:
            self._execute(setup)
        if not setup_only:
            self._execute(block)

    def _execute(self, block: Block) -> None:
        if block.tag == "python":
            command = [sys.executable, "-c", block.code]
        else:
            command = ["bash", "-e", "-c", SH_PROLOGUE + block.code]
        # A session of its own, so that a block that runs too long is stopped with every
        # command it started.
        with subprocess.Popen(command, cwd=self.workdir, env=self.env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              errors="replace", start_new_session=True) as process:
            try:
                stdout, stderr = process.communicate(timeout=BLOCK_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                stdout, stderr = process.communicate()
                raise ExampleFailed(_report(block, f"ran past {BLOCK_TIMEOUT} s (mark it "
                                                   f"`<!-- example: skip slow -->` or make it "
                                                   f"smaller)", stdout, stderr)) from None
        if process.returncode != 0:
            raise ExampleFailed(_report(block, f"exit status {process.returncode}", stdout, stderr))


def _tail(text: str | None) -> str:
    lines = (text or "").rstrip("\n").split("\n")
    return "\n".join("    " + line for line in lines[-TAIL_LINES:])


def _report(block: Block, what: str, stdout, stderr) -> str:
    kind = "example-setup" if block.tag == "setup" else f"```{block.tag} block"
    code = "\n".join("    " + line for line in block.code.rstrip("\n").split("\n"))
    return (f"{block.where}: the {kind} failed, {what}\n{code}\n"
            f"  stderr (last {TAIL_LINES} lines):\n{_tail(stderr)}\n"
            f"  stdout (last {TAIL_LINES} lines):\n{_tail(stdout)}")
