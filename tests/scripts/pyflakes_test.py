"""scripts_pyflakes: pyflakes over every Python script of the folders given (names used and never
defined, imports left unused). Exit code 77, which CTest reads as skipped, where pyflakes is not
installed, unless TESSERA_REQUIRE_PYFLAKES=1 (CI), where that fails."""
import glob
import importlib.util
import os
import subprocess
import sys

if importlib.util.find_spec("pyflakes") is None:
    if os.environ.get("TESSERA_REQUIRE_PYFLAKES") == "1":
        sys.exit(f"pyflakes is not installed for {sys.executable} (TESSERA_REQUIRE_PYFLAKES=1)")
    print(f"pyflakes is not installed ({sys.executable} -m pip install pyflakes): skipped")
    sys.exit(77)
scripts = sorted(p for folder in sys.argv[1:] for p in glob.glob(os.path.join(folder, "*.py")))
if not scripts:
    sys.exit(f"no Python scripts under {' '.join(sys.argv[1:])}")
rc = subprocess.run([sys.executable, "-m", "pyflakes", *scripts]).returncode
print(f"pyflakes: {len(scripts)} scripts, {'clean' if rc == 0 else 'problems above'}")
sys.exit(rc)
