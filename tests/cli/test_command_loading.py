"""Each command's module is imported when that command runs, and the map that says where each
command lives names every command the modules define."""
import importlib
import json
import pkgutil
import subprocess
import sys

import laser.cli
from laser.cli.common import COMMAND_MODULES, main

from conftest import ROOT


def test_the_map_names_every_command_the_modules_define():
    for module in pkgutil.iter_modules(laser.cli.__path__):
        importlib.import_module(f"laser.cli.{module.name}")
    assert set(main.commands) == set(COMMAND_MODULES)
    for name, module in COMMAND_MODULES.items():
        assert main.commands[name].callback.__module__ == f"laser.cli.{module}"


def test_a_command_imports_only_its_own_module():
    probe = ("import json, sys\nfrom laser.cli import main\n"
             "try:\n    main(['models'])\nexcept SystemExit:\n    pass\n"
             "print(json.dumps(sorted(m for m in sys.modules if m.startswith('laser.cli.'))), "
             "file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    loaded = json.loads(done.stderr.strip().splitlines()[-1])
    assert loaded == ["laser.cli.common", "laser.cli.models"]
