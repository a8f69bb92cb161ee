#!/usr/bin/env bash
# Regenerates the committed FFM layouts of erda-ffm-bindings from the installed rdma-core headers
# (jextract stands in for nothing here: erda-ffm-bindings/src/main/c/verbs_layouts.c is the source).
#   needs: gcc libibverbs-dev librdmacm-dev   (apt-get install -y libibverbs-dev librdmacm-dev gcc)
# Writes Verbs.java (io.erda.ffm.verbs) and RdmaCma.java (io.erda.ffm.rdmacm); LayoutConformanceTest
# recompiles the same program and fails if the committed files and the headers disagree.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
module="$root/erda-ffm-bindings"
src="$module/src/main/c/verbs_layouts.c"
out="$module/src/main/java/io/erda/ffm"
include="${ERDA_VERBS_INCLUDE:-/usr/include}"

for need in gcc; do
  command -v "$need" >/dev/null || { echo "missing $need: apt-get install -y libibverbs-dev librdmacm-dev gcc" >&2; exit 1; }
done
for h in infiniband/verbs.h rdma/rdma_cma.h; do
  [[ -f "$include/$h" ]] || { echo "missing $include/$h: apt-get install -y libibverbs-dev librdmacm-dev gcc" >&2; exit 1; }
done

# FLUSH (rdma-core >= v45) is an enum, invisible to #ifdef: probe the header text. Keep this rule in
# sync with LayoutConformanceTest.compileFlags().
flags=()
if grep -q 'wr_flush' "$include/infiniband/verbs.h"; then flags+=(-DERDA_HAVE_WR_FLUSH=1); fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
gcc -std=gnu11 -Wall -Wextra -Werror -I"$include" "${flags[@]}" -o "$tmp/verbs_layouts" "$src"
"$tmp/verbs_layouts" --java Verbs > "$out/verbs/Verbs.java"
"$tmp/verbs_layouts" --java RdmaCma > "$out/rdmacm/RdmaCma.java"
echo "wrote $out/verbs/Verbs.java and $out/rdmacm/RdmaCma.java (rdma-core $(pkg-config --modversion libibverbs 2>/dev/null || echo unknown))"
