"""The command group and what every command shares: clean one-line errors on stderr."""
from __future__ import annotations

import sys

import click

from ..errors import LaserError
from ..version import __version__


class LaserGroup(click.Group):
    """A click group that prints LaserError (and broken pipes) as one line, not a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except LaserError as error:
            click.echo(f"laser: error: {error}", err=True)
            sys.exit(1)
        except BrokenPipeError:
            sys.exit(1)
        except KeyboardInterrupt:
            click.echo("laser: interrupted", err=True)
            sys.exit(130)


@click.group(cls=LaserGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="laser")
def main() -> None:
    """LASER multilingual sentence embeddings, similarity search and bitext mining."""
