"""`laser serve`: embeddings and k-NN search over HTTP (Starlette on uvicorn).

`app` holds the endpoints, `batching` the dynamic batcher that gathers concurrent requests for
the encoder, `limits` the request checks, `metrics` the Prometheus counters, `models` and
`indexes` what is served, `page` the web page at `/`, `server` the uvicorn runner.
Needs the `serve` extra (starlette, uvicorn, orjson).
"""
