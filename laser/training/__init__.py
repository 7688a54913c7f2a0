"""Training a LASER-format encoder: corpus preparation, joint BPE, batching and the training loop."""
