"""`laser serve`: the HTTP server (docs/serving.md)."""
from __future__ import annotations

import click

from ..errors import LaserError
from ..runtime import RUNTIMES
from ..runtime.quantize import QUANTIZATIONS
from .common import examples, lang_fallback_option, main


@main.command(epilog=examples(
    "laser serve",
    "laser serve --port 9000 --index en.index",
    "laser serve --model default --model l2=~/laser/laser2 --host 0.0.0.0 --api-key-file keys.txt"))
@click.option("--model", "-m", "models", multiple=True, metavar="[NAME=]DIR|NAME",
              help="A model to serve (repeat for more): a directory or a model name ('default', "
                   "or one fetched with `laser download`), NAME= setting what requests call it. "
                   "Loaded at start; the first answers requests that name no model. Default: "
                   "each request's language picks its model as in `laser embed`, loaded on "
                   "first use (see --max-models). Never downloads.")
@click.option("--index", "indexes", multiple=True, metavar="[NAME=]INDEX",
              help="A `laser knn build` index for /search (repeat for more).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0: every interface).")
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True,
              help="Port (0: a free one, printed on stderr).")
@click.option("--max-models", type=click.IntRange(min=1), default=3, show_default=True,
              help="Without --model: models kept loaded (least recently used dropped first).")
@click.option("--max-tokens", type=click.IntRange(min=1), default=12000, show_default=True,
              help="Token budget of one batch (padded), as in `laser embed`.")
@click.option("--runtime", type=click.Choice(RUNTIMES), default="auto",
              show_default=True, help="What runs the network, as in `laser embed`.")
@click.option("--quantize", type=click.Choice(QUANTIZATIONS), default=None,
              help="int8 inference, as in `laser embed`.")
@lang_fallback_option
@click.option("--max-body-bytes", type=click.IntRange(min=1), default=1_000_000,
              show_default=True, help="Largest request body; larger: 413.")
@click.option("--max-inputs", type=click.IntRange(min=1), default=64, show_default=True,
              help="Most sentences in one request; more: 413.")
@click.option("--max-chars", type=click.IntRange(min=1), default=4000, show_default=True,
              help="Longest sentence in characters; longer: 413, or cut with \"truncate\": true.")
@click.option("--max-queued", type=click.IntRange(min=1), default=2048, show_default=True,
              help="Most sentences waiting or being embedded; more: 429 with Retry-After.")
@click.option("--max-connections", type=click.IntRange(min=1), default=512, show_default=True,
              help="Most open connections and requests; more: 503.")
@click.option("--max-k", type=click.IntRange(min=1), default=100, show_default=True,
              help="Most neighbours one /search query may ask for.")
@click.option("--max-align-sentences", type=click.IntRange(min=1), default=1000,
              show_default=True, help="Most sentences of each side of one /align request.")
@click.option("--retry-after", type=click.IntRange(min=1), default=1, show_default=True,
              help="Seconds in the Retry-After header of a 429 or 503.")
@click.option("--shutdown-timeout", type=click.IntRange(min=0), default=30, show_default=True,
              help="Seconds requests in flight get to finish after SIGTERM or SIGINT.")
@click.option("--api-key", "api_keys", multiple=True, metavar="KEY",
              help="Require `Authorization: Bearer KEY` (repeat for more keys; also "
                   "--api-key-file and $LASER_API_KEY). /health, / and /openapi.json stay open.")
@click.option("--api-key-file", type=click.Path(dir_okay=False), metavar="FILE",
              help="API keys, one a line (# comments).")
@click.option("--open-metrics", is_flag=True,
              help="With API keys: let /metrics be read without one (for Prometheus).")
@click.option("--cors-origin", "cors_origins", multiple=True, metavar="ORIGIN",
              help="Let pages of ORIGIN (e.g. https://app.example.com; * for any) call the "
                   "server from a browser (repeatable).")
@click.option("--access-log", is_flag=True,
              help="Log every request on stderr, with its X-Request-Id.")
@click.option("--access-log-format", type=click.Choice(("text", "json")), default="text",
              show_default=True, help="The access log as text or as JSON lines.")
def serve(models, indexes, host, port, max_models, max_tokens, runtime, quantize, lang_fallback,
          shutdown_timeout, api_keys, api_key_file, open_metrics, cors_origins, access_log,
          access_log_format, **limits):
    """Serve embeddings (/embed, /v1/embeddings, /vectorize) and k-NN search (/search) over
    HTTP, with a page at / to try them. Stops on SIGTERM or Ctrl-C after finishing the
    requests in flight."""
    from ..optional import require
    for module in ("starlette", "uvicorn", "orjson"):
        require(module, "laser serve")
    from ..serving.app import Access, Service
    from ..serving.auth import load_keys
    from ..serving.exchange import AccessLog, Cors
    from ..serving.indexes import load_served_index
    from ..serving.limits import Limits
    from ..models.options import ModelOptions
    from ..serving.models import ServedModels
    from ..serving.server import ServerOptions, run
    if limits["max_queued"] < limits["max_inputs"]:
        raise LaserError("--max-queued must be at least --max-inputs, or the largest requests "
                         "would never fit in the queue")
    access = Access(load_keys(api_keys, api_key_file), open_metrics, Cors.of(cors_origins),
                    AccessLog(access_log_format) if access_log else None)
    loaded = [load_served_index(spec) for spec in indexes]
    by_name = {index.name: index for index in loaded}
    if len(by_name) < len(loaded):
        raise LaserError("--index: two indexes have the same name; name them NAME=INDEX")
    options = ModelOptions(max_tokens=max_tokens, runtime=runtime, quantize=quantize,
                           lang_fallback=lang_fallback)
    served = ServedModels(list(models), options, max_models)
    run(Service(served, by_name, Limits(**limits), access),
        ServerOptions(host, port, shutdown_timeout))
