import importlib
import subprocess
import sys

import pytest

import laser


@pytest.mark.parametrize("name", laser.APPLICATIONS)
def test_each_application_is_a_top_level_name(name):
    assert getattr(laser, name) is importlib.import_module(f"laser.apps.{name}")
    assert name in laser.__all__


def test_the_application_names_are_imported_on_first_use_only():
    code = "import sys, laser; print('laser.apps' in sys.modules, 'torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]
    with pytest.raises(AttributeError, match="no attribute 'classifier'"):
        laser.classifier


def test_each_application_imports_by_its_public_name():
    """`from laser.classify import Classifier` (as docs/applications.md writes it) gives the
    objects of `laser.apps.classify`: one module under two names, its own spec kept."""
    code = ("import importlib, sys, laser\n"
            "from laser.classify import Classifier\n"
            "assert Classifier is sys.modules['laser.apps.classify'].Classifier\n"
            "for name in laser.APPLICATIONS:\n"
            "    module = importlib.import_module('laser.' + name)\n"
            "    assert module is sys.modules['laser.apps.' + name] is getattr(laser, name)\n"
            "    assert module.__spec__.name == 'laser.apps.' + name\n"
            "print('ok')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout == "ok\n", result.stderr
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("laser.classifier")
