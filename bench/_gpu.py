"""The start every GEMM benchmark shares: the GPU's context with cuBLAS's TF32 shortcut off (the
reference must multiply in bf16 -> f32 like the kernels), or, without a GPU, the reason printed."""


def int_list(ap, name: str, text: str, lo: int, what: str) -> list:
    """A comma-separated option of whole numbers >= lo (e.g. --sizes 4096,6144); anything else ends with
    the parser's usage error "{name} takes {what}; got {text!r}"."""
    try:
        vals = [int(x) for x in text.split(",")]
    except ValueError:
        vals = []
    if not vals or any(v < lo for v in vals):
        ap.error(f"{name} takes {what}; got {text!r}")
    return vals


def mnk(text: str) -> tuple:
    """(M, N, K) from "MxNxK" (e.g. 4096x4096x4096); ValueError for anything else. The scripts that take
    sizes say in their own usage error which option was wrong."""
    dims = tuple(int(v) for v in text.split("x"))
    if len(dims) != 3:
        raise ValueError(f"{text!r} is not MxNxK")
    return dims


def add_layout_option(ap) -> None:
    """--layout nt|nn: the product the script's inputs are made for (see b_shape and as_kn)."""
    ap.add_argument("--layout", choices=("nt", "nn"), default="nt",
                    help="nt: C = A @ B^T, B stored N x K (default); nn: C = A @ B, B stored K x N")


def b_shape(layout: str, n: int, k: int) -> tuple:
    """How B is stored: N x K for nt (C = A @ B^T), K x N for nn (C = A @ B)."""
    return (n, k) if layout == "nt" else (k, n)


def as_kn(b, layout: str):
    """B as stored (b_shape) seen as the K x N right-hand side of C = A @ B (a view, no copy)."""
    return b.t() if layout == "nt" else b


def gpu_or_reason():
    """(torch, ptxgen context) or None after printing why no GPU can be used."""
    from ptxgen.runtime import get_context, no_gpu_reason
    reason = no_gpu_reason()
    if reason is not None:
        print(f"no GPU: {reason}")
        return None
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    return torch, get_context()


# the benchmarks' named gemm_hopper kinds (all nt: C = A @ B^T): kind -> Config's fields after the layout
HOPPER_NAMED = {
    "hopper": dict(cluster=1),                      # no cluster, the default (TMA-store) epilogue
    "hopper-storer": dict(cluster=1, epi="storer"),
    "hopper-c2": dict(cluster=2),
    "hopper-m256": dict(cluster=1, stages=3, bm=256, bn=192),
    "hopper-m192": dict(cluster=1, stages=3, bm=192),
    "hopper-m192h0": dict(cluster=1, stages=3, bm=192, hold=0),
    "hopper-m192ring": dict(cluster=1, stages=4, bm=192, epi="ring"),
    "hopper-m192k32": dict(cluster=1, stages=4, bk=32, bm=192),
    "hopper-p0": dict(cluster=1, stages=3, group=16, bm=192, producer=0),
    "hopper-p0h0": dict(cluster=1, stages=3, group=16, bm=192, hold=0, producer=0),
    "hopper-p0n192": dict(cluster=1, stages=3, group=16, bm=192, bn=192, producer=0),
    "hopper-sk": dict(cluster=1, stages=3, group=16, bm=192, bn=192, hold=0, producer=0, sk=1),
    "hopper-sk128": dict(cluster=1, lag=0, hold=0, sk=1),   # stream-K in the 128 x 256 kernel
    "hopper-sk2": dict(cluster=1, lag=0, hold=0, sk=2),     # ... each part summing a slice of a split tile
    "hopper-sk3": dict(cluster=1, lag=0, hold=0, sk=3),     # ... a tile's parts one cluster, summed in shared memory
    "hopper-p0n192c2": dict(cluster=2, stages=3, group=16, bm=192, bn=192, producer=0),   # A shared by 2 CTAs
    "hopper-p0c2": dict(cluster=2, stages=3, group=16, bm=192, hold=0, producer=0),   # held: slower (LOG 12)
    "hopper-p0n192lw": dict(cluster=1, stages=3, group=16, bm=192, bn=192, producer=0, lwarp=1),
    "hopper-p0n192c2lw": dict(cluster=2, stages=3, group=16, bm=192, bn=192, producer=0, lwarp=1),
}


def hopper_named(layout: str = "nt"):
    """{kind: gemm_hopper Config} for every kind of HOPPER_NAMED, in `layout` ("nt" or "nn")."""
    import gemm_hopper as h
    return {kind: h.Config(layout, **fields) for kind, fields in HOPPER_NAMED.items()}


def hopper_kind(text: str, h=None):
    """A "hopper:FIELDS[@SPLIT]" kernel kind: (gemm_hopper Config, m_split or None). FIELDS are
    Config.parse's (e.g. nt:1:3:1:8:64:256:tma:192); @SPLIT fixes a bm=192 kernel's m_split instead of
    split_for's choice. h: the gemm_hopper module whose Config it is (default: gemm_hopper). Raises
    ValueError naming what is wrong."""
    if h is None:
        import gemm_hopper as h
    if not text.startswith("hopper:"):
        raise ValueError(f"{text!r} is not hopper:FIELDS[@SPLIT]")
    fields, _, split = text[len("hopper:"):].partition("@")
    cfg = h.Config.parse(fields)
    if not split:
        return cfg, None
    if not split.isdigit() or int(split) % 192 or cfg.bm != 192:
        raise ValueError(f"{text!r}: @SPLIT is a row count (a multiple of 192) for bm=192 kernels only")
    return cfg, int(split)


def ampere_kind(text: str):
    """An "ampere:FIELDS" (one CTA per tile) or "ampere-pers:FIELDS" (gemm_ampere's persistent grid)
    kernel kind: (gemm_ampere Tile, persistent). FIELDS are Tile's fields in order, colon-separated
    (e.g. 256:64:3:8:smem:1); fields left out keep Tile's defaults. Raises ValueError naming what is
    wrong."""
    import gemm_ampere as g
    head, sep, fields = text.partition(":")
    if head not in ("ampere", "ampere-pers") or not sep or not fields:
        raise ValueError(f"{text!r} is not ampere:FIELDS or ampere-pers:FIELDS")
    return g.Tile.parse(fields), head == "ampere-pers"


def ampere_kernels(arch: str, kinds, layout: str = "nt"):
    """{kind: (Function, Tile, persistent)} for {kind: (Tile, persistent)}: the `layout` ("nt" or "nn")
    kernel of one module per distinct Tile."""
    import gemm_ampere as g
    from ptxgen.runtime import load_module
    funcs = {}
    for tile, _ in kinds.values():
        if tile not in funcs:
            funcs[tile] = g.prepare(load_module(g.build(arch, tile).emit()), layout, tile)
    return {kind: (funcs[tile], tile, pers) for kind, (tile, pers) in kinds.items()}


def parse_kinds(ap, text: str, known, layout: str = None):
    """--kernels: (the kinds in order, {each hopper:FIELDS[@SPLIT] kind: (Config, m_split)},
    {each ampere:FIELDS or ampere-pers:FIELDS kind: (Tile, persistent)}); anything else unknown, or a
    bad hopper: or ampere: kind, ends the program through ap.error, as does a hopper:FIELDS kind of
    another layout than `layout` (when given: the layout the script's inputs are made for)."""
    kinds = text.split(",")
    prefixes = ("hopper:", "ampere:", "ampere-pers:")
    bad = [x for x in kinds if x not in known and not x.startswith(prefixes)]
    if bad:
        ap.error(f"unknown kernel(s) {', '.join(bad)}; choose from {', '.join(known)}, hopper:FIELDS[@SPLIT], "
                 "ampere:FIELDS or ampere-pers:FIELDS")
    hopper, ampere = {}, {}
    for x in kinds:
        try:
            if x.startswith("hopper:"):
                hopper[x] = hopper_kind(x)
                if layout is not None and hopper[x][0].layout != layout:
                    raise ValueError(f"{x}: a {hopper[x][0].layout} kernel, but --layout is {layout}")
            elif x.startswith(prefixes):
                ampere[x] = ampere_kind(x)
        except ValueError as e:
            ap.error(str(e))
    return kinds, hopper, ampere
