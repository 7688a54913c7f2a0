"""The command group and what every command shares: clean one-line errors on stderr."""
from __future__ import annotations

import difflib
import functools
import importlib
import os
import sys
import warnings
from typing import TYPE_CHECKING, Optional, Sequence

import click

from ..errors import LaserError
from ..models.options import ModelOptions
from ..runtime import RUNTIMES
from ..runtime.quantize import QUANTIZATIONS
from ..text.languages import DEFAULT_LANG_FALLBACK
from ..optional import EXTRAS, install_hint
from ..version import __version__

if TYPE_CHECKING:
    from ..distributed.work import EncoderSpec
    from ..encoder import Encoder, EncoderLoader
    from ..models.resolve import ModelRequest
    from ..models.spaces import Origin
    from ..search.inputs import EmbeddingSource

# The module of `laser.cli` that defines each command: it is imported only when that command
# runs (or `laser --help` lists them all), so one command's start-up never pays for the others.
COMMAND_MODULES = {
    "align": "align", "classify": "classify", "dedup": "dedup", "download": "models",
    "embed": "embed", "eval": "evaluate", "filter": "filter", "knn": "knn", "lid": "lid",
    "mine": "mine", "models": "models", "paraphrase": "paraphrase", "prepare": "prepare",
    "preprocess": "embed", "score": "score", "serve": "serve", "split": "split", "train": "train",
}


class LaserCommand(click.Command):
    """A click command that says in laser's one line why it got more arguments than it takes,
    before it checks any option: most often a shell's expansion of an unquoted glob meant as
    one input."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not ctx.allow_extra_args and not ctx.resilient_parsing:
            self._refuse_extra_arguments(ctx, args)
        return super().parse_args(ctx, args)

    def _refuse_extra_arguments(self, ctx: click.Context, args: list[str]) -> None:
        slots = [param for param in self.params if isinstance(param, click.Argument)]
        if any(param.nargs < 0 for param in slots) or set(args) & set(ctx.help_option_names):
            return  # it takes any number, or --help shows what it takes
        try:
            found, extra, _ = self.make_parser(ctx).parse_args(args=list(args))
        except click.UsageError:
            return  # an unknown option or a missing value: click says so
        if extra:
            given = [value for param in slots if param.name in found
                     for value in ([found[param.name]] if param.nargs == 1
                                   else found[param.name])]
            raise LaserError(extra_arguments_message(self, ctx, given, extra))


def extra_arguments_message(command: click.Command, ctx: click.Context, given: list[str],
                            extra: list[str]) -> str:
    """What is wrong with the arguments past those `command` takes (`given` to them, then
    `extra`), and what to do."""
    names = [param.human_readable_name for param in command.params
             if isinstance(param, click.Argument)]
    takes = f"{len(names)} argument{'s' * (len(names) != 1)} ({' '.join(names)})" \
        if names else "no argument"
    shown = " ".join(extra[:3]) + (" ..." if len(extra) > 3 else "")
    path = " ".join(["laser", *ctx.command_path.split()[1:]])  # as run, whatever argv[0] was
    message = f"{path} takes {takes}, and got {len(extra)} more ({shown})"
    pattern = expanded_glob([*given, *extra])
    if names and (pattern or any(os.path.lexists(arg) for arg in extra)):
        each = (f"{names[0]} and {names[1]} are one argument each" if len(names) == 2 else
                "each input is one argument")
        message += (f": did a shell expand an unquoted glob? {each}: quote the glob "
                    f"('{pattern or 'DIR/*.gz'}') for laser to expand it, or pass a directory "
                    "or @LIST")
    return message


def expanded_glob(paths: list[str]) -> Optional[str]:
    """The glob a shell seems to have expanded into some of `paths`: the longest run of two or
    more existing files of one folder with one suffix, as `FOLDER/*SUFFIX` (None: no run)."""
    def kind(path: str) -> Optional[tuple[str, str]]:
        return ((os.path.dirname(path), os.path.splitext(path)[1])
                if os.path.isfile(path) else None)
    best: list[str] = []
    run: list[str] = []
    for path in paths:
        if run and kind(path) == kind(run[0]):
            run.append(path)
        else:
            run = [path] if kind(path) else []
        if len(run) >= 2 and len(run) > len(best):
            best = list(run)
    if not best:
        return None
    folder, suffix = kind(best[0])
    return os.path.join(folder, f"*{suffix}")


class LaserSubgroup(click.Group):
    """A group of commands under a laser command (`laser knn build`), whose commands are
    LaserCommands."""

    command_class = LaserCommand


class LaserGroup(click.Group):
    """A click group that loads each command's module on demand, and prints LaserError (and
    broken pipes) as one line, not a traceback."""

    command_class = LaserCommand
    group_class = LaserSubgroup

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMAND_MODULES)

    def get_command(self, ctx: click.Context, name: str) -> Optional[click.Command]:
        if name in COMMAND_MODULES and name not in self.commands:
            importlib.import_module(f"{__package__}.{COMMAND_MODULES[name]}")  # registers it
        return super().get_command(ctx, name)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """As click's, suggesting the close names among every command, loaded or not."""
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as error:
            close = difflib.get_close_matches(args[0], self.list_commands(ctx))
            if close and "Did you mean" not in error.format_message():
                error.message += f" Did you mean {' or '.join(map(repr, close))}?"
            raise

    def invoke(self, ctx: click.Context):
        try:
            with warnings.catch_warnings():
                warnings.showwarning = _one_line_warning
                return super().invoke(ctx)
        except LaserError as error:
            click.echo(f"laser: error: {error}", err=True)
            sys.exit(1)
        except ModuleNotFoundError as error:
            if error.name not in EXTRAS:
                raise
            click.echo(f"laser: error: laser {ctx.invoked_subcommand} needs {error.name}, which "
                       f"is not installed: {install_hint(error.name)}", err=True)
            sys.exit(1)
        except BrokenPipeError:
            sys.exit(1)
        except KeyboardInterrupt:
            click.echo("laser: interrupted", err=True)
            sys.exit(130)


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings reach users as one line, without Python's source location."""
    click.echo(f"laser: warning: {message}", err=True)


@click.group(cls=LaserGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="laser")
def main() -> None:
    """LASER multilingual sentence embeddings, similarity search and bitext mining."""


lang_fallback_option = click.option(
    "--lang-fallback", default=DEFAULT_LANG_FALLBACK, show_default=True, metavar="LANG",
    help="With a language `auto`: the language a line identified as `und` (no letters, such "
         "as numbers, emoji or URLs) is preprocessed and embedded as.")


def model_options(command):
    """The options that choose and configure a model, shared by every command that embeds,
    passed on as one `model` ModelOptions."""
    options = [
        click.option("--model", "-m", metavar="DIR|NAME",
                     help="Model directory holding one *.pt with *.fcodes and *.fvocab (LASER1) or "
                          "with *.spm and *.cvocab (LASER2), or a model "
                          "name: 'default' (shipped) or one fetched with `laser download` "
                          "(see `laser models`). Default: $LASER_MODEL, else the official model "
                          "of --lang if downloaded, else the shipped model."),
        click.option("--encoder", type=click.Path(dir_okay=False), help="Checkpoint path (instead of --model)."),
        click.option("--bpe-codes", type=click.Path(dir_okay=False), help="fastBPE codes path."),
        click.option("--bpe-vocab", type=click.Path(dir_okay=False), help="fastBPE vocabulary path."),
        click.option("--spm-model", type=click.Path(dir_okay=False),
                     help="SentencePiece model path (LASER2/LASER3, with --encoder)."),
        click.option("--spm-vocab", type=click.Path(dir_okay=False),
                     help="SentencePiece *.cvocab path (default: the one beside --spm-model)."),
        click.option("--max-tokens", type=click.IntRange(min=1), default=12000, show_default=True,
                     help="Token budget of one batch (padded)."),
        click.option("--max-length", type=click.IntRange(min=1), default=None,
                     help="Truncate sentences to this many subword tokens (default: embed in full)."),
        click.option("--device", default="cpu", show_default=True, help="cpu, cuda or cuda:N."),
        click.option("--bpe-backend", type=click.Choice(["auto", "fastbpe", "python"]),
                     default="auto", show_default=True,
                     help="fastBPE when installed, else the identical Python applier."),
        click.option("--quantize", type=click.Choice(QUANTIZATIONS), default=None,
                     help="int8: run the encoder in int8 on the CPU (ONNX Runtime for BiLSTM "
                          "models, its graph cached in $LASER_HOME/onnx; torch for LASER3), "
                          "faster, vectors within ~0.99 cosine of float32. fp16: float16 "
                          "inference in torch, for --device cuda (docs/performance.md)."),
        click.option("--runtime", type=click.Choice(RUNTIMES),
                     default="auto", show_default=True,
                     help="What runs the network. auto: ONNX Runtime for BiLSTM models on the "
                          "CPU (graph cached in $LASER_HOME/onnx), torch otherwise."),
        lang_fallback_option,
    ]

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        return command(*args, model=ModelOptions.take(kwargs), **kwargs)
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def chosen_loaders(model: ModelOptions, sides: Sequence[ModelRequest],
                   quiet: bool = False) -> list[Optional[EncoderLoader]]:
    """The encoder of each side, its model chosen now (`choose_models`) and loaded on first use
    (one for the sides that share a model; None for a side whose vectors exist), saying the
    choice's note, if any, when it loads unless `quiet`."""
    from ..encoder import encoder_loaders
    from ..models.resolve import choose_models
    return encoder_loaders(choose_models(model, sides), model, notes=not quiet)


def load_encoder(model: ModelOptions, lang: Optional[str] = None, quiet: bool = False) -> Encoder:
    """An Encoder of the model that `model` and `lang` choose (`chosen_loaders`)."""
    encoder, = chosen_loaders(model, [text_side(lang)], quiet)
    return encoder()


def encoder_spec(model: ModelOptions, lang: Optional[str] = None,
                 quiet: bool = False) -> EncoderSpec:
    """How Ray workers load the model that `model` and `lang` choose (chosen here, loaded
    there)."""
    from ..distributed.work import EncoderSpec
    from ..models.registry import note_once
    encoder, = chosen_loaders(model, [text_side(lang)], quiet)
    if encoder.note:
        note_once(encoder.note)
    return EncoderSpec(encoder.files, **model.running())


def encoder_loader(model: ModelOptions, lang: Optional[str] = None,
                   against: Optional[Origin] = None, source: Optional[str] = None,
                   named: Optional[str] = None) -> EncoderLoader:
    """The encoder of the text `source` in `lang` (`named`: its side's own model), its model
    chosen now and loaded on first use; for vectors that meet those of `against` (an index, a
    classifier, a filter) when given."""
    from ..models.resolve import ModelRequest
    sides = [ModelRequest(origin=against)] * bool(against) + [text_side(lang, source, named)]
    return chosen_loaders(model, sides)[-1]


def side_loaders(model: ModelOptions, src: EmbeddingSource, trg: EmbeddingSource,
                 sources: tuple[Optional[str], Optional[str]] = (None, None),
                 ) -> tuple[Optional[EncoderLoader], ...]:
    """The encoders of the two sides of a bitext, their models chosen together
    (`choose_models`) and loaded on first use; None for a side of precomputed embeddings
    (`sources`: how messages name each side's text, default its file)."""
    sides = [side.request(source) for side, source in zip((src, trg), sources)]
    return tuple(chosen_loaders(model, sides))


def text_side(lang: Optional[str] = None, source: Optional[str] = None,
              named: Optional[str] = None) -> ModelRequest:
    """The request of a side of text in `lang`, named `source` in messages."""
    from ..models.resolve import ModelRequest
    return ModelRequest(named, lang, source or "the sentences")


def hold_work_dir_until_done(directory) -> None:
    """Hold a work directory (`laser.io.locks`) until the command ends, however it ends."""
    from ..io.locks import hold_work_dir
    click.get_current_context().with_resource(hold_work_dir(directory))


def examples(*lines: str) -> str:
    """A help epilog of example command lines, printed as written."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


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
