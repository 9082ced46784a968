"""Checks the API description the way its users meet it (run by scripts/openapi-check, with the
Python of the virtual environment that holds the tools):

1. openapi-spec-validator: the document is valid OpenAPI 3.1 (every Response Object has its
   description, every `$ref` resolves, every schema is a schema);
2. every member a schema requires is one it declares, so a generated client can send it (a
   body whose `required` names a member without a type is a body no client can build);
3. openapi-python-client generates a client with --fail-on-warning (an operation, answer or
   schema it cannot read is a warning, so none is dropped silently), and every module of the
   client imports.

    python scripts/openapi_check.py <openapi.json>

Prints what fails, each under its check's name; exits 1 when any check fails."""

import importlib
import json
import os
import pathlib
import pkgutil
import subprocess
import sys
import tempfile

from openapi_spec_validator import OpenAPIV31SpecValidator

# The generator reads an answer's bytes only under `application/octet-stream`; the document
# names the real media type of each binary answer (image/jpeg, audio/*, ...), so those are read
# as bytes.
def client_config(doc):
    binary = set()
    for item in doc["paths"].values():
        for op in item.values():
            if not isinstance(op, dict):
                continue
            for response in op.get("responses", {}).values():
                for media in response.get("content", {}):
                    if not (media == "application/json" or media.endswith("+json") or media.startswith("text/")):
                        binary.add(media)
    return {"content_type_overrides": {media: "application/octet-stream" for media in sorted(binary)}}


def undeclared_required(value, where, found):
    """Schemas whose `required` names a member their `properties` do not declare."""
    if isinstance(value, dict):
        required = value.get("required")
        composed = any(key in value for key in ("$ref", "allOf", "anyOf", "oneOf"))
        if isinstance(required, list) and not composed:
            declared = value.get("properties", {})
            missing = [name for name in required if name not in declared]
            if missing:
                found.append(f"{where}: requires {', '.join(missing)} without declaring it")
        for key, inner in value.items():
            undeclared_required(inner, f"{where}/{key}", found)
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            undeclared_required(inner, f"{where}/{i}", found)
    return found


def main():
    path = pathlib.Path(sys.argv[1]).resolve()
    doc = json.loads(path.read_text())
    tools = pathlib.Path(sys.executable).parent
    failed = []

    print("== the API description: openapi-spec-validator (OpenAPI 3.1)", flush=True)
    errors = list(OpenAPIV31SpecValidator(doc, base_uri=path.as_uri()).iter_errors())
    for error in errors:
        where = " ".join(str(part) for part in error.absolute_path) or "the document"
        print(f"  {where}: {error.message}")
    if errors:
        failed.append(f"it is not valid OpenAPI 3.1: {len(errors)} errors (openapi-spec-validator, above)")
    else:
        print("  OK")

    print("== the API description: every required member declared", flush=True)
    missing = undeclared_required(doc, "#", [])
    for line in missing:
        print(f"  {line}")
    if missing:
        failed.append(f"{len(missing)} schemas require members they do not declare (above)")
    else:
        print("  OK")

    print("== the API description: openapi-python-client generate --fail-on-warning", flush=True)
    with tempfile.TemporaryDirectory() as work:
        work = pathlib.Path(work)
        config = work / "config.json"
        config.write_text(json.dumps(client_config(doc)))
        # Its post-generation hooks (ruff) are found on PATH.
        env = dict(os.environ, PATH=f"{tools}{os.pathsep}{os.environ.get('PATH', '')}")
        generated = subprocess.run(
            [str(tools / "openapi-python-client"), "generate", "--path", str(path),
             "--output-path", str(work / "villa_client"), "--meta", "none", "--config", str(config),
             "--overwrite", "--fail-on-warning"],
            env=env, capture_output=True, text=True,
        )
        output = (generated.stdout + generated.stderr).strip()
        if generated.returncode != 0:
            print(output)
            failed.append("openapi-python-client refuses it or warns about it (above)")
        else:
            sys.path.insert(0, str(work))
            modules = 0
            broken = []
            package = importlib.import_module("villa_client")
            for module in pkgutil.walk_packages(package.__path__, "villa_client."):
                try:
                    importlib.import_module(module.name)
                    modules += 1
                except Exception as e:  # any failure to import is the finding
                    broken.append(f"  {module.name}: {e!r}")
            for line in broken:
                print(line)
            if broken:
                failed.append(f"{len(broken)} modules of the generated client do not import (above)")
            else:
                print(f"  OK: a client of {modules} modules, every one imports")

    if failed:
        print(f"FAILED: the API description ({path.name}):", file=sys.stderr)
        for reason in failed:
            print(f"  - {reason}", file=sys.stderr)
        sys.exit(1)
    print("the API description: valid OpenAPI 3.1, and a client generates from it without warnings")


if __name__ == "__main__":
    main()
