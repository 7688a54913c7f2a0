"""The command group and what every command shares: clean one-line errors on stderr."""
from __future__ import annotations

import difflib
import functools
import importlib
import sys
import warnings
from typing import Callable, Optional

import click

from ..errors import LaserError
from ..runtime import RUNTIMES
from ..runtime.quantize import QUANTIZATIONS
from ..optional import EXTRAS, install_hint
from ..version import __version__

NOTES_SHOWN = ".notes-shown"
# The module of `laser.cli` that defines each command: it is imported only when that command
# runs (or `laser --help` lists them all), so one command's start-up never pays for the others.
COMMAND_MODULES = {
    "classify": "classify", "dedup": "dedup", "download": "models", "embed": "embed",
    "eval": "evaluate", "filter": "filter", "knn": "knn", "mine": "mine", "models": "models",
    "paraphrase": "paraphrase", "preprocess": "embed", "score": "score", "serve": "serve",
    "train": "train",
}


class LaserGroup(click.Group):
    """A click group that loads each command's module on demand, and prints LaserError (and
    broken pipes) as one line, not a traceback."""

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


def model_options(command):
    """The options that choose and configure a model, shared by every command that embeds."""
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
    ]
    for option in reversed(options):
        command = option(command)
    return command


MODEL_KEYS = ("model", "encoder", "bpe_codes", "bpe_vocab", "spm_model", "spm_vocab", "max_tokens",
              "max_length", "device", "bpe_backend", "quantize", "runtime")


def split_model_options(options: dict) -> dict:
    """Take the values of `model_options` out of a command's keyword arguments."""
    return {key: options.pop(key) for key in MODEL_KEYS}


def chosen_model_files(model, encoder, bpe_codes, bpe_vocab, spm_model, spm_vocab, lang=None,
                       quiet=False):
    """The model files of `model_options`; `lang` picks its official model when it is downloaded
    and no model was named (else a one-line note on stderr says what to download, once)."""
    from ..models.resolve import choose_model
    return noted(choose_model(model_request(dict(
        model=model, encoder=encoder, bpe_codes=bpe_codes, bpe_vocab=bpe_vocab,
        spm_model=spm_model, spm_vocab=spm_vocab), lang)), quiet)


def model_request(model: dict, lang: Optional[str] = None, named: Optional[str] = None):
    """The ModelRequest of the values of `model_options` (`named`: a side's own --src-model or
    --trg-model, instead of --model)."""
    from ..models.resolve import ModelRequest
    return ModelRequest(named or model["model"], model["encoder"], model["bpe_codes"],
                        model["bpe_vocab"], model["spm_model"], model["spm_vocab"], lang)


def noted(choice, quiet: bool = False):
    """The files of a ModelChoice, its note (if any) said once on stderr unless `quiet`."""
    if choice.note and not quiet:
        note_once(choice.note)
    return choice.files


def note_once(note: str) -> None:
    """`note` on stderr unless this $LASER_HOME has shown it before: a hint is news once, not on
    every run (the notes shown are remembered in $LASER_HOME/NOTES_SHOWN)."""
    from ..models.registry import laser_home
    shown = laser_home() / NOTES_SHOWN
    try:
        if note in shown.read_text(encoding="utf-8").splitlines():
            return
    except OSError:
        pass
    click.echo(f"laser: {note}", err=True)
    try:
        shown.parent.mkdir(parents=True, exist_ok=True)
        with open(shown, "a", encoding="utf-8") as record:
            record.write(note + "\n")
    except OSError:
        pass  # an unwritable cache: the note comes again next time


def load_encoder(model, encoder, bpe_codes, bpe_vocab, spm_model, spm_vocab, max_tokens,
                 max_length, device, bpe_backend, quantize=None, runtime="auto", lang=None,
                 quiet=False):
    """An Encoder from the values of `model_options` (see `chosen_model_files`)."""
    files = chosen_model_files(model, encoder, bpe_codes, bpe_vocab, spm_model, spm_vocab, lang,
                               quiet)
    return encoder_of(files, dict(max_tokens=max_tokens, max_length=max_length, device=device,
                                  bpe_backend=bpe_backend, quantize=quantize, runtime=runtime))


def encoder_of(files, model: dict):
    """An Encoder of `files`, run as the values of `model_options` say."""
    from ..encoder import Encoder
    return Encoder(files, device=model["device"], max_tokens=model["max_tokens"],
                   max_length=model["max_length"], bpe_backend=model["bpe_backend"],
                   quantize=model.get("quantize"), runtime=model.get("runtime", "auto"))


def encoder_spec(model, encoder, bpe_codes, bpe_vocab, spm_model, spm_vocab, max_tokens,
                 max_length, device, bpe_backend, quantize=None, runtime="auto", lang=None,
                 quiet=False):
    """How Ray workers load the model of `model_options` (chosen here, loaded there)."""
    from ..distributed.work import EncoderSpec
    files = chosen_model_files(model, encoder, bpe_codes, bpe_vocab, spm_model, spm_vocab, lang,
                               quiet)
    return EncoderSpec(files, device, max_tokens, max_length, bpe_backend, quantize, runtime)


class ModelLoader:
    """The model of `model_options`: its files chosen on first need (`choose` returns a
    ModelChoice), the encoder loaded on first call, so precomputed inputs never load one; the
    encoder of `other` (the other side's loader) when it is the same model."""

    def __init__(self, model: dict, choose: Callable, other: Optional[ModelLoader] = None):
        self.model, self.choose, self.other = model, choose, other

    @functools.cached_property
    def files(self):
        return noted(self.choose())

    @functools.cached_property
    def encoder(self):
        if self.other is not None and self.other.files == self.files:
            return self.other.encoder
        return encoder_of(self.files, self.model)

    def __call__(self):
        return self.encoder


def encoder_loader(model: dict, lang: Optional[str] = None, space: Optional[str] = None,
                   named: Optional[str] = None) -> ModelLoader:
    """The model of `model_options`, loaded on first use only; with `space`, for text in `lang`
    whose vectors meet vectors of that space (`choose_model_in_space`)."""
    from ..models.resolve import choose_model_in_space
    return ModelLoader(model, lambda: choose_model_in_space(model_request(model, lang, named),
                                                            space))


def side_loaders(model: dict, src, trg) -> tuple[ModelLoader, ModelLoader]:
    """The models of the two sides (EmbeddingSource values with their `lang` and own `model`):
    text against text as `choose_side_models`; text against precomputed embeddings in their
    space."""
    from ..models.resolve import choose_side_models
    from ..models.spaces import embeddings_origin
    if src.embeddings or trg.embeddings:
        src_space, trg_space = (embeddings_origin(side.embeddings).space if side.embeddings
                                else None for side in (trg, src))
        return (encoder_loader(model, src.lang, src_space, src.model),
                encoder_loader(model, trg.lang, trg_space, trg.model))
    choices = functools.cache(lambda: choose_side_models(model_request(model, src.lang, src.model),
                                                         model_request(model, trg.lang, trg.model)))
    first = ModelLoader(model, lambda: choices()[0])
    return first, ModelLoader(model, lambda: choices()[1], other=first)


def examples(*lines: str) -> str:
    """A help epilog of example command lines, printed as written."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)
