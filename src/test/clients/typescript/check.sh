#!/usr/bin/env bash
# Checks that a TypeScript client generated from docs/openapi.json compiles under `tsc --strict`,
# together with example.ts (enqueue, follow the status, download, a problem), the program
# docs/api.md shows. It needs a JDK, Maven (through ./mvnw) and npm, so it is not part of
# `./mvnw verify` (CI machines have only a JDK and Maven); run it after changing the API:
#
#   src/test/clients/typescript/check.sh
#
# Everything it fetches or writes goes under target/clients/typescript: the openapi-generator CLI
# jar (by its Maven coordinates, through the repositories your Maven uses, at the version pom.xml
# gives the Maven plugin), TypeScript (through the registry your npm uses), the generated client.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../../.." && pwd)
OUT="$ROOT/target/clients/typescript"
TYPESCRIPT_VERSION="${TYPESCRIPT_VERSION:-5.9.3}"
TYPES_NODE_VERSION="${TYPES_NODE_VERSION:-20}"
GENERATOR_VERSION=$(sed -n 's:.*<openapi-generator.version>\(.*\)</openapi-generator.version>.*:\1:p' \
  "$ROOT/pom.xml")
JAR="$OUT/openapi-generator-cli-$GENERATOR_VERSION.jar"

say() { printf 'check.sh: %s\n' "$*" >&2; }

mkdir -p "$OUT"
if [ ! -f "$JAR" ]; then
  say "fetching openapi-generator-cli $GENERATOR_VERSION"
  (cd "$ROOT" && ./mvnw -B -q dependency:copy \
    -Dartifact="org.openapitools:openapi-generator-cli:$GENERATOR_VERSION" \
    -DoutputDirectory="$OUT")
fi
if [ ! -x "$OUT/node_modules/.bin/tsc" ] || [ ! -d "$OUT/node_modules/@types/node" ] \
  || [ "$("$OUT/node_modules/.bin/tsc" --version)" != "Version $TYPESCRIPT_VERSION" ]; then
  say "installing typescript $TYPESCRIPT_VERSION"
  # @types/node: the example reads its token from process.env, as a Node.js service would.
  npm install --silent --no-audit --no-fund --prefix "$OUT" \
    "typescript@$TYPESCRIPT_VERSION" "@types/node@$TYPES_NODE_VERSION"
fi

say "generating the typescript-fetch client from docs/openapi.json"
rm -rf "$OUT/client"
if ! java -jar "$JAR" generate \
  -g typescript-fetch \
  -i "$ROOT/docs/openapi.json" \
  -o "$OUT/client" \
  --additional-properties=supportsES6=true,hideGenerationTimestamp=true >"$OUT/generate.log" 2>&1
then
  cat "$OUT/generate.log" >&2
  say "the generator failed (log: $OUT/generate.log)"
  exit 1
fi
cp "$HERE/example.ts" "$OUT/example.ts"

say "compiling the client and example.ts with tsc --strict"
# From $OUT, so that --types finds node_modules/@types there.
cd "$OUT"
node_modules/.bin/tsc --noEmit --strict \
  --target es2022 --lib es2022,dom --module es2022 --moduleResolution bundler \
  --types node client/index.ts example.ts
say "ok: the generated client and example.ts compile"
