"""The `ptxgen` command line: `assemble`, `info`, `lint`, `layout`."""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

from . import __version__
from .errors import PtxgenError

__all__ = ["main"]


def _cmd_info(args) -> int:
    from .ptxas import find_ptxas, ptxas_version
    from .runtime import get_context, no_gpu_reason
    print(f"ptxgen {__version__}")
    p = find_ptxas()
    if p:
        print(f"ptxas: {p} ({ptxas_version(p)})")
    else:
        print("ptxas: not found (offline assembly unavailable)")
    reason = no_gpu_reason()
    if reason:
        print(f"GPU: none ({reason})")
    else:
        ctx = get_context()
        print(f"GPU: {ctx.name}, {ctx.arch}, {ctx.sm_count} SMs")
    return 0


def _cmd_assemble(args) -> int:
    from .linemap import PtxText
    from .ptxas import assemble
    rc = 0
    for path in args.files:
        try:
            with open(path) if path != "-" else sys.stdin as f:
                text = f.read()
        except OSError as e:
            print(f"ptxgen assemble: cannot read {path}: {e.strerror}", file=sys.stderr)
            return 2
        try:
            res = assemble(PtxText(text, {}, path), args.target, cache=not args.no_cache)
        except PtxgenError as e:
            print(str(e), file=sys.stderr)
            rc = 1
            continue
        for w in res.warnings:
            print(str(w), file=sys.stderr)
        for fn, r in sorted(res.resources.items()):
            print(f"{path}: {fn} ({res.target}): {r.registers} registers, {r.shared_bytes} B shared, "
                  f"{r.stack_frame} B stack, {r.spill_stores}/{r.spill_loads} B spill stores/loads")
        if args.output:
            with open(args.output, "wb") as f:
                f.write(res.cubin)
    return rc


def _cmd_lint(args) -> int:
    """`ptxgen lint FILE...`: exit 0 without errors, 1 with errors, 2 for unreadable files or a bad target."""
    import json
    from .lint import lint_ptx, read_ptx
    from .target import Target
    target = None
    if args.target is not None:
        try:
            target = Target.parse(args.target)
        except ValueError as e:
            print(f"ptxgen lint: {e}", file=sys.stderr)
            return 2
    box_bytes = {}
    for item in args.box_bytes or ():
        name, sep, value = item.partition("=")
        try:
            n = int(value, 0) if sep and name else -1
        except ValueError:
            n = -1
        if n <= 0:
            print(f"ptxgen lint: --box-bytes wants NAME=BYTES with a positive byte count, not '{item}'",
                  file=sys.stderr)
            return 2
        box_bytes[name.strip()] = n
    unreadable = False
    found = []
    for path in args.files:
        try:
            if path == "-":
                raw = getattr(sys.stdin, "buffer", None)
                text = raw.read().decode("utf-8", errors="replace") if raw is not None else sys.stdin.read()
            else:
                text = read_ptx(path)
        except OSError as e:
            print(f"ptxgen lint: cannot read {path}: {e.strerror or e}", file=sys.stderr)
            unreadable = True
            continue
        found.extend(lint_ptx(text, "<stdin>" if path == "-" else path, target, box_bytes or None))
    if args.werror:
        for d in found:
            if d.severity == "warning":
                d.severity = "error"
    errors = sum(1 for d in found if d.severity == "error")
    warnings = sum(1 for d in found if d.severity == "warning")
    if args.format == "json":
        print(json.dumps([d.as_dict() for d in found], indent=1))
    else:
        for d in found:
            print(str(d))
        if found:
            print(f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}",
                  file=sys.stderr)
    if unreadable:
        return 2
    return 1 if errors else 0


def _cmd_layout(args) -> int:
    """`ptxgen layout mma|wgmma|ldmatrix|stmatrix SHAPE` or `ptxgen layout swizzle MODE`: print (or draw) a map."""
    from . import layout
    if args.family == "swizzle":
        m = layout.swizzle_map(args.shape)
    else:
        ins = f"{args.family}.{args.shape}"
        if args.family in ("ldmatrix", "stmatrix"):
            m = layout.fragment_map(ins, args.operand, args.type, num=args.num, trans=args.trans)
        else:
            m = layout.fragment_map(ins, args.operand, args.type)
    if args.png:
        m.png(args.png)  # LayoutError when the file cannot be written
        print(f"wrote {args.png}")
    if args.svg:
        try:
            with open(args.svg, "w") as f:
                f.write(m.svg())
        except OSError as e:
            print(f"ptxgen layout: cannot write {args.svg}: {e.strerror or e}", file=sys.stderr)
            return 2
        print(f"wrote {args.svg}")
    if not (args.svg or args.png):
        try:
            print(m.text() if args.family == "swizzle" else m.text(cell=args.cell))
            sys.stdout.flush()
        except BrokenPipeError:  # `ptxgen layout ... | head`: the reader left; not an error
            import os
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="ptxgen", description="Build, lint, assemble and run PTX from Python.")
    ap.add_argument("--version", action="version", version=f"ptxgen {__version__}")
    sub = ap.add_subparsers(dest="cmd", metavar="COMMAND")

    p = sub.add_parser("info", help="show ptxgen, ptxas and GPU availability")
    p.set_defaults(fn=_cmd_info)

    p = sub.add_parser("assemble", help="assemble PTX files with ptxas and print the resource report")
    p.add_argument("files", nargs="+", metavar="FILE", help="PTX files ('-' for standard input)")
    p.add_argument("--target", default="sm_90a", help="target architecture (default %(default)s)")
    p.add_argument("-o", "--output", help="write the cubin here (with one input file)")
    p.add_argument("--no-cache", action="store_true", help="do not use the cubin cache")
    p.set_defaults(fn=_cmd_assemble)

    p = sub.add_parser("lint", help="report what ptxas would reject in PTX files (no CUDA toolkit needed)")
    p.add_argument("files", nargs="+", metavar="FILE", help="PTX files, .gz too ('-' for standard input)")
    p.add_argument("--target", default=None,
                   help="lint for this target (e.g. sm_90a) instead of each module's own .target")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    p.add_argument("--werror", action="store_true", help="treat warnings as errors")
    p.add_argument("--box-bytes", action="append", metavar="NAME=BYTES", default=[],
                   help="bytes of one box of the tensor map parameter NAME (the full name, or what follows "
                        "'_param_'), so TMA tensor copies (cp.async.bulk.tensor) count in the mbarrier "
                        "expect_tx check (PTX-W-MBAR-TX); repeat it for each tensor map")
    p.set_defaults(fn=_cmd_lint)

    p = sub.add_parser("layout", help="show which thread and register hold each element of a tensor-core "
                                      "fragment, or where a swizzle puts each 16-byte chunk")
    p.add_argument("family", choices=("mma", "wgmma", "ldmatrix", "stmatrix", "swizzle"))
    p.add_argument("shape", metavar="SHAPE", help="m16n8k16, m64n64k16, m8n8 ... or, for swizzle, 32B/64B/128B")
    p.add_argument("--operand", help="a, b, c or d (mma); a or d (wgmma)")
    p.add_argument("--type", help="element type of the operand, e.g. f16, bf16, tf32, s8, f32")
    p.add_argument("--num", type=int, default=4, help="ldmatrix/stmatrix matrix count: 1, 2 or 4 (default 4)")
    p.add_argument("--trans", action="store_true", help="ldmatrix/stmatrix .trans")
    p.add_argument("--cell", choices=("label", "thread", "reg"), default="label",
                   help="cell text of the grid: T<thread>:<operand><i> (default), thread, or register.element")
    p.add_argument("--svg", metavar="FILE", help="write an SVG drawing instead of printing the grid")
    p.add_argument("--png", metavar="FILE", help="write a PNG drawing (cells coloured by thread, labels inside)")
    p.set_defaults(fn=_cmd_layout)
    return ap


def main(argv: Optional[List[str]] = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if not getattr(args, "fn", None):
        ap.print_help()
        return 2
    if getattr(args, "output", None) and len(args.files) != 1:
        ap.error("-o/--output takes exactly one input file")
    try:
        return args.fn(args)
    except PtxgenError as e:
        print(f"ptxgen: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (`ptxgen lint big.ptx | head`): stop quietly, as other command-line tools do;
        # stdout goes to /dev/null so that the interpreter's final flush does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":  # python3 -m ptxgen.cli works like python3 -m ptxgen
    sys.exit(main())
