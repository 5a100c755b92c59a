#!/usr/bin/env bash
# Checks deploy/: the Job manifest against the Kubernetes schemas (kubernetes-validate, strict:
# unknown fields fail), and the Containerfile's shape (dockerfile-parse). `make test` runs it.
# The manifest's `courier load` arguments are parsed by the real CLI in LoadCommandTests.
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
RUN_ID=check START_AT=2026-11-24T10:00:00Z envsubst '$RUN_ID $START_AT' < deploy/load-job.yaml > "$work/job.yaml"
# 1.33: the oldest release with backoffLimitPerIndex in GA; 1.37: the newest the validator knows.
for version in 1.33.0 1.37.0; do
    kubernetes-validate --strict --quiet -k "$version" "$work/job.yaml"
done
# The check can fail: a misspelt field must be rejected.
sed 's/completionMode: Indexed/completionMod: Indexed/' "$work/job.yaml" > "$work/bad.yaml"
if kubernetes-validate --strict --quiet "$work/bad.yaml" >/dev/null 2>&1; then
    echo "deploy-check: the validator accepted a misspelt field"; exit 1
fi
python3 - deploy/Containerfile <<'PY'
import sys
from dockerfile_parse import DockerfileParser
parser = DockerfileParser(fileobj=open(sys.argv[1], "rb"))
stages = [i for i in parser.structure if i["instruction"] == "FROM"]
runs = " ".join(i["value"] for i in parser.structure if i["instruction"] == "RUN")
entry = [i["value"] for i in parser.structure if i["instruction"] == "ENTRYPOINT"]
problems = []
if len(stages) != 2: problems.append(f"{len(stages)} stages, expected a build and a run stage")
if "make deps" not in runs: problems.append("the build stage does not use the README's set-up (make deps)")
if "--product courier" not in runs: problems.append("the courier product is not built")
if entry != ['["courier"]']: problems.append(f"ENTRYPOINT is {entry}")
if parser.structure[-1]["instruction"] not in ("CMD", "ENTRYPOINT"): problems.append("the image ends without a command")
if not any(i["instruction"] == "USER" for i in parser.structure): problems.append("the image runs as root")
for problem in problems: print("deploy-check:", problem)
sys.exit(1 if problems else 0)
PY
echo "deploy-check: deploy/load-job.yaml valid for Kubernetes 1.33 and 1.37 (strict); deploy/Containerfile well formed"
