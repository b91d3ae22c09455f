#!/usr/bin/env bash
# Issue 19 §6, the smaller gaps of the HF API, each answer field by field with its 4xx:
# a space's sdk (create_repo(space_sdk=…)) kept and returned; list_models(full=True)
# with siblings, cardData=True with cardData; expand=[…] keeping only the keys asked and
# refusing one no client sends; list_repo_commits(formatted=True) (expand[]=formatted);
# downloads in model_info agreeing with the listing sorted by downloads.
# Usage: repo_fields.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user sam
SAM="$(new_token sam --role write)"
start_server "$DATA" || die "hangar serve did not start"
AUTH=(-H "Authorization: Bearer $SAM")
JSON=(-H 'Content-Type: application/json')
ND=(-H 'Content-Type: application/x-ndjson')
b64() { printf '%s' "$1" | base64 -w0; }

# commit NAME SUMMARY DESCRIPTION PATH CONTENT: one commit on sam/NAME's main.
commit() {
  jq -cn --arg s "$2" --arg d "$3" '{key: "header", value: {summary: $s, description: $d}}' >"$T/c.ndjson"
  jq -cn --arg p "$4" --arg c "$(b64 "$5")" \
    '{key: "file", value: {path: $p, content: $c, encoding: "base64"}}' >>"$T/c.ndjson"
  req POST "$BASE/api/models/sam/$1/commit/main" "${AUTH[@]}" "${ND[@]}" --data-binary @"$T/c.ndjson"
}

section "a space's sdk"
req POST "$BASE/api/repos/create" "${AUTH[@]}" "${JSON[@]}" \
  --data-binary '{"name":"demo","type":"space","sdk":"gradio"}'
check_status "create a space with sdk gradio → 200" 200
req GET "$BASE/api/spaces/sam/demo"
check_json "  space info says sdk gradio" .sdk gradio
req GET "$BASE/api/spaces?author=sam"
check_json "  the listing too" '.[0].sdk' gradio
for body in '{"name":"s2","type":"space","sdk":"flask"}' '{"name":"s3","type":"space","sdk":5}' \
            '{"name":"m2","type":"model","sdk":"gradio"}'; do
  req POST "$BASE/api/repos/create" "${AUTH[@]}" "${JSON[@]}" --data-binary "$body"
  check_hf_error "create $body → 400" 400 BadRequest
  check_match "  ... naming sdk" "sdk" "$(hdr X-Error-Message)"
done
req GET "$BASE/api/spaces/sam/s2" "${AUTH[@]}"
check_hf_error "  and no space s2 was made" 404 RepoNotFound
req GET "$BASE/api/models/sam/m2" "${AUTH[@]}"
check_hf_error "  nor a model m2" 404 RepoNotFound

section "full listings, cardData"
must_create "$SAM" bert sam model false
commit bert "card" "" README.md $'---\nlicense: mit\nlibrary_name: transformers\n---\n# Bert\n'
check_status "commit a card to sam/bert → 200" 200
commit bert "weights" "" config.json '{"hidden": 8}'
must_create "$SAM" empty sam model false
req GET "$BASE/api/models?author=sam"
check_json_true "a plain listing has no siblings or cardData" 'all(.[]; has("siblings") | not) and all(.[]; has("cardData") | not)'
req GET "$BASE/api/models?author=sam&full=true"
check_status "full=true → 200" 200
check_json "  bert's siblings" '.[] | select(.id == "sam/bert") | [.siblings[].rfilename] | sort | join(",")' \
  ".gitattributes,README.md,config.json"
check_json "  its cardData" '.[] | select(.id == "sam/bert") | .cardData.license' mit
check_json "  the card's library" '.[] | select(.id == "sam/bert") | .library_name' transformers
check_json "  the new repo's siblings" '.[] | select(.id == "sam/empty") | [.siblings[].rfilename] | join(",")' \
  ".gitattributes"
req GET "$BASE/api/models?author=sam&cardData=true"
check_json "cardData=true: cardData" '.[] | select(.id == "sam/bert") | .cardData.library_name' transformers
check_json "  and no siblings" '[.[] | has("siblings")] | any' false

section "expand"
req GET "$BASE/api/models/sam/bert?expand=likes&expand=downloads"
check_status "info with expand=likes,downloads → 200" 200
check_json "  only _id, id and those keys" 'keys | sort | join(",")' "_id,downloads,id,likes"
req GET "$BASE/api/models/sam/bert?expand[]=siblings&expand[]=safetensors"
check_json "  expand[]=siblings keeps them; safetensors (none here) is left out" \
  'keys | sort | join(",")' "_id,id,siblings"
req GET "$BASE/api/models?author=sam&expand[]=cardData&expand[]=sha"
check_json "a listing with expand[]=cardData,sha" \
  '.[] | select(.id == "sam/bert") | keys | sort | join(",")' "_id,cardData,id,sha"
req GET "$BASE/api/spaces?author=sam&expand=sdk"
check_json "spaces: expand=sdk" '.[0] | keys | sort | join(",")' "_id,id,sdk"
for u in "models/sam/bert?expand=bogus" "models?expand=sdk" "datasets?expand=safetensors" \
         "models/sam/bert?expand[]=downloads&expand[]=x"; do
  req GET "$BASE/api/$u"
  check_hf_error "expand a key no client sends: /api/$u → 400" 400 BadRequest
  check_match "  ... naming it" "unknown expand key" "$(hdr X-Error-Message)"
done

section "formatted commits"
commit bert "Add <b>weights</b> & more" $'first line\nsecond <line>\n\nnext paragraph' w.txt "w"
req GET "$BASE/api/models/sam/bert/commits/main?expand[]=formatted"
check_status "commits with expand[]=formatted → 200" 200
check_json "  title as HTML" '.[0].formatted.title' "Add &lt;b&gt;weights&lt;/b&gt; &amp; more"
check_json "  message as HTML paragraphs" '.[0].formatted.message' \
  "<p>first line<br>second &lt;line&gt;</p><p>next paragraph</p>"
check_json "  the plain title stays" '.[0].title' "Add <b>weights</b> & more"
req GET "$BASE/api/models/sam/bert/commits/main"
check_json "without it: no formatted" '.[0] | has("formatted")' false
req GET "$BASE/api/models/sam/bert/commits/main?expand[]=diff"
check_hf_error "commits expand[]=diff → 400" 400 BadRequest

section "downloads: info agrees with the listing"
for _ in 1 2 3; do req GET "$BASE/sam/bert/resolve/main/config.json"; done
check_status "three downloads of sam/bert's config.json" 200
req GET "$BASE/api/models/sam/bert"
check_json "model_info at once: 3 downloads" .downloads 3
req GET "$BASE/api/models?author=sam&sort=downloads"
check_json "  the listing by downloads: the same" '.[0] | "\(.id):\(.downloads)"' "sam/bert:3"

finish
