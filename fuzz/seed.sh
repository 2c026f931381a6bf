#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/ with seed inputs. Run from anywhere; idempotent.
#
#   paper_list: the seed paper lists (whole files) and the test fixtures.
#   clean, tokenize: the same files, plus every document of the paper lists and every line
#                    of the fixtures as a seed of its own (small seeds mutate faster).
#
# Seeds come from tests/fixtures/ in this checkout and from ../shared/corpora/seeds/ beside it
# (skipped, with a note, when absent, e.g. in a fresh clone without shared/).
set -euo pipefail

fuzz_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$fuzz_dir")"
fixtures="$root/tests/fixtures"
shared="$root/../shared/corpora/seeds"

lists=()
if [ -d "$shared" ]; then
    for f in "$shared"/*.txt; do
        [ -e "$f" ] && lists+=("$f")
    done
else
    echo "seed.sh: $shared not found; seeding from tests/fixtures only"
fi
tables=()
for f in "$fixtures"/*; do
    [ -f "$f" ] && tables+=("$f")
done

for target in paper_list clean tokenize; do
    mkdir -p "$fuzz_dir/corpus/$target"
done

# Whole files for every target (libFuzzer's -max_len in the README is 65536; they are smaller).
for target in paper_list clean tokenize; do
    for f in "${lists[@]}" "${tables[@]}"; do
        cp "$f" "$fuzz_dir/corpus/$target/file_$(basename "$f")"
    done
done

# Documents of the paper lists (runs of non-blank lines) and lines of the fixtures, one per file.
for target in clean tokenize; do
    dir="$fuzz_dir/corpus/$target"
    for f in "${lists[@]}"; do
        awk -v out="$dir/doc_$(basename "$f" .txt)_" \
            'BEGIN { RS = "" } { n++; f = out n; printf "%s", $0 > f; close(f) }' "$f"
    done
    for f in "${tables[@]}"; do
        awk -v out="$dir/line_$(basename "$f")_" \
            'length($0) > 0 { n++; f = out n; printf "%s", $0 > f; close(f) }' "$f"
    done
done

for target in paper_list clean tokenize; do
    echo "corpus/$target: $(find "$fuzz_dir/corpus/$target" -type f | wc -l) files"
done
