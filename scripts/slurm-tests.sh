#!/usr/bin/env bash
# Runs the real-cluster Slurm tests (tests/slurm.rs) on the single-machine cluster of
# scripts/local-slurm.sh: starts it (installing the Debian packages when missing, which needs
# root), runs the tests, and stops it again if this script started it.
#
# When the cluster cannot be started the tests are reported SKIPPED with the reason, and this
# script succeeds — unless SCHEDLAB_REQUIRE_SLURM=1 (set by .ci/run), which turns the skip into
# a failure: CI can never pass without them. The same holds for the cluster's accounting
# (slurmdbd and MariaDB), which the sacct import test alone needs: without it the other tests
# still run.
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}
slurm=scripts/local-slurm.sh

started_here=0
if ! $slurm status 2>/dev/null; then
  if ! out=$($slurm start 2>&1); then
    reason=$(printf '%s\n' "$out" | grep -v '^export ' | tail -1)
    if [[ ${SCHEDLAB_REQUIRE_SLURM:-0} == 1 ]]; then
      echo "slurm tests: FAILED: no local Slurm cluster could be started: $reason" >&2
      exit 1
    fi
    echo "slurm tests: SKIPPED: no local Slurm cluster could be started: $reason" >&2
    exit 0
  fi
  started_here=1
fi
if [[ $started_here == 1 ]]; then
  trap '$slurm stop' EXIT
fi
eval "$($slurm env)"
export SLURM_CONF
# The sacct test needs the cluster's accounting (slurmdbd on MariaDB): without it, that test
# alone is skipped with the reason, or fails the run under SCHEDLAB_REQUIRE_SLURM=1.
skip=()
if ! why=$($slurm accounting 2>&1); then
  if [[ ${SCHEDLAB_REQUIRE_SLURM:-0} == 1 ]]; then
    echo "slurm tests: FAILED: no Slurm accounting (slurmdbd) for the sacct test: $why" >&2
    exit 1
  fi
  echo "slurm tests: sacct test SKIPPED: no Slurm accounting (slurmdbd): $why" >&2
  skip=(--skip sacct)
fi
$CARGO test --release --locked --test slurm -- --ignored --test-threads=1 "${skip[@]}"
