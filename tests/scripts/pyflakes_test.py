"""scripts_pyflakes: pyflakes over every Python script of a folder (names used and never defined,
imports left unused). Exit code 77, which CTest reads as skipped, where pyflakes is not installed."""
import glob
import importlib.util
import os
import subprocess
import sys

if importlib.util.find_spec("pyflakes") is None:
    print("pyflakes is not installed (python3 -m pip install pyflakes): skipped")
    sys.exit(77)
scripts = sorted(glob.glob(os.path.join(sys.argv[1], "*.py")))
if not scripts:
    sys.exit(f"no Python scripts under {sys.argv[1]}")
rc = subprocess.run([sys.executable, "-m", "pyflakes", *scripts]).returncode
print(f"pyflakes: {len(scripts)} scripts, {'clean' if rc == 0 else 'problems above'}")
sys.exit(rc)
