"""The kernel kinds the GEMM benchmarks take on the command line (bench/_gpu.py): hopper:FIELDS[@SPLIT],
ampere:FIELDS and ampere-pers:FIELDS name a configuration, and a bad one ends with a message naming it."""
import argparse
import dataclasses
import os

import pytest

from _samples import SAMPLES_DIR, load_bench

gpu = load_bench("_gpu")


@pytest.fixture(autouse=True)
def _samples_importable(monkeypatch):
    # the bench scripts put samples/ on sys.path before they parse their arguments
    monkeypatch.syspath_prepend(SAMPLES_DIR)


@pytest.fixture
def g():
    import gemm_ampere
    return gemm_ampere


def test_ampere_kinds_name_a_tile_and_its_grid(g):
    tile, pers = gpu.ampere_kind("ampere-pers:256:64:3:8:smem:1")
    assert (tile.bn, tile.bk, tile.stages, tile.warps, tile.epi, tile.min_blocks, pers) == (256, 64, 3, 8, "smem", 1, True)
    tile, pers = gpu.ampere_kind("ampere:128:32")
    assert (tile.bn, tile.bk, tile.stages, pers) == (128, 32, g.Tile().stages, False)


@pytest.mark.parametrize("text, match", [
    ("ampere", "is not ampere:FIELDS"), ("ampere:", "is not ampere:FIELDS"), ("amper:256", "is not ampere:FIELDS"),
    ("ampere:256:32:4:8:smem:1:x", "group must be a whole number"), ("ampere:192", "tile options"),
    ("ampere:256:32:4:8:smem:1:16:2", "overlap must be 0 or 1")])
def test_bad_ampere_kinds_say_what_is_wrong(text, match):
    with pytest.raises(ValueError, match=match):
        gpu.ampere_kind(text)


def test_an_ampere_kind_with_a_field_too_many_says_how_many_there_are(g):
    n = len(g.Tile.__dataclass_fields__)
    with pytest.raises(ValueError, match=f"expected 1 to {n} colon-separated tile fields"):
        gpu.ampere_kind("ampere:" + ":".join(["256"] * (n + 1)))


def test_parse_kinds_splits_the_kinds_and_rejects_unknown_ones(capsys):
    ap = argparse.ArgumentParser(prog="bench")
    kinds, hopper, ampere = gpu.parse_kinds(ap, "cublas,hopper:nt:1:3:1:8:64:256:tma:192,ampere-pers:256:64:3",
                                            ("cublas",))
    assert kinds[0] == "cublas" and list(hopper) == [kinds[1]] and list(ampere) == [kinds[2]]
    assert hopper[kinds[1]][0].bm == 192 and ampere[kinds[2]][0].bk == 64
    for bad in ("cublas,nope", "ampere:7"):
        with pytest.raises(SystemExit):
            gpu.parse_kinds(ap, bad, ("cublas",))
    err = capsys.readouterr().err
    assert "unknown kernel(s) nope" in err and "tile options" in err


@pytest.mark.parametrize("script, argv, message", [
    ("gemm_profile", ["--ctas", "0"], "--ctas must be at least 1"),
    ("gemm_profile", ["--launches", "0"], "--launches must be at least 1"),
    ("gemm_profile", ["--size", "64x64"], "is not MxNxK"),
    ("gemm_profile", ["--kernels", "hopper-sk,nope"], "unknown kernel(s) nope"),
    ("gemm_profile", ["--layout", "nn", "--kernels", "hopper:nt:1:3:1:8:64:256:tma:192"],
     "a nt kernel, but --layout is nn"),
    ("gemm_profile", ["--layout", "tt"], "invalid choice: 'tt'"),
    ("gemm_sustained", ["--layout", "tn"], "invalid choice: 'tn'"),
    ("gemm_sustained", ["--layout", "nn", "--kernels", "cublas,hopper:nt:1:4:0"], "a nt kernel, but --layout is nn"),
    ("gemm_sustained", ["--seconds", "0"], "--seconds must be > 0"),
    ("gemm_sustained", ["--sizes", "64x64"], "--sizes takes MxNxK"),
    ("gemm_sustained", ["--batch", "0"], "--batch must be >= 1"),
    ("gemm_variants", ["--sizes", "256x383x1024"], "multiples of 8"),
    ("gemm_variants", ["--sizes", "64x64"], "--sizes takes MxNxK"),
    ("gemm_variants", ["--sizes", "256x384x1024", "--variants", "hopper:nt:1:4:0:8:64:128:tma:128:0:0:0:auto:1:3:0:0:1+pdl"],
     "+pdl does not take a traced configuration"),
    ("gemm_variants", ["--sizes", "256x384x1024", "--variants", "auto:99"], "auto:I takes an index of auto_configs"),
    ("gemm_variants", ["--sizes", "256x384x1024", "--variants", "choose,nope"], "unknown variant 'nope'"),
    ("gemm_variants", ["--sizes", "256x384x1024", "--variants", "hopper:nn:1"], "a nn kernel, but --layout is nt"),
    ("gemm_variants", ["--sizes", "256x384x1024", "--variants", "hopper:nt:1:4:0:8:64:96"], "bn = 96"),
    ("gemm_variants", ["--sizes", "256x384x1024", "--variants", "choose,choose"], "names a variant twice"),
    ("gemm_variants", ["--sizes", "256x384x1024", "--passes", "0"], "--passes takes a whole number >= 1"),
    ("gemm_variants", ["--sizes", "256x384x1024", "--variants", "choose,base:choose"],
     "base:VARIANT needs --baseline FILE"),
    ("gemm_variants", ["--sizes", "256x384x1024", "--baseline", "/nonexistent/gemm_hopper.py"],
     "--baseline /nonexistent/gemm_hopper.py: cannot load it as gemm_hopper: no such file")])
def test_gemm_scripts_refuse_bad_arguments_before_touching_a_gpu(script, argv, message, capsys):
    with pytest.raises(SystemExit) as ei:
        load_bench(script).main(argv)
    assert ei.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("text, want", [("4096x4096x4096", (4096, 4096, 4096)), ("8x16x24", (8, 16, 24)),
                                        ("64x64", None), ("1x2x3x4", None), ("4096", None), ("ax2x3", None), ("", None)])
def test_mnk_reads_three_dimensions_or_raises(text, want):
    if want is None:
        with pytest.raises(ValueError):
            gpu.mnk(text)
    else:
        assert gpu.mnk(text) == want


def test_parse_kinds_holds_hopper_kinds_to_the_inputs_layout(capsys):
    ap = argparse.ArgumentParser(prog="bench")
    _, hopper, _ = gpu.parse_kinds(ap, "cublas,hopper:nn:1:4:0", ("cublas",), "nn")
    assert hopper["hopper:nn:1:4:0"][0].layout == "nn"
    with pytest.raises(SystemExit):
        gpu.parse_kinds(ap, "cublas,hopper:nt:1:4:0", ("cublas",), "nn")
    assert "hopper:nt:1:4:0: a nt kernel, but --layout is nn" in capsys.readouterr().err


def test_the_named_hopper_kinds_come_in_either_layout():
    for layout in ("nt", "nn"):
        named = gpu.hopper_named(layout)
        assert set(named) == set(gpu.HOPPER_NAMED)
        for cfg in named.values():
            assert cfg.layout == layout and cfg.check() is cfg          # a configuration the kernel takes


def test_b_is_stored_and_read_as_the_layout_says():
    class Stored:                            # a tensor that says whether it was transposed
        def __init__(self, transposed=False):
            self.transposed = transposed

        def t(self):
            return Stored(not self.transposed)

    assert gpu.b_shape("nt", 3, 5) == (3, 5) and gpu.b_shape("nn", 3, 5) == (5, 3)
    assert gpu.as_kn(Stored(), "nt").transposed and not gpu.as_kn(Stored(), "nn").transposed
    ap = argparse.ArgumentParser(prog="bench")
    gpu.add_layout_option(ap)
    assert ap.parse_args([]).layout == "nt" and ap.parse_args(["--layout", "nn"]).layout == "nn"


@pytest.mark.parametrize("value", ["-1", "nan"])
def test_gemm_settle_takes_seconds_not_below_zero(value, capsys):
    gemm = load_bench("gemm")
    with pytest.raises(SystemExit) as e:
        gemm.main(["--settle", value])
    assert e.value.code == 2 and "--settle takes seconds >= 0" in capsys.readouterr().err


def test_gemm_variants_resolves_each_kind_of_variant():
    import gemm_hopper as h
    gv = load_bench("gemm_variants")
    assert gv.variant_config("choose", 8192, 384, 8192) == h.choose(8192, 384, 8192)
    assert gv.variant_config("auto:10", 8192, 384, 8192, "nn") == h.auto_configs("nn")[10]
    cfg = gv.variant_config("hopper:nt:1:4:0:8:64:192:direct", 8192, 384, 8192)
    assert (cfg.bn, cfg.epi, cfg.lag) == (192, "direct", 0)
    pdl = gv.variant_config("choose+pdl", 128, 128, 2048)
    assert pdl.pdl == 1 and pdl == dataclasses.replace(h.choose(128, 128, 2048), pdl=1)
    assert gv.variant_config("auto:3+pdl", 8192, 384, 8192).pdl == 1 and not h.auto_configs()[3].pdl
    args = gv.parse_args(["--sizes", "8192x384x8192,1536x1536x1536", "--variants", "choose,auto:0",
                          "--passes", "2", "--layout", "nn"])
    assert args.sizes == [(8192, 384, 8192), (1536, 1536, 1536)] and args.variants == ["choose", "auto:0"]
    assert (args.passes, args.batch, args.reps, args.layout) == (2, 20, 25, "nn")


def test_gemm_variants_resolves_base_variants_in_the_baseline_copy(tmp_path, capsys):
    """--baseline FILE loads another copy of gemm_hopper, and base:VARIANT is resolved there: a copy whose
    DEEP_STAGES is 5 picks five stages where gemm_hopper's choose picks six."""
    import gemm_hopper as h
    gv = load_bench("gemm_variants")
    with open(os.path.join(SAMPLES_DIR, "gemm_hopper.py")) as f:
        src = f.read()
    assert src.count("\nDEEP_STAGES = 6\n") == 1
    copy = tmp_path / "gemm_hopper_before.py"
    copy.write_text(src.replace("\nDEEP_STAGES = 6\n", "\nDEEP_STAGES = 5\n"))
    args = gv.parse_args(["--sizes", "8x4096x4096", "--variants", "base:choose,choose,base:auto:3+pdl",
                          "--baseline", str(copy)])
    base = args.baseline
    assert base is not h and base.__name__ == "gemm_hopper_baseline"
    assert gv.variant_config("choose", 8, 4096, 4096, base=base) == h.choose(8, 4096, 4096)
    assert h.choose(8, 4096, 4096).stages == 6
    picked = gv.variant_config("base:choose", 8, 4096, 4096, base=base)
    assert isinstance(picked, base.Config) and picked.stages == 5
    assert gv.variant_module("base:auto:3+pdl", base) == (base, "auto:3+pdl")
    pdl = gv.variant_config("base:auto:3+pdl", 8, 4096, 4096, base=base)
    assert isinstance(pdl, base.Config) and pdl.pdl == 1
    fields = gv.variant_config("base:hopper:nt:1:5:0:8:64:128", 8, 4096, 4096, base=base)
    assert isinstance(fields, base.Config) and (fields.stages, fields.bn) == (5, 128)
    with pytest.raises(ValueError, match="written once, at the front"):
        gv.variant_config("base:base:choose", 8, 4096, 4096, base=base)
    # a file that is not gemm_hopper at all, or fails when run, is refused by name
    bad = tmp_path / "bad.py"
    bad.write_text("x = 1 / 0\n")
    with pytest.raises(SystemExit) as ei:
        gv.parse_args(["--sizes", "8x4096x4096", "--baseline", str(bad)])
    assert ei.value.code == 2 and "running it raised ZeroDivisionError" in capsys.readouterr().err
    bad.write_text("def choose():\n    pass\n")
    with pytest.raises(SystemExit):
        gv.parse_args(["--sizes", "8x4096x4096", "--baseline", str(bad)])
    assert "it has no auto_configs" in capsys.readouterr().err


def test_gemm_variants_graph_captures_a_batch_over_the_rotated_sets():
    """--graph: each variant's batch is one capture of --batch calls on the capture's stream, rotating
    the three input sets; the set of the last call is the one whose product is checked."""
    gv = load_bench("gemm_variants")
    assert gv.parse_args(["--sizes", "256x384x1024", "--graph"]).graph
    assert not gv.parse_args(["--sizes", "256x384x1024"]).graph
    seen = []

    class Cap:
        stream, graph = "capture stream", "the graph"

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            seen.append("end")
            return False

    import types
    rt = types.SimpleNamespace(capture=Cap)
    bound = [lambda stream, i=i: seen.append((i, stream)) for i in range(3)]
    graph, last = gv._variant_graph(rt, bound, 5)
    assert seen == [(0, "capture stream"), (1, "capture stream"), (2, "capture stream"), (0, "capture stream"),
                    (1, "capture stream"), "end"]
    assert (graph, last) == ("the graph", 1)
