#!/usr/bin/env python3
"""EncryptionBench's peer: SQLCipher 4 (PyPI sqlcipher3, which bundles it) on StoreBench's workloads, encrypted vs
plain with the same library, in interleaved rounds, so its own encrypted/plain ratio can stand beside GQLStore's.

Usage: python3 Benchmarks/sqlcipher-peer.py [--rows N] [--rounds N]   (make bench-encryption runs it from the venv)

Workloads (StoreBench's, in SQL, every answer checked): insert N rows in one transaction; fetch all N rows; 10,000
lookups by primary key; 1,000 single-row autocommit inserts. WAL + synchronous=NORMAL, a fresh file per round, one warm-up round; the
key is a raw 32-byte key (x'…', no derivation), so the workloads measure the page cipher only. The cost of opening
with a passphrase (PBKDF2-HMAC-SHA512, 256,000 rounds, SQLCipher 4's default) is measured on its own.
"""
import argparse
import importlib.metadata
import os
import random
import statistics
import tempfile
import time

import sqlcipher3

RAW_KEY = "x'" + "".join(f"{(i * 7 + 3) % 256:02x}" for i in range(32)) + "'"


def rows(first, count, prefix):
    """StoreBench's row shape: (id, name, age, score, active, note), a note on three rows in four."""
    rng = random.Random(0x6A10BEE + first)
    return [(i, f"{prefix}-{i}", rng.randrange(100), rng.randrange(1_000_000) / 100, rng.randrange(2),
             None if i % 4 == 0 else f"note for row {i}") for i in range(first, first + count)]


def connect(path, encrypted):
    db = sqlcipher3.connect(path, isolation_level=None)
    if encrypted:
        db.execute(f'PRAGMA key = "{RAW_KEY}"')
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    return db


def check(condition, message):
    if not condition:
        raise SystemExit(f"sqlcipher-peer: {message}")


def timed(body):
    start = time.perf_counter()
    result = body()
    return result, (time.perf_counter() - start) * 1000


def one_round(directory, tag, encrypted, data, singles, keys):
    path = os.path.join(directory, f"{tag}.sqlite")
    db = connect(path, encrypted)
    db.execute("CREATE TABLE BenchRow (id INTEGER PRIMARY KEY, name TEXT, age INTEGER, score REAL, active INTEGER, "
               "note TEXT)")
    times = {}

    def insert():
        db.execute("BEGIN")
        db.executemany("INSERT INTO BenchRow VALUES (?, ?, ?, ?, ?, ?)", data)
        db.execute("COMMIT")
    _, times["insert"] = timed(insert)
    fetched, times["fetchAll"] = timed(lambda: db.execute("SELECT * FROM BenchRow").fetchall())
    check(sorted(fetched) == data, f"{tag}: fetchAll did not return the inserted rows")

    def lookups():
        return [db.execute("SELECT * FROM BenchRow WHERE id = ?", (key,)).fetchone() for key in keys]
    found, times["fetchOne"] = timed(lookups)
    check(found == [data[key - 1] for key in keys], f"{tag}: a lookup returned another row")

    def autocommit():
        for row in singles:
            db.execute("INSERT INTO BenchRow VALUES (?, ?, ?, ?, ?, ?)", row)
    _, times["autocommit 1k"] = timed(autocommit)
    check(db.execute("SELECT * FROM BenchRow WHERE id > ? ORDER BY id", (len(data),)).fetchall() == singles,
          f"{tag}: the autocommit rows did not read back")
    db.close()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    return times


def open_cost(directory):
    """Milliseconds to open and read one row: plain, raw key, passphrase (PBKDF2), medians of 5."""
    path = os.path.join(directory, "open.sqlite")
    results = {}
    for label, key in (("plain", None), ("raw key", RAW_KEY), ("passphrase", "correct horse")):
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        db = sqlcipher3.connect(path, isolation_level=None)
        if key:
            db.execute(f'PRAGMA key = "{key}"' if key.startswith("x'") else f"PRAGMA key = '{key}'")
        db.execute("CREATE TABLE t (x)")
        db.execute("INSERT INTO t VALUES (1)")
        db.close()
        samples = []
        for _ in range(5):
            start = time.perf_counter()
            db = sqlcipher3.connect(path, isolation_level=None)
            if key:
                db.execute(f'PRAGMA key = "{key}"' if key.startswith("x'") else f"PRAGMA key = '{key}'")
            db.execute("SELECT x FROM t").fetchone()
            samples.append((time.perf_counter() - start) * 1000)
            db.close()
        results[label] = statistics.median(samples)
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    data = rows(1, options.rows, "user")
    singles = rows(options.rows + 1, 1_000, "single")
    rng = random.Random(42)
    keys = [rng.randrange(1, options.rows + 1) for _ in range(10_000)]
    version = sqlcipher3.connect(":memory:").execute("PRAGMA cipher_version").fetchone()[0]
    sqlite_version = sqlcipher3.connect(":memory:").execute("SELECT sqlite_version()").fetchone()[0]
    print(f"SQLCipher peer — sqlcipher3 {importlib.metadata.version('sqlcipher3')}, SQLCipher {version} "
          f"(SQLite {sqlite_version}); {options.rows} rows, {options.rounds} rounds after 1 warm-up, interleaved")
    samples = {True: {}, False: {}}
    ratios = {}
    with tempfile.TemporaryDirectory(prefix="sqlcipher-peer-") as directory:
        for round_index in range(options.rounds + 1):
            order = (False, True) if round_index % 2 == 0 else (True, False)
            result = {}
            for encrypted in order:
                result[encrypted] = one_round(directory, f"r{round_index}-{encrypted}", encrypted, data, singles,
                                             keys)
            if round_index == 0:
                continue
            for encrypted in (False, True):
                for workload, ms in result[encrypted].items():
                    samples[encrypted].setdefault(workload, []).append(ms)
            for workload in result[True]:
                ratios.setdefault(workload, []).append(result[True][workload] / result[False][workload])
        opening = open_cost(directory)
    print(f"{'workload':<16} | {'plain ms':>9} | {'encrypted ms':>12} | enc÷plain median (min–max)")
    for workload in samples[False]:
        spread = ratios[workload]
        print(f"{workload:<16} | {statistics.median(samples[False][workload]):9.1f} | "
              f"{statistics.median(samples[True][workload]):12.1f} | {statistics.median(spread):.2f}× "
              f"({min(spread):.2f}–{max(spread):.2f})")
    print("open + first read: " + ", ".join(f"{label} {ms:.1f} ms" for label, ms in opening.items()))


if __name__ == "__main__":
    main()
