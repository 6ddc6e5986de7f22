"""Warp-level tensor-core instructions: ldmatrix and mma.sync (minimal forms; see ptxgen.legality)."""
from __future__ import annotations

from typing import Optional, Sequence

from ..errors import LegalityError
from ..ir import Vec
from ..types import b32, f32, get_type

# (shape, a/b type) -> (A regs, B regs, C/D regs per accumulator type)
_MMA_FORMS = {
    ("m16n8k16", "f16"): (4, 2, {"f32": 4, "f16": 2}),
    ("m16n8k16", "bf16"): (4, 2, {"f32": 4}),
    ("m16n8k8", "f16"): (2, 1, {"f32": 4, "f16": 2}),
    ("m16n8k8", "bf16"): (2, 1, {"f32": 4}),
}


class MmaOps:
    """Mixin of FunctionBuilder: ldmatrix / mma.sync."""

    def ldmatrix(self, addr, *, num: int = 4, trans: bool = False, space: str = "shared", dst=None, guard=None):
        """`ldmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 {d...}, [a];` returns N .b32 registers."""
        from ..builder import _err
        self._need("sm_75", (6, 5), "ldmatrix")
        if num not in (1, 2, 4):
            raise _err(f"ldmatrix .x{num} does not exist; use num=1, 2 or 4", "PTX-E-SHAPE", cls=LegalityError)
        if space not in ("shared", "shared::cta"):
            raise _err("ldmatrix reads .shared (or .shared::cta) memory", cls=LegalityError)
        a = self._addr(addr)
        if dst is None:
            dst = self.regs(b32, num)
        elif len(dst) != num:
            raise _err(f"ldmatrix.x{num} writes {num} registers, {len(dst)} given", "PTX-E-OPERANDS",
                       cls=LegalityError)
        ds = tuple(self._dst(d, b32) for d in dst)
        op = f"ldmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.{space}.b16"
        self._emit(op, (Vec(ds), a), guard)
        return dst

    def mma_sync(self, shape: str, d, a, b, c, *, atype="f16", btype=None, ctype="f32", dtype=None,
                 alayout: str = "row", blayout: str = "col", guard=None):
        """`mma.sync.aligned.shape.row.col.dtype.atype.btype.ctype {d}, {a}, {b}, {c};`"""
        from ..builder import _err
        self._need("sm_80", (7, 0), "mma.sync")
        at = get_type(atype).name
        bt = get_type(btype).name if btype is not None else at
        ct = get_type(ctype).name
        dt = get_type(dtype).name if dtype is not None else ct
        form = _MMA_FORMS.get((shape, at))
        if form is None or bt != at or ct not in form[2] or dt not in form[2]:
            raise _err(f"mma.sync.{shape} with .{at}/.{bt} inputs and .{dt}/.{ct} accumulators is not supported "
                       "by this builder", "PTX-E-SHAPE", cls=LegalityError)
        if (alayout, blayout) != ("row", "col"):
            raise _err(f"mma.sync.{shape} needs .row.col layouts", "PTX-E-LAYOUT", cls=LegalityError)
        na, nb, ncs = form
        nc = ncs[ct]
        for what, regs, n, ty in (("A", a, na, b32), ("B", b, nb, b32), ("C", c, nc, get_type(ct)),
                                  ("D", d, ncs[dt], get_type(dt))):
            if len(regs) != n:
                raise _err(f"mma.sync.{shape}.{at}: {what} takes {n} registers, {len(regs)} given",
                           "PTX-E-OPERANDS", cls=LegalityError)
        ops = (Vec(tuple(self._dst(r, get_type(dt) if dt == "f32" else b32) for r in d)),
               Vec(tuple(self._src(r, b32, "A", imm=False) for r in a)),
               Vec(tuple(self._src(r, b32, "B", imm=False) for r in b)),
               Vec(tuple(self._src(r, f32 if ct == "f32" else b32, "C", imm=False) for r in c)))
        self._emit(f"mma.sync.aligned.{shape}.{alayout}.{blayout}.{dt}.{at}.{bt}.{ct}", ops, guard)
        return d
