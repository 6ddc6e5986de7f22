"""The builder: one method call emits one PTX instruction into a kernel, with typed virtual registers.

    m = ptxgen.Module("sm_90a")
    k = m.entry("axpy", maxntid=256)
    x = k.param_ptr("x"); n = k.param("n", u32)
    i = k.mad(k.sreg("%ctaid.x"), k.sreg("%ntid.x"), k.sreg("%tid.x"), mode="lo")

Every check raises BuildError (or LegalityError) pointing at the user's line that made the call.
"""
from __future__ import annotations

import contextlib
import keyword
import math
import numbers
import re
from typing import Optional, Sequence, Tuple, Union

from . import isa_core as C
from .diag import caller_loc
from .errors import BuildError, LegalityError
from .ops import AsyncCopyOps, ClusterOps, MbarrierOps, MmaOps, WgmmaOps
from .legality import (CODE_MISCOMPILE, align_error, initializer_error, initializer_miscompile, int64_value_error,
                       u32_field_error, undeclarable_type, variable_array_error)
from .ir import (Pair, Addr, Function, Guard, Imm, Instr, Label, LabelDef, Module as IRModule, Param, Pragma,
                 Raw, Reg, RegArray, SpecialReg, Sym, Var, Vec, format_imm, imm_is_float)
from .target import (LATEST_PTX, REGISTER_RULE_MIN_SM, Target, cta_register_limit, max_regs_for_threads,
                     parse_version, version_error, version_str)
from .types import (Type, b8, b16, b32, b64, bf16, bf16x2, f16, f16x2, f32, f64, get_type,
                    compatible, pred, s16, s32, s64, tf32, u16, u32, u64)

__all__ = ["Module", "KernelBuilder", "FunctionBuilder", "SPECIAL_REGS", "mem"]

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")

# special register -> (type, minimum target)
SPECIAL_REGS = {}
for _b in ("tid", "ntid", "ctaid", "nctaid", "clusterid", "nclusterid", "cluster_ctaid", "cluster_nctaid"):
    for _c in ("x", "y", "z"):
        SPECIAL_REGS[f"%{_b}.{_c}"] = (u32, "sm_90" if "cluster" in _b else "sm_50")
for _n in ("laneid", "warpid", "nwarpid", "smid", "nsmid", "clock", "lanemask_eq", "lanemask_le",
           "lanemask_lt", "lanemask_ge", "lanemask_gt", "dynamic_smem_size", "total_smem_size"):
    SPECIAL_REGS[f"%{_n}"] = (u32, "sm_50")
for _n in ("cluster_ctarank", "cluster_nctarank", "aggr_smem_size"):
    SPECIAL_REGS[f"%{_n}"] = (u32, "sm_90")
for _n in ("clock64", "globaltimer", "gridid"):
    SPECIAL_REGS[f"%{_n}"] = (u64, "sm_50")
SPECIAL_REGS["%is_explicit_cluster"] = (pred, "sm_90")
# automatic register prefixes, and special names a user's name hint must not take
_RESERVED = {"p", "rs", "h", "r", "f", "hh", "rd", "fd", "rq"} | {k[1:].split(".")[0] for k in SPECIAL_REGS} | {
    "envreg", "pm", "WARP_SZ"}
# a name hint such as 'r0' or 'fd3' spells a member of an automatic array (`.reg .b32 %r<N>;`), and
# ptxas rejects the second declaration of it
_AUTO_MEMBER = re.compile(r"^(?:p|rs|h|r|f|hh|rd|fd|rq)[0-9]+$")
# PTX ISA version that first knows a special register, where later than the target's minimum
_SREG_MIN_PTX = {"%aggr_smem_size": (8, 1)}


def mem(base, offset: int = 0) -> Addr:
    """A memory operand `[base+offset]` for ld/st/atom and friends."""
    if isinstance(base, Addr):
        return Addr(base.base, base.offset + offset)
    if isinstance(base, (Var, Param)):
        base = base.sym
    return Addr(base, offset)


def _err(msg: str, code: str = "PTX-E-BUILD", notes: Sequence[str] = (), cls=BuildError):
    if cls is LegalityError and code == "PTX-E-BUILD":
        code = "PTX-E-FORM"  # an instruction form (modifier, type, combination) that PTX does not have
    return cls(msg, caller_loc(), code, notes)


class Module:
    """A PTX module under construction: `.version`, `.target`, `.address_size`, variables, functions."""

    def __init__(self, target: Union[str, Target] = "sm_90a", version=None, address_size: int = 64):
        loc = caller_loc()
        try:
            t = Target.parse(target)
            v = parse_version(version) if version is not None else t.default_ptx
        except ValueError as e:
            raise BuildError(str(e), loc, "PTX-E-TARGET") from None
        if not all(0 <= x <= 0x7FFFFFFF for x in v):
            raise BuildError(f"PTX ISA version {version_str(v)}: its major and minor numbers are from 0 to 2147483647",
                             loc, "PTX-E-DIRECTIVE", (f"write e.g. version='{version_str(LATEST_PTX)}'",))
        bad = version_error(v, form="version='{}'")
        if bad is not None:
            raise BuildError(bad[0], loc, "PTX-E-DIRECTIVE", (bad[1],))
        if v < t.min_ptx:
            raise BuildError(f"PTX ISA {version_str(v)} does not know target {t}; it needs .version "
                             f"{version_str(t.min_ptx)} or later", loc, "PTX-E-VERSION")
        if address_size not in (32, 64):
            raise BuildError(f".address_size must be 32 or 64, not {address_size!r}", loc, "PTX-E-BUILD")
        self.ir = IRModule(t, v, address_size, loc=loc)
        self._names = set()

    @property
    def target(self) -> Target:
        return self.ir.target

    @property
    def version(self):
        return self.ir.version

    def _claim(self, name: str, what: str) -> str:
        if not isinstance(name, str) or not _IDENT.match(name) or keyword.iskeyword(name) and False:
            raise _err(f"{what} name {name!r} is not a PTX identifier ([A-Za-z_][A-Za-z0-9_$]*)")
        if name in self._names:
            raise _err(f"{what} name {name!r} is already used in this module")
        self._names.add(name)
        return name

    def entry(self, name: str, *, maxntid=None, reqntid=None, minnctapersm=None, maxnreg=None,
              reqnctapercluster=None, explicitcluster=False, maxclusterrank=None) -> "KernelBuilder":
        """`.visible .entry name(...)` with its performance directives; returns its builder.

        Also refuses directives that ptxas takes but a launch cannot meet: a CTA above 1024 threads, and (sm_70
        and later) a maxnreg above what a CTA of reqntid threads launches with (ptxgen.target.max_regs_for_threads:
        128 for 416 threads)."""
        self._claim(name, "kernel")
        fn = Function(name, self.ir, is_entry=True, loc=caller_loc())
        kb = KernelBuilder(self, fn)
        try:
            kb._directives(maxntid=maxntid, reqntid=reqntid, minnctapersm=minnctapersm, maxnreg=maxnreg,
                           reqnctapercluster=reqnctapercluster, explicitcluster=explicitcluster,
                           maxclusterrank=maxclusterrank)
        except BuildError:
            self._names.discard(name)  # the kernel was not made: its name stays free for a corrected call
            raise
        self.ir.functions.append(fn)
        return kb

    def func(self, name: str, *, rets: Sequence[Tuple[str, object]] = (), linkage: str = "visible"
             ) -> "FunctionBuilder":
        """`.func (.param .b32 ret) name(...)`: a device function; `rets` is [(name, type)]."""
        if linkage not in ("visible", "", "weak"):
            raise _err(f"function linkage must be 'visible', 'weak' or '' (internal), not {linkage!r}")
        if len(rets) > 1:
            # ptxas: "Multiple return parameters require .register state space"
            raise _err(f"a .func returns at most one .param value, not {len(rets)}", cls=LegalityError,
                       notes=("return a packed value (pack()) or store results through a pointer",))
        self._claim(name, "function")
        fn = Function(name, self.ir, is_entry=False, linkage=linkage, loc=caller_loc())
        fb = FunctionBuilder(self, fn)
        for rn, rt in rets:
            ty = _param_type(fb._type(rt))
            fn.rets.append(Param(fb._pname(rn), ty))
        self.ir.functions.append(fn)
        return fb

    def global_var(self, name: str, type, count: Optional[int] = None, *, init=None, align=None,
                   space: str = "global", linkage: str = "visible") -> Var:
        """A module-scope `.global` or `.const` variable (optionally an initialised array).

        `init` is a value or a list of them, one per element; an .f16x2 element's is its 32 bits as an integer
        (0x40003C00 is (1.0, 2.0)), which the declaration gives in braces, as ptxas takes it
        (legality.initializer_error and initializer_miscompile say which initial values ptxas refuses or
        writes otherwise)."""
        if space not in ("global", "const"):
            raise _err(f"module variables live in .global or .const, not .{space}")
        ty = _var_type(FunctionBuilder._type(type), space)
        if align is not None:
            _check_align(align)
        if count is not None:
            _check_dims(space, count, name, init is not None)
        if init is not None:
            # checked (and formatted once) here so that a bad value is reported at this call, not at emit
            init = [init] if isinstance(init, (int, float)) else list(init)
            for x in init:  # an integer is written as a decimal literal, which ptxas reads into 64 bits
                if isinstance(x, int) and not isinstance(x, bool):
                    bad = _float_int_error(x, ty, f"{name}'s initial value") if imm_is_float(x, ty) else \
                        int64_value_error(x, f"{name}'s initial value")
                    if bad is not None:
                        raise _err(bad[0], "PTX-E-DECL", (bad[1],))
            dims = () if count is None else (count,)
            # the values as the declaration writes them (format_imm): 1 is 1.0 for .f32, 2.0 is 2 for .u32
            vals = [float(x) if imm_is_float(x, ty) else int(x) if isinstance(x, float) and x.is_integer()
                    and ty.kind in ("u", "s", "b") else x for x in init]
            if count is None and len(vals) == 1:
                shaped = (vals[0],) if ty is f16x2 else vals[0]
            else:
                shaped = tuple((x,) for x in vals) if ty is f16x2 and count is not None else tuple(vals)
            bad = initializer_error(space, ty.name, False, dims, None, shaped, name)
            if bad is not None:
                raise _err(bad[0], "PTX-E-DECL", (bad[1],))
            bad = initializer_miscompile(ty.name, dims, None, shaped, name)
            if bad is not None:  # the builder never emits what ptxas is known to miscompile
                raise _err(bad[0], CODE_MISCOMPILE, (bad[1],), cls=LegalityError)
            for x in init:
                try:
                    format_imm(x, ty)
                except (ValueError, TypeError) as e:
                    raise _err(f"initialiser {x!r} of {name}: {e}", "PTX-E-TYPE") from None
        v = Var(self._claim(name, "variable"), space, ty, count, align, init=init,
                linkage=linkage if space == "global" else "", loc=caller_loc())
        self.ir.vars.append(v)
        return v

    def extern_shared(self, name: str = "dynamic_smem", *, align: int = 16) -> Var:
        """`.extern .shared .align A .b8 name[];`: the dynamic shared memory window."""
        _check_align(align)
        v = Var(self._claim(name, "variable"), "shared", b8, None, align, extern=True, loc=caller_loc())
        self.ir.vars.append(v)
        return v

    def emit(self, *, comments: bool = False):
        """PTX text and line map (see ptxgen.emit.emit_module). A branch to a label that its function
        never placed raises BuildError at the line that made the branch (ptxas would reject the text)."""
        from .emit import emit_module
        for fn in self.ir.functions:
            _check_labels_placed(fn)
        return emit_module(self.ir, comments=comments)

    def check_async(self, box_bytes=None) -> list:
        """Async-protocol findings (wgmma fence/commit/wait, proxy fences, mbarriers) of the built functions,
        at the user's source lines; `box_bytes` maps tensor-map parameter names to the bytes of one box."""
        from .asynccheck import check_function
        from .diag import Diagnostic
        out: list = []

        def add(code, message, loc, notes=(), span=1, severity="warning"):
            out.append(Diagnostic(code, severity, message, loc, tuple(notes)))
        for fn in self.ir.functions:
            check_function(fn, add, box_bytes)
        return out

    def __str__(self) -> str:
        return self.emit().text


_RAW_LABEL = re.compile(r"^\s*([A-Za-z_$%][\w$]*)\s*:", re.M)


def _check_labels_placed(fn: Function) -> None:
    """BuildError at the first instruction of `fn` whose label operand is placed nowhere in `fn` (labels
    that raw() text defines count as placed)."""
    placed = set()
    for st in fn.body:
        if isinstance(st, LabelDef):
            placed.add(st.label.name)
        elif isinstance(st, Raw):
            placed.update(_RAW_LABEL.findall(st.text))
    for st in fn.body:
        if isinstance(st, Instr):
            for o in st.operands:
                if isinstance(o, Label) and o.name not in placed:
                    raise BuildError(f"{st.opcode} goes to label {o.name}, which {fn.name} never places",
                                     st.loc, "PTX-E-LABEL",
                                     ("place() it where the branch should land (new_label() makes a label to "
                                      "place later)",))


def _var_type(ty: Type, space: str) -> Type:
    """A type a variable of `space` may be declared with (legality.undeclarable_type: no .bf16, .tf32, fp8 or
    .pred variables, ...)."""
    bad = undeclarable_type(ty.name, space)
    if bad is not None:
        raise _err(bad[0], "PTX-E-DECL", (bad[1],))
    return ty


def _param_type(ty: Type) -> Type:
    """A type a parameter may be declared with (legality.undeclarable_type)."""
    return _var_type(ty, "param")


def _check_dims(space: str, count, name: str, init: bool = False) -> None:
    """An array of `count` elements in `space` as ptxas takes it (legality.variable_array_error), and a size that
    ptxas reads as written (legality.int64_value_error)."""
    if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 0:
        raise _err(f"{space} array {name}: its size must be an int of at least 0, not {count!r}", "PTX-E-DECL")
    bad = int64_value_error(count, f"{space} array {name}: its size") or \
        variable_array_error(space, (count,), name, init=init)
    if bad is not None:
        raise _err(bad[0], "PTX-E-DECL", (bad[1],))


def _float_int_error(v: int, ty: Type, what: str) -> Optional[Tuple[str, str]]:
    """(message, note) where the integer `v` given for a floating-point value is past every finite float."""
    try:
        float(v)
    except OverflowError:
        return (f"{what}, an integer of {len(str(abs(v)))} digits, is past the largest finite .{ty.name}",
                "give a value of at most 1.7976931348623157e308 (3.4028234663852886e+38 for .f32)")
    return None


def _check_align(a, param: bool = False):
    """An .align ptxas takes (legality.align_error); `param`: of a .func's parameter."""
    if isinstance(a, bool) or not isinstance(a, int):
        raise _err(f"alignment must be a power of two, not {a!r}")
    bad = align_error(a, param)
    if bad is not None:
        raise _err(bad[0], "PTX-E-BUILD", (bad[1],))


class _Special:
    """`k.tid.x` style access to a special register: each read emits one `mov`."""

    def __init__(self, b: "FunctionBuilder", base: str):
        self._b, self._base = b, base

    def __getattr__(self, c):
        if c in ("x", "y", "z"):
            return self._b.sreg(f"%{self._base}.{c}")
        raise AttributeError(c)


class _IfElse:
    """`then()` and an optional `otherwise()`: without the second it is an `if_` (nothing branches to an
    end label that would never be placed); with it, the then-block's jump over the else-block is added
    when `otherwise()` opens."""

    def __init__(self, b: "FunctionBuilder", cond):
        self.b, self.cond = b, cond
        self.else_label = b.new_label("else")
        self.end_label = b.new_label("endif")     # placed only if otherwise() is used
        self._then_end = None          # body position of the else label, once then() has closed
        self._else_done = False

    @contextlib.contextmanager
    def then(self):
        if self._then_end is not None:
            raise _err("if_else: then() is used once")
        self.b.bra(self.else_label, guard=~_as_guard(self.cond))
        yield
        self._then_end = len(self.b.fn.body)
        self.b.place(self.else_label)

    @contextlib.contextmanager
    def otherwise(self):
        if self._then_end is None:
            raise _err("if_else: use the `then()` block before `otherwise()`")
        if self._else_done:
            raise _err("if_else: otherwise() is used once")
        self._else_done = True
        self.b.bra(self.end_label, uni=True)     # made here (so it points at this line), moved before the else label
        body = self.b.fn.body
        body.insert(self._then_end, body.pop())
        yield
        self.b.place(self.end_label)


def _as_guard(c) -> Guard:
    if isinstance(c, Guard):
        return c
    if isinstance(c, Reg) and c.type is pred:
        return Guard(c, False)
    raise _err(f"expected a predicate register (or ~p), got {c!r}", "PTX-E-TYPE")


class FunctionBuilder(MmaOps, WgmmaOps, AsyncCopyOps, MbarrierOps, ClusterOps):
    """Builds the body of one `.func` (and, through KernelBuilder, one `.entry`)."""

    def __init__(self, module: Module, fn: Function):
        self.module = module
        self.fn = fn
        self.target = module.ir.target
        self.version = module.ir.version
        self._pnames = set()

    # ------------------------------------------------------------------ registers
    @staticmethod
    def _type(t) -> Type:
        try:
            return get_type(t)
        except (ValueError, TypeError) as e:
            raise _err(str(e), "PTX-E-TYPE") from None

    def _unique(self, base: str, count: Optional[int]) -> str:
        fn = self.fn
        if not _IDENT.match(base):
            raise _err(f"register name {base!r} is not a PTX identifier")
        cand = base
        if cand in _RESERVED or _AUTO_MEMBER.match(cand) or (count is not None and cand[-1].isdigit()):
            cand = cand + "_"
        k = 0
        while True:
            name = cand if k == 0 else f"{cand}_{k}"
            names = [f"%{name}"] if count is None else [f"%{name}{i}" for i in range(count)] + [f"%{name}"]
            if not any(n in fn._names for n in names) and f"%{name}" not in fn._arrays:
                fn._names.update(names)
                return f"%{name}"
            k += 1

    def reg(self, type, name: Optional[str] = None) -> Reg:
        """A fresh virtual register (declared by the emitter as `.reg .T %name;` or in `%r<N>`)."""
        ty = self._type(type)
        if ty.reg_decl is None:
            raise _err(f"there are no .{ty.name} registers; use a wider type (e.g. u16/u32) for 8-bit and fp8 data",
                       "PTX-E-TYPE")
        if ty.bits == 128:
            self._need("sm_50", (8, 3), ".b128 registers")
        fn = self.fn
        if name is None:
            prefix = "%" + ty.reg_prefix
            idx = fn._next.get(prefix, 0)
            fn._next[prefix] = idx + 1
            r = Reg(f"{prefix}{idx}", ty, fn, prefix)
        else:
            nm = self._unique(name, None)
            r = Reg(nm, ty, fn, None)
        fn.regs.append(r)
        return r

    def regs(self, type, count: int, name: Optional[str] = None) -> RegArray:
        """A fragment of `count` registers of one type, declared together as `.reg .T %name<count>;`."""
        ty = self._type(type)
        if not isinstance(count, int) or count <= 0:
            raise _err(f"register count must be a positive int, not {count!r}")
        if name is None:
            return RegArray(self.reg(ty) for _ in range(count))
        if ty.reg_decl is None:
            raise _err(f"there are no .{ty.name} registers", "PTX-E-TYPE")
        if ty.bits == 128:
            self._need("sm_50", (8, 3), ".b128 registers")
        base = self._unique(name, count)
        self.fn._arrays[base] = (ty, count)
        out = []
        for i in range(count):
            r = Reg(f"{base}{i}", ty, self.fn, base)
            self.fn.regs.append(r)
            out.append(r)
        return RegArray(out)

    # ------------------------------------------------------------------ params
    def _pname(self, name: str) -> str:
        if not isinstance(name, str) or not _IDENT.match(name):
            raise _err(f"parameter name {name!r} is not a PTX identifier")
        full = f"{self.fn.name}_param_{name}"
        if full in self._pnames:
            raise _err(f"parameter {name!r} is already declared for {self.fn.name}")
        self._pnames.add(full)
        return full

    def param(self, name: str, type, *, align: Optional[int] = None) -> Param:
        """A scalar parameter: `.param .u32 name`."""
        if align is not None:
            _check_align(align, not self.fn.is_entry)
        p = Param(self._pname(name), _param_type(self._type(type)), align=align)
        self.fn.params.append(p)
        return p

    def param_ptr(self, name: str, pointee=None, *, align: int = 4, space: str = "global") -> Param:
        """A pointer parameter: `.param .u64 .ptr .global .align A name` (kernels only)."""
        _check_align(align)
        if space not in ("global", "shared", "const", "local"):
            raise _err(f".ptr state space must be global/shared/const/local, not {space!r}")
        if not self.fn.is_entry:
            raise _err(".ptr parameter attributes are allowed on .entry parameters only")
        p = Param(self._pname(name), u64 if self.module.ir.address_size == 64 else u32, ptr_space=space,
                  align=align, pointee=get_type(pointee) if pointee is not None else None)
        self.fn.params.append(p)
        return p

    def param_bytes(self, name: str, size: int, *, align: int = 64) -> Param:
        """A by-value byte array: `.param .align 64 .b8 name[128]` (e.g. a CUtensorMap)."""
        _check_align(align, not self.fn.is_entry)
        if not isinstance(size, int) or size <= 0:
            raise _err(f"byte-array parameter size must be a positive int, not {size!r}")
        p = Param(self._pname(name), b8, align=align, array=size)
        self.fn.params.append(p)
        return p

    def ld_param(self, p: Param, *, dst: Optional[Reg] = None) -> Reg:
        """`ld.param.T %r, [name];` loads a scalar or pointer parameter."""
        if not isinstance(p, Param) or (p not in self.fn.params and p not in self.fn.rets):
            raise _err(f"{p!r} is not a parameter of {self.fn.name}")
        if p.array is not None:
            raise _err(f"{p.name} is a byte array: pass its address (mem(param)) to the instruction that uses it")
        ty = p.type
        d = self._dst(dst, ty)
        self._emit(f"ld.param{ty.ptx}", (d, Addr(p.sym)))
        return d

    # ------------------------------------------------------------------ shared memory
    def _claim_local(self, name: str, what: str) -> str:
        """Function-scope variable names: unique within the function and not hiding a module name."""
        if not isinstance(name, str) or not _IDENT.match(name):
            raise _err(f"{what} name {name!r} is not a PTX identifier ([A-Za-z_][A-Za-z0-9_$]*)")
        taken = {v.name for v in self.fn.locals}
        if name in taken or name in self.module._names:
            raise _err(f"{what} name {name!r} is already used in {self.fn.name} or at module scope")
        return name

    def shared(self, name: str, nbytes: int, *, align: int = 16, type=b8) -> Var:
        """A static shared array in this function: `.shared .align A .b8 name[nbytes];`."""
        _check_align(align)
        ty = _var_type(self._type(type), "shared")
        if not isinstance(nbytes, int) or nbytes <= 0 or nbytes % ty.bytes:
            raise _err(f"shared array size must be a positive multiple of {ty.bytes} bytes, not {nbytes!r}")
        _check_dims("shared", nbytes // ty.bytes, name)
        v = Var(self._claim_local(name, "shared variable"), "shared", ty, nbytes // ty.bytes, align,
                loc=caller_loc())
        self.fn.locals.append(v)
        return v

    def local(self, name: str, nbytes: int, *, align: int = 8) -> Var:
        """A per-thread `.local .align A .b8 name[nbytes];` array."""
        _check_align(align)
        _check_dims("local", nbytes, name)
        v = Var(self._claim_local(name, "local variable"), "local", b8, nbytes, align, loc=caller_loc())
        self.fn.locals.append(v)
        return v

    # ------------------------------------------------------------------ emission core
    def _emit(self, opcode: str, operands: tuple, guard=None, sep=None) -> Instr:
        g = None if guard is None else _as_guard(guard)
        if g is not None:
            self._own(g.reg)
        ins = Instr(opcode, operands, g, caller_loc(), None, sep)
        self.fn.body.append(ins)
        return ins

    def _own(self, r: Reg):
        if r.owner is not self.fn:
            raise _err(f"register {r.name} belongs to {r.owner.kind} {r.owner.name}, not to "
                       f"{self.fn.kind} {self.fn.name}; registers cannot cross functions", "PTX-E-REG")

    def _dst(self, dst, ty: Type, *, wider_ok=False) -> Reg:
        if dst is None:
            return self.reg(ty)
        if not isinstance(dst, Reg):
            raise _err(f"destination must be a register, got {dst!r}", "PTX-E-TYPE")
        self._own(dst)
        if not compatible(dst.type, ty, wider_ok=wider_ok):
            raise _err(f"destination {dst.name} is .{dst.type.name}; this instruction writes .{ty.name}",
                       "PTX-E-TYPE")
        return dst

    def _src(self, x, ty: Type, what: str = "operand", *, wider_ok=False, imm=True):
        if isinstance(x, Reg):
            self._own(x)
            if not compatible(x.type, ty, wider_ok=wider_ok):
                raise _err(f"{what} {x.name} is a .{x.type.name} register; .{ty.name} expected",
                           "PTX-E-TYPE", (f"convert it first, e.g. cvt or mov.b{x.type.bits}",))
            return x
        if isinstance(x, bool):
            x = int(x)
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            if not imm:
                raise _err(f"{what} must be a register, not the immediate {x!r}", "PTX-E-TYPE")
            return self._imm(x, ty, what)
        if isinstance(x, Imm):
            return x
        if isinstance(x, SpecialReg):
            raise _err(f"special register {x.name} can only be read with mov (use k.sreg({x.name!r}))",
                       "PTX-E-TYPE")
        raise _err(f"{what}: expected a register or immediate of .{ty.name}, got {type(x).__name__}", "PTX-E-TYPE")

    def _membermask(self, x):
        """A warp's member mask: a 32-bit integer register (or one declared .b32) or an integer literal;
        ptxas 13.0 takes no .f32 register and no float literal there."""
        return self._src(x, u32, "membermask")

    def _imm(self, v, ty: Type, what="operand") -> Imm:
        if ty.kind == "f" and ty.bits in (32, 64):
            bad = _float_int_error(v, ty, what) if isinstance(v, int) else None
            if bad is not None:
                raise _err(bad[0], "PTX-E-TYPE", (bad[1],))
            imm = Imm(float(v), ty)
            try:
                str(imm)  # formatted here, not only when emitting, so that the error points at this call
            except ValueError as e:
                raise _err(f"{what}: {e}", "PTX-E-TYPE") from None
            return imm
        if ty.kind == "pred":
            # ptxas takes 0/1 for a predicate operand (mov.pred %p, 1; and.pred %p, %q, 1)
            if v in (0, 1) and not isinstance(v, float):
                return Imm(int(v), ty)
            raise _err(f"a .pred immediate is 0 or 1, not {v!r}", "PTX-E-TYPE")
        if ty.kind == "f" or ty.kind in ("packed", "fp8"):
            raise _err(f"PTX has no .{ty.name} immediates; mov the bit pattern into a register first",
                       "PTX-E-TYPE")
        if isinstance(v, float):
            if not v.is_integer():
                raise _err(f"{what} {v!r} is not an integer but .{ty.name} expected", "PTX-E-TYPE")
            v = int(v)
        bits = ty.bits
        # ptxas takes both -1 and 0xFFFFFFFF for any 32-bit integer type (add.u32 %r, %r, -1)
        lo = -(1 << (bits - 1))
        hi = (1 << bits) - 1
        if not lo <= v <= hi:
            raise _err(f"immediate {v} does not fit in .{ty.name}", "PTX-E-TYPE")
        return Imm(int(v), ty)

    def _infer(self, type, *ops) -> Type:
        if type is not None:
            return self._type(type)
        for o in ops:
            if isinstance(o, Reg):
                return o.type
            if isinstance(o, Guard):
                return pred
        raise _err("cannot infer the instruction type from immediates alone: pass type=...", "PTX-E-TYPE")

    def _check_type(self, op: str, ty: Type, allowed=None):
        allowed = C.TYPES[op] if allowed is None else allowed
        if ty not in allowed:
            raise _err(f"{op} has no .{ty.name} form", "PTX-E-TYPE",
                       (f"{op} takes: " + ", ".join("." + t.name for t in allowed),), LegalityError)
        if ty in (bf16, bf16x2) and op in C.NEEDS_SM90_BF16 and not self.target.satisfies("sm_90"):
            raise _err(f"{op}.{ty.name} needs sm_90 or later (target is {self.target})", "PTX-E-TARGET",
                       cls=LegalityError)

    def _need(self, target: str, version: Tuple[int, int], what: str):
        if not self.target.satisfies(target):
            raise _err(f"{what} needs target {target} (module target is {self.target})", "PTX-E-TARGET",
                       cls=LegalityError)
        if self.version < version:
            raise _err(f"{what} needs PTX ISA {version_str(version)} (module .version is "
                       f"{version_str(self.version)})", "PTX-E-VERSION",
                       (f"create the module with version='{version_str(version)}' or later",), LegalityError)

    def _addr(self, a, what="address", space: Optional[str] = None) -> Addr:
        if isinstance(a, Addr):
            base = a.base
        elif isinstance(a, (Reg, Sym)):
            base, a = a, Addr(a, 0)
        elif isinstance(a, (Var, Param)):
            a = Addr(a.sym, 0)
            base = a.base
        else:
            raise _err(f"{what}: expected a register, variable or mem(base, offset), got {type(a).__name__}",
                       "PTX-E-TYPE")
        bad = int64_value_error(a.offset, f"{what} offset") if isinstance(a.offset, int) else None
        if bad is not None:
            raise _err(bad[0], "PTX-E-BUILD", (bad[1],))
        if isinstance(base, Reg):
            self._own(base)
            if base.type.bits not in (32, 64) or base.type.kind not in ("b", "u", "s"):
                raise _err(f"{what} register {base.name} is .{base.type.name}; addresses are .u32 or .u64",
                           "PTX-E-TYPE")
            # ptxas: "Program uses 32-bit address ... conflicting with .address_size 64"; a 32-bit
            # register is fine for the windowed spaces (.shared, .local, .const, .param)
            if (space in ("global", "generic") and base.type.bits == 32
                    and self.module.ir.address_size == 64):
                raise _err(f"{what} register {base.name} is 32-bit; a .{space} address in a module with "
                           ".address_size 64 is a 64-bit register", "PTX-E-TYPE",
                           ("widen it first, e.g. cvt.u64.u32",))
        return a

    # ------------------------------------------------------------------ labels and control flow
    def new_label(self, hint: str = "L") -> Label:
        """A fresh label `$L_hint_N` (not yet placed)."""
        base = re.sub(r"[^A-Za-z0-9_]", "_", hint)
        n = len(self.fn._labels)
        name = f"$L_{base}_{n}"
        self.fn._labels.add(name)
        return Label(name)

    def place(self, label: Label):
        """Place `label:` at the current point. A label marks one point: placing it a second time, or
        placing one that another function made, raises BuildError at that call."""
        if not isinstance(label, Label):
            raise _err(f"expected a Label, got {type(label).__name__}")
        if label.name not in self.fn._labels:
            raise _err(f"label {label.name} was not made by {self.fn.name}'s new_label() or label()",
                       notes=["labels belong to the function whose builder made them"])
        if label.name in self.fn._placed:
            first = self.fn._placed[label.name]
            raise _err(f"label {label.name} is already placed" + (f" (at {first})" if first else ""),
                       "PTX-E-DUP-LABEL",
                       notes=["label() makes a label and places it at once; to place one later, make it "
                              "with new_label()"])
        loc = caller_loc()
        self.fn._placed[label.name] = loc
        self.fn.body.append(LabelDef(label, loc))

    def label(self, hint: str = "L") -> Label:
        """A new label placed here."""
        lb = self.new_label(hint)
        self.place(lb)
        return lb

    def bra(self, target: Label, *, guard=None, uni: bool = False):
        """`@p bra{.uni} target;`"""
        if not isinstance(target, Label):
            raise _err(f"bra target must be a Label, got {type(target).__name__}")
        self._emit("bra.uni" if uni else "bra", (target,), guard)

    def ret(self, *, guard=None, uni: bool = False):
        """`ret;`"""
        self._emit("ret.uni" if uni else "ret", (), guard)

    def exit(self, *, guard=None):
        """`exit;`"""
        self._emit("exit", (), guard)

    def trap(self, *, guard=None):
        """`trap;`"""
        self._emit("trap", (), guard)

    def pragma(self, text: str):
        """`.pragma "text";` in the body: "nounroll", "enable_smem_spilling", "used_bytes_mask N" or
        "frequency N" (isa_core.pragma_error, lint's rule too); any other string ptxas ignores, and is refused."""
        if not isinstance(text, str) or '"' in text or "\n" in text:
            raise _err("pragma() takes the pragma's text, without quotes or newlines")
        bad = C.pragma_error(text, "body")
        if bad is not None:
            raise _err(bad[1], "PTX-E-DIRECTIVE", bad[2])
        self.fn.body.append(Pragma(text, caller_loc()))

    def raw(self, text: str):
        """Emit `text` verbatim (unchecked); problems in it are reported from the ptxas/JIT log."""
        if not isinstance(text, str):
            raise _err("raw() takes PTX text")
        self.fn.body.append(Raw(text, caller_loc()))

    def comment(self, text: str):
        """A `// text` line in the output."""
        self.fn.body.append(Raw("// " + text.replace("\n", " "), caller_loc()))

    @contextlib.contextmanager
    def if_(self, cond):
        """`with k.if_(p):` runs the block when p (or `~p`) holds: `@!p bra END; ...; END:`."""
        end = self.new_label("endif")
        self.bra(end, guard=~_as_guard(cond))
        yield
        self.place(end)

    def if_else(self, cond) -> _IfElse:
        """`ie = k.if_else(p); with ie.then(): ...; with ie.otherwise(): ...`"""
        return _IfElse(self, cond)

    @contextlib.contextmanager
    def for_range(self, start, stop, step: int = 1, *, type=u32, unroll: Optional[bool] = None, name="i"):
        """A counted loop `for i in range(start, stop, step)` over a register; yields i.

        `unroll=False` adds `.pragma "nounroll";`. The trip test is done before the first iteration
        unless both bounds are immediates with start < stop.
        """
        ty = self._type(type)
        if not isinstance(step, int) or step == 0:
            raise _err(f"loop step must be a non-zero int, not {step!r}")
        i = self.reg(ty, name)
        self.mov(start, type=ty, dst=i)
        top, end = self.new_label("loop"), self.new_label("loop_end")
        cmp = "lt" if step > 0 else "gt"
        static_ok = isinstance(start, int) and isinstance(stop, int) and (start < stop if step > 0 else start > stop)
        if not static_ok:
            p0 = self.setp("ge" if step > 0 else "le", i, stop, type=ty)
            self.bra(end, guard=p0)
        self.place(top)
        if unroll is False:
            self.pragma("nounroll")
        yield i
        self.add(i, step, dst=i)
        p = self.setp(cmp, i, stop, type=ty)
        self.bra(top, guard=p)
        if not static_ok:          # only the trip test branches to the end
            self.place(end)

    # ------------------------------------------------------------------ special registers
    def sreg(self, name: str, *, dst: Optional[Reg] = None) -> Reg:
        """`mov.u32 %r, %tid.x;` reads a special register into a fresh register."""
        if name not in SPECIAL_REGS:
            raise _err(f"unknown special register {name!r}", "PTX-E-SREG",
                       ("known: " + ", ".join(sorted(SPECIAL_REGS)),))
        ty, tgt = SPECIAL_REGS[name]
        if not self.target.satisfies(tgt):
            raise _err(f"{name} needs {tgt} (target is {self.target})", "PTX-E-TARGET", cls=LegalityError)
        if name in _SREG_MIN_PTX:
            self._need(tgt, _SREG_MIN_PTX[name], name)
        d = self._dst(dst, ty)
        self._emit(f"mov{ty.ptx}", (d, SpecialReg(name, ty)))
        return d

    @property
    def tid(self):
        return _Special(self, "tid")

    @property
    def ntid(self):
        return _Special(self, "ntid")

    @property
    def ctaid(self):
        return _Special(self, "ctaid")

    @property
    def nctaid(self):
        return _Special(self, "nctaid")

    # ------------------------------------------------------------------ data movement
    def mov(self, src, *, type=None, dst: Optional[Reg] = None, guard=None) -> Reg:
        """`mov.T d, src;` (src: register, immediate, special register, or a variable's address)."""
        if isinstance(src, SpecialReg):
            if guard is not None:
                raise _err("a guarded read of a special register is not supported: read it into a register, "
                           "then mov that register under the guard")
            return self.sreg(src.name, dst=dst)
        if isinstance(src, (Var, Sym)):
            sym = src.sym if isinstance(src, Var) else src
            aty = u64 if self.module.ir.address_size == 64 else u32
            ty = self._type(type) if type is not None else aty
            if ty not in (u32, u64, b32, b64, s32, s64):
                raise _err(f"the address of {sym.name} needs a .u32 or .u64 destination", "PTX-E-TYPE")
            d = self._dst(dst, ty)
            self._emit(f"mov{ty.ptx}", (d, sym), guard)
            return d
        ty = self._infer(type, src, dst)
        oty = C.storage_type(ty)  # there is no mov.f16: halves move as .b16
        self._check_type("mov", oty)
        s = self._src(src, ty, "source")
        d = self._dst(dst, ty)
        self._emit(f"mov{oty.ptx}", (d, s), guard)
        return d

    def pack(self, parts: Sequence[Reg], *, type=None, dst: Optional[Reg] = None) -> Reg:
        """`mov.b64 d, {a, b};` packs 2 or 4 narrower registers into one."""
        if len(parts) not in (2, 4):
            raise _err("pack takes 2 or 4 registers")
        for r in parts:
            if not isinstance(r, Reg):
                raise _err("pack takes registers", "PTX-E-TYPE")
            self._own(r)
        bits = sum(r.type.bits for r in parts)
        if len({r.type.bits for r in parts}) != 1 or bits not in (32, 64, 128):
            raise _err("pack: parts of equal size adding to 32/64/128 bits expected, got "
                       + ", ".join(r.type.name for r in parts), "PTX-E-TYPE")
        ty = self._type(type) if type is not None else {32: b32, 64: b64, 128: get_type("b128")}[bits]
        d = self._dst(dst, ty)
        self._emit(f"mov.b{bits}", (d, Vec(tuple(parts))))
        return d

    def unpack(self, src: Reg, n: int = 2, *, type=None) -> RegArray:
        """`mov.b64 {a, b}, s;` splits a register into n equal parts."""
        if not isinstance(src, Reg):
            raise _err("unpack takes a register", "PTX-E-TYPE")
        self._own(src)
        part_bits = src.type.bits // n
        if n not in (2, 4) or part_bits < 16:
            raise _err(f"cannot split .{src.type.name} into {n} parts of at least 16 bits")
        ty = self._type(type) if type is not None else {16: b16, 32: b32, 64: b64}[part_bits]
        outs = RegArray(self.reg(ty) for _ in range(n))
        self._emit(f"mov.b{src.type.bits}", (Vec(tuple(outs)), src))
        return outs

    def _space_prefix(self, space: str, allowed) -> str:
        if space not in allowed:
            raise _err(f"state space {space!r} is not allowed here; use one of {', '.join(allowed)}",
                       "PTX-E-SPACE")
        if space == "shared::cluster":
            self._need("sm_90", (7, 8), ".shared::cluster")
        return "" if space == "generic" else "." + space

    def _scope(self, scope, what):
        if scope not in C.SCOPES:
            raise _err(f"{what}: scope must be one of {', '.join(C.SCOPES)}, not {scope!r}")
        if scope == "cluster":
            self._need("sm_90", (7, 8), f"{what}.cluster")
        return "." + scope

    def _vec(self, what, ty: Type, vec, space: str):
        """Checks a vector width by isa_core.vector_access (lint's rule too): 128 bits at most, but the 256-bit
        .global and generic forms of sm_100. The .v8 forms of 8- and 16-bit elements, which the PTX ISA does not
        define (ptxas takes some and crashes on others), are not offered."""
        if vec not in (2, 4, 8):
            raise _err(f"vector width must be 2, 4 or 8, not {vec!r}")
        problems, wide, documented = C.vector_access(what, space.split("::")[0], ty.bits, vec)
        if not documented:
            raise _err(f"{what}.v8{ty.ptx} is not in the PTX ISA: .v8 is for 32-bit elements (a 256-bit access)",
                       cls=LegalityError)
        if problems:
            _, message, hint = problems[0]
            raise _err(f"{message}; {hint}", cls=LegalityError)
        if wide:
            self._need(*C.WIDE_ACCESS_NEEDS, f"{what}.v{vec}{ty.ptx} (256-bit access)")

    def _mem_sem(self, sem, scope, what):
        if sem is None:
            if scope is not None:
                raise _err(f"{what}: a scope needs a memory semantic (relaxed/acquire/release)")
            return ""
        if sem == "volatile":
            if scope is not None:
                raise _err(f"{what}.volatile takes no scope")
            return ".volatile"
        if sem == "weak":
            if scope is not None:
                raise _err(f"{what}.weak takes no scope")
            return ".weak"
        if sem not in C.MEM_SEMS:
            raise _err(f"{what}: unknown memory semantic {sem!r}; use weak, volatile, relaxed, acquire or release")
        if scope is None:
            raise _err(f"{what}.{sem} needs a scope: one of {', '.join(C.SCOPES)}")
        self._need("sm_70", (6, 0), f"{what}.{sem}")
        return f".{sem}" + self._scope(scope, f"{what}.{sem}")

    def _memory_order(self, op, mods):
        err = C.memory_order_error(op, mods.split(".")[1:])
        if err is not None:
            raise _err(err[0], cls=LegalityError, notes=(err[1],))

    def ld(self, addr, type, *, space: str = "global", vec: Optional[int] = None, cache: Optional[str] = None,
           sem: Optional[str] = None, scope: Optional[str] = None, nc: bool = False, dst=None, guard=None):
        """`ld{.sem.scope}.space{.nc}{.cop}{.vN}.T d, [a];` returns a register (or a RegArray for vec)."""
        ty = self._type(type)
        # PTX loads halves and packed values by their bits (there is no ld.f16); the register keeps `ty`
        mty = C.storage_type(ty)
        rty = ty if ty.reg_decl else u32  # 8-bit data lands in a 32-bit register (no .reg .b8 exists)
        sp = self._space_prefix(space, C.LD_SPACES)
        semtxt = self._mem_sem(sem, scope, "ld")
        if sem in ("release", "acq_rel"):
            raise _err(f"ld cannot be .{sem}; use acquire or relaxed", cls=LegalityError)
        mods = semtxt + sp
        if nc:
            if space != "global":
                raise _err("ld.nc is for the .global space only")
            if sem is not None:
                raise _err(f"ld.{sem} cannot be combined with .nc", cls=LegalityError)
            mods += ".nc"
        if cache is not None:
            if cache not in C.LD_CACHE:
                raise _err(f"ld cache operator must be one of {', '.join(C.LD_CACHE)}, not {cache!r}")
            if sem not in (None, "weak"):
                raise _err("cache operators cannot be combined with volatile/relaxed/acquire loads",
                           cls=LegalityError)
            if nc and cache not in C.LD_NC_CACHE:
                raise _err(f"ld.global.nc takes the cache operators {', '.join(C.LD_NC_CACHE)}, not {cache!r}",
                           cls=LegalityError)
            mods += "." + cache
        self._memory_order("ld", mods)
        a = self._addr(addr, space=space)
        if vec is not None:
            self._vec("ld", mty, vec, space)
            if dst is None:
                dst = RegArray(self.reg(rty) for _ in range(vec))
            elif len(dst) != vec:
                raise _err(f"ld.v{vec} needs {vec} destination registers, got {len(dst)}")
            ds = RegArray(self._dst(d, ty if ty.reg_decl else mty, wider_ok=True) for d in dst)
            self._emit(f"ld{mods}.v{vec}{mty.ptx}", (Vec(tuple(ds)), a), guard)
            return ds
        d = self._dst(dst, rty) if dst is None else self._dst(dst, ty if ty.reg_decl else mty, wider_ok=True)
        self._emit(f"ld{mods}{mty.ptx}", (d, a), guard)
        return d

    def st(self, addr, value, type=None, *, space: str = "global", cache: Optional[str] = None,
           sem: Optional[str] = None, scope: Optional[str] = None, guard=None):
        """`st{.sem.scope}.space{.cop}{.vN}.T [a], v;` (value: register, immediate or a sequence for vectors)."""
        vals = list(value) if isinstance(value, (list, tuple)) else None
        ty = self._infer(type, *(vals or [value]))
        mty = C.storage_type(ty)  # st.b16 for .f16 data, as for ld
        vty = ty if ty.reg_decl else mty
        sp = self._space_prefix(space, C.ST_SPACES)
        semtxt = self._mem_sem(sem, scope, "st")
        if sem in ("acquire", "acq_rel"):
            raise _err(f"st cannot be .{sem}; use release or relaxed", cls=LegalityError)
        mods = semtxt + sp
        if cache is not None:
            if cache not in C.ST_CACHE:
                raise _err(f"st cache operator must be one of {', '.join(C.ST_CACHE)}, not {cache!r}")
            if sem not in (None, "weak"):
                raise _err("cache operators cannot be combined with volatile/relaxed/release stores",
                           cls=LegalityError)
            mods += "." + cache
        self._memory_order("st", mods)
        a = self._addr(addr, space=space)
        if space == "param" and isinstance(a.base, Reg):
            # .param stores go to a named argument or return value (call() writes them); ptxas 13.0
            # crashes on st.param through a register for sm_90
            raise _err("st.param needs a .param variable's address, not a register", "PTX-E-SPACE")
        if vals is not None:
            self._vec("st", mty, len(vals), space)
            srcs = tuple(self._src(v, vty, "value", wider_ok=True) for v in vals)
            self._emit(f"st{mods}.v{len(vals)}{mty.ptx}", (a, Vec(srcs)), guard)
        else:
            self._emit(f"st{mods}{mty.ptx}", (a, self._src(value, vty, "value", wider_ok=True)), guard)

    def cvta(self, src, space: str, *, to: bool = False, type=None, dst=None) -> Reg:
        """`cvta{.to}.space.u64 d, a;` converts between generic and state-space addresses."""
        aty = u64 if self.module.ir.address_size == 64 else u32
        ty = self._type(type) if type is not None else aty
        # ptxas rejects cvta.u32 under .address_size 64 ("Arguments mismatch" / "32-bit address")
        if ty is not aty:
            raise _err(f"cvta works on .{aty.name} addresses in a module with .address_size "
                       f"{self.module.ir.address_size}", "PTX-E-TYPE")
        self._space_prefix(space, C.CVTA_SPACES)
        if isinstance(src, (Var, Sym)):
            s = src.sym if isinstance(src, Var) else src
        else:
            s = self._src(src, ty, "address", imm=False)
        d = self._dst(dst, ty)
        self._emit(f"cvta{'.to' if to else ''}.{space}{ty.ptx}", (d, s))
        return d

    # ------------------------------------------------------------------ arithmetic
    def _float_mods(self, op, rnd, ftz, sat):
        """The modifier words of the rnd=, ftz= and sat= arguments. Which of them `op` takes with which type is the
        shared rule's to say (isa_core.ARITH_MODS, through _arith_mods); here only the rounding value is checked."""
        if rnd is not None and rnd not in C.ROUND_F:
            raise _err(f"{op} rounding must be one of {', '.join(C.ROUND_F)}, not {rnd!r}", cls=LegalityError)
        return ("." + rnd if rnd else "") + (".ftz" if ftz else "") + (".sat" if sat else "")

    def _arith_mods(self, op, ty, mods):
        """Refuse modifiers ptxas refuses on `op` of type `ty` (isa_core.ARITH_MODS, lint's rule too), naming the
        builder argument that wrote or would write the word."""
        err = C.arith_modifier_error(op, ty.name, mods.split(".")[1:])
        if err is None:
            return
        message = err.message if not mods else f"{op}{mods}{ty.ptx}: {err.message}"
        args = [_ARITH_ARGS.get(w, "") for w in err.words]
        hint = ()
        if err.kind == "extra" and args[0]:
            hint = (f"drop {args[0]}",)
        elif err.kind in ("missing", "needs") and all(a.startswith("rnd=") for a in args):
            hint = (f"pass e.g. {args[0]}",)
        raise _err(message, cls=LegalityError, notes=(err.note,) + hint)

    def _binary(self, op, a, b, type, dst, guard, mods="", dst_type=None, ops_type=None):
        ty = self._infer(type, a, b, dst)
        self._check_type(op, ty)
        self._arith_mods(op, ty, mods)
        st = ops_type or ty
        sa, sb = self._src(a, st, "a"), self._src(b, st, "b")
        d = self._dst(dst, dst_type or ty)
        self._emit(f"{op}{mods}{ty.ptx}", (d, sa, sb), guard)
        return d

    def add(self, a, b, *, type=None, rnd=None, ftz=False, sat=False, dst=None, guard=None) -> Reg:
        """`add{.rnd}{.ftz}{.sat}.T d, a, b;`"""
        ty = self._infer(type, a, b, dst)
        return self._binary("add", a, b, ty, dst, guard, self._float_mods("add", rnd, ftz, sat))

    def sub(self, a, b, *, type=None, rnd=None, ftz=False, sat=False, dst=None, guard=None) -> Reg:
        """`sub{.rnd}{.ftz}{.sat}.T d, a, b;`"""
        ty = self._infer(type, a, b, dst)
        return self._binary("sub", a, b, ty, dst, guard, self._float_mods("sub", rnd, ftz, sat))

    def _int_mode(self, op, ty, mode):
        if ty.is_int:
            if mode not in C.MUL_MODES:
                raise _err(f"integer {op}{ty.ptx} needs mode='lo', 'hi' or 'wide'", cls=LegalityError)
            if mode == "wide" and ty.bits == 64:
                raise _err(f"{op}.wide is for 16- and 32-bit integers", cls=LegalityError)
            return "." + mode
        if mode is not None:
            raise _err(f"{op}.{mode} is for integer types", cls=LegalityError)
        return ""

    def mul(self, a, b, *, type=None, mode=None, rnd=None, ftz=False, sat=False, dst=None, guard=None) -> Reg:
        """`mul{.lo|.hi|.wide}.T d, a, b;` (floats: `mul{.rnd}{.ftz}{.sat}`)."""
        ty = self._infer(type, a, b)
        self._check_type("mul", ty)
        m = self._int_mode("mul", ty, mode) + self._float_mods("mul", rnd, ftz, sat)
        dty = _widen(ty) if mode == "wide" else ty
        return self._binary("mul", a, b, ty, dst, guard, m, dst_type=dty)

    def mad(self, a, b, c, *, type=None, mode=None, rnd=None, ftz=False, sat=False, dst=None, guard=None) -> Reg:
        """`mad{.lo|.hi|.wide}.T d, a, b, c;` (floats need a rounding mode: `mad.rn.f32`)."""
        ty = self._infer(type, a, b, c)
        self._check_type("mad", ty)
        m = self._int_mode("mad", ty, mode)
        if sat and ty.is_int and not (ty is s32 and mode == "hi"):
            raise _err("integer mad.sat exists only as mad.hi.sat.s32", cls=LegalityError)
        m += ".sat" if sat and ty.is_int else self._float_mods("mad", rnd, ftz, sat)
        self._arith_mods("mad", ty, m)
        dty = _widen(ty) if mode == "wide" else ty
        sa, sb = self._src(a, ty, "a"), self._src(b, ty, "b")
        sc = self._src(c, dty, "c")
        d = self._dst(dst, dty)
        self._emit(f"mad{m}{ty.ptx}", (d, sa, sb, sc), guard)
        return d

    def fma(self, a, b, c, *, type=None, rnd="rn", ftz=False, sat=False, dst=None, guard=None) -> Reg:
        """`fma.rnd{.ftz}{.sat}.T d, a, b, c;`"""
        ty = self._infer(type, a, b, c)
        self._check_type("fma", ty)
        m = self._float_mods("fma", rnd, ftz, sat)
        self._arith_mods("fma", ty, m)
        sa, sb, sc = self._src(a, ty, "a"), self._src(b, ty, "b"), self._src(c, ty, "c")
        d = self._dst(dst, ty)
        self._emit(f"fma{m}{ty.ptx}", (d, sa, sb, sc), guard)
        return d

    def div(self, a, b, *, type=None, rnd=None, approx=False, full=False, ftz=False, dst=None, guard=None) -> Reg:
        """`div.T` for integers; floats need `.approx`, `.full` (f32) or a rounding mode."""
        ty = self._infer(type, a, b)
        self._check_type("div", ty)
        m = ""
        if ty.is_float:
            if sum(bool(x) for x in (rnd, approx, full)) != 1:
                raise _err(f"div{ty.ptx} needs exactly one of rnd=..., approx=True or full=True"
                           if ty is f32 else "div.f64 needs a rounding mode rnd=...", cls=LegalityError)
            if (approx or full) and ty is not f32:
                raise _err("div.approx/div.full are .f32 only", cls=LegalityError)
            m = ".approx" if approx else ".full" if full else ""
            m += self._float_mods("div", rnd, ftz, False)
        elif rnd or approx or full or ftz:
            raise _err("integer div takes no rounding/approx/ftz", cls=LegalityError)
        return self._binary("div", a, b, ty, dst, guard, m)

    def rem(self, a, b, *, type=None, dst=None, guard=None) -> Reg:
        """`rem.T d, a, b;`"""
        return self._binary("rem", a, b, type, dst, guard)

    def min(self, a, b, *, type=None, ftz=False, dst=None, guard=None) -> Reg:
        """`min{.ftz}.T d, a, b;`"""
        ty = self._infer(type, a, b)
        return self._binary("min", a, b, ty, dst, guard, self._float_mods("min", None, ftz, False))

    def max(self, a, b, *, type=None, ftz=False, dst=None, guard=None) -> Reg:
        """`max{.ftz}.T d, a, b;`"""
        ty = self._infer(type, a, b)
        return self._binary("max", a, b, ty, dst, guard, self._float_mods("max", None, ftz, False))

    def _unary(self, op, a, type, dst, guard, mods="", dst_type=None):
        ty = self._infer(type, a, dst)
        self._check_type(op, ty)
        self._arith_mods(op, ty, mods)
        sa = self._src(a, ty, "a")
        d = self._dst(dst, dst_type or ty)
        self._emit(f"{op}{mods}{ty.ptx}", (d, sa), guard)
        return d

    def abs(self, a, *, type=None, ftz=False, dst=None, guard=None) -> Reg:
        """`abs{.ftz}.T d, a;`"""
        ty = self._infer(type, a)
        return self._unary("abs", a, ty, dst, guard, self._float_mods("abs", None, ftz, False))

    def neg(self, a, *, type=None, ftz=False, dst=None, guard=None) -> Reg:
        """`neg{.ftz}.T d, a;`"""
        ty = self._infer(type, a)
        return self._unary("neg", a, ty, dst, guard, self._float_mods("neg", None, ftz, False))

    def rcp(self, a, *, type=None, rnd=None, approx=False, ftz=False, dst=None, guard=None) -> Reg:
        """`rcp.approx{.ftz}.f32` or `rcp.rnd.f32/.f64`."""
        ty = self._infer(type, a)
        if bool(rnd) == bool(approx):
            raise _err("rcp needs exactly one of rnd=... or approx=True", cls=LegalityError)
        if approx and ty is f64 and not ftz:
            raise _err("rcp.approx.f64 exists only as rcp.approx.ftz.f64", cls=LegalityError,
                       notes=("pass ftz=True",))
        m = ".approx" if approx else ""
        return self._unary("rcp", a, ty, dst, guard, m + self._float_mods("rcp", rnd, ftz, False))

    def sqrt(self, a, *, type=None, rnd=None, approx=False, ftz=False, dst=None, guard=None) -> Reg:
        """`sqrt.approx{.ftz}.f32` or `sqrt.rnd.f32/.f64`."""
        ty = self._infer(type, a)
        if bool(rnd) == bool(approx):
            raise _err("sqrt needs exactly one of rnd=... or approx=True", cls=LegalityError)
        if approx and ty is not f32:
            raise _err(f"sqrt.approx is .f32 only; use a rounding mode for {ty.ptx}", cls=LegalityError)
        m = ".approx" if approx else ""
        return self._unary("sqrt", a, ty, dst, guard, m + self._float_mods("sqrt", rnd, ftz, False))

    def ex2(self, a, *, type=None, ftz=False, dst=None, guard=None) -> Reg:
        """`ex2.approx{.ftz}.T d, a;`"""
        ty = self._infer(type, a)
        err = C.ex2_modifier_error(ty.name, True, ftz) if ty.is_float or ty.kind == "packed" else None
        if err is not None:
            raise _err(err[0], cls=LegalityError, notes=(f"write {err[1]}: pass ftz={'.ftz' in err[1]}",))
        return self._unary("ex2", a, ty, dst, guard, ".approx" + (".ftz" if ftz else ""))

    # ------------------------------------------------------------------ logic and bits
    def and_(self, a, b, *, type=None, dst=None, guard=None) -> Reg:
        """`and.bN d, a, b;` (integer registers are used through their .bN view)."""
        t0 = self._infer(type, a, b, dst)
        return self._binary("and", a, b, self._bits_view(t0), dst, guard, dst_type=t0)

    def or_(self, a, b, *, type=None, dst=None, guard=None) -> Reg:
        """`or.bN d, a, b;`"""
        t0 = self._infer(type, a, b, dst)
        return self._binary("or", a, b, self._bits_view(t0), dst, guard, dst_type=t0)

    def xor(self, a, b, *, type=None, dst=None, guard=None) -> Reg:
        """`xor.bN d, a, b;`"""
        t0 = self._infer(type, a, b, dst)
        return self._binary("xor", a, b, self._bits_view(t0), dst, guard, dst_type=t0)

    def not_(self, a, *, type=None, dst=None, guard=None) -> Reg:
        """`not.bN d, a;`"""
        t0 = self._infer(type, a, dst)
        return self._unary("not", a, self._bits_view(t0), dst, guard, dst_type=t0)

    def _bits_view(self, ty: Type) -> Type:
        return {16: b16, 32: b32, 64: b64}.get(ty.bits, ty) if ty.kind in ("u", "s") else ty

    def shl(self, a, n, *, type=None, dst=None, guard=None) -> Reg:
        """`shl.bN d, a, n;` (n is .u32)."""
        t0 = self._infer(type, a)
        ty = self._bits_view(t0)
        self._check_type("shl", ty)
        sa, sn = self._src(a, ty, "a"), self._src(n, u32, "shift")
        d = self._dst(dst, t0)
        self._emit(f"shl{ty.ptx}", (d, sa, sn), guard)
        return d

    def shr(self, a, n, *, type=None, dst=None, guard=None) -> Reg:
        """`shr.T d, a, n;` (.sN shifts arithmetically; n is .u32)."""
        ty = self._infer(type, a)
        self._check_type("shr", ty)
        sa, sn = self._src(a, ty, "a"), self._src(n, u32, "shift")
        d = self._dst(dst, ty)
        self._emit(f"shr{ty.ptx}", (d, sa, sn), guard)
        return d

    def bfe(self, a, pos, length, *, type=None, dst=None, guard=None) -> Reg:
        """`bfe.T d, a, pos, len;` extracts a bit field."""
        ty = self._infer(type, a)
        self._check_type("bfe", ty)
        self._bit_field("bfe", 2, pos, length)
        ops = (self._src(a, ty, "a"), self._src(pos, u32, "pos"), self._src(length, u32, "len"))
        d = self._dst(dst, ty)
        self._emit(f"bfe{ty.ptx}", (d,) + ops, guard)
        return d

    def bfi(self, f, b, pos, length, *, type=None, dst=None, guard=None) -> Reg:
        """`bfi.bN d, f, b, pos, len;` inserts field f into b."""
        ty = self._bits_view(self._infer(type, f, b))
        self._check_type("bfi", ty)
        self._bit_field("bfi", 3, pos, length)
        ops = (self._src(f, ty, "f"), self._src(b, ty, "b"), self._src(pos, u32, "pos"),
               self._src(length, u32, "len"))
        d = self._dst(dst, ty)
        self._emit(f"bfi{ty.ptx}", (d,) + ops, guard)
        return d

    @staticmethod
    def _bit_field(base: str, k: int, pos, length):
        """bfe's and bfi's position and length (operands k and k + 1) as immediates: 0..255 (isa_core)."""
        for i, x in enumerate((pos, length)):
            if isinstance(x, int) and not isinstance(x, bool):
                bad = C.imm_value_error(base, (), k + i, k + 2, x)
                if bad is not None:
                    raise _err(bad[0], "PTX-E-OPERANDS", (bad[1],), LegalityError)

    def prmt(self, a, b, c, *, mode: Optional[str] = None, dst=None, guard=None) -> Reg:
        """`prmt.b32{.mode} d, a, b, c;` permutes bytes."""
        if mode is not None and mode not in C.PRMT_MODES:
            raise _err(f"prmt mode must be one of {', '.join(C.PRMT_MODES)}", cls=LegalityError)
        ops = (self._src(a, b32, "a"), self._src(b, b32, "b"), self._src(c, b32, "c"))
        d = self._dst(dst, b32)
        self._emit(f"prmt.b32{'.' + mode if mode else ''}", (d,) + ops, guard)
        return d

    def popc(self, a, *, type=None, dst=None, guard=None) -> Reg:
        """`popc.bN d, a;` (d is .u32)."""
        ty = self._bits_view(self._infer(type, a))
        return self._unary("popc", a, ty, dst, guard, dst_type=u32)

    def clz(self, a, *, type=None, dst=None, guard=None) -> Reg:
        """`clz.bN d, a;` (d is .u32)."""
        ty = self._bits_view(self._infer(type, a))
        return self._unary("clz", a, ty, dst, guard, dst_type=u32)

    def brev(self, a, *, type=None, dst=None, guard=None) -> Reg:
        """`brev.bN d, a;`"""
        ty = self._bits_view(self._infer(type, a))
        return self._unary("brev", a, ty, dst, guard)

    # ------------------------------------------------------------------ comparison and selection
    def setp(self, cmp: str, a, b, *, type=None, ftz=False, bool_op: Optional[str] = None, c=None,
             dst=None, dst_neg: Optional[Reg] = None, guard=None) -> Reg:
        """`setp.CmpOp{.BoolOp}{.ftz}.T p{|q}, a, b{, {!}c};` returns p."""
        ty = self._infer(type, a, b)
        self._check_type("setp", ty)
        ops_ok = C.cmp_ops_for(ty)
        if cmp not in ops_ok:
            raise _err(f"setp.{cmp} is not a comparison for .{ty.name}", cls=LegalityError,
                       notes=("legal: " + ", ".join(ops_ok),))
        mods = "." + cmp
        if (bool_op is None) != (c is None):
            raise _err("setp: bool_op and c go together (setp.lt.and.s32 p, a, b, c)")
        if bool_op is not None:
            if bool_op not in C.BOOL_OPS:
                raise _err(f"setp bool_op must be and/or/xor, not {bool_op!r}", cls=LegalityError)
            mods += "." + bool_op
        if ftz:
            if ty.name not in C.COMPARE_FTZ:
                raise _err("setp.ftz is for .f32, .f16 and .f16x2", cls=LegalityError)
            mods += ".ftz"
        sa, sb = self._src(a, ty, "a"), self._src(b, ty, "b")
        d = self._dst(dst, pred)
        first = d
        sep = None
        if dst_neg is not None:
            q = self._dst(dst_neg, pred)
            first = Pair(d, q)
        ops = (first, sa, sb)
        if c is not None:
            ops += (self._pred_src(c),)
        self._emit(f"setp{mods}{ty.ptx}", ops, guard, sep)
        return d

    def _pred_src(self, c):
        g = _as_guard(c)
        self._own(g.reg)
        return g

    def selp(self, a, b, c, *, type=None, dst=None, guard=None) -> Reg:
        """`selp.T d, a, b, c;` d = c ? a : b."""
        ty = self._infer(type, a, b, dst)
        oty = C.storage_type(ty)  # no selp.f16: select the bits
        self._check_type("selp", oty)
        ops = (self._src(a, ty, "a"), self._src(b, ty, "b"), self._pred_src(c))
        d = self._dst(dst, ty)
        self._emit(f"selp{oty.ptx}", (d,) + ops, guard)
        return d

    def set(self, cmp: str, a, b, *, dtype=u32, type=None, ftz=False, dst=None, guard=None) -> Reg:
        """`set.CmpOp{.ftz}.dtype.stype d, a, b;` (d = all ones / 1.0 when true)."""
        ty = self._infer(type, a, b)
        dty = self._type(dtype)
        err = C.set_types_error(dty.name, ty.name)
        if err is not None:
            raise _err(err[0], cls=LegalityError, notes=(err[1],))
        if cmp not in C.cmp_ops_for(ty):
            raise _err(f"set.{cmp} is not a comparison for .{ty.name}", cls=LegalityError)
        if ftz and ty.name not in C.COMPARE_FTZ:
            raise _err("set.ftz is for .f32, .f16 and .f16x2 sources", cls=LegalityError)
        sa, sb = self._src(a, ty, "a"), self._src(b, ty, "b")
        d = self._dst(dst, dty)
        self._emit(f"set.{cmp}{'.ftz' if ftz else ''}{dty.ptx}{ty.ptx}", (d, sa, sb), guard)
        return d

    # ------------------------------------------------------------------ conversion
    def cvt(self, a, dtype, atype=None, *, rnd=None, ftz=False, sat=False, relu=False, satfinite=False,
            b=None, dst=None, guard=None) -> Reg:
        """`cvt{.rnd}{.ftz}{.sat}.dtype.atype d, a;` and the packed forms (`cvt.rn.f16x2.f32 d, a, b;`).

        For packed destinations made from two .f32 values (f16x2, bf16x2, e4m3x2, e5m2x2) `a` goes to
        the upper half and `b` to the lower half, as in the PTX ISA. Packed-to-packed forms
        (`cvt.rn.f16x2.e4m3x2 d, a;`, `cvt.rn.satfinite.e4m3x2.f16x2 d, a;`) take one source.
        """
        dty = self._type(dtype)
        aty = self._infer(atype, a)
        if dty.kind == "packed" or aty.kind == "packed":
            return self._cvt_packed(a, b, dty, aty, rnd, ftz, sat, relu, satfinite, dst, guard)
        if b is not None:
            raise _err("only packed conversions take a second source")
        name = f"cvt{dty.ptx}{aty.ptx}"
        bad = C.cvt_bit_type(dty, aty)
        if bad is not None:
            raise _err(f"{name} does not exist: cvt converts numbers, and .{bad.name} is a bit type",
                       cls=LegalityError, notes=(f"write .u{bad.bits} or .s{bad.bits}",))
        if "fp8" in (dty.kind, aty.kind):
            raise _err(f"{name} does not exist: 8-bit floats convert in pairs (.e4m3x2/.e5m2x2)",
                       cls=LegalityError)
        if dty is tf32 and aty is not f32:
            raise _err(f"{name} does not exist: .tf32 is converted to from .f32 only", cls=LegalityError)
        if aty is tf32:
            raise _err(f"{name} does not exist: a .tf32 value is already a valid .f32 bit pattern",
                       cls=LegalityError, notes=("use it as .b32/.f32 directly (mov.b32)",))
        # ptxas: "Feature 'cvt with .f16.bf16' requires .target sm_90"; bf16 <-> f32 is sm_80
        if bf16 in (dty, aty) and not (dty is f32 or aty is f32):
            err = C.cvt_form_error(dty, aty)
            if err is not None:
                raise _err(err[0], cls=LegalityError, notes=(err[1],))
            self._need("sm_90", (7, 8), name)
        req, allowed = C.cvt_rounding(dty, aty)
        mods = ""
        if rnd is not None:
            if rnd not in allowed:
                raise _err(f"{name}: rounding {rnd!r} not allowed", cls=LegalityError,
                           notes=("allowed: " + (", ".join(allowed) or "none"),))
            if dty is tf32 and rnd != "rna":
                self._need("sm_90", (7, 8), f"cvt.{rnd}.tf32.f32")
            mods += "." + rnd
        elif req:
            raise _err(f"{name} needs a rounding mode", cls=LegalityError,
                       notes=("allowed: " + ", ".join(allowed),))
        err = C.cvt_modifier_error(dty, aty, ftz, sat)
        if err is not None:
            raise _err(err[0], cls=LegalityError, notes=(err[1],))
        if ftz:
            if aty is bf16:
                self._need("sm_90", (7, 8), f"cvt.ftz{dty.ptx}.bf16")
            mods += ".ftz"
        if sat:
            if satfinite:
                raise _err("cvt: .sat and .satfinite cannot be combined", cls=LegalityError)
            mods += ".sat"
        if relu:
            # .tf32 takes .relu with .rn/.rz only ("'.relu' cannot be combined with modifier '.rna'")
            if aty is not f32 or not (dty in (f16, bf16) or dty is tf32 and rnd in ("rn", "rz")):
                raise _err("cvt.relu is for .f16/.bf16 (and .rn/.rz .tf32) destinations from .f32",
                           cls=LegalityError)
            mods += ".relu"
        if satfinite:
            if dty not in (f16, bf16, tf32) or aty is not f32:
                raise _err("cvt.satfinite is for .f16/.bf16/.tf32 destinations from .f32", cls=LegalityError)
            if dty is tf32 and rnd != "rna":
                self._need("sm_100", (8, 6), f"cvt.{rnd}.satfinite.tf32.f32")
            self._need("sm_50", (8, 1), f"cvt.satfinite{dty.ptx}.f32")
            mods += ".satfinite"
        sa = self._src(a, aty, "a", wider_ok=aty.kind in ("u", "s", "b"))
        d = self._dst(dst, dty if dty.reg_decl else u32, wider_ok=True) if dst is None else self._dst(
            dst, dty, wider_ok=True)
        self._emit(f"cvt{mods}{dty.ptx}{aty.ptx}", (d, sa), guard)
        return d

    def _cvt_packed(self, a, b, dty, aty, rnd, ftz, sat, relu, satfinite, dst, guard):
        fp8 = dty.name in ("e4m3x2", "e5m2x2") or aty.name in ("e4m3x2", "e5m2x2")
        if aty is f32:
            if b is None:
                raise _err(f"cvt to .{dty.name} takes two sources: cvt(a, '{dty.name}', 'f32', b=...)")
            if dty in (f16x2, bf16x2):
                self._need("sm_80", (7, 0), f"cvt{dty.ptx}.f32")
                rounds = ("rn", "rz")
            elif fp8:
                rounds = ("rn",)
            else:
                raise _err(f"cvt{dty.ptx}.f32 does not exist", cls=LegalityError)
        elif dty is f16x2 and aty.name in ("e4m3x2", "e5m2x2"):
            rounds = ("rn",)
        elif dty.name in ("e4m3x2", "e5m2x2") and aty is f16x2:
            rounds = ("rn",)
        else:
            raise _err(f"cvt{dty.ptx}{aty.ptx} does not exist", cls=LegalityError,
                       notes=("packed forms: f16x2/bf16x2/e4m3x2/e5m2x2 from two .f32, f16x2 from "
                              "e4m3x2/e5m2x2, e4m3x2/e5m2x2 from f16x2",))
        if aty is not f32 and b is not None:
            raise _err(f"cvt{dty.ptx}{aty.ptx} takes one source")
        if fp8:
            # sm_89 has them from PTX 8.1, sm_90 from 7.8 (ptxas: "... on sm_89 requires PTX ISA 8.1")
            self._need("sm_89", (8, 1) if self.target.sm == 89 else (7, 8), f"cvt{dty.ptx}{aty.ptx}")
        if rnd not in rounds:
            raise _err(f"cvt{dty.ptx}{aty.ptx} needs rnd=" + " or ".join(repr(r) for r in rounds),
                       cls=LegalityError)
        if ftz or sat:
            raise _err(f"cvt{dty.ptx}{aty.ptx} takes no .ftz/.sat", cls=LegalityError)
        if dty.name in ("e4m3x2", "e5m2x2"):
            if not satfinite:
                raise _err(f"cvt.rn{dty.ptx}{aty.ptx} requires .satfinite", cls=LegalityError,
                           notes=("pass satfinite=True",))
        elif satfinite:
            if aty is not f32:
                raise _err(f"cvt{dty.ptx}{aty.ptx} takes no .satfinite", cls=LegalityError)
            self._need("sm_80", (8, 1), f"cvt.satfinite{dty.ptx}.f32")
        mods = f".{rnd}" + (".relu" if relu else "") + (".satfinite" if satfinite else "")
        err = C.packed_cvt_error(dty.name, aty.name, mods.split(".")[1:])
        if err is not None:
            raise _err(err.message, cls=LegalityError, notes=(err.note,))
        if aty is f32:
            ops = (self._src(a, f32, "a"), self._src(b, f32, "b"))
        else:
            ops = (self._src(a, aty, "a", imm=False),)
        d = self._dst(dst, dty)
        self._emit(f"cvt{mods}{dty.ptx}{aty.ptx}", (d,) + ops, guard)
        return d

    # ------------------------------------------------------------------ warp-level
    def shfl_sync(self, a, b, c, mode: str, *, membermask=0xFFFFFFFF, dst=None, pred_out: bool = False,
                  guard=None):
        """`shfl.sync.mode.b32 d{|p}, a, b, c, membermask;` returns d (or (d, p) with pred_out)."""
        if mode not in C.SHFL_MODES:
            raise _err(f"shfl.sync mode must be one of {', '.join(C.SHFL_MODES)}, not {mode!r}", cls=LegalityError)
        ops = (self._src(a, b32, "a"), self._src(b, b32, "b"), self._src(c, b32, "c"),
               self._membermask(membermask))
        d = self._dst(dst, a.type if isinstance(a, Reg) else b32)
        first = d
        p = None
        if pred_out:
            p = self.reg(pred)
            first = Pair(d, p)
        self._emit(f"shfl.sync.{mode}.b32", (first,) + ops, guard)
        return (d, p) if pred_out else d

    def vote_sync(self, mode: str, a, *, membermask=0xFFFFFFFF, dst=None, guard=None) -> Reg:
        """`vote.sync.mode.pred d, {!}a, membermask;` (ballot: `vote.sync.ballot.b32`)."""
        if mode not in C.VOTE_MODES:
            raise _err(f"vote.sync mode must be one of {', '.join(C.VOTE_MODES)}", cls=LegalityError)
        sa = self._pred_src(a)
        mm = self._membermask(membermask)
        ty = b32 if mode == "ballot" else pred
        d = self._dst(dst, ty)
        self._emit(f"vote.sync.{mode}{ty.ptx}", (d, sa, mm), guard)
        return d

    def match_sync(self, mode: str, a, *, membermask=0xFFFFFFFF, type=None, dst=None, guard=None):
        """`match.any.sync.bN d, a, mm;` / `match.all.sync.bN d|p, a, mm;` (all returns (d, p))."""
        self._need("sm_70", (6, 0), "match.sync")
        ty = self._bits_view(self._infer(type, a))
        if ty not in (b32, b64) or mode not in ("any", "all"):
            raise _err("match.sync is match.any/all on .b32/.b64", cls=LegalityError)
        sa, mm = self._src(a, ty, "a"), self._membermask(membermask)
        d = self._dst(dst, b32)
        if mode == "all":
            p = self.reg(pred)
            self._emit(f"match.all.sync{ty.ptx}", (Pair(d, p), sa, mm), guard)
            return d, p
        self._emit(f"match.any.sync{ty.ptx}", (d, sa, mm), guard)
        return d

    # ------------------------------------------------------------------ atomics
    def _atom_mods(self, what, op, ty, sem, scope, space):
        if op not in C.ATOM_OPS:
            raise _err(f"{what} op must be one of {', '.join(C.ATOM_OPS)}", cls=LegalityError)
        if ty not in C.ATOM_OPS[op]:
            raise _err(f"{what}.{op} has no .{ty.name} form", cls=LegalityError,
                       notes=(f"{what}.{op} takes " + ", ".join("." + t.name for t in C.ATOM_OPS[op]),))
        if ty in (bf16, bf16x2):
            self._need(*C.ATOM_BF16_NEEDS, f"{what}.{op}{ty.ptx}")
        elif ty.bits == 128:
            self._need(*C.ATOM_B128_NEEDS, f"{what}.{op}{ty.ptx}")
        m = ""
        if sem is not None:
            sems = C.RED_SEMS if what == "red" else C.MEM_SEMS
            if sem not in sems:
                raise _err(f"{what}: semantic must be one of {', '.join(sems)}, not {sem!r}", cls=LegalityError)
            m += "." + sem
        if scope is not None:
            m += self._scope(scope, what)
        if space not in ("global", "shared", "shared::cta", "shared::cluster", "generic"):
            raise _err(f"{what}: space must be global, shared(::cta|::cluster) or generic")
        if space == "shared::cluster":
            self._need("sm_90", (7, 8), f"{what}.shared::cluster")
        if space != "generic":
            m += "." + space
        # ptxas: "'.noftz' modifier required for instruction 'atom' with type '.f16'"
        noftz = ".noftz" if op == "add" and ty in (f16, f16x2, bf16, bf16x2) else ""
        return m + "." + op + noftz

    def _atom_type(self, op, type, *ops):
        """(instruction type, register type): bit ops are typed .bN, and an integer register given to
        them is used by its bits (as and/or/xor do), keeping its own type for the result."""
        t0 = self._infer(type, *ops)
        if type is None and op in C.BIT_ATOM_OPS:
            return self._bits_view(t0), t0
        return t0, t0

    def atom(self, op: str, addr, b, c=None, *, type=None, sem=None, scope=None, space="global", dst=None,
             guard=None) -> Reg:
        """`atom{.sem}{.scope}{.space}.op.T d, [a], b{, c};` returns the old value."""
        ty, t0 = self._atom_type(op, type, b, c, dst)
        m = self._atom_mods("atom", op, ty, sem, scope, space)
        if (op == "cas") != (c is not None):
            raise _err("atom.cas takes a compare value b and a new value c; other ops take one value")
        a = self._addr(addr, space=space)
        ops = (a, self._src(b, ty, "b")) + ((self._src(c, ty, "c"),) if c is not None else ())
        d = self._dst(dst, t0)
        self._emit(f"atom{m}{ty.ptx}", (d,) + ops, guard)
        return d

    def red(self, op: str, addr, b, *, type=None, sem=None, scope=None, space="global", guard=None):
        """`red{.sem}{.scope}{.space}.op.T [a], b;`"""
        if op in ("cas", "exch"):
            raise _err(f"red has no .{op}; use atom", cls=LegalityError)
        ty, _ = self._atom_type(op, type, b)
        m = self._atom_mods("red", op, ty, sem, scope, space)
        self._emit(f"red{m}{ty.ptx}", (self._addr(addr, space=space), self._src(b, ty, "b")), guard)

    # ------------------------------------------------------------------ barriers and fences
    def bar_sync(self, barrier=0, count=None, *, guard=None):
        """`bar.sync a{, b};` (barrier 0..15; count a multiple of 32)."""
        self._bar("bar.sync", barrier, count, guard)

    def barrier_sync(self, barrier=0, count=None, *, aligned: bool = True, guard=None):
        """`barrier.sync{.aligned} a{, b};`"""
        self._bar("barrier.sync.aligned" if aligned else "barrier.sync", barrier, count, guard)

    def bar_arrive(self, barrier, count, *, guard=None):
        """`bar.arrive a, b;` (a count is required)."""
        if count is None:
            raise _err("bar.arrive needs a thread count")
        self._bar("bar.arrive", barrier, count, guard)

    def barrier_arrive(self, barrier, count, *, aligned: bool = True, guard=None):
        """`barrier.arrive{.aligned} a, b;`"""
        if count is None:
            raise _err("barrier.arrive needs a thread count")
        self._bar("barrier.arrive.aligned" if aligned else "barrier.arrive", barrier, count, guard)

    def bar_warp_sync(self, membermask=0xFFFFFFFF, *, guard=None):
        """`bar.warp.sync membermask;`: the warp's threads named in membermask meet here, and their memory
        accesses before it are ordered before those after it (e.g. before one lane arrives for the warp)."""
        if isinstance(membermask, int) and not isinstance(membermask, bool) and not 0 < membermask <= 0xFFFFFFFF:
            raise _err(f"bar.warp.sync membermask must be a nonzero 32-bit lane mask, not {membermask:#x}",
                       cls=LegalityError)
        self._emit("bar.warp.sync", (self._membermask(membermask),), guard)

    def _bar(self, opcode, barrier, count, guard):
        if isinstance(barrier, int) and not 0 <= barrier <= 15:
            raise _err(f"barrier id must be 0..15, not {barrier}", cls=LegalityError)
        if isinstance(count, int) and (count <= 0 or count % 32):
            raise _err(f"barrier thread count must be a positive multiple of 32, not {count}", cls=LegalityError)
        ops = (self._src(barrier, u32, "barrier"),)
        if count is not None:
            ops += (self._src(count, u32, "count"),)
        self._emit(opcode, ops, guard)

    def membar(self, level: str = "gl", *, guard=None):
        """`membar.{cta,gl,sys};`"""
        if level not in ("cta", "gl", "sys"):
            raise _err("membar level must be cta, gl or sys", cls=LegalityError)
        self._emit(f"membar.{level}", (), guard)

    def fence(self, sem: str = "sc", scope: str = "gpu", *, guard=None):
        """`fence.{sc,acq_rel,acquire,release}.scope;`"""
        if sem not in C.FENCE_SEMS:
            raise _err(f"fence semantic must be one of {', '.join(C.FENCE_SEMS)}", cls=LegalityError)
        if scope not in C.SCOPES:
            raise _err(f"fence scope must be one of {', '.join(C.SCOPES)}", cls=LegalityError)
        self._need("sm_70", (6, 0), "fence")
        if scope == "cluster":
            self._need("sm_90", (7, 8), "fence.*.cluster")
        self._emit(f"fence.{sem}.{scope}", (), guard)

    # ------------------------------------------------------------------ calls
    def call(self, func: "FunctionBuilder", args: Sequence = (), *, uni: bool = False, guard=None):
        """Call a `.func`: declares the param scratch space, stores args, `call (r), f, (a);`, loads results.

        Returns the result register (one return value), a tuple (several), or None.
        """
        if not isinstance(func, FunctionBuilder) or func.fn.is_entry:
            raise _err("call target must be a device function made with module.func()")
        f = func.fn
        if f.module is not self.fn.module:
            raise _err("call target belongs to another module")
        if len(args) != len(f.params):
            raise _err(f"{f.name} takes {len(f.params)} argument(s), {len(args)} given",
                       notes=(f"{f.name}(" + ", ".join(f"{p.name}: .{p.type.name}" for p in f.params) + ")",))
        loc = caller_loc()
        pnames, rnames = [], []
        body = self.fn.body
        body.append(Raw("{", loc))
        for i, (p, a) in enumerate(zip(f.params, args)):
            nm = f"param{i}"
            pnames.append(nm)
            body.append(Raw(f".param {p.type.ptx} {nm};", loc))
            body.append(Instr(f"st.param{p.type.ptx}", (Addr(Sym(nm, "param")), self._src(a, p.type, f"argument {i}")),
                              None, loc))
        outs = []
        for i, r in enumerate(f.rets):
            nm = f"retval{i}"
            rnames.append(nm)
            body.append(Raw(f".param {r.type.ptx} {nm};", loc))
        g = None if guard is None else _as_guard(guard)
        body.append(Instr("call.uni" if uni else "call",
                          (_CallList(rnames), Sym(f.name, "func"), _CallList(pnames)) if rnames else
                          (Sym(f.name, "func"), _CallList(pnames)), g, loc))
        for i, r in enumerate(f.rets):
            d = self.reg(r.type)
            outs.append(d)
            body.append(Instr(f"ld.param{r.type.ptx}", (d, Addr(Sym(rnames[i], "param"))), None, loc))
        body.append(Raw("}", loc))
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else tuple(outs)

    def st_ret(self, ret_index: int, value):
        """`st.param.T [retval], v;` sets a device function's return value."""
        if self.fn.is_entry:
            raise _err("kernels have no return values")
        if not 0 <= ret_index < len(self.fn.rets):
            raise _err(f"{self.fn.name} has {len(self.fn.rets)} return value(s)")
        r = self.fn.rets[ret_index]
        self._emit(f"st.param{r.type.ptx}", (Addr(r.sym), self._src(value, r.type, "return value")))


class _CallList:
    def __init__(self, names):
        self.names = list(names)

    def __str__(self):
        return "(" + ", ".join(self.names) + ")"


# the builder arguments that write the arithmetic modifier words
_ARITH_ARGS = {**{r: f"rnd={r!r}" for r in C.ROUND_F}, "ftz": "ftz=True", "sat": "sat=True", "approx": "approx=True",
               "full": "full=True"}


def _widen(ty: Type) -> Type:
    return {u16: u32, s16: s32, u32: u64, s32: s64}[ty]


class KernelBuilder(FunctionBuilder):
    """Builds one `.entry` kernel; adds the kernel-only performance directives."""

    def _directives(self, **kw):
        fn = self.fn
        threads = {}                                     # "maxntid" / "reqntid" -> threads of the CTA
        for key in ("maxntid", "reqntid", "reqnctapercluster"):
            v = kw[key]
            if v is None:
                continue
            dims = (v,) if isinstance(v, int) else tuple(v)
            if not 1 <= len(dims) <= 3 or not all(isinstance(x, int) and x > 0 for x in dims):
                raise _err(f".{key} takes 1 to 3 positive ints, not {v!r}")
            for x in dims:  # read as 32 bits (legality.u32_field)
                bad = u32_field_error(x, f".{key}")
                if bad is not None:
                    raise _err(bad[0], notes=(bad[1],))
            if key in ("maxntid", "reqntid"):
                threads[key] = math.prod(dims)
                if threads[key] > 1024:
                    raise _err(f".{key} {dims} is {threads[key]} threads; a CTA has at most 1024")
            else:
                self._need("sm_90", (7, 8), ".reqnctapercluster")
            fn.directives.append(f".{key} " + ", ".join(str(x) for x in dims))
        if kw["maxntid"] is not None and kw["reqntid"] is not None:
            raise _err(".maxntid and .reqntid cannot both be given")
        for key in ("minnctapersm", "maxnreg", "maxclusterrank"):
            v = kw[key]
            if v is None:
                continue
            if not isinstance(v, int) or v <= 0:
                raise _err(f".{key} takes a positive int, not {v!r}")
            bad = u32_field_error(v, f".{key}")  # read as 32 bits (legality.u32_field)
            if bad is not None:
                raise _err(bad[0], notes=(bad[1],))
            if key == "maxnreg" and not 24 <= v <= 255:
                raise _err(f".maxnreg must be within 24..255, not {v}")
            if key == "maxclusterrank":
                self._need("sm_90", (7, 8), ".maxclusterrank")
            fn.directives.append(f".{key} {v}")
        if kw["reqntid"] is not None and kw["maxnreg"] is not None and self.target.sm >= REGISTER_RULE_MIN_SM:
            # ptxas takes it, but the launch is refused if ptxas uses more registers than a CTA of that size
            # can hold (ptxgen.target); refused here as .reqntid above 1024 is
            why = cta_register_limit(threads["reqntid"], kw["maxnreg"])
            if why is not None:
                raise _err(f"{why}; .maxnreg {kw['maxnreg']} lets ptxas use more",
                           notes=(f"write maxnreg={max_regs_for_threads(threads['reqntid'])}",))
        if kw["reqnctapercluster"] is not None and kw["maxclusterrank"] is not None:
            # ptxas: "Conflicting directives: .reqnctapercluster and .maxclusterrank cannot both be specified"
            raise _err(".reqnctapercluster and .maxclusterrank cannot both be given")
        if kw["explicitcluster"]:
            self._need("sm_90", (7, 8), ".explicitcluster")
            fn.directives.append(".explicitcluster")
