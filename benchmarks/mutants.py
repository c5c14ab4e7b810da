"""Seeded mutants of the zip files the project reads, shared by benchmarks/fuzz.py and the tests.

Each mutator takes a file's bytes and a generator and returns other bytes, seeded, never reading
anything else. Some damage the bytes as they lie (``flip``, ``cut``, ``repeat``, ``extend``); the
others rewrite the archive as a valid zip with valid CRCs, so that the damage reaches the
readers behind the zip's checks: a member removed, repeated, renamed, added, recompressed or
damaged inside (``inner``); an .npy header given another shape (huge ones included), dtype or
order (``shape``, ``dtype``, ``order``), or the empty string dtype ``'<U0'`` (``empty_string``);
float arrays given NaN, +inf, -inf or 1e308 (``non_finite``; an array of integers is stored as
float64 for it) and JSON fields given those or other hostile values (``json_non_finite``,
``json_field``). A mutator that finds nothing to change in a file (no JSON, say) returns the
bytes of another mutation.
"""

from __future__ import annotations

import io
import json
import warnings
import zipfile
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

Mutator = Callable[[bytes, np.random.Generator], bytes]
Members = list[tuple[zipfile.ZipInfo, bytes]]
NON_FINITE = (float("nan"), float("inf"), float("-inf"), 1e308)
HOSTILE: tuple[Any, ...] = (-1, 0, 1, 2**31, 2**63, 10**7, 10**12, 1e-308, 0.5, "", "x" * 300,
                           None, True, [], {}, [[1, 2]], {"a": 1})


# --- the bytes as they lie ------------------------------------------------------------------


def flip(data: bytes, rng: np.random.Generator) -> bytes:
    """One to four bytes replaced, most in the first 4 KB or the last 256 (the zip's headers
    and directory)."""
    out = bytearray(data)
    for _ in range(int(rng.integers(1, 5))):
        where = rng.random()
        if where < 0.4:
            at = int(rng.integers(min(len(out), 4096)))
        elif where < 0.8:
            at = len(out) - 1 - int(rng.integers(min(len(out), 256)))
        else:
            at = int(rng.integers(len(out)))
        out[at] = int(rng.choice([0, 0xFF, 0x7F, 0x80, int(rng.integers(256))]))
    return bytes(out)


def cut(data: bytes, rng: np.random.Generator) -> bytes:
    return data[: int(rng.integers(len(data)))]


def repeat(data: bytes, rng: np.random.Generator) -> bytes:
    """A chunk of the file inserted again elsewhere."""
    start = int(rng.integers(len(data)))
    chunk = data[start : start + int(rng.integers(1, 200))]
    at = int(rng.integers(len(data)))
    return data[:at] + chunk + data[at:]


def extend(data: bytes, rng: np.random.Generator) -> bytes:
    size = int(rng.integers(1, 5000))
    return data + (bytes(size) if rng.random() < 0.5 else rng.bytes(size))


# --- the archive's members, rewritten as a valid zip ----------------------------------------


def read_members(data: bytes) -> Members:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return [(info, archive.read(info)) for info in archive.infolist()]


def write_members(members: Members, method: int | None = None) -> bytes:
    """A zip of ``members`` (each with its own compression unless ``method``), CRCs valid."""
    out = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(out, "w") as archive:
        warnings.simplefilter("ignore")  # zipfile's "Duplicate name"
        for info, content in members:
            archive.writestr(info.filename, content,
                             info.compress_type if method is None else method,
                             compresslevel=1)  # fast: what it compresses matters, not how well
    return out.getvalue()


def _pick(members: Members, rng: np.random.Generator, test: Callable[[str, bytes], bool]
          = lambda name, content: True) -> int | None:
    chosen = [i for i, (info, content) in enumerate(members) if test(info.filename, content)]
    return None if not chosen else chosen[int(rng.integers(len(chosen)))]


def _chosen(members: Members, rng: np.random.Generator, test: Callable[[str, bytes], bool]
            = lambda name, content: True) -> int:
    """``_pick`` where the file always has such a member (every file mutated here does)."""
    index = _pick(members, rng, test)
    assert index is not None  # a file of ours, or a zip inside one, has such a member
    return index


def remove(data: bytes, rng: np.random.Generator) -> bytes:
    members = read_members(data)
    members.pop(_chosen(members, rng))
    return write_members(members)


def duplicate(data: bytes, rng: np.random.Generator) -> bytes:
    members = read_members(data)
    index = _chosen(members, rng)
    members.insert(int(rng.integers(len(members) + 1)), members[index])
    return write_members(members)


def rename(data: bytes, rng: np.random.Generator) -> bytes:
    """A member renamed to another's name, a new name, or one of odd characters."""
    members = read_members(data)
    index = _chosen(members, rng)
    names = [info.filename for info, _ in members]
    name = str(rng.choice([*names, "extra.npy", "format.npy", "../x.npy", "a" * 300, "é.npy",
                           "weights", ""]))
    info = zipfile.ZipInfo(name or "x", members[index][0].date_time)
    info.compress_type = members[index][0].compress_type
    members[index] = (info, members[index][1])
    return write_members(members)


def add(data: bytes, rng: np.random.Generator) -> bytes:
    members = read_members(data)
    content = members[_chosen(members, rng)][1] if rng.random() < 0.5 else rng.bytes(100)
    name = str(rng.choice(["extra.npy", "alphazero.npy", "format.npy", "gym_tictactoe.json"]))
    members.insert(int(rng.integers(len(members) + 1)), (zipfile.ZipInfo(name), content))
    return write_members(members)


def recompress(data: bytes, rng: np.random.Generator) -> bytes:
    """Every member stored, deflated, bzip2'd or lzma'd (the last two: ours never are)."""
    methods = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)
    return write_members(read_members(data), int(rng.choice(methods)))


def inner(data: bytes, rng: np.random.Generator) -> bytes:
    """One member's content damaged (``flip``, ``cut``, ``repeat`` or, inside a member that is
    itself a zip, a member of that one), stored again with a valid CRC."""
    members = read_members(data)
    index = _chosen(members, rng, lambda name, content: len(content) > 0)
    info, content = members[index]
    if content.startswith(b"PK\x03\x04") and rng.random() < 0.5:
        changed = _mutate(content, rng, (remove, duplicate, rename, inner, dtype, shape))
    else:
        changed = _mutate(content, rng, (flip, cut, repeat))
    members[index] = (info, changed)
    return write_members(members)


def _mutate(data: bytes, rng: np.random.Generator, choices: tuple[Mutator, ...]) -> bytes:
    return choices[int(rng.integers(len(choices)))](data, rng)


# --- .npy headers and payloads --------------------------------------------------------------


def _is_npy(name: str, content: bytes) -> bool:
    return content.startswith(b"\x93NUMPY")


def npy_parts(content: bytes) -> tuple[dict[str, Any], bytes]:
    """An .npy member's header fields and its data bytes (the header is trusted: it is ours
    until a mutator writes it)."""
    stream = io.BytesIO(content)
    version = np.lib.format.read_magic(stream)
    read_header = getattr(np.lib.format, f"read_array_header_{version[0]}_0")
    shape, fortran, dtype = read_header(stream)
    fields = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": fortran,
              "shape": shape}
    return fields, content[stream.tell():]


def npy(fields: dict[str, Any], body: bytes) -> bytes:
    """An .npy of header ``fields`` (repr'd as numpy writes them, whatever they say) and
    ``body``."""
    text = "{" + "".join(f"'{key}': {value!r}, " for key, value in fields.items()) + "}"
    raw = text.encode("latin1")
    raw += b" " * (-(len(raw) + 11) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(raw).to_bytes(2, "little") + raw + body


def _is_string(name: str, content: bytes) -> bool:
    return _is_npy(name, content) and npy_parts(content)[0]["descr"][1] == "U"


def _edit_header(data: bytes, rng: np.random.Generator, edit: Callable[[dict, Any], None],
                 strings: bool = False) -> bytes:
    """An .npy member's header edited (``strings``: a string member's, where there is one)."""
    members = read_members(data)
    index = (_pick(members, rng, _is_string) if strings else None)
    index = _pick(members, rng, _is_npy) if index is None else index
    if index is None:  # no .npy in this file: a member's bytes instead
        return inner(data, rng)
    fields, body = npy_parts(members[index][1])
    edit(fields, rng)
    members[index] = (members[index][0], npy(fields, body))
    return write_members(members)


def _shape(fields: dict[str, Any], rng: np.random.Generator) -> None:
    old = fields["shape"]
    n = int(np.prod(old)) if old else 1
    fields["shape"] = [(), (0,), (1,), (n + 1,), (max(n - 1, 0),), (n, 1), (1, n), (2**40,),
                       (2**62, 4), (-1,), (2**31, 2**31), (*old, 1), old[::-1], (10**7, 9),
                       (n,) * 3][int(rng.integers(15))]


DTYPES = ("<f8", "<f4", ">f4", "<f2", "<i8", "|i1", "|u1", "|b1", "<c16", "|O", "<U1", "<U64",
          "|S4", "<M8[s]", "<V8", [("a", "<f4")], ("|i1", (10**9,)), "<U99999999")


def _dtype(fields: dict[str, Any], rng: np.random.Generator) -> None:
    fields["descr"] = DTYPES[int(rng.integers(len(DTYPES)))]


def shape(data: bytes, rng: np.random.Generator) -> bytes:
    return _edit_header(data, rng, _shape)


def dtype(data: bytes, rng: np.random.Generator) -> bytes:
    return _edit_header(data, rng, _dtype)


def order(data: bytes, rng: np.random.Generator) -> bytes:
    return _edit_header(data, rng, lambda fields, _: fields.update(
        fortran_order=not fields["fortran_order"]))


def empty_string(data: bytes, rng: np.random.Generator) -> bytes:
    """A string member's dtype ``'<U0'``, strings of no characters (issue 29 item 10)."""
    return _edit_header(data, rng, lambda fields, _: fields.update(descr="<U0"), strings=True)


def _float_record(name: str, content: bytes) -> bool:
    """A torch record of tensor data (``archive/data/0``): float32 values, as ours hold."""
    return "/data/" in name and len(content) >= 4 and len(content) % 4 == 0


def _spoil(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``values`` (flat, float) with one to three of them, or all, NaN, +inf, -inf or 1e308
    (inf in float32)."""
    out = values.copy()
    bad = NON_FINITE[int(rng.integers(len(NON_FINITE)))]
    with np.errstate(over="ignore"):
        if rng.random() < 0.2:
            out[:] = bad
        else:
            out[rng.integers(len(out), size=int(rng.integers(1, 4)))] = bad
    return out


def non_finite(data: bytes, rng: np.random.Generator) -> bytes:
    """A float array of the file (an .npy, or a tensor in an inner torch zip) given NaN, inf,
    -inf or 1e308; where there is none, an integer array stored as float64 with them."""
    members = read_members(data)
    floats = _pick(members, rng, lambda name, content: _is_npy(name, content)
                   and npy_parts(content)[0]["descr"][1] == "f"
                   and np.prod(npy_parts(content)[0]["shape"]) > 0)
    torch = _pick(members, rng, lambda name, content: content.startswith(b"PK\x03\x04") and any(
        _float_record(info.filename, record) for info, record in read_members(content)))
    if floats is None and torch is not None:
        records = read_members(members[torch][1])
        index = _chosen(records, rng, lambda name, content: _float_record(name, content))
        values = np.frombuffer(records[index][1], "<f4")
        records[index] = (records[index][0], _spoil(values, rng).tobytes())
        members[torch] = (members[torch][0], write_members(records))
        return write_members(members)
    index = floats if floats is not None else _chosen(
        members, rng, lambda name, content: _is_npy(name, content)
        and npy_parts(content)[0]["descr"][1] in "iub")
    fields, body = npy_parts(members[index][1])
    array = np.frombuffer(body, fields["descr"], count=int(np.prod(fields["shape"])))
    array = _spoil(array.astype(array.dtype if fields["descr"][1] == "f" else "<f8"), rng)
    fields["descr"] = np.lib.format.dtype_to_descr(array.dtype)
    members[index] = (members[index][0], npy(fields, array.tobytes()))
    return write_members(members)


def _json_of(name: str, content: bytes) -> Any:
    """The JSON object a member holds (raw, or as an .npy string), or None."""
    try:
        if _is_npy(name, content):
            fields, body = npy_parts(content)
            if fields["descr"][1] != "U" or fields["shape"] != ():
                return None
            content = np.frombuffer(body, fields["descr"], count=1)[0].encode()
        found = json.loads(content)
    except (ValueError, UnicodeError):
        return None
    return found if isinstance(found, (dict, list)) and found else None


def _leaves(value: Any, path: tuple = ()) -> list[tuple]:
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in _leaves(item, (*path, key))]
    if isinstance(value, list):
        return [leaf for i, item in enumerate(value) for leaf in _leaves(item, (*path, i))]
    return [(path, value)]


def _edit_json(data: bytes, rng: np.random.Generator, numbers: bool) -> bytes:
    """One leaf of a JSON member set to a non-finite number (``numbers``: a numeric leaf) or to
    another hostile value; a dict's key dropped now and then."""
    members = read_members(data)
    index = _pick(members, rng, lambda name, content: _json_of(name, content) is not None)
    if index is None:
        return inner(data, rng)
    info, content = members[index]
    document = _json_of(info.filename, content)
    leaves = [(path, value) for path, value in _leaves(document) if path and (
        not numbers or (isinstance(value, (int, float)) and not isinstance(value, bool)))]
    if not leaves:
        return inner(data, rng)
    path = leaves[int(rng.integers(len(leaves)))][0]
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    if not numbers and isinstance(parent, dict) and rng.random() < 0.2:
        del parent[path[-1]]
    else:
        choices = NON_FINITE if numbers else HOSTILE
        parent[path[-1]] = choices[int(rng.integers(len(choices)))]
    text = json.dumps(document)  # NaN and Infinity as Python's json writes (and reads) them
    if _is_npy(info.filename, content):
        array = np.array(text)
        fields = {"descr": array.dtype.str, "fortran_order": False, "shape": ()}
        members[index] = (info, npy(fields, array.tobytes()))
    else:
        members[index] = (info, text.encode())
    return write_members(members)


def json_non_finite(data: bytes, rng: np.random.Generator) -> bytes:
    return _edit_json(data, rng, numbers=True)


def json_field(data: bytes, rng: np.random.Generator) -> bytes:
    return _edit_json(data, rng, numbers=False)


MUTATORS: dict[str, Mutator] = {mutator.__name__: mutator for mutator in (
    flip, cut, repeat, extend, remove, duplicate, rename, add, recompress, inner, shape, dtype,
    order, empty_string, non_finite, json_non_finite, json_field)}
# Damage at random mostly breaks a file before its values are read: these reach the values.
WEIGHTS = {"non_finite": 4, "json_non_finite": 3, "json_field": 3, "inner": 2}


def mutants(data: bytes, count: int, seed: int) -> Iterator[tuple[str, bytes]]:
    """``count`` seeded mutants of ``data``, one at a time: (the mutator's name, the bytes)."""
    rng = np.random.default_rng(seed)
    names = list(MUTATORS)
    odds = np.array([WEIGHTS.get(name, 1) for name in names], dtype=float)
    for name in rng.choice(names, size=count, p=odds / odds.sum()):
        yield str(name), MUTATORS[str(name)](data, rng)
