"""ONNX models written as protobuf bytes on numpy alone, without the onnx package.

An .onnx file is one serialized `ModelProto` (onnx.proto). Each function here returns one message
of it as bytes: its fields in field-number order, as protobuf writes them, each a key
(`field << 3 | wire type`) then a varint or a length-prefixed payload. Only what the encoder graphs
of `laser.runtime.onnx_graph` use is written: tensors as raw little-endian data, attributes of one
int, one string or a list of ints, and tensor types with named or fixed dimensions.
"""
from __future__ import annotations

from typing import Mapping, Sequence, Union

import numpy as np

# TensorProto.DataType
FLOAT, INT8, INT32, INT64, FLOAT16 = 1, 3, 6, 7, 10
_DATA_TYPES = {np.dtype(np.float32): FLOAT, np.dtype(np.int8): INT8,
               np.dtype(np.int32): INT32, np.dtype(np.int64): INT64,
               np.dtype(np.float16): FLOAT16}
# AttributeProto.AttributeType
_ATTRIBUTE_INT, _ATTRIBUTE_STRING, _ATTRIBUTE_INTS = 2, 3, 7
_VARINT, _LENGTH_DELIMITED = 0, 2

Attribute = Union[int, str, Sequence[int]]


def _varint(value: int) -> bytes:
    """`value` as a base-128 varint; a negative int64 as its 64-bit two's complement."""
    value &= (1 << 64) - 1
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _int_field(field: int, value: int) -> bytes:
    return _varint(field << 3 | _VARINT) + _varint(value)


def _bytes_field(field: int, payload: Union[bytes, str]) -> bytes:
    """A string, bytes or embedded message field."""
    if isinstance(payload, str):
        payload = payload.encode("utf-8")
    return _varint(field << 3 | _LENGTH_DELIMITED) + _varint(len(payload)) + payload


def tensor(name: str, array: np.ndarray) -> bytes:
    """TensorProto: dims (1), data_type (2), name (8), raw_data (9), little-endian."""
    array = np.asarray(array)
    data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
    return b"".join([*(_int_field(1, dim) for dim in array.shape),
                     _int_field(2, _DATA_TYPES[array.dtype]),
                     _bytes_field(8, name), _bytes_field(9, data)])


def _attribute(name: str, value: Attribute) -> bytes:
    """AttributeProto: name (1), i (3) or s (4) or ints (8), type (20)."""
    if isinstance(value, str):
        return _bytes_field(1, name) + _bytes_field(4, value) + _int_field(20, _ATTRIBUTE_STRING)
    if isinstance(value, (int, np.integer)):
        return _bytes_field(1, name) + _int_field(3, int(value)) + _int_field(20, _ATTRIBUTE_INT)
    return b"".join([_bytes_field(1, name), *(_int_field(8, int(item)) for item in value),
                     _int_field(20, _ATTRIBUTE_INTS)])


def node(op_type: str, inputs: Sequence[str], outputs: Sequence[str], domain: str = "",
         **attributes: Attribute) -> bytes:
    """NodeProto: input (1), output (2), op_type (4), attribute (5) by name, domain (7) if any.
    An empty input name leaves an optional input out."""
    return b"".join([*(_bytes_field(1, name) for name in inputs),
                     *(_bytes_field(2, name) for name in outputs),
                     _bytes_field(4, op_type),
                     *(_bytes_field(5, _attribute(name, attributes[name]))
                       for name in sorted(attributes)),
                     _bytes_field(7, domain) if domain else b""])


def tensor_value(name: str, elem_type: int, shape: Sequence[Union[int, str]]) -> bytes:
    """ValueInfoProto of a tensor: name (1), type (2) = TypeProto.tensor_type (1) = elem_type (1),
    shape (2), each dimension (1) a number (dim_value, 1) or a name (dim_param, 2)."""
    dims = b"".join(_bytes_field(1, _int_field(1, dim) if isinstance(dim, int)
                                 else _bytes_field(2, dim)) for dim in shape)
    tensor_type = _int_field(1, elem_type) + _bytes_field(2, dims)
    return _bytes_field(1, name) + _bytes_field(2, _bytes_field(1, tensor_type))


def graph(name: str, nodes: Sequence[bytes], inputs: Sequence[bytes], outputs: Sequence[bytes],
          initializers: Sequence[bytes]) -> bytes:
    """GraphProto: node (1), name (2), initializer (5), input (11), output (12)."""
    return b"".join([*(_bytes_field(1, item) for item in nodes), _bytes_field(2, name),
                     *(_bytes_field(5, item) for item in initializers),
                     *(_bytes_field(11, item) for item in inputs),
                     *(_bytes_field(12, item) for item in outputs)])


def model(graph_bytes: bytes, opsets: Mapping[str, int], producer: str, ir_version: int,
          metadata: Mapping[str, str]) -> bytes:
    """ModelProto: ir_version (1), producer_name (2), graph (7), opset_import (8) of each domain
    (1) and version (2), metadata_props (14) as key (1) and value (2)."""
    return b"".join([
        _int_field(1, ir_version), _bytes_field(2, producer), _bytes_field(7, graph_bytes),
        *(_bytes_field(8, _bytes_field(1, domain) + _int_field(2, version))
          for domain, version in opsets.items()),
        *(_bytes_field(14, _bytes_field(1, key) + _bytes_field(2, value))
          for key, value in metadata.items())])
