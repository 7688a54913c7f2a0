"""Progress bars are drawn on a terminal, never into a pipe or with -q, and tqdm is imported only
to draw one."""
import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios

from conftest import ROOT

# Runs `laser ARGS`, then says on stdout whether tqdm was imported.
PROBE = """
import sys
from laser.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("tqdm" in sys.modules)
"""


def run_with_stderr_on_a_terminal(*args: str) -> tuple[str, str]:
    """stdout, and what a pseudo-terminal on stderr received."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))  # 80 columns
    try:
        done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=terminal, text=True, timeout=300)
        os.close(terminal)
        received = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal's other side is closed: all was read
                break
            if not chunk:
                break
            received += chunk
    finally:
        os.close(controller)
    return done.stdout, received.decode("utf-8", "replace")


def _embed_args(tmp_path, *more: str) -> list[str]:
    source = tmp_path / "en.txt"
    source.write_text("Hello world.\nThe book is on the table.\n", encoding="utf-8")
    return ["embed", str(source), "-o", str(tmp_path / "out.npy"), "--lang", "en", *more]


def test_a_terminal_sees_the_bar(tmp_path):
    stdout, terminal = run_with_stderr_on_a_terminal(*_embed_args(tmp_path))
    assert "/2 [" in terminal and "sent/s]" in terminal  # tqdm drew the count of 2 lines
    assert stdout.split() == ["True"]


def test_quiet_draws_nothing_and_imports_no_tqdm(tmp_path):
    stdout, terminal = run_with_stderr_on_a_terminal(*_embed_args(tmp_path, "-q"))
    assert terminal == ""
    assert stdout.split() == ["False"]


def test_a_pipe_gets_no_bar_and_no_tqdm(tmp_path):
    done = subprocess.run([sys.executable, "-c", PROBE, *_embed_args(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert "sent/s" not in done.stderr and "\r" not in done.stderr
    assert done.stdout.split() == ["False"]
