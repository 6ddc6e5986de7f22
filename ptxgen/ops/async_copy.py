"""Asynchronous copies: cp.async, cp.async.bulk, cp.async.bulk.tensor (TMA) and their group waits."""
from __future__ import annotations

from typing import Optional, Sequence

from .. import legality
from ..errors import LegalityError
from ..ir import Imm, Param, Reg, RegArray, Var
from ..types import b16, b64, f32, s32, u32, u64
from .checked import CheckedOps, _type_name
from .operands import TensorRef

__all__ = ["AsyncCopyOps"]

_SPACES = {"shared::cluster", "shared::cta", "global"}


class AsyncCopyOps(CheckedOps):
    """Mixin of FunctionBuilder: cp.async*, cp.async.bulk*, cp.reduce.async.bulk(.tensor), cp.async.bulk.tensor*,
    prefetch.tensor, createpolicy (the L2 eviction policies their `.L2::cache_hint` forms take), and
    applypriority and discard (of one L2 cache line)."""

    # ------------------------------------------------------------------------------------ createpolicy
    _PRIMARY = ("evict_last", "evict_normal", "evict_first", "evict_unchanged")
    _SECONDARY = ("evict_first", "evict_unchanged")

    def createpolicy(self, primary: str = "evict_normal", *, secondary: Optional[str] = None,
                     fraction: Optional[float] = None, range=None, dst=None, guard=None) -> Reg:
        """An L2 eviction policy (an opaque .b64 register) for the `cache_policy=` of ld/st and the bulk and
        tensor copies: `createpolicy.fractional.L2::primary{.L2::secondary}.b64 policy{, fraction};` (the
        fraction of the accessed lines, in (0, 1], that get the primary priority; default 1), or with
        range=(addr, primary_size, total_size) `createpolicy.range.global...b64 policy, [addr], primary_size,
        total_size;`. primary: evict_last, evict_normal, evict_first or evict_unchanged; secondary (for the
        rest): evict_first or evict_unchanged. sm_80, PTX ISA 7.4."""
        from ..builder import _err
        self._need("sm_80", (7, 4), "createpolicy")
        if primary not in self._PRIMARY:
            raise _err(f"createpolicy: primary must be one of {', '.join(self._PRIMARY)}, not {primary!r}",
                       legality.CODE_MODIFIER, cls=LegalityError)
        if secondary is not None and secondary not in self._SECONDARY:
            raise _err(f"createpolicy: secondary must be one of {', '.join(self._SECONDARY)}, not {secondary!r}",
                       legality.CODE_MODIFIER, cls=LegalityError)
        prio = f".L2::{primary}" + (f".L2::{secondary}" if secondary is not None else "")
        d = self._dst(dst, b64)
        if range is not None:
            if fraction is not None:
                raise _err("createpolicy: a range policy takes no fraction", legality.CODE_OPERANDS)
            try:
                addr, primary_size, total_size = range
            except (TypeError, ValueError):
                raise _err("createpolicy: range must be (address, primary_size, total_size)",
                           legality.CODE_OPERANDS) from None
            ops = (self._address_operand(addr, "createpolicy range address"),
                   self._reg_or_imm(primary_size, u32, "primary_size"), self._reg_or_imm(total_size, u32, "total_size"))
            self._emit(f"createpolicy.range.global{prio}.b64", (d,) + ops, guard)
            return d
        if fraction is None:
            self._emit(f"createpolicy.fractional{prio}.b64", (d,), guard)
            return d
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
            # ptxas: "value ... out of range, expected to be in range (0.000000 .. 1.000000]"
            raise _err(f"createpolicy: fraction must be a number in (0, 1], not {fraction!r}", legality.CODE_OPERANDS,
                       cls=LegalityError)
        self._emit(f"createpolicy.fractional{prio}.b64", (d, Imm(float(fraction), f32)), guard)
        return d

    # ------------------------------------------------------------------------------------ L2 cache lines
    def applypriority(self, addr, size=legality.L2_LINE, *, space: Optional[str] = "global", guard=None) -> None:
        """`applypriority{.global}.L2::evict_normal [a], 128;`: the L2 cache line at `addr` gets the normal
        eviction priority again (after an .L2::evict_last access, say). size: the line's 128 bytes, an immediate
        (ptxas takes no register); space: "global", or None for a generic address. sm_80, PTX ISA 7.4."""
        self._l2_line("applypriority", ".L2::evict_normal", addr, size, space, guard)

    def discard(self, addr, size=legality.L2_LINE, *, space: Optional[str] = "global", guard=None) -> None:
        """`discard{.global}.L2 [a], 128;`: the L2 cache line at `addr` is dropped without being written back (its
        bytes are undefined afterwards). size: the line's 128 bytes, an immediate (ptxas takes no register);
        space: "global", or None for a generic address. sm_80, PTX ISA 7.4."""
        self._l2_line("discard", ".L2", addr, size, space, guard)

    def _l2_line(self, base: str, level: str, addr, size, space: Optional[str], guard) -> None:
        op = base + self._space_suffix(space, ("global", None), base) + level
        self._check_opcode(op)
        # a register goes to legality.check, which says that the size is an immediate, as lint says it
        n = size if isinstance(size, Reg) else self._imm_only(size, f"{base} size")
        self._legal_emit(op, (self._address_operand(addr, f"{base} address"), n), guard)

    # ------------------------------------------------------------------------------------ cp.async
    def cp_async(self, dst, src, size: int, *, cache: Optional[str] = None, src_size=None,
                 cache_policy: Optional[Reg] = None, prefetch: Optional[int] = None, space: str = "shared",
                 guard=None) -> None:
        """`cp.async.ca|cg.shared.global{.L2::cache_hint}{.L2::NB} [dst], [src], size{, src-size}{, policy};`

        cache defaults to 'cg' for 16-byte copies and 'ca' otherwise (.cg copies 16 bytes only);
        src_size (register or int) zero-fills the bytes past it, or is a predicate (ignore-src);
        prefetch is 64, 128 or 256 (bytes of L2 prefetch).
        """
        c = cache or ("cg" if size == 16 else "ca")
        op = f"cp.async.{c}{self._space_suffix(space, ('shared', 'shared::cta'), 'cp.async destination')}.global"
        if cache_policy is not None:
            op += ".L2::cache_hint"
        if prefetch is not None:
            op += f".L2::{prefetch}B"
        self._check_opcode(op)
        ops = [self._address_operand(dst, "cp.async destination"), self._address_operand(src, "cp.async source"),
               self._imm_only(size, "cp.async size")]
        if src_size is not None:
            ops.append(self._reg_or_imm(src_size, u32, "src_size"))
        if cache_policy is not None:
            ops.append(cache_policy)
        self._legal_emit(op, tuple(ops), guard)

    def cp_async_commit_group(self, *, guard=None) -> None:
        """`cp.async.commit_group;`"""
        self._legal_emit("cp.async.commit_group", (), guard)

    def cp_async_wait_group(self, n: int = 0, *, guard=None) -> None:
        """`cp.async.wait_group N;` waits until at most N cp.async groups are pending."""
        self._legal_emit("cp.async.wait_group", (self._imm_only(n, "cp.async.wait_group N"),), guard)

    def cp_async_wait_all(self, *, guard=None) -> None:
        """`cp.async.wait_all;`"""
        self._legal_emit("cp.async.wait_all", (), guard)

    def cp_async_mbarrier_arrive(self, addr, *, noinc: bool = False, space: str = "shared", guard=None) -> None:
        """`cp.async.mbarrier.arrive{.noinc}.shared.b64 [mbar];` arrives when this thread's cp.asyncs finish."""
        sp = self._space_suffix(space, ("shared", "shared::cta", None), "cp.async.mbarrier.arrive")
        op = f"cp.async.mbarrier.arrive{'.noinc' if noinc else ''}{sp}.b64"
        self._legal_emit(op, (self._address_operand(addr, "mbarrier"),), guard)

    # ------------------------------------------------------------------------------------ bulk
    def cp_async_bulk(self, dst, src, size, *, dst_space: str = "shared::cluster", src_space: str = "global",
                      mbarrier=None, multicast_mask=None, cache_policy: Optional[Reg] = None, byte_mask=None,
                      guard=None) -> None:
        """`cp.async.bulk.dst.src.completion{.multicast::cluster}{.L2::cache_hint}{.cp_mask} [dst], [src], size, ...;`

        Into shared memory the completion is `.mbarrier::complete_tx::bytes` on `mbarrier`; to global it
        is `.bulk_group` (wait with cp_async_bulk_wait_group). multicast_mask (16-bit CTA mask) needs a
        .shared::cluster destination; byte_mask (16-bit) is the sm_100 `.cp_mask` store form.
        """
        from ..builder import _err
        for sp, what in ((dst_space, "dst_space"), (src_space, "src_space")):
            if sp not in _SPACES:
                raise _err(f"cp.async.bulk {what} must be one of {', '.join(sorted(_SPACES))}, not {sp!r}",
                           legality.CODE_MODIFIER, cls=LegalityError)
        to_global = dst_space == "global"
        op = f"cp.async.bulk.{dst_space}.{src_space}." + ("bulk_group" if to_global else "mbarrier::complete_tx::bytes")
        if multicast_mask is not None:
            op += ".multicast::cluster"
        if cache_policy is not None:
            op += ".L2::cache_hint"
        if byte_mask is not None:
            op += ".cp_mask"
        ops = self._bulk_operands(op, "a bulk copy to global memory", to_global, dst, src, size, mbarrier)
        if multicast_mask is not None:
            ops.append(self._reg_or_imm(multicast_mask, b16, "multicast_mask"))
        if cache_policy is not None:
            ops.append(cache_policy)
        if byte_mask is not None:
            ops.append(self._reg_or_imm(byte_mask, b16, "byte_mask"))
        self._legal_emit(op, tuple(ops), guard)

    def _bulk_operands(self, op: str, into_global: str, to_global: bool, dst, src, size, mbarrier) -> list:
        """A bulk copy's or reduction's opcode checked, and its [dst], [src], size{, [mbar]} operands: an
        mbarrier exactly where it does not complete in a bulk group (`into_global` names it in the error)."""
        from ..builder import _err
        self._check_opcode(op)
        if not to_global and mbarrier is None:
            raise _err(f"{op} completes on an mbarrier: pass mbarrier=", legality.CODE_OPERANDS, cls=LegalityError)
        if to_global and mbarrier is not None:
            raise _err(f"{into_global} completes in a bulk group, not on an mbarrier", legality.CODE_OPERANDS,
                       cls=LegalityError)
        ops = [self._address_operand(dst, "destination"), self._address_operand(src, "source"),
               self._reg_or_imm(size, u32, "size")]
        if mbarrier is not None:
            ops.append(self._address_operand(mbarrier, "mbarrier"))
        return ops

    _REDUCE_OPS = ("and", "or", "xor", "add", "inc", "dec", "min", "max")

    def cp_reduce_async_bulk(self, dst, src, size, op: str, type, *, dst_space: str = "global", mbarrier=None,
                             cache_policy: Optional[Reg] = None, guard=None) -> None:
        """`cp.reduce.async.bulk.dst.shared::cta.completion{.L2::cache_hint}.op{.noftz}.type [dst], [src], size...;`

        Reduces `size` bytes (a multiple of 16 up to 1048560, a .u32 register or an int) of this CTA's shared
        memory at `src` into `dst`, element by element, with `op` (and, or, xor, add, inc, dec, min, max) over
        elements of `type`. Into global memory (dst_space "global") it completes in a bulk group (commit and
        wait with cp_async_bulk_commit_group / cp_async_bulk_wait_group) and may take a `cache_policy`; into a
        cluster CTA's shared memory (dst_space "shared::cluster") it completes on `mbarrier`. An .add of
        .f16/.bf16 is written with .noftz, which ptxas requires there. sm_90, PTX ISA 8.0.
        """
        from ..builder import _err
        if dst_space not in ("global", "shared::cluster"):
            raise _err(f"cp.reduce.async.bulk dst_space must be 'global' or 'shared::cluster', not {dst_space!r}",
                       legality.CODE_MODIFIER, cls=LegalityError)
        if op not in self._REDUCE_OPS:
            raise _err(f"cp.reduce.async.bulk op must be one of {', '.join(self._REDUCE_OPS)}, not {op!r}",
                       legality.CODE_MODIFIER, cls=LegalityError)
        t = _type_name(type)
        to_global = dst_space == "global"
        opcode = (f"cp.reduce.async.bulk.{dst_space}.shared::cta."
                  + ("bulk_group" if to_global else "mbarrier::complete_tx::bytes")
                  + (".L2::cache_hint" if cache_policy is not None else "")
                  + f".{op}" + (".noftz" if op == "add" and t in ("f16", "bf16") else "") + f".{t}")
        ops = self._bulk_operands(opcode, "a bulk reduction into global memory", to_global, dst, src, size,
                                  mbarrier)
        if cache_policy is not None:
            ops.append(self._reg_or_imm(cache_policy, u64, "cache_policy"))
        self._legal_emit(opcode, tuple(ops), guard)

    def cp_async_bulk_prefetch(self, src, size, *, cache_policy: Optional[Reg] = None, guard=None) -> None:
        """`cp.async.bulk.prefetch.L2.global{.L2::cache_hint} [src], size{, policy};`"""
        op = "cp.async.bulk.prefetch.L2.global" + (".L2::cache_hint" if cache_policy is not None else "")
        ops = [self._address_operand(src, "source"), self._reg_or_imm(size, u32, "size")]
        if cache_policy is not None:
            ops.append(cache_policy)
        self._legal_emit(op, tuple(ops), guard)

    def prefetch_tensormap(self, tensor_map, *, space: Optional[str] = None, guard=None) -> None:
        """`prefetch{.space}.tensormap [a];`: fetch a tensor map into the cache ahead of the first
        cp.async.bulk.tensor that uses it. tensor_map: the parameter or variable holding the map (its
        generic address is taken, as the TMA instructions take it) or a register with its address;
        space: "const" or "param" when the address is one of those spaces' rather than generic."""
        from ..builder import _err
        if space not in (None, "const", "param"):
            raise _err(f"space must be None (generic), 'const' or 'param', not {space!r}", legality.CODE_OPERANDS)
        if isinstance(tensor_map, (Param, Var)):
            if space is not None:
                raise _err(f"a {type(tensor_map).__name__} is prefetched through its generic address: leave "
                           f"space out, or pass a register holding its .{space} address", legality.CODE_OPERANDS)
            tensor_map = self._tensor_ref(tensor_map, ()).base
        self._legal_emit("prefetch" + ("" if space is None else "." + space) + ".tensormap",
                         (self._address_operand(tensor_map, "tensor map"),), guard)

    def cp_async_bulk_commit_group(self, *, guard=None) -> None:
        """`cp.async.bulk.commit_group;`"""
        self._legal_emit("cp.async.bulk.commit_group", (), guard)

    def cp_async_bulk_wait_group(self, n: int = 0, *, read: bool = False, guard=None) -> None:
        """`cp.async.bulk.wait_group{.read} N;` (.read: only until the sources may be reused)."""
        self._legal_emit("cp.async.bulk.wait_group" + (".read" if read else ""),
                         (self._imm_only(n, "cp.async.bulk.wait_group N"),), guard)

    # ------------------------------------------------------------------------------------ tensor (TMA)
    def _tensor_ref(self, tensor_map, coords) -> TensorRef:
        from ..builder import _err
        # the operand is the generic address of the tensor map; a parameter or variable holding the map
        # is converted here (a bare .param symbol is rejected by ptxas: "State space mismatch")
        if isinstance(tensor_map, Param):
            base = self.cvta(tensor_map.sym, "param")
        elif isinstance(tensor_map, Var):
            base = self.cvta(tensor_map, tensor_map.space)
        elif isinstance(tensor_map, Reg):
            base = tensor_map
        else:
            raise _err("tensor_map must be a .u64 register holding its generic address, or the parameter/"
                       f"variable holding the map, not {type(tensor_map).__name__}", legality.CODE_OPERANDS)
        try:
            cs = tuple(coords)
        except TypeError:
            raise _err("coords must be a sequence of .s32 registers or ints", legality.CODE_OPERANDS) from None
        return TensorRef(base, tuple(self._reg_or_imm(c, s32, "tensor coordinate") for c in cs))

    def cp_async_bulk_tensor(self, smem, tensor_map, coords: Sequence, *, direction: str = "load",
                             mbarrier=None, mode: Optional[str] = None, im2col_offsets: Optional[Sequence] = None,
                             multicast_mask=None, cache_policy: Optional[Reg] = None,
                             dst_space: str = "shared::cluster", dims: Optional[int] = None, guard=None) -> None:
        """`cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes [smem], [map, {c}], [mbar];`

        direction 'load' (global -> shared, completes on `mbarrier`) or 'store' (shared::cta -> global,
        `.bulk_group`). N is len(coords). mode None (tile, implied), 'tile', 'im2col' (load/prefetch, with
        N-2 16-bit im2col_offsets) or 'im2col_no_offs' (store). multicast_mask: 16-bit CTA mask.
        `dims`, when given, must equal len(coords).
        """
        from ..builder import _err
        coords = tuple(coords) if isinstance(coords, (list, tuple, RegArray)) else coords
        if dims is not None and isinstance(coords, tuple) and dims != len(coords):
            raise _err(f"a {dims}d tensor copy takes {dims} coordinates, {len(coords)} given",
                       legality.CODE_OPERANDS, cls=LegalityError)
        ref = self._tensor_ref(tensor_map, coords)
        dims = len(ref.coords)
        m = "" if mode is None else "." + mode
        if direction == "load":
            op = (f"cp.async.bulk.tensor.{dims}d.{dst_space}.global{m}.mbarrier::complete_tx::bytes"
                  + (".multicast::cluster" if multicast_mask is not None else "")
                  + (".L2::cache_hint" if cache_policy is not None else ""))
        elif direction == "store":
            op = (f"cp.async.bulk.tensor.{dims}d.global.shared::cta{m}.bulk_group"
                  + (".L2::cache_hint" if cache_policy is not None else ""))
        else:
            raise _err(f"direction must be 'load' (global -> shared) or 'store' (shared -> global), not "
                       f"{direction!r}", legality.CODE_MODIFIER, cls=LegalityError)
        self._check_opcode(op)
        if direction == "load":
            if mbarrier is None:
                raise _err(f"{op} completes on an mbarrier: pass mbarrier=", legality.CODE_OPERANDS,
                           cls=LegalityError)
            ops = [self._address_operand(smem, "shared memory destination"), ref,
                   self._address_operand(mbarrier, "mbarrier")]
            if im2col_offsets is not None:
                ops.append(self._vec_operand(im2col_offsets, "im2col_offsets"))
            if multicast_mask is not None:
                ops.append(self._reg_or_imm(multicast_mask, b16, "multicast_mask"))
        else:
            if mbarrier is not None or multicast_mask is not None or im2col_offsets is not None:
                raise _err("a tensor store takes no mbarrier, multicast mask or im2col offsets",
                           legality.CODE_OPERANDS, cls=LegalityError)
            ops = [ref, self._address_operand(smem, "shared memory source")]
        if cache_policy is not None:
            ops.append(cache_policy)
        self._legal_emit(op, tuple(ops), guard)

    def cp_reduce_async_bulk_tensor(self, smem, tensor_map, coords: Sequence, op: str, *,
                                    mode: Optional[str] = None, cache_policy=None, dims: Optional[int] = None,
                                    guard=None) -> None:
        """`cp.reduce.async.bulk.tensor.Nd.global.shared::cta.op{.mode}.bulk_group{.L2::cache_hint} [map, {c}], [smem];`

        Reduces the box of this CTA's shared memory at `smem` into the tensor in global memory at `coords` (N =
        len(coords), 1 to 5; .s32 registers or ints), element by element with `op` (add, min, max, inc, dec, and,
        or, xor); the element type is the tensor map's, so none is written. mode: None (tile, implied), 'tile' or
        'im2col_no_offs' (3 dimensions or more). It completes in a bulk group: commit and wait with
        cp_async_bulk_commit_group / cp_async_bulk_wait_group (read=True before `smem` is written again).
        cache_policy: an L2 eviction policy (createpolicy) or a 64-bit int. tensor_map: as cp_async_bulk_tensor's.
        `dims`, when given, must equal len(coords). sm_90, PTX ISA 8.0.
        """
        from ..builder import _err
        try:
            cs = tuple(coords)
        except TypeError:
            raise _err("coords must be a sequence of .s32 registers or ints", legality.CODE_OPERANDS) from None
        if dims is not None and dims != len(cs):
            raise _err(f"a {dims}d tensor reduction takes {dims} coordinates, {len(cs)} given", legality.CODE_OPERANDS,
                       cls=LegalityError)
        # (which names are legal is legality's to say; these are the words of the opcode)
        for value, what, example in ((op, "op", "add"), (mode, "mode", "tile")):
            if (value is not None or what == "op") and not (isinstance(value, str) and value.isidentifier()):
                typed = what == "op" and isinstance(value, str) and "." in value
                raise _err(f"cp.reduce.async.bulk.tensor {what} must be a name such as {example!r}, without dots, "
                           f"not {value!r}", legality.CODE_MODIFIER,
                           ("no type is written: the tensor map gives the element type",) if typed else (),
                           cls=LegalityError)
        # the opcode first: a parameter's tensor map is converted with cvta, which an illegal call must not emit
        opcode = (f"cp.reduce.async.bulk.tensor.{len(cs)}d.global.shared::cta.{op}"
                  + ("" if mode is None else "." + mode) + ".bulk_group"
                  + (".L2::cache_hint" if cache_policy is not None else ""))
        self._check_opcode(opcode)
        ops = [self._tensor_ref(tensor_map, cs), self._address_operand(smem, "shared memory source")]
        if cache_policy is not None:
            ops.append(self._reg_or_imm(cache_policy, u64, "cache_policy"))
        self._legal_emit(opcode, tuple(ops), guard)

    def cp_async_bulk_prefetch_tensor(self, tensor_map, coords: Sequence, *, mode: Optional[str] = None,
                                      im2col_offsets: Optional[Sequence] = None,
                                      cache_policy: Optional[Reg] = None, guard=None) -> None:
        """`cp.async.bulk.prefetch.tensor.Nd.L2.global{.mode}{.L2::cache_hint} [map, {c}]{, offsets}{, policy};`"""
        ref = self._tensor_ref(tensor_map, coords)
        op = (f"cp.async.bulk.prefetch.tensor.{len(ref.coords)}d.L2.global{'' if mode is None else '.' + mode}"
              + (".L2::cache_hint" if cache_policy is not None else ""))
        self._check_opcode(op)
        ops = [ref]
        if im2col_offsets is not None:
            ops.append(self._vec_operand(im2col_offsets, "im2col_offsets"))
        if cache_policy is not None:
            ops.append(cache_policy)
        self._legal_emit(op, tuple(ops), guard)
