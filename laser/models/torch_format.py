"""How is a torch.save file read without torch? Tensors become numpy arrays, nothing else is
imported.

Two layouts exist. Since torch 1.6 a checkpoint is a zip archive: `PREFIX/data.pkl` holds the
pickle, `PREFIX/data/KEY` the bytes of each storage. Before (the official 2018/2019 LASER files)
it is one stream: the pickles of a magic number, a protocol version and system facts, then the
object's pickle, the list of storage keys, and each storage as an int64 element count followed by
its bytes. Either way the object's pickle names each storage through a persistent id
`("storage", TYPE, KEY, LOCATION, NUMEL[, VIEW])`, and tensors are rebuilt by
`torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)`.

The pickle is read by `RestrictedUnpickler`, which resolves only the names in its allow-list (the
tensor rebuilders, the storage types, and the stand-ins the caller gives): any other global is
refused before it is called, so reading a file never runs its code.
"""
from __future__ import annotations

import _compat_pickle
import collections
import io
import os
import pickle
import zipfile
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001

STORAGE_DTYPES = {
    "FloatStorage": np.float32, "HalfStorage": np.float16, "DoubleStorage": np.float64,
    "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16,
    "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_,
    "BFloat16Storage": np.uint16,  # widened to float32 when a tensor is rebuilt
}


class RefusedGlobal(pickle.UnpicklingError):
    """The pickle asked for a global outside the allow-list; `name` is `module.name`."""

    def __init__(self, name: str):
        super().__init__(f"refused global {name}")
        self.name = name


@dataclass(frozen=True)
class StorageType:
    """A torch storage class named by the pickle (`torch.FloatStorage`): its element type."""

    name: str

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(STORAGE_DTYPES[self.name])


@dataclass
class Storage:
    """One storage's elements, as a flat array (None while the legacy layout's first pass runs)."""

    type: StorageType
    data: Optional[np.ndarray]


def rebuild_tensor(storage: Storage, offset: int, size: tuple, stride: tuple,
                   *_: Any) -> Optional[np.ndarray]:
    """`_rebuild_tensor(_v2)`: the tensor's elements of `storage`, as a contiguous array of its own."""
    if storage.data is None:  # the legacy layout's first pass
        return None
    if 0 in size:
        return np.zeros(size, dtype=storage.type.dtype)
    itemsize = storage.data.itemsize
    last = offset + sum((length - 1) * step for length, step in zip(size, stride) if length)
    if offset < 0 or min(stride, default=0) < 0 or last >= storage.data.size:
        raise pickle.UnpicklingError("a tensor reaches outside its storage")
    view = np.lib.stride_tricks.as_strided(storage.data[offset:], shape=tuple(size),
                                           strides=tuple(step * itemsize for step in stride))
    array = np.array(view, order="C")  # a copy: writable, contiguous, apart from the file
    if storage.type.name == "BFloat16Storage":
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array


def rebuild_parameter(data: np.ndarray, *_: Any) -> np.ndarray:
    """`_rebuild_parameter`: a parameter is its tensor."""
    return data


TENSOR_GLOBALS: dict[str, Any] = {
    "torch._utils._rebuild_tensor": rebuild_tensor,
    "torch._utils._rebuild_tensor_v2": rebuild_tensor,
    "torch._utils._rebuild_parameter": rebuild_parameter,
    "collections.OrderedDict": collections.OrderedDict,
    **{f"torch.{name}": StorageType(name) for name in STORAGE_DTYPES},
}


class RestrictedUnpickler(pickle.Unpickler):
    """An unpickler that resolves only allowed globals and reads storages through `storage_of`."""

    def __init__(self, stream: io.BufferedIOBase, allowed: dict[str, Any],
                 storage_of: Callable[[tuple], Storage]):
        super().__init__(stream, encoding="utf-8")
        self.allowed = allowed
        self.storage_of = storage_of

    def find_class(self, module: str, name: str) -> Any:
        # protocol 2 pickles (torch.save's) name builtins as Python 2 did (`__builtin__.dict`)
        module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        found = self.allowed.get(f"{module}.{name}")
        if found is None:
            raise RefusedGlobal(f"{module}.{name}")
        return found

    def persistent_load(self, saved_id: Any) -> Storage:
        if not isinstance(saved_id, tuple) or not saved_id or _text(saved_id[0]) != "storage" \
                or not isinstance(saved_id[1], StorageType):
            raise pickle.UnpicklingError(f"unknown persistent id {saved_id!r:.80}")
        return self.storage_of(saved_id)


def _text(value: Any) -> Any:
    return value.decode("ascii") if isinstance(value, bytes) else value


def load(path: str | os.PathLike, stand_ins: Optional[dict[str, Any]] = None) -> Any:
    """The object a `torch.save` file holds, its tensors as numpy arrays; globals outside the
    tensor rebuilders and `stand_ins` raise `RefusedGlobal`, a malformed file another error."""
    allowed = {**TENSOR_GLOBALS, **(stand_ins or {})}
    with open(path, "rb") as stream:
        if zipfile.is_zipfile(stream):
            stream.seek(0)
            return _load_zip(zipfile.ZipFile(stream), allowed)
        stream.seek(0)
        return _load_legacy(stream, allowed)


def _load_zip(archive: zipfile.ZipFile, allowed: dict[str, Any]) -> Any:
    """The zip layout (torch >= 1.6): storages are read from `PREFIX/data/KEY` as they are named."""
    pickles = [name for name in archive.namelist() if name.endswith("/data.pkl")]
    if len(pickles) != 1:
        raise pickle.UnpicklingError("a zip file without one data.pkl")
    prefix = pickles[0][:-len("data.pkl")]
    if f"{prefix}byteorder" in archive.namelist() \
            and archive.read(f"{prefix}byteorder").strip() != b"little":
        raise pickle.UnpicklingError("a big-endian checkpoint")
    storages: dict[str, Storage] = {}

    def storage_of(saved_id: tuple) -> Storage:
        kind, key = saved_id[1], _text(saved_id[2])
        if key not in storages:
            raw = archive.read(f"{prefix}data/{key}")
            usable = len(raw) - len(raw) % kind.dtype.itemsize
            storages[key] = Storage(kind, np.frombuffer(raw[:usable], dtype=kind.dtype))
        return storages[key]

    with archive.open(pickles[0]) as stream:
        return RestrictedUnpickler(stream, allowed, storage_of).load()


def _load_legacy(stream: io.BufferedIOBase, allowed: dict[str, Any]) -> Any:
    """The legacy layout (torch < 1.6): the storages' bytes follow the object's pickle, so the
    pickle is read twice, first to find where they start, then with them."""
    if _plain_pickle(stream) != LEGACY_MAGIC or _plain_pickle(stream) != LEGACY_PROTOCOL:
        raise pickle.UnpicklingError("neither a zip archive nor a legacy torch.save file")
    facts = _plain_pickle(stream)
    if isinstance(facts, dict) and facts.get("little_endian") is False:
        raise pickle.UnpicklingError("a big-endian checkpoint")
    start = stream.tell()
    named: dict[str, tuple] = {}

    def first_pass(saved_id: tuple) -> Storage:
        named.setdefault(_text(saved_id[2]), saved_id)
        return Storage(saved_id[1], None)

    RestrictedUnpickler(stream, allowed, first_pass).load()
    storages = {key: Storage(named[key][1], _storage_bytes(stream, named[key][1]))
                for key in map(_text, _plain_pickle(stream))}
    stream.seek(start)
    return RestrictedUnpickler(stream, allowed, lambda saved_id: _legacy_view(
        storages[_text(saved_id[2])], saved_id)).load()


def _plain_pickle(stream: io.BufferedIOBase) -> Any:
    """A pickle of plain data (no globals at all)."""
    return RestrictedUnpickler(stream, {}, _no_storage).load()


def _no_storage(saved_id: tuple) -> Storage:
    raise pickle.UnpicklingError("a storage where plain data was expected")


def _storage_bytes(stream: io.BufferedIOBase, kind: StorageType) -> np.ndarray:
    """One legacy storage: its int64 element count, then its elements."""
    count = int(np.frombuffer(_exactly(stream, 8), dtype="<i8")[0])
    if count < 0:
        raise pickle.UnpicklingError("a negative storage size")
    return np.frombuffer(_exactly(stream, count * kind.dtype.itemsize), dtype=kind.dtype)


def _exactly(stream: io.BufferedIOBase, size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise pickle.UnpicklingError("the file ends inside a storage")
    return data


def _legacy_view(root: Storage, saved_id: tuple) -> Storage:
    """A legacy storage, or the part of it a view (offset, size in elements) names."""
    view = saved_id[5] if len(saved_id) > 5 else None
    if view is None:
        return root
    _, offset, size = view
    if offset < 0 or size < 0 or offset + size > root.data.size:
        raise pickle.UnpicklingError("a storage view reaches outside its storage")
    return Storage(root.type, root.data[offset:offset + size])
