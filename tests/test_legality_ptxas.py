"""ptxas as the oracle of ptxgen.legality: every legal form assembles, every near miss is rejected by both.

Every spelling the legality grammar enumerates is built (through its builder method where one exists,
else from its operand table) in each operand variant (wgmma: A from a descriptor and from registers;
with and without optional operands) and assembled for its minimum target at its minimum PTX version.
Near misses change one thing of a legal form: a field token (N, K, M, a type, a layout, a space ...),
a dropped modifier, the operand list (one operand fewer or more, a vector one register short, a .b16
register where another type is wanted, an immediate out of range), the target (the nearest ptxas target
below and above that lacks the form) or the PTX version (one below the minimum). Each must be rejected
by legality.check, with the matching diagnostic code, and by ptxas.

Operand probes replace one operand of a legal form by another kind or type of operand (an immediate
for a register, a register for an immediate, the sink `_`, a bare register for an address, a register or
a vector of registers of another type, a whole vector register `.reg .v2 .b32 %qv2_b32` for a vector, a register or a
tensor's coordinates) without presuming the verdict (with -arch=compute_XY, which checks without generating code;
tests/test_lint_whole_vregs.py keeps what ptxas then crashes on generating code): legality.check must accept exactly
the probes ptxas accepts. They found what the table had wrong in both directions: immediates ptxas
takes (cache policies, wgmma descriptors, mbarrier states, mapa/getctarank addresses), bare registers it
takes for some bulk-copy addresses, the register types of the tensor-core fragments (FRAGMENT_REGS),
and what it refuses (an integer literal for st.async .f32, .f64 registers in .b64 operands, .f16 ones in
.b16 masks, cp.async's ignore-src predicate before PTX ISA 7.5, bulk sizes that are not multiples of 16).

Forms are batched into one kernel per (target, version). ptxas names the line of each error, so a batch
is re-run with its rejected lines blanked until it assembles; a failure that names no line is bisected.
ptxas runs with the virtual target (-arch=compute_XY): it checks the PTX without generating code, which
keeps the ~4,300 wgmma instructions cheap. A run with real targets (PTXGEN_LEGALITY_ARCH=sm, ~5 minutes)
gave the same verdict for every item.

Counts of the last run (ptxas 13.0.88; printed by test_counts with -s): 10082 legal spellings, 14242 legal
instructions assembled (3699 made by builder methods), 138258 near misses, all rejected by both, no
disagreements; 22125 operand probes (5994 of them accepted by ptxas), each verdict shared by legality;
1243 ptxas runs.
"""
from __future__ import annotations

import os
import re
import shutil
import sys
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple

import pytest

if shutil.which("ptxas") is None:
    pytest.skip("needs ptxas (CUDA toolkit) on PATH", allow_module_level=True)

import ptxgen as pg
from ptxgen import legality as L
from ptxgen.ir import Instr, Raw, Reg, RegArray
from ptxgen.ops.mma import mma_sp_opcode, mma_sync_opcode
from ptxgen.ops.operands import operand_infos
from ptxgen.target import Target, version_str
from ptxgen.types import b16, b32, b64, f32, f64, get_type, pred, u32, u64

pytestmark = pytest.mark.ptxas

# ptxas 13.0 targets, lowest first ('a' before 'f': sm_100a takes PTX 8.6, sm_100f needs 8.8)
TARGETS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_100f", "sm_103a",
           "sm_110a", "sm_120", "sm_120a", "sm_120f"]
VERSIONS = [(6, 3), (6, 4), (6, 5), (7, 0), (7, 1), (7, 2), (7, 3), (7, 4), (7, 5), (7, 6), (7, 7), (7, 8), (8, 0),
            (8, 1), (8, 2), (8, 3), (8, 4), (8, 5), (8, 6), (8, 7), (8, 8), (9, 0)]


def _min_target(needs: Sequence[L.Need]) -> Optional[str]:
    for t in TARGETS:
        tg = Target.parse(t)
        if all(n.met_by(tg) for n in needs):
            return t
    return None


def _lacking_targets(needs: Sequence[L.Need], chosen: str) -> List[str]:
    """The nearest ptxas targets below and above `chosen` that do not meet `needs`."""
    i = TARGETS.index(chosen)
    out = []
    for t in reversed(TARGETS[:i]):
        if not all(n.met_by(Target.parse(t)) for n in needs):
            out.append(t)
            break
    for t in TARGETS[i + 1:]:
        if not all(n.met_by(Target.parse(t)) for n in needs):
            out.append(t)
            break
    return out


# ------------------------------------------------------------------------------------------- items

@dataclass
class Item:
    text: str                      # the instruction line
    opcode: str
    target: str
    version: Tuple[int, int]
    legal: bool
    what: str                      # the form, or what the near miss changed
    infos: Optional[list] = None   # operand infos (legality is asked with them)
    built: bool = False            # made by a builder method
    expect: Tuple[str, ...] = ()   # the diagnostic codes legality may answer a near miss with


@dataclass(frozen=True)
class _Named:
    """A register the builder does not declare, by its name."""
    name: str


class Pool:
    """Registers of one kernel, reused by every instruction in it."""

    def __init__(self, k):
        self.k = k
        self._vecs: Dict[tuple, RegArray] = {}
        self._regs: Dict[str, object] = {}

    def vec(self, n, ty):
        key = (n, ty.name)
        if key not in self._vecs:
            if ty.reg_decl is None:     # (.b8, the fp8 multimem vectors': ptxas declares them, the builder does not)
                name = f"%v{n}_{ty.name}_"
                self.k.fn.body.insert(0, Raw(f".reg .{ty.name} {name}<{n}>;", None))
                self._vecs[key] = [_Named(f"{name}{i}") for i in range(n)]
            else:
                self._vecs[key] = self.k.regs(ty, n, name=f"v{n}_{ty.name}")
        return self._vecs[key]

    def reg(self, ty):
        ty = get_type(ty)
        if ty.name not in self._regs:
            self._regs[ty.name] = self.k.reg(ty, name=f"s_{ty.name}")
        return self._regs[ty.name]

    def addr(self):
        return pg.mem(self.reg(u64))


def _render(sig: L.Signature, pool: Pool, optional: bool) -> Tuple[List[str], list]:
    """Operand text and infos for one operand list, from the table alone."""
    texts, infos = [], []
    for s in sig.slots:
        if s.optional and not optional:
            continue
        # (mma.sp's metadata e as a register: ptxas 13.0 takes no vector there with .e4m3/.e5m2 inputs at sm_100a;
        # tex's offset e, loose, stays a vector)
        if L.VEC in s.kinds and not (s.name == "e" and L.REG in s.kinds and not s.loose):
            regs = pool.vec(s.count, s.type)
            texts.append("{" + ", ".join(r.name for r in regs) + "}")
            # (the registers as declared: the builder's .f16x2 ones are .b32, which ptxas types a vector by)
            decl = tuple(get_type(r.type.reg_decl) if isinstance(r, Reg) else s.type for r in regs)
            infos.append(L.OperandInfo("vec", count=s.count, elems=(s.type,) * s.count,
                                       decl=decl if decl != (s.type,) * s.count else ()))
        elif L.TENSOR in s.kinds:
            cs = pool.vec(s.count, get_type("b32"))
            texts.append(f"[{pool.reg(u64).name}, {{{', '.join(c.name for c in cs)}}}]")
            infos.append(L.OperandInfo("tensor", count=s.count, elems=(get_type("b32"),) * s.count))
        elif L.ADDR in s.kinds:
            texts.append(f"[{pool.reg(u64).name}]")
            infos.append(L.OperandInfo("addr"))
        elif L.SINK in s.kinds and L.REG not in s.kinds:
            texts.append("_")
            infos.append(L.OperandInfo("sink"))
        elif L.REG in s.kinds:
            r = pool.reg(s.type)
            if s.name == "p" and s.role == "dst" and sig.slots[0].name == "d" and L.VEC in sig.slots[0].kinds:
                texts[-1] += "|" + r.name          # tex / tld4 `{d0, ...}|p`: one operand position
            else:
                texts.append(r.name)
            infos.append(L.OperandInfo("reg", r.type))
        else:
            v = 1 if s.values is None or 1 in s.values else _bounds(s.values)[1]
            texts.append(str(v))
            infos.append(L.OperandInfo("imm", value=v))
    return texts, infos


def _tok(f: L.Form, label: str, default=None):
    t = f.fields.get(label)
    return default if t is None else t[1:]


def _build(k, pool: Pool, f: L.Form, sig_index: int, optional: bool):
    """Build one legal form through its builder method; None when no method makes this spelling."""
    r, has = f.rule, f.has
    a = pool.addr
    if r.startswith("mma_") and "kind" in f.fields:
        # (the builder writes .block_scale with every block-scaled kind: not the .e4m3/.e5m2 forms without it)
        sv = _tok(f, "scale_vec")
        kw = dict(atype=_tok(f, "atype"), btype=_tok(f, "btype"), ctype=_tok(f, "ctype"), dtype=_tok(f, "dtype"),
                  kind=_tok(f, "kind")[len("kind::"):], scale_vec=sv[len("scale_vec::"):] if sv else None,
                  stype=_tok(f, "stype"))
        sparse = "sparsity" in f.fields
        shape = f.fields["shape"][1:]
        if (mma_sp_opcode(shape, **kw) if sparse else mma_sync_opcode(shape, **kw)) != f.opcode:
            return None
        if has(".block_scale"):
            kw.update(scale_a=pool.reg(get_type("b32")), scale_b=pool.reg(get_type("b32")))
        regs = L.fragment_regs(f.opcode)
        v = {n: pool.vec(c, t) for n, (c, t) in regs.items()}
        if sparse:
            k.mma_sp(shape, v["d"], v["a"], v["b"], v["c"], pool.reg(get_type("b32")), 0, **kw)
        else:
            k.mma_sync(shape, v["d"], v["a"], v["b"], v["c"], **kw)
    elif r.startswith("mma_sp_"):
        regs = L.fragment_regs(f.opcode)
        v = {n: pool.vec(c, t) for n, (c, t) in regs.items()}
        k.mma_sp(f.fields["shape"][1:], v["d"], v["a"], v["b"], v["c"], pool.reg(get_type("b32")), 0,
                 atype=_tok(f, "atype"), btype=_tok(f, "btype"), ctype=_tok(f, "ctype"), dtype=_tok(f, "dtype"),
                 satfinite=has(".satfinite"), ordered_metadata=has(".sp::ordered_metadata"))
    elif r.startswith("mma_"):
        regs = L.fragment_regs(f.opcode)
        v = {n: pool.vec(c, t) for n, (c, t) in regs.items()}
        k.mma_sync(f.fields["shape"][1:], v["d"], v["a"], v["b"], v["c"], atype=_tok(f, "atype"),
                   btype=_tok(f, "btype"), ctype=_tok(f, "ctype"), dtype=_tok(f, "dtype"),
                   alayout=_tok(f, "alayout"), blayout=_tok(f, "blayout"), satfinite=has(".satfinite"),
                   bitop=_tok(f, "bitop"))
    elif r.startswith("ldmatrix_"):
        fmt = _tok(f, "src_fmt")
        c, t = L.fragment_regs(f.opcode)["d"]
        k.ldmatrix(a(), num=int(f.fields["num"][2:]), trans=has(".trans"), shape=_tok(f, "shape"),
                   type=_tok(f, "type", "b8"), src_fmt=fmt, space=_tok(f, "ss", "generic"), dst=pool.vec(c, t))
    elif r.startswith("stmatrix_"):
        c, t = L.fragment_regs(f.opcode)["r"]
        k.stmatrix(a(), pool.vec(c, t), trans=has(".trans"), shape=_tok(f, "shape"), type=_tok(f, "type"),
                   space=_tok(f, "ss", "generic"))
    elif r.startswith("wgmma_sp_"):
        if not has(".aligned"):
            return None
        regs = L.fragment_regs(f.opcode)
        d = pool.vec(*regs["d"])
        am = pool.vec(*regs["a"]) if sig_index == 1 else pool.reg(u64)
        k.wgmma_mma_async_sp(f.fields["shape"][1:], d, am, pool.reg(u64), pool.reg(get_type("b32")), 0,
                             dtype=_tok(f, "dtype"), atype=_tok(f, "atype"), btype=_tok(f, "btype"),
                             satfinite=has(".satfinite"), scale_d=pool.reg(pred))
    elif r.startswith("wgmma_") and f.has(".mma_async"):
        if not has(".aligned"):
            return None
        regs = L.fragment_regs(f.opcode)
        d = pool.vec(*regs["d"])
        am = pool.vec(*regs["a"]) if sig_index == 1 else pool.reg(u64)
        k.wgmma_mma_async(f.fields["shape"][1:], d, am, pool.reg(u64), dtype=_tok(f, "dtype"),
                          atype=_tok(f, "atype"), btype=_tok(f, "btype"), satfinite=has(".satfinite"),
                          scale_d=pool.reg(pred))
    elif r in ("wgmma_fence", "wgmma_commit_group", "wgmma_wait_group"):
        if not has(".aligned"):
            return None
        {"wgmma_fence": k.wgmma_fence, "wgmma_commit_group": k.wgmma_commit_group,
         "wgmma_wait_group": lambda: k.wgmma_wait_group(1)}[r]()
    elif r == "cp_async":
        size = 16
        pf = _tok(f, "prefetch")
        k.cp_async(a(), a(), size, cache=_tok(f, "cache"), src_size=pool.reg(u32) if optional else None,
                   cache_policy=pool.reg(u64) if has(".L2::cache_hint") else None,
                   prefetch=int(pf[4:-1]) if pf else None, space=_tok(f, "dst"))
    elif r == "cp_async_commit_group":
        k.cp_async_commit_group()
    elif r == "cp_async_wait_group":
        k.cp_async_wait_group(1)
    elif r == "cp_async_wait_all":
        k.cp_async_wait_all()
    elif r == "cp_async_mbarrier_arrive":
        k.cp_async_mbarrier_arrive(a(), noinc=has(".noinc"), space=_tok(f, "ss", "generic"))
    elif r in ("cp_async_bulk_g2s", "cp_async_bulk_g2s_cta", "cp_async_bulk_s2s", "cp_async_bulk_s2g"):
        dst, src = _tok(f, "dst"), _tok(f, "src")
        k.cp_async_bulk(a(), a(), pool.reg(u32), dst_space=dst, src_space=src,
                        mbarrier=None if dst == "global" else a(),
                        multicast_mask=pool.reg(b16) if has(".multicast::cluster") else None,
                        cache_policy=pool.reg(u64) if has(".L2::cache_hint") else None,
                        byte_mask=pool.reg(b16) if has(".cp_mask") else None)
    elif r == "cp_async_bulk_prefetch":
        k.cp_async_bulk_prefetch(a(), pool.reg(u32), cache_policy=pool.reg(u64) if has(".L2::cache_hint") else None)
    elif r == "prefetch_tensormap":
        k.prefetch_tensormap(a(), space=_tok(f, "ss"))
    elif r == "cp_async_bulk_commit_group":
        k.cp_async_bulk_commit_group()
    elif r == "cp_async_bulk_wait_group":
        k.cp_async_bulk_wait_group(1, read=has(".read"))
    elif r.startswith("cp_async_bulk_tensor") or r.startswith("cp_async_bulk_prefetch_tensor"):
        dims = int(f.fields["dim"][1])
        coords = pool.vec(dims, get_type("b32"))
        mode = _tok(f, "load_mode")
        hint = pool.reg(u64) if has(".L2::cache_hint") else None
        offs = pool.vec(dims - 2, b16) if mode == "im2col" else None
        if r.startswith("cp_async_bulk_prefetch_tensor"):
            k.cp_async_bulk_prefetch_tensor(pool.reg(u64), coords, mode=mode, im2col_offsets=offs, cache_policy=hint)
        elif _tok(f, "dst") == "global":
            k.cp_async_bulk_tensor(a(), pool.reg(u64), coords, direction="store", mode=mode, cache_policy=hint)
        else:
            k.cp_async_bulk_tensor(a(), pool.reg(u64), coords, mbarrier=a(), mode=mode, im2col_offsets=offs,
                                   multicast_mask=pool.reg(b16) if has(".multicast::cluster") else None,
                                   cache_policy=hint, dst_space=_tok(f, "dst"))
    elif r.startswith("cp_reduce_async_bulk_tensor"):
        coords = pool.vec(int(f.fields["dim"][1]), get_type("b32"))
        k.cp_reduce_async_bulk_tensor(a(), pool.reg(u64), coords, _tok(f, "op"), mode=_tok(f, "load_mode"),
                                      cache_policy=pool.reg(u64) if has(".L2::cache_hint") else None)
    elif r.startswith("mbarrier_"):
        sp = _tok(f, "ss", "generic")
        sem, scope = _tok(f, "sem"), _tok(f, "scope")
        if r == "mbarrier_init":
            k.mbarrier_init(a(), pool.reg(u32), space=sp)
        elif r == "mbarrier_inval":
            k.mbarrier_inval(a(), space=sp)
        elif r in ("mbarrier_arrive", "mbarrier_arrive_cluster"):
            k.mbarrier_arrive(a(), pool.reg(u32) if optional else None, sem=sem, scope=scope, space=sp,
                              drop=has(".arrive_drop"), dst=None if r.endswith("cluster") else pool.reg(b64))
        elif r in ("mbarrier_arrive_expect_tx", "mbarrier_arrive_expect_tx_cluster"):
            k.mbarrier_arrive_expect_tx(a(), pool.reg(u32), sem=sem, scope=scope, space=sp,
                                        drop=has(".arrive_drop"),
                                        dst=None if r.endswith("cluster") else pool.reg(b64))
        elif r == "mbarrier_arrive_nocomplete":
            k.mbarrier_arrive(a(), pool.reg(u32), sem=sem, scope=scope, space=sp, drop=has(".arrive_drop"),
                              no_complete=True, dst=pool.reg(b64))
        elif r == "mbarrier_expect_tx":
            fn = k.mbarrier_expect_tx if has(".expect_tx") else k.mbarrier_complete_tx
            fn(a(), pool.reg(u32), sem=sem, scope=scope, space=sp)
        elif r in ("mbarrier_test_wait", "mbarrier_try_wait"):
            par = has(".parity")
            kw = dict(sem=sem, scope=scope, space=sp, dst=pool.reg(pred))
            if r == "mbarrier_try_wait" and optional:
                kw["suspend_hint"] = pool.reg(u32)
            fn = k.mbarrier_try_wait if r == "mbarrier_try_wait" else k.mbarrier_test_wait
            if par:
                fn(a(), parity=pool.reg(u32), **kw)
            else:
                fn(a(), pool.reg(b64), **kw)
        elif r == "mbarrier_pending_count":
            k.mbarrier_pending_count(pool.reg(b64), dst=pool.reg(u32))
        else:
            return None
    elif r == "fence_proxy_async":
        k.fence_proxy_async(_tok(f, "space"))
    elif r == "fence_mbarrier_init":
        k.fence_mbarrier_init()
    elif r in ("fence_proxy_tensormap_release", "fence_proxy_tensormap_acquire"):
        acq = r.endswith("acquire")
        k.fence_proxy_tensormap("acquire" if acq else "release", _tok(f, "scope"), a() if acq else None)
    elif r == "fence_sem" and _tok(f, "sem") in ("sc", "acq_rel"):
        k.fence(_tok(f, "sem"), _tok(f, "scope"))
    elif r == "barrier_cluster_arrive":
        k.barrier_cluster_arrive(sem=_tok(f, "sem"), aligned=has(".aligned"))
    elif r == "barrier_cluster_wait":
        k.barrier_cluster_wait(acquire=has(".acquire"), aligned=has(".aligned"))
    elif r == "mapa":
        ty = get_type(_tok(f, "type"))
        k.mapa(pool.reg(ty), pool.reg(u32), space=_tok(f, "ss"), dst=pool.reg(ty))
    elif r == "getctarank":
        ty = get_type(_tok(f, "type"))
        k.getctarank(pool.reg(ty), space=_tok(f, "ss"), dst=pool.reg(u32))
    elif r in ("st_async", "red_async") and has(".mbarrier::complete_tx::bytes"):
        ty = get_type(_tok(f, "type"))
        vec = f.fields.get("vec")
        value = [pool.reg(ty) for _ in range(int(vec[2:]))] if vec else pool.reg(ty)
        if r == "st_async":
            k.st_async(a(), value, a(), ty, weak=has(".weak"), space=_tok(f, "ss"))
        else:
            k.red_async(_tok(f, "op"), a(), value, a(), ty, space=_tok(f, "ss"))
    elif r == "setmaxnreg":
        k.setmaxnreg(_tok(f, "action"), 128)
    elif r == "elect_sync":
        k.elect_sync(pool.reg(u32))
    elif r == "griddepcontrol":
        k.griddepcontrol(_tok(f, "action"))
    else:
        return None
    return k.fn.body[-1]


def _variants(f: L.Form):
    """(signature index, optional operands present) pairs worth assembling for one form."""
    for i, sig in enumerate(L.signatures(f.opcode)):
        yield i, False
        if any(s.optional for s in sig.slots):
            yield i, True


# ------------------------------------------------------------------------------------ near misses

def _shape_mutations(tok: str) -> List[str]:
    m = re.match(r"^\.m(\d+)n(\d+)k(\d+)$", tok)
    if not m:
        return []
    mm, n, kk = (int(x) for x in m.groups())
    return [f".m{mm}n{n + 4}k{kk}", f".m{mm}n{n + 256}k{kk}", f".m{mm}n{n}k{kk * 2}", f".m{mm * 2}n{n}k{kk}"]


def _core(opcode: str) -> bool:
    """st and red without .async are core instructions (st.weak.b32 is a plain store), not near misses of
    st.async / red.async."""
    toks = opcode.split(".")
    return toks[0] in ("st", "red") and "async" not in toks


def _field_mutations(f: L.Form, vocab: Dict[Optional[str], List[str]]) -> List[Tuple[str, str]]:
    out = []
    for i, (t, lb) in enumerate(zip(f.tokens, f.labels)):
        if i == 0:
            continue
        cands = [c for c in vocab.get(lb, []) if c != t] if lb is not None else []
        if lb == "shape":
            cands = _shape_mutations(t) + cands
        picked = 0
        for c in cands:
            new = "".join(f.tokens[:i]) + c + "".join(f.tokens[i + 1:])
            if L.parse(new) is None:
                out.append((new, f"{lb or 'token'} {t} -> {c}"))
                picked += 1
                if picked == (3 if lb == "shape" else 1):
                    break
        # drop the token
        new = "".join(f.tokens[:i]) + "".join(f.tokens[i + 1:])
        if L.parse(new) is None and not _core(new):
            out.append((new, f"drop {t}"))
    return out


def _operand_mutations(opcode: str, ops: List[str], infos: list, pool: Pool) -> List[Tuple[List[str], list, str]]:
    out = []
    if ops:
        out.append((ops[:-1], infos[:-1] if not _pair_last(ops) else infos[:-2], "one operand fewer"))
        out.append((ops + [ops[-1]], infos + [infos[-1]], "one operand more"))
    else:
        out.append((["1"], [L.OperandInfo("imm", value=1)], "an operand where none is taken"))
    for j, (o, inf) in enumerate(zip(ops, infos)):
        if inf.kind == "vec" and inf.count > 1:
            short = "{" + ", ".join(o.strip("{}").split(", ")[:-1]) + "}"
            out.append((ops[:j] + [short] + ops[j + 1:],
                        infos[:j] + [L.OperandInfo("vec", count=inf.count - 1, elems=inf.elems[:-1])] + infos[j + 1:],
                        f"operand {j + 1} one register short"))
            break
    for j, (o, inf) in enumerate(zip(ops, infos)):
        if inf.kind == "reg" and inf.type is not None and inf.type.bits != 16 and "|" not in o:
            r = pool.reg(b16)
            out.append((ops[:j] + [r.name] + ops[j + 1:], infos[:j] + [L.OperandInfo("reg", b16)] + infos[j + 1:],
                        f"operand {j + 1} a .b16 register"))
            break
    sig, slots, _ = L.bind(opcode, infos)
    for j, (s, inf) in enumerate(zip(slots, infos)):
        if inf.kind == "imm" and s.values is not None:
            lo, hi = _bounds(s.values)
            bad = next(v for v in (hi + 1, lo - 1, hi + 4) if v not in s.values)
            if hi - lo < 1000 and len(getattr(s.values, "values", s.values)) > 2:
                gaps = [v for v in range(lo, hi) if v not in s.values]
                if gaps:
                    bad = gaps[len(gaps) // 2]
            out.append((ops[:j] + [str(bad)] + ops[j + 1:],
                        infos[:j] + [L.OperandInfo("imm", value=bad)] + infos[j + 1:],
                        f"operand {j + 1} ({s.name}) = {bad}"))
    return out


def _bounds(values) -> Tuple[int, int]:
    values = getattr(values, "values", values)   # L._Low32's
    if isinstance(values, range):  # min()/max() would walk a 2**63-long range
        return values[0], values[-1]
    return min(values), max(values)


def _pair_last(ops):
    return bool(ops) and "|" in ops[-1]


# ------------------------------------------------------------------------------------------ ptxas

# (the kernel's lines only: ptxas also names lines of its own macros, "<macro util>, line 9; error : Illegal modifier
# '.sp::ordered_metadata' for instruction 'shfl'" after the sink `_` as mma.sp's metadata from sm_100 on)
_LINE = re.compile(r"k\.ptx, line (\d+); (?:error|fatal)\s*:\s*(.*)")
_ADVISORY = re.compile(r"line (\d+); info\s*:\s*Advisory")


# ptxas checks PTX for a virtual target (compute_XY) without generating code: the same errors, far faster
ARCH_PREFIX = os.environ.get("PTXGEN_LEGALITY_ARCH", "compute")


def _ptxas(text: str, target: str) -> Tuple[int, str]:
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w") as fh:
            fh.write(text)
        arch = target.replace("sm_", ARCH_PREFIX + "_")
        p = subprocess.run(["ptxas", f"-arch={arch}", "-O0", src, "-o", os.path.join(d, "k.cubin")],
                           capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout + p.stderr


def _rejected(lines: List[str], marks: Dict[int, int], target: str, runs: List[int],
              advised: Optional[Set[int]] = None) -> Dict[int, str]:
    """Run ptxas on a kernel text until it assembles, blanking the lines it rejects: {item: first error};
    the items of the lines that the final run gives an "Advisory" go into `advised`."""
    lines = list(lines)
    out: Dict[int, str] = {}
    live = dict(marks)  # PTX line (1-based) -> item
    while True:
        runs[0] += 1
        rc, log = _ptxas("\n".join(lines) + "\n", target)
        if rc == 0:
            if advised is not None:
                advised.update(live[int(m.group(1))] for m in _ADVISORY.finditer(log) if int(m.group(1)) in live)
            return out
        errs = {}
        for m in _LINE.finditer(log):
            errs.setdefault(int(m.group(1)), m.group(2).strip())
        hit = {ln: e for ln, e in errs.items() if ln in live}
        stray = {ln: e for ln, e in errs.items() if ln not in live}
        if stray:
            raise AssertionError(f"ptxas rejected a line that is no item ({target}): " +
                                 "; ".join(f"line {ln}: {lines[ln - 1].strip()} -> {e}" for ln, e in stray.items()))
        if not hit:
            return _bisect(lines, live, target, log, out, runs)
        for ln, e in hit.items():
            out[live.pop(ln)] = e
            lines[ln - 1] = "\t// rejected"


def _bisect(lines, live, target, log, out, runs):
    """ptxas failed without naming a line: find the offending items by halving."""
    items = sorted(live)

    def fails(subset):
        keep = set(subset)
        trial = [("\t// off" if (ln in live and ln not in keep) else l) for ln, l in enumerate(lines, 1)]
        runs[0] += 1
        return _ptxas("\n".join(trial) + "\n", target)

    def search(cands):
        rc, lg = fails(cands)
        if rc == 0:
            return
        if len(cands) == 1:
            out[live[cands[0]]] = lg.strip().splitlines()[0] if lg.strip() else "rejected"
            return
        half = len(cands) // 2
        search(cands[:half])
        search(cands[half:])

    search(items)
    if not out:
        raise AssertionError(f"ptxas failed for {target} without naming a line:\n{log}")
    return out


# ------------------------------------------------------------------------------------------ the run

@dataclass
class Outcome:
    items: List[Item] = field(default_factory=list)
    ptxas_rejected: Dict[int, str] = field(default_factory=dict)
    advised: Set[int] = field(default_factory=set)            # legal items ptxas gives an "Advisory"
    runs: int = 0
    probes: List[Item] = field(default_factory=list)          # legal is None: ptxas decides
    probes_rejected: Dict[int, str] = field(default_factory=dict)


LAST_COUNTS: Dict[str, int] = {}
_FIELD_CODES = (L.CODE_SHAPE, L.CODE_TYPE, L.CODE_LAYOUT, L.CODE_MODIFIER)
_MARK = re.compile(r"// item (\d+)")


@dataclass
class _Built:
    form: L.Form
    ops: List[str]
    infos: list
    needs: List[L.Need]
    pool: Pool
    first: bool           # the first operand variant of its form (field/target/version misses come from it)


@pytest.fixture(scope="module")
def outcome() -> Outcome:
    return run_differential()


def run_differential() -> Outcome:
    """Build, mutate and assemble everything; the tests below only read the Outcome."""
    res = Outcome()
    kernels, built = _legal_kernels(res)
    misses = _near_misses(res, built)
    runs = [0]
    for tgt, m in kernels:
        res.ptxas_rejected.update(_assemble(m, tgt, runs, res.advised))
    for (tgt, ver), idxs in sorted(misses.items(), key=lambda kv: (TARGETS.index(kv[0][0]), kv[0][1])):
        m = pg.Module(tgt, version=version_str(ver))
        k = m.entry("near_miss")
        _declare_all(Pool(k))
        for i in idxs:
            k.fn.body.append(Raw(res.items[i].text + f"  // item {i}", None))
        k.ret()
        res.ptxas_rejected.update(_assemble(m, tgt, runs))
    for (tgt, ver), idxs in sorted(_probes(res, built).items(), key=lambda kv: (TARGETS.index(kv[0][0]), kv[0][1])):
        res.probes_rejected.update(_assemble_probes(res, idxs, tgt, version_str(ver), runs))
    res.runs = runs[0]
    return res


def _assemble_probes(res: "Outcome", idxs: List[int], target: str, version: str, runs: List[int]) -> Dict[int, str]:
    """_assemble the probes `idxs`: the whole-vector-register probes in modules of 24, since ptxas crashes on some
    (mma where it expands the instruction, a tensor map's coordinates on sm_120: "rejected" without a line), and a
    crash is found by halving its module; the others in one module."""
    risky = [i for i in idxs if "%qv" in res.probes[i].text]
    held = set(risky)
    rest = [i for i in idxs if i not in held]
    out = _assemble(_probe_module(res, rest, target, version), target, runs) if rest else {}
    for k in range(0, len(risky), 24):
        out.update(_assemble(_probe_module(res, risky[k:k + 24], target, version), target, runs))
    return out


def _probe_module(res: "Outcome", idxs: List[int], target: str, version: str):
    """One kernel holding the probes `idxs` of res, with the registers, variables and param they name."""
    m = pg.Module(target, version=version)
    m.global_var("q_global", "b8", 1024, align=128)
    m.global_var("q_const", "b8", 1024, align=128, space="const")
    k = m.entry("probe")
    pname = k.param_bytes("q_param", 128).name      # (the builder prefixes the kernel's name)
    for t in PROBE_TYPES:
        k.fn.body.append(Raw(f".reg .{t} %q_{t}_<{PROBE_VEC}>;", None))
    for n, t in WHOLE_TYPES:
        k.fn.body.append(Raw(f".reg .v{n} .{t} %qv{n}_{t};", None))
    for sp in ("shared", "local"):
        k.fn.body.append(Raw(f".{sp} .align 128 .b8 q_{sp}[1024];", None))
    _declare_all(Pool(k))
    for i in idxs:
        k.fn.body.append(Raw(res.probes[i].text.replace("[q_param", "[" + pname) + f"  // item {i}", None))
    k.ret()
    return m


# ---------------------------------------------------------------------------------------- probes
# One operand of a legal form replaced by another kind or type of operand, without deciding beforehand
# whether that is legal: ptxas's verdict is compared with legality's. Registers of the probes are declared
# with exactly their type (%q_u32<...> is .u32; the builder would declare it .b32). Kinds: an integer or
# float (0f, 0d, decimal) literal for a register, a register or a float literal (decimal, 0f, 0d) for an
# immediate, the sink `_` or a special register (%laneid, %globaltimer) for a register, a bare register or a
# variable of each state space for an address (for a tensor map too), a register of another type, a vector whose
# every register is of another type or whose first element is a literal or a special register.
PROBE_TYPES = ("b16", "f16", "b32", "u32", "s32", "f32", "f16x2", "b64", "u64", "s64", "f64", "pred")
PROBE_VEC = 128          # the longest vector operand (wgmma's m64n256 .f32 accumulator)
VAR_SPACES = ("global", "shared", "local", "const", "param")   # variables q_<space> the probes name
PROBES_PER_KIND = 2      # forms probed per (rule, operand, probe, operand type)
_SPECIALS = {32: ("%laneid", u32), 64: ("%globaltimer", u64)}     # a special register of each width
# whole vector registers (`.reg .v2 .b32 %qv2_b32;` named without a component): (length, element type)
WHOLE_TYPES = tuple((n, t) for n in (2, 4) for t in ("b8", "b16", "f16", "b32", "u32", "s32", "f32", "f16x2", "b64",
                                                      "u64", "s64", "f64") if n * get_type(t).bits <= 128)


def _probe_alts(o: str, inf) -> List[Tuple[str, object, str]]:
    alts = []
    if inf.kind == "reg" and "|" not in o:
        alts.append(("1", L.OperandInfo("imm", value=1), "an immediate"))
        alts.append(("0f3F800000", L.OperandInfo("imm", f32, floating=True), "a 0f literal"))
        alts.append(("0d3FF0000000000000", L.OperandInfo("imm", f64, floating=True), "a 0d literal"))
        alts.append(("1.5", L.OperandInfo("imm", f64, floating=True), "a decimal float literal"))
        alts.append(("_", L.OperandInfo("sink"), "the sink _"))
        if inf.type is not None and inf.type.bits in _SPECIALS:
            name, t = _SPECIALS[inf.type.bits]
            alts.append((name, L.OperandInfo("reg", t, special=True), f"the special register {name}"))
        for t in PROBE_TYPES:
            if inf.type is None or t != inf.type.name:
                alts.append((f"%q_{t}_0", L.OperandInfo("reg", get_type(t)), f"a .{t} register"))
        if inf.type is not None and inf.type.bits >= 16:
            for n, t in WHOLE_TYPES:
                if (n, t) in ((2, "b16"), (2, "b32"), (2, "b64")) or \
                        n == 4 and t in ("b16", "b32") and get_type(t).bits * n == inf.type.bits:
                    alts.append((f"%qv{n}_{t}", L.OperandInfo("reg", get_type(t), whole=n),
                                 f"a whole .v{n} .{t} register"))
    elif inf.kind == "imm":
        alts.append(("1.0", L.OperandInfo("imm", f64, floating=True), "a decimal float literal"))
        alts.append(("0f3F800000", L.OperandInfo("imm", f32, floating=True), "a 0f literal"))
        alts.append(("0d3FF0000000000000", L.OperandInfo("imm", f64, floating=True), "a 0d literal"))
        for t in ("u32", "b64"):
            alts.append((f"%q_{t}_0", L.OperandInfo("reg", get_type(t)), f"a .{t} register"))
    elif inf.kind == "addr":
        alts.append(("%q_u64_0", L.OperandInfo("reg", get_type("u64")), "a bare .u64 register"))
        base = re.fullmatch(r"\[%\w+([+-]\d+)?\]", o)
        if base:
            alts.append(("[%globaltimer" + (base.group(1) or "") + "]", L.OperandInfo("addr", special=True),
                         "the special register %globaltimer as its base"))
        for sp in VAR_SPACES:
            alts.append((f"[q_{sp}]", L.OperandInfo("addr", space=sp, handles=("variable",)), f"a .{sp} variable"))
    elif inf.kind == "tensor" and o.startswith("[") and "," in o:
        if "{" in o:
            head, rest = o.split("{", 1)
            for n in (2, 4):
                alts.append((head + f"%qv{n}_b32" + rest.split("}", 1)[1],
                             L.OperandInfo("tensor", count=n, elems=(b32,) * n, space=inf.space, handles=inf.handles,
                                           whole=n),
                             f"a whole .v{n} .b32 register as the coordinates"))
        for sp in VAR_SPACES:
            alts.append((f"[q_{sp}," + o.split(",", 1)[1], L.OperandInfo("tensor", count=inf.count, elems=inf.elems,
                                                                         space=sp, handles=("variable",)),
                         f"a .{sp} tensor map"))
    elif inf.kind == "vec":
        if o.startswith("{") and inf.count > 1:
            rest = o[1:].split(",", 1)[1]
            for lit, kind, what in (("1", "i", "an integer literal"), ("0f3F800000", "f", "a float literal")):
                alts.append(("{" + lit + "," + rest, L.OperandInfo("vec", count=inf.count, elems=(None,) + inf.elems[1:],
                                                                  lits=(kind,) + (None,) * (inf.count - 1),
                                                                  decl=(None,) + inf.decl[1:] if inf.decl else (),
                                                                  vals=(1,) + (None,) * (inf.count - 1)
                                                                  if kind == "i" else ()),
                             f"{what} first in the vector"))
        if o.startswith("{") and inf.elems and inf.elems[0] is not None and inf.elems[0].bits in _SPECIALS:
            name = _SPECIALS[inf.elems[0].bits][0]
            rest = o[1:-1].split(",")[1:]
            alts.append(("{" + ", ".join([name] + [x.strip() for x in rest]) + "}",
                         L.OperandInfo("vec", count=inf.count, elems=(None,) + inf.elems[1:],
                                       decl=(None,) + inf.decl[1:] if inf.decl else (), lits=inf.lits,
                                       vals=inf.vals, lits64=inf.lits64, special=True),   # (as operand_infos has it)
                         f"the special register {name} first in the vector"))
        if o.startswith("{"):
            if inf.count > 1 and inf.elems and inf.elems[0] is not None:
                decl = inf.decl or inf.elems
                for t in ("s32", "f32", "f16x2", "b32"):
                    if t != inf.elems[0].name and get_type(t).bits == inf.elems[0].bits:
                        # the last register swapped: a vector of two types (ptxas types it by its elements)
                        regs = [x.strip() for x in o[1:-1].split(",")]
                        regs[-1] = f"%q_{t}_0"
                        alts.append(("{" + ", ".join(regs) + "}",
                                     L.OperandInfo("vec", count=inf.count, elems=inf.elems[:-1] + (get_type(t),),
                                                   decl=decl[:-1] + (get_type(t),)),
                                     f"a .{t} register last in the vector"))
        if o.startswith("{") and inf.elems and inf.elems[0] is not None:
            own = inf.elems[0].name
            for n, t in WHOLE_TYPES:    # its own type and length, and .b32 of the other length
                if t == own and n == inf.count or t == "b32" and n != inf.count:
                    alts.append((f"%qv{n}_{t}", L.OperandInfo("reg", get_type(t), whole=n),
                                 f"a whole .v{n} .{t} register"))
        for t in PROBE_TYPES:
            if inf.elems and inf.elems[0] is not None and inf.elems[0].name == t:
                continue
            regs = ", ".join(f"%q_{t}_{i}" for i in range(inf.count))
            alts.append(("{" + regs + "}", L.OperandInfo("vec", count=inf.count, elems=(get_type(t),) * inf.count),
                         f".{t} registers"))
    return alts


def _probes(res: Outcome, built: Dict[int, _Built]) -> Dict[Tuple[str, Tuple[int, int]], List[int]]:
    """Append the probes of the legal items to res.probes; {(target, version): probe indices}."""
    groups: Dict[Tuple[str, Tuple[int, int]], List[int]] = {}
    per_kind: Dict[tuple, int] = {}
    for idx, b in built.items():
        it, f = res.items[idx], b.form
        if any("|" in o for o in b.ops):
            continue          # a pair (d|p) is one operand of the text but two of the infos
        for j, (o, inf) in enumerate(zip(b.ops, b.infos)):
            own = inf.type.name if inf.type is not None else (
                inf.elems[0].name if inf.elems and inf.elems[0] is not None else None)
            for text_o, new, what in _probe_alts(o, inf):
                key = (f.rule, j, what, own, len(b.ops))
                if per_kind.get(key, 0) >= PROBES_PER_KIND:
                    continue
                per_kind[key] = per_kind.get(key, 0) + 1
                ops = b.ops[:j] + [text_o] + b.ops[j + 1:]
                groups.setdefault((it.target, it.version), []).append(len(res.probes))
                res.probes.append(Item(f"{f.opcode} {', '.join(ops)};", f.opcode, it.target, it.version, None,
                                       f"{f.opcode}: operand {j + 1} {what}", b.infos[:j] + [new] + b.infos[j + 1:]))
    return groups


def _assemble(m, target: str, runs: List[int], advised: Optional[Set[int]] = None) -> Dict[int, str]:
    lines = m.emit().text.split("\n")
    marks = {ln: int(mm.group(1)) for ln, text in enumerate(lines, 1) for mm in [_MARK.search(text)] if mm}
    return _rejected(lines, marks, target, runs, advised)


def _legal_kernels(res: Outcome):
    """One kernel per (minimum target, minimum version) holding every legal form (each operand variant)."""
    groups: Dict[Tuple[str, Tuple[int, int]], list] = {}
    for f in L.forms():
        for sig_i, opt in _variants(f):
            sig = L.signatures(f.opcode)[sig_i]
            needs, _ = L.requirement(f.opcode, [s for s in sig.slots if s.optional] if opt else [])
            tgt = _min_target(needs)
            assert tgt is not None, f"no ptxas target meets {f.opcode}"
            ver = max([n.version for n in needs] + [Target.parse(tgt).min_ptx])
            groups.setdefault((tgt, ver), []).append((f, sig_i, opt, needs))
    built: Dict[int, _Built] = {}
    kernels = []
    for (tgt, ver), jobs in sorted(groups.items(), key=lambda kv: (TARGETS.index(kv[0][0]), kv[0][1])):
        m = pg.Module(tgt, version=version_str(ver))
        k = m.entry("legal")
        pool = Pool(k)
        for f, sig_i, opt, needs in jobs:
            before = len(k.fn.body)
            ins = _build(k, pool, f, sig_i, opt)
            idx = len(res.items)
            if ins is not None:
                assert isinstance(ins, Instr) and ins.opcode == f.opcode, (
                    f"the builder made {getattr(ins, 'opcode', ins)} for {f.opcode}")
                assert len(k.fn.body) == before + 1, f"{f.opcode}: the builder emitted extra instructions"
                ops, infos, text = [str(o) for o in ins.operands], operand_infos(ins.operands), ins.text()
                ins.comment = f"item {idx}"
            else:
                ops, infos = _render(L.signatures(f.opcode)[sig_i], pool, opt)
                text = f"{f.opcode} {', '.join(ops)};" if ops else f"{f.opcode};"
                k.fn.body.append(Raw(text + f"  // item {idx}", None))
            res.items.append(Item(text, f.opcode, tgt, ver, True, f.rule, infos, ins is not None))
            built[idx] = _Built(f, ops, infos, needs, pool, sig_i == 0 and not opt)
        k.ret()
        kernels.append((tgt, m))
    return kernels, built


def _near_misses(res: Outcome, built: Dict[int, _Built]) -> Dict[Tuple[str, Tuple[int, int]], List[int]]:
    """Append the near misses of every legal item to res.items; {(target, version): item indices}."""
    vocab: Dict[str, Dict[Optional[str], List[str]]] = {}
    for f in L.forms():
        v = vocab.setdefault(f.tokens[0], {})
        for t, lb in zip(f.tokens, f.labels):
            if lb is not None and t not in v.setdefault(lb, []):
                v[lb].append(t)
    groups: Dict[Tuple[str, Tuple[int, int]], List[int]] = {}
    seen = set()

    def miss(text, opcode, tgt, ver, what, infos, expect):
        if (text, tgt, ver) in seen:
            return
        seen.add((text, tgt, ver))
        groups.setdefault((tgt, ver), []).append(len(res.items))
        res.items.append(Item(text, opcode, tgt, ver, False, what, infos, expect=expect))

    for idx, b in built.items():
        it, f = res.items[idx], b.form
        if b.first:
            tail = f" {', '.join(b.ops)};" if b.ops else ";"
            for new, what in _field_mutations(f, vocab[f.tokens[0]]):
                miss(new + tail, new, it.target, it.version, f"{f.opcode}: {what}", None, _FIELD_CODES)
            for t2 in _lacking_targets(b.needs, it.target):
                v2 = max(it.version, Target.parse(t2).min_ptx)
                miss(it.text, f.opcode, t2, v2, f"{f.opcode}: target {t2}", b.infos, (L.CODE_TARGET,))
            lower = [v for v in VERSIONS if v < max(n.version for n in b.needs)]
            if lower and lower[-1] >= Target.parse(it.target).min_ptx:
                miss(it.text, f.opcode, it.target, lower[-1], f"{f.opcode}: version {version_str(lower[-1])}",
                     b.infos, (L.CODE_VERSION,))
        for new_ops, new_infos, what in _operand_mutations(f.opcode, b.ops, b.infos, b.pool):
            if not L.check(f.opcode, new_infos):
                continue  # still legal (an optional operand): not a near miss
            text = f"{f.opcode} {', '.join(new_ops)};" if new_ops else f"{f.opcode};"
            miss(text, f.opcode, it.target, it.version, f"{f.opcode}: {what}", new_infos,
                 (L.CODE_OPERANDS, L.CODE_TYPE))
    return groups


def _declare_all(pool: Pool):
    """Declare the register names every legal kernel used, so near-miss text refers to declared names."""
    for f in L.forms():
        for sig in L.signatures(f.opcode):
            for s in sig.slots:
                if L.VEC in s.kinds:
                    pool.vec(s.count, s.type)
                elif L.TENSOR in s.kinds:
                    pool.vec(s.count, get_type("b32"))
                elif L.REG in s.kinds and s.type is not None:
                    pool.reg(s.type)
    for c in range(1, 6):
        pool.vec(c, get_type("b32"))
    pool.vec(3, b16)
    for t in ("b16", "u32", "u64", "b64", "pred", "s32", "s64"):
        pool.reg(t)
    for _ in range(4):  # the automatically named registers builder methods allocate (elect.sync's %p0 ...)
        for t in (pred, u32, b64):
            pool.k.reg(t)


# ------------------------------------------------------------------------------------------ tests

def test_every_legal_form_assembles(outcome):
    bad = [(it, outcome.ptxas_rejected[i]) for i, it in enumerate(outcome.items)
           if it.legal and i in outcome.ptxas_rejected]
    assert not bad, "legal forms ptxas rejects:\n" + "\n".join(
        f"{it.target} {version_str(it.version)}: {it.text[:160]} -> {e}" for it, e in bad[:40])


def test_every_legal_form_passes_legality(outcome):
    bad = []
    for i, it in enumerate(outcome.items):
        if it.legal:
            d = L.check(it.opcode, it.infos, it.target, it.version)
            # a note exactly where ptxas assembles the line with an "Advisory" (plain mma.sp)
            want = [(L.CODE_ADVISORY, "note")] if i in outcome.advised else []
            if [(x.code, x.severity) for x in d] != want:
                bad.append(f"{it.text[:120]}: {d[0].message if d else 'no advisory'}")
    assert not bad, "\n".join(bad[:40])


def test_near_misses_are_rejected_by_legality(outcome):
    bad = []
    for it in outcome.items:
        if it.legal:
            continue
        d = L.check(it.opcode, it.infos, it.target, it.version)
        if not d:
            bad.append(f"accepted: {it.target} {version_str(it.version)}: {it.text[:140]} ({it.what})")
        elif d[0].code not in it.expect:
            bad.append(f"{d[0].code}, expected {'/'.join(it.expect)}: {it.text[:120]} ({it.what}): {d[0].message}")
    assert not bad, "near misses legality gets wrong:\n" + "\n".join(bad[:40])


def test_near_misses_are_rejected_by_ptxas(outcome):
    bad = [it for i, it in enumerate(outcome.items) if not it.legal and i not in outcome.ptxas_rejected]
    assert not bad, "near misses ptxas accepts (disagreements):\n" + "\n".join(
        f"{it.target} {version_str(it.version)}: {it.text[:140]} ({it.what})" for it in bad[:60])


# tex / tld4 operands legality accepts and ptxas 13.0 refuses: a vector of mixed register types (ptxas types
# it by its elements), and the scalar operands' literals and register types where the operand list is
# ambiguous (the offset, the depth compare and the LOD are told apart by position only); sust's vectors
# with a float literal next to narrow elements; sured.p with a 0d or decimal literal. Legality is lenient
# there rather than wrong about legal PTX; tests/test_lint_texture.py covers the modelled rules.
_TEXTURE_LENIENT = ("tex", "tld4", "sust", "sured")


def test_operand_probes_agree_with_ptxas(outcome):
    bad = []
    for i, it in enumerate(outcome.probes):
        errs = [d for d in L.check(it.opcode, it.infos, it.target, it.version) if d.severity == "error"]
        by_ptxas = i not in outcome.probes_rejected
        if not by_ptxas and not errs and it.opcode.split(".")[0] in _TEXTURE_LENIENT:
            continue  # a known gap (below)
        if by_ptxas != (not errs):
            why = outcome.probes_rejected.get(i) if not by_ptxas else errs[0].message
            bad.append(f"{'ptxas accepts' if by_ptxas else 'ptxas rejects'}, legality "
                       f"{'rejects' if errs else 'accepts'}: {it.target} {version_str(it.version)}: "
                       f"{it.text[:150]} ({it.what}): {why}")
    assert not bad, f"{len(bad)} probes where legality and ptxas disagree:\n" + "\n".join(bad[:60])


# Targets after each form's minimum at which the probes run again: ptxas expands some instructions into code of its
# own at some targets, whose operands take other registers and literals (legality._target_regs).
LATER_TARGETS = ("sm_90a", "sm_100a", "sm_120a")


def _later_probe_disagreements(res: Outcome, target: str) -> List[str]:
    idxs = [i for i, it in enumerate(res.probes)
            if it.target != target and not L.check(it.opcode, None, target, (9, 0))]
    rejected = _assemble_probes(res, idxs, target, "9.0", [0])
    bad = []
    for i in idxs:
        it = res.probes[i]
        errs = [d for d in L.check(it.opcode, it.infos, target, (9, 0)) if d.severity == "error"]
        by_ptxas = i not in rejected
        if not by_ptxas and not errs and it.opcode.split(".")[0] in _TEXTURE_LENIENT:
            continue
        if by_ptxas != (not errs):
            bad.append(f"{'ptxas accepts' if by_ptxas else 'ptxas rejects'}: {target}: {it.text[:150]} ({it.what}): "
                       f"{rejected.get(i) if not by_ptxas else errs[0].message}")
    assert idxs, target
    return bad


@pytest.mark.parametrize("target", LATER_TARGETS)
def test_operand_probes_agree_with_ptxas_at_later_targets(outcome, target):
    """The probes again at a later target than their form's minimum (.version 9.0)."""
    bad = _later_probe_disagreements(outcome, target)
    assert not bad, f"{len(bad)} probes where legality and ptxas disagree:\n" + "\n".join(bad[:60])


def _im2col_module(target):
    from _ptxas_lines import kernel, reg_decls
    decls = (reg_decls(("b64", "rd", 8), ("b32", "r", 8), ("b16", "h", 8))
             + "\t.shared .align 128 .b8 buf[1024];\n\t.shared .align 8 .b64 bar;\n")
    return lambda lines: kernel(lines, target, "9.0", decls)


@pytest.mark.parametrize("target", ["sm_90a", "sm_100a", "sm_120a"])
def test_im2col_loads_from_sm_120(target):
    """From sm_120 on ptxas 13.0 refuses a 64-bit ctaMask register and a float literal first among the im2col offsets
    of cp.async.bulk.tensor .im2col into shared::cluster, both of which it takes on sm_90 and sm_100."""
    from _ptxas_lines import agree_with_ptxas, lint_disagrees_with_ptxas
    old = target != "sm_120a"
    mc = "cp.async.bulk.tensor.{d}d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.multicast::cluster "
    ld = "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes "
    cases = [(mc.format(d=3) + "[buf], [%rd1, {%r1, %r2, %r3}], [bar], {%h1}, %h2;", True),
             (mc.format(d=3) + "[buf], [%rd1, {%r1, %r2, %r3}], [bar], {%h1}, %rd2;", old),
             (ld + "[buf], [%rd1, {%r1, %r2, %r3, %r4}], [bar], {%h1, %h2};", True),
             (ld + "[buf], [%rd1, {%r1, %r2, %r3, %r4}], [bar], {0, %h2};", True),
             (ld + "[buf], [%rd1, {%r1, %r2, %r3, %r4}], [bar], {0f3F800000, %h2};", old)]
    agree_with_ptxas(cases, _im2col_module(target), target)
    assert lint_disagrees_with_ptxas([ln for ln, _ in cases], _im2col_module(target), target) == []


def test_counts(outcome, capsys):
    legal = [it for it in outcome.items if it.legal]
    miss = [(i, it) for i, it in enumerate(outcome.items) if not it.legal]
    both = sum(1 for i, it in miss if i in outcome.ptxas_rejected)
    counts = {
        "legal forms": len({it.opcode for it in legal}),
        "legal instructions assembled": sum(1 for i, it in enumerate(outcome.items) if it.legal
                                            and i not in outcome.ptxas_rejected),
        "built by builder methods": sum(1 for it in legal if it.built),
        "near misses": len(miss),
        "near misses rejected by both": both,
        "disagreements": len(miss) - both,
        "operand probes": len(outcome.probes),
        "probes ptxas accepts": len(outcome.probes) - len(outcome.probes_rejected),
        "ptxas runs": outcome.runs,
    }
    LAST_COUNTS.update(counts)
    with capsys.disabled():
        print("\nlegality vs ptxas: " + ", ".join(f"{k}: {v}" for k, v in counts.items()))
    assert counts["legal forms"] == sum(1 for _ in L.forms())


# ------------------------------------------------------------------- mma.sync field combinations
# tests/test_legality.py's MMA_COMBOS through ptxas: every spelling check() refuses is refused by ptxas
# too, but for MMA_KNOWN (ptxas takes them), and the legal neighbours assemble. The registers are those
# the PTX ISA's fragment layouts would give the spelling (a of M*K/32 elements a thread, b of K*N/32, c
# and d of M*N/32, packed into 32-bit registers), so that ptxas judges the opcode, not the operand list.
sys.path.insert(0, os.path.dirname(__file__))
from test_legality import MMA_COMBOS, MMA_KNOWN  # noqa: E402

_MMA_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "s32": 32, "e4m3": 8, "e5m2": 8, "s8": 8,
             "u8": 8, "s4": 4, "u4": 4, "b1": 1}
_MMA_REG = {"f16": "%mh", "f32": "%mf", "s32": "%ms", "f64": "%md"}


def _mma_line(opcode: str) -> str:
    toks = opcode.split(".")
    m, n, k = (int(x) for x in re.match(r"m(\d+)n(\d+)k(\d+)", toks[3]).groups())
    d, a, b, c = [t for t in toks[6:] if t in _MMA_BITS][:4]

    def vec(t, elems, acc):
        if toks[3] == "m8n8k4" and a == "f16":      # the quad-pair form
            count = 2 if not acc else 4 if t == "f16" else 8
        elif t == "f64" or acc and t in ("f32", "s32"):
            count = elems
        else:
            count = max(elems * _MMA_BITS[t] // 32, 1)
        prefix = _MMA_REG.get(t, "%mr") if acc or t in ("f16", "f64") else "%mr"
        return "{" + ", ".join(f"{prefix}{i}" for i in range(count)) + "}"

    return (f"{opcode} {vec(d, m * n // 32, True)}, {vec(a, m * k // 32, False)}, {vec(b, k * n // 32, False)}, "
            f"{vec(c, m * n // 32, True)};")


def _mma_module(line: str) -> str:
    return (".version 9.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
            ".reg .b32 %mr<16>;\n.reg .f16x2 %mh<16>;\n.reg .f32 %mf<16>;\n.reg .s32 %ms<16>;\n.reg .f64 %md<16>;\n"
            f"{line}\nret;\n}}\n")


@pytest.mark.parametrize("opcode, code, part", MMA_COMBOS, ids=[c[0][17:] for c in MMA_COMBOS])
def test_mma_field_combinations_agree_with_ptxas(opcode, code, part):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.ptx")
        with open(path, "w") as fh:
            fh.write(_mma_module(_mma_line(opcode)))
        r = subprocess.run(["ptxas", "-arch=sm_90a", path, "-o", os.devnull], capture_output=True, text=True)
    takes = r.returncode == 0
    if opcode in MMA_KNOWN:
        assert takes and code is not None, f"{opcode}: ptxas now refuses it; drop it from MMA_KNOWN"
    else:
        assert takes == (code is None), (opcode, r.stderr)
