#!/bin/bash
# Re-record the real-fio fixtures of tests/test_fio_parse.py (fio 3.x):
#   bash tests/data/fio/record.sh
# Runs on a 64 MiB file in a temporary directory; writes *.json and *.log here.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FIO_FIXTURE_FILE="$tmp/fixture.dat"
cd "$tmp"
for job in seq-rand clones; do
    fio --output-format=json --output="$here/$job.json" "$here/$job.fio"
done
cp ./*.log "$here/"
# Interrupted run: SIGINT to fio's process group 2.5 s in.
setsid fio --output-format=json --output="$here/interrupted.json" "$here/interrupted.fio" &
pid=$!
sleep 2.5
kill -INT -- "-$pid"
wait "$pid" || true
