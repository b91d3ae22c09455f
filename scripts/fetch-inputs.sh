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
set -euo pipefail

INPUTS="${HANGAR_INPUTS:-$HOME/.cache/hangar-inputs}"
mkdir -p "$INPUTS"

TESS_SHA=7d4322bd2a7749724879683fc3912cb542f19906c83bcc1a52132556427170b2
VAD_SHA=a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28

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

if ! have "$INPUTS/silero_vad_legacy.onnx" "$VAD_SHA"; then
  echo "fetch-inputs: npm pack @ricky0123/vad-web@0.0.31" >&2
  (cd "$work" && npm pack --silent '@ricky0123/vad-web@0.0.31' >/dev/null)
  tar -xzf "$work"/ricky0123-vad-web-0.0.31.tgz -C "$work" package/dist/silero_vad_legacy.onnx
  cp "$work/package/dist/silero_vad_legacy.onnx" "$INPUTS/silero_vad_legacy.onnx.part"
  verify "$INPUTS/silero_vad_legacy.onnx.part" "$VAD_SHA"
  mv "$INPUTS/silero_vad_legacy.onnx.part" "$INPUTS/silero_vad_legacy.onnx"
fi

echo "$INPUTS"
