"""Near-miss variants of valid PTX for differential testing of `ptxgen lint` against ptxas.

    python tests/differential/gen_cases.py          # rewrites tests/differential/cases.json (needs ptxas)

Each case is a base module of bases.py with one mutation: a register that is not declared, one of the
wrong width or kind, a branch to a missing label, an unknown or misplaced modifier, a dropped or extra
operand, another instruction type, an immediate of the wrong kind, a target or PTX version too old for
an instruction, a duplicated label or declaration, a call with the wrong arguments, a misspelt opcode
or an undefined symbol. Cases are stored as edits of the base (line number -> new text) together with
ptxas's verdict, so tests/test_lint.py can compare lint with ptxas without running ptxas, and the
`ptxas`-marked test re-checks the recorded verdicts.
"""
from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import tempfile
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bases import BASES  # noqa: E402

PER_MUTATION = 14  # cases per (base, mutation) at most, picked with the seed
PER_MODULE_MUTATION = 6  # module-level cases per (base, kind) for the compiler-output bases
# Three sets, generated in this order while the linter was written: "dev" (the hand-written bases, used
# while writing the checks), "corpus" (real compiler output, added afterwards; its first run measured
# how well the checks generalise, and the misses were then fixed), "held-out" (other compiler output and
# the syntax zoo, measured once after that; the fixes its first run prompted are listed in the report).
SETS = (
    ("dev", 20240611, tuple(BASES)),
    ("corpus", 20240611, ("nvcc/tensor_core.sm_80.O3.ptx", "nvcc/coop_cluster.sm_90a.O3.ptx",
                          "nvcc/misc.sm_80.O3.ptx", "nvcc/tma_mbarrier.sm_90a.O3.ptx",
                          "nvcc/tensor_core.sm_100a.O3.ptx", "hand/triton_style.sm_90a.ptx")),
    ("held-out", 777, ("nvcc/coop_cluster.sm_100a.O3.ptx", "nvcc/misc.sm_90a.lineinfo.ptx",
                       "nvcc/tma_mbarrier.sm_80.O3.ptx", "nvcc/tensor_core.sm_90a.O3.ptx",
                       "hand/syntax_zoo.sm_90a.ptx")),
)


def base_text(name: str) -> str:
    """The text of a base: a module of bases.py, or a file of tests/ptx (name 'nvcc/...')."""
    if name in BASES:
        return BASES[name]
    with open(os.path.join(HERE, "..", "ptx", name)) as f:
        return f.read()
INSTR = re.compile(r"^(\s*)(@!?%?\w+\s+)?([a-z][\w.:]*)(\s+)([^;]*);(.*)$")
REG = re.compile(r"%(rd|rs|r|fd|f|p)(\d+)\b")


def apply(base: str, edits) -> str:
    lines = base.split("\n")
    for ln, text in sorted(edits, key=lambda e: -e[0]):
        if text is None:
            del lines[ln - 1]
        elif ln < 0:  # insert after line -ln
            lines.insert(-ln, text)
        else:
            lines[ln - 1] = text
    return "\n".join(lines)


def target_of(text: str) -> str:
    return re.search(r"^\.target\s+(\w+)", text, re.M).group(1)


def _instr_lines(base: str):
    out = []
    for i, line in enumerate(base.split("\n"), 1):
        m = INSTR.match(line)
        if m and not line.lstrip().startswith((".", "//")):
            out.append((i, line, m))
    return out


def _split_ops(ops: str):
    parts, depth, cur = [], 0, ""
    for c in ops:
        if c in "[{(":
            depth += 1
        elif c in "]})":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _join(m, opcode=None, ops=None):
    ind, guard, op, sp, rest, tail = m.group(1), m.group(2) or "", m.group(3), m.group(4), m.group(5), m.group(6)
    opcode = op if opcode is None else opcode
    ops = rest if ops is None else ", ".join(ops)
    return f"{ind}{guard}{opcode}{sp if ops else ''}{ops};{tail}"


# --------------------------------------------------------------------------------------- mutations
def m_undeclared_register(base, i, line, m):
    r = REG.search(m.group(5))
    if r:
        yield f"%{r.group(1)}{r.group(2)} -> %{r.group(1)}99", [(i, line.replace(r.group(0), f"%{r.group(1)}99", 1))]


def _swap_first_register(i, line, m, swap):
    """Replace the first operand register whose kind is in `swap` by a register of the swapped kind."""
    for r in REG.finditer(m.group(5)):
        k = r.group(1)
        if k in swap:
            new = f"%{swap[k]}{min(int(r.group(2)), 3)}"
            yield f"{r.group(0)} -> {new}", [(i, line[:m.start(5)] + m.group(5).replace(r.group(0), new, 1)
                                                + line[m.end(5):])]
            return


def m_register_width(base, i, line, m):
    yield from _swap_first_register(i, line, m, {"r": "rd", "rd": "r", "rs": "r", "f": "fd", "fd": "f"})


def m_register_kind(base, i, line, m):
    yield from _swap_first_register(i, line, m, {"r": "f", "f": "r", "rd": "fd", "fd": "rd", "p": "r"})


def m_missing_label(base, i, line, m):
    if m.group(3).startswith("bra"):
        yield "branch to $L_nowhere", [(i, _join(m, ops=["$L_nowhere"]))]


def m_unknown_modifier(base, i, line, m):
    op = m.group(3)
    parts = op.split(".")
    yield f"{op} + .foo", [(i, _join(m, opcode=".".join(parts[:1] + ["foo"] + parts[1:])))]


_WRONG = [
    (r"^st\.global\.", "st.global.ca."), (r"^ld\.global\.f32", "ld.global.wb.f32"), (r"^mul\.wide\.u32", "mul.wide.u64"),
    (r"^setp\.lt\.f32", "setp.lo.f32"), (r"^setp\.ge\.u32", "setp.ge.f32"), (r"^cvt\.rzi\.s32\.f32", "cvt.rn.s32.f32"),
    (r"^cvt\.rn\.f32\.s32", "cvt.rzi.f32.s32"), (r"^cvt\.f64\.f32", "cvt.rn.f64.f32"), (r"^fma\.rn\.f32", "fma.rni.f32"),
    (r"^div\.approx\.f32", "div.approx.f64"), (r"^shfl\.sync\.bfly", "shfl.sync.rotate"),
    (r"^atom\.global\.add\.u32", "atom.global.exch.f32"), (r"^red\.global\.add\.f32", "red.global.and.f32"),
    (r"^bar\.sync", "bar.sync.aligned"), (r"^ldmatrix\.sync\.aligned\.m8n8\.x4", "ldmatrix.sync.aligned.m8n8.x3"),
    (r"^mma\.sync\.aligned\.m16n8k16\.row\.col", "mma.sync.aligned.m16n8k16.col.row"),
    (r"^mma\.sync\.aligned\.m16n8k16", "mma.sync.aligned.m16n8k12"),
    (r"^wgmma\.mma_async\.sync\.aligned\.m64n8k16", "wgmma.mma_async.sync.aligned.m64n12k16"),
    (r"^cp\.async\.cg\.shared\.global", "cp.async.cg.global.shared"),
    (r"^mbarrier\.init\.shared", "mbarrier.init.global"), (r"^prmt\.b32", "prmt.b32.f4e"),
    (r"^vote\.sync\.ballot\.b32", "vote.sync.ballot.pred"), (r"^min\.s32", "min.ftz.s32"),
    (r"^sqrt\.rn\.f32", "sqrt.f32"), (r"^redux\.sync\.add\.u32", "redux.sync.add.f32"),
    (r"^cvta\.to\.global\.u64", "cvta.to.global.u16"), (r"^and\.b32", "and.s32"), (r"^popc\.b32", "popc.u32"),
    (r"^bfe\.u32", "bfe.b32"), (r"^ld\.global\.nc\.v2\.f32", "ld.global.nc.v3.f32"),
    (r"^st\.global\.v2\.f32", "st.global.v2.f32.f32"), (r"^elect\.sync", "elect.sync.aligned"),
]


def m_wrong_modifier(base, i, line, m):
    op = m.group(3)
    for pat, rep in _WRONG:
        if re.match(pat, op):
            yield f"{op} -> {re.sub(pat, rep, op)}", [(i, _join(m, opcode=re.sub(pat, rep, op)))]


def m_drop_modifier(base, i, line, m):
    parts = m.group(3).split(".")
    if len(parts) > 1:
        k = 1 + (i * 7919) % (len(parts) - 1)
        yield f"drop .{parts[k]}", [(i, _join(m, opcode=".".join(parts[:k] + parts[k + 1:])))]


def m_missing_operand(base, i, line, m):
    ops = _split_ops(m.group(5))
    if ops:
        yield "drop the last operand", [(i, _join(m, ops=ops[:-1]))]


def m_extra_operand(base, i, line, m):
    ops = _split_ops(m.group(5))
    if ops:
        yield "repeat the last operand", [(i, _join(m, ops=ops + ops[-1:]))]


_TYPES = {"s32": "f32", "u32": "b64", "f32": "s32", "b32": "u16", "u64": "f64", "f64": "u64", "u16": "f16",
          "s64": "u8", "b16": "f32"}


def m_type_suffix(base, i, line, m):
    parts = m.group(3).split(".")
    for k in range(len(parts) - 1, 0, -1):
        if parts[k] in _TYPES:
            new = parts[:k] + [_TYPES[parts[k]]] + parts[k + 1:]
            yield f".{parts[k]} -> .{_TYPES[parts[k]]}", [(i, _join(m, opcode=".".join(new)))]
            return


def m_immediate_kind(base, i, line, m):
    ops = _split_ops(m.group(5))
    for k, o in enumerate(ops):
        if re.fullmatch(r"-?\d+", o):
            new = ops[:k] + ["0f3F800000"] + ops[k + 1:]
            yield f"{o} -> 0f3F800000", [(i, _join(m, ops=new))]
            return
        if re.fullmatch(r"0[fd][0-9A-Fa-f]+", o):
            new = ops[:k] + ["1"] + ops[k + 1:]
            yield f"{o} -> 1", [(i, _join(m, ops=new))]
            return


def m_misspelt_opcode(base, i, line, m):
    parts = m.group(3).split(".")
    yield f"{parts[0]} -> {parts[0]}x", [(i, _join(m, opcode=".".join([parts[0] + "x"] + parts[1:])))]


def m_undefined_symbol(base, i, line, m):
    s = re.search(r"\[([A-Za-z_]\w*)", m.group(5))
    if s:
        yield f"[{s.group(1)}] -> [{s.group(1)}_x]", [(i, line.replace("[" + s.group(1), "[" + s.group(1) + "_x", 1))]
    s = re.search(r"call(?:\.uni)? \(\w+\), (\w+)", line)
    if s:
        yield f"call {s.group(1)} -> {s.group(1)}_x", [(i, line.replace(s.group(1), s.group(1) + "_x", 1))]


INSTR_MUTATIONS = {
    "undeclared-register": m_undeclared_register, "register-width": m_register_width,
    "register-kind": m_register_kind, "missing-label": m_missing_label, "unknown-modifier": m_unknown_modifier,
    "wrong-modifier": m_wrong_modifier, "drop-modifier": m_drop_modifier, "missing-operand": m_missing_operand,
    "extra-operand": m_extra_operand, "type-suffix": m_type_suffix, "immediate-kind": m_immediate_kind,
    "misspelt-opcode": m_misspelt_opcode, "undefined-symbol": m_undefined_symbol,
}


def module_mutations(name: str, base: str):
    lines = base.split("\n")
    tline = next(i for i, l in enumerate(lines, 1) if l.startswith(".target"))
    vline = next(i for i, l in enumerate(lines, 1) if l.startswith(".version"))
    for t in ("sm_70", "sm_75", "sm_80", "sm_89", "sm_90"):
        if t != target_of(base):
            yield "target-gating", f".target {t}", [(tline, f".target {t}")]
    for v in ("6.0", "6.5", "7.0", "7.5", "7.8"):
        yield "version-gating", f".version {v}", [(vline, f".version {v}")]
    for i, l in enumerate(lines, 1):
        s = l.strip()
        if re.fullmatch(r"\$?\w+:", s):
            yield "duplicate-label", f"repeat {s}", [(-i, l)]
        if s.startswith(".reg "):
            yield "duplicate-declaration", f"repeat {s}", [(-i, l)]
            if "<" in s:
                m = re.search(r"(%\w+)<(\d+)>", s)
                yield "register-range", f"{m.group(0)} -> {m.group(1)}<2>", [(i, l.replace(m.group(0), f"{m.group(1)}<2>"))]
        if s.startswith("call"):
            m = re.search(r"\(([\w$]+)(,|\))", l[l.index(",") + 1:] if "," in l else l)
            if m and "(a0)" in l:
                yield "call-arity", "one argument more", [(i, l.replace("(a0)", "(a0, a0)"))]
            elif m:
                yield "call-arity", "one argument more", [(i, l.replace(m.group(1), m.group(1) + ", " + m.group(1), 1))]
            if "(ret0), " in l:
                yield "call-arity", "no return value", [(i, l.replace("(ret0), ", ""))]
        if s.startswith(".maxntid"):
            yield "directive", ".maxntid 2048", [(i, ".maxntid 2048, 1, 1")]
        if s.startswith(".reqntid"):
            yield "directive", ".reqntid + .maxntid", [(-i, ".maxntid 128, 1, 1")]


def generate():
    cases = []
    for set_name, seed, names in SETS:
        cases.extend(_generate(set_name, random.Random(seed), names))
    seen = set()
    out = []
    for c in cases:
        key = (c["set"], c["base"], json.dumps(c["edits"]))
        if key in seen:
            continue
        seen.add(key)
        c["id"] = f"{c['base'].split('/')[-1].split('.')[0]}-{len(out):04d}"
        out.append(c)
    return out


def _generate(set_name, rng, names):
    cases = []
    for name in names:
        base = base_text(name)
        cases.append({"set": set_name, "base": name, "mutation": "none", "what": "unchanged", "edits": []})
        lines = _instr_lines(base)
        for mut, fn in INSTR_MUTATIONS.items():
            found = []
            for i, line, m in lines:
                for what, edits in fn(base, i, line, m):
                    found.append((what, edits))
            rng.shuffle(found)
            for what, edits in found[:PER_MUTATION]:
                cases.append({"set": set_name, "base": name, "mutation": mut, "what": what, "edits": edits})
        mods = list(module_mutations(name, base))
        if name not in BASES:
            by_kind = {}
            for x in mods:
                by_kind.setdefault(x[0], []).append(x)
            mods = []
            for kind in by_kind:
                rng.shuffle(by_kind[kind])
                mods.extend(by_kind[kind][:PER_MODULE_MUTATION])
        for mut, what, edits in mods:
            cases.append({"set": set_name, "base": name, "mutation": mut, "what": what, "edits": edits})
    return cases


def run_ptxas(text: str, arch: Optional[str] = None, flags=()):
    """ptxas's verdict on `text`, assembled for `arch` (default: the module's .target), with `flags` (("-c",):
    compile only)."""
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "case.ptx")
        with open(p, "w") as f:
            f.write(text)
        r = subprocess.run(["ptxas", *flags, f"-arch={arch or target_of(text)}", p, "-o", os.devnull],
                           capture_output=True, text=True, timeout=120)
    errs = [l for l in r.stderr.splitlines() if "error" in l or "fatal" in l]
    m = re.search(r"line (\d+);", errs[0]) if errs else None
    return {"rc": r.returncode, "error_line": int(m.group(1)) if m else None,
            "first_error": errs[0].split(":", 1)[-1].strip() if errs else ""}


def main() -> int:
    cases = generate()
    for c in cases:
        c["ptxas"] = run_ptxas(apply(base_text(c["base"]), c["edits"]))
        print(c["id"], c["mutation"], c["what"], c["ptxas"]["rc"], c["ptxas"]["first_error"][:80])
    with open(os.path.join(HERE, "cases.json"), "w") as f:
        json.dump({"ptxas": _ptxas_version(), "cases": cases}, f, indent=0)
        f.write("\n")
    return 0


def _ptxas_version() -> str:
    r = subprocess.run(["ptxas", "--version"], capture_output=True, text=True)
    return r.stdout.strip().splitlines()[-1] if r.stdout else ""


if __name__ == "__main__":
    sys.exit(main())
