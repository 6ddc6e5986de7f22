"""TMA tensor maps: cuTensorMapEncodeTiled with every documented constraint checked first, in Python.

    tmap = encode_tiled(buf, box=(64, 64), dtype="bf16", swizzle="128B")   # buf: (rows, cols) of bf16 bits
    k.param_bytes("tmap", 128, align=64)     # the kernel takes it by value ...
    fn.launch(grid, block, [tmap, out])       # ... and the launch passes its 128 bytes

Orders. Sequences given with a tensor or a pointer (shape, strides, box, element_strides) are in the
array's own order, outermost first, as numpy's shape. The driver and `TiledTensorMapSpec` use the
reverse, innermost first (`global_dim[0]` is the contiguous dimension), and so do the coordinates of
`cp.async.bulk.tensor` (`{c0, c1}` = {column, row} of a 2-D box).

Checks (`TiledTensorMapSpec.check`) follow the requirements listed for cuTensorMapEncodeTiled in the
CUDA driver API reference (CUDA 12.x/13.x): each failure raises TensorMapError whose `rule` names
the violated requirement, before the driver is called. The sub-byte packed types (16U4/16U6) and the
128B_ATOM swizzle modes (sm_100) are not offered. Compared with the CUDA 13.0 driver on an H200
(tests/test_tma.py): it refuses every other documented violation too, but encodes interleave 32B with
a swizzle other than 32B (documented as required, and still refused here); and it refused a rank-1
map (4096 bf16, box 64, swizzle 128B) that breaks no documented rule, for a reason not isolated.

`decode_tensor_map` reads the 128 bytes back into the arguments (the layout is undocumented; what was
inferred and checked is listed above it).

Importing this module needs no driver; `encode_tiled` initialises it on first use.
"""
from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Sequence, Tuple

from .errors import TensorMapError

__all__ = [
    "DTYPES", "SWIZZLE_SPAN", "INTERLEAVES", "L2_PROMOTIONS", "OOB_FILLS",
    "TiledTensorMapSpec", "TensorMap", "DecodedTensorMap",
    "tiled_spec", "encode_tiled", "decode_tensor_map", "swizzle_byte_offset",
]

TENSOR_MAP_BYTES = 128
MAX_RANK = 5

# ptxgen dtype name -> (CUtensorMapDataType value, element size in bytes, floating point)
DTYPES: Dict[str, Tuple[int, int, bool]] = {
    "u8": (0, 1, False), "u16": (1, 2, False), "u32": (2, 4, False), "s32": (3, 4, False),
    "u64": (4, 8, False), "s64": (5, 8, False), "f16": (6, 2, True), "f32": (7, 4, True),
    "f64": (8, 8, True), "bf16": (9, 2, True), "f32_ftz": (10, 4, True), "tf32": (11, 4, True),
    "tf32_ftz": (12, 4, True),
}
# other spellings (numpy, torch, PTX). TMA copies bits, so the signed 8/16-bit and 32/64-bit integer
# types travel as the unsigned type of their size (the data type only matters for the OOB NaN fill)
_DTYPE_ALIASES = {
    "uint8": "u8", "int8": "u8", "s8": "u8", "b8": "u8", "bool": "u8",
    "uint16": "u16", "int16": "u16", "s16": "u16", "b16": "u16",
    "uint32": "u32", "b32": "u32", "int32": "s32",
    "uint64": "u64", "b64": "u64", "int64": "s64",
    "float16": "f16", "half": "f16", "float32": "f32", "float": "f32", "float64": "f64", "double": "f64",
    "bfloat16": "bf16",
}
_PACKED = ("16u4_align8b", "16u4_align16b", "16u6_align16b")

# swizzle -> bytes of the span whose 16-byte chunks it permutes (0: none); the CUtensorMapSwizzle value
SWIZZLE_SPAN = {"none": 0, "32B": 32, "64B": 64, "128B": 128}
_SWIZZLE_CODE = {"none": 0, "32B": 1, "64B": 2, "128B": 3}
INTERLEAVES = {"none": 0, "16B": 1, "32B": 2}
L2_PROMOTIONS = {"none": 0, "64B": 1, "128B": 2, "256B": 3}
OOB_FILLS = {"zero": 0, "nan": 1}  # nan: CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA

_DIM_LIMIT = 1 << 32      # globalDim <= 2^32
_STRIDE_LIMIT = 1 << 40   # globalStrides < 2^40
_BOX_LIMIT = 256
_ESTRIDE_LIMIT = 8


def swizzle_byte_offset(offset, swizzle: str):
    """Where byte `offset` of a densely packed box lands in shared memory under `swizzle`.

    The 16-byte chunk index (bits 4..) is XORed with bits 7.. of the offset: 3 bits for 128B, 2 for
    64B, 1 for 32B (CuTe's Swizzle<3,4,3>, <2,4,3>, <1,4,3>). The pattern is one of the shared
    memory address, so a tile must start on its repeat (1024, 512, 256 bytes) to see it from
    offset 0. Works elementwise on numpy integer arrays too.
    """
    span = _choice(swizzle, SWIZZLE_SPAN, "swizzle")
    span = SWIZZLE_SPAN[span]
    if span == 0:
        return offset
    mask = span // 16 - 1
    return offset ^ (((offset >> 7) & mask) << 4)


def _choice(value, table, what: str) -> str:
    """Canonical key of `table` for `value` ('128b' -> '128B'); TensorMapError when there is none."""
    if isinstance(value, str):
        for k in table:
            if k.lower() == value.lower():
                return k
    raise TensorMapError(f"{what} must be one of {', '.join(repr(k) for k in table)}, not {value!r}", what)


def _dtype_name(dtype) -> str:
    """A ptxgen dtype name for numpy/torch/PTX dtype spellings; TensorMapError when TMA has none."""
    name = None
    if isinstance(dtype, str):
        name = dtype
        if name[:1] in "<>|=" and len(name) > 1:  # an array-interface typestr: '<f2', '|u1'
            try:
                import numpy as np
                name = np.dtype(name).name
            except (TypeError, ValueError):
                pass
    elif hasattr(dtype, "name") and hasattr(dtype, "bits") and hasattr(dtype, "kind"):  # ptxgen.types.Type
        name = dtype.name
    else:
        try:
            import numpy as np
            name = np.dtype(dtype).name
        except Exception:  # torch.dtype and friends: 'torch.bfloat16'
            name = str(dtype)
    key = name.lower().lstrip(".")
    if key.startswith("torch."):
        key = key[len("torch."):]
    key = _DTYPE_ALIASES.get(key, key)
    if key in DTYPES:
        return key
    if key in _PACKED:
        raise TensorMapError(f"the packed sub-byte data type {name!r} (sm_100) is not offered by ptxgen.tma",
                             "dtype")
    raise TensorMapError(f"no tensor map data type for {name!r}; TMA moves "
                         + ", ".join(DTYPES) + " (and the integer types of the same sizes)", "dtype")


def _int(value, what: str, rule: str) -> int:
    try:
        import numpy as np
        ok_types = (int, np.integer)
    except ImportError:
        ok_types = (int,)
    if isinstance(value, bool) or not isinstance(value, ok_types):
        raise TensorMapError(f"{what} must be an int, not {value!r}", rule)
    return int(value)


def _ints(values, what: str, rule: str) -> Tuple[int, ...]:
    if isinstance(values, (str, bytes)):
        raise TensorMapError(f"{what} must be a sequence of ints, not {values!r}", rule)
    try:
        seq = tuple(values)
    except TypeError:
        raise TensorMapError(f"{what} must be a sequence of ints, not {values!r}", rule) from None
    return tuple(_int(v, f"{what} entry", rule) for v in seq)


@dataclass(frozen=True)
class TiledTensorMapSpec:
    """The arguments of cuTensorMapEncodeTiled, innermost dimension first (the driver's order).

    global_strides are in bytes and have rank - 1 entries (the stride of dimension 1, 2, ...).
    """

    dtype: str
    global_address: int
    global_dim: Tuple[int, ...]
    global_strides: Tuple[int, ...]
    box_dim: Tuple[int, ...]
    element_strides: Tuple[int, ...]
    interleave: str = "none"
    swizzle: str = "none"
    l2_promotion: str = "none"
    oob_fill: str = "zero"

    @property
    def rank(self) -> int:
        return len(self.global_dim)

    @property
    def element_bytes(self) -> int:
        return DTYPES[_dtype_name(self.dtype)][1]

    @property
    def box_bytes(self) -> int:
        """Bytes one copy of the box moves with unit element strides: element size x product(box_dim).

        This is the mbarrier expect_tx count of a load, also when part of the box lies outside the
        tensor (those elements are filled, and counted). With element strides other than 1 the count
        is not established (the documentation says ceil(box / stride) elements per dimension but that
        dimension 0 is ignored without interleave; the encoder's own count field uses floor(box /
        stride) and includes dimension 0), so TensorMapError is raised rather than a guess.
        """
        if any(s != 1 for s in self.element_strides):
            raise TensorMapError(f"the bytes a box with element strides {self.element_strides} moves are not "
                                 "established; compute the expect_tx count for your case", "element-stride")
        n = self.element_bytes
        for b in self.box_dim:
            n *= b
        return n

    def check(self) -> "TiledTensorMapSpec":
        """Raise TensorMapError naming the first documented requirement this spec breaks; else return a
        canonical copy (dtype and mode names normalised)."""
        dtype = _dtype_name(self.dtype)
        _, esize, is_float = DTYPES[dtype]
        interleave = _choice(self.interleave, INTERLEAVES, "interleave")
        swizzle = _choice(self.swizzle, SWIZZLE_SPAN, "swizzle")
        l2 = _choice(self.l2_promotion, L2_PROMOTIONS, "l2_promotion")
        oob = _choice(self.oob_fill, OOB_FILLS, "oob_fill")
        dims = _ints(self.global_dim, "global_dim", "global-dim")
        strides = _ints(self.global_strides, "global_strides", "global-stride")
        box = _ints(self.box_dim, "box_dim", "box-dim")
        est = _ints(self.element_strides, "element_strides", "element-stride")
        addr = _int(self.global_address, "global_address", "global-address")

        rank = len(dims)
        if not 1 <= rank <= MAX_RANK:
            raise TensorMapError(f"tensorRank must be 1 to {MAX_RANK}, not {rank}", "rank")
        if interleave != "none" and rank < 3:
            raise TensorMapError(f"tensorRank must be at least 3 with interleave {interleave}, not {rank}", "rank")
        for what, seq, want in (("global_strides", strides, rank - 1), ("box_dim", box, rank),
                                ("element_strides", est, rank)):
            if len(seq) != want:
                raise TensorMapError(f"{what} has {len(seq)} entries; a rank-{rank} tensor map takes {want}",
                                     "rank")
        align = 32 if interleave == "32B" else 16
        if addr < 0 or addr % align:
            why = " (interleave 32B)" if align == 32 else ""
            raise TensorMapError(f"globalAddress 0x{addr:x} must be aligned to {align} bytes{why}",
                                 "global-address")
        for i, d in enumerate(dims):
            if not 1 <= d <= _DIM_LIMIT:
                raise TensorMapError(f"globalDim[{i}] = {d} must be from 1 to 2^32", "global-dim")
        smul = 32 if interleave == "32B" else 16
        for i, s in enumerate(strides):
            if s < 0 or s % smul:
                why = " (interleave 32B)" if smul == 32 else ""
                raise TensorMapError(f"globalStrides[{i}] = {s} bytes (the stride of dimension {i + 1}) must be "
                                     f"a multiple of {smul}{why}", "global-stride")
            if s >= _STRIDE_LIMIT:
                raise TensorMapError(f"globalStrides[{i}] = {s} bytes must be below 2^40", "global-stride")
        for i, b in enumerate(box):
            if not 1 <= b <= _BOX_LIMIT:
                raise TensorMapError(f"boxDim[{i}] = {b} must be from 1 to {_BOX_LIMIT}", "box-dim")
        inner = box[0] * esize
        if interleave == "none" and inner % 16:
            raise TensorMapError(f"the inner box dimension is {box[0]} x {esize} = {inner} bytes; without "
                                 "interleave it must be a multiple of 16 bytes", "inner-box-bytes")
        span = SWIZZLE_SPAN[swizzle]
        if interleave == "none" and span and inner > span:
            raise TensorMapError(f"the inner box dimension is {box[0]} x {esize} = {inner} bytes; swizzle "
                                 f"{swizzle} allows at most {span} bytes", "swizzle-span")
        for i, s in enumerate(est):
            if not 1 <= s <= _ESTRIDE_LIMIT:
                raise TensorMapError(f"elementStrides[{i}] = {s} must be from 1 to {_ESTRIDE_LIMIT}",
                                     "element-stride")
        if interleave == "32B" and swizzle != "32B":
            raise TensorMapError(f"interleave 32B requires swizzle 32B, not {swizzle}", "interleave-swizzle")
        if oob == "nan" and not is_float:
            raise TensorMapError(f"oob_fill 'nan' is for floating-point data types, not {dtype}", "oob-fill")
        return TiledTensorMapSpec(dtype, addr, dims, strides, box, est, interleave, swizzle, l2, oob)

    def driver_args(self, driver) -> tuple:
        """The positional arguments of driver.cuTensorMapEncodeTiled for this spec (no checks)."""
        d = driver
        return (d.CUtensorMapDataType(DTYPES[_dtype_name(self.dtype)][0]), len(self.global_dim),
                self.global_address,
                [d.cuuint64_t(x) for x in self.global_dim], [d.cuuint64_t(x) for x in self.global_strides],
                [d.cuuint32_t(x) for x in self.box_dim], [d.cuuint32_t(x) for x in self.element_strides],
                d.CUtensorMapInterleave(INTERLEAVES[self.interleave]),
                d.CUtensorMapSwizzle(_SWIZZLE_CODE[self.swizzle]),
                d.CUtensorMapL2promotion(L2_PROMOTIONS[self.l2_promotion]),
                d.CUtensorMapFloatOOBfill(OOB_FILLS[self.oob_fill]))


# ------------------------------------------------------------------------------------------ sources
def _describe_source(tensor) -> Tuple[int, Any, Optional[Tuple[int, ...]], Optional[Tuple[int, ...]]]:
    """(pointer, dtype as the array spells it, shape, byte strides or None for C-contiguous) of a device
    array; dtype and shape are None for a DeviceBuffer made from a byte count."""
    from .runtime import DeviceBuffer
    if isinstance(tensor, DeviceBuffer):
        if tensor.shape is None or tensor.dtype is None:  # empty(nbytes): the caller gives dtype and shape
            return tensor.ptr, None, None, None
        return tensor.ptr, tensor.dtype, tuple(tensor.shape), None
    # torch first: its __cuda_array_interface__ raises for bfloat16
    if callable(getattr(tensor, "data_ptr", None)) and callable(getattr(tensor, "stride", None)) and \
            hasattr(tensor, "dtype") and hasattr(tensor, "shape"):
        if getattr(tensor, "is_cuda", True) is False:
            raise TensorMapError(f"the tensor lives on {getattr(tensor, 'device', 'the host')}; a tensor map "
                                 "describes GPU memory", "source")
        esize = int(tensor.element_size())
        return (int(tensor.data_ptr()), tensor.dtype, tuple(int(s) for s in tensor.shape),
                tuple(int(s) * esize for s in tensor.stride()))
    try:
        cai = tensor.__cuda_array_interface__
    except AttributeError:
        cai = None
    if cai is not None:
        try:
            ptr = int(cai["data"][0] or 0)
            shape = tuple(int(s) for s in cai["shape"])
            typestr = cai["typestr"]
            strides = cai.get("strides")
        except (KeyError, TypeError, ValueError, IndexError):
            raise TensorMapError(f"malformed __cuda_array_interface__: {cai!r}", "source") from None
        return ptr, typestr, shape, None if strides is None else tuple(int(s) for s in strides)
    raise TensorMapError(f"cannot describe a {type(tensor).__name__}: pass a DeviceBuffer, an object with "
                         "__cuda_array_interface__ (or a torch tensor), or ptr=, dtype=, shape=", "source")


def tiled_spec(tensor=None, box: Sequence[int] = (), *, ptr: Optional[int] = None, dtype=None,
               shape: Optional[Sequence[int]] = None, strides: Optional[Sequence[int]] = None,
               element_strides: Optional[Sequence[int]] = None, interleave: str = "none",
               swizzle: str = "none", l2_promotion: str = "none", oob_fill: str = "zero") -> TiledTensorMapSpec:
    """The checked TiledTensorMapSpec of a device array (or ptr + dtype + shape [+ strides]).

    shape, strides (bytes), box and element_strides are outermost first, as numpy's shape; the
    innermost dimension must be contiguous (stride = element size), as TMA has no stride for it.
    dtype/shape/strides given with a tensor override what the tensor says (e.g. to view bytes as bf16).
    """
    if tensor is not None and ptr is not None:
        raise TensorMapError("give either a tensor or ptr=, not both", "source")
    if tensor is not None:
        p, dt, shp, st = _describe_source(tensor)
        if dtype is not None and dt is not None and shape is None and \
                DTYPES[_dtype_name(dtype)][1] != DTYPES[_dtype_name(dt)][1]:
            raise TensorMapError(f"dtype {dtype!r} has elements of another size than the tensor's {dt!r}: give "
                                 "shape= (and strides=) counted in the new elements", "source")
        dtype = dt if dtype is None else dtype
        if shape is None:
            shape, strides = shp, st if strides is None else strides
        if dtype is None or shape is None:
            raise TensorMapError(f"this {type(tensor).__name__} has no shape/dtype (a buffer made from a byte "
                                 "count): pass dtype= and shape= as well", "source")
    else:
        if ptr is None or dtype is None or shape is None:
            raise TensorMapError("without a tensor, ptr=, dtype= and shape= are needed", "source")
        p = _int(ptr, "ptr", "global-address")
    dname = _dtype_name(dtype)
    esize = DTYPES[dname][1]
    shape = _ints(shape, "shape", "global-dim")
    rank = len(shape)
    if strides is None:  # C-contiguous
        st, acc = [], esize
        for n in reversed(shape):
            st.append(acc)
            acc *= n
        strides = tuple(reversed(st))
    else:
        strides = _ints(strides, "strides", "global-stride")
    box = _ints(box, "box", "box-dim")
    est = (1,) * rank if element_strides is None else _ints(element_strides, "element_strides", "element-stride")
    for what, seq in (("strides", strides), ("box", box), ("element_strides", est)):
        if len(seq) != rank:
            raise TensorMapError(f"{what} has {len(seq)} entries for a rank-{rank} shape {shape}", "rank")
    if rank and strides[-1] != esize:
        raise TensorMapError(f"the innermost dimension must be contiguous: its stride is {strides[-1]} bytes, "
                             f"the element size {esize} (TMA has no stride for dimension 0)", "inner-stride")
    return TiledTensorMapSpec(dname, p, tuple(reversed(shape)), tuple(reversed(strides[:-1])),
                              tuple(reversed(box)), tuple(reversed(est)), interleave, swizzle, l2_promotion,
                              oob_fill).check()


# ------------------------------------------------------------------------------------------ encode
def _driver():
    """cuda.bindings.driver, initialised (cuInit) and with a current context; NoDriverError otherwise."""
    from . import runtime
    runtime.get_context()
    return runtime._driver_module()


class TensorMap:
    """An encoded tensor map: its 128 bytes (`raw`), the spec it was made from, and the array it describes.

    Pass it (or bytes(tmap)) as the argument of a `param_bytes(name, 128, align=64)` kernel parameter.
    It keeps a reference to the source array so the memory outlives the map.
    """

    def __init__(self, raw: bytes, spec: Optional[TiledTensorMapSpec] = None, source: Any = None):
        raw = bytes(raw)
        if len(raw) != TENSOR_MAP_BYTES:
            raise TensorMapError(f"a tensor map is {TENSOR_MAP_BYTES} bytes, not {len(raw)}", "size")
        self.raw = raw
        self.spec = spec
        self.source = source

    def __bytes__(self) -> bytes:
        return self.raw

    def cu_tensor_map(self):
        """A cuda.bindings CUtensorMap holding these bytes (for APIs that want that type)."""
        from cuda.bindings import driver
        t = driver.CUtensorMap()
        ctypes.memmove(t.getPtr(), self.raw, TENSOR_MAP_BYTES)
        return t

    def decode(self) -> "DecodedTensorMap":
        """decode_tensor_map(self.raw)."""
        return decode_tensor_map(self.raw)

    def __repr__(self) -> str:
        s = self.spec
        if s is None:
            return "<TensorMap (no spec)>"
        return (f"<TensorMap {s.dtype} dims={s.global_dim} box={s.box_dim} swizzle={s.swizzle} "
                f"at 0x{s.global_address:x}>")


def encode_spec(spec: TiledTensorMapSpec, *, source: Any = None) -> TensorMap:
    """Check `spec` (TensorMapError before any driver call), then cuTensorMapEncodeTiled."""
    spec = spec.check()
    from .runtime import check
    d = _driver()
    tm = check(d.cuTensorMapEncodeTiled(*spec.driver_args(d)), "cuTensorMapEncodeTiled")
    return TensorMap(ctypes.string_at(tm.getPtr(), TENSOR_MAP_BYTES), spec, source)


def encode_tiled(tensor=None, box: Sequence[int] = (), **kw) -> TensorMap:
    """cuTensorMapEncodeTiled for a device array; arguments as tiled_spec (outermost first).

    Every documented requirement is checked before the driver is called (TensorMapError naming it).
    """
    return encode_spec(tiled_spec(tensor, box, **kw), source=tensor)


# ------------------------------------------------------------------------------------------ decode
# The layout below was read off 56 encodings by the CUDA 13.0 driver (driver version 13000) on an H200,
# each varying one argument (tests/data/tma_encodings_h200.json); NVIDIA documents none of it. Offsets
# are in 32-bit words (dwords) of the 128 bytes, little endian:
#   dwords 0-1   global address
#   dword  2     bits 4-6 rank - 1, 7-10 data type (the encoder's own numbering, _DECODE_DTYPE),
#                11-12 interleave, 13-14 swizzle, 15 OOB NaN fill, 16 tf32, 17-18 L2 promotion
#   dwords 3-6   globalStrides[i] >> 4, low 32 bits; dword 7 bits 4i..4i+3 the high 4 bits (seen for i=0)
#   dwords 8-12  globalDim[i] - 1
#   dword  13    bits 3i..3i+2 elementStrides[i] - 1; bits 24-31 boxDim[0] - 1
#   dword  14    byte i-1: boxDim[i] - 1 for i = 1..4
#   dword  16    esize * product(boxDim) with unit element strides (floor(box/stride) per dimension,
#                dimension 0 included, otherwise)
#   dword  18    the shared-memory alignment the swizzle needs: 16, 256, 512, 1024 bytes
#   dwords 15, 17, 19-31 zero in every encoding seen
_DECODE_DTYPE = {0: "u8", 1: "u16", 2: "u32", 3: "s32", 4: "u64", 5: "s64", 6: "f16", 7: "f32", 8: "f32_ftz",
                 9: "f64", 10: "bf16"}
_DECODE_SWIZZLE = {v: k for k, v in _SWIZZLE_CODE.items()}
_DECODE_INTERLEAVE = {v: k for k, v in INTERLEAVES.items()}
_DECODE_L2 = {v: k for k, v in L2_PROMOTIONS.items()}


@dataclass(frozen=True)
class DecodedTensorMap:
    """What decode_tensor_map recovers of a tiled tensor map (innermost dimension first, as the driver).

    `spec` is the TiledTensorMapSpec the bytes describe; `box_bytes_field` and `smem_alignment` are
    two values the encoder derives (see decode_tensor_map); `dwords` the 32 raw little-endian words.
    """

    spec: TiledTensorMapSpec
    box_bytes_field: int
    smem_alignment: int
    dwords: Tuple[int, ...] = field(repr=False)


def decode_tensor_map(raw) -> DecodedTensorMap:
    """Read a tiled tensor map's 128 bytes back into the arguments that made it (best effort).

    The layout is undocumented: it was inferred from encodings by the CUDA 13.0 driver on sm_90 (see
    the table above this function), and every field was checked against all of them. Another driver
    or GPU may lay the bytes out differently; TensorMapError is raised for values this layout cannot
    hold (an unknown data type code, a rank above 5).
    """
    raw = bytes(raw)
    if len(raw) != TENSOR_MAP_BYTES:
        raise TensorMapError(f"a tensor map is {TENSOR_MAP_BYTES} bytes, not {len(raw)}", "size")
    dw = struct.unpack("<32I", raw)
    flags = dw[2]
    rank = ((flags >> 4) & 7) + 1
    code = (flags >> 7) & 0xF
    if rank > MAX_RANK or code not in _DECODE_DTYPE:
        raise TensorMapError(f"these bytes do not look like a tiled tensor map of the known layout "
                             f"(rank field {rank}, data type code {code})", "decode")
    dtype = _DECODE_DTYPE[code]
    if (flags >> 16) & 1:  # tf32 is stored as f32 plus a flag
        dtype = {"f32": "tf32", "f32_ftz": "tf32_ftz"}.get(dtype, dtype)
    strides = tuple(((dw[3 + i] | (((dw[7] >> (4 * i)) & 0xF) << 32)) << 4) for i in range(rank - 1))
    dims = tuple(dw[8 + i] + 1 for i in range(rank))
    box = ((dw[13] >> 24) + 1,) + tuple(((dw[14] >> (8 * (i - 1))) & 0xFF) + 1 for i in range(1, rank))
    est = tuple(((dw[13] >> (3 * i)) & 7) + 1 for i in range(rank))
    spec = TiledTensorMapSpec(
        dtype=dtype, global_address=dw[0] | (dw[1] << 32), global_dim=dims, global_strides=strides,
        box_dim=box, element_strides=est, interleave=_DECODE_INTERLEAVE.get((flags >> 11) & 3, "?"),
        swizzle=_DECODE_SWIZZLE[(flags >> 13) & 3], l2_promotion=_DECODE_L2[(flags >> 17) & 3],
        oob_fill="nan" if (flags >> 15) & 1 else "zero")
    return DecodedTensorMap(spec, dw[16], dw[18], dw)
