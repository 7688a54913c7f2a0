"""The page at `/`: a similarity matrix of typed sentences, a query box for loaded indexes, and
two texts aligned into beads (POST /align).

Plain HTML and JavaScript in one file beside this module, no build step and nothing fetched from
elsewhere: it works offline, against the server that serves it."""
from __future__ import annotations

from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=2)
def page_html(keys_required: bool = False) -> str:
    """The page, told whether the server needs an API key (then it asks for one before any
    call)."""
    page = resources.files("laser.serving").joinpath("page.html").read_text("utf-8")
    return page.replace("{{KEYS}}", "required" if keys_required else "none", 1)
