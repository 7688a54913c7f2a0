import pytest


@pytest.fixture
def home(tmp_path, monkeypatch):
    """An empty $LASER_HOME and no mirror or model from the environment."""
    monkeypatch.setenv("LASER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("LASER_DOWNLOAD_URL", raising=False)
    monkeypatch.delenv("LASER_MODEL", raising=False)
    return tmp_path / "home"
