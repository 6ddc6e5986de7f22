"""Warp-level tensor-core instructions: ldmatrix, stmatrix, mma.sync, mma.sp (legality: ptxgen.legality)."""
from __future__ import annotations

from dataclasses import replace
from typing import Optional, Sequence, Tuple

from .. import legality
from ..errors import LegalityError
from ..ir import Imm, Reg, RegArray, Vec
from ..types import b32
from .checked import CheckedOps, _type_name, shape_token

__all__ = ["MmaOps", "mma_sync_opcode", "mma_sp_opcode", "ldmatrix_opcode", "stmatrix_opcode"]

_INT_TYPES = ("s8", "u8", "s4", "u4", "b1")


def _default_acc(atype: str) -> str:
    if atype == "f64":
        return "f64"
    return "s32" if atype in _INT_TYPES else "f32"


# the kinds whose forms scale A and B by blocks (`.block_scale`, the scale operands)
BLOCK_SCALED_KINDS = ("mxf8f6f4", "mxf4", "mxf4nvf4")


def _word(x, prefix: str, what: str) -> str:
    """A modifier's word given with or without its prefix and dot ('f8f6f4', 'kind::f8f6f4', '.kind::f8f6f4')."""
    from ..builder import _err
    if not isinstance(x, str):
        example = "'f8f6f4'" if prefix == "kind::" else "'1X'"
        raise _err(f"{what} must be a str such as {example}, not {type(x).__name__} {x!r}", legality.CODE_MODIFIER,
                   cls=LegalityError)
    x = x.lstrip(".")
    return x[len(prefix):] if x.startswith(prefix) else x


def mma_sync_opcode(shape, *, atype="f16", btype=None, ctype=None, dtype=None, alayout="row", blayout="col",
                    satfinite=False, bitop=None, kind=None, scale_vec=None, stype=None) -> str:
    """The opcode string `mma.sync.aligned.shape.alayout.blayout{.kind{.block_scale}{.scale_vec::NX}}{.satfinite}
    .dtype.atype.btype.ctype{.stype}{.op.popc}`.

    `kind` ('f8f6f4', 'mxf8f6f4', 'mxf4', 'mxf4nvf4'): the block-scaled kinds add .block_scale and a scale type,
    `stype` (default .ue4m3 with scale_vec='4X', else .ue8m0); `scale_vec` ('1X', '2X', '4X') is written where
    given."""
    at = _type_name(atype)
    bt = _type_name(btype) if btype is not None else at
    ct = _type_name(ctype) if ctype is not None else _default_acc(at)
    dt = _type_name(dtype) if dtype is not None else ct
    sat = ".satfinite" if satfinite else ""
    mods = ""
    if kind is not None:
        k = _word(kind, "kind::", "kind")
        mods = f".kind::{k}" + (".block_scale" if k in BLOCK_SCALED_KINDS else "")
        if stype is None and k in BLOCK_SCALED_KINDS:
            stype = "ue4m3" if scale_vec is not None and _word(scale_vec, "scale_vec::", "scale_vec") == "4X" \
                else "ue8m0"
    if scale_vec is not None:
        mods += ".scale_vec::" + _word(scale_vec, "scale_vec::", "scale_vec")
    st = "." + _type_name(stype) if stype is not None else ""
    op = f"mma.sync.aligned{shape_token(shape)}.{alayout}.{blayout}{mods}{sat}.{dt}.{at}.{bt}.{ct}{st}"
    if at == "b1" or bitop is not None:
        op += f".{bitop or 'and'}.popc"
    return op


def mma_sp_opcode(shape, *, atype="f16", btype=None, ctype=None, dtype=None, alayout="row", blayout="col",
                  satfinite=False, ordered_metadata=True, kind=None, scale_vec=None, stype=None) -> str:
    """The opcode string `mma.sp{::ordered_metadata}.sync.aligned.shape.row.col{.kind...}{.satfinite}.dtype.atype
    .btype.ctype{.stype}` (the types and the kind's words as mma_sync_opcode's)."""
    dense = mma_sync_opcode(shape, atype=atype, btype=btype, ctype=ctype, dtype=dtype, alayout=alayout,
                            blayout=blayout, satfinite=satfinite, kind=kind, scale_vec=scale_vec, stype=stype)
    return "mma" + (".sp::ordered_metadata" if ordered_metadata else ".sp") + dense[3:]


def _matrix_suffix(shape, num, trans, space, type, src_fmt):
    from ..builder import _err
    if not isinstance(num, int) or isinstance(num, bool):
        raise _err(f"num must be an int (1, 2 or 4), not {num!r}", legality.CODE_SHAPE, cls=LegalityError)
    sp = {"generic": "", None: "", "shared": ".shared", "shared::cta": ".shared::cta"}.get(space)
    if sp is None:
        raise _err(f"the matrix is in .shared (or .shared::cta, or a generic address: space='generic'), not "
                   f"{space!r}", legality.CODE_MODIFIER, cls=LegalityError)
    ty = f".b8x16.{src_fmt}" if src_fmt is not None else "." + str(type).lstrip(".")
    return f".{str(shape).lstrip('.')}.x{num}{'.trans' if trans else ''}{sp}{ty}"


def ldmatrix_opcode(*, shape="m8n8", num=4, trans=False, space="shared", type="b16", src_fmt=None) -> str:
    """`ldmatrix.sync.aligned.shape.xN{.trans}{.ss}.type` (src_fmt 'b6x16_p32'/'b4x16_p64': `.b8x16.src_fmt`)."""
    return "ldmatrix.sync.aligned" + _matrix_suffix(shape, num, trans, space, type, src_fmt)


def stmatrix_opcode(*, shape="m8n8", num=4, trans=False, space="shared", type="b16") -> str:
    """`stmatrix.sync.aligned.shape.xN{.trans}{.ss}.type`."""
    return "stmatrix.sync.aligned" + _matrix_suffix(shape, num, trans, space, type, None)


class MmaOps(CheckedOps):
    """Mixin of FunctionBuilder: ldmatrix / stmatrix / mma.sync and their register fragments."""

    def ldmatrix(self, addr, *, num: int = 4, trans: bool = False, shape: str = "m8n8", type="b16",
                 src_fmt: Optional[str] = None, space: str = "shared", dst=None, guard=None) -> RegArray:
        """`ldmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 {d...}, [a];` returns the .b32 fragment.

        `shape='m16n16'`/`'m8n16'` with `type='b8'` or `src_fmt='b6x16_p32'|'b4x16_p64'` give the
        sm_100-family forms; `space='generic'` drops the state space (generic address).
        """
        op = ldmatrix_opcode(shape=shape, num=num, trans=trans, space=space, type=type, src_fmt=src_fmt)
        self._check_opcode(op)
        a = self._address_operand(addr, "ldmatrix address")
        d = self.fragment(op, "d") if dst is None else dst
        self._legal_emit(op, (self._vec_operand(d, "ldmatrix destination"), a), guard)
        return d if isinstance(d, RegArray) else RegArray(d)

    def stmatrix(self, addr, regs: Sequence, *, num: Optional[int] = None, trans: bool = False,
                 shape: str = "m8n8", type="b16", space: str = "shared", guard=None) -> None:
        """`stmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 [a], {r...};` (N defaults to len(regs))."""
        r = self._vec_operand(regs, "stmatrix source")
        op = stmatrix_opcode(shape=shape, num=len(r.elems) if num is None else num, trans=trans, space=space,
                             type=type)
        self._check_opcode(op)
        self._legal_emit(op, (self._address_operand(addr, "stmatrix address"), r), guard)

    def mma_sync(self, shape, d, a, b, c, *, atype="f16", btype=None, ctype=None, dtype=None,
                 alayout: str = "row", blayout: str = "col", satfinite: bool = False, bitop: Optional[str] = None,
                 kind: Optional[str] = None, scale_vec: Optional[str] = None, stype=None, scale_a=None, scale_b=None,
                 scale_ids_a=(0, 0), scale_ids_b=(0, 0), guard=None) -> RegArray:
        """`mma.sync.aligned.shape.alayout.blayout{.kind...}{.satfinite}.dtype.atype.btype.ctype{.stype} {d}, {a}, {b},
        {c}{, scale-a-data, {byte-id-a, thread-id-a}, scale-b-data, {byte-id-b, thread-id-b}};`

        btype defaults to atype, ctype to the natural accumulator (.f32, .f64 or .s32), dtype to ctype;
        .b1 takes `bitop='xor'|'and'` (default 'and') and appends `.popc`. `d=None` allocates D.
        `kind='f8f6f4'` gives the .kind::f8f6f4 forms (.e4m3, .e5m2, .e3m2, .e2m3, .e2m1 inputs); the block-scaled
        kinds ('mxf8f6f4', 'mxf4', 'mxf4nvf4', with `scale_vec` '1X', '2X' or '4X' and `stype`, as
        mma_sync_opcode) take `scale_a` and `scale_b` (32-bit registers of scale factors) and `scale_ids_a`,
        `scale_ids_b`: (byte-id, thread-id), ints (or 16-bit registers) that pick each one's scale.
        """
        op = mma_sync_opcode(shape, atype=atype, btype=btype, ctype=ctype, dtype=dtype, alayout=alayout,
                             blayout=blayout, satfinite=satfinite, bitop=bitop, kind=kind, scale_vec=scale_vec,
                             stype=stype)
        self._check_opcode(op)
        scales = self._scale_operands(op, scale_a, scale_b, scale_ids_a, scale_ids_b)
        if d is None:
            d = self.fragment(op, "d")
        ops = (self._vec_operand(d, "D"), self._vec_operand(a, "A"), self._vec_operand(b, "B"),
               self._vec_operand(c, "C")) + scales
        self._legal_emit(op, ops, guard)
        return d if isinstance(d, RegArray) else RegArray(d)

    def _scale_operands(self, op: str, scale_a, scale_b, ids_a, ids_b) -> Tuple:
        """The scale operands of a block-scaled opcode (scale-a-data, {byte-id-a, thread-id-a}, scale-b-data,
        {byte-id-b, thread-id-b}); () for another, which takes none."""
        from ..builder import _err
        if ".block_scale" not in op:
            if scale_a is not None or scale_b is not None:
                raise _err(f"{op} takes no scale operands: scale_a and scale_b belong to the block-scaled kinds "
                           f"({', '.join(BLOCK_SCALED_KINDS)})", legality.CODE_OPERANDS)
            return ()
        if scale_a is None or scale_b is None:
            raise _err(f"{op} needs scale_a and scale_b, the 32-bit registers of A's and B's scale factors "
                       "(scale-a-data, scale-b-data)", legality.CODE_OPERANDS)
        return (self._reg_or_imm(scale_a, b32, "scale_a"), self._scale_ids(ids_a, "scale_ids_a"),
                self._reg_or_imm(scale_b, b32, "scale_b"), self._scale_ids(ids_b, "scale_ids_b"))

    def _scale_ids(self, ids, what: str) -> Vec:
        """(byte-id, thread-id) -> the vector operand {byte-id, thread-id}: ints or registers."""
        from ..builder import _err
        if isinstance(ids, (str, bytes)) or not hasattr(ids, "__len__") or len(ids) != 2:
            raise _err(f"{what} must be a pair (byte-id, thread-id), not {ids!r}", legality.CODE_OPERANDS)
        out = []
        for x in ids:
            if isinstance(x, bool):
                x = int(x)
            if isinstance(x, int):
                out.append(Imm(x, None))
            elif isinstance(x, (Reg, Imm)):
                out.append(x)
            else:
                raise _err(f"{what}: expected ints or registers, got {type(x).__name__} {x!r}",
                           legality.CODE_OPERANDS)
        return Vec(tuple(out))

    def mma_sp(self, shape, d, a, b, c, e, f=0, *, atype="f16", btype=None, ctype=None, dtype=None,
               alayout: str = "row", blayout: str = "col", satfinite: bool = False, ordered_metadata: bool = True,
               kind: Optional[str] = None, scale_vec: Optional[str] = None, stype=None, scale_a=None, scale_b=None,
               scale_ids_a=(0, 0), scale_ids_b=(0, 0), guard=None) -> RegArray:
        """`mma.sp::ordered_metadata.sync.aligned.shape.row.col{.kind...}{.satfinite}.dtype.atype.btype.ctype{.stype}
        {d}, {a}, {b}, {c}, e, f{, scale operands};`

        Sparse A (two of every four elements along K, so half of mma_sync's A registers), the metadata `e` (a
        32-bit register: which two of each four) and the sparsity selector `f` (an int: the threads whose
        metadata is used). Types default as mma_sync's; `ordered_metadata=False` writes plain `.sp` (PTX ISA
        7.1; ptxas 13.0 advises `.sp::ordered_metadata`, PTX ISA 8.5). `d=None` allocates D. `kind`,
        `scale_vec`, `stype` and the scale operands as mma_sync's (the .kind forms are .sp::ordered_metadata only).
        """
        op = mma_sp_opcode(shape, atype=atype, btype=btype, ctype=ctype, dtype=dtype, alayout=alayout,
                           blayout=blayout, satfinite=satfinite, ordered_metadata=ordered_metadata, kind=kind,
                           scale_vec=scale_vec, stype=stype)
        self._check_sparse_opcode(op, ordered_metadata)
        scales = self._scale_operands(op, scale_a, scale_b, scale_ids_a, scale_ids_b)
        if d is None:
            d = self.fragment(op, "d")
        meta = self._reg_or_imm(e, b32, "mma.sp metadata e")
        sel = self._imm_only(f, "mma.sp sparsity selector f")
        ops = (self._vec_operand(d, "D"), self._vec_operand(a, "A"), self._vec_operand(b, "B"),
               self._vec_operand(c, "C"), meta, sel) + scales
        self._legal_emit(op, ops, guard)
        return d if isinstance(d, RegArray) else RegArray(d)

    def mma_sp_fragment(self, operand: str, shape, *, atype="f16", btype=None, ctype=None, dtype=None,
                        satfinite: bool = False, ordered_metadata: bool = True, kind: Optional[str] = None,
                        scale_vec: Optional[str] = None, stype=None, name: Optional[str] = None) -> RegArray:
        """Registers for operand 'a', 'b', 'c' or 'd' of an mma.sp form (e.g. 2 .f16x2 for an m16n8k16 A)."""
        op = mma_sp_opcode(shape, atype=atype, btype=btype, ctype=ctype, dtype=dtype, satfinite=satfinite,
                           ordered_metadata=ordered_metadata, kind=kind, scale_vec=scale_vec, stype=stype)
        self._check_sparse_opcode(op, ordered_metadata)
        return self.fragment(op, operand, name=name)

    def _check_sparse_opcode(self, op: str, ordered_metadata: bool) -> None:
        diags = legality.check(op, None, self.target, self.version)
        if ordered_metadata:
            # .sp::ordered_metadata came with PTX ISA 8.5; the default .version of an sm_80 or sm_90 module is older
            note = "or pass ordered_metadata=False for plain .sp (PTX ISA 7.1), which ptxas 13.0 advises against"
            diags = [replace(d, notes=tuple(d.notes) + (note,))
                     if d.code == legality.CODE_VERSION and ".sp::ordered_metadata" in d.message else d
                     for d in diags]
        self._raise_diags(diags)

    def mma_fragment(self, operand: str, shape, *, atype="f16", btype=None, ctype=None, dtype=None,
                     alayout: str = "row", blayout: str = "col", satfinite: bool = False,
                     bitop: Optional[str] = None, kind: Optional[str] = None, scale_vec: Optional[str] = None,
                     stype=None, name: Optional[str] = None) -> RegArray:
        """Registers for operand 'a', 'b', 'c' or 'd' of an mma.sync form (e.g. 4 .f32 for an m16n8 D)."""
        op = mma_sync_opcode(shape, atype=atype, btype=btype, ctype=ctype, dtype=dtype, alayout=alayout,
                             blayout=blayout, satfinite=satfinite, bitop=bitop, kind=kind, scale_vec=scale_vec,
                             stype=stype)
        return self.fragment(op, operand, name=name)
