"""Every ```sh and ```python example of README.md and docs/*.md runs as written (the
docs-example convention, tests/docs_examples.py): per Markdown file, in order, in one fresh
working directory with an empty $LASER_HOME and this checkout's `laser` on PATH. Examples marked
`<!-- example: skip REASON -->` are reported as skipped, with file, line and reason (`-rs`).
Hidden setups find this checkout (its vendored tests/data, tasks/) in $DOCS_CHECKOUT."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT
from docs_examples import (SHOWN, ExampleFailed, ExampleSession, looks_like_commands, parse,
                           tag_problems)

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PARSED = {page: parse(page) for page in PAGES}


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def _example_cases() -> list:
    return [pytest.param(page, index, id=f"{_name(page)}:{block.line}")
            for page in PAGES for index, block in enumerate(PARSED[page].examples)]


def example_environment(home: Path) -> dict[str, str]:
    """The environment examples run in: this checkout's package and the `laser` and `python`
    of the running interpreter first on PATH, an empty download cache, no model from outside."""
    env = dict(os.environ, LASER_HOME=str(home))
    for name in ("LASER_MODEL", "LASER_DOWNLOAD_URL"):
        env.pop(name, None)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["DOCS_CHECKOUT"] = str(ROOT)   # for hidden setups: `ln -s "$DOCS_CHECKOUT/tests" tests`
    return env


@pytest.fixture(scope="session")
def sessions(tmp_path_factory):
    """One ExampleSession per Markdown file, made when its first example runs."""
    if not (Path(sys.executable).parent / "laser").exists():
        pytest.fail(f"no `laser` command beside {sys.executable}: install the project "
                    f"(make install) and run the tests with its python")
    made: dict[Path, ExampleSession] = {}

    def session(page: Path) -> ExampleSession:
        if page not in made:
            root = tmp_path_factory.mktemp(page.stem)
            (root / "work").mkdir()
            made[page] = ExampleSession(root / "work", example_environment(root / "laser-home"))
        return made[page]
    return session


@pytest.mark.slow   # each runs `laser` commands or a Python process: a few seconds, some more
@pytest.mark.parametrize("page,index", _example_cases())
def test_example_runs_as_written(page, index, sessions):
    examples = PARSED[page].examples
    block = examples[index]
    if block.skip:
        pytest.skip(f"{_name(page)}:{block.line}: {block.skip}")
    session = sessions(page)
    failure = None
    try:
        session.catch_up(examples, index)
    except ExampleFailed as earlier:
        failure = f"an earlier example of the page failed:\n{earlier}"
    if failure is None:
        session.done = index + 1
        try:
            session.run(block)
        except ExampleFailed as failed:
            failure = str(failed)
    if failure:
        pytest.fail(failure, pytrace=False)


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_page_follows_the_example_convention(page):
    parsed = PARSED[page]
    problems = parsed.problems + tag_problems(parsed)
    assert not problems, "\n".join(map(str, problems))


# The convention checker and the runner themselves, on small pages written here.

def _page(tmp_path: Path, text: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    return page


def test_setup_and_skip_comments_attach_to_the_next_example(tmp_path):
    page = _page(tmp_path, "intro\n\n<!-- example-setup\nprintf 'a\\n' > a.txt\n-->\n\n"
                           "```sh\ncat a.txt\n```\n\n```text\na\n```\n\n"
                           "<!-- example: skip needs-gpu -->\n```python\nimport torch\n```\n")
    parsed = parse(page)
    assert [(block.line, block.tag) for block in parsed.blocks] == [
        (7, "sh"), (11, "text"), (16, "python")]
    first, second = parsed.examples
    assert [setup.code for setup in first.setup] == ["printf 'a\\n' > a.txt\n"]
    assert (first.skip, second.skip, second.setup) == (None, "needs-gpu", [])
    assert parsed.problems == [] and tag_problems(parsed) == []


def test_indentation_inside_a_block_is_kept_and_a_list_item_block_dedented(tmp_path):
    page = _page(tmp_path, "```python\nfor i in range(2):\n    print(i)\n```\n\n"
                           "- item\n\n  ```sh\n  echo one\n    echo two\n  ```\n")
    first, second = parse(page).examples
    assert first.code == "for i in range(2):\n    print(i)\n"
    assert second.code == "echo one\n  echo two\n"


@pytest.mark.parametrize("text,problem", [
    ("```\n$ laser embed in.txt -o in.npy\n```\n", "untagged block of commands"),
    ("```\nlaser models\n```\n", "untagged block of commands"),
    ("```\n# first\nlaser models\n```\n", "untagged block of commands"),
    ("```bash\nlaser models\n```\n", "```bash: tag examples sh or python"),
    ("```sh\n$ laser models\nNAME\n```\n", "```sh block with prompts"),
    ("```python\n>>> 1 + 1\n2\n```\n", "```python block with prompts"),
    ("<!-- example: skip flaky -->\n```sh\nlaser models\n```\n", "skip reason 'flaky'"),
    ("<!-- example: skip slow -->\n```text\nout\n```\n", "skip comment before a ```text block"),
    ("<!-- example-setup\ntouch a\n-->\nno block follows\n", "example-setup with no sh/python"),
    ("<!-- example-setup\ntouch a\n", "example-setup comment never closed"),
    ("```sh\nlaser models\n", "fence never closed"),
])
def test_convention_problems_are_found(tmp_path, text, problem):
    parsed = parse(_page(tmp_path, text))
    found = [str(found) for found in parsed.problems + tag_problems(parsed)]
    assert len(found) == 1 and problem in found[0], found


def test_untagged_illustrations_and_shown_output_pass(tmp_path):
    shown = "".join(f"```{tag}\nlaser models\n```\n" for tag in SHOWN)
    parsed = parse(_page(tmp_path, "```\nrow 1: 0.93\n```\n" + shown))
    assert tag_problems(parsed) == [] and parsed.examples == []
    assert not looks_like_commands("  | a | b |\n") and looks_like_commands("python -c 1\n")


def test_a_failing_example_names_its_block_status_and_stderr(tmp_path):
    page = _page(tmp_path, "```sh\necho made > out.txt\nlaser embed missing.txt -o x.npy\n"
                           "echo never\n```\n")
    (tmp_path / "work").mkdir()
    session = ExampleSession(tmp_path / "work", example_environment(tmp_path / "home"))
    with pytest.raises(ExampleFailed) as failure:
        session.run(parse(page).examples[0])
    report = str(failure.value)
    assert report.startswith("page.md:1: the ```sh block failed, exit status ")
    assert "laser embed missing.txt -o x.npy" in report and "missing.txt" in report.split("stderr")[1]
    assert "example: exit status" in report and (tmp_path / "work" / "out.txt").exists()
    assert "never" not in report.split("stdout")[-1]


def test_a_block_that_runs_too_long_is_stopped_with_what_it_started(tmp_path, monkeypatch):
    import docs_examples
    monkeypatch.setattr(docs_examples, "BLOCK_TIMEOUT", 1)
    page = _page(tmp_path, "```sh\necho started >&2\nsleep 30 & echo $! > child.pid\nwait\n```\n")
    (tmp_path / "work").mkdir()
    session = ExampleSession(tmp_path / "work", example_environment(tmp_path / "home"))
    with pytest.raises(ExampleFailed, match="ran past 1 s") as failure:
        session.run(parse(page).examples[0])
    assert "started" in str(failure.value)
    child = int((tmp_path / "work" / "child.pid").read_text())
    for _ in range(100):  # SIGKILL was sent to its group; the kernel may take a moment to reap it
        if not _alive(child):
            break
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, killed and not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_examples_run_in_order_and_a_block_alone_runs_the_ones_before_it(tmp_path):
    page = _page(tmp_path, "<!-- example-setup\nprintf 'x\\n' > a.txt\n-->\n"
                           "<!-- example: skip slow -->\n```sh\nexit 3\n```\n"
                           "```python\nopen('b.txt', 'w').write(open('a.txt').read() * 2)\n```\n"
                           "```sh\ntest \"$(cat b.txt)\" = \"$(printf 'x\\nx')\"\n```\n")
    examples = parse(page).examples
    (tmp_path / "work").mkdir()
    session = ExampleSession(tmp_path / "work", example_environment(tmp_path / "home"))
    session.catch_up(examples, 2)          # the skipped block's setup, then the python block
    session.run(examples[2])
    assert session.done == 2
