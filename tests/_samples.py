"""The scripts under samples/ (and bench/) loaded as modules, for the tests."""
import importlib.util
import os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SAMPLES_DIR = os.path.join(ROOT, "samples")
BENCH_DIR = os.path.join(ROOT, "bench")


def load_script(folder, name, prefix):
    """<folder>/<name>.py as a fresh module named <prefix>_<name> (its `if __name__ == "__main__"`
    part does not run)."""
    spec = importlib.util.spec_from_file_location(f"{prefix}_{name}", os.path.join(folder, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_sample(name):
    """samples/<name>.py as a fresh module."""
    return load_script(SAMPLES_DIR, name, "sample")


def load_bench(name):
    """bench/<name>.py as a fresh module."""
    return load_script(BENCH_DIR, name, "bench")


class RecordingFunction:
    """Stands in for a runtime Function in a sample's launch helpers: records what launch and bind
    are given (bind returns the string "bound")."""

    def __init__(self):
        self.calls = []

    def launch(self, *args, **kw):
        self.calls.append(("launch", args, kw))

    def bind(self, *args, **kw):
        self.calls.append(("bind", args, kw))
        return "bound"
