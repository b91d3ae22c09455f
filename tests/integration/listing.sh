#!/usr/bin/env bash
# Issue #4 card index and listings, with git and curl against a real `hangar serve`:
# README.md front matter pushed with git becomes tags / library_name / pipeline_tag of
# /api/models items and of model info, `filter` (all must match), `library` and
# `pipeline_tag` select on them, a push that changes the card re-indexes it, a malformed
# card never fails the push; GETs of /resolve count as downloads (HEAD, /raw and later
# range chunks do not), and sort=downloads / sort=trendingScore order by them, paging
# through Link without repeats.
# Usage: listing.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice
ALICE="$(new_token alice --role write)"
start_server "$DATA" || die "hangar serve did not start"
pass "server listening on $BASE"
HA="$(cred_helper alice "$ALICE")"
PAGES="$T/pages.json"

# push_readme NAME TEXT: clones (once) alice/NAME, writes README.md, commits, pushes main.
push_readme() {
  local w="$T/w-$1"
  if [[ ! -d "$w" ]]; then
    gitc "" clone -q "$BASE/alice/$1" "$w" 2>"$T/clone.err" || return 1
  fi
  printf '%s' "$2" >"$w/README.md"
  git -C "$w" add README.md && git -C "$w" commit -q -m "card" &&
    gitc "$HA" -C "$w" push -q origin main >"$T/push.out" 2>&1
}

for name in bert gpt plain broken; do must_create "$ALICE" "$name" alice model false; done
check_true "push bert's card" push_readme bert $'---\nlicense: mit\nlibrary_name: transformers\npipeline_tag: fill-mask\ntags: [bert, exbert]\ndatasets: [squad]\nlanguage: en\n---\n# BERT\n'
check_true "push gpt's card" push_readme gpt $'---\nlicense: mit\nlibrary_name: pytorch\npipeline_tag: text-generation\nlanguage: [en, fr]\n---\n# GPT\n'
check_true "push a README without front matter" push_readme plain $'# Plain\n\nNo card.\n'
check_true "a malformed card does not fail the push" push_readme broken $'---\nlicense: [mit\ntags: {\n---\n# Broken\n'

# names URL: the ids of every page of listing URL, space-separated, in order.
names() {
  get_all_pages "$1" || { echo "HTTP $ST"; return; }
  pjq '[.[].id] | join(" ")'
}

# ---------------------------------------------------------------------------------------
section "filters"
check_eq "filter=license:mit" "alice/gpt alice/bert" "$(names "$BASE/api/models?filter=license:mit&sort=id&direction=-1")"
check_eq "two filters must both match" "alice/bert" \
  "$(names "$BASE/api/models?filter=license:mit&filter=dataset:squad")"
check_eq "filter on a card tag" "alice/bert" "$(names "$BASE/api/models?filter=exbert")"
check_eq "filter nobody has" "" "$(names "$BASE/api/models?filter=license:mit&filter=nope")"
check_eq "library=transformers" "alice/bert" "$(names "$BASE/api/models?library=transformers")"
check_eq "pipeline_tag=text-generation" "alice/gpt" \
  "$(names "$BASE/api/models?pipeline_tag=text-generation")"
check_eq "filters combine with search and author" "alice/gpt" \
  "$(names "$BASE/api/models?filter=fr&author=alice&search=gp")"

req GET "$BASE/api/models?library=transformers"
check_json "item tags as the Hub derives them" '.[0].tags | join(",")' \
  "transformers,bert,exbert,fill-mask,en,dataset:squad,license:mit"
check_json "item library_name" '.[0].library_name' "transformers"
check_json "item pipeline_tag" '.[0].pipeline_tag' "fill-mask"
check_json "item downloads before any download" '.[0].downloads' "0"
req GET "$BASE/api/models?search=broken"
check_json "the malformed card is indexed as empty" '.[0].tags | length' "0"
check_json "... with no library_name" '.[0] | has("library_name")' "false"
req GET "$BASE/api/models/alice/gpt"
check_json "model info tags agree with the listing" '.tags | join(",")' \
  "pytorch,text-generation,en,fr,license:mit"

check_true "push bert's card without a license" push_readme bert $'---\nlibrary_name: transformers\n---\n# BERT v2\n'
check_eq "the push re-indexed the card" "alice/gpt" "$(names "$BASE/api/models?filter=license:mit")"

# ---------------------------------------------------------------------------------------
section "downloads and sorts"
for i in 1 2 3; do req GET "$BASE/alice/gpt/resolve/main/README.md"; done
check_status "GET /resolve" 200
req GET "$BASE/alice/bert/resolve/main/README.md"
for i in 1 2 3 4 5; do req HEAD "$BASE/alice/plain/resolve/main/README.md"; done
req GET "$BASE/alice/plain/raw/main/README.md"
req GET "$BASE/alice/plain/resolve/main/README.md" -H "Range: bytes=3-"
check_status "a later range chunk is served" 206
req GET "$BASE/alice/plain/resolve/main/README.md" -H "Range: bytes=0-0"

check_eq "sort=downloads" "alice/gpt alice/bert" \
  "$(names "$BASE/api/models?sort=downloads&limit=1" | cut -d' ' -f1-2)"
check_eq "sort=downloads pages through every repo once" "4" "$(pjq '[.[].id] | unique | length')"
check_eq "downloads counted: GETs only (3, 1, 0, 0)" "3 1 0 0" "$(pjq '[.[].downloads] | join(" ")')"
check_eq "sort=trendingScore" "alice/gpt alice/bert" \
  "$(names "$BASE/api/models?sort=trendingScore&limit=1" | cut -d' ' -f1-2)"
check_eq "sort=trendingScore pages through every repo once" "4" "$(pjq '[.[].id] | unique | length')"
check_eq "trendingScore reported" "3 1 0 0" "$(pjq '[.[].trendingScore] | join(" ")')"
req GET "$BASE/api/models/alice/gpt"
check_json "model info downloads" '.downloads' "3"

finish
