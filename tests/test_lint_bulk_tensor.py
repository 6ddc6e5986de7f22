"""cp.reduce.async.bulk.tensor (a TMA reduction of shared::cta memory into global memory through a tensor map) and
the operands of the tensor copies (cp.async.bulk.tensor, cp.async.bulk.prefetch.tensor), linted and built as ptxas
13.0 takes them, probed line by line (the test marked ptxas runs every line below through it and compares with lint).

What ptxas 13.0 showed:
- cp.reduce.async.bulk.tensor.dim.global.shared::cta.redOp{.load_mode}.bulk_group{.L2::cache_hint}
  [tensorMap, {c0, ...}], [srcMem]{, cache-policy}: sm_90 and PTX ISA 8.0 ("requires .target sm_90 or higher",
  "requires PTX ISA .version 8.0 or later"); every redOp of .add .min .max .inc .dec .and .or .xor in every
  dimension .1d to .5d, with .tile (which may be left out) or .im2col_no_offs from .3d ("Modifier '.2d' cannot be
  combined with modifier '.im2col_no_offs'"), with and without .L2::cache_hint: 208 spellings. Its modifiers go in
  any order after the instruction name but for the spaces (.global, then .shared::cta: "State space incorrect").
- it takes no type: the tensor map gives the element type ("Unexpected instruction types specified" for .f32,
  .u32 ...), no .noftz, no .im2col, .multicast::cluster, .read, .cp_mask or other cache modifier ("Illegal
  modifier"), no operation twice ("Multiple instruction post-operation flags set"); it needs .bulk_group
  (".completion_mechanism modifier required"; .mbarrier::complete_tx::bytes is "Illegal modifier"), a redOp
  ("Reduction operation is required") and a dimension. The destination is .global and the source .shared::cta
  (.shared, .shared::cluster are "State space incorrect").
- operands: as cp.async.bulk.tensor's store (tensor reference first, then the shared source; no byte count:
  "Arguments mismatch"); the coordinate vector has one element a dimension ("Argument vector size mismatch"); the
  cache policy, exactly with .L2::cache_hint, is a 64-bit integer register or an integer literal.
- the shared-memory address of a tensor copy ([dst] and [mbar] of a load, [src] of a store or reduction) written
  without brackets is a register of any type, .b8 to .f64 (lint took 32- and 64-bit integer ones only); in
  brackets it is an integer or bit register ("Use integer or bit only" for .f16, .f16x2, .f32, .f64). A .pred
  register there crashes ptxas (segmentation fault), as it does as the tensor map; lint refuses it.
- the tensor map of `[tensorMap, {c0, ...}]` is a register of any type but .pred (lint refused float ones as an
  address register) or a .global variable (a .param or .shared one is "State space mismatch"); the coordinates
  are .b32, .u32 or .s32 registers or integer literals.

- `[%rd1+64, {c}]` (an offset on the tensor map, even +0; a texture's `[t+8, {x}]` too) is a syntax error ("Parsing
  error near ','"), which lint took.

Where lint and ptxas still differ (left as they are): the sm_100 modes (.tile::scatter4, .im2col::w ...) and
.cta_group are not modelled (ptxgen.legality leaves them to ptxas).
"""
from __future__ import annotations

import os
import sys
from typing import List, Tuple

import pytest

import ptxgen as pg
from ptxgen import legality as LG
from ptxgen import lint as L
from ptxgen.errors import LegalityError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _ptxas_lines import first_line, ptxas_rejected  # noqa: E402
from test_lint_vector_probes import needs_ptxas  # noqa: E402

M, O, T, TY, V = "PTX-E-MODIFIER", "PTX-E-OPERANDS", "PTX-E-TARGET", "PTX-E-TYPE", "PTX-E-VERSION"
REG_TYPES = ("pred", "b8", "u8", "s8", "b16", "u16", "s16", "f16", "f16x2", "b32", "u32", "s32", "f32", "b64", "u64",
             "s64", "f64")
_FLOAT = ("f16", "f16x2", "f32", "f64")


def module(lines: List[str], target: str = "sm_90a", version: str = "8.0") -> str:
    """A kernel with `lines` in its body, after registers %<type>_<0..3> of each type, a tensor map parameter tm, a
    .shared array s and a .global array g."""
    regs = "".join(f"\t.reg .{t} %{t}_<4>;\n" for t in REG_TYPES)
    return (f".version {version}\n.target {target}\n.address_size 64\n"
            f".visible .entry k(.param .align 64 .b8 tm[128])\n{{\n{regs}"
            "\t.shared .align 128 .b8 s[1024];\n\t.global .align 128 .b8 g[1024];\n"
            + "".join(f"\t{ln}\n" for ln in lines) + "\tret;\n}\n")


STORE = "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group"
LOAD = "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
PREFETCH = "cp.async.bulk.prefetch.tensor.1d.L2.global.tile"
REDUCE = "cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group"


def _register_cases() -> List[Tuple[str, str, str, object]]:
    """(target, version, line, the error code lint gives or None) of each register type in each register operand of
    the tensor copies (.pred, on which ptxas crashes where it is taken without brackets, is in PRED_LINES)."""
    out = []
    for t in REG_TYPES:
        if t == "pred":
            continue
        r = f"%{t}_1"
        addr = TY if t in _FLOAT else None          # (lint's address-register rule, ptxas's "Use integer or bit")
        coord = None if t in ("b32", "u32", "s32") else TY
        for line, code in (
                (f"{STORE} [%u64_0, {{%b32_0}}], {r};", None),
                (f"{STORE} [%u64_0, {{%b32_0}}], [{r}];", addr),
                (f"{STORE} [{r}, {{%b32_0}}], [%b32_1];", None),
                (f"{STORE} [%u64_0, {{{r}}}], [%b32_1];", coord),
                (f"{LOAD} {r}, [%u64_0, {{%b32_0}}], [%b32_1];", None),
                (f"{LOAD} [%b32_1], [%u64_0, {{%b32_0}}], {r};", None),
                (f"{LOAD} [%b32_1], [{r}, {{%b32_0}}], [%b32_1];", None),
                (f"{PREFETCH} [{r}, {{%b32_0}}];", None),
                (f"{REDUCE} [%u64_0, {{%b32_0}}], {r};", None),
                (f"{REDUCE} [%u64_0, {{%b32_0}}], [{r}];", addr),
                (f"{REDUCE} [{r}, {{%b32_0}}], [%b32_1];", None),
                (f"{REDUCE} [%u64_0, {{{r}}}], [%b32_1];", coord)):
            out.append(("sm_90a", "8.0", line, code))
    out += [("sm_90a", "8.0", f"{STORE} [%u64_0, {{%b32_0}}], [%pred_1];", TY),
            ("sm_90a", "8.0", f"{STORE} [%u64_0, {{%b32_0}}], s;", None),
            ("sm_90a", "8.0", f"{STORE} [%u64_0, {{%b32_0}}], [s+16];", None),
            ("sm_90a", "8.0", f"{STORE} [%u64_0, {{%b32_0}}], [g];", O),
            ("sm_90a", "8.0", f"{STORE} [g, {{%b32_0}}], [%b32_1];", None),
            ("sm_90a", "8.0", f"{STORE} [s, {{%b32_0}}], [%b32_1];", O),
            ("sm_90a", "8.0", f"{STORE} [%u64_0, {{7}}], [%b32_1];", None)]
    # an offset on the tensor map is a syntax error, +0 too (the address register takes it: `[s+16]` above)
    out += [("sm_90a", "8.0", f"{op} [%u64_0+{off}, {{%b32_0}}], [%b32_1];", "PTX-E-SYNTAX")
            for op in (STORE, REDUCE) for off in (64, 0)]
    out += [("sm_90a", "8.0", f"{LOAD} [%b32_1], [g+128, {{%b32_0}}], [%b32_2];", "PTX-E-SYNTAX"),
            ("sm_90a", "8.0", f"{PREFETCH} [%u64_0+8, {{%b32_0}}];", "PTX-E-SYNTAX")]
    return out


# where ptxas 13.0 crashes (a .pred register as a bare shared-memory address or as the tensor map): lint refuses them
PRED_LINES = [f"{STORE} [%u64_0, {{%b32_0}}], %pred_1;", f"{STORE} [%pred_1, {{%b32_0}}], [%b32_1];",
              f"{LOAD} %pred_1, [%u64_0, {{%b32_0}}], [%b32_1];", f"{REDUCE} [%u64_0, {{%b32_0}}], %pred_1;",
              f"{REDUCE} [%pred_1, {{%b32_0}}], [%b32_1];"]

RED = "cp.reduce.async.bulk.tensor"
REDOPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")


def _coords(n: int) -> str:
    return "{" + ", ".join(f"%b32_{i % 4}" for i in range(n)) + "}"


def _reduction_spellings() -> List[Tuple[str, str, str, object]]:
    """Every redOp in every dimension, load mode (none, .tile, .im2col_no_offs) and with or without the cache hint:
    .im2col_no_offs needs 3 dimensions or more."""
    out = []
    for op in REDOPS:
        for dims in range(1, 6):
            for mode in ("", ".tile", ".im2col_no_offs"):
                for hint in ("", ".L2::cache_hint"):
                    line = (f"{RED}.{dims}d.global.shared::cta.{op}{mode}.bulk_group{hint} [%u64_0, {_coords(dims)}], "
                            f"[%b32_1]" + (", %u64_1;" if hint else ";"))
                    out.append(("sm_90", "8.0", line, M if mode == ".im2col_no_offs" and dims < 3 else None))
    return out


T1 = "[%u64_0, {%b32_0}]"
R1 = f"{RED}.1d.global.shared::cta.add.tile.bulk_group"
# (target, version, line, code): one thing changed from a legal spelling, or a legal order or operand ptxas takes
REDUCTION_MISSES = [
    ("sm_90", "7.8", f"{R1} {T1}, [%b32_1];", V),
    ("sm_89", "8.0", f"{R1} {T1}, [%b32_1];", T),
    ("sm_80", "8.0", f"{R1} {T1}, [%b32_1];", T),
    ("sm_100a", "8.6", f"{R1} {T1}, [%b32_1];", None),
    ("sm_120a", "8.7", f"{R1}.L2::cache_hint {T1}, [%b32_1], %u64_1;", None),
    ("sm_90a", "8.0", f"{RED}.1d.global.shared::cta.add.tile {T1}, [%b32_1];", M),
    ("sm_90a", "8.0", f"{RED}.1d.global.shared::cta.add.tile.mbarrier::complete_tx::bytes {T1}, [%b32_1];", M),
    ("sm_90a", "8.0", f"{RED}.1d.global.shared::cta.add.tile.mbarrier::complete_tx::bytes {T1}, [%b32_1], [%b32_2];",
     M),
    ("sm_90a", "8.0", f"{RED}.1d.shared::cta.global.add.tile.bulk_group {T1}, [%b32_1];", M),
    ("sm_90a", "8.0", f"{RED}.1d.shared::cluster.shared::cta.add.tile.bulk_group {T1}, [%b32_1];", M),
    ("sm_90a", "8.0", f"{RED}.1d.global.shared.add.tile.bulk_group {T1}, [%b32_1];", M),
    ("sm_90a", "8.0", f"{RED}.1d.global.add.tile.bulk_group {T1}, [%b32_1];", M),
    ("sm_90a", "8.0", f"{R1}.f32 {T1}, [%b32_1];", TY),
    ("sm_90a", "8.0", f"{R1}.u32 {T1}, [%b32_1];", TY),
    ("sm_90a", "8.0", f"{RED}.1d.global.add.shared::cta.tile.bulk_group.f32 {T1}, [%b32_1];", TY),
    ("sm_90a", "8.0", f"{RED}.1d.global.shared::cta.add.noftz.tile.bulk_group {T1}, [%b32_1];", M),
    ("sm_90a", "8.0", f"{RED}.1d.global.shared::cta.add.noftz.f16.tile.bulk_group {T1}, [%b32_1];", M),
    ("sm_90a", "8.0", f"{RED}.1d.global.shared::cta.tile.bulk_group {T1}, [%b32_1];", M),
    ("sm_90a", "8.0", f"{RED}.1d.global.shared::cta.mul.tile.bulk_group {T1}, [%b32_1];", M),
    ("sm_90a", "8.0", f"{RED}.1d.global.shared::cta.add.min.tile.bulk_group {T1}, [%b32_1];", M),
    ("sm_90a", "8.0", f"{RED}.1d.global.shared::cta.add.add.tile.bulk_group {T1}, [%b32_1];", M),
    ("sm_90a", "8.0", f"{RED}.6d.global.shared::cta.add.tile.bulk_group [%u64_0, {_coords(6)}], [%b32_1];",
     "PTX-E-SHAPE"),
    ("sm_90a", "8.0", f"{RED}.global.shared::cta.add.tile.bulk_group {T1}, [%b32_1];", "PTX-E-SHAPE"),
    ("sm_90a", "8.0", f"{RED}.3d.global.shared::cta.add.im2col.bulk_group [%u64_0, {_coords(3)}], [%b32_1];", M),
    ("sm_90a", "8.0", f"{RED}.3d.global.shared::cta.add.tile.im2col_no_offs.bulk_group [%u64_0, {_coords(3)}], "
                      "[%b32_1];", M),
    ("sm_90a", "8.0", f"{R1}.multicast::cluster {T1}, [%b32_1];", M),
    ("sm_90a", "8.0", f"{R1}.L2::evict_last {T1}, [%b32_1];", M),
    ("sm_90a", "8.0", f"{R1}.read {T1}, [%b32_1];", M),
    ("sm_90a", "8.0", f"{R1}.bulk_group {T1}, [%b32_1];", M),
    ("sm_90a", "8.0", f"{R1}.cp_mask {T1}, [%b32_1];", M),
    ("sm_90a", "8.0", f"cp.reduce.async.bulk.1d.global.shared::cta.add.tile.bulk_group {T1}, [%b32_1];",
     "PTX-E-SHAPE"),
    ("sm_90a", "8.0", f"cp.reduce.async.tensor.bulk.1d.global.shared::cta.add.tile.bulk_group {T1}, [%b32_1];", M),
    # modifiers in other orders ptxas takes
    ("sm_90a", "8.0", f"{RED}.1d.global.shared::cta.bulk_group.add.tile {T1}, [%b32_1];", None),
    ("sm_90a", "8.0", f"{RED}.1d.L2::cache_hint.global.add.shared::cta.bulk_group {T1}, [%b32_1], %u64_1;", None),
    ("sm_90a", "8.0", f"{RED}.bulk_group.xor.5d.global.shared::cta.im2col_no_offs [%u64_0, {_coords(5)}], [%b32_1];",
     None),
    # operands
    ("sm_90a", "8.0", f"{R1}.L2::cache_hint {T1}, [%b32_1];", O),
    ("sm_90a", "8.0", f"{R1} {T1}, [%b32_1], %u64_1;", O),
    ("sm_90a", "8.0", f"{R1} {T1}, [%b32_1], 16;", O),
    ("sm_90a", "8.0", f"{R1} {T1}, [%b32_1], [%b32_1];", O),
    ("sm_90a", "8.0", f"{R1} {T1};", O),
    ("sm_90a", "8.0", f"{RED}.2d.global.shared::cta.add.tile.bulk_group {T1}, [%b32_1];", O),
    ("sm_90a", "8.0", f"{RED}.2d.global.shared::cta.add.tile.bulk_group [%u64_0, {_coords(3)}], [%b32_1];", O),
    ("sm_90a", "8.0", f"{R1} [%u64_0], [%b32_1];", O),
    ("sm_90a", "8.0", f"{R1} [%u64_0, %b32_0], [%b32_1];", O),
    ("sm_90a", "8.0", f"{R1} {{%b32_0}}, [%b32_1];", O),
    ("sm_90a", "8.0", f"{R1} {T1}, {{%b32_1}};", O),
    ("sm_90a", "8.0", f"{R1} [%b32_1], {T1};", (O, O)),
    ("sm_90a", "8.0", f"{R1} {T1}, [g];", O),
    ("sm_90a", "8.0", f"{R1} {T1}, [16];", O),
    ("sm_90a", "8.0", f"{R1} {T1}, s;", None),
    ("sm_90a", "8.0", f"{R1} {T1}, [s+16];", None),
    ("sm_90a", "8.0", f"{R1} [tm, {{%b32_0}}], [%b32_1];", O),
    ("sm_90a", "8.0", f"{R1} [s, {{%b32_0}}], [%b32_1];", O),
    ("sm_90a", "8.0", f"{R1} [g, {{%b32_0}}], [%b32_1];", None),
    ("sm_90a", "8.0", f"{R1} [%u64_0, {{-5}}], [%b32_1];", None),
    ("sm_90a", "8.0", f"{R1}.L2::cache_hint {T1}, [%b32_1], %s64_1;", None),
    ("sm_90a", "8.0", f"{R1}.L2::cache_hint {T1}, [%b32_1], -1;", None),
    ("sm_90a", "8.0", f"{R1}.L2::cache_hint {T1}, [%b32_1], %f64_1;", TY),
    ("sm_90a", "8.0", f"{R1}.L2::cache_hint {T1}, [%b32_1], %b32_2;", TY),
    ("sm_90a", "8.0", f"{R1}.L2::cache_hint {T1}, [%b32_1], 0d3FF0000000000000;", TY),
    ("sm_90a", "8.0", f"{R1}.L2::cache_hint {T1}, [%b32_1], [%u64_1];", O),
]

CASES = _register_cases() + _reduction_spellings() + REDUCTION_MISSES


def _errors(text):
    return [d for d in L.lint_ptx(text, "t.ptx") if d.severity == "error"]


@pytest.mark.parametrize("target,version,line,code", CASES, ids=[f"{t}:{v}:{ln}" for t, v, ln, _ in CASES])
def test_lint_verdict(target, version, line, code):
    ds = _errors(module([line], target, version))
    want = list(code) if isinstance(code, tuple) else [code] if code else []
    assert [d.code for d in ds] == want, [str(d) for d in ds]


@pytest.mark.parametrize("line", PRED_LINES)
def test_a_predicate_is_no_shared_memory_address_or_tensor_map(line):
    (d,) = _errors(module([line]))
    assert d.code == TY and "%pred_1" in str(d) and ".pred" in d.message, str(d)


@pytest.mark.ptxas
@needs_ptxas
def test_every_line_agrees_with_ptxas():
    groups = {}
    for t, v, ln, code in CASES:
        groups.setdefault((t, v), []).append((ln, code))
    for (target, version), items in groups.items():
        lines = [ln for ln, _ in items]
        text = module(lines, target, version)
        first = first_line(text, lines)
        rejected = {lines[i - first] for i in ptxas_rejected(text, target) if first <= i < first + len(lines)}
        want = {ln for ln, code in items if code}
        assert rejected == want, (target, version, sorted(rejected - want)[:10], sorted(want - rejected)[:10])


def _only(line, target="sm_90a", version="8.0"):
    """lint's one error on `line` (in module()), and the line's number and text."""
    text = module([line], target, version)
    (d,) = _errors(text)
    n = first_line(text, [line])
    assert d.loc.line == n, str(d)
    return d


def test_the_messages_say_what_is_wrong_and_what_to_write():
    # a type: at the opcode, the spelling without it
    d = _only(f"{R1}.f32 {T1}, [%b32_1];")
    assert (d.code, d.loc.col, d.span) == (TY, 2, len(R1) + 4), str(d)
    assert d.message == (".f32 is not allowed in cp.reduce.async.bulk.tensor shared::cta -> global (tile), which takes "
                         "no type: the tensor map gives the element type")
    assert d.notes[0] == f"write {R1}"
    # ... in another order of the modifiers, the PTX ISA's spelling
    d = _only(f"{RED}.1d.global.bulk_group.shared::cta.add.u32 {T1}, [%b32_1];")
    assert d.code == TY and d.notes[0] == f"write {RED}.1d.global.shared::cta.add.bulk_group", str(d)
    # a coordinate short: at the tensor reference
    line = f"{RED}.2d.global.shared::cta.add.tile.bulk_group {T1}, [%b32_1];"
    d = _only(line)
    assert (d.code, d.loc.col) == (O, 2 + line.index("[")), str(d)
    assert d.message == ("cp.reduce.async.bulk.tensor shared::cta -> global (tile): operand 1 (tensor) takes 2 "
                         "coordinates, 1 given")
    # the cache hint without its operand
    d = _only(f"{R1}.L2::cache_hint {T1}, [%b32_1];")
    assert d.message == ("cp.reduce.async.bulk.tensor shared::cta -> global (tile) takes 3 operands (tensor, src, "
                         "cache-policy), 2 given"), str(d)
    # no completion mechanism, the wrong one, spaces swapped
    d = _only(f"{RED}.1d.global.shared::cta.add.tile {T1}, [%b32_1];")
    assert (d.code, d.message) == (M, "cp.reduce.async.bulk.tensor shared::cta -> global (tile) needs .bulk_group "
                                      "after .tile"), str(d)
    d = _only(f"{RED}.1d.global.shared::cta.add.tile.mbarrier::complete_tx::bytes {T1}, [%b32_1];")
    assert d.message == (".mbarrier::complete_tx::bytes is not a legal completion mechanism for "
                         "cp.reduce.async.bulk.tensor shared::cta -> global (tile); the completion mechanism must be "
                         ".bulk_group"), str(d)
    d = _only(f"{RED}.1d.shared::cta.global.add.tile.bulk_group {T1}, [%b32_1];")
    assert d.notes == (f"nearest legal spellings: {R1} (destination space .shared::cta -> .global, source space "
                       ".global -> .shared::cta)",), str(d)
    # .im2col_no_offs below 3 dimensions: either fix
    d = _only(f"{RED}.2d.global.shared::cta.add.im2col_no_offs.bulk_group [%u64_0, {_coords(2)}], [%b32_1];")
    assert d.code == M and "the load mode must be .tile" in d.message, str(d)
    assert "or: .2d is not a legal dimension for cp.reduce.async.bulk.tensor shared::cta -> global (im2col_no_offs); " \
           "the dimension must be one of .3d, .4d, .5d" in d.notes, str(d)
    # an operation that does not exist
    d = _only(f"{RED}.1d.global.shared::cta.mul.tile.bulk_group {T1}, [%b32_1];")
    assert d.message.endswith("the operation must be one of .add, .min, .max, .inc, .dec, .and, .or, .xor"), str(d)
    # target and version
    d = _only(f"{R1} {T1}, [%b32_1];", "sm_89", "8.0")
    assert (d.code, d.message) == (T, "cp.reduce.async.bulk.tensor shared::cta -> global (tile) needs target sm_90 or "
                                      "later (module target is sm_89)"), str(d)
    d = _only(f"{R1} {T1}, [%b32_1];", "sm_90", "7.8")
    assert (d.code, d.message) == (V, "cp.reduce.async.bulk.tensor shared::cta -> global (tile) needs PTX ISA 8.0 "
                                      "(module .version is 7.8)"), str(d)


# ----------------------------------------------------------------------------------------------------- the builder
def _kernel(target="sm_90a", version=None):
    m = pg.Module(target, version=version)
    k = m.entry("k")
    return m, k, k.param_bytes("tmap", 128), k.shared("tile", 4096, align=128)


def test_the_builder_writes_the_reduction():
    m, k, tmap, tile = _kernel()
    pol = k.createpolicy("evict_first")
    x = k.mov(5, type=pg.s32)
    k.cp_reduce_async_bulk_tensor(pg.mem(tile), tmap, [0, x], "add")
    k.cp_reduce_async_bulk_tensor(tile, tmap, [1, 2, 3], "max", mode="im2col_no_offs", cache_policy=pol)
    k.cp_reduce_async_bulk_tensor(pg.mem(tile), tmap, [x], "xor", mode="tile", cache_policy=-1, dims=1)
    k.cp_async_bulk_commit_group()
    k.cp_async_bulk_wait_group(0, read=True)
    k.ret()
    text = m.emit().text
    body = [ln.strip() for ln in text.split("\n") if ln.strip().startswith(("cvta", "cp.reduce"))]
    assert body == [
        "cvta.param.u64 %rd1, k_param_tmap;",
        "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.bulk_group [%rd1, {0, %r0}], [tile];",
        "cvta.param.u64 %rd2, k_param_tmap;",
        "cp.reduce.async.bulk.tensor.3d.global.shared::cta.max.im2col_no_offs.bulk_group.L2::cache_hint "
        "[%rd2, {1, 2, 3}], [tile], %rd0;",
        "cvta.param.u64 %rd3, k_param_tmap;",
        "cp.reduce.async.bulk.tensor.1d.global.shared::cta.xor.tile.bulk_group.L2::cache_hint [%rd3, {%r0}], [tile], "
        "-1;"], text
    assert _errors(text) == [], [str(d) for d in _errors(text)]


def _every_reduction():
    """A module with every legal cp.reduce.async.bulk.tensor form made by the builder, and the opcodes it wrote."""
    m, k, _tmap, tile = _kernel("sm_90", "8.0")
    t = k.reg(pg.u64)
    pol = k.createpolicy("evict_last")
    for f in LG.forms():
        if f.rule.startswith("cp_reduce_async_bulk_tensor"):
            mode = f.fields.get("load_mode")
            k.cp_reduce_async_bulk_tensor(tile, t, list(range(int(f.fields["dim"][1]))), f.fields["op"][1:],
                                          mode=mode[1:] if mode else None,
                                          cache_policy=pol if f.has(".L2::cache_hint") else None)
    k.ret()
    return m, {i.opcode for i in k.fn.body if i.opcode.startswith("cp.reduce")}


def test_the_builder_writes_every_form_and_lint_takes_it():
    m, ops = _every_reduction()
    want = set()
    for op in REDOPS:
        for dims in range(1, 6):
            for mode in ("", ".tile") + ((".im2col_no_offs",) if dims >= 3 else ()):
                for hint in ("", ".L2::cache_hint"):
                    want.add(f"{RED}.{dims}d.global.shared::cta.{op}{mode}.bulk_group{hint}")
    assert ops == want and len(ops) == 208
    assert _errors(m.emit().text) == []


@pytest.mark.ptxas
@needs_ptxas
def test_every_reduction_the_builder_writes_assembles():
    m, _ops = _every_reduction()
    assert ptxas_rejected(m.emit().text, "sm_90") == {}


def _refused(call, code, k=None):
    """`call` raises a LegalityError of `code` at this file's line, emitting nothing; returns it."""
    before = len(k.fn.body) if k is not None else None
    with pytest.raises(LegalityError) as e:
        call()
    assert e.value.code == code and e.value.loc is not None and e.value.loc.file == __file__, str(e.value)
    assert k is None or len(k.fn.body) == before, "an instruction was emitted before the error"
    return e.value


def test_the_builder_refuses_what_ptxas_refuses():
    m, k, tmap, tile = _kernel()
    s = pg.mem(tile)
    e = _refused(lambda: k.cp_reduce_async_bulk_tensor(s, tmap, [0], "mul"), M, k)
    assert e.message == (".mul is not a legal operation for cp.reduce.async.bulk.tensor shared::cta -> global (tile); "
                         "the operation must be one of .add, .min, .max, .inc, .dec, .and, .or, .xor")
    e = _refused(lambda: k.cp_reduce_async_bulk_tensor(s, tmap, [0], "add.f32"), M, k)
    assert e.notes == ("no type is written: the tensor map gives the element type",), str(e)
    _refused(lambda: k.cp_reduce_async_bulk_tensor(s, tmap, [0], None), M, k)
    e = _refused(lambda: k.cp_reduce_async_bulk_tensor(s, tmap, [0, 0], "add", mode="im2col_no_offs"), M, k)
    assert "the dimension must be one of .3d, .4d, .5d" in " ".join(e.notes), str(e)
    _refused(lambda: k.cp_reduce_async_bulk_tensor(s, tmap, [0, 0, 0], "add", mode="im2col"), M, k)
    e = _refused(lambda: k.cp_reduce_async_bulk_tensor(s, tmap, [0] * 6, "add"), "PTX-E-SHAPE", k)
    assert e.message.startswith(".6d is not a legal dimension"), str(e)
    e = _refused(lambda: k.cp_reduce_async_bulk_tensor(s, tmap, [0, 0], "add", dims=3), O, k)
    assert e.message == "a 3d tensor reduction takes 3 coordinates, 2 given"
    # the operands, as lint checks them: a .global source, a policy of another type, a float coordinate
    g = m.global_var("gbuf", "b8", 256, align=128)
    e = _refused(lambda: k.cp_reduce_async_bulk_tensor(g, tmap, [0], "add"), O)
    assert "operand 2 (src) names a .global variable" in e.message, str(e)
    _refused(lambda: k.cp_reduce_async_bulk_tensor(s, tmap, [0], "add", cache_policy=k.reg(pg.b32)), TY)
    _refused(lambda: k.cp_reduce_async_bulk_tensor(s, tmap, [k.reg(pg.f32)], "add"), TY)
    # target and version
    _, k80, tmap80, tile80 = _kernel("sm_80")
    _refused(lambda: k80.cp_reduce_async_bulk_tensor(pg.mem(tile80), tmap80, [0], "add"), T, k80)
    _, k78, tmap78, tile78 = _kernel("sm_90", "7.8")
    _refused(lambda: k78.cp_reduce_async_bulk_tensor(pg.mem(tile78), tmap78, [0], "add"), V, k78)
