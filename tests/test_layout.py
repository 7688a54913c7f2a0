"""The package's layout holds: each stage imports only the stages before it (README "Layout"),
so that, for instance, `laser.models` (which model) never reaches into `laser.runtime` (how
vectors are computed)."""
import ast
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "laser"
# Modules every stage may use, then the stages in order; the interfaces (cli, the top-level
# package, its compatibility and demo modules) may use any of them.
SHARED = {"errors", "version", "optional", "progress"}
STAGES = ["io", "text", "subwords", "models", "runtime", "encoder", "pipeline", "search",
          "mining", "eval", "apps", "training", "distributed", "serving"]
INTERFACES = {"cli", "__init__", "__main__", "laser_encoders", "demo", "integrations"}
# What `from laser import NAME` gives, by the stage that defines it.
PACKAGE_NAMES = {"Encoder": "encoder", "LaserError": "errors", "__version__": "version"}


def stage_of(module: str) -> str:
    """`laser.models.files` -> `models`; the package itself -> `__init__`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_stages(path: Path) -> set[str]:
    """The laser stages `path` imports, at its top or inside functions."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level \
                else []
            target = ".".join(base + ([node.module] if node.module else []))
            names = [f"laser.{PACKAGE_NAMES.get(alias.name, alias.name)}"
                     for alias in node.names] if target == "laser" else [target]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found |= {stage_of(name) for name in names if name.startswith("laser.")}
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
