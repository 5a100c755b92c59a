#!/usr/bin/env python3
"""Which string fields of Google's Discovery documents call themselves secret, and which of
those Courier's scanner hides (Docs/Reliability.md, "Secrets").

    pip download --no-deps google-api-python-client -d /tmp/gapi && unzip -q /tmp/gapi/*.whl -d /tmp/gapi
    Scripts/secret-fields.py /tmp/gapi/googleapiclient/discovery_cache/documents [Redaction.swift]

A field counts when its description names a secret, a password, a private key, a passphrase or
key material, and not a reference to one (a Secret Manager version, a resource name, a path, a
hash, a time). The names are read from Redaction.swift (its `secretNames`, `secretEndings` and
`publicEndings`),
so the list has one home; pass an older copy (`git show REV:Sources/…/Redaction.swift`) to count
what it hid. Prints the totals and the names still shown, then every field and parameter name
ending in "token", shown and hidden."""
import glob, json, re, sys

def strings(source, name):
    block = re.search(name + r": \[String\] = \[(.*?)\]\s*\n", source, re.S).group(1)
    block = "\n".join(line.split("//")[0] for line in block.splitlines())
    return re.findall(r'"([^"]+)"', block)

def normalized(name):
    return name.lower().replace("_", "").replace("-", "")

documents = sys.argv[1]
source = open(sys.argv[2] if len(sys.argv) > 2 else "Sources/Courier/Support/Redaction.swift").read()
names = {normalized(n) for n in strings(source, "secretNames")}
endings = [normalized(e) for e in strings(source, "secretEndings")] if "secretEndings" in source else []
public = [normalized(e) for e in strings(source, "publicEndings")] if "publicEndings" in source else []
hidden = lambda n: normalized(n) in names or (any(normalized(n).endswith(e) for e in endings)
                                             and not any(normalized(n).endswith(e) for e in public))

secret = re.compile(r"\b(secret|password|private key|passphrase|key material)\b", re.I)
reference = re.compile(r"(secret ?manager|secret version|resource name|reference|uri of|name of|path to|\bid\b|"
                       r"version name|projects/|sha256|hash of|expir|policy|interval|status|time)", re.I)
total = shown = 0
missed = set()
tokens = set()  # every field and parameter name ending in "token"

def walk(properties):
    global total, shown
    for name, field in (properties or {}).items():
        if not isinstance(field, dict):
            continue
        if normalized(name).endswith("token"):
            tokens.add(name)
        text = field.get("description", "")
        if field.get("type") == "string" and not field.get("enum") and secret.search(text) and not reference.search(text):
            total += 1
            if not hidden(name):
                shown += 1
                missed.add(name)
        walk(field.get("properties"))
        if isinstance(field.get("items"), dict):
            walk(field["items"].get("properties"))

def parameters(names, resource):
    """Every parameter name of the document's methods (and its own standard ones)."""
    names |= set(resource.get("parameters") or {})
    for method in (resource.get("methods") or {}).values():
        names |= set(method.get("parameters") or {})
    for child in (resource.get("resources") or {}).values():
        parameters(names, child)

files = sorted(glob.glob(documents + "/*.json"))
for path in files:
    document = json.load(open(path))
    for schema in document.get("schemas", {}).values():
        walk(schema.get("properties"))
    named = set()
    parameters(named, document)
    tokens |= {name for name in named if normalized(name).endswith("token")}
print(f"{len(files)} documents, {total} fields described as secret, {total - shown} hidden, {shown} shown")
print("shown:", " ".join(sorted(missed)))
# The names ending in "token": a reviewer reads the shown ones (the cursors of publicEndings)
# and the hidden ones for a credential shown or a cursor hidden.
print(f"{len(tokens)} names ending in token, {sum(map(hidden, tokens))} hidden")
print("token names shown:", " ".join(sorted(n for n in tokens if not hidden(n))))
print("token names hidden:", " ".join(sorted(n for n in tokens if hidden(n))))
