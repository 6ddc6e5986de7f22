"""The scripts under samples/ loaded as modules, for the tests."""
import importlib.util
import os

SAMPLES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples")


def load_sample(name):
    """samples/<name>.py as a fresh module (its `if __name__ == "__main__"` part does not run)."""
    spec = importlib.util.spec_from_file_location(f"sample_{name}", os.path.join(SAMPLES_DIR, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
