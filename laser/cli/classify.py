"""`laser classify train|predict|eval`: zero-shot cross-lingual classification."""
from __future__ import annotations

import json

import click

from .common import encoder_loader, examples, main, model_options
from .options import quiet_option

lang_option = click.option("--lang", "-l", help="Language of the sentences (ISO 639-1 or 639-3).")


@main.group(epilog=examples(
    "laser classify train train.en.tsv --lang en -o topics",
    "laser classify predict topics test.de.txt --lang de -o predictions.txt",
    "laser classify eval topics dev.fr.tsv --lang fr"))
def classify() -> None:
    """Zero-shot classification: train on labelled sentences of one language, predict any other."""


@classify.command(epilog=examples(
    "laser classify train train.en.tsv --lang en --dev dev.en.tsv -o topics",
    "laser classify train --embeddings train.npy --labels train.labels -o topics"))
@click.argument("train_path", metavar="[TRAIN]", required=False)
@click.option("--output", "-o", required=True, type=click.Path(file_okay=False),
              help="Classifier directory to write (classifier.json + classifier.pt).")
@lang_option
@click.option("--dev", "dev_path", help="label<TAB>text dev file for early stopping, in --lang "
                                        "(default: a random 10% of TRAIN is held out).")
@click.option("--embeddings", help="Train from these embeddings (made by `laser embed`, whose "
                                   ".json sidecar names the model) instead of TRAIN.")
@click.option("--labels", help="With --embeddings: one label per row.")
@click.option("--dev-embeddings", help="With --embeddings: dev embeddings for early stopping.")
@click.option("--dev-labels", help="With --dev-embeddings: one label per row.")
@click.option("--hidden", type=click.IntRange(min=1), default=256, show_default=True,
              help="Units of the hidden layer.")
@click.option("--dropout", type=click.FloatRange(0, 1, max_open=True), default=0.3,
              show_default=True, help="Dropout after the hidden layer.")
@click.option("--epochs", type=click.IntRange(min=1), default=200, show_default=True,
              help="At most this many passes over the training data.")
@click.option("--patience", type=click.IntRange(min=1), default=20, show_default=True,
              help="Stop after this many epochs without a better dev accuracy.")
@click.option("--batch-size", type=click.IntRange(min=1), default=32, show_default=True)
@click.option("--learning-rate", type=click.FloatRange(min=0, min_open=True), default=1e-3,
              show_default=True, help="Adam's learning rate.")
@click.option("--seed", type=int, default=1, show_default=True,
              help="All randomness (initialisation, order, dropout, held-out dev) comes from it.")
@model_options
@quiet_option
def train(train_path, output, lang, dev_path, embeddings, labels, dev_embeddings, dev_labels,
          hidden, dropout, epochs, patience, batch_size, learning_rate, seed, quiet, model):
    """Train a classifier on TRAIN (label<TAB>text lines, no header) or on --embeddings and
    --labels; it records the model, and only that model's embeddings are classified later."""
    from ..apps.classify import TrainOptions
    from ..apps.classify_files import LabelledFile, train_files
    from ..errors import LaserError
    if dev_path and embeddings or dev_embeddings and not embeddings:
        raise LaserError("--dev goes with a TRAIN file, --dev-embeddings with --embeddings")
    data = LabelledFile(train_path, lang, embeddings, labels)
    dev = (LabelledFile(dev_path, lang) if dev_path else
           LabelledFile(None, None, dev_embeddings, dev_labels) if dev_embeddings else None)
    settings = TrainOptions(hidden=hidden, dropout=dropout, epochs=epochs, patience=patience,
                            batch_size=batch_size, learning_rate=learning_rate, seed=seed)
    encoder = None if embeddings else encoder_loader(model, lang, source=train_path)
    classifier = train_files(data, output, encoder, dev, settings, progress=not quiet)
    if not quiet:
        record = classifier.record
        click.echo(f"trained on {record['train_examples']} examples ({len(classifier.labels)} "
                   f"labels), best dev accuracy {100 * record['dev_accuracy']:.2f}% at epoch "
                   f"{record['best_epoch']} of {record['epochs_run']}; saved to {output}", err=True)


@classify.command(epilog=examples(
    "laser classify predict topics test.de.txt --lang de -o predictions.txt",
    "laser classify predict topics --embeddings test.npy"))
@click.argument("classifier_dir", metavar="CLF_DIR")
@click.argument("input_path", metavar="[INPUT]", required=False)
@click.option("--output", "-o", default="-", show_default=True,
              help="Labels, one per input line ('-': standard output).")
@lang_option
@click.option("--embeddings", help="Classify these embeddings (with their .json sidecar) "
                                   "instead of INPUT.")
@model_options
@quiet_option
def predict(classifier_dir, input_path, output, lang, embeddings, quiet, model):
    """Predict the label of every line of INPUT (sentences of any language the model knows)."""
    from ..apps.classify import Classifier
    from ..apps.classify_files import SentenceFile, predict_file
    sentences = SentenceFile(input_path, lang, embeddings)
    classifier = Classifier.load(classifier_dir)
    encoder = None if embeddings else encoder_loader(
        model, lang, classifier.model.origin("the classifier"), input_path)
    predict_file(classifier, sentences, output, encoder, progress=not quiet and output != "-")


@classify.command("eval", epilog=examples(
    "laser classify eval topics dev.fr.tsv --lang fr",
    "laser classify eval topics --embeddings dev.npy --labels dev.labels --json"))
@click.argument("classifier_dir", metavar="CLF_DIR")
@click.argument("test_path", metavar="[TEST]", required=False)
@lang_option
@click.option("--embeddings", help="Evaluate on these embeddings instead of TEST.")
@click.option("--labels", help="With --embeddings: one label per row.")
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
@model_options
@quiet_option
def evaluate(classifier_dir, test_path, lang, embeddings, labels, as_json, quiet, model):
    """Accuracy, macro-F1 and confusion matrix on TEST (label<TAB>text lines, any language)."""
    from ..apps.classify import Classifier
    from ..apps.classify_files import LabelledFile, evaluate_file
    test = LabelledFile(test_path, lang, embeddings, labels)
    classifier = Classifier.load(classifier_dir)
    encoder = None if embeddings else encoder_loader(
        model, lang, classifier.model.origin("the classifier"), test_path)
    scores = evaluate_file(classifier, test, encoder, progress=not quiet)
    click.echo(json.dumps(scores.as_dict()) if as_json else scores.report())
