"""Applications on top of the embeddings: classification, documents, graphs and paraphrases, pair filtering."""
