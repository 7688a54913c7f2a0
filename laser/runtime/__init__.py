"""How vectors are computed: the BiLSTM and transformer networks, their ONNX graphs and runtime,
quantisation and batching. Which model (files, registry, download, checkpoints) is `laser.models`."""

# What may run a network (`runtime=`, `--runtime`): auto is ONNX Runtime for BiLSTMs on the CPU.
RUNTIMES = ("auto", "torch", "onnxruntime")
