#!/usr/bin/env bash
# Why REF is not the fastest (issue 16): the experiments behind crates/reproduce/src/ref_diagnosis.md.
# Needs the release binary (cargo build --release) and python3; reads ../shared/traces when present.
# Usage: scripts/ref-diagnosis.sh [--adaptive] [--only headline,writemiss,...] [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/ref_diagnosis.py "$@"
