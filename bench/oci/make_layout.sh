#!/usr/bin/env bash
# Makes an OCI image layout for the skopeo rows of oci_bench.sh: LAYERS uncompressed layers
# of LAYER_MIB MiB of reproducible random bytes (AES-CTR keystream, one password per
# layer), an image config listing them as diff_ids, one image manifest, index.json naming
# it "v1" — so `skopeo copy oci:DIR:v1 docker://HOST/NAME:v1` copies it as is.
#
#   bench/oci/make_layout.sh DIR LAYERS LAYER_MIB      prints the manifest digest
set -euo pipefail

dir="$1" n="$2" mib="$3"
mkdir -p "$dir/blobs/sha256"
printf '{"imageLayoutVersion":"1.0.0"}' >"$dir/oci-layout"

# put FILE: moves FILE into the blob store, prints its sha256 hex.
put() {
  local d
  d="$(sha256sum "$1" | cut -d' ' -f1)"
  mv "$1" "$dir/blobs/sha256/$d"
  printf '%s' "$d"
}

layers="" diffs=""
for ((i = 1; i <= n; i++)); do
  (openssl enc -aes-128-ctr -nosalt -pbkdf2 -pass "pass:hangar-layer-$i" </dev/zero 2>/dev/null || true) |
    head -c $((mib << 20)) >"$dir/layer.tmp"
  d="$(put "$dir/layer.tmp")"
  layers+="${layers:+,}{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar\",\"digest\":\"sha256:$d\",\"size\":$((mib << 20))}"
  diffs+="${diffs:+,}\"sha256:$d\""
done

printf '{"architecture":"amd64","os":"linux","config":{},"rootfs":{"type":"layers","diff_ids":[%s]}}' \
  "$diffs" >"$dir/config.tmp"
config_size="$(stat -c %s "$dir/config.tmp")"
config="$(put "$dir/config.tmp")"
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[%s]}' \
  "$config" "$config_size" "$layers" >"$dir/manifest.tmp"
manifest_size="$(stat -c %s "$dir/manifest.tmp")"
manifest="$(put "$dir/manifest.tmp")"
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"v1"}}]}' \
  "$manifest" "$manifest_size" >"$dir/index.json"
echo "sha256:$manifest"
