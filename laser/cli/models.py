"""`laser download` and `laser models`."""
from __future__ import annotations

import click

from .common import examples, human_size, main


@main.command(epilog=examples(
    "laser download 93langs laser2",
    "laser download --lang igbo --base-url http://mirror.example.org/laser",
    "LASER_HOME=/data/laser laser download 93langs -q"))
@click.argument("names", metavar="[NAME]...", nargs=-1)
@click.option("--lang", "-l", "langs", multiple=True, metavar="LANG",
              help="Also download the official model of LANG (its LASER3 encoder, else LASER2); "
                   "repeatable.")
@click.option("--base-url", metavar="URL", envvar="LASER_DOWNLOAD_URL", show_envvar=True,
              help="Mirror with the layout of https://dl.fbaipublicfiles.com to download from.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
def download(names, langs, base_url, quiet):
    """Download official models into $LASER_HOME: resumable, verified (see `laser models`)."""
    from ..models.download import download_model
    from ..models.languages import official_model
    if not names and not langs:
        raise click.UsageError("name a model (see `laser models`) or pass --lang")
    for name in dict.fromkeys([*names, *map(official_model, langs)]):
        directory = download_model(name, base_url=base_url, progress=not quiet)
        if not quiet:
            click.echo(f"{name}: ready in {directory}", err=True)


@main.command(epilog=examples("laser models", "laser models --languages",
                              "LASER_HOME=/data/laser laser models"))
@click.option("--languages", is_flag=True,
              help="List the FLORES-200 languages instead: each one's official model (its LASER3 "
                   "encoder, else LASER2), preprocessing and download status.")
def models(languages):
    """List the shipped default and the official models: embedding space, downloaded or not,
    size and path (vectors of one space may be compared)."""
    from ..models.installed import available_models
    from ..models.registry import laser_home
    if languages:
        print_table(language_rows())
    else:
        rows = [("NAME", "FAMILY", "SPACE", "STATUS", "SIZE", "PATH")]
        rows += [(m.label, m.family, m.space or "-", m.state, human_size(m.size),
                  str(m.path) if m.path else "-") for m in available_models()]
        print_table(rows)
    click.echo(f"downloads go to {laser_home()} ($LASER_HOME)", err=True)


def language_rows() -> list[tuple[str, ...]]:
    """LANGUAGE, NAME, MODEL, PREPROCESSING and STATUS of every FLORES-200 language."""
    from ..models.languages import language_table
    from ..models.installed import downloaded_model_dir
    rows = [("LANGUAGE", "NAME", "MODEL", "PREPROCESSING", "STATUS")]
    for row in language_table():
        status = "-" if row.model is None else (
            "downloaded" if downloaded_model_dir(row.model) else "not downloaded")
        rows.append((row.code, row.name, row.model or "-", row.preprocessing, status))
    return rows


def print_table(rows: list[tuple[str, ...]]) -> None:
    """Rows as aligned columns on stdout, separated by two spaces."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths)] + [row[-1]]
        click.echo("  ".join(cells))
