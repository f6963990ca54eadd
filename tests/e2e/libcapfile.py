# SPDX-License-Identifier: MIT
"""Capture files (src/capfile/capfile.h) as Python lists, for tests that craft
or damage them: parse() a file into (version, flags, [(type, payload)]),
build() it back. Version 2 records carry CRC32C checksums, recomputed by
build()."""
import struct

MAGIC = b"SFPROFCA"
META, MAPPING, EVENT, KSTACK, KSYM, STATS, END = range(1, 8)
MAPPING_FIXED = 64

_T = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _T.append(_c)


def crc32c(data, crc=0):
    c = crc ^ 0xFFFFFFFF
    for b in data:
        c = _T[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def pad8(n):
    return (8 - (n & 7)) & 7


def hdr_size(version):
    return 8 if version == 1 else 16


def parse(data):
    """(version, flags, [(type, payload bytes)]) up to the first damage."""
    assert data[:8] == MAGIC, "not a capture"
    version, flags = struct.unpack_from("<II", data, 8)
    hs = hdr_size(version)
    pos, recs = 16, []
    while pos + hs <= len(data):
        typ, ln = struct.unpack_from("<II", data, pos)
        if pos + hs + ln > len(data):
            break
        recs.append((typ, bytes(data[pos + hs:pos + hs + ln])))
        pos += hs + ln + pad8(ln)
    return version, flags, recs


def record_bytes(version, typ, payload):
    ln = len(payload)
    if version == 1:
        hdr = struct.pack("<II", typ, ln)
    else:
        h8 = struct.pack("<II", typ, ln)
        crc_p = crc32c(payload, crc32c(h8))
        h12 = h8 + struct.pack("<I", crc_p)
        hdr = h12 + struct.pack("<I", crc32c(h12))
    return hdr + payload + b"\0" * pad8(ln)


def build(version, flags, recs):
    out = bytearray(MAGIC + struct.pack("<II", version, flags))
    for typ, payload in recs:
        out += record_bytes(version, typ, payload)
    return bytes(out)


def mapping_path(payload):
    blen, plen = struct.unpack_from("<II", payload, 56)
    return payload[MAPPING_FIXED + blen:MAPPING_FIXED + blen + plen].decode(
        "utf-8", "replace")


def mapping_with_path(payload, path):
    """The MAPPING payload with its path replaced (build-id kept)."""
    blen = struct.unpack_from("<I", payload, 56)[0]
    p = path.encode() if isinstance(path, str) else path
    fixed = bytearray(payload[:MAPPING_FIXED])
    struct.pack_into("<I", fixed, 60, len(p))
    return bytes(fixed) + payload[MAPPING_FIXED:MAPPING_FIXED + blen] + p


def record_offsets(data):
    """[(offset, type, length incl. header and padding)] of each record."""
    version = struct.unpack_from("<I", data, 8)[0]
    hs = hdr_size(version)
    pos, out = 16, []
    while pos + hs <= len(data):
        typ, ln = struct.unpack_from("<II", data, pos)
        if pos + hs + ln > len(data):
            break
        out.append((pos, typ, hs + ln + pad8(ln)))
        pos += hs + ln + pad8(ln)
    return out
