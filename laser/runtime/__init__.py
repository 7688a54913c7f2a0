"""How vectors are computed: the BiLSTM and transformer networks, their ONNX graphs and runtime,
quantisation and batching. Which model (files, registry, download, checkpoints) is `laser.models`."""

# What may run a network (`runtime=`, `--runtime`). auto: ONNX Runtime for a BiLSTM on the CPU,
# torch for a transformer or on a GPU.
RUNTIMES = ("auto", "torch", "onnxruntime")
