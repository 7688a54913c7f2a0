"""The application: Starlette's router over endpoints that answer in JSON, each request counted
and timed in the metrics, checked for its API key, given a request id and logged."""
from __future__ import annotations

import asyncio
import base64
import sys
import time
import traceback
from concurrent.futures import Future
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from typing import Awaitable, Callable, Optional

import numpy as np
import orjson
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route, Router
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocketClose

from ..errors import LaserError
from ..search.vectors import unit_rows
from ..version import __version__
from .auth import ApiKeys
from .alignment import bead_records, check_one_space, document_sentences
from .batching import Batcher, Embedded, QueueFull, ShuttingDown
from .exchange import AccessLog, Cors, Exchange, RequestHead
from .indexes import ServedIndex, check_embedding_space, nearest
from .limits import (Limits, RequestError, body_sentences, boolean, checked_sentence,
                     decoded_body, integer, language, optional_name, query_boolean,
                     query_parameters)
from .metrics import Metrics
from .models import ServedModel, ServedModels
from .openapi import openapi_document
from .page import page_html


@dataclass(frozen=True)
class Access:
    """Who may call the server: API keys (`/health`, the page and `/openapi.json` stay open, and
    `/metrics` when `open_metrics`), the browser origins CORS lets in, and the access log."""

    keys: ApiKeys = field(default_factory=ApiKeys)
    open_metrics: bool = False
    cors: Cors = field(default_factory=Cors)
    log: Optional[AccessLog] = None

    def open(self, method: str, path: str) -> bool:
        """Whether a request needs no key: /health, the page, this API's description, and
        /metrics with open_metrics."""
        return (method in ("GET", "HEAD") and path in OPEN_PATHS) or \
            (self.open_metrics and path == "/metrics")


OPEN_PATHS = frozenset({"/health", "/", "/openapi.json"})


@dataclass
class Service:
    """What the endpoints share: models, indexes, limits, the batcher and the metrics."""

    models: ServedModels
    indexes: dict[str, ServedIndex]
    limits: Limits
    access: Access = field(default_factory=Access)
    metrics: Metrics = field(default_factory=Metrics)
    batcher: Optional[Batcher] = None

    def __post_init__(self):
        self.batcher = self.batcher or Batcher(self.limits.max_queued, self.metrics)


class JSONResponse(Response):
    """A JSON answer written by orjson: numpy rows as they are, each float32 in the shortest
    form that reads back as the same float32 (as text-embeddings-inference writes them): over
    twenty times faster than json.dumps of the rows as Python floats, in 56% of the bytes
    (bench/json_rows.py)."""

    media_type = "application/json"

    def render(self, content: object) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_SERIALIZE_NUMPY)


# An endpoint's work: (the response, how many sentences it embedded)
Handler = Callable[[Request, Service], Awaitable[tuple[Response, int]]]


class ClientGone(Exception):
    """The client closed its connection before its answer: nothing is sent (status 499)."""


@dataclass(frozen=True)
class Endpoint:
    """The ASGI application of one path: its handler's answer, or the JSON error of a refusal
    (401 without a valid key, 405 for a method it lacks), with the request's X-Request-Id,
    counted, timed and logged (status 499 when the client goes away or the request is
    cancelled). Endpoints are plain ASGI applications under Starlette's router, without
    Starlette's middleware: that stack cost about a fifth of the event loop's time per request
    (docs/serving.md, "Why Starlette on uvicorn")."""

    path: str
    handler: Handler
    service: Service
    methods: tuple[str, ...]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        self.service.metrics.started()
        status, sentences = 499, 0
        head = RequestHead.of(scope)
        try:
            response, sentences = await self.answer(Request(scope, receive), head)
            status = response.status_code
            response.raw_headers.append((b"x-request-id", head.request_id))
            allowed = self.service.access.cors.allowed(head.origin)
            if allowed is not None:
                response.raw_headers += self.service.access.cors.answer_headers(allowed)
            await response(scope, receive, send)
        except (ClientGone, ClientDisconnect):
            pass
        finally:
            seconds = time.perf_counter() - started
            self.service.metrics.answered(self.path, status, seconds, sentences)
            if self.service.access.log is not None:
                self.service.access.log.write(Exchange(scope, head, status, seconds, sentences))

    async def answer(self, request: Request, head: RequestHead) -> tuple[Response, int]:
        access = self.service.access
        if request.method == "OPTIONS" and access.cors.allowed(head.origin) is not None:
            return Response(status_code=204,
                            headers=access.cors.preflight_headers(self.methods)), 0
        if not (access.open(request.method, self.path) or access.keys.allow(head.authorization)):
            return error_response(RequestError(
                401, "send a valid API key: Authorization: Bearer KEY", "authentication_error",
                {"WWW-Authenticate": "Bearer"})), 0
        method = "GET" if request.method == "HEAD" else request.method
        if method not in self.methods:
            return error_response(RequestError(
                405, f"{request.method} {self.path}: Method Not Allowed",
                headers={"Allow": ", ".join(self.methods)})), 0
        return await refusals_as_json(self.handler, request, self.service)


async def refusals_as_json(handler: Handler, request: Request,
                           service: Service) -> tuple[Response, int]:
    """The handler's answer, or the JSON error of its refusal (a 500 for a bug, whose traceback
    goes to stderr while the server goes on)."""
    try:
        return await handler(request, service)
    except (ClientGone, ClientDisconnect):
        raise
    except RequestError as error:
        return error_response(error), 0
    except LaserError as error:
        return error_response(RequestError(422, str(error))), 0
    except Exception:
        traceback.print_exc(file=sys.stderr)
        return error_response(RequestError(500, "internal error; see the server's log",
                                           "server_error")), 0


def error_response(error: RequestError) -> JSONResponse:
    """The JSON body of every refusal (the OpenAI shape, which its client shows as is)."""
    return JSONResponse({"error": {"message": error.message, "type": error.kind,
                                   "code": error.status}},
                        status_code=error.status, headers=error.headers)


async def read_json(request: Request, limits: Limits) -> dict:
    """The request's JSON object, refused past max_body_bytes before it is all read."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limits.max_body_bytes:
        raise too_large(int(declared), limits)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limits.max_body_bytes:
            raise too_large(len(body), limits)
    return decoded_body(bytes(body))


def too_large(size: int, limits: Limits) -> RequestError:
    return RequestError(413, f"the body has {size} bytes or more; the limit is "
                             f"{limits.max_body_bytes} (--max-body-bytes)")


async def served_model(service: Service, name: Optional[str], lang: str) -> ServedModel:
    """The request's model; loading one (by-language mode) happens off the event loop."""
    return (service.models.ready(name, lang)
            or await run_in_threadpool(service.models.model, name, lang))


async def embedded(request: Request, service: Service, model: ServedModel,
                   sentences: list[str], lang: str) -> Embedded:
    """Rows of the sentences from the batcher: 429 when its queue is full; ClientGone, the
    sentences dropped from the queue, when the client disconnects first."""
    return await unless_abandoned(submitted(service, model, sentences, lang), request.receive)


def submitted(service: Service, model: ServedModel, sentences: list[str], lang: str) -> Future:
    """The batcher's Future of the sentences' rows: 429 when its queue is full, 503 once it
    shuts down."""
    try:
        return service.batcher.submit(model.encoder, sentences, lang)
    except QueueFull:
        seconds = service.limits.retry_after
        raise RequestError(429, f"the server is busy: {service.limits.max_queued} sentences are "
                                f"queued (--max-queued); retry after {seconds} s",
                           "overloaded", {"Retry-After": str(seconds)}) from None
    except ShuttingDown:
        raise RequestError(503, "the server is shutting down", "unavailable",
                           {"Retry-After": str(service.limits.retry_after)}) from None


async def unless_abandoned(future: Future, receive: Receive) -> Embedded:
    """The batcher's answer, awaited while the client's connection is watched: when the client
    disconnects (ClientGone) or the request is cancelled, the batcher's Future is cancelled,
    which frees its places in the queue and drops its sentences not yet embedded."""
    waited = awaited(future)
    watch = asyncio.get_running_loop().create_task(disconnection(receive))
    watch.add_done_callback(lambda _: waited.cancel())
    try:
        return await waited
    except asyncio.CancelledError:
        future.cancel()
        if watch.done() and not watch.cancelled():
            raise ClientGone() from None
        raise
    finally:
        watch.cancel()


async def disconnection(receive: Receive) -> None:
    """Returns once the client has disconnected (the body is read already)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def awaited(future: Future) -> asyncio.Future:
    """The batcher's Future as one the event loop awaits, set by one call from the thread that
    finishes it. (asyncio.wrap_future would cancel the batcher's Future only when the awaiting
    task is cancelled, not when the client goes away: `unless_abandoned` does both.)"""
    loop = asyncio.get_running_loop()
    waited = loop.create_future()

    def copy(done: Future) -> None:
        if waited.cancelled() or done.cancelled():
            return
        if done.exception() is not None:
            waited.set_exception(done.exception())
        else:
            waited.set_result(done.result())

    future.add_done_callback(lambda done: loop.call_soon_threadsafe(copy, done))
    return waited


async def vectorize(request: Request, service: Service) -> tuple[Response, int]:
    """GET /vectorize?q=...&lang=...: the official LASER docker app's request and answer."""
    params = query_parameters(request.scope["query_string"])
    if "q" not in params:
        raise RequestError(422, "pass the sentence as ?q=...")
    text = checked_sentence(params["q"], "q", service.limits,
                            query_boolean(params, "truncate"), "&truncate=true")
    lang = language(params.get("lang") or None)
    model = await served_model(service, params.get("model"), lang)
    rows = (await embedded(request, service, model, [text], lang)).rows
    return JSONResponse({"content": text, "embedding": rows}), 1


async def embed(request: Request, service: Service) -> tuple[Response, int]:
    """POST /embed: text-embeddings-inference's request and answer (a list of vectors)."""
    body = await read_json(request, service.limits)
    sentences = body_sentences(body, "inputs", service.limits)
    lang = language(body.get("lang"))
    model = await served_model(service, optional_name(body, "model"), lang)
    rows = (await embedded(request, service, model, sentences, lang)).rows
    if boolean(body, "normalize", True):
        rows = unit_rows(rows)
    return JSONResponse(rows), len(sentences)


async def openai_embeddings(request: Request, service: Service) -> tuple[Response, int]:
    """POST /v1/embeddings: the OpenAI API (its `openai` client works with base_url set)."""
    body = await read_json(request, service.limits)
    value = body.get("input")
    if isinstance(value, list) and value and not isinstance(value[0], str):
        raise RequestError(422, "'input' must hold strings: token arrays are not supported")
    sentences = body_sentences(body, "input", service.limits)
    encoding = body.get("encoding_format") or "float"
    if encoding not in ("float", "base64"):
        raise RequestError(422, f"'encoding_format' must be 'float' or 'base64', not {encoding!r}")
    lang = language(body.get("lang"))
    name = optional_name(body, "model")
    model = await served_model(service, name, lang)
    dimensions = body.get("dimensions")
    if dimensions is not None and dimensions != model.dim:
        raise RequestError(422, f"model {model.name!r} gives {model.dim} dimensions, "
                                f"not {dimensions!r}")
    result = await embedded(request, service, model, sentences, lang)
    rows = unit_rows(result.rows) if boolean(body, "normalize", False) else result.rows
    rows = np.ascontiguousarray(rows, dtype="<f4")  # base64: the little-endian bytes
    data = [{"object": "embedding", "index": position,
             "embedding": row if encoding == "float" else base64.b64encode(row).decode("ascii")}
            for position, row in enumerate(rows)]
    usage = {"prompt_tokens": result.tokens, "total_tokens": result.tokens}
    return JSONResponse({"object": "list", "data": data, "model": name or model.name,
                         "usage": usage}), len(sentences)


async def openai_models(request: Request, service: Service) -> tuple[Response, int]:
    """GET /v1/models: the loaded models, as the OpenAI API lists them."""
    data = [{"id": model.name, "object": "model", "created": 0, "owned_by": "laser"}
            for model in service.models.loaded()]
    return JSONResponse({"object": "list", "data": data}), 0


async def search_index(request: Request, service: Service) -> tuple[Response, int]:
    """POST /search: the k nearest indexed sentences of each query."""
    body = await read_json(request, service.limits)
    index = chosen_index(service, optional_name(body, "index"))
    queries = body_sentences(body, "queries", service.limits)
    k = integer(body, "k", 4, 1, service.limits.max_k)
    lang = language(body.get("lang"))
    model = await served_model(service, optional_name(body, "model"), lang)
    check_embedding_space(index, model)
    rows = (await embedded(request, service, model, queries, lang)).rows
    results = await run_in_threadpool(nearest, index, rows, k)
    return JSONResponse({"index": index.name, "model": model.name, "results": results}), \
        len(queries)


async def align(request: Request, service: Service) -> tuple[Response, int]:
    """POST /align: the beads of two documents' sentences, as `laser align` finds them."""
    from ..align import AlignOptions, align_sentences
    body = await read_json(request, service.limits)
    truncate = boolean(body, "truncate", False)
    src = document_sentences(body, "src", service.limits, truncate)
    trg = document_sentences(body, "trg", service.limits, truncate)
    src_lang, trg_lang = language(body.get("src_lang")), language(body.get("trg_lang"))
    name = optional_name(body, "model")
    src_model = await served_model(service, name, src_lang)
    trg_model = await served_model(service, name, trg_lang)
    check_one_space(src_model, trg_model)
    beads = await run_in_threadpool(
        align_sentences, src, trg, batched_embedder(service, src_model, src_lang),
        batched_embedder(service, trg_model, trg_lang), AlignOptions())
    return JSONResponse({"model": src_model.name, "beads": bead_records(beads, src, trg)}), \
        len(src) + len(trg)


def batched_embedder(service: Service, model: ServedModel,
                     lang: str) -> Callable[[list[str]], np.ndarray]:
    """The aligner's embedding function (it runs off the event loop): rows from the batcher,
    --max-inputs sentences a request, so that an alignment queues as any client does."""
    def embed(texts: list[str]) -> np.ndarray:
        step = service.limits.max_inputs
        parts = [submitted(service, model, texts[start:start + step], lang).result().rows
                 for start in range(0, len(texts), step)]
        return np.concatenate([np.zeros((0, model.dim), dtype=np.float32), *parts])
    return embed


def chosen_index(service: Service, name: Optional[str]) -> ServedIndex:
    """The index a request names, or the only one; 404 otherwise."""
    if not service.indexes:
        raise RequestError(404, "this server has no index; start it with --index INDEX",
                           "index_not_found")
    if name is None and len(service.indexes) == 1:
        return next(iter(service.indexes.values()))
    if name not in service.indexes:
        raise RequestError(404, f"no index {name!r}; choose 'index' from "
                                f"{', '.join(service.indexes)}", "index_not_found")
    return service.indexes[name]


async def health(request: Request, service: Service) -> tuple[Response, int]:
    return JSONResponse({"status": "ok"}), 0


async def info(request: Request, service: Service) -> tuple[Response, int]:
    """GET /info: version, models, indexes and limits."""
    models = service.models
    return JSONResponse({
        "version": __version__,
        "models": [model.describe() for model in models.loaded()],
        "model_choice": "fixed" if models.fixed else "by-language",
        "model_cache_size": models.cache_size,
        "max_batch_tokens": models.options.max_tokens,
        "indexes": [index.describe() for index in service.indexes.values()],
        "limits": asdict(service.limits),
    }), 0


async def metrics(request: Request, service: Service) -> tuple[Response, int]:
    return PlainTextResponse(service.metrics.text(),
                             media_type="text/plain; version=0.0.4; charset=utf-8"), 0


async def root(request: Request, service: Service) -> tuple[Response, int]:
    """GET /: the page; POST /: /embed, as text-embeddings-inference answers at its root (where
    Hugging Face's clients send a TEI URL's requests)."""
    if request.method == "POST":
        return await embed(request, service)
    return HTMLResponse(page_html(service.access.keys.required)), 0


async def openapi(request: Request, service: Service) -> tuple[Response, int]:
    """GET /openapi.json: the OpenAPI 3.1 description of every endpoint."""
    return Response(openapi_document(service.limits), media_type="application/json"), 0


def create_app(service: Service) -> Router:
    """The ASGI application of `service`; the batcher runs between startup and shutdown."""

    @asynccontextmanager
    async def lifespan(app: object):
        service.batcher.start()
        try:
            yield
        finally:
            await run_in_threadpool(service.batcher.close)

    routes = [Route(path, Endpoint(path, handler, service, methods)) for path, handler, methods in (
        ("/", root, ("GET", "POST")),
        ("/vectorize", vectorize, ("GET",)),
        ("/embed", embed, ("POST",)),
        ("/v1/embeddings", openai_embeddings, ("POST",)),
        ("/v1/models", openai_models, ("GET",)),
        ("/search", search_index, ("POST",)),
        ("/align", align, ("POST",)),
        ("/health", health, ("GET",)),
        ("/info", info, ("GET",)),
        ("/metrics", metrics, ("GET",)),
        ("/openapi.json", openapi, ("GET",)),
    )]
    return Router(routes=routes, lifespan=lifespan, default=not_found)


async def not_found(scope: Scope, receive: Receive, send: Send) -> None:
    """Unknown paths: a 404 in the JSON shape of every refusal (a WebSocket is closed)."""
    if scope["type"] == "websocket":
        await WebSocketClose()(scope, receive, send)
        return
    request = Request(scope)
    response = error_response(RequestError(404, f"{request.method} {request.url.path}: "
                                                "Not Found", "not_found"))
    await response(scope, receive, send)
