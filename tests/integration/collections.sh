#!/usr/bin/env bash
# Issue 19 §6: collections end to end, with the requests huggingface_hub's hf_api.py sends
# (get_collection, list_collections, create_collection, update_collection_metadata,
# delete_collection, add_collection_item, update_collection_item, delete_collection_item):
# every answer checked field by field in the shapes its Collection and CollectionItem read,
# every 4xx with its body and that it changed nothing; private repos and collections never
# shown to those who may not see them; the profile and collection pages.
# Usage: collections.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup: ann (owner of org acme), bob, carl (acme read member); public and private repos"
DATA="$T/data"
mkdir -p "$DATA"
new_user ann
new_user bob
new_user carl
admin org create acme --owner ann >"$T/org.out" 2>&1 || die "admin org create acme" "$(cat "$T/org.out")"
admin org add-member acme carl --role read >"$T/org.out" 2>&1 || die "add-member" "$(cat "$T/org.out")"
ANN="$(new_token ann --role write)"
ANN_READ="$(new_token ann --role read)"
BOB="$(new_token bob --role write)"
CARL="$(new_token carl --role write)"
start_server "$DATA" || die "hangar serve did not start"
A=(-H "Authorization: Bearer $ANN")
B=(-H "Authorization: Bearer $BOB")
C=(-H "Authorization: Bearer $CARL")
J=(-H 'Content-Type: application/json')
must_create "$ANN" pub ann model false
must_create "$ANN" priv ann model true
must_create "$ANN" ds ann dataset false
must_create "$ANN" secret acme model true
must_create "$BOB" bm bob model false

# create JSON [curl args]: POST /api/collections as create_collection sends it.
create() { req POST "$BASE/api/collections" "${J[@]}" --data-binary "$1" "${@:2}"; }
# get SLUG [curl args]: get_collection.
get() { req GET "$BASE/api/collections/$1" "${@:2}"; }
# patch SLUG JSON [curl args]: update_collection_metadata.
patch() { req PATCH "$BASE/api/collections/$1" "${J[@]}" --data-binary "$2" "${@:3}"; }
# add SLUG JSON [curl args]: add_collection_item.
add() { req POST "$BASE/api/collections/$1/items" "${J[@]}" --data-binary "$2" "${@:3}"; }
# count_ann: how many collections ann has, as ann sees them.
count_ann() { req GET "$BASE/api/collections?owner=ann&limit=100" "${A[@]}"; jbody length; }

section "create_collection"
create '{"title": "My cool stuff", "namespace": "ann", "private": false, "description": "Contains a lot of cool stuff"}' "${A[@]}"
check_status "create_collection → 200" 200
SLUG="$(jbody .slug)"
ID="${SLUG##*-}"
check_match "  slug is ann/my-cool-stuff-<24 hex>" '^ann/my-cool-stuff-[0-9a-f]{24}$' "$SLUG"
check_json "  title" .title "My cool stuff"
check_json "  description" .description "Contains a lot of cool stuff"
check_json "  owner" '.owner | [.name, .type, .fullname, .avatarUrl, (._id | test("^[0-9a-f]{24}$"))] | tostring' \
  '["ann","user","ann","/avatars/ann.svg",true]'
check_json "  items []" '.items | tostring' '[]'
check_json "  private false" .private false
check_json "  theme default" .theme default
check_json "  upvotes 0" .upvotes 0
check_json "  position 0" .position 0
check_json "  lastUpdated is ISO 8601" '.lastUpdated | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$")' true
check_json "  shareUrl" .shareUrl "$BASE/collections/$SLUG"
create '{"title": "My cool stuff", "namespace": "ann", "private": true, "description": "other"}' "${A[@]}"
check_hf_error "the same title again → 409" 409 Conflict
check_json "  whose body names the existing slug (exists_ok reads it)" .slug "$SLUG"
get "$SLUG"
check_json "  and nothing changed" '[.description, .private] | tostring' '["Contains a lot of cool stuff",false]'
create '{"title": "Second", "namespace": "ann", "private": false}' "${A[@]}"
check_status "a second collection → 200" 200
SECOND="$(jbody .slug)"
check_json "  goes after the first (position 1)" .position 1
check_json "  without a description (None for the client)" 'has("description")' false
create '{"title": "Team picks", "namespace": "acme", "private": true}' "${A[@]}"
check_status "an org's private collection, by its admin → 200" 200
TEAM="$(jbody .slug)"
check_json "  owner is the org" '.owner | [.name, .type] | tostring' '["acme","org"]'

section "create_collection: bad input is refused and changes nothing"
BEFORE="$(count_ann)"
check_eq "ann has 2 collections" 2 "$BEFORE"
create '{"title": "x", "namespace": "ann"' "${A[@]}"
check_hf_error "malformed JSON → 400" 400 BadRequest
create '["a"]' "${A[@]}"
check_hf_error "a body that is not an object → 400" 400 BadRequest
create '{"namespace": "ann"}' "${A[@]}"
check_hf_error "no title → 400" 400 BadRequest
create '{"title": 12, "namespace": "ann"}' "${A[@]}"
check_hf_error "a title that is not a string → 400" 400 BadRequest
create '{"title": "t", "namespace": "ann", "private": "yes"}' "${A[@]}"
check_hf_error "private not a boolean → 400" 400 BadRequest
create "{\"title\": \"$(printf 'x%.0s' {1..61})\", \"namespace\": \"ann\"}" "${A[@]}"
check_hf_error "a title of 61 characters → 400" 400 BadRequest
check_match "  saying so" 'over 60 characters' "$(hdr X-Error-Message)"
create "{\"title\": \"$(printf 'é%.0s' {1..60})\", \"namespace\": \"ann\"}" "${A[@]}"
check_status "60 characters of 2 bytes each → 200 (characters, not bytes)" 200
LONG="$(jbody .slug)"
check_match "  its slug falls back to 'collection'" '^ann/collection-[0-9a-f]{24}$' "$LONG"
req DELETE "$BASE/api/collections/$LONG" "${A[@]}"
check_status "  (deleted again) → 200" 200
create '{"title": "\u200b \u200b", "namespace": "ann"}' "${A[@]}"
check_hf_error "an invisible title → 400" 400 BadRequest
check_match "  the title is empty" 'the title is empty' "$(hdr X-Error-Message)"
create '{"title": "txt\u202eexe.pdf", "namespace": "ann"}' "${A[@]}"
check_hf_error "a title with a direction override → 400" 400 BadRequest
create '{"title": "two\nlines", "namespace": "ann"}' "${A[@]}"
check_hf_error "a title of two lines → 400" 400 BadRequest
create "{\"title\": \"t\", \"namespace\": \"ann\", \"description\": \"$(printf 'd%.0s' {1..151})\"}" "${A[@]}"
check_hf_error "a description of 151 characters → 400" 400 BadRequest
create '{"title": "t", "namespace": "ann", "color": "red"}' "${A[@]}"
check_hf_error "an unknown field → 400" 400 BadRequest
create '{"title": "t", "namespace": "ann", "resourceGroupId": "0123456789abcdef01234567"}' "${A[@]}"
check_hf_error "resourceGroupId (no resource groups here) → 400" 400 BadRequest
create '{"title": "t", "namespace": "bob"}' "${A[@]}"
check_hf_error "in another user's namespace → 403" 403 Forbidden
create '{"title": "t", "namespace": "acme"}' "${C[@]}"
check_hf_error "in an org where carl only reads → 403" 403 Forbidden
create '{"title": "t", "namespace": "nobody"}' "${A[@]}"
check_hf_error "in a namespace nobody has → 403" 403 Forbidden
create '{"title": "t", "namespace": "ann"}'
check_hf_error "anonymous → 401" 401 "?"
create '{"title": "t", "namespace": "ann"}' -H "Authorization: Bearer $ANN_READ"
check_hf_error "a read token → 403" 403 "?"
check_eq "ann still has 2 collections" "$BEFORE" "$(count_ann)"

section "get_collection"
get "$SLUG"
check_status "anonymous get_collection → 200" 200
check_json "  slug" .slug "$SLUG"
check_json "  title" .title "My cool stuff"
get "ann/an-old-title-$ID"
check_status "the same id under other words (a renamed collection's old slug) → 200" 200
check_json "  answers the current slug" .slug "$SLUG"
get "bob/my-cool-stuff-$ID"
check_hf_error "the id under another namespace → 404" 404 -
get "ann/my-cool-stuff-c0000000000000000000ffff"
check_hf_error "an unknown id → 404" 404 -
get "ann/my-cool-stuff"
check_hf_error "a slug without an id → 404" 404 -
get "$TEAM"
check_hf_error "a private org collection, anonymous → 404" 404 -
get "$TEAM" "${B[@]}"
check_hf_error "  bob (not in acme) → 404" 404 -
get "$TEAM" "${C[@]}"
check_status "  carl (acme read member) → 200" 200

section "update_collection_metadata"
patch "$SLUG" '{"title": "New title", "description": "New description", "private": true, "theme": "pink"}' "${A[@]}"
check_status "PATCH title, description, private, theme → 200" 200
NEW="$(jbody .data.slug)"
check_json "  success" .success true
check_json "  data.title" .data.title "New title"
check_json "  data.description" .data.description "New description"
check_json "  data.private" .data.private true
check_json "  data.theme" .data.theme pink
check_eq "  a new slug with the same id" "ann/new-title-$ID" "$NEW"
get "$SLUG" "${A[@]}"
check_json "the old slug still finds it, answering the new one" .slug "$NEW"
get "$NEW"
check_hf_error "now private: anonymous → 404" 404 -
get "$NEW" "${B[@]}"
check_hf_error "  bob → 404" 404 -
patch "$NEW" '{"private": false, "position": 1}' "${A[@]}"
check_status "public again and moved after Second → 200" 200
check_json "  position 1" .data.position 1
get "$SECOND"
check_json "  Second is now first" .position 0
patch "$NEW" '{"theme": "rainbow", "title": "Changed"}' "${A[@]}"
check_hf_error "an unknown theme → 400" 400 BadRequest
patch "$NEW" '{"position": -1}' "${A[@]}"
check_hf_error "a negative position → 400" 400 BadRequest
patch "$NEW" '{"position": "1"}' "${A[@]}"
check_hf_error "a position that is not an integer → 400" 400 BadRequest
patch "$NEW" '{"position": 1.5}' "${A[@]}"
check_hf_error "a fractional position → 400" 400 BadRequest
patch "$NEW" "{\"title\": \"$(printf 't%.0s' {1..61})\"}" "${A[@]}"
check_hf_error "a title of 61 characters → 400" 400 BadRequest
patch "$NEW" '{"title": "Second"}' "${A[@]}"
check_hf_error "the title of another of ann's collections → 409" 409 Conflict
patch "$NEW" '{"slug": "x"}' "${A[@]}"
check_hf_error "an unknown field → 400" 400 BadRequest
patch "$NEW" '{"title": "Bobs now"}' "${B[@]}"
check_hf_error "bob → 403" 403 Forbidden
patch "$NEW" '{"title": "Anon"}'
check_hf_error "anonymous → 401" 401 "?"
# Refused from the head: bob's change is answered before its body is read (no 100
# Continue, the 403 with only the head sent).
P="$(python3 "$LIB_DIR/slow_bodies.py" probe "$PORT" "PATCH /api/collections/$NEW HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer $BOB\r\nContent-Type: application/json\r\nContent-Length: 60000\r\nExpect: 100-continue\r\n\r\n" --wait 5)"
check_match "bob's 60 kB change of ann's collection → 403 with only the head sent" \
  '^HTTP/1.1 403' "$(jq -r .status_line <<<"$P")"
check_eq "  without a 100 Continue first" false "$(jq -r .continue_first <<<"$P")"
P="$(python3 "$LIB_DIR/slow_bodies.py" probe "$PORT" "POST /api/collections/ann/nope-0123456789abcdef01234567/items HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer $ANN\r\nContent-Type: application/json\r\nContent-Length: 60000\r\nExpect: 100-continue\r\n\r\n" --wait 5)"
check_match "an item for a collection that does not exist → 404 with only the head sent" \
  '^HTTP/1.1 404' "$(jq -r .status_line <<<"$P")"
check_eq "  without a 100 Continue first" false "$(jq -r .continue_first <<<"$P")"
get "$NEW"
check_json "nothing of those changed" '[.title, .theme, .position] | tostring' '["New title","pink",1]'

section "add_collection_item"
add "$NEW" '{"item": {"id": "ann/pub", "type": "model"}, "note": "This is my model"}' "${A[@]}"
check_status "add a model with a note → 200" 200
check_json "  answers the collection with it" '.items | length' 1
check_json "  _id is 24 hex" '.items[0]._id | test("^[0-9a-f]{24}$")' true
check_json "  id, type, position" '.items[0] | [.id, .type, .position] | tostring' '["ann/pub","model",0]'
check_json "  note.text" .items[0].note.text "This is my model"
check_json "  note.html" .items[0].note.html "<p>This is my model</p>"
check_json "  what it shows of the repo" '.items[0] | [.author, .private, .likes, .repoType, .gated] | tostring' \
  '["ann",false,0,"model",false]'
PUB_ITEM="$(jbody '.items[0]._id')"
add "$NEW" '{"item": {"id": "ann/ds", "type": "dataset"}}' "${A[@]}"
check_status "add a dataset without a note → 200" 200
check_json "  no note (None for the client)" '.items[1] | has("note")' false
add "$NEW" "{\"item\": {\"id\": \"$SECOND\", \"type\": \"collection\"}}" "${A[@]}"
check_status "add another collection → 200" 200
check_json "  its slug and title" '.items[2] | [.type, .slug, .title, (.id | test("^c[0-9a-f]{23}$"))] | tostring' \
  "[\"collection\",\"$SECOND\",\"Second\",true]"
add "$NEW" '{"item": {"id": "bob/bm", "type": "model"}}' "${A[@]}"
check_status "another user's public model → 200" 200
N_ITEMS="$(jbody '.items | length')"
check_eq "  4 items" 4 "$N_ITEMS"
add "$NEW" '{"item": {"id": "ann/pub", "type": "model"}}' "${A[@]}"
check_hf_error "the same item again → 409" 409 Conflict
add "$NEW" '{"item": {"id": "ann/pub", "type": "dataset"}}' "${A[@]}"
check_hf_error "a repo under the wrong type → 404" 404 RepoNotFound
add "$NEW" '{"item": {"id": "ann/nothing", "type": "model"}}' "${A[@]}"
check_hf_error "a repo that does not exist → 404" 404 RepoNotFound
add "$NEW" '{"item": {"id": "2311.12983", "type": "paper"}}' "${A[@]}"
check_hf_error "a paper (none here) → 400" 400 BadRequest
add "$NEW" '{"item": {"id": "ann/pub", "type": "widget"}}' "${A[@]}"
check_hf_error "an unknown item type → 400" 400 BadRequest
add "$NEW" '{"item": "ann/pub"}' "${A[@]}"
check_hf_error "item not an object → 400" 400 BadRequest
add "$NEW" '{"item": {"id": "ann/pub"}}' "${A[@]}"
check_hf_error "item without a type → 400" 400 BadRequest
add "$NEW" '{"item": {"id": ["ann/pub"], "type": "model"}}' "${A[@]}"
check_hf_error "an id that is not a string → 400" 400 BadRequest
add "$NEW" '{"item": {"id": "ann/../x", "type": "model"}}' "${A[@]}"
check_hf_error "a malformed repo id → 400" 400 BadRequest
add "$NEW" "{\"item\": {\"id\": \"bob/bm\", \"type\": \"model\"}, \"note\": \"$(printf 'n%.0s' {1..501})\"}" "${A[@]}"
check_hf_error "a note of 501 characters → 400" 400 BadRequest
add "$NEW" "{\"item\": {\"id\": \"$NEW\", \"type\": \"collection\"}}" "${A[@]}"
check_hf_error "the collection itself → 400" 400 BadRequest
add "$NEW" "{\"item\": {\"id\": \"$TEAM\", \"type\": \"collection\"}}" "${B[@]}"
check_hf_error "bob adding to ann's collection → 403" 403 Forbidden
create '{"title": "Bobs", "namespace": "bob"}' "${B[@]}"
BOBS="$(jbody .slug)"
add "$BOBS" '{"item": {"id": "ann/priv", "type": "model"}}' "${B[@]}"
check_hf_error "bob adding ann's private model he cannot see → 404" 404 RepoNotFound
add "$BOBS" "{\"item\": {\"id\": \"$TEAM\", \"type\": \"collection\"}}" "${B[@]}"
check_hf_error "bob adding a private collection he cannot see → 404" 404 -
get "$NEW"
check_eq "nothing of those was added" "$N_ITEMS" "$(jbody '.items | length')"
get "$BOBS"
check_json "  nor to bob's" '.items | length' 0

section "a private repo in a public collection is shown only to those who may read it"
add "$NEW" '{"item": {"id": "ann/priv", "type": "model"}, "note": "hush"}' "${A[@]}"
check_status "ann adds her private model → 200" 200
add "$NEW" '{"item": {"id": "acme/secret", "type": "model"}}' "${A[@]}"
check_status "ann adds acme's private model → 200" 200
get "$NEW" "${A[@]}"
check_json "ann sees all 6" '[.items[] | .slug // .id] | tostring' "[\"ann/pub\",\"ann/ds\",\"$SECOND\",\"bob/bm\",\"ann/priv\",\"acme/secret\"]"
get "$NEW"
check_json "anonymous sees 4, positions as in the whole list" '[.items[] | "\(.slug // .id)@\(.position)"] | tostring' \
  "[\"ann/pub@0\",\"ann/ds@1\",\"$SECOND@2\",\"bob/bm@3\"]"
check_false "  and no private name anywhere in the answer" grep -q -e 'ann/priv' -e 'acme/secret' -e 'hush' "$BODY"
get "$NEW" "${C[@]}"
check_json "carl (reads acme) sees acme/secret, not ann/priv" '[.items[].id | select(. == "acme/secret" or . == "ann/priv")] | tostring' \
  '["acme/secret"]'
req GET "$BASE/api/collections?item=models/ann/priv"
check_status "list_collections(item=models/ann/priv), anonymous → 200" 200
check_json "  finds nothing" 'length' 0
req GET "$BASE/api/collections?item=models/ann/priv" "${A[@]}"
check_json "  ann finds her collection" '[.[].slug] | tostring' "[\"$NEW\"]"

section "update_collection_item"
req PATCH "$BASE/api/collections/$NEW/items/$PUB_ITEM" "${J[@]}" --data-binary '{"note": "New note", "position": 1}' "${A[@]}"
check_status "note and position of the first item → 200" 200
check_json "  answers success" .success true
get "$NEW"
check_json "  it went second" '[.items[0].id, .items[1].id, .items[1].note.text] | tostring' '["ann/ds","ann/pub","New note"]'
req PATCH "$BASE/api/collections/$NEW/items/$PUB_ITEM" "${J[@]}" --data-binary '{"position": -1}' "${A[@]}"
check_hf_error "a negative position → 400" 400 BadRequest
req PATCH "$BASE/api/collections/$NEW/items/$PUB_ITEM" "${J[@]}" --data-binary "{\"note\": \"$(printf 'n%.0s' {1..501})\"}" "${A[@]}"
check_hf_error "a note of 501 characters → 400" 400 BadRequest
req PATCH "$BASE/api/collections/$NEW/items/$PUB_ITEM" "${J[@]}" --data-binary '{"note": 5}' "${A[@]}"
check_hf_error "a note that is not a string → 400" 400 BadRequest
req PATCH "$BASE/api/collections/$NEW/items/b0000000000000000000ffff" "${J[@]}" --data-binary '{"note": "x"}' "${A[@]}"
check_hf_error "an item id not in it → 404" 404 -
req PATCH "$BASE/api/collections/$NEW/items/$PUB_ITEM" "${J[@]}" --data-binary '{"note": "x"}' "${B[@]}"
check_hf_error "bob → 403" 403 Forbidden
get "$NEW"
check_json "  the item is as it was" '[.items[1].id, .items[1].note.text] | tostring' '["ann/pub","New note"]'

section "delete_collection_item"
req DELETE "$BASE/api/collections/$NEW/items/$PUB_ITEM" "${A[@]}"
check_status "delete an item → 200" 200
check_json "  the answer no longer holds it" '[.data.items[].id] | index("ann/pub")' null
req DELETE "$BASE/api/collections/$NEW/items/$PUB_ITEM" "${A[@]}"
check_hf_error "again → 404 (missing_ok reads it)" 404 -
get "$NEW"
check_json "  positions renumbered" '[.items[] | "\(.slug // .id)@\(.position)"] | tostring' \
  "[\"ann/ds@0\",\"$SECOND@1\",\"bob/bm@2\"]"

section "list_collections"
req GET "$BASE/api/collections?owner=ann"
check_status "owner=ann, anonymous → 200" 200
check_json "  ann's public collections" '[.[].title] | sort | tostring' '["New title","Second"]'
check_json "  each a whole Collection" '.[0] | [has("slug"), has("owner"), has("lastUpdated"), has("theme"), has("upvotes"), has("private")] | all' true
req GET "$BASE/api/collections?owner=ann&owner=acme" "${C[@]}"
check_json "owner=ann&owner=acme, carl sees acme's private one too" '[.[].title] | sort | tostring' '["New title","Second","Team picks"]'
req GET "$BASE/api/collections?item=datasets/ann/ds&sort=upvotes"
check_json "item=datasets/ann/ds&sort=upvotes" '[.[].slug] | tostring' "[\"$NEW\"]"
req GET "$BASE/api/collections?item=collections/$SECOND&sort=trending"
check_json "item=collections/<slug>&sort=trending" '[.[].slug] | tostring' "[\"$NEW\"]"
add "$SECOND" '{"item": {"id": "bob/bm", "type": "model"}}' "${A[@]}"
add "$SECOND" '{"item": {"id": "ann/ds", "type": "dataset"}}' "${A[@]}"
add "$SECOND" '{"item": {"id": "ann/pub", "type": "model"}}' "${A[@]}"
add "$SECOND" "{\"item\": {\"id\": \"$BOBS\", \"type\": \"collection\"}}" "${A[@]}"
add "$SECOND" "{\"item\": {\"id\": \"$NEW\", \"type\": \"collection\"}}" "${A[@]}"
check_status "Second holds 5 items" 200
req GET "$BASE/api/collections?owner=ann&limit=1&sort=lastModified"
check_status "limit=1 → 200" 200
check_json "  one collection" 'length' 1
check_json "  Second, updated last, with its items cut to 4" '[.[0].title, (.[0].items | length)] | tostring' '["Second",4]'
check_hdr_match "  and a Link to the next page" Link '<[^>]*cursor=[^>]*>; rel="next"'
NEXT="$(hdr Link | sed -E 's/^<([^>]*)>.*/\1/')"
req GET "$NEXT"
check_json "  which holds the other" '[.[].title] | tostring' '["New title"]'
check_no_hdr "  and no further Link" Link
req GET "$BASE/api/collections?sort=likes"
check_hf_error "sort=likes → 400" 400 BadRequest
req GET "$BASE/api/collections?item=papers/2311.12983"
check_hf_error "item=papers/… → 400" 400 BadRequest
req GET "$BASE/api/collections?item=models/justone"
check_hf_error "item=models/<one part> → 400" 400 BadRequest
req GET "$BASE/api/collections?limit=0"
check_hf_error "limit=0 → 400" 400 BadRequest
req GET "$BASE/api/collections?cursor=nonsense"
check_hf_error "a foreign cursor → 400" 400 BadRequest

section "pages: the profile shows the collections the viewer may see; a collection's page"
patch "$SECOND" '{"private": true}' "${A[@]}"
check_status "Second made private → 200" 200
req GET "$BASE/ann"
check_status "ann's profile, anonymous → 200" 200
check_true "  shows New title linking to its page" grep -q "href=\"/collections/$NEW\">New title</a>" "$BODY"
check_false "  not the private Second" grep -q '>Second</a>' "$BODY"
req GET "$BASE/ann" "${A[@]}"
check_true "ann's own profile shows Second" grep -q "href=\"/collections/$SECOND\">Second</a>" "$BODY"
req GET "$BASE/acme" "${C[@]}"
check_true "acme's profile shows carl Team picks" grep -q '>Team picks</a>' "$BODY"
req GET "$BASE/acme"
check_false "  but not anonymous visitors" grep -q 'Team picks' "$BODY"
req GET "$BASE/collections/$NEW"
check_status "the collection's page, anonymous → 200" 200
check_true "  shows its title" grep -q '<h1>New title</h1>' "$BODY"
check_true "  lists bob/bm linking to the repo" grep -q 'href="/bob/bm">bob/bm</a>' "$BODY"
check_true "  lists ann/ds under /datasets" grep -q 'href="/datasets/ann/ds">ann/ds</a>' "$BODY"
check_false "  and not ann's private model" grep -q -e 'ann/priv' -e 'hush' "$BODY"
req GET "$BASE/collections/$NEW" "${A[@]}"
check_true "ann's view lists her private model" grep -q 'href="/ann/priv">ann/priv</a>' "$BODY"
check_true "  with its note" grep -q 'class="collection-note">hush</p>' "$BODY"
req GET "$BASE/collections/$SECOND"
check_status "a private collection's page, anonymous → 404" 404

section "a deleted repo leaves the collections that held it"
req DELETE "$BASE/api/repos/delete" "${J[@]}" --data-binary '{"name": "ds", "organization": "ann", "type": "dataset"}' "${A[@]}"
check_status "delete ann/ds → 200" 200
get "$NEW" "${A[@]}"
check_json "  it is gone from New title" '[.items[].id] | index("ann/ds")' null
must_create "$ANN" ds ann dataset false
get "$NEW" "${A[@]}"
check_json "  and a new repo of that name is not in it" '[.items[].id] | index("ann/ds")' null

section "delete_collection"
req DELETE "$BASE/api/collections/$SECOND" "${B[@]}"
check_hf_error "bob deleting ann's private collection → 404" 404 -
req DELETE "$BASE/api/collections/$NEW" "${B[@]}"
check_hf_error "bob deleting ann's public collection → 403" 403 Forbidden
req DELETE "$BASE/api/collections/$NEW"
check_hf_error "anonymous → 401" 401 "?"
req DELETE "$BASE/api/collections/$SECOND" "${A[@]}"
check_status "ann deletes Second → 200" 200
check_json "  answers {}" tostring '{}'
req DELETE "$BASE/api/collections/$SECOND" "${A[@]}"
check_hf_error "again → 404 (missing_ok reads it)" 404 -
get "$SECOND" "${A[@]}"
check_hf_error "get_collection after → 404" 404 -
get "$NEW"
check_status "New title is still there" 200
get "$BOBS" "${B[@]}"
check_status "and bob's" 200

finish
