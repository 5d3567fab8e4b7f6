#!/usr/bin/env bash
# The test command: the Rust tests, then the Python package's tests.
#
#   scripts/test.sh              # everything (what CI runs, after fmt and clippy: .ci/run)
#   scripts/test.sh --python     # the Python tests only (after a change in python/)
#
# Needs a Rust toolchain and Python 3.9 or newer (`python3`, or $PYTHON). The Python side
# makes a virtual environment in target/py-venv from the package registry
# (python/requirements-test.txt: maturin, pytest, numpy, pandas, tqdm, matplotlib, Ray),
# builds the package's abi3 wheel with maturin (compiled in target/python) and installs it
# there, then runs pytest on python/tests. The environment is kept between runs and made
# anew when the requirements change or it is broken; nothing else is assumed to exist.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

if [[ "${1:-}" != "--python" ]]; then
    cargo test --workspace
fi

python=${PYTHON:-python3}
venv=$root/target/py-venv
reqs=$root/python/requirements-test.txt
stamp="$venv/.requirements-$(cksum < "$reqs" | cut -d' ' -f1)"
if [[ ! -f "$stamp" ]] || ! "$venv/bin/python" -c "import maturin, pytest, numpy, pandas" 2>/dev/null; then
    echo "scripts/test.sh: making the virtual environment $venv" >&2
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet -r "$reqs"
    touch "$stamp"
fi

# The wheel users get from `pip install ./python`, built from this tree.
rm -rf "$root/target/wheels"
CARGO_TARGET_DIR=$root/target/python "$venv/bin/maturin" build --release --quiet \
    -m python/Cargo.toml -o "$root/target/wheels"
"$venv/bin/python" -m pip install --quiet --force-reinstall --no-deps "$root"/target/wheels/flashbuf-*.whl

# The command-line program the tests compare with: the one `cargo test` built.
export FLASHBUF_BIN=${FLASHBUF_BIN:-$root/target/debug/flashbuf}
if [[ ! -x "$FLASHBUF_BIN" ]]; then
    cargo build --quiet --bin flashbuf
    FLASHBUF_BIN=$root/target/debug/flashbuf
fi
# From the repository's root, where no `flashbuf` directory hides the installed package.
"$venv/bin/python" -m pytest python/tests -q -p no:cacheprovider
