#!/usr/bin/env bash
# Installs the real MRI volumes the volume tests read (nibabel's bundled
# NIfTI test files) into the project venv .venv/ at the repository root.
# Idempotent; called by scripts/setup.sh --test. The tests fail, naming this
# script, when the files are missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=$root/.venv
if [[ ! -x $venv/bin/python ]]; then
    echo "setup: creating the Python venv $venv"
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import nibabel' 2>/dev/null; then
    echo "setup: installing the test volumes (nibabel) into $venv"
    "$venv/bin/python" -m pip install -q -r "$root/tests/data/volumes/requirements.txt"
fi
