# Sourced by the scripts: sets JAVA_HOME to a JDK >= 22 (java.lang.foreign is final since 22; the build targets 25).
# Order: $JAVA_HOME if it is new enough, then the newest under /usr/lib/jvm.
erda_java_major() {
  "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p' | head -1
}

erda_find_jdk() {
  local need=${ERDA_MIN_JDK:-25} best="" best_v=0 v d
  if [[ -n ${JAVA_HOME:-} && -x $JAVA_HOME/bin/javac ]]; then
    v=$(erda_java_major "$JAVA_HOME")
    if [[ ${v%%.*} -ge $need ]]; then return 0; fi
  fi
  for d in /usr/lib/jvm/*; do
    [[ -x $d/bin/javac ]] || continue
    v=$(erda_java_major "$d"); v=${v%%.*}
    [[ $v =~ ^[0-9]+$ ]] || continue
    if (( v >= need && v > best_v )); then best=$d; best_v=$v; fi
  done
  if [[ -z $best ]]; then
    echo "error: no JDK >= $need found (JAVA_HOME=${JAVA_HOME:-unset}, /usr/lib/jvm/*). Install Temurin 25 or set JAVA_HOME." >&2
    return 1
  fi
  export JAVA_HOME=$best
}
