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
