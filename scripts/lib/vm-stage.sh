# Sourced by scripts that run in scripts/softroce-vm's guest. The guest's / is the host's over 9p without a cache,
# slow for the many small reads of a JVM's start (each server restart of a fault campaign paid it again), so the JDK
# and the class path are copied to the guest's tmpfs once per boot and run from there.

# erda_vm_stage SRC DIR: copies SRC (a file or directory) under DIR, keeping its name apart from others' (a hash of
# its path), once; prints the copy's path.
erda_vm_stage() {
  local src=$1 dir=$2 dst
  dst=$dir/$(printf '%s' "$src" | md5sum | cut -c1-12)/$(basename "$src")
  if [[ ! -e $dst ]]; then mkdir -p "$(dirname "$dst")"; cp -a "$src" "$dst.part.$$" && mv "$dst.part.$$" "$dst"; fi
  printf '%s' "$dst"
}

# erda_vm_jdk: the JDK in $JAVA_HOME copied to /tmp/erda-jdk once, without what running needs not (sources, javac's
# ct.sym, man pages, headers); prints its path.
erda_vm_jdk() {
  local jdk=/tmp/erda-jdk e
  if [[ ! -x $jdk/bin/java ]]; then
    rm -rf "$jdk.part"; mkdir -p "$jdk.part/lib"
    for e in "$JAVA_HOME"/*; do case ${e##*/} in lib|man|include) ;; *) cp -a "$e" "$jdk.part/";; esac; done
    for e in "$JAVA_HOME"/lib/*; do case ${e##*/} in src.zip|ct.sym) ;; *) cp -a "$e" "$jdk.part/lib/";; esac; done
    mv "$jdk.part" "$jdk"
  fi
  printf '%s' "$jdk"
}

# erda_vm_classpath CP: every entry of the class path CP that exists staged under /tmp/erda-cp; prints the new one.
erda_vm_classpath() {
  local entry cp=""
  for entry in $(tr ':' ' ' <<< "$1"); do
    [[ -e $entry ]] && cp+=${cp:+:}$(erda_vm_stage "$entry" /tmp/erda-cp)
  done
  printf '%s' "$cp"
}
