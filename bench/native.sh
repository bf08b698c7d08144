#!/usr/bin/env bash
# Builds the native executable and runs the native checks against it:
#
#   bench/native.sh [GRAALVM_HOME]
#
# The GraalVM (or Mandrel) home comes from the argument, else $GRAALVM_HOME. Without either, and
# on a machine that has no GraalVM but has the workplace's stand-in (../shared/native-probe, see
# its README), it lays that stand-in out in /tmp/gvm first (a few minutes, once per machine).
#
# Then: `./mvnw package -Dnative` (about 10 minutes and 10.5 GiB on 2 cores; BUILDER_XMX sets the
# builder's heap, 11g by default), the *IT suites against the executable (`./mvnw verify -Dnative`
# reusing it; about 10 more minutes), and, with NATIVE_BENCH=1, `bench/run.sh native`. Each step
# stops the script when it fails. NATIVE_SKIP_BUILD=1 reuses an executable already in target/.
set -euo pipefail
cd "$(dirname "$0")/.."

home=${1:-${GRAALVM_HOME:-}}
if [ -z "$home" ]; then
  probe=$(cd .. && pwd)/shared/native-probe
  if [ ! -x "$probe/setup.sh" ] && [ ! -f "$probe/setup.sh" ]; then
    echo "native: give a GraalVM or Mandrel home (argument or GRAALVM_HOME)" >&2
    exit 2
  fi
  home=/tmp/gvm
  if [ ! -x "$home/bin/native-image" ]; then
    echo "native: laying out the native-probe stand-in in $home" >&2
    G=$home bash "$probe/setup.sh"
  fi
fi
[ -x "$home/bin/native-image" ] || { echo "native: no bin/native-image in $home" >&2; exit 2; }

export BUILDER_XMX=${BUILDER_XMX:-11g}
if [ "${NATIVE_SKIP_BUILD:-0}" != 1 ] || ! ls target/*-runner >/dev/null 2>&1; then
  start=$(date +%s)
  ./mvnw -B package -Dnative -DskipTests -Dquarkus.native.graalvm-home="$home"
  echo "native: built $(ls target/*-runner) ($(du -h target/*-runner | cut -f1)) in $(($(date +%s) - start)) s" >&2
fi

# The integration suites against the executable just built (failsafe reads its path from
# target/quarkus-artifact.properties); the unit suites are the JVM's and are skipped here.
./mvnw -B verify -Dnative -Dquarkus.native.graalvm-home="$home" -Dquarkus.native.reuse-existing=true \
  -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false -Dspotless.check.skip=true

if [ "${NATIVE_BENCH:-0}" = 1 ]; then
  BENCH_SKIP_BUILD=0 bench/run.sh native
fi
