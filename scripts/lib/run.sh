# Sourced by the scripts: erda_run MODULE MAIN_CLASS [args...] runs a main of a module with a JDK 25, building
# the module (and what it depends on) first if it was never built or a source changed since.
erda_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$erda_top/scripts/lib/jdk.sh"

# The stamp a successful build leaves; a module needs a build when a main source or pom of it, of a project
# module on its class path, or the parent pom, is newer than the stamp (jars of unchanged modules keep old times).
erda_stamp() { echo "$erda_top/$1/target/.erda-built"; }

erda_stale() {
  local module=$1 entry dep
  local -a dirs=("$erda_top/pom.xml" "$erda_top/$module/src/main" "$erda_top/$module/pom.xml")
  for entry in $(tr ':' ' ' < "$erda_top/$module/target/classpath"); do
    case $entry in
      "$erda_top"/*/target/*.jar) dep=${entry#"$erda_top"/}; dep=${dep%%/*}
        dirs+=("$erda_top/$dep/src/main" "$erda_top/$dep/pom.xml") ;;
    esac
  done
  [[ -n $(find "${dirs[@]}" -newer "$(erda_stamp "$module")" -print -quit 2>/dev/null) ]]
}

erda_build_if_needed() {
  local module=$1
  if [[ ! -f $(erda_stamp "$module") || ! -f $erda_top/$module/target/classpath ]] || erda_stale "$module"; then
    if [[ -n ${ERDA_IN_VM:-} ]]; then
      # scripts/softroce-vm: the guest has no network and a read-only /, so it never builds
      echo "error: $module is not built or older than its sources; build on the host first" \
        "(./mvnw -DskipTests package, or any script there)" >&2
      return 1
    fi
    echo "building $module ..." >&2
    (cd "$erda_top" && ./mvnw -q -B -DskipTests package -pl "$module" -am) >&2 || {
      echo "error: build of $module failed" >&2; return 1; }
    touch "$(erda_stamp "$module")"
  fi
}

erda_classpath() {
  local module=$1 jar
  jar=$(ls "$erda_top/$module"/target/"$module"-*.jar | grep -v -- '-tests.jar' | head -1)
  echo "$jar:$(cat "$erda_top/$module/target/classpath")"
}

erda_run() {
  local module=$1 main=$2
  shift 2
  erda_find_jdk || return 1
  erda_build_if_needed "$module" || return 1
  local java=$JAVA_HOME/bin/java cp
  cp=$(erda_classpath "$module")
  if [[ -n ${ERDA_IN_VM:-} ]]; then
    # scripts/softroce-vm: run from the guest's tmpfs, not over 9p (scripts/lib/vm-stage.sh); the processes the main
    # starts (servers, clients) take its java.home and class path, so they start from the copies too
    source "$erda_top/scripts/lib/vm-stage.sh"
    java=$(erda_vm_jdk)/bin/java
    cp=$(erda_vm_classpath "$cp")
  fi
  exec "$java" --enable-native-access=ALL-UNNAMED ${ERDA_JAVA_OPTS:-} -cp "$cp" "$main" "$@"
}
