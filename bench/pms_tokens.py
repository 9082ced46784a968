# Many development tokens at once for bench/pms.sh: `villa-api mint-token` signs one per process,
# and the listings load needs thousands of callers (the reporting limits count per subject). Signs
# tokens like the template (a token minted by villa-api: its header and claims, the subject
# changed to "<prefix>-<n>") with the development key, one a line on stdout. Exits non-zero when
# the key is not the template's (bench/pms.sh then mints with villa-api instead).
#   python3 bench/pms_tokens.py TEMPLATE_TOKEN KEY_PEM PREFIX COUNT > tokens
import base64, json, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

template, key_path, prefix, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

def unb64(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))

def b64(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()

# The key's PKCS#8 document (v2, with the public key, which OpenSSL does not read): the seed is
# the OCTET STRING of 32 bytes inside the privateKey OCTET STRING.
with open(key_path) as f:
    der = base64.b64decode("".join(l for l in f.read().splitlines() if not l.startswith("-----")))
at = der.find(b"\x04\x22\x04\x20")
if at < 0:
    sys.exit("no Ed25519 seed in " + key_path)
key = Ed25519PrivateKey.from_private_bytes(der[at + 4 : at + 36])
header, payload, signature = template.strip().split(".")
# The template was signed by the same key (raises otherwise).
key.public_key().verify(unb64(signature), (header + "." + payload).encode())
claims = json.loads(unb64(payload))
out = sys.stdout
for n in range(1, count + 1):
    claims["sub"] = f"{prefix}-{n}"
    signed = header + "." + b64(json.dumps(claims, separators=(",", ":")).encode())
    out.write(signed + "." + b64(key.sign(signed.encode())) + "\n")
