#!/usr/bin/env bash
# Issue 19 §3: likes and overviews, each answer field by field with its 4xx cases —
# POST/DELETE /api/{type}s/{id}/like, GET …/likers, GET /api/users/{user}/likes,
# `likes` in info and listings and sort=likes, GET /api/users/{user}/overview,
# GET /api/organizations/{org}/overview — and GET …/auth-check(/write).
# Usage: social.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup: ann (owner of org acme), bob, carl; public and private repos"
DATA="$T/data"
mkdir -p "$DATA"
new_user ann
new_user bob
new_user carl
admin org create acme --owner ann >"$T/org.out" 2>&1 || die "admin org create acme" "$(cat "$T/org.out")"
admin org add-member acme carl --role read >"$T/org.out" 2>&1 || die "add-member" "$(cat "$T/org.out")"
ANN="$(new_token ann --role write)"
BOB="$(new_token bob --role write)"
BOB_READ="$(new_token bob --role read)"
CARL="$(new_token carl --role write)"
start_server "$DATA" || die "hangar serve did not start"
A=(-H "Authorization: Bearer $ANN")
B=(-H "Authorization: Bearer $BOB")
C=(-H "Authorization: Bearer $CARL")
must_create "$ANN" pub ann model false
must_create "$ANN" priv ann model true
must_create "$ANN" data ann dataset false
must_create "$ANN" m acme model false
must_create "$ANN" secret acme model true

# likes_of TYPE ID [curl args]: the repo info's likes.
likes_of() { req GET "$BASE/api/$1s/$2" "${@:3}"; jbody .likes; }

section "like and unlike"
check_eq "a new repo has 0 likes" 0 "$(likes_of model ann/pub)"
req POST "$BASE/api/models/ann/pub/like" "${B[@]}"
check_status "bob likes ann/pub → 200" 200
check_json "  answers {}" 'tostring' '{}'
check_eq "  info says 1 like" 1 "$(likes_of model ann/pub)"
req POST "$BASE/api/models/ann/pub/like" "${B[@]}"
check_status "liking again → 200" 200
check_eq "  still 1 like (one per user)" 1 "$(likes_of model ann/pub)"
req POST "$BASE/api/models/ann/pub/like" "${C[@]}"
req POST "$BASE/api/datasets/ann/data/like" "${B[@]}"
check_status "bob likes the dataset ann/data → 200" 200
check_eq "  its info says 1 like" 1 "$(likes_of dataset ann/data)"
req POST "$BASE/api/models/ann/priv/like" "${A[@]}"
check_status "ann likes her private ann/priv → 200" 200
req POST "$BASE/api/models/acme/secret/like" "${C[@]}"
check_status "carl (acme read member) likes private acme/secret → 200" 200
req POST "$BASE/api/models/acme/m/like" "${A[@]}"
req DELETE "$BASE/api/models/acme/m/like" "${A[@]}"
check_status "ann unlikes acme/m → 200" 200
check_eq "  its likes are back to 0" 0 "$(likes_of model acme/m)"
req DELETE "$BASE/api/models/acme/m/like" "${A[@]}"
check_status "unliking what one does not like → 200 (nothing to take back)" 200
check_eq "  still 0" 0 "$(likes_of model acme/m)"

section "like: who may not"
req POST "$BASE/api/models/ann/pub/like"
check_hf_error "anonymous → 401" 401 "?"
req POST "$BASE/api/models/ann/pub/like" -H "Authorization: Bearer $BOB_READ"
check_hf_error "a read token → 403" 403 Forbidden
req POST "$BASE/api/models/ann/priv/like" "${B[@]}"
check_hf_error "bob on ann's private repo → 404" 404 RepoNotFound
req POST "$BASE/api/models/ann/nope/like" "${B[@]}"
check_hf_error "a repo that does not exist → 404" 404 RepoNotFound
req POST "$BASE/api/models/ann/pub/like" "${B[@]}" -H 'Content-Type: application/json' \
  --data-binary "$(head -c 2000 /dev/zero | tr '\0' x)"
check_status "a body over 1 KiB → 413 from the head" 413
req POST "$BASE/api/models/ann/pub/like" -H "Authorization: Bearer $ANN" -H 'Transfer-Encoding: chunked' \
  --data-binary "$(head -c 2000 /dev/zero | tr '\0' x)"
check_status "a chunked body over 1 KiB → 413" 413
req GET "$BASE/api/users/b%6Fb/overview"
check_json "a percent-encoded user name is decoded" .user bob
check_eq "  ann/pub still has 2 likes (ann's chunked like was not applied)" 2 "$(likes_of model ann/pub)"

section "likers"
req GET "$BASE/api/models/ann/pub/likers"
check_status "likers of ann/pub, anonymous → 200" 200
check_json "  two likers" 'length' 2
check_json "  newest first: carl" '.[0].user' carl
check_json "  then bob" '.[1].user' bob
check_json "  fields" '.[0] | [.fullname, .type, .isPro, .avatarUrl] | tostring' \
  '["carl","user",false,"/avatars/carl.svg"]'
get_all_pages "$BASE/api/models/ann/pub/likers?limit=1"
check_eq "one per page: 2 pages (Link rel=next)" 2 "$PAGE_COUNT"
check_eq "  bob and carl, each once" "bob,carl" "$(pjq '[.[].user] | sort | join(",")')"
req GET "$BASE/api/models/ann/priv/likers" "${B[@]}"
check_hf_error "likers of a private repo bob cannot see → 404" 404 RepoNotFound
req GET "$BASE/api/models/ann/priv/likers" "${A[@]}"
check_json "  its owner sees herself" '[.[].user] | join(",")' ann
for q in limit=0 limit=1001 limit=x cursor=bogus cursor=1_2_3; do
  req GET "$BASE/api/models/ann/pub/likers?$q"
  check_hf_error "likers ?$q → 400" 400 BadRequest
done

section "a user's likes"
req GET "$BASE/api/users/bob/likes"
check_status "bob's likes, anonymous → 200" 200
check_json "  two repos, newest first" '[.[].repo.name] | join(",")' "ann/data,ann/pub"
check_json "  with their types" '[.[].repo.type] | join(",")' "dataset,model"
check_json_true "  createdAt is an ISO time" '.[0].createdAt | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T")'
req GET "$BASE/api/users/carl/likes"
check_json "carl's likes to anonymous: the private acme/secret is left out" \
  '[.[].repo.name] | join(",")' "ann/pub"
req GET "$BASE/api/users/carl/likes" "${C[@]}"
check_json "  to carl himself it is there" '[.[].repo.name] | join(",")' "acme/secret,ann/pub"
req GET "$BASE/api/users/carl/likes" "${B[@]}"
check_json "  to bob (not in acme) it is not" '[.[].repo.name] | join(",")' "ann/pub"
get_all_pages "$BASE/api/users/bob/likes?limit=1"
check_eq "paged one by one: 2 pages" 2 "$PAGE_COUNT"
req GET "$BASE/api/users/nobody/likes"
check_hf_error "an unknown user → 404" 404 "?"
req GET "$BASE/api/users/bob/likes?limit=-1"
check_hf_error "limit=-1 → 400" 400 BadRequest

section "likes in listings, sort=likes"
req GET "$BASE/api/models?author=ann&sort=likes&direction=-1"
check_json "ann's models by likes: pub (2) first" '[.[] | "\(.id):\(.likes)"] | join(",")' "ann/pub:2"
req GET "$BASE/api/models?author=ann&sort=likes&direction=-1" "${A[@]}"
check_json "  to ann, her private one (1 like) follows" '[.[] | "\(.id):\(.likes)"] | join(",")' \
  "ann/pub:2,ann/priv:1"
req GET "$BASE/api/models?author=ann&sort=likes&direction=1" "${A[@]}"
check_json "  ascending: the other way" '[.[].id] | join(",")' "ann/priv,ann/pub"
req GET "$BASE/api/datasets?author=ann&expand[]=likes"
check_json "a dataset listing carries likes" '.[0].likes' 1

section "overviews"
req GET "$BASE/api/users/ann/overview"
check_status "ann's overview, anonymous → 200" 200
check_json "  user, fullname, type, avatar, isPro" \
  '[.user, .fullname, .type, .avatarUrl, .isPro] | tostring' '["ann","ann","user","/avatars/ann.svg",false]'
check_json "  public repos: 1 model, 1 dataset, 0 spaces" '[.numModels, .numDatasets, .numSpaces] | tostring' '[1,1,0]'
check_json "  likes she gave that anonymous may see: 0" .numLikes 0
check_json "  her orgs" '[.orgs[] | [.name, .avatarUrl]] | tostring' '[["acme","/avatars/acme.svg"]]'
check_json_true "  createdAt and _id" '(.createdAt | test("^[0-9]{4}-")) and (._id | test("^[0-9a-f]{24}$"))'
req GET "$BASE/api/users/ann/overview" "${A[@]}"
check_json "to ann herself: 2 models, 1 like" '[.numModels, .numLikes] | tostring' '[2,1]'
req GET "$BASE/api/users/bob/overview"
check_json "bob: no repos, 2 likes, no orgs" '[.numModels, .numLikes, (.orgs | length)] | tostring' '[0,2,0]'
req GET "$BASE/api/organizations/acme/overview"
check_status "acme's overview → 200" 200
check_json "  name, fullname, type, avatar" '[.name, .fullname, .type, .avatarUrl] | tostring' \
  '["acme","acme","org","/avatars/acme.svg"]'
check_json "  2 members, 1 public model" '[.numUsers, .numModels, .numDatasets, .numSpaces] | tostring' '[2,1,0,0]'
req GET "$BASE/api/organizations/acme/overview" "${C[@]}"
check_json "  a read member counts the private model too" .numModels 2
req GET "$BASE/api/users/acme/overview"
check_hf_error "an org's name as a user → 404" 404 "?"
req GET "$BASE/api/organizations/ann/overview"
check_hf_error "a user's name as an org → 404" 404 "?"
req GET "$BASE/api/organizations/nobody/overview"
check_hf_error "an unknown org → 404" 404 "?"

section "auth-check"
req GET "$BASE/api/models/ann/pub/auth-check"
check_status "auth-check of a public repo, anonymous → 200" 200
check_json "  answers {}" 'tostring' '{}'
req GET "$BASE/api/models/ann/priv/auth-check" "${B[@]}"
check_hf_error "a private repo bob cannot see → 404" 404 RepoNotFound
req GET "$BASE/api/models/ann/priv/auth-check" "${A[@]}"
check_status "  its owner → 200" 200
req GET "$BASE/api/models/ann/pub/auth-check/write" "${A[@]}"
check_status "auth-check/write, owner → 200" 200
req GET "$BASE/api/models/ann/pub/auth-check/write" "${B[@]}"
check_hf_error "auth-check/write, another user → 403" 403 Forbidden
req GET "$BASE/api/models/ann/pub/auth-check/write"
check_hf_error "auth-check/write, anonymous → 401" 401 "?"
req GET "$BASE/api/models/acme/m/auth-check/write" "${C[@]}"
check_hf_error "auth-check/write, a read member → 403" 403 Forbidden

finish
