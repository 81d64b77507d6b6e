"""Hive Metastore Thrift benchmark: one workload, run against our metastore and against the
reference Apache HMS 2.3.10, printed as one markdown table with the ratio ours/reference.

    python bench/metastore_bench.py --only-reference                 # develop against HMS 2.3.10
    python bench/metastore_bench.py --reference                      # ours on 127.0.0.1:9083 vs HMS
    python bench/metastore_bench.py --reference --partitions 10000,100000 --drop 10000,100000

Each client is a process (no GIL between clients) with one connection. See bench/README.md.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import multiprocessing
import os
import queue as queue_mod
import random
import sys
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hms_workload as wl  # noqa: E402
from thrift.Thrift import TException  # noqa: E402
from reference_hms import ReferenceMetastore, port_open  # noqa: E402
from server_cpu import ServerCPU  # noqa: E402

BARRIER_TIMEOUT_S = 300.0
RESULT_TIMEOUT_S = 1800.0


@dataclass
class Cell:
    """The measurement of one call at one table size with one client count."""
    call: str
    partitions: int | None
    clients: int
    samples: list[float] = field(default_factory=list)    # seconds
    rows: set[int] = field(default_factory=set)
    wall_s: float = 0.0
    errors: list[str] = field(default_factory=list)
    expected_rows: int | None = None
    server_cpu_s: float | None = None    # CPU the server's processes used during the timed calls

    def p(self, q: float) -> float | None:
        """Nearest-rank percentile, in seconds."""
        if not self.samples:
            return None
        ordered = sorted(self.samples)
        return ordered[max(0, math.ceil(q * len(ordered)) - 1)]

    @property
    def ops_per_s(self) -> float | None:
        return len(self.samples) / self.wall_s if self.samples and self.wall_s > 0 else None

    @property
    def cpu_ms_per_call(self) -> float | None:
        if self.server_cpu_s is None or not self.samples:
            return None
        return 1000 * self.server_cpu_s / len(self.samples)

    @property
    def key(self) -> tuple:
        return (self.call, self.partitions, self.clients)

    @property
    def wrong_rows(self) -> bool:
        return self.expected_rows is not None and bool(self.rows) and self.rows != {self.expected_rows}


@dataclass(frozen=True)
class Plan:
    duration_s: float
    iterations: int | None     # fixed count per client instead of a duration
    min_iterations: int
    warmup_s: float            # untimed calls per client for this long first (at least one)


# ---------------------------------------------------------------- client processes

def instance(address: str, index: int = 0) -> str:
    """One HOST:PORT of a comma-separated list: client ``index`` uses instance index mod n."""
    instances = address.split(",")
    return instances[index % len(instances)]


def _worker(address, call: wl.Call, target: wl.Target, index: int, plan: Plan, barrier, results,
            connect=wl.MetastoreClient) -> None:
    address = instance(address, index)
    samples, rows, error, start = [], set(), None, time.monotonic()
    rng = random.Random(zlib.crc32(f"{call.name}/{target.table}/{index}".encode()))
    try:
        with connect(address) as hms:
            if call.warmup and plan.warmup_s > 0:
                until = time.monotonic() + plan.warmup_s
                while True:
                    call.invoke(hms, target, call.prepare(target, rng, index, -1))
                    if time.monotonic() >= until:
                        break
            barrier.wait(BARRIER_TIMEOUT_S)
            start = time.monotonic()
            i = 0
            while True:
                if plan.iterations is not None:
                    if i >= plan.iterations:
                        break
                elif i >= plan.min_iterations and time.monotonic() - start >= plan.duration_s:
                    break
                args = call.prepare(target, rng, index, i)
                t0 = time.perf_counter()
                got = call.invoke(hms, target, args)
                samples.append(time.perf_counter() - t0)
                rows.add(got)
                i += 1
    except Exception as exc:  # reported in the table; the other clients see a broken barrier
        barrier.abort()
        error = f"{type(exc).__name__}: {str(exc)[:200]}"
    results.put((index, start, time.monotonic(), samples, rows, error))


def run_cell(address: str, call: wl.Call, target: wl.Target, clients: int, plan: Plan,
             partitions: int | None, cpu: ServerCPU, connect=wl.MetastoreClient) -> Cell:
    """Run ``call`` from ``clients`` processes at once; latency per call, throughput over the
    wall time from the common start to the last client's end, server CPU over the same span.
    ``connect(address)`` makes each client's connection (a context manager giving the client)."""
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(clients + 1), ctx.Queue()   # + this process, to read the CPU
    procs = [ctx.Process(target=_worker, args=(address, call, target, k, plan, barrier, results, connect),
                         daemon=True)
             for k in range(clients)]
    for proc in procs:
        proc.start()
    cell = Cell(call.name, partitions, clients,
                expected_rows=call.expect(target.partitions) if call.expect else None)
    try:
        barrier.wait(BARRIER_TIMEOUT_S)
        cpu0 = cpu.seconds()
    except threading.BrokenBarrierError:
        cpu0 = None
    starts, ends, deadline = [], [], time.monotonic() + RESULT_TIMEOUT_S
    reported, last_chance = 0, False
    while reported < clients:
        try:
            _, start, end, samples, rows, error = results.get(timeout=1.0)
        except queue_mod.Empty:
            if last_chance or time.monotonic() > deadline:
                cell.errors.append(f"{clients - reported} client process(es) died or timed out without reporting")
                break
            last_chance = not any(proc.is_alive() for proc in procs)  # one more get for a late report
            continue
        reported += 1
        starts.append(start)
        ends.append(end)
        cell.samples += samples
        cell.rows |= rows
        if error and not error.startswith("BrokenBarrierError"):
            cell.errors.append(error)
    cpu1 = cpu.seconds()
    if cpu0 is not None and cpu1 is not None and not cell.errors:
        cell.server_cpu_s = cpu1 - cpu0
    for proc in procs:
        proc.join(10)
        if proc.is_alive():
            proc.kill()
    cell.wall_s = (max(ends) - min(starts)) if starts else 0.0
    return cell


# ---------------------------------------------------------------- phases

def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def single(name: str, partitions: int | None, fn, cpu: ServerCPU) -> Cell:
    """One timed call in this process (the drops)."""
    cell = Cell(name, partitions, 1)
    cpu0, t0 = cpu.seconds(), time.perf_counter()
    try:
        got = fn()
        cell.samples.append(time.perf_counter() - t0)
        cpu1 = cpu.seconds()
        if cpu0 is not None and cpu1 is not None:
            cell.server_cpu_s = cpu1 - cpu0
        if got is not None:
            cell.rows.add(got)
    except Exception as exc:
        cell.errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
    cell.wall_s = time.perf_counter() - t0
    return cell


def load_table(address: str, db: str, db_location: str, n: int, dirs: wl.DirMaker,
               cpu: ServerCPU) -> tuple[str, list[Cell]]:
    """part_<n> with n partitions, reused when it already has exactly n (our metastore keeps
    it between runs); otherwise recreated and loaded in timed batches of 1,000."""
    table = f"part_{n}"
    with wl.MetastoreClient(address) as hms:
        if wl.partition_count(hms, db, table) == n:
            log(f"  {table}: reusing, {n} partitions present")
            return hms.get_table(db, table).sd.location, []
        location = wl.create_table(hms, db, table, db_location)
        load = Cell(wl.LOAD_NAME, n, 1, expected_rows=wl.BATCH, server_cpu_s=0.0)
        t_start = time.perf_counter()
        for start in range(0, n, wl.BATCH):
            parts = wl.make_partitions(db, table, location,
                                       [wl.partition_values(i) for i in range(start, start + wl.BATCH)])
            dirs.make([p.sd.location for p in parts])
            cpu0, t0 = cpu.seconds(), time.perf_counter()
            load.rows.add(wl.add_batch(hms, db, table, parts, need_result=False))
            load.samples.append(time.perf_counter() - t0)
            cpu1 = cpu.seconds()
            load.server_cpu_s = None if cpu0 is None or cpu1 is None else load.server_cpu_s + cpu1 - cpu0
            if (start // wl.BATCH) % 10 == 9:
                log(f"  {table}: {start + wl.BATCH}/{n} partitions, last batch {load.samples[-1]:.2f}s")
        load.wall_s = sum(load.samples)  # calls/s over the calls alone, not the untimed mkdirs between
        log(f"  {table}: loaded {n} partitions in {time.perf_counter() - t_start:.1f}s")
        return location, [load]


def describe(label: str, cell: Cell) -> str:
    where = f"n={cell.partitions} " if cell.partitions else ""
    return (f"  {label} {cell.call} {where}c={cell.clients}: p50 {fmt_ms(cell.p(0.5))} ms, "
            f"{fmt_rate(cell.ops_per_s)}/s, {len(cell.samples)} calls"
            + (f", server CPU {fmt_ms(cell.cpu_ms_per_call / 1000)} ms/call" if cell.cpu_ms_per_call else "")
            + (f", rows {sorted(cell.rows)} (expected {cell.expected_rows})" if cell.wrong_rows else "")
            + (f", ERROR {cell.errors[0]}" if cell.errors else ""))


def bench_target(label: str, address: str, location_prefix: str, args, cleanup: bool = False) -> list[Cell]:
    """The whole workload against one metastore: per table size load, then reads; then
    concurrent adds; then the timed drops."""
    plan = Plan(args.duration, args.iterations, args.min_iterations, args.warmup)
    dirs = wl.DirMaker(args.precreate_dirs, args.webhdfs_user)
    clients_address, address = address, instance(address)   # set-up and drops go to the first instance
    cpu = ServerCPU(address)
    cells: list[Cell] = []

    def keep(cell: Cell) -> None:
        cells.append(cell)
        log(describe(label, cell))

    log(f"{label}: {clients_address}, locations under {location_prefix}, partition directories made by "
        + ("the bench (untimed)" if dirs.applies(location_prefix) else "the server")
        + (f"; server CPU from pids {cpu.pids}" if cpu.pids else "; server CPU not measurable (not local)"))
    phase = "create the database"
    try:
        with wl.MetastoreClient(address) as hms:
            db_location = wl.ensure_database(hms, args.database, location_prefix)

        for n in args.partitions:
            phase = f"load part_{n}"
            location, load = load_table(address, args.database, db_location, n, dirs, cpu)
            cells.extend(load)
            target = wl.Target(args.database, f"part_{n}", n, location)
            for call in wl.READ_CALLS:
                if call.per_size or n == args.partitions[0]:
                    for clients in args.clients:
                        keep(run_cell(clients_address, call, target, clients, plan, n if call.per_size else None,
                                      cpu))

        phase = "create add_scratch"
        add_table = "add_scratch"  # recreated here; left for --cleanup (or the next run) to drop untimed
        with wl.MetastoreClient(address) as hms:
            add_location = wl.create_table(hms, args.database, add_table, db_location)
        for clients in args.clients:
            per_client = -(-max(clients, args.add_batches) // clients)
            target = wl.Target(args.database, add_table, 0, add_location, f"c{clients}", dirs)
            keep(run_cell(clients_address, wl.ADD_CALL, target, clients, Plan(0, per_client, 0, 0), None, cpu))

        phase = "drop"
        with wl.MetastoreClient(address) as hms:
            for n in [n for n in args.partitions if n in args.drop]:
                log(f"  {label} dropping part_{n} ({n:,} partitions)")
                keep(single(wl.DROP_NAME, n, functools.partial(
                    hms.drop_table_with_environment_context, args.database, f"part_{n}", True, None), cpu))
            if cleanup:
                phase = "--cleanup"
                log(f"  {label} --cleanup: dropping database {args.database}")
                hms.drop_database(args.database, True, True)
    except (TException, OSError) as exc:  # the server went away or refused setup: report, don't hide
        keep(Cell(f"ABORTED at: {phase}", None, 0, errors=[f"{type(exc).__name__}: {str(exc)[:200]}"]))
    return cells


# ---------------------------------------------------------------- report

def cpu_stall_us() -> int | None:
    """Microseconds some runnable task waited for a CPU since boot (Linux PSI), or None."""
    try:
        with open("/proc/pressure/cpu") as f:
            return int(f.readline().rsplit("total=", 1)[1])
    except (OSError, IndexError, ValueError):
        return None


def fmt_ms(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    ms = seconds * 1000
    return f"{ms:,.0f}" if ms >= 100 else f"{ms:.1f}" if ms >= 10 else f"{ms:.2f}"


def fmt_rate(rate: float | None) -> str:
    return "—" if rate is None else f"{rate:,.0f}" if rate >= 10 else f"{rate:.2f}"


def fmt_ratio(ours: float | None, ref: float | None) -> str:
    return "—" if not ours or not ref else f"{ours / ref:.2f}"


def _rows(cell: Cell | None) -> str:
    if cell is None or not cell.rows:
        return ""
    shown = "/".join(str(r) for r in sorted(cell.rows))
    return f"**{shown}≠{cell.expected_rows}**" if cell.wrong_rows else shown


def _stats(cell: Cell | None) -> list[str]:
    if cell is None:
        return ["—"] * 5
    if cell.errors and not cell.samples:
        return [f"ERROR: {cell.errors[0][:80]}", "", "", "", ""]
    cpu = cell.cpu_ms_per_call
    return [fmt_ms(cell.p(0.5)), fmt_ms(cell.p(0.99)), fmt_rate(cell.ops_per_s),
            "—" if cpu is None else fmt_ms(cpu / 1000), str(len(cell.samples))]


def report(results: dict[str, list[Cell]]) -> str:
    labels = list(results)
    index = {label: {c.key: c for c in cells} for label, cells in results.items()}
    keys = list(dict.fromkeys(c.key for cells in results.values() for c in cells))
    head = ["call", "partitions", "rows", "clients"]
    for label in labels:
        head += [f"{label} p50 ms", f"{label} p99 ms", f"{label} calls/s", f"{label} CPU ms/call", f"{label} n"]
    # Ratios of each pair measured in this run: ours vs the reference, the cluster vs one host.
    pairs = [(a, b) for a, b in (("ours", "reference"), ("cluster", "ours")) if a in index and b in index]
    for a, b in pairs:
        head += [f"p50 {a}/{b[:3]}", f"calls/s {a}/{b[:3]}", f"CPU/call {a}/{b[:3]}"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in keys:
        cells = {label: index[label].get(key) for label in labels}
        rows = " ".join(dict.fromkeys(_rows(c) for c in cells.values() if c is not None))
        row = [key[0], "—" if key[1] is None else f"{key[1]:,}", rows, str(key[2])]
        for label in labels:
            row += _stats(cells[label])
        for a, b in pairs:
            first, second = cells[a], cells[b]
            row += [fmt_ratio(first and first.p(0.5), second and second.p(0.5)),
                    fmt_ratio(first and first.ops_per_s, second and second.ops_per_s),
                    fmt_ratio(first and first.cpu_ms_per_call, second and second.cpu_ms_per_call)]
        lines.append("| " + " | ".join(row) + " |")
    errors = [f"- {label} {c.call} n={c.partitions} c={c.clients}: {e}" + (f" (×{c.errors.count(e)})"
                                                                             if c.errors.count(e) > 1 else "")
              for label, cells in results.items() for c in cells for e in dict.fromkeys(c.errors)]
    return "\n".join(lines + (["", "Errors:"] + errors if errors else []))


# ---------------------------------------------------------------- CLI

def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ours", default="127.0.0.1:9083", metavar="HOST:PORT",
                   help="our running metastore (default %(default)s)")
    p.add_argument("--cluster", metavar="HOST:PORT,...",
                   help="also run the workload against these instances (e.g. both metastores of "
                        "inventories/cluster), client k on instance k mod n; reported as cluster/ours")
    p.add_argument("--cluster-location", default="webhdfs://172.30.80.21:9870/bench/hms",
                   help="location prefix for --cluster (default %(default)s)")
    p.add_argument("--reference", action="store_true", help="also start HMS 2.3.10 and run the same workload")
    p.add_argument("--only-reference", action="store_true", help="run against HMS 2.3.10 only")
    p.add_argument("--reference-at", metavar="HOST:PORT",
                   help="use an HMS 2.3.10 already running (bench/reference_hms.py) instead of starting one")
    p.add_argument("--reference-port", type=int, default=0, help="port for the started HMS (default: free)")
    p.add_argument("--reference-heap", default="1g",
                   help="-Xmx of the started HMS (default %(default)s; 8 clients reading 100k partitions need more)")
    p.add_argument("--ours-location", default="webhdfs://127.0.0.1:9870/bench/hms",
                   help="location prefix for ours; our metastore creates dirs through WebHDFS (default %(default)s)")
    p.add_argument("--reference-location", help="location prefix for the reference (default: its warehouse)")
    p.add_argument("--precreate-dirs", choices=["local", "all", "none"], default="local",
                   help="who makes partition directories before add_partitions_req: the bench for file: "
                        "locations (local, default), also for webhdfs: via MKDIRS (all), or always the server (none)")
    p.add_argument("--webhdfs-user", help="user.name for --precreate-dirs=all (default: this user)")
    p.add_argument("--database", default="hms_bench")
    p.add_argument("--partitions", type=_ints, default=[10000],
                   help="table sizes, multiples of 1000 (default 10000; add 100000 for the big table)")
    p.add_argument("--clients", type=_ints, default=[1, 8], help="concurrent client processes (default 1,8)")
    p.add_argument("--duration", type=float, default=5.0, help="seconds per read measurement (default 5)")
    p.add_argument("--iterations", type=int, help="calls per client instead of --duration")
    p.add_argument("--min-iterations", type=int, default=2, help="calls per client at least (default 2)")
    p.add_argument("--warmup", type=float, default=2.0,
                   help="seconds of untimed calls per client before each measurement, at least one call (default 2)")
    p.add_argument("--add-batches", type=int, default=4,
                   help="add_partitions_req batches of 1000 per client count (default 4, at least one per client)")
    p.add_argument("--drop", type=_ints, default=[10000],
                   help="sizes whose table is dropped (timed) at the end (default 10000; 100k takes ~2 min on HMS)")
    p.add_argument("--cleanup", action="store_true", help="drop the bench database on ours at the end")
    p.add_argument("--json", metavar="FILE", help="also write every sample here")
    args = p.parse_args(argv)
    bad = [n for n in args.partitions if n < 1000 or n % 1000]
    if bad:
        p.error(f"--partitions must be multiples of 1000: {bad}")
    args.partitions.sort()
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run_ours = not args.only_reference
    run_ref = args.reference or args.only_reference or bool(args.reference_at)
    if run_ours:
        host, _, port = args.ours.rpartition(":")
        if not port_open(host, int(port)):
            print(f"nothing is listening on {args.ours} (ours). Start it with `python -m "
                  "hopshive.metastore.server --config FILE --port 9083`, point --ours at it, "
                  "or pass --only-reference.", file=sys.stderr)
            return 2
    results: dict[str, list[Cell]] = {}
    notes = [f"host: {os.cpu_count()} cpus, load average at start {os.getloadavg()[0]:.2f}"]
    stall0, wall0 = cpu_stall_us(), time.monotonic()
    if run_ours:
        results["ours"] = bench_target("ours", args.ours, args.ours_location, args, cleanup=args.cleanup)
    if args.cluster:
        results["cluster"] = bench_target("cluster", args.cluster, args.cluster_location, args, cleanup=args.cleanup)
    if run_ref and args.reference_at:
        prefix = args.reference_location or "file:///tmp/hms-bench-reference"
        results["reference"] = bench_target("reference", args.reference_at, prefix, args)
    elif run_ref:
        with ReferenceMetastore(port=args.reference_port or None, heap=args.reference_heap) as ref:
            log(f"reference HMS 2.3.10 up on {ref.address} (log {ref.log_path})")
            results["reference"] = bench_target("reference", ref.address,
                                                args.reference_location or f"{ref.warehouse}/bench", args)
            notes.append(f"reference: HMS 2.3.10, -Xmx{ref.heap}, MariaDB, direct SQL "
                         + ("on" if ref.uses_direct_sql() else "**OFF** (numbers are not representative)")
                         + ref.log_findings())
    stall1, wall = cpu_stall_us(), time.monotonic() - wall0
    notes.append(f"load average at end {os.getloadavg()[0]:.2f}; run took {wall / 60:.1f} min"
                 + (f"; something waited for a CPU {100 * (stall1 - stall0) / 1e6 / wall:.0f}% of the time"
                    if stall0 is not None and stall1 is not None else ""))
    print("\n".join(f"_{n}_" for n in notes) + "\n")
    print(report(results))
    if args.json:
        Path(args.json).write_text(json.dumps(
            {label: [dict(c.__dict__, rows=sorted(c.rows)) for c in cells] for label, cells in results.items()},
            indent=1))
    return 1 if any(c.errors or c.wrong_rows for cells in results.values() for c in cells) else 0


if __name__ == "__main__":
    sys.exit(main())
