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
