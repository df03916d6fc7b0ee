#!/usr/bin/env bash
# Installs what wavelane needs on a Debian machine that has Rust (rustup).
# Idempotent: installs only what is missing, so it is cheap to run every time.
#
#   scripts/setup.sh          build + run needs: shader compiler, Vulkan loader and lavapipe
#   scripts/setup.sh --test   also the test peers: OpenJPEG, OpenJPH, ffmpeg, QEMU,
#                             the Vulkan validation layer, the Cortex-M target
set -euo pipefail

want_test=0
[[ "${1:-}" == "--test" ]] && want_test=1

packages=(glslc spirv-tools libvulkan1 mesa-vulkan-drivers)
if [[ $want_test == 1 ]]; then
    # python3-venv: the test volumes' venv (scripts/fetch-test-volumes.sh).
    python3 -c 'import venv, ensurepip' 2>/dev/null || packages+=(python3-venv)
    packages+=(vulkan-tools vulkan-validationlayers libopenjp2-tools openjph-tools ffmpeg
               qemu-system-arm binutils-arm-none-eabi)
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
if [[ $want_test == 1 ]]; then
    # Real MRI volumes for the volume tests, into the project venv .venv/.
    "$(dirname "$0")/fetch-test-volumes.sh"
fi
echo "setup: ready"
