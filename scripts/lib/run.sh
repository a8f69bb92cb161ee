# Sourced by the scripts: erda_run MODULE MAIN_CLASS [args...] runs a main of a module with a JDK 25, building
# the module (and what it depends on) first if it was never built or a source changed since.
erda_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
source "$erda_top/scripts/lib/jdk.sh"

erda_build_if_needed() {
  local module=$1 jar
  jar=$(ls "$erda_top/$module"/target/"$module"-*.jar 2>/dev/null | grep -v -- '-tests.jar' | head -1)
  if [[ -z $jar || ! -f $erda_top/$module/target/classpath ]] \
     || [[ -n $(find "$erda_top" -path '*/src/main/*' -newer "$jar" -print -quit 2>/dev/null) ]] \
     || [[ -n $(find "$erda_top" -name pom.xml -newer "$jar" -print -quit 2>/dev/null) ]]; then
    echo "building $module ..." >&2
    (cd "$erda_top" && ./mvnw -q -B -DskipTests package -pl "$module" -am) >&2 || {
      echo "error: build of $module failed" >&2; return 1; }
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
  exec "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED ${ERDA_JAVA_OPTS:-} \
    -cp "$(erda_classpath "$module")" "$main" "$@"
}
