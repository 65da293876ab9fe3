"""The documents suite's shipped sample, ``examples/orders.jsonl``: made here, deterministically.

``.venv/bin/jsonbench sample-documents [--count 10000] [--out examples/orders.jsonl]`` (a setup step) writes an
order log of ``count`` documents, one compact JSON object per line. Every value is drawn from sha256 of
(document number, field), never from a random generator's state, so every Python on every machine
writes the same bytes (``tests/unit/test_documents_input.py`` regenerates it and compares).

The mix is there to make the seeds' mechanisms show: most orders are small (about 250 bytes, one or
two items: under PostgreSQL's 2 kB TOAST threshold), one in :data:`LARGE_EVERY` is large (20-26 items
and an audit trail of random characters, about 3 kB that pglz cannot shrink under 2 kB: stored out of
line, where seed 004's update penalty lives); optional keys (``coupon`` in about a fifth, ``note`` in a
tenth) and nested objects (``items``, ``shipping``) keep it from being flat; ``status`` is the key an
application changes, ``id`` an identifier nobody updates.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: Documents of the shipped sample (a laptop-sized run: the ``laptop`` scale loads 10,000).
COUNT = 10_000
#: One document in this many is large (TOASTed).
LARGE_EVERY = 40
OUT = "examples/orders.jsonl"
STATUSES = ("new", "paid", "paid", "packed", "sent", "sent", "sent", "delivered", "delivered", "returned", "cancelled")
CHANNELS = ("web", "web", "app", "store", "phone")
CURRENCIES = ("EUR", "EUR", "USD", "GBP")
CITIES = ("Lyon", "Porto", "Graz", "Leeds", "Turku", "Gdansk", "Bilbao", "Ghent", "Aarhus", "Bergen", "Brno", "Cork")
COUNTRIES = ("FR", "PT", "AT", "GB", "FI", "PL", "ES", "BE", "DK", "NO", "CZ", "IE")
WORDS = ("blue", "oak", "lamp", "cup", "linen", "steel", "mini", "pro", "set", "kit", "wool", "glass", "desk", "pack")


def _h(n: int, salt: str) -> int:
    """A 64-bit number drawn from (document, field)."""
    return int.from_bytes(hashlib.sha256(f"orders-36:{n}:{salt}".encode()).digest()[:8], "big")


def _pick(options: tuple[str, ...], n: int, salt: str) -> str:
    return options[_h(n, salt) % len(options)]


def _token(n: int, salt: str, length: int) -> str:
    """``length`` random URL-safe characters (incompressible for pglz and lz4)."""
    out = b""
    i = 0
    while len(out) * 4 // 3 < length + 4:
        out += hashlib.sha256(f"orders-36:{n}:{salt}:{i}".encode()).digest()
        i += 1
    return base64.urlsafe_b64encode(out).decode("ascii")[:length]


def _item(n: int, i: int, large: bool) -> dict[str, Any]:
    item: dict[str, Any] = {
        "sku": f"{_pick(WORDS, n, f'w{i}')[:2].upper()}{_h(n, f'sku{i}') % 100000:05d}",
        "qty": 1 + _h(n, f"qty{i}") % 4,
        "price": round((199 + _h(n, f"price{i}") % 9800) / 100, 2),
    }
    if large:
        item["name"] = f"{_pick(WORDS, n, f'a{i}')} {_pick(WORDS, n, f'b{i}')} {_token(n, f'name{i}', 6)}"
    return item


def order(n: int) -> dict[str, Any]:
    """Document ``n`` (1-based) of the sample."""
    large = n % LARGE_EVERY == 0
    items = [_item(n, i, large) for i in range(20 + _h(n, "items") % 7 if large else 1 + _h(n, "items") % 2)]
    day = _h(n, "day") % 365
    seconds = _h(n, "second") % 86400
    created = f"2025-{1 + day // 31 % 12:02d}-{1 + day % 28:02d}T{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}Z"
    doc: dict[str, Any] = {
        "id": 100000 + n,
        "status": _pick(STATUSES, n, "status"),
        "customer": 1000 + _h(n, "customer") % 9000,
        "created": created,
        "total": round(sum(it["qty"] * it["price"] for it in items), 2),
        "currency": _pick(CURRENCIES, n, "currency"),
        "paid": _h(n, "paid") % 10 < 8,
        "channel": _pick(CHANNELS, n, "channel"),
        "items": items,
        "shipping": {"city": _pick(CITIES, n, "city"), "country": _pick(COUNTRIES, n, "city")},
    }
    if _h(n, "coupon") % 5 == 0:
        doc["coupon"] = f"SAVE{5 * (1 + _h(n, 'pct') % 6)}"
    if _h(n, "note") % 10 == 0:
        doc["note"] = f"{_pick(WORDS, n, 'n1')} {_pick(WORDS, n, 'n2')}, leave at door"
    if large:
        doc["audit"] = {"trace": _token(n, "trace", 1400), "agent": _token(n, "agent", 24)}
    return doc


def lines(count: int = COUNT) -> Iterator[str]:
    """The sample's lines, compact JSON (no whitespace), in document order."""
    for n in range(1, count + 1):
        yield json.dumps(order(n), separators=(",", ":"), ensure_ascii=False)


def write(out: Path, count: int = COUNT) -> Path:
    """Write the sample to ``out`` (``\\n`` line ends, UTF-8); returns ``out``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="\n") as fh:
        for line in lines(count):
            fh.write(line + "\n")
    return out
