#!/usr/bin/env bash
# Installs what wavelane needs on a Debian machine that has Rust (rustup).
# Idempotent: installs only what is missing, so it is cheap to run every time.
#
#   scripts/setup.sh          build + run needs: shader compiler, Vulkan loader and lavapipe
#   scripts/setup.sh --test   also the test peers: OpenJPEG, OpenJPH, ffmpeg, QEMU,
#                             the Vulkan validation layer, the Cortex-M target, and
#                             the Python venv .venv/ with the package built into it
set -euo pipefail

want_test=0
[[ "${1:-}" == "--test" ]] && want_test=1

packages=(glslc spirv-tools libvulkan1 mesa-vulkan-drivers)
if [[ $want_test == 1 ]]; then
    packages+=(vulkan-tools vulkan-validationlayers libopenjp2-tools openjph-tools ffmpeg
               qemu-system-arm binutils-arm-none-eabi)
    # The Python tests' venv needs venv and ensurepip (Debian splits them off).
    if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
        packages+=(python3-venv)
    fi
fi

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if ((${#missing[@]})); then
    sudo=""
    if [[ $(id -u) != 0 ]]; then
        command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
        sudo="sudo"
    fi
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ $want_test == 1 ]]; then
    if ! rustup target list --installed | grep -qx thumbv7em-none-eabihf; then
        echo "setup: adding the thumbv7em-none-eabihf Rust target"
        rustup target add thumbv7em-none-eabihf
    fi
    rustup component list --installed | grep -q '^rustfmt' || rustup component add rustfmt
    rustup component list --installed | grep -q '^clippy' || rustup component add clippy
fi
# The Python package (python/, docs/python.md) and its tests: a venv at
# .venv/ with python/requirements-test.txt (the one list of the Python test
# packages), and the package built into it by maturin. Idempotent: pip runs
# only when the list changed, and maturin's cargo build is incremental (it
# shares CARGO_TARGET_DIR when that is set).
if [[ $want_test == 1 ]]; then
    root=$(cd "$(dirname "$0")/.." && pwd)
    venv=$root/.venv
    requirements=$root/python/requirements-test.txt
    if [[ ! -x $venv/bin/python ]]; then
        echo "setup: creating the Python venv $venv"
        python3 -m venv "$venv"
    fi
    stamp=$venv/.wavelane-requirements
    if ! cmp -s "$requirements" "$stamp"; then
        echo "setup: installing python/requirements-test.txt into .venv"
        "$venv/bin/python" -m pip install -q --upgrade pip
        "$venv/bin/python" -m pip install -q -r "$requirements"
        cp "$requirements" "$stamp"
    fi
    echo "setup: building the wavelane Python package into .venv (maturin develop)"
    (cd "$root/python" && VIRTUAL_ENV=$venv PATH=$venv/bin:$PATH \
        "$venv/bin/maturin" develop --quiet ${WAVELANE_PYTHON_RELEASE:+--release})
fi
echo "setup: ready"
