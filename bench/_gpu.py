"""The start every GEMM benchmark shares: the GPU's context with cuBLAS's TF32 shortcut off (the
reference must multiply in bf16 -> f32 like the kernels), or, without a GPU, the reason printed."""


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


def hopper_kind(text: str):
    """A "hopper:FIELDS[@SPLIT]" kernel kind: (gemm_hopper Config, m_split or None). FIELDS are
    Config.parse's (e.g. nt:1:3:1:8:64:256:tma:192); @SPLIT fixes a bm=192 kernel's m_split instead of
    split_for's choice. Raises ValueError naming what is wrong."""
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


def parse_kinds(ap, text: str, known):
    """--kernels: (the kinds in order, {each hopper:FIELDS[@SPLIT] kind: (Config, m_split)}); anything else
    unknown, or a bad hopper: kind, ends the program through ap.error."""
    kinds = text.split(",")
    bad = [x for x in kinds if x not in known and not x.startswith("hopper:")]
    if bad:
        ap.error(f"unknown kernel(s) {', '.join(bad)}; choose from {', '.join(known)}, or hopper:FIELDS[@SPLIT]")
    extra = {}
    for x in kinds:
        if x.startswith("hopper:"):
            try:
                extra[x] = hopper_kind(x)
            except ValueError as e:
                ap.error(str(e))
    return kinds, extra
