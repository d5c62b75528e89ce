#!/usr/bin/env bash
# Regenerates src/gen/ from proto/ with ts-proto. The output is committed and never edited by hand.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v protoc >/dev/null 2>&1; then
  echo "[gen-proto] protoc not found: install Debian's protobuf-compiler (apt-get install protobuf-compiler)" >&2
  exit 1
fi

rm -rf src/gen
mkdir -p src/gen
# protoc ships google/protobuf/*.proto under /usr/include with Debian's package.
protoc \
  --plugin=protoc-gen-ts_proto=./node_modules/.bin/protoc-gen-ts_proto \
  --ts_proto_out=src/gen \
  --ts_proto_opt=outputServices=grpc-js,env=node,esModuleInterop=true,importSuffix=.js,useDate=true,forceLong=number,oneof=unions-value,useExactTypes=false \
  -I proto -I /usr/include \
  $(find proto -name '*.proto' | sort)
echo "[gen-proto] wrote $(find src/gen -name '*.ts' | wc -l) files to src/gen"
