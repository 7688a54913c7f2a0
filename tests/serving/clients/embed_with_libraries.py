"""Run in the client-libraries virtualenv (.venv-clients, `make clients`), never in laser's own:
embeds sentences through a running `laser serve` with each library people reach embedding
services through, as their docs set them up, and prints each one's rows as JSON on stdout.

    python embed_with_libraries.py URL API_KEY SENTENCE...
"""
import json
import sys


def langchain_openai(url: str, key: str, sentences: list[str]) -> list[list[float]]:
    from langchain_openai import OpenAIEmbeddings

    # check_embedding_ctx_length=False: send the texts as they are (no tiktoken, which would
    # download OpenAI's token tables and send token ids)
    embeddings = OpenAIEmbeddings(model="default", base_url=f"{url}/v1", api_key=key,
                                  check_embedding_ctx_length=False)
    return embeddings.embed_documents(sentences) + [embeddings.embed_query(sentences[0])]


def llama_index_openai(url: str, key: str, sentences: list[str]) -> list[list[float]]:
    from llama_index.embeddings.openai import OpenAIEmbedding

    # model_name: the served model, sent as it is (model= only takes OpenAI's own names)
    embeddings = OpenAIEmbedding(model_name="default", api_base=f"{url}/v1", api_key=key)
    return embeddings.get_text_embedding_batch(sentences) + \
        [embeddings.get_query_embedding(sentences[0])]


def llama_index_tei(url: str, key: str, sentences: list[str]) -> list[list[float]]:
    from llama_index.embeddings.text_embeddings_inference import TextEmbeddingsInference

    embeddings = TextEmbeddingsInference(model_name="default", base_url=url, auth_token=key)
    return embeddings.get_text_embedding_batch(sentences) + \
        [embeddings.get_query_embedding(sentences[0])]


def haystack_tei(url: str, key: str, sentences: list[str]) -> list[list[float]]:
    from haystack import Document
    from haystack.utils import Secret
    from haystack_integrations.components.embedders.huggingface_api import (
        HuggingFaceAPIDocumentEmbedder, HuggingFaceAPITextEmbedder)

    settings = {"api_type": "text_embeddings_inference", "api_params": {"url": url},
                "token": Secret.from_token(key)}
    documents = HuggingFaceAPIDocumentEmbedder(**settings).run(
        [Document(content=text) for text in sentences])["documents"]
    query = HuggingFaceAPITextEmbedder(**settings).run(sentences[0])["embedding"]
    return [document.embedding for document in documents] + [query]


LIBRARIES = {"langchain-openai": langchain_openai, "llama-index-openai": llama_index_openai,
             "llama-index-tei": llama_index_tei, "haystack-tei": haystack_tei}

if __name__ == "__main__":
    url, key, *texts = sys.argv[1:]
    json.dump({name: embed(url, key, texts) for name, embed in LIBRARIES.items()}, sys.stdout)
