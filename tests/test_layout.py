"""The package's layout holds: each stage imports only the stages before it (README "Layout"),
so that, for instance, `laser.models` (which model) never reaches into `laser.runtime` (how
vectors are computed)."""
import ast
from pathlib import Path
from typing import Iterator

import pytest

from conftest import ROOT

PACKAGE = ROOT / "laser"
# Modules every stage may use, then the stages in order; the interfaces (cli, the top-level
# package, its compatibility and demo modules) may use any of them.
SHARED = {"errors", "version", "optional", "progress"}
STAGES = ["io", "text", "subwords", "models", "lid", "runtime", "encoder", "pipeline", "search",
          "mining", "align", "eval", "apps", "training", "distributed", "serving"]
INTERFACES = {"cli", "__init__", "__main__", "laser_encoders", "demo", "integrations"}
# What `from laser import NAME` gives, by the stage that defines it.
PACKAGE_NAMES = {"Encoder": "encoder", "LaserError": "errors", "__version__": "version",
                 "identify": "lid"}


def stage_of(module: str) -> str:
    """`laser.models.files` -> `models`; the package itself -> `__init__`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> Iterator[tuple[str, list[str]]]:
    """Each import of `path`, at its top or inside functions: the absolute module it imports
    from and the names it takes (`import X`: X and no names)."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level \
                else []
            yield ".".join(base + ([node.module] if node.module else [])), \
                [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            yield from ((alias.name, []) for alias in node.names)


def imported_stages(path: Path) -> set[str]:
    """The laser stages `path` imports, at its top or inside functions."""
    found = set()
    for target, names in imports(path):
        modules = [f"laser.{PACKAGE_NAMES.get(name, name)}" for name in names] \
            if target == "laser" else [target]
        found |= {stage_of(name) for name in modules if name.startswith("laser.")}
    return found


@pytest.mark.parametrize("stage", STAGES)
def test_each_stage_imports_only_earlier_stages(stage):
    allowed = SHARED | set(STAGES[:STAGES.index(stage) + 1])
    stage_path = PACKAGE / stage
    paths = sorted(stage_path.rglob("*.py")) if stage_path.is_dir() else [PACKAGE / f"{stage}.py"]
    wrong = {f"{path.relative_to(ROOT)} imports laser.{other}"
             for path in paths for other in imported_stages(path) - allowed}
    assert not wrong, sorted(wrong)


def test_every_module_belongs_to_a_stage():
    names = {path.stem if path.parent == PACKAGE else path.relative_to(PACKAGE).parts[0]
             for path in PACKAGE.rglob("*.py")}
    assert names <= SHARED | set(STAGES) | INTERFACES, names - SHARED - set(STAGES) - INTERFACES


def imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The modules of laser/ (`modules`) that `path` imports (a module, or one named in its
    package's `from . import`)."""
    found = set()
    for target, names in imports(path):
        found |= {f"{target}.{name}" if f"{target}.{name}" in modules else target
                  for name in names} or {target}
    return (found & modules) - {module_name(path)}


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles of `graph`: each a path from a module back to itself."""
    circles, done = [], set()

    def visit(module: str, path: list[str]) -> None:
        for target in sorted(graph[module]):
            if target in path:
                circles.append(path[path.index(target):] + [target])
            elif target not in done:
                visit(target, path + [target])
        done.add(module)

    for module in sorted(graph):
        if module not in done:
            visit(module, [module])
    return circles


def test_no_module_imports_itself_through_others():
    paths = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {module: imported_modules(path, set(paths)) for module, path in paths.items()}
    assert not import_circles(graph), import_circles(graph)


def test_each_module_of_the_model_stage_says_which_question_it_answers():
    unsaid = [path.name for path in sorted((PACKAGE / "models").glob("*.py"))
              if "?" not in (ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
                             or "").split("\n")[0]]
    assert not unsaid, unsaid
