"""Checkpoints read without torch (`laser.models.torch_format`): both layouts of torch.save, every
parity fixture equal to torch.load, the torch-free network equal to the torch one, and the same
refusals of code as before. Tests that need torch skip where it is not installed (the light
install of `make light-test`)."""
import io
import json
import os
import pickle
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from laser.errors import LaserError
from laser.models.checkpoint import STAND_INS, read_checkpoint
from laser.encoder import Encoder

from conftest import DATA, PARITY, PARITY2, PARITY2_MODEL, PARITY2_STEMS, PARITY_MODEL, \
    PARITY_STEMS, ROOT, fixture_language, read_fixture_lines

LEGACY = DATA / "legacy" / "encoder.pt"  # tests/data/parity/model/encoder.pt in the pre-1.6 layout
DEFAULT_MODEL = ROOT / "models" / "default"
CHECKPOINTS = sorted(DATA.glob("parity*/model/**/*.pt")) + [LEGACY, DEFAULT_MODEL / "laser-default-v2.pt"]


def _equal_structures(ours, theirs) -> int:
    """Assert `ours` (numpy) holds what `theirs` (torch) holds; returns the tensors compared."""
    import torch
    if isinstance(theirs, torch.Tensor):
        expected = theirs.numpy()
        assert ours.dtype == expected.dtype and np.array_equal(ours, expected)
        return 1
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        return sum(_equal_structures(ours[key], theirs[key]) for key in theirs)
    if isinstance(theirs, (list, tuple)):
        return sum(_equal_structures(a, b) for a, b in zip(ours, theirs, strict=True))
    return 0


@pytest.mark.parametrize("path", CHECKPOINTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_fixture_reads_as_torch_load_reads_it(path):
    torch = pytest.importorskip("torch")
    with torch.serialization.safe_globals([(cls, name) for name, cls in STAND_INS.items()]):
        expected = torch.load(path, map_location="cpu", weights_only=True)
    assert _equal_structures(read_checkpoint(path), expected) >= 9


def test_the_fixtures_are_in_both_layouts():
    assert zipfile.is_zipfile(PARITY_MODEL / "encoder.pt") and not zipfile.is_zipfile(LEGACY)


def test_the_legacy_layout_reads_as_the_zip_layout():
    legacy, current = read_checkpoint(LEGACY), read_checkpoint(PARITY_MODEL / "encoder.pt")
    assert legacy["params"] == current["params"] and legacy["dictionary"] == current["dictionary"]
    assert list(legacy["model"]) == list(current["model"])
    for name, array in current["model"].items():
        assert legacy["model"][name].dtype == array.dtype == np.float32
        assert np.array_equal(legacy["model"][name], array)


@pytest.mark.parametrize("zip_layout", [True, False], ids=["zip", "legacy"])
def test_views_offsets_strides_and_dtypes(tmp_path, zip_layout):
    torch = pytest.importorskip("torch")
    base = torch.arange(120.0).reshape(12, 10)
    tensors = {"rows_and_step": base[2:, 1::3], "transposed": base.t(), "half": base.half()[3:5],
               "long": torch.arange(7), "int": torch.arange(4, dtype=torch.int32),
               "empty": torch.zeros(0, 3), "scalar": torch.tensor(3.5),
               "parameter": torch.nn.Parameter(base[1]), "bool": base[0] > 4}
    torch.save(tensors, tmp_path / "t.pt", _use_new_zipfile_serialization=zip_layout)
    read = read_checkpoint(tmp_path / "t.pt")
    for name, tensor in tensors.items():
        expected = tensor.detach().numpy()
        assert read[name].dtype == expected.dtype and np.array_equal(read[name], expected), name
        assert read[name].flags.writeable and read[name].flags.c_contiguous


def test_bfloat16_becomes_float32(tmp_path):
    torch = pytest.importorskip("torch")
    weights = torch.linspace(-3, 3, 11).bfloat16()
    torch.save({"w": weights}, tmp_path / "b.pt")
    read = read_checkpoint(tmp_path / "b.pt")["w"]
    assert read.dtype == np.float32 and np.array_equal(read, weights.float().numpy())


# --- refusals, with files written by pickle alone (no torch needed) ---

class RunsCode:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return os.system, (f"touch {self.path}",)


def _zip_checkpoint(path, content) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", pickle.dumps(content, protocol=2))


def _legacy_checkpoint(path, content) -> None:
    stream = io.BytesIO()
    for part in (0x1950A86A20F9469CFC6C, 1001, {"little_endian": True}, content, []):
        pickle.dump(part, stream, protocol=2)
    path.write_bytes(stream.getvalue())


@pytest.mark.parametrize("write", [_zip_checkpoint, _legacy_checkpoint], ids=["zip", "legacy"])
def test_code_in_either_layout_is_refused_and_never_runs(tmp_path, write):
    marker = tmp_path / "ran"
    path = tmp_path / "evil.pt"
    write(path, {"params": {}, "model": {}, "dictionary": {}, "x": RunsCode(marker)})
    with pytest.raises(LaserError) as refused:
        read_checkpoint(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: refused: the checkpoint's pickle asks for ")
    assert "system" in message and "nothing was executed" in message and "\n" not in message
    assert not marker.exists()


@pytest.mark.parametrize("content", [b"", b"\x80\x02" + b"junk" * 50, LEGACY.read_bytes()[:-100]],
                         ids=["empty", "junk", "truncated-legacy"])
def test_a_broken_file_is_not_loadable(tmp_path, content):
    path = tmp_path / "broken.pt"
    path.write_bytes(content)
    with pytest.raises(LaserError, match="not a loadable checkpoint"):
        read_checkpoint(path)


def test_a_tensor_beyond_its_storage_is_refused(tmp_path):
    torch = pytest.importorskip("torch")
    torch.save({"w": torch.arange(10.0)}, tmp_path / "w.pt")
    with zipfile.ZipFile(tmp_path / "w.pt") as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    storage = next(name for name in files if "/data/" in name)
    files[storage] = files[storage][:16]  # 4 of the tensor's 10 floats
    with zipfile.ZipFile(tmp_path / "cut.pt", "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    with pytest.raises(LaserError, match="not a loadable checkpoint"):
        read_checkpoint(tmp_path / "cut.pt")


# --- files written by hand, byte by byte as torch lays them out (no torch needed) ---

class Global:
    """A global as a hand-written pickle names it (`module.name`), whatever this interpreter has."""

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle wants a callable as REDUCE's function; never called here
        raise AssertionError(f"{self.module}.{self.name} called while writing")


class Call:
    """`function(*args)`, pickled as REDUCE."""

    def __init__(self, function: Global, *args):
        self.function, self.args = function, args

    def __reduce__(self):
        return self.function, self.args


class StorageRef:
    """A storage as the pickle names it: its persistent id (`view`: the legacy (key, offset, size))."""

    def __init__(self, key: str, numel: int, view: tuple = None):
        self.saved_id = ("storage", Global("torch", "FloatStorage"), key, "cpu", numel) \
            + ((view,) if view else ())


class HandPickler(pickle._Pickler):
    """Writes `Global`s as GLOBAL opcodes and `StorageRef`s as persistent ids."""

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, Global):
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
            return
        super().save(obj, save_persistent_id)

    def persistent_id(self, obj):
        return obj.saved_id if isinstance(obj, StorageRef) else None


def hand_pickle(content, stream) -> None:
    HandPickler(stream, protocol=2).dump(content)


def tensor(storage: StorageRef, offset: int, size: tuple, stride: tuple) -> Call:
    return Call(Global("torch._utils", "_rebuild_tensor_v2"), storage, offset, size, stride)


def hand_zip(path, content, storages: dict) -> None:
    """A zip-layout torch.save file: data.pkl and one data/KEY file per float32 storage."""
    pickled = io.BytesIO()
    hand_pickle(content, pickled)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", pickled.getvalue())
        for key, values in storages.items():
            archive.writestr(f"archive/data/{key}", np.asarray(values, "<f4").tobytes())


def hand_legacy(path, content, storages: dict) -> None:
    """A legacy-layout torch.save file: magic, protocol, system facts, the object, the storage
    keys, then each float32 storage as its int64 element count and its elements."""
    stream = io.BytesIO()
    for part in (0x1950A86A20F9469CFC6C, 1001, {"little_endian": True}):
        pickle.dump(part, stream, protocol=2)
    hand_pickle(content, stream)
    pickle.dump(list(storages), stream, protocol=2)
    for values in storages.values():
        stream.write(np.int64(len(values)).astype("<i8").tobytes())
        stream.write(np.asarray(values, "<f4").tobytes())
    path.write_bytes(stream.getvalue())


@pytest.mark.parametrize("write", [hand_zip, hand_legacy], ids=["zip", "legacy"])
def test_a_storage_one_element_short_is_refused(tmp_path, write):
    content = {"w": tensor(StorageRef("0", 10), 0, (10,), (1,))}
    write(tmp_path / "whole.pt", content, {"0": np.arange(10.0)})
    np.testing.assert_array_equal(read_checkpoint(tmp_path / "whole.pt")["w"], np.arange(10.0))
    write(tmp_path / "short.pt", content, {"0": np.arange(9.0)})  # the tensor's last element cut
    with pytest.raises(LaserError, match="not a loadable checkpoint"):
        read_checkpoint(tmp_path / "short.pt")


def test_a_legacy_view_is_the_part_of_its_storage_it_names(tmp_path):
    """Before torch 1.0 a storage could be a view of another one: its persistent id ends with
    (view key, offset, size), and tensors count their offsets from the view."""
    root = StorageRef("root", 10)
    view = StorageRef("root", 10, ("view", 3, 4))  # elements 3..6 of root
    content = {"whole": tensor(root, 2, (3,), (1,)), "in_view": tensor(view, 1, (2,), (1,)),
               "view_matrix": tensor(view, 0, (2, 2), (1, 2))}
    hand_legacy(tmp_path / "views.pt", content, {"root": np.arange(10.0)})
    read = read_checkpoint(tmp_path / "views.pt")
    np.testing.assert_array_equal(read["whole"], [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(read["in_view"], [4.0, 5.0])
    np.testing.assert_array_equal(read["view_matrix"], [[3.0, 5.0], [4.0, 6.0]])


@pytest.mark.parametrize("view, size", [(("view", 3, 4), 5), (("view", 8, 4), 2),
                                        (("view", -2, 4), 1)],
                         ids=["tensor-beyond-view", "view-beyond-storage", "negative-offset"])
def test_a_legacy_view_outside_its_storage_is_refused(tmp_path, view, size):
    content = {"w": tensor(StorageRef("root", 10, view), 0, (size,), (1,))}
    hand_legacy(tmp_path / "view.pt", content, {"root": np.arange(10.0)})
    with pytest.raises(LaserError, match="not a loadable checkpoint"):
        read_checkpoint(tmp_path / "view.pt")


def _marker_code(marker) -> str:
    return f"open({str(marker)!r}, 'w').close()"


# Callables a malicious checkpoint could name, with arguments that would leave the marker file.
DANGEROUS = {
    "builtins.eval": lambda m: (_marker_code(m),),
    "builtins.exec": lambda m: (_marker_code(m),),
    "builtins.compile": lambda m: (_marker_code(m), "x", "exec"),
    "builtins.getattr": lambda m: (Call(Global("importlib", "import_module"), "os"), "system"),
    "builtins.__import__": lambda m: ("os",),
    "builtins.open": lambda m: (str(m), "w"),
    "builtins.breakpoint": lambda m: (),
    "__builtin__.eval": lambda m: (_marker_code(m),),  # the Python 2 name, mapped to builtins
    "__builtin__.getattr": lambda m: (Call(Global("importlib", "import_module"), "os"), "system"),
    "os.system": lambda m: (f"touch {m}",),
    "posix.system": lambda m: (f"touch {m}",),
    "os.popen": lambda m: (f"touch {m}",),
    "os.execv": lambda m: ("/usr/bin/touch", ["touch", str(m)]),
    "subprocess.Popen": lambda m: (["touch", str(m)],),
    "subprocess.run": lambda m: (["touch", str(m)],),
    "subprocess.check_output": lambda m: (["touch", str(m)],),
    "importlib.import_module": lambda m: ("os",),
    "operator.attrgetter": lambda m: ("system",),
    "operator.methodcaller": lambda m: ("system", f"touch {m}"),
    "functools.partial": lambda m: (print,),
    "pickle.loads": lambda m: (b"",),
    "io.open": lambda m: (str(m), "w"),
    "codecs.open": lambda m: (str(m), "w"),
    "pathlib.Path": lambda m: (str(m),),
    "shutil.rmtree": lambda m: (str(m.parent / "nothing"),),
    "runpy.run_path": lambda m: (str(m),),
    "code.InteractiveInterpreter": lambda m: (),
    "torch.load": lambda m: (str(m),),
    "torch.storage._load_from_bytes": lambda m: (b"",),
    "numpy.load": lambda m: (str(m),),
}


@pytest.mark.parametrize("write", [hand_zip, hand_legacy], ids=["zip", "legacy"])
@pytest.mark.parametrize("name", sorted(DANGEROUS))
def test_every_callable_outside_the_allow_list_is_refused(tmp_path, write, name):
    marker = tmp_path / "ran"
    module, attribute = name.rsplit(".", 1)
    call = Call(Global(module, attribute), *DANGEROUS[name](marker))
    write(tmp_path / "evil.pt", {"params": {}, "model": {}, "dictionary": {}, "x": call}, {})
    with pytest.raises(LaserError) as refused:
        read_checkpoint(tmp_path / "evil.pt")
    expected = name.replace("__builtin__.", "builtins.")
    assert f"refused: the checkpoint's pickle asks for {expected}, " in str(refused.value)
    assert not marker.exists()


# --- the networks: torch-free (ONNX Runtime from numpy weights) against torch ---

def _legacy_model(tmp_path):
    """The LASER1 parity model with its checkpoint in the legacy layout."""
    directory = tmp_path / "legacy-model"
    shutil.copytree(PARITY_MODEL, directory)
    shutil.copy(LEGACY, directory / "encoder.pt")
    return directory


def test_a_legacy_checkpoint_gives_the_official_vectors(tmp_path):
    encoder = Encoder.load(str(_legacy_model(tmp_path)))
    zip_encoder = Encoder.load(str(PARITY_MODEL))
    for stem in PARITY_STEMS:
        lines = read_fixture_lines(PARITY / "inputs" / f"{stem}.txt")
        rows = encoder.encode(lines, fixture_language(stem))
        assert np.array_equal(rows, zip_encoder.encode(lines, fixture_language(stem)))
        assert np.abs(rows - np.load(PARITY / "expected" / f"{stem}.npy")).max() <= 1e-5


FIXTURES = [(PARITY_MODEL, PARITY, PARITY_STEMS), (PARITY2_MODEL, PARITY2, PARITY2_STEMS),
            (DEFAULT_MODEL, PARITY, PARITY_STEMS), (None, PARITY, PARITY_STEMS)]


@pytest.mark.parametrize("model, fixture, stems", FIXTURES, ids=["laser1", "laser2", "default",
                                                                 "legacy"])
def test_the_torch_free_network_equals_the_torch_network(tmp_path, model, fixture, stems):
    pytest.importorskip("torch")
    directory = str(model or _legacy_model(tmp_path))
    onnx, torch = Encoder.load(directory), Encoder.load(directory, runtime="torch")
    assert onnx.runtime.startswith("onnxruntime") and torch.runtime.startswith("torch")
    # the shipped laser-default-v2 stacks two float32 LSTM layers: up to 1.1e-6 apart on "th"
    tolerance = 2e-6 if model == DEFAULT_MODEL else 1e-6
    for stem in stems:
        ids = onnx.prepare(read_fixture_lines(fixture / "inputs" / f"{stem}.txt"),
                           fixture_language(stem))
        assert np.abs(onnx.encode_ids(ids) - torch.encode_ids(ids)).max() <= tolerance, stem


# Embeds with torch and onnx made unimportable, on an empty graph cache: reads the checkpoint,
# builds (in float32 or int8), caches and runs the graph; prints the heavy modules it imported.
NO_TORCH = """
import json, sys
sys.modules["torch"] = sys.modules["onnx"] = None  # their imports fail, as where not installed
from laser.encoder import Encoder
encoder = Encoder.load(sys.argv[1], quantize=sys.argv[2] or None)
rows = encoder.encode(["Hello world.", "The book is on the table."], "en")
print(json.dumps([rows.shape, encoder.runtime,
                  sorted(m for m in ("torch", "scipy", "onnx") if sys.modules.get(m))]))
"""


@pytest.mark.parametrize("model", [PARITY_MODEL, PARITY2_MODEL, DEFAULT_MODEL],
                         ids=["laser1", "laser2", "default"])
@pytest.mark.parametrize("quantize", ["", "int8"])
def test_bilstm_models_embed_without_torch(tmp_path, model, quantize):
    done = subprocess.run([sys.executable, "-c", NO_TORCH, str(model), quantize], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "LASER_HOME": str(tmp_path),
                               "PYTHONPATH": os.pathsep.join(filter(None, [
                                   str(ROOT), os.environ.get("PYTHONPATH")]))})
    assert done.returncode == 0, done.stderr
    shape, runtime, heavy = json.loads(done.stdout)
    assert shape[0] == 2 and runtime.startswith("onnxruntime ") and heavy == []
    assert list((tmp_path / "onnx").iterdir())  # the graph was cached
