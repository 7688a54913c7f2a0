"""laser inside other frameworks: `langchain` (LangChain's Embeddings interface)."""
