"""ptxgen.target: the register-file rule that limits a CTA's size by its registers a thread (sm_70 and later)."""
import pytest

from ptxgen import target as T


@pytest.mark.parametrize("threads, regs", [
    (384, 168), (416, 128), (512, 128), (1024, 64), (385, 128), (513, 96), (257, 168),
    (1, 255), (32, 255), (256, 255),
])
def test_max_regs_for_threads(threads, regs):
    assert T.max_regs_for_threads(threads) == regs


@pytest.mark.parametrize("regs, threads", [
    # measured on an H200 (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK): 130 registers -> 384, 127 -> 512
    (130, 384), (127, 512), (128, 512), (129, 384), (168, 384), (169, 256), (255, 256), (64, 1024), (1, 1024),
    (72, 896),
])
def test_max_threads_for_regs(regs, threads):
    assert T.max_threads_for_regs(regs) == threads


def test_the_two_agree_with_the_rule_everywhere():
    """A CTA launches iff ceil(warps / 4) * roundup(regs, 8) * 32 <= 16384."""
    for threads in range(1, 1025):
        most = T.max_regs_for_threads(threads)
        assert most == 255 or most % 8 == 0
        per = -(-(-(-threads // 32)) // 4)
        assert T.warps_per_subpartition(threads) == per
        for regs in range(1, 256):
            fits = per * (-(-regs // 8) * 8) * 32 <= 16384
            assert fits == (regs <= most) == (threads <= T.max_threads_for_regs(regs)), (threads, regs)
            assert (T.cta_register_limit(threads, regs) is None) == fits


def test_cta_register_limit_says_why():
    assert T.cta_register_limit(416, 128) is None
    assert T.cta_register_limit(416, 152) == ("a CTA of 416 threads puts 4 warps on one of the SM's four "
                                              "16384-register files, so it launches only at 128 registers a "
                                              "thread or fewer")
    with pytest.raises(ValueError, match="threads must be at least 1"):
        T.cta_register_limit(0, 64)
    with pytest.raises(ValueError, match="regs must be at most 255, not 300"):
        T.cta_register_limit(416, 300)


@pytest.mark.parametrize("fn, value, match", [
    (T.max_regs_for_threads, 0, "threads must be at least 1, not 0"),
    (T.max_regs_for_threads, -32, "threads must be at least 1"),
    (T.max_regs_for_threads, 1025, "threads must be at most 1024, not 1025"),
    (T.max_regs_for_threads, 416.0, "threads must be an int, not float"),
    (T.max_regs_for_threads, "416", "threads must be an int, not str"),
    (T.max_regs_for_threads, True, "threads must be an int, not bool"),
    (T.max_threads_for_regs, 0, "regs must be at least 1, not 0"),
    (T.max_threads_for_regs, 256, "regs must be at most 255, not 256"),
    (T.max_threads_for_regs, None, "regs must be an int, not NoneType"),
    (T.warps_per_subpartition, 2048, "threads must be at most 1024"),
])
def test_bad_input_names_the_problem(fn, value, match):
    with pytest.raises(ValueError, match=match):
        fn(value)
