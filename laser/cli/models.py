"""`laser download` and `laser models`."""
from __future__ import annotations

from typing import Optional

import click

from .common import examples, main


@main.command(epilog=examples(
    "laser download 93langs",
    "laser download laser2 --base-url http://mirror.example.org/laser",
    "LASER_HOME=/data/laser laser download 93langs -q"))
@click.argument("names", metavar="NAME...", nargs=-1, required=True)
@click.option("--base-url", metavar="URL", envvar="LASER_DOWNLOAD_URL", show_envvar=True,
              help="Mirror with the layout of https://dl.fbaipublicfiles.com to download from.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
def download(names, base_url, quiet):
    """Download official models into $LASER_HOME: resumable, verified (see `laser models`)."""
    from ..models.download import download_model
    for name in names:
        directory = download_model(name, base_url=base_url, progress=not quiet)
        if not quiet:
            click.echo(f"{name}: ready in {directory}", err=True)


@main.command(epilog=examples("laser models", "LASER_HOME=/data/laser laser models"))
def models():
    """List the shipped default and the official models: downloaded or not, size and path."""
    from ..models.registry import available_models, laser_home
    rows = [("NAME", "FAMILY", "STATUS", "SIZE", "PATH")]
    rows += [(m.name, m.family, m.state, human_size(m.size), str(m.path) if m.path else "-")
             for m in available_models()]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths)] + [row[-1]]
        click.echo("  ".join(cells))
    click.echo(f"downloads go to {laser_home()} ($LASER_HOME)", err=True)


def human_size(size: Optional[int]) -> str:
    """Bytes as B, KiB, MiB or GiB with one decimal; '?' when unknown."""
    if size is None:
        return "?"
    if size < 1024:
        return f"{size} B"
    value, unit = size / 1024, "KiB"
    for bigger in ("MiB", "GiB"):
        if value < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{value:.1f} {unit}"
