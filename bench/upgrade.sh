#!/usr/bin/env bash
# The upgrade-and-rollback run (docs/benchmarks.md, "Upgrade and rollback"): the previous release
# and HEAD side by side on one database, replaced one replica at a time as our Deployment rolls
# (maxSurge 1, maxUnavailable 0), then rolled back the same way, under load, with the PostgreSQL
# lock and with the Kubernetes Lease. Prints a table of counts per lock mode; exits non-zero when
# a job is lost or runs twice, an acknowledged enqueue is not done, or a replica goes unready or
# exits with an error.
#
#   bench/upgrade.sh [PREVIOUS_REF]
#
# PREVIOUS_REF defaults to the newest tag v*; with neither, there is no release to upgrade from
# and the run is skipped (exit 0). The previous release is built from `git archive` of its commit
# in target/upgrade/previous/COMMIT (kept: a second run against the same commit skips the build);
# HEAD is packaged by the `./mvnw verify` that then runs UpgradeRollbackIT alone through failsafe.
# UPGRADE_MODES=postgres (or kubernetes) runs one lock mode only.
set -euo pipefail
cd "$(dirname "$0")/.."

ref=${1:-}
if [[ -z $ref ]]; then
  if ! ref=$(git describe --tags --abbrev=0 --match 'v*' 2>/dev/null); then
    echo "upgrade: no release tag v* and no PREVIOUS_REF given: nothing to upgrade from, skipped"
    exit 0
  fi
fi
commit=$(git rev-parse --verify --quiet "$ref^{commit}") || {
  echo "upgrade: $ref names no commit" >&2
  exit 2
}
short=$(git rev-parse --short "$commit")
previous=$PWD/target/upgrade/previous/$commit
jar=$previous/target/quarkus-app/quarkus-run.jar
started=$SECONDS

if [[ -f $jar && -f $previous/.built ]]; then
  echo "upgrade: previous release $ref ($short) already built in $previous"
else
  echo "upgrade: building previous release $ref ($short) in $previous"
  rm -rf "$previous"
  mkdir -p "$previous"
  git archive "$commit" | tar -x -C "$previous"
  log=$previous/../build-$short.log
  if ! (cd "$previous" && bash ./mvnw -B -q package -DskipTests -Dspotless.check.skip=true) \
    >"$log" 2>&1; then
    tail -n 40 "$log"
    echo "upgrade: the build of $ref ($short) failed; its log: $log" >&2
    exit 2
  fi
  touch "$previous/.built"
  echo "upgrade: built $ref ($short) in $((SECONDS - started)) s"
fi

rm -f target/upgrade/report.txt
# Maven copies resources without removing stale ones: a migration deleted from src (say, after a
# switch of branches) would still be packaged into HEAD and applied.
rm -rf target/classes/db/migration
# HEAD's package phase, then UpgradeRollbackIT alone (surefire matches no test).
built=$SECONDS
set +e
./mvnw -B verify -Dspotless.check.skip=true -Dtest=NoUnitTests \
  -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=UpgradeRollbackIT \
  -Dupgrade.previous.jar="$jar" -Dupgrade.previous.name="$ref ($short)" \
  -Dupgrade.head.name="HEAD ($(git rev-parse --short HEAD))" \
  -Dupgrade.modes="${UPGRADE_MODES:-postgres,kubernetes}" \
  >target/upgrade/verify.log 2>&1
status=$?
set -e
cat target/upgrade/report.txt 2>/dev/null || true
if [[ $status -ne 0 ]]; then
  grep -E '^\[ERROR\]' target/upgrade/verify.log | head -n 30 || true
  echo "upgrade: FAILED (exit $status; log target/upgrade/verify.log, replica logs target/failover/*-{old,new,back}-*.log)"
else
  echo "upgrade: passed"
fi
echo "upgrade: $((SECONDS - started)) s in all, $((SECONDS - built)) s packaging HEAD and running"
exit $status
