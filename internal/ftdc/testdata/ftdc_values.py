#!/usr/bin/python3
"""Print the values of named FTDC metrics, one sample a line.

usage: ftdc_values.py FILE NAME...      one line a sample: the NAMEs' values, tab-separated, "-" where absent
       ftdc_values.py --chunks FILE     one line a metric chunk: _id ms, metric count, samples

A second decoder for the tests of the Go reader, written from the format only:
a file is a run of BSON documents; those with type 1 carry in "data" a
little-endian uint32 length and a zlib stream holding a reference document,
the metric count, the delta count and the deltas as LEB128 varints, where a
0 is followed by a varint k and stands for k+1 zeros. A trailing partial
document ends the file. Everything else is an error.
"""
import datetime
import decimal
import math
import struct
import sys
import zlib

import bson
from bson.codec_options import CodecOptions
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.timestamp import Timestamp

OPTIONS = CodecOptions(tz_aware=True, unicode_decode_error_handler="surrogateescape")
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
MS = datetime.timedelta(milliseconds=1)
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def documents(data):
    """The whole BSON documents at the top level of data, in order."""
    at = 0
    while at + 4 <= len(data):
        (size,) = struct.unpack_from("<i", data, at)
        if size < 5 or at + size > len(data):
            return
        yield bson.decode(data[at : at + size], OPTIONS)
        at += size


def as_int(x):
    if isinstance(x, float):
        if math.isnan(x):
            return 0
        if x <= I64_MIN:
            return I64_MIN
        if x >= 2.0**63:
            return I64_MAX
        return int(x)
    return int(x)


def flatten(node, prefix, out):
    """Append (name, value) for every number in node, depth first, in order."""
    items = node.items() if isinstance(node, dict) else ((str(i), v) for i, v in enumerate(node))
    for key, v in items:
        name = prefix + key
        if isinstance(v, bool):
            out.append((name, 1 if v else 0))
        elif isinstance(v, (int, Int64, float)):
            out.append((name, as_int(v)))
        elif isinstance(v, Decimal128):
            d = v.to_decimal()
            if d.is_nan():
                out.append((name, 0))
            elif d.is_infinite():
                out.append((name, I64_MAX if d > 0 else I64_MIN))
            else:
                n = int(d.to_integral_value(rounding=decimal.ROUND_HALF_EVEN))
                out.append((name, max(I64_MIN, min(I64_MAX, n))))
        elif isinstance(v, datetime.datetime):
            out.append((name, (v - EPOCH) // MS))
        elif isinstance(v, Timestamp):
            out.append((name, v.time))
            out.append((name + ".inc", v.inc))
        elif isinstance(v, (dict, list)):
            flatten(v, name + ".", out)


def read_varints(buf, at):
    nums = []
    while at < len(buf):
        value, shift = 0, 0
        while True:
            if at >= len(buf):
                raise ValueError("varint cut short at the end of the chunk")
            b = buf[at]
            at += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        nums.append(value & (2**64 - 1))
    return nums


def chunks(path, wanted=None):
    """(id_ms, names, columns, samples) per metric chunk: columns maps the
    index of each metric named in wanted (all if None) to its samples,
    signed int64."""
    with open(path, "rb") as f:
        data = f.read()
    for doc in documents(data):
        if doc.get("type") != 1:
            continue
        blob = bytes(doc["data"])
        (length,) = struct.unpack_from("<I", blob, 0)
        raw = zlib.decompress(blob[4:])
        if len(raw) != length:
            raise ValueError("zlib gave %d bytes, the chunk says %d" % (len(raw), length))
        (ref_len,) = struct.unpack_from("<i", raw, 0)
        ref = bson.decode(raw[:ref_len], OPTIONS)
        n_metrics, n_deltas = struct.unpack_from("<II", raw, ref_len)
        pairs = []
        flatten(ref, "", pairs)
        if len(pairs) != n_metrics:
            raise ValueError("chunk %s: %d numbers in the reference, count says %d" % (doc["_id"], len(pairs), n_metrics))
        stream = read_varints(raw, ref_len + 8)
        deltas = []
        k = 0
        while k < len(stream):
            if stream[k] == 0:
                if k + 1 >= len(stream):
                    raise ValueError("zero run without its length")
                deltas.extend([0] * (stream[k + 1] + 1))
                k += 2
            else:
                deltas.append(stream[k])
                k += 1
        if len(deltas) != n_metrics * n_deltas:
            raise ValueError("chunk %s: %d deltas, want %d" % (doc["_id"], len(deltas), n_metrics * n_deltas))
        columns = {}
        for m, (name, first) in enumerate(pairs):
            if wanted is not None and name not in wanted:
                continue
            acc = first & (2**64 - 1)
            col = [acc]
            for d in deltas[m * n_deltas : (m + 1) * n_deltas]:
                acc = (acc + d) & (2**64 - 1)
                col.append(acc)
            columns[m] = [v - 2**64 if v >= 2**63 else v for v in col]
        yield (doc["_id"] - EPOCH) // MS, [name for name, _ in pairs], columns, n_deltas + 1


def main(argv):
    if len(argv) >= 2 and argv[0] == "--chunks":
        for id_ms, names, _, samples in chunks(argv[1]):
            print(id_ms, len(names), samples)
        return 0
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    path, wanted = argv[0], argv[1:]
    for _, names, columns, samples in chunks(path, set(wanted)):
        where = {}
        for m, name in enumerate(names):
            where.setdefault(name, m)
        for s in range(samples):
            print("\t".join(str(columns[where[w]][s]) if w in where else "-" for w in wanted))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
