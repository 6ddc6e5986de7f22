"""SM clock, board power and temperature sampled by `nvidia-smi` in the background, for benchmarks
that report what a kernel does per GHz of the clock it ran at (bench/gemm_sustained.py,
bench/mma_peak.py). Without nvidia-smi the sampler records nothing and every window is None."""
import shutil
import statistics
import subprocess
import threading
import time


class Sampler:
    """nvidia-smi in the background: (arrival time, SM MHz, W, degrees C) every `period_ms`."""

    def __init__(self, period_ms: int = 50):
        self.samples = []
        self.proc = None
        exe = shutil.which("nvidia-smi")
        if exe is None:
            return
        self.proc = subprocess.Popen([exe, "--query-gpu=clocks.sm,power.draw,temperature.gpu",
                                      "--format=csv,noheader,nounits", "-lms", str(period_ms)],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                mhz, watts, temp = (float(x) for x in line.split(","))
            except ValueError:
                continue
            self.samples.append((time.time(), mhz, watts, temp))

    def window(self, t0, t1):
        """Median (SM MHz, W, degrees C) of the samples inside [t0, t1], or None without any."""
        got = [s for s in self.samples if t0 <= s[0] <= t1]
        if not got:
            return None
        return tuple(statistics.median(s[i] for s in got) for i in (1, 2, 3))

    def stop(self):
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
