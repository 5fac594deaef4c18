#!/usr/bin/env python3
"""Verify an exported tool-boundary run without Deno: Python 3, its standard library and
`cryptography` (Debian: python3-cryptography; pip: cryptography).

    python3 docs/verify.py bundle.json public.jwk [--tsa cert.pem]... [--run-id ID [--started-at MS]]

It gives the verdicts of `verifyRun` of `@tool-boundary/core/verify` on the same bundles
(docs/proof.md, docs/verify.md). Like the Deno program, it prints the verdict as JSON and exits 0
when the bundle verifies, 1 when not, and 2 when the arguments or files are not a bundle, a key and
certificates (a file whose JSON names one member of an object twice is neither).

- The key file holds the public JWK, or `{ keyId, publicKey }` as `GET /v1/ledger-key` answers it.
- `--tsa` (repeatable): PEM certificates of trusted Time Stamping Authorities (or CAs above them),
  `tsaCertificates`: a sealed bundle must then carry an RFC 3161 timestamp of its receipt by one of
  them, and the verdict has `timestampedAt` (epoch ms).
- `--run-id` and `--started-at`: the run instance expected (`run`), else OTHER_RUN.

The canonical JSON is RFC 8785 exactly as the package writes it: object members sorted by their
keys' UTF-16 code units, numbers as ECMAScript writes them, strings as `JSON.stringify` does.
"""

import base64
import calendar
import hashlib
import json
import re
import sys

try:
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.x509.oid import ExtendedKeyUsageOID
except ImportError:  # pragma: no cover - said plainly, once
    sys.stderr.write(
        "verify.py needs the cryptography package: apt-get install python3-cryptography "
        "(Debian/Ubuntu) or pip install cryptography\n"
    )
    sys.exit(2)

BUNDLE_FORMAT = "tool-boundary.run/1"
RECORD_TAG = "tool-boundary.record/1"
RECEIPT_TAG = "tool-boundary.receipt/1"
MAX_DEPTH = 1000
MAX_SAFE_INTEGER = 2**53 - 1
MAX_TIMESTAMP_BYTES = 64 * 1024
MISSING = object()  # a member that is absent, which JavaScript reads as undefined


class BadInput(Exception):
    """What verifyRun throws as a TypeError: not a bundle, a key or certificates (exit 2)."""


# --- JSON as JavaScript reads and writes it -------------------------------------------------


def _pairs(pairs):
    seen = {}
    for name, value in pairs:
        if name in seen:
            raise BadInput(f"an object names the member {json.dumps(name)} twice")
        seen[name] = value
    return seen


def _no_constant(name):
    raise BadInput(f"{name} is not JSON")


def parse_json(text, path):
    """JSON.parse of a file's text, refusing a member named twice; every number a float."""
    try:
        value = json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_int=float,
            parse_float=float,
            parse_constant=_no_constant,
        )
    except BadInput as error:
        raise BadInput(f"{path}: {error}") from None
    except (ValueError, RecursionError) as error:
        raise BadInput(f"{path}: not JSON ({error})") from None
    return value


def _depth_ok(value, depth=1):
    if isinstance(value, (dict, list)):
        if depth > MAX_DEPTH:
            return False
        children = value.values() if isinstance(value, dict) else value
        return all(_depth_ok(child, depth + 1) for child in children)
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    return True


def js_number(x):
    """A finite number as ECMAScript's Number::toString writes it."""
    if x == 0:
        return "0"
    if x < 0:
        return "-" + js_number(-x)
    text = repr(float(x))  # the shortest digits that read back as x, as ECMAScript picks them
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    e10 = int(exponent or 0) - len(fraction)
    stripped = digits.rstrip("0")
    e10 += len(digits) - len(stripped)
    s, k = stripped, len(stripped)
    n = k + e10
    if k <= n <= 21:
        return s + "0" * (n - k)
    if 0 < n <= 21:
        return s[:n] + "." + s[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + s
    e = n - 1
    sign = "+" if e >= 0 else "-"
    return (s if k == 1 else s[0] + "." + s[1:]) + "e" + sign + str(abs(e))


_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def js_string(text):
    """A string as JSON.stringify writes it (lone surrogates as lower-case \\udxxx)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in _SHORT:
            out.append(_SHORT[ch])
        elif code < 0x20 or 0xD800 <= code <= 0xDFFF:
            out.append("\\u%04x" % code)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _utf16(key):
    return key.encode("utf-16-be", "surrogatepass")


def canonical_json(value):
    """RFC 8785 as src/core/json.ts's canonicalJson writes it."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return js_string(value)
    if isinstance(value, (int, float)):
        return js_number(value)
    if isinstance(value, list):
        return "[" + ",".join(canonical_json(item) for item in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=_utf16)
        return "{" + ",".join(js_string(k) + ":" + canonical_json(value[k]) for k in keys) + "}"
    raise BadInput("not JSON data")


def sha256_b64url(text):
    return b64url(hashlib.sha256(text.encode("utf-8")).digest())


def b64url(data):
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def from_b64url(text):
    """Bytes of canonical base64url without padding, else None."""
    if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z0-9_-]*", text) or len(text) % 4 == 1:
        return None
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    return data if b64url(data) == text else None


def is_str(value):
    return isinstance(value, str)


def is_safe_integer(value):
    return (
        isinstance(value, float)
        and value.is_integer()
        and abs(value) <= MAX_SAFE_INTEGER
    )


def same_number(a, b):
    return isinstance(a, float) and isinstance(b, float) and a == b


# --- The ledger's key and messages ----------------------------------------------------------


class Verifier:
    def __init__(self, jwk, key_id):
        if not isinstance(jwk, dict):
            raise BadInput("Invalid public key: expected an Ed25519 JWK (kty OKP, crv Ed25519, x)")
        kty, crv, x = jwk.get("kty"), jwk.get("crv"), jwk.get("x")
        raw = from_b64url(x)
        if kty != "OKP" or crv != "Ed25519" or raw is None or len(raw) != 32:
            raise BadInput("Invalid public key: expected an Ed25519 JWK (kty OKP, crv Ed25519, x)")
        self.key = Ed25519PublicKey.from_public_bytes(raw)
        self.key_id = (
            key_id
            if key_id is not None
            else sha256_b64url(canonical_json({"crv": crv, "kty": kty, "x": x}))
        )

    def verify(self, message, sig):
        raw = from_b64url(sig)
        if raw is None or len(raw) != 64:
            return False
        try:
            self.key.verify(raw, message.encode("utf-8"))
            return True
        except InvalidSignature:
            return False


def record_hash(record):
    return sha256_b64url(canonical_json({k: v for k, v in record.items() if k != "proof"}))


def record_message(run_id, started_at, tool_call_id, hash_):
    return canonical_json([RECORD_TAG, run_id, started_at, tool_call_id, hash_])


def stamped_text(receipt):
    return canonical_json({k: v for k, v in receipt.items() if k != "timestamp"})


# --- The verdict ------------------------------------------------------------------------------


def fail(tool_call_id, reason):
    return {"ok": False, "toolCallId": tool_call_id, "reason": reason}


def own_proof(verifier, instance, record, hash_):
    proof = record.get("proof", MISSING)
    if proof is MISSING:
        return "UNSIGNED"
    if not isinstance(proof, dict):
        return "ALTERED"
    if not (is_str(proof.get("hash")) and proof["hash"] == hash_):
        return "ALTERED"
    if not (is_str(proof.get("keyId")) and proof["keyId"] == verifier.key_id):
        return "BAD_SIGNATURE"
    message = record_message(instance[0], instance[1], record["toolCallId"], hash_)
    return None if verifier.verify(message, proof.get("sig")) else "BAD_SIGNATURE"


def is_receipt_call(call):
    hash_, state = call.get("hash", MISSING), call.get("state", MISSING)
    if state is MISSING:
        return is_str(hash_)
    if state == "UNSIGNED":
        return hash_ is None or is_str(hash_)
    return state == "INCOMPLETE" and hash_ is None


def check_receipt(verifier, instance, value):
    if not isinstance(value, dict):
        return None
    run_id, started_at = instance
    calls, facts_hash = value.get("calls", MISSING), value.get("factsHash", MISSING)
    key_id, sig = value.get("keyId", MISSING), value.get("sig", MISSING)
    if (
        not (is_str(value.get("runId")) and value["runId"] == run_id)
        or not same_number(value.get("startedAt"), started_at)
        or not (is_str(key_id) and key_id == verifier.key_id)
        or not is_str(facts_hash)
        or not isinstance(calls, list)
    ):
        return None
    message = canonical_json([RECEIPT_TAG, run_id, started_at, calls, facts_hash, key_id])
    if not verifier.verify(message, sig):
        return None
    for call in calls:
        if not isinstance(call, dict) or not is_str(call.get("toolCallId")) or not is_receipt_call(call):
            return None
    return {"calls": calls, "factsHash": facts_hash}


def verify_unsealed(verifier, instance, records, facts):
    seen = set()
    for record in records:
        tool_call_id = record["toolCallId"]
        if tool_call_id in seen or record["runId"] != instance[0]:
            return fail(tool_call_id, "INSERTED")
        seen.add(tool_call_id)
        problem = own_proof(verifier, instance, record, record_hash(record))
        if problem is not None and not (problem == "UNSIGNED" and record.get("status") == "PROJECTING"):
            return fail(tool_call_id, problem)
    gap = check_positions(records)
    if gap is not None:
        return gap
    if facts is not None and facts is not MISSING:
        return fail(None, "FACTS_ALTERED")
    return {"ok": True, "sealed": False, "calls": len(records)}


def check_positions(records):
    """The n-th record of an unsealed run has seq n: a gap is MISSING, a move REORDERED."""
    owner, last = {}, 0
    for record in records:
        seq = record.get("seq", MISSING)
        if not is_safe_integer(seq) or seq < 1:
            return fail(record["toolCallId"], "ALTERED")
        if int(seq) in owner:
            return fail(record["toolCallId"], "INSERTED")
        owner[int(seq)] = record["toolCallId"]
        last = max(last, int(seq))
    for seq in range(1, last + 1):
        if seq not in owner:
            return {"ok": False, "toolCallId": None, "reason": "MISSING", "seq": seq}
    for i, record in enumerate(records):
        if int(record["seq"]) != i + 1:
            return fail(owner[i + 1], "REORDERED")
    return None


def verify_sealed(verifier, instance, records, receipt_value, facts, trusted):
    receipt = check_receipt(verifier, instance, receipt_value)
    if receipt is None:
        return fail(None, "BAD_SIGNATURE")
    timestamped_at = None
    if trusted is not None:
        token = from_b64url(receipt_value.get("timestamp", MISSING))
        at = None if not token else check_token(token, stamped_text(receipt_value), trusted)
        if at is None:
            return fail(None, "BAD_TIMESTAMP")
        timestamped_at = at
    calls = receipt["calls"]
    in_receipt = {call["toolCallId"] for call in calls}
    in_bundle = {record["toolCallId"] for record in records}
    seen = set()
    for i in range(max(len(calls), len(records))):
        call = calls[i] if i < len(calls) else None
        record = records[i] if i < len(records) else None
        if record is None:
            return fail(call["toolCallId"], "MISSING")
        tool_call_id = record["toolCallId"]
        if call is None:
            return fail(tool_call_id, "INSERTED")
        hash_ = record_hash(record)
        if tool_call_id == call["toolCallId"]:
            seen.add(tool_call_id)
            if call["hash"] is not None and hash_ != call["hash"]:
                return fail(tool_call_id, "ALTERED")
            if record["runId"] != instance[0]:
                return fail(tool_call_id, "INSERTED")
            problem = own_proof(verifier, instance, record, hash_)
            in_flight = call.get("state") == "INCOMPLETE" and record.get("status") == "PROJECTING"
            if problem is not None and not (problem == "UNSIGNED" and in_flight):
                return fail(tool_call_id, problem)
            continue
        if tool_call_id in seen:
            return fail(tool_call_id, "INSERTED")
        if tool_call_id not in in_receipt:
            altered = (
                call["toolCallId"] not in in_bundle
                and own_proof(verifier, instance, record, hash_) is not None
            )
            return fail(call["toolCallId"], "ALTERED") if altered else fail(tool_call_id, "INSERTED")
        if call["toolCallId"] not in in_bundle:
            return fail(call["toolCallId"], "MISSING")
        return fail(call["toolCallId"], "REORDERED")
    if not isinstance(facts, list):
        return fail(None, "FACTS_ALTERED")
    if sha256_b64url(canonical_json(facts)) != receipt["factsHash"]:
        return fail(None, "FACTS_ALTERED")
    verdict = {"ok": True, "sealed": True, "calls": len(calls)}
    if timestamped_at is not None:
        verdict["timestampedAt"] = timestamped_at
    return verdict


def verify_run(bundle, public_key, key_id=None, run=None, tsa_certificates=None):
    """verifyRun(bundle, publicKey, { keyId, run, tsaCertificates }); BadInput for a TypeError.

    `bundle` and `public_key` as parse_json reads them (numbers as floats); `run` a dict of
    `runId` (str) and maybe `startedAt` (int); `tsa_certificates` a list of PEM texts."""
    trusted = None if tsa_certificates is None else read_certificates(tsa_certificates)
    verifier = Verifier(public_key, key_id)
    if not _depth_ok(bundle):
        raise BadInput("Invalid bundle: not JSON data")
    if not isinstance(bundle, dict) or bundle.get("format") != BUNDLE_FORMAT:
        raise BadInput(f'Invalid bundle: expected format "{BUNDLE_FORMAT}"')
    run_state, records = bundle.get("run"), bundle.get("records")
    if (
        not isinstance(run_state, dict)
        or not is_str(run_state.get("runId"))
        or not is_safe_integer(run_state.get("startedAt"))
    ):
        raise BadInput("Invalid bundle: expected a run with a runId and a startedAt")
    if not isinstance(records, list):
        raise BadInput("Invalid bundle: expected records")
    for record in records:
        if not isinstance(record, dict) or not is_str(record.get("toolCallId")) or not is_str(record.get("runId")):
            raise BadInput("Invalid bundle: each record needs a string runId and toolCallId")
    instance = (run_state["runId"], run_state["startedAt"])
    if run is not None and (
        run["runId"] != instance[0]
        or (run.get("startedAt") is not None and float(run["startedAt"]) != instance[1])
    ):
        return fail(None, "OTHER_RUN")
    receipt = bundle.get("receipt", MISSING)
    facts = bundle.get("facts", MISSING)
    if receipt is None or receipt is MISSING:
        return verify_unsealed(verifier, instance, records, facts)
    return verify_sealed(verifier, instance, records, receipt, facts, trusted)


# --- RFC 3161 timestamps: a small DER reader, CMS and X.509 checks --------------------------

OID = {
    "sha256": "2.16.840.1.101.3.4.2.1",
    "sha384": "2.16.840.1.101.3.4.2.2",
    "sha512": "2.16.840.1.101.3.4.2.3",
    "signedData": "1.2.840.113549.1.7.2",
    "tstInfo": "1.2.840.113549.1.9.16.1.4",
    "contentType": "1.2.840.113549.1.9.3",
    "messageDigest": "1.2.840.113549.1.9.4",
}
DIGESTS = {OID["sha256"]: hashes.SHA256, OID["sha384"]: hashes.SHA384, OID["sha512"]: hashes.SHA512}
# Signature algorithm -> (key type, hash; None: the signer's digest).
CERTIFICATE_SIGNATURES = {
    "1.2.840.113549.1.1.11": ("rsa", hashes.SHA256),
    "1.2.840.113549.1.1.12": ("rsa", hashes.SHA384),
    "1.2.840.113549.1.1.13": ("rsa", hashes.SHA512),
    "1.2.840.10045.4.3.2": ("ec", hashes.SHA256),
    "1.2.840.10045.4.3.3": ("ec", hashes.SHA384),
    "1.2.840.10045.4.3.4": ("ec", hashes.SHA512),
}
SIGNATURES = dict(CERTIFICATE_SIGNATURES, **{"1.2.840.113549.1.1.1": ("rsa", None)})
MAX_CHAIN = 8


class Der:
    """One DER element: its tag byte, its whole bytes and its content."""

    def __init__(self, data, start=0):
        if start + 2 > len(data):
            raise ValueError("short")
        self.tag = data[start]
        if self.tag & 0x1F == 0x1F:
            raise ValueError("long tags are not read")
        length, at = data[start + 1], start + 2
        if length & 0x80:
            count = length & 0x7F
            if count == 0 or count > 4 or at + count > len(data):
                raise ValueError("bad length")
            length = int.from_bytes(data[at : at + count], "big")
            at += count
        if at + length > len(data):
            raise ValueError("short")
        self.whole = data[start : at + length]
        self.content = data[at : at + length]
        self.end = at + length

    def children(self):
        items, at = [], 0
        while at < len(self.content):
            item = Der(self.content, at)
            items.append(item)
            at = item.end
        return items

    def oid(self):
        if self.tag != 0x06 or not self.content:
            raise ValueError("not an OID")
        first, values, value = self.content[0], [], 0
        values.extend(divmod(first, 40) if first < 80 else (2, first - 80))
        for byte in self.content[1:]:
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                values.append(value)
                value = 0
        return ".".join(str(v) for v in values)


def whole_der(data):
    element = Der(data)
    if element.end != len(data):
        raise ValueError("bytes after the element")
    return element


def read_certificates(texts):
    """The PEM certificates of `--tsa` files (tsaCertificates), parsed; BadInput otherwise."""
    if not texts:
        raise BadInput("Invalid options.tsaCertificates: expected at least one certificate")
    certificates = []
    for text in texts:
        blocks = re.findall(
            r"-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]*?)-----END CERTIFICATE-----", text
        )
        if not blocks:
            raise BadInput("Invalid options.tsaCertificates: a text without a PEM certificate")
        for block in blocks:
            try:
                der = base64.b64decode(re.sub(r"\s+", "", block), validate=True)
                whole_der(der)
                certificates.append(x509.load_der_x509_certificate(der))
            except Exception:
                raise BadInput("Invalid options.tsaCertificates: a certificate does not parse") from None
    return certificates


def _epoch_ms(moment):
    return calendar.timegm(moment.utctimetuple()) * 1000


def _gen_time(element):
    match = re.fullmatch(rb"(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(?:\.(\d+))?Z", element.content)
    if element.tag != 0x18 or match is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction = (match.group(7) or b"").decode()
    millis = int((fraction + "000")[:3])
    return calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0)) * 1000 + millis


def _verify_signature(public_key, kind, hash_type, signature, data):
    try:
        if kind == "rsa" and isinstance(public_key, rsa.RSAPublicKey):
            public_key.verify(signature, data, padding.PKCS1v15(), hash_type())
            return True
        if kind == "ec" and isinstance(public_key, ec.EllipticCurvePublicKey):
            public_key.verify(signature, data, ec.ECDSA(hash_type()))
            return True
    except (InvalidSignature, ValueError, TypeError):
        return False
    return False


def _extension(certificate, extension_type):
    try:
        return certificate.extensions.get_extension_for_class(extension_type)
    except Exception:
        return None


def _is_time_stamper(certificate):
    eku = _extension(certificate, x509.ExtendedKeyUsage)
    return eku is not None and eku.critical and ExtendedKeyUsageOID.TIME_STAMPING in eku.value


def _is_ca(certificate):
    constraints = _extension(certificate, x509.BasicConstraints)
    return constraints is not None and constraints.value.ca


def _valid_at(certificate, at):
    return _epoch_ms(certificate.not_valid_before) <= at <= _epoch_ms(certificate.not_valid_after)


def _signed_by(certificate, issuer):
    algorithm = CERTIFICATE_SIGNATURES.get(certificate.signature_algorithm_oid.dotted_string)
    if algorithm is None:
        return False
    kind, hash_type = algorithm
    return _verify_signature(
        issuer.public_key(), kind, hash_type, certificate.signature, certificate.tbs_certificate_bytes
    )


def _chains_to(signer, carried, trusted, at):
    pool = carried + trusted
    trusted_tbs = {c.tbs_certificate_bytes for c in trusted}
    current = signer
    for _ in range(MAX_CHAIN + 1):
        if not _valid_at(current, at):
            return False
        if current.tbs_certificate_bytes in trusted_tbs:
            return True
        issuer = next(
            (
                c
                for c in pool
                if c.tbs_certificate_bytes != current.tbs_certificate_bytes
                and c.subject == current.issuer
                and _is_ca(c)
                and _signed_by(current, c)
            ),
            None,
        )
        if issuer is None:
            return False
        current = issuer
    return False


def check_token(token, text, trusted):
    """The token's genTime (epoch ms) when it stamps `text` for a trusted TSA, else None."""
    try:
        return _check_token(token, text, trusted)
    except (ValueError, IndexError):
        return None


def _check_token(token, text, trusted):
    if len(token) > MAX_TIMESTAMP_BYTES:
        return None
    info = whole_der(token)
    content_type, explicit = info.children()[:2]
    if info.tag != 0x30 or content_type.oid() != OID["signedData"] or explicit.tag != 0xA0:
        return None
    signed = explicit.children()[0].children()
    # version, digestAlgorithms, encapContentInfo, [0] certificates, [1] crls, signerInfos
    encap = signed[2].children()
    if encap[0].oid() != OID["tstInfo"] or len(encap) < 2 or encap[1].tag != 0xA0:
        return None
    e_content = encap[1].children()[0]
    if e_content.tag != 0x04:
        return None
    tst = whole_der(e_content.content).children()
    imprint = tst[2].children()
    if imprint[0].children()[0].oid() != OID["sha256"] or imprint[1].tag != 0x04:
        return None
    if imprint[1].content != hashlib.sha256(text.encode("utf-8")).digest():
        return None
    at = _gen_time(tst[4])
    if at is None:
        return None
    rest = signed[3:]
    certificates_der = [e for e in rest if e.tag == 0xA0]
    signer_infos = rest[-1]
    if signer_infos.tag != 0x31 or len(signer_infos.children()) != 1:
        return None
    carried = []
    for certificates in certificates_der:
        for element in certificates.children():
            if element.tag == 0x30:
                carried.append(x509.load_der_x509_certificate(element.whole))
    signer = signer_infos.children()[0].children()
    sid, digest_algorithm = signer[1], signer[2].children()[0].oid()
    attributes = signer[3]
    if attributes.tag != 0xA0:
        return None
    signature_algorithm, signature = signer[4].children()[0].oid(), signer[5]
    found = {}
    for attribute in attributes.children():
        parts = attribute.children()
        found.setdefault(parts[0].oid(), parts[1].children()[0])
    content_type_value = found.get(OID["contentType"])
    if content_type_value is None or content_type_value.oid() != OID["tstInfo"]:
        return None
    if digest_algorithm not in DIGESTS or signature_algorithm not in SIGNATURES:
        return None
    digest = found.get(OID["messageDigest"])
    if digest is None:
        return None
    check = hashes.Hash(DIGESTS[digest_algorithm]())
    check.update(e_content.content)
    if check.finalize() != digest.content:
        return None
    certificate = _signer_certificate(sid, carried)
    if certificate is None:
        return None
    kind, hash_type = SIGNATURES[signature_algorithm]
    signed_attributes = b"\x31" + attributes.whole[1:]
    if not _verify_signature(
        certificate.public_key(), kind, hash_type or DIGESTS[digest_algorithm],
        signature.content, signed_attributes,
    ):
        return None
    if not _is_time_stamper(certificate):
        return None
    return at if _chains_to(certificate, carried, trusted, at) else None


def _signer_certificate(sid, carried):
    if sid.tag == 0x30:
        issuer_der, serial = sid.children()
        serial_number = int.from_bytes(serial.content, "big", signed=True)
        for certificate in carried:
            if certificate.serial_number == serial_number and _name_der(certificate, "issuer") == issuer_der.whole:
                return certificate
        return None
    if sid.tag == 0x80:
        for certificate in carried:
            spki = whole_der(
                certificate.public_key().public_bytes(
                    serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
                )
            ).children()[1]
            if hashlib.sha1(spki.content[1:]).digest() == sid.content:
                return certificate
    return None


def _name_der(certificate, which):
    """The DER of a certificate's issuer or subject name, as its TBS holds it."""
    fields = whole_der(certificate.tbs_certificate_bytes).children()
    offset = 1 if fields[0].tag == 0xA0 else 0  # [0] version
    return fields[offset + (2 if which == "issuer" else 4)].whole


# --- The program ----------------------------------------------------------------------------

USAGE = "usage: verify.py <bundle.json> <public.jwk> [--tsa <cert.pem>]... [--run-id <id> [--started-at <ms>]]"


def read_arguments(args):
    files, tsa, run_id, started_at = [], [], None, None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("--tsa", "--run-id", "--started-at"):
            if i + 1 >= len(args):
                return None
            value = args[i + 1]
            i += 2
            if arg == "--tsa":
                tsa.append(value)
            elif arg == "--run-id":
                run_id = value
            elif re.fullmatch(r"0|[1-9][0-9]{0,15}", value):
                started_at = int(value)
            else:
                return None
            continue
        if arg.startswith("--"):
            return None
        files.append(arg)
        i += 1
    if len(files) != 2 or (started_at is not None and run_id is None):
        return None
    return files, tsa, run_id, started_at


def read_text(path):
    with open(path, "rb") as file:
        return file.read().decode("utf-8-sig", errors="replace")


def main(args):
    read = read_arguments(args)
    if read is None:
        sys.stderr.write(USAGE + "\n")
        return 2
    (bundle_path, key_path), tsa, run_id, started_at = read
    try:
        bundle = parse_json(read_text(bundle_path), bundle_path)
        key = parse_json(read_text(key_path), key_path)
        key_id = None
        if isinstance(key, dict) and "publicKey" in key:
            key_id = key["keyId"] if is_str(key.get("keyId")) else None
            key = key["publicKey"]
        run = None
        if run_id is not None:
            run = {"runId": run_id} if started_at is None else {"runId": run_id, "startedAt": started_at}
        certificates = [read_text(path) for path in tsa] if tsa else None
        verdict = verify_run(bundle, key, key_id, run, certificates)
    except (BadInput, OSError) as error:
        sys.stderr.write(f"verify: {error}\n")
        return 2
    print(json.dumps(verdict, separators=(",", ":")))
    return 0 if verdict["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
