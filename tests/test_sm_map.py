"""bench/sm_map.py: its kernel lints clean and assembles, the GPC groups merge overlapping clusters, and
bad arguments end with a usage error (its GPU part runs on the device, not in the tests)."""
import pytest

from _samples import load_bench

sm = load_bench("sm_map")


def test_kernel_lints_clean_and_stores_the_smid():
    from ptxgen.lint import lint_ptx
    text = str(sm.build().emit())
    assert lint_ptx(text) == []
    assert "%smid" in text and "st.global.u32" in text


@pytest.mark.ptxas
def test_kernel_assembles():
    from ptxgen.ptxas import assemble
    res = assemble(sm.build().emit(), "sm_90a", cache=False)
    assert "sm_map" in res.resources and not res.warnings


def test_merge_groups_joins_sets_that_share_an_sm():
    got = sm.merge_groups([{0, 1}, {16, 17}, {1, 16}, {4, 5}, {5}, {9}])
    assert got == [[0, 1, 16, 17], [4, 5], [9]]
    assert sm.merge_groups([]) == []


@pytest.mark.parametrize("argv, match", [(["--clusters", "2,x"], "--clusters takes"), (["--ctas", "0"], "--ctas"),
                                          (["--smem-kib", "300"], "--smem-kib")])
def test_bad_arguments_end_with_a_usage_error(argv, match, capsys):
    with pytest.raises(SystemExit) as e:
        sm.main(argv)
    assert e.value.code == 2 and match in capsys.readouterr().err
