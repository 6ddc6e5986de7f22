#!/usr/bin/env bash
# The GPU step, run on a machine with an NVIDIA GPU: put ptxgen on the path (with lark from .whl/ when
# the machine lacks it), run the gpu test tier, then every sample under compute-sanitizer's
# memcheck, racecheck and synccheck. The logs are packed into $OUT/gpu-logs.tgz (or ./out/); a summary
# is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
LOG=/tmp/ptxgen-logs
rm -rf "$LOG"; mkdir -p "$LOG"
SITE=/tmp/ptxgen-site
if ! python3 -c "import lark" 2>/dev/null && [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --target "$SITE" .whl/lark-*.whl || exit 1
    export PYTHONPATH="$SITE:${PYTHONPATH:-}"
fi
# ptxgen runs from this checkout (grammars are read from grammar/ when the package is not installed)
export PYTHONPATH="$PWD:${PYTHONPATH:-}"
export PYTHONUNBUFFERED=1
nvidia-smi -L
python3 -c "import ptxgen, ptxgen.legality as L; L.grammar_text(); print('ptxgen from', ptxgen.__file__)" || exit 1
summary=()
python3 -m pytest -q -ra -m gpu tests -p no:cacheprovider 2>&1 | tee "$LOG/pytest_gpu.log"
summary+=("pytest -m gpu: exit ${PIPESTATUS[0]}: $(tail -n 1 "$LOG/pytest_gpu.log")")
for s in samples/*.py; do
    name=$(basename "$s" .py)
    python3 "$s" --out /tmp/ptxgen-out >"$LOG/$name.log" 2>&1
    summary+=("$name: plain run exit $?: $(grep -c '^\[check\]' "$LOG/$name.log") checks")
    for tool in memcheck racecheck synccheck; do
        PTXGEN_SAMPLE_QUICK=1 compute-sanitizer --tool "$tool" --error-exitcode 99 python3 "$s" --out /tmp/ptxgen-out \
            >"$LOG/$name.$tool.log" 2>&1
        rc=$?
        summary+=("$name under $tool: exit $rc: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOG/$name.$tool.log" | tail -n 1)")
    done
done
for b in ${BENCH:-}; do
    python3 "$b" 2>&1 | tee "$LOG/$(basename "$b" .py).bench.log"
done
mkdir -p "${OUT:-out}"
tar czf "${OUT:-out}/gpu-logs.tgz" -C "$LOG" .
echo
echo "== summary =="
printf '%s\n' "${summary[@]}"
