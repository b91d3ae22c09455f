#!/usr/bin/env bash
# Issue #15, the dataset viewer end to end: real tables of shared/REAL-INPUTS.md
# (flights-3m.parquet, birdstrikes.csv with CRLF and empty cells, movies.json with nulls
# and non-ASCII text, unemployment.tsv, the Boston CSV; fetched by scripts/fetch-inputs.sh)
# are pushed with git + git-lfs to a dataset repo whose README declares one config per
# table, plus a config of garbage. The push queues the export; the test waits for it, then
# checks every endpoint's answer against the tables themselves (viewer_check.py reads them
# with Python's csv and json modules): row counts, the rows at offsets across shard
# boundaries, features, sizes, the Parquet files on refs/convert/parquet, the hub's
# /api/datasets/…/parquet routes, the datasets library's discovery contract on a
# datasets-server.<host> Host, the parameter errors of §2, and private datasets' access.
#
# Usage: viewer_e2e.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

CHECK="$(dirname "$0")/viewer_check.py"
fetch_inputs
TABLES="$INPUTS/tables"
for f in flights-3m.parquet birdstrikes.csv movies.json unemployment.tsv boston.csv; do
  [[ -f "$TABLES/$f" ]] || die "input $TABLES/$f missing"
done

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice --email alice@example.org
ALICE="$(new_token alice --name laptop --role write)"
new_user bob --email bob@example.org
BOB="$(new_token bob --name laptop --role write)"
# Small shards, so the 3M-row table spans several files and /rows crosses their borders.
export HANGAR_VIEWER_ROW_GROUP_ROWS=20480 HANGAR_VIEWER_ROW_GROUPS_PER_FILE=10
start_server "$DATA" || die "hangar serve did not start"
HA="$(cred_helper alice "$ALICE")"
AUTH=(-H "Authorization: Bearer $ALICE")

must_create "$ALICE" tables alice dataset false
W="$T/tables"
lfs_clone "$HA" "$BASE/datasets/alice/tables" "$W" '*.parquet' '*.csv' '*.json' '*.tsv'
mkdir -p "$W/flights" "$W/bad"
cp "$TABLES/flights-3m.parquet" "$W/flights/"
cp "$TABLES/birdstrikes.csv" "$TABLES/movies.json" "$TABLES/unemployment.tsv" "$TABLES/boston.csv" "$W/"
head -c 65536 /dev/urandom >"$W/bad/garbage.csv"
cat >"$W/README.md" <<'YAML'
---
license: mit
configs:
- config_name: flights
  data_files: flights/*.parquet
  default: true
- config_name: birdstrikes
  data_files: birdstrikes.csv
- config_name: movies
  data_files: movies.json
- config_name: unemployment
  data_files:
  - split: test
    path: unemployment.tsv
- config_name: boston
  data_files: boston.csv
- config_name: garbage
  data_files: bad/garbage.csv
---
# Real tables
YAML
commit_push "$HA" "$W" tables
pass "pushed 5 real tables and a garbage file with git-lfs"

section "the export runs after the push"
D="dataset=alice/tables"
# Every split Ready, and the job returned (the export committed, its attempt mark gone).
exported() {
  req GET "$BASE/size?$D"
  [[ "$ST" == 200 ]] && [[ "$(jbody '.pending | length')" == 0 ]] &&
    [[ "$(hdr X-Revision)" == "$HEAD_SHA" ]] && [[ -z "$(ls "$DATA"/viewer/work/*.attempt 2>/dev/null)" ]]
}
if wait_until 240 exported; then
  pass "every config exported within ${WAITED_MS} ms of the push"
else
  _fail_http "the export finished" "waited 240 s"
fi
check_hdr "X-Revision is the pushed commit" X-Revision "$HEAD_SHA"
check_json "size: failed names the garbage config" '[.failed[].config] | join(",")' garbage
check_json "… with its cached error" '.failed[0].error.error | length > 0' true
req GET "$BASE/splits?$D"
check_json "splits: the default config first, then by name" \
  '[.splits[] | "\(.config)/\(.split)"] | join(",")' \
  "flights/train,birdstrikes/train,boston/train,garbage/train,movies/train,unemployment/test"
check_json "splits: nothing pending or failed (the split names are known)" \
  '"\(.pending | length) \(.failed | length)"' "0 0"
check_json "splits name the dataset" '[.splits[].dataset] | unique | join(",")' alice/tables

section "rows against the tables"
rows_match() {  # rows_match KIND FILE CONFIG SPLIT OFFSET LENGTH
  req GET "$BASE/rows?$D&config=$3&split=$4&offset=$5&length=$6"
  if [[ "$ST" != 200 ]]; then _fail_http "/rows $3 offset $5" "expected 200"; return; fi
  local out
  if out="$(python3 "$CHECK" rows "$1" "$2" "$BODY" 2>&1)"; then
    pass "/rows $3/$4 offset $5 length $6: $out rows equal the source's"
  else
    fail "/rows $3/$4 offset $5 length $6 equal the source's" "$out"
  fi
}
BIRD_N="$(python3 "$CHECK" count csv "$TABLES/birdstrikes.csv")"
MOVIES_N="$(python3 "$CHECK" count json "$TABLES/movies.json")"
check_eq "birdstrikes has 10,000 rows (python csv)" 10000 "$BIRD_N"
for off in 0 4321 9950; do rows_match csv "$TABLES/birdstrikes.csv" birdstrikes train "$off" 100; done
for off in 0 1500 3150; do rows_match json "$TABLES/movies.json" movies train "$off" 100; done
rows_match tsv "$TABLES/unemployment.tsv" unemployment test 0 100
rows_match tsv "$TABLES/unemployment.tsv" unemployment test 3200 100
rows_match csv "$TABLES/boston.csv" boston train 450 100
req GET "$BASE/rows?$D&config=birdstrikes&split=train&offset=9950&length=100"
check_json "num_rows_total of birdstrikes" .num_rows_total "$BIRD_N"
check_json "the last page stops at the last row" '.rows | length' 50
check_json "num_rows_per_page" .num_rows_per_page 100
check_json "partial is false" .partial false
check_json "birdstrikes features: 14 columns, names with spaces kept" \
  '[.features[].name] | .[0:3] | join("|")' "Airport Name|Aircraft Make Model|Effect Amount of damage"
check_json "an integer column is Value int64" \
  '.features[] | select(.name == "Speed IAS in knots") | .type.dtype' int64
req GET "$BASE/rows?$D&config=movies&split=train&offset=0&length=100"
check_json "movies: nulls stay null" '.rows[0].row["US DVD Sales"]' null
req GET "$BASE/rows?$D&config=birdstrikes&split=train&offset=20000"
check_status "an offset past the end answers 200" 200
check_json "… with no rows" '.rows | length' 0

section "flights: 3,000,000 rows over several shards"
req GET "$BASE/rows?$D&config=flights&split=train&offset=0&length=1"
check_json "num_rows_total is 3,000,000" .num_rows_total 3000000
check_json "flights features" '[.features[].name] | join(",")' "date,delay,distance,origin,destination"
req GET "$BASE/parquet?$D&config=flights"
SHARDS="$(jbody '.parquet_files | length')"
check_true "the export has several shards ($SHARDS)" test "${SHARDS:-0}" -gt 5
# Rows across the first shard border (204,800 rows a shard) come back in order.
req GET "$BASE/rows?$D&config=flights&split=train&offset=204750&length=100"
check_json "rows across a shard border: row_idx in order" \
  '[.rows[].row_idx] == [range(204750; 204850)]' true
req GET "$BASE/rows?$D&config=flights&split=train&offset=2999990&length=100"
check_json "the last rows of flights" '[.rows[].row_idx] | [first, last, length] | join(",")' \
  "2999990,2999999,10"

section "first-rows, info, size, parquet, is-valid"
req GET "$BASE/first-rows?$D&config=birdstrikes&split=train"
check_status "/first-rows 200" 200
check_json "first-rows names its split" '"\(.dataset) \(.config) \(.split)"' "alice/tables birdstrikes train"
check_json "first-rows: 100 rows, not truncated" '"\(.rows | length) \(.truncated)"' "100 false"
python3 "$CHECK" rows csv "$TABLES/birdstrikes.csv" "$BODY" >/dev/null 2>"$T/check.err" &&
  pass "first-rows equal the source's" || fail "first-rows equal the source's" "$(cat "$T/check.err")"
req GET "$BASE/info?$D&config=boston"
check_json "info: builder csv, 506 examples" \
  '"\(.dataset_info.builder_name) \(.dataset_info.splits.train.num_examples)"' "csv 506"
check_json "info: features as a dict" '.dataset_info.features.medv.dtype' float64
req GET "$BASE/size?$D"
check_json "size: the dataset's rows are the sum of the tables'" .size.dataset.num_rows \
  "$((3000000 + BIRD_N + MOVIES_N + 506 + $(python3 "$CHECK" count tsv "$TABLES/unemployment.tsv")))"
check_json "size: estimated_num_rows null (nothing partial)" .size.dataset.estimated_num_rows null
req GET "$BASE/parquet?$D"
check_json "parquet URLs point at refs%2Fconvert%2Fparquet" \
  '.parquet_files[0].url' "$BASE/datasets/alice/tables/resolve/refs%2Fconvert%2Fparquet/flights/train/0000.parquet"
URL="$(jbody '.parquet_files[] | select(.config == "boston") | .url')"
req GET "$URL"
check_status "the Boston shard downloads from the export branch" 200
check_eq "it is a Parquet file" PAR1 "$(head -c 4 "$BODY")"
req GET "$BASE/is-valid?$D"
check_json "is-valid: viewer and preview" '"\(.viewer) \(.preview)"' "true true"
req GET "$BASE/is-valid?$D&config=garbage"
check_json "is-valid of the garbage config: false" .viewer false
req GET "$BASE/rows?$D&config=garbage&split=train"
check_status "rows of the garbage config: its cached error" 500
check_hdr_match "… with its code" X-Error-Code 'Error$'
check_true "… and a message" test -n "$(jbody .error)"

section "filter, search and statistics against the tables"
BIRD="$TABLES/birdstrikes.csv"
filter_matches() {  # filter_matches WHERE COLUMN OP VALUE: /filter vs Python
  local want got
  want="$(python3 "$CHECK" where csv "$BIRD" "$2" "$3" "$4")"
  req GET "$BASE/filter?$D&config=birdstrikes&split=train" --data-urlencode "where=$1" -G
  check_status "/filter where=$1: 200" 200
  check_json "/filter where=$1: num_rows_total is Python's count" .num_rows_total "$(grep -c . <<<"$want")"
  got="$(jbody '.rows[].row_idx')"
  check_eq "/filter where=$1: the first rows' indexes are Python's" "$(head -n 100 <<<"$want")" "$got"
  python3 "$CHECK" rows csv "$BIRD" "$BODY" >/dev/null 2>"$T/check.err" &&
    pass "/filter where=$1: rows equal the source's" ||
    fail "/filter where=$1: rows equal the source's" "$(cat "$T/check.err")"
}
filter_matches "\"Wildlife Size\" = 'Large'" "Wildlife Size" = Large
filter_matches "\"Cost Total \$\" > 100000" 'Cost Total $' '>' 100000
filter_matches "\"Speed IAS in knots\" >= 250" "Speed IAS in knots" '>=' 250
req GET "$BASE/filter?$D&config=birdstrikes&split=train" -G --data-urlencode 'where="Origin State" IS NULL OR "Origin State" LIKE '"'"'N%'"'"'' \
  --data-urlencode 'orderby="Speed IAS in knots" DESC' --data-urlencode length=5
check_status "/filter with OR, LIKE, IS NULL and orderby: 200" 200
check_json "… every row matches" \
  'all(.rows[]; .row["Origin State"] == null or (.row["Origin State"] | startswith("N")))' true
req GET "$BASE/filter?$D&config=birdstrikes&split=train" -G \
  --data-urlencode 'orderby="Speed IAS in knots" DESC' --data-urlencode length=5
MAX_SPEED="$(python3 "$CHECK" stats csv "$BIRD" "Speed IAS in knots" | cut -d' ' -f2)"
check_json "orderby DESC: the first row has the largest speed" \
  '.rows[0].row["Speed IAS in knots"] | tostring' "${MAX_SPEED%.0}"
# The split's search index is built after its export, on a thread of its own; until then
# /search says to retry.
search_ready() { req GET "$BASE/search?$D&config=movies&split=train&query=star" && [[ "$ST" != 500 ]]; }
if ! search_ready; then
  check_hdr "/search before the index is built: ResponseNotReady" X-Error-Code ResponseNotReady
fi
wait_until 60 search_ready || fail "the search index of movies was not built in 60 s"
req GET "$BASE/search?$D&config=movies&split=train" -G --data-urlencode "query=star wars"
check_status "/search: 200" 200
WANT="$(python3 "$CHECK" search json "$TABLES/movies.json" star wars)"
check_json "/search 'star wars': num_rows_total is Python's count (rows holding either term)" \
  .num_rows_total "$(grep -c . <<<"$WANT")"
check_eq "/search: the first page is Python's BM25 ranking" "$(head -100 <<<"$WANT")" \
  "$(jbody '.rows[].row_idx')"
if out="$(python3 "$CHECK" rows json "$TABLES/movies.json" "$BODY" 2>&1)"; then
  pass "/search: the $out rows equal the source rows of their indexes"
else
  fail "/search: the rows equal the source rows of their indexes" "$out"
fi
req GET "$BASE/search?$D&config=movies&split=train" -G --data-urlencode "query=Amélie LEON caché love" \
  --data-urlencode offset=2 --data-urlencode length=3
WANT="$(python3 "$CHECK" search json "$TABLES/movies.json" Amélie LEON caché love)"
check_json "/search of accented words: Python's count" .num_rows_total "$(grep -c . <<<"$WANT")"
check_eq "… and its page at offset 2" "$(sed -n 3,5p <<<"$WANT")" "$(jbody '.rows[].row_idx')"
req GET "$BASE/statistics?$D&config=boston&split=train"
check_status "/statistics: 200" 200
check_json "/statistics: 506 examples" .num_examples 506
check_json "/statistics of medv: min max mean as Python computes them" \
  '.statistics[] | select(.column_name == "medv") | .column_statistics | "\(.min) \(.max) \(.mean)"' \
  "$(python3 "$CHECK" stats csv "$TABLES/boston.csv" medv | sed -e 's/\.0\b//g')"

# One computation per split: a second caller while it runs is told to retry.
FS="$BASE/statistics?$D&config=flights&split=train"
curl -s -o "$T/stats1.json" -w '%{http_code}' "$FS" >"$T/stats1.code" &
STATS_PID=$!
computing() { [[ -n "$(ls "$DATA"/viewer/cache/*.parquet 2>/dev/null)" ]] && req GET "$FS" && [[ "$ST" == 500 ]]; }
if wait_until 10 computing; then
  pass "a second /statistics of a split being computed: 500"
  check_hdr "… ResponseNotReady" X-Error-Code ResponseNotReady
else
  info "the first /statistics of flights ended before a second one came (a fast machine): not checked"
fi
wait "$STATS_PID"
check_eq "the first caller gets the statistics" 200 "$(cat "$T/stats1.code")"
check_eq "… of all 3,000,000 rows" 3000000 "$(jq -r .num_examples "$T/stats1.json")"
req GET "$FS"
check_status "then every caller gets them (kept)" 200

section "hostile queries"
hostile_where=("read_csv('/etc/passwd')" "\"Airport Name\" = 'x'; DROP TABLE t" "1=1 --" \
  "\"Airport Name\" = 'x' /* c */" "\"Airport Name\" = (SELECT 1)" "\"a\" = 1) OR (1=1" \
  "\"Airport Name\" = read_text('/etc/passwd')" "\"nope\" = 1" "\"Airport Name\" = 1 UNION SELECT 1")
for w in "${hostile_where[@]}"; do
  req GET "$BASE/filter?$D&config=birdstrikes&split=train" -G --data-urlencode "where=$w"
  check_status "where=$w: 422" 422
  check_hdr "where=$w: InvalidParameter" X-Error-Code InvalidParameter
done
req GET "$BASE/filter?$D&config=birdstrikes&split=train" -G --data-urlencode "where=\"Cost Total \$\" = 'abc'"
check_status "a type mismatch the engine refuses: 422" 422
check_json "… in the viewer's words" .error "A query parameter is invalid"
for o in "read_csv('/etc/passwd')" "\"Airport Name\"; DROP" "1" "\"Airport Name\" DESC, \"x\""; do
  req GET "$BASE/filter?$D&config=birdstrikes&split=train" -G --data-urlencode "orderby=$o"
  check_status "orderby=$o: 422" 422
done
for q in "') OR 1=1 --" "read_csv('/etc/passwd')" "%" "_"; do
  req GET "$BASE/search?$D&config=movies&split=train" -G --data-urlencode "query=$q"
  check_status "query=$q is data: 200" 200
  check_json "query=$q matches what Python finds" .num_rows_total \
    "$(python3 "$CHECK" search json "$TABLES/movies.json" $q | grep -c .)"
done
for c in "read_csv('/etc/passwd')" "x'; DROP TABLE t; --" "../../etc/passwd"; do
  req GET "$BASE/rows?$D&split=train" -G --data-urlencode "config=$c"
  check_status "config=$c is a name: 404" 404
  req GET "$BASE/rows?$D&config=boston" -G --data-urlencode "split=$c"
  check_status "split=$c is a name: 404" 404
done
req GET "$BASE/rows" -G --data-urlencode "dataset=../../etc/passwd" --data-urlencode config=a --data-urlencode split=b
check_status "dataset=../../etc/passwd: 401" 401

section "refs/convert/parquet"
req GET "$BASE/api/datasets/alice/tables/refs"
check_json_true "the export branch is listed" 'any(.converts[]?; .ref == "refs/convert/parquet")'
req GET "$BASE/api/datasets/alice/tables/tree/refs%2Fconvert%2Fparquet?recursive=true"
check_json_true "the branch holds only .gitattributes and Parquet files" \
  'all(.[]; .type == "directory" or .path == ".gitattributes" or (.path | endswith(".parquet")))'
req GET "$BASE/api/datasets/alice/tables/parquet"
check_json "hub route: URLs per config and split" '.boston.train[0]' \
  "$BASE/api/datasets/alice/tables/parquet/boston/train/0.parquet"
req GET "$BASE/api/datasets/alice/tables/parquet/boston/train/0.parquet"
check_status "hub route: shard n redirects" 302
check_hdr "… to the export's file" Location "$URL"
req GET "$BASE/api/datasets/alice/tables/parquet/boston/train/7.parquet"
check_status "hub route: no such shard" 404

section "the datasets library's discovery contract"
req GET "$BASE/info?$D" -H "Host: datasets-server.127.0.0.1:$PORT"
check_status "/info on Host datasets-server.<hub host>" 200
check_hdr "X-Revision is the commit" X-Revision "$HEAD_SHA"
check_json "partial false" .partial false
check_json "pending empty" '.pending | length' 0
check_json "failed: only the garbage config" '[.failed[].config] | join(",")' garbage

section "parameters (§2)"
req GET "$BASE/rows?$D&config=boston"
check_status "rows without split: 422" 422
check_hdr "… MissingRequiredParameter" X-Error-Code MissingRequiredParameter
check_json "… its message" .error "Parameters 'dataset', 'config' and 'split' are required"
req GET "$BASE/splits"
check_json "splits without dataset" .error "Parameter 'dataset' is required"
for bad in "offset=-1|Parameter 'offset' must be positive" "offset=x|Parameter 'offset' must be integer" \
           "length=101|Parameter 'length' must not be greater than 100" \
           "length=1e3|Parameter 'length' must be integer" "length=-5|Parameter 'length' must be positive"; do
  req GET "$BASE/rows?$D&config=boston&split=train&${bad%%|*}"
  check_json "${bad%%|*}: ${bad#*|}" .error "${bad#*|}"
  check_hdr "${bad%%|*}: InvalidParameter" X-Error-Code InvalidParameter
done
req GET "$BASE/rows?$D&config=nope&split=train"
check_status "an unknown config: 404" 404
check_hdr "… ResponseNotFound" X-Error-Code ResponseNotFound
req GET "$BASE/rows?dataset=alice/nothing&config=a&split=b"
check_status "an unknown dataset, anonymous: 401" 401
check_hdr "… ExternalUnauthenticatedError" X-Error-Code ExternalUnauthenticatedError

# new_dataset NAME PRIVATE [LFS PATTERN...]: alice's dataset NAME, cloned into $T/NAME.
new_dataset() {
  must_create "$ALICE" "$1" alice dataset "$2"
  lfs_clone "$HA" "$BASE/datasets/alice/$1" "$T/$1" "${@:3}"
}

section "a private dataset"
new_dataset secret true
P="$T/secret"
cp "$TABLES/boston.csv" "$P/data.csv"
commit_push "$HA" "$P" data
secret_ready() { req GET "$BASE/rows?dataset=alice/secret&config=default&split=train" "${AUTH[@]}"; [[ "$ST" == 200 ]]; }
wait_until 60 secret_ready && pass "the owner reads the private dataset's rows" ||
  _fail_http "the owner reads the private dataset's rows" "expected 200"
req GET "$BASE/rows?dataset=alice/secret&config=default&split=train"
check_status "anonymous: 401" 401
check_hdr "… ExternalUnauthenticatedError" X-Error-Code ExternalUnauthenticatedError
req GET "$BASE/rows?dataset=alice/secret&config=default&split=train" -H "Authorization: Bearer $BOB"
check_status "another user: 404" 404
check_hdr "… ExternalAuthenticatedError" X-Error-Code ExternalAuthenticatedError
req GET "$BASE/api/datasets/alice/secret/parquet" -H "Authorization: Bearer $BOB"
check_status "hub parquet route of another's private dataset: 404" 404
req GET "$BASE/rows?dataset=alice/secret&config=default&split=train" -H "Authorization: Bearer hf_not_a_token"
check_status "a refused token: 401" 401
check_hdr "… ExternalUnauthenticatedError" X-Error-Code ExternalUnauthenticatedError

section "a 20 MB cell"
new_dataset bigcell false '*.csv'
BC="$T/bigcell"
python3 -c "
import sys
with open(sys.argv[1], 'w') as f:
    f.write('id,text\n0,short\n1,' + 'y' * (20 << 20) + '\n2,also short\n')" "$BC/data.csv"
commit_push "$HA" "$BC" data
BD="dataset=alice/bigcell&config=default&split=train"
bigcell_ready() { req GET "$BASE/first-rows?$BD"; [[ "$ST" != 500 || "$(hdr X-Error-Code)" != ResponseNotReady ]]; }
wait_until 60 bigcell_ready || fail "the dataset with a 20 MB cell was not exported in 60 s"
check_status "/first-rows with a 20 MB cell: 200 (spec §4.3: cells cut to the budget)" 200
check_json "… truncated" .truncated true
check_json "… the three rows" '.rows | length' 3
check_json "… the big cell is listed as cut" '.rows[1].truncated_cells | join(",")' text
check_json "… and cut to 100 bytes" '.rows[1].row.text | length' 100
check_json "… the other rows whole" '.rows[2].row.text' "also short"
req GET "$BASE/rows?$BD&offset=1&length=1"
check_status "/rows of the 20 MB row: 500" 500
check_hdr "… TooBigContentError" X-Error-Code TooBigContentError

section "the README's language picks the stemmer"
new_dataset french false '*.csv'
FR="$T/french"
printf 'text\nun cheval blanc\ndes chevaux noirs\nrien\n' >"$FR/data.csv"
printf -- '---\nlanguage: fr\n---\n# Chevaux\n' >"$FR/README.md"
commit_push "$HA" "$FR" data
FD="dataset=alice/french&config=default&split=train"
french_ready() { req GET "$BASE/search?$FD&query=chevaux"; [[ "$ST" == 200 ]]; }
wait_until 60 french_ready || fail "the French dataset's search index was not built in 60 s"
check_json "language: fr: 'chevaux' finds cheval and chevaux (French stemmer)" .num_rows_total 2
req GET "$BASE/search?$FD&query=CHEVAL"
check_json "… and so does 'CHEVAL' (Porter would leave chevaux apart)" .num_rows_total 2

section "croissant"
req GET "$BASE/croissant-crumbs?$D"
check_status "/croissant-crumbs: 200" 200
check_json "conformsTo Croissant 1.1" .conformsTo "http://mlcommons.org/croissant/1.1"
check_json "a file set per exported config" \
  '[.distribution[] | select(.["@type"] == "cr:FileSet") | .includes] | join(",")' \
  "flights/*/*.parquet,birdstrikes/*/*.parquet,boston/*/*.parquet,movies/*/*.parquet,unemployment/*/*.parquet"
check_json "boston's record set: the split field, then its 14 columns" \
  '[.recordSet[] | select(.["@id"] == "boston") | .field[]] | length' 15
check_json "a float column is cr:Float64" \
  '.recordSet[] | select(.["@id"] == "boston") | .field[] | select(.name == "medv") | .dataType' "cr:Float64"

finish
