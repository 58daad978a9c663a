#!/bin/bash
# Builds .devcheck/ for scripts/gpu_checks.sh (run here, in the repository root, with .venv built).
# The lent machine runs Python 3.12 with torch, transformers and the scientific stack, but
# nothing from PyPI can be installed there and at most 64 MiB of working tree travels. So:
#  - site.tar.xz: the packages the checks import that the machine lacks (inspect_ai and what it
#    imports, pydantic, ...), as py3.12 wheels, unpacked. To fit, it leaves out inspect_ai's
#    sandbox binaries and log viewer and botocore's service data: none of them is needed.
#    The versions are this venv's. trustlab's dist-info is added, so inspect finds the provider
#    through its entry point.
#  - smollm2-arch/: SmolLM2-135M-Instruct's config, tokenizer and chat template, without weights.
set -eu
PY=.venv/bin/python
NAMES="agent-client-protocol aiobotocore aioitertools annotated-types anthropic beautifulsoup4
boto3 botocore cffi debugpy dill distro dnspython docstring-parser email-validator fastapi
httpcore2 httptools httpx2 ijson importlib-metadata inspect-ai jiter jmespath jsonlines jsonpatch
jsonpath-ng jsonpointer jsonref jsonschema jsonschema-specifications linkify-it-py
mdit-py-plugins mmh3 nest-asyncio2 openai opentelemetry-api opentelemetry-exporter-http-transport
opentelemetry-exporter-otlp-common opentelemetry-exporter-otlp-proto-common
opentelemetry-exporter-otlp-proto-http opentelemetry-proto opentelemetry-sdk
opentelemetry-semantic-conventions orjson outcome pathlib-abc platformdirs pycparser pydantic
pydantic-core python-dotenv referencing rpds-py s3fs s3transfer semver shortuuid sniffio
soupsieve starlette tenacity textual tornado trio truststore typing-inspection universal-pathlib
uvicorn watchfiles websockets zipfile-zstd zstandard"
work=$(mktemp -d)
$PY - $NAMES > "$work/requirements.txt" <<'PYEOF'
import importlib.metadata as md, sys
for name in sys.argv[1:]:
    print(f"{name}=={md.version(name)}")
PYEOF
$PY -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux1_x86_64 --platform manylinux_2_5_x86_64 \
    -d "$work/wheels" -r "$work/requirements.txt"
mkdir -p "$work/site" .devcheck
for wheel in "$work"/wheels/*.whl; do unzip -q -o "$wheel" -d "$work/site"; done
rm -rf "$work/site/inspect_ai/binaries" "$work/site/inspect_ai/_view/dist" \
    "$work/site/inspect_ai/_view/www/dist" "$work"/site/botocore/data/*/
cp -r "$($PY -c 'import importlib.metadata as m; print(m.distribution("trustlab")._path)')" "$work/site/"
rm -f "$work"/site/trustlab-*.dist-info/RECORD "$work"/site/trustlab-*.dist-info/direct_url.json
tar -C "$work/site" -cJf .devcheck/site.tar.xz .
$PY - <<'PYEOF'
from trustlab.llm import load_model

lm = load_model("smollm2-135m-instruct")
lm.tokenizer.save_pretrained(".devcheck/smollm2-arch")
lm.model.config.save_pretrained(".devcheck/smollm2-arch")
PYEOF
rm -rf "$work"
grep -qx "/.devcheck/" .git/info/exclude 2>/dev/null || echo "/.devcheck/" >> .git/info/exclude
du -sh .devcheck
