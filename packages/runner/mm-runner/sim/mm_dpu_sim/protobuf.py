"""Just enough protobuf (wire format) to read and write XIR's `serial_v2` graphs: varints,
length-delimited fields, fixed 32/64-bit values. No generated code, no dependency."""

import struct

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5


class DecodeError(ValueError):
    pass


def read_varint(buf, pos, end):
    result = 0
    shift = 0
    while True:
        if pos >= end:
            raise DecodeError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise DecodeError("varint longer than 10 bytes")


def fields(buf, start=0, end=None):
    """Yields (field number, wire type, value) of a message in buf[start:end]. A length-
    delimited value is (start, end) into buf (no copy); others are ints."""
    if end is None:
        end = len(buf)
    pos = start
    while pos < end:
        key, pos = read_varint(buf, pos, end)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise DecodeError("field number 0")
        if wire == VARINT:
            value, pos = read_varint(buf, pos, end)
        elif wire == FIXED64:
            if pos + 8 > end:
                raise DecodeError("truncated fixed64")
            value = struct.unpack_from("<Q", buf, pos)[0]
            pos += 8
        elif wire == FIXED32:
            if pos + 4 > end:
                raise DecodeError("truncated fixed32")
            value = struct.unpack_from("<I", buf, pos)[0]
            pos += 4
        elif wire == LENGTH:
            n, pos = read_varint(buf, pos, end)
            if pos + n > end:
                raise DecodeError("length-delimited field runs past its message")
            value = (pos, pos + n)
            pos += n
        else:
            raise DecodeError("wire type %d is not supported" % wire)
        yield number, wire, value


def to_signed(value, bits):
    if value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


# ── writing ─────────────────────────────────────────────────────────────────────────────


def varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(number, wire):
    return varint((number << 3) | wire)


def f_varint(number, n):
    return key(number, VARINT) + varint(n)


def f_bytes(number, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    return key(number, LENGTH) + varint(len(data)) + data


def f_double(number, x):
    return key(number, FIXED64) + struct.pack("<d", x)


def f_float(number, x):
    return key(number, FIXED32) + struct.pack("<f", x)
