"""What it costs to spread a table's players over two server processes. ``python -m bench.scale [--quick]``

The same load twice, in alternating rounds, each on a redis-server of the benchmark's own (started
on a free loopback port; the servers reach it over its unix socket) and one database (PostgreSQL
when it is reachable, else one SQLite file): ``bench.capacity``'s players at a human pace (four
guests a table, each thinking 0..2x ``--think-ms`` before each decision, throw-ins, rematches, a
spectator per four tables), driven by one client process.

* **one process**: every table and every player on one server (the Redis broker and store, as in
  production: every move is written to Redis, and pushes to this process's own connections go
  straight to them);
* **two processes**: the tables are opened on the two servers in turn, and at every table two seats
  (and the spectator) are connected to the *other* process, so that every push to them and every
  command from them crosses Redis;
* with ``--control``, a third phase, **two processes, no table split**: the tables alternate
  between the servers but each table's players all connect to its owner, so nothing crosses. It
  tells apart what two event loops cost on this machine (two servers, the load client and
  redis-server on two shared cores) from what the crossing costs.

Reported per phase: commands/s, p50/p99 command-to-push latency, each server's CPU, redis-server's
CPU (read from /proc) and what Redis did (commands, PUBLISHes and bytes, from INFO), all per
command. The figure is the servers' CPU per command with two processes against one process, and
redis-server's CPU per command in the two-process phase (medians of the rounds).

Last line: ``scale: cross-process CPU per command <E>x one process; redis <R> us per command``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._server import ServerProcess, durak_server, free_port, proc_cpu_split_s
from bench.capacity import ClientProcess, measure_window
from bench.harness import RedisServer, database, print_profile, speed_probe_note, wait_for_file

PY = sys.executable


def _servers(
    workdir: Path, count: int, database_url: str, redis_url: str, profile: bool = False
) -> list[ServerProcess]:
    """``count`` servers on the same database and Redis; with ``profile``, each under
    bench/instrumented_server.py, writing a cProfile (CPU clock) of the window to its folder."""
    ports = [free_port() for _ in range(count)]
    origins = [f"http://127.0.0.1:{p}" for p in ports]
    servers = []
    for index, port in enumerate(ports):
        folder = workdir / f"node{index}"
        folder.mkdir(exist_ok=True)
        servers.append(
            durak_server(
                folder,
                port=port,
                extra_env={
                    "DURAK_DATABASE_URL": database_url,
                    "DURAK_BROKER_URL": redis_url,
                    "DURAK_ALLOWED_ORIGINS": json.dumps(origins),
                    "DURAK_NODE_NAME": f"node{index}",
                    **({"BENCH_CPROFILE_CPU": "1", "BENCH_CPROFILE": str(folder / "window.prof")} if profile else {}),
                },
                argv=[sys.executable, "-m", "bench.instrumented_server"] if profile else None,
            )
        )
    return servers


_TICK = os.sysconf("SC_CLK_TCK")


def _postgres_cpu_s() -> float:
    """CPU seconds used so far by every PostgreSQL process on the machine (read from /proc)."""
    total = 0.0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            with open(f"/proc/{entry.name}/stat") as stat:
                text = stat.read()
            if "(postgres)" in text[: text.index(")") + 1]:
                total += sum(proc_cpu_split_s(int(entry.name)))
    return total


def _redis_counters(redis: RedisServer) -> dict[str, int]:
    """What redis-server has done so far: commands, PUBLISHes (plain and sharded), bytes in and out."""
    import redis as redis_py

    client = redis_py.Redis(unix_socket_path=str(redis.socket))
    try:
        stats = client.info("stats")
        commands = client.info("commandstats")
    finally:
        client.close()
    counters = {
        "commands": int(stats["total_commands_processed"]),
        "publishes": sum(int(commands.get(f"cmdstat_{name}", {}).get("calls", 0)) for name in ("publish", "spublish")),
        "bytes_in": int(stats["total_net_input_bytes"]),
        "bytes_out": int(stats["total_net_output_bytes"]),
    }
    for name, figures in commands.items():
        counters[name.removeprefix("cmdstat_")] = int(figures["calls"])
    return counters


def _pin(pid: int, cpus: set[int]) -> None:
    """Keep every thread of process ``pid`` on ``cpus``."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(int(tid), cpus)


def phase(
    workdir: Path,
    processes: int,
    args: argparse.Namespace,
    database_url: str,
    redis: RedisServer,
    round_no: int,
    *,
    split: bool = True,
) -> dict[str, Any]:
    """One measured window of the load on ``processes`` servers (two: every table split over both;
    with ``split`` False, the control: each table and all its players on one of the two)."""
    assert redis.proc is not None
    folder = workdir / f"round{round_no}-phase{processes}{'' if split else '-control'}"
    folder.mkdir()
    servers = _servers(folder, processes, database_url, redis.url("unix"), profile=args.cprofile)
    for server in servers:
        server.start(timeout=60)
    argv = [sys.executable, "-m", "bench.capacity", "client", "--think-ms", str(args.think_ms), "--seed", "1"]
    for server in servers:
        argv += ["--url", server.base_url]
    if processes > 1 and split:
        argv.append("--split")
    client = ClientProcess(argv)
    try:
        client.wait_for("ready")
        client.say(cmd="grow", players=args.tables * 4)
        client.wait_for("grown")
        if args.pin:  # each server on a CPU of its own; the load client and redis-server where there is room
            for index, server in enumerate(servers):
                _pin(server.pid, {index % (os.cpu_count() or 1)})
        time.sleep(args.warmup)
        counters0, pg0 = _redis_counters(redis), _postgres_cpu_s()
        if args.cprofile:
            for server in servers:
                os.kill(server.pid, signal.SIGUSR1)
        window = measure_window(client, [s.pid for s in servers], args.duration, redis.proc.pid, probe_cpu=0)
        counters1, pg1 = _redis_counters(redis), _postgres_cpu_s()
        if args.cprofile:
            for server in servers:
                os.kill(server.pid, signal.SIGUSR2)
            for index in range(len(servers)):
                path = folder / f"node{index}" / "window.prof"
                wait_for_file(path)
                print_profile(path, f"server {index + 1} of {processes}", top=18)
    finally:
        client.stop()
        for server in servers:
            server.stop()
    result = window.result
    commands = max(1, result["commands"])
    rate = result["commands_per_s"]
    server_cpu = sum(window.server_cpu_pct)
    redis_cpu = window.redis_cpu_pct or 0.0
    done = {key: counters1[key] - counters0.get(key, 0) for key in counters1}
    kinds = {key: n for key, n in done.items() if key not in ("commands", "publishes", "bytes_in", "bytes_out") and n}
    measured = {
        "processes": processes,
        "commands_per_s": rate,
        "p50_ms": result["latency_ms"]["p50"],
        "p99_ms": result["latency_ms"]["p99"],
        "errors": result["errors"],
        "server_cpu_pct": window.server_cpu_pct,
        "server_us_per_command": 1e4 * server_cpu / max(1e-9, rate),
        "redis_cpu_pct": redis_cpu,
        "redis_us_per_command": 1e4 * redis_cpu / max(1e-9, rate),
        "redis_commands_per_command": done["commands"] / commands,
        "redis_publishes_per_command": done["publishes"] / commands,
        "redis_bytes_per_command": (done["bytes_in"] + done["bytes_out"]) / commands,
        "redis_kinds_per_command": {key: n / commands for key, n in sorted(kinds.items(), key=lambda kv: -kv[1])},
        "postgres_cpu_pct": 100 * (pg1 - pg0) / window.seconds,
        "client_us_per_command": result["client_cpu_us_per_command"],
        "matches_per_s": result["matches_per_s"],
        "cpu_pressure_pct": window.cpu_pressure_pct,
        "server_waited_pct": result["server_waited_pct"],
        "server_switches_per_command": result["server_switches_per_command"],
        "server_syscalls_per_command": result["server_syscalls_per_command"],
        "server_kernel_share": result["server_kernel_share"],
        "machine_ms": window.machine_ms,
    }
    label = f"{processes} proc" if split or processes == 1 else f"{processes} proc, tables not split"
    print(
        f"  {label}: {rate:.0f} commands/s, p50 {measured['p50_ms']:.1f} / p99 {measured['p99_ms']:.1f} ms, "
        f"server CPU {' + '.join(f'{c:.0f}%' for c in window.server_cpu_pct)} = "
        f"{measured['server_us_per_command']:.0f} us per command; redis-server {redis_cpu:.0f}% = "
        f"{measured['redis_us_per_command']:.0f} us per command "
        f"({measured['redis_commands_per_command']:.1f} commands, "
        f"{measured['redis_publishes_per_command']:.1f} publishes, {measured['redis_bytes_per_command']:.0f} bytes); "
        f"postgres {measured['postgres_cpu_pct']:.0f}%; client {measured['client_us_per_command']:.0f} us per command; "
        f"the servers' loops switched out {measured['server_switches_per_command']:.2f} times per command, made "
        f"{measured['server_syscalls_per_command'][1]:.1f} write and {measured['server_syscalls_per_command'][0]:.1f} "
        f"read system calls per command and spent {100 * measured['server_kernel_share']:.0f}% of their CPU in the "
        "kernel; "
        f"refused {result['errors'] or 'none'}; the servers waited for a CPU "
        f"{' + '.join(f'{w:.0f}%' for w in result['server_waited_pct'])} of the window; CPU pressure "
        + ("n/a" if window.cpu_pressure_pct is None else f"{window.cpu_pressure_pct:.0f}%")
        + f"; {speed_probe_note(window.machine_ms)}",
        file=sys.stderr,
        flush=True,
    )
    per_kind = ", ".join(f"{key} {n:.2f}" for key, n in list(measured["redis_kinds_per_command"].items())[:8])
    print(f"         redis commands per command: {per_kind}", file=sys.stderr, flush=True)
    return measured


def _probe_median(phases: list[dict[str, Any]]) -> str:
    figures = [p["machine_ms"] for p in phases if p.get("machine_ms")]
    return f"{statistics.median(figures):.2f}" if figures else "n/a"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 tables, short windows, 1 round (< 60 s)")
    parser.add_argument("--tables", type=int, default=None, help="four-seat tables (default 250, quick 100)")
    parser.add_argument("--think-ms", type=float, default=500, help="mean think time (uniform 0..2x)")
    parser.add_argument("--warmup", type=float, default=None, help="seconds after the tables are open (3; quick 2)")
    parser.add_argument("--duration", type=float, default=None, help="seconds measured (default 15, quick 5)")
    parser.add_argument("--rounds", type=int, default=None, help="one process then two, this many times (3; quick 1)")
    parser.add_argument(
        "--pin",
        action="store_true",
        help="each server process on a CPU of its own (a diagnostic: no server moves between CPUs)",
    )
    parser.add_argument(
        "--control",
        action="store_true",
        help="a third phase a round: two processes, each table and all its players on one of them (what "
        "two processes cost on this machine without any crossing)",
    )
    parser.add_argument(
        "--cprofile", action="store_true", help="cProfile each server's window (CPU clock) and print its top functions"
    )
    args = parser.parse_args(argv)
    args.tables = args.tables or (100 if args.quick else 250)
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.warmup = args.warmup if args.warmup is not None else (2.0 if args.quick else 3.0)
    args.duration = args.duration if args.duration is not None else (5.0 if args.quick else 15.0)
    if shutil.which("redis-server") is None:
        raise SystemExit("bench.scale needs redis-server on PATH")
    print(
        f"bench.scale: {args.tables} tables x 4 players, think 0-{2 * args.think_ms:.0f} ms, a spectator per 4 tables; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}",
        file=sys.stderr,
        flush=True,
    )
    started = time.perf_counter()
    workdir = Path(tempfile.mkdtemp(prefix="durak-scale-"))
    ones: list[dict[str, Any]] = []
    twos: list[dict[str, Any]] = []
    controls: list[dict[str, Any]] = []
    try:
        with database(workdir) as database_url:
            from app.db import migrate

            migrate.upgrade_sync(database_url)
            print(f"  database: {database_url.split(':', 1)[0]}", file=sys.stderr)
            for round_no in range(args.rounds):
                with RedisServer(workdir) as redis:
                    ones.append(phase(workdir, 1, args, database_url, redis, round_no))
                with RedisServer(workdir) as redis:
                    twos.append(phase(workdir, 2, args, database_url, redis, round_no))
                if args.control:
                    with RedisServer(workdir) as redis:
                        controls.append(phase(workdir, 2, args, database_url, redis, round_no, split=False))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    ratios = [b["server_us_per_command"] / a["server_us_per_command"] for a, b in zip(ones, twos, strict=True)]
    ratio = statistics.median(ratios)
    redis_us = statistics.median(r["redis_us_per_command"] for r in twos)
    one_us = statistics.median(r["server_us_per_command"] for r in ones)
    two_us = statistics.median(r["server_us_per_command"] for r in twos)
    print(
        f"  {args.rounds} round(s), {time.perf_counter() - started:.0f} s: ratio per round "
        f"{', '.join(f'{r:.2f}' for r in ratios)}; server CPU per command {one_us:.0f} us (one process), "
        f"{two_us:.0f} us (two); redis-server {statistics.median(r['redis_us_per_command'] for r in ones):.0f} us "
        f"per command with one process; speed probe {_probe_median(ones)} ms (one process) and "
        f"{_probe_median(twos)} ms (two) per reference match; load average {os.getloadavg()[0]:.1f}",
        file=sys.stderr,
    )
    if controls:
        us = "server_us_per_command"
        spread = [c[us] / a[us] for a, c in zip(ones, controls, strict=True)]
        crossing = [b[us] / c[us] for b, c in zip(twos, controls, strict=True)]
        print(
            f"  control, two processes with no table split: "
            f"{statistics.median(c['server_us_per_command'] for c in controls):.0f} us per command, "
            f"{', '.join(f'{r:.2f}' for r in spread)}x one process per round (two loops on this machine, no "
            f"crossing); split against it {', '.join(f'{r:.2f}' for r in crossing)}x (the crossing alone)",
            file=sys.stderr,
        )
    print(f"scale: cross-process CPU per command {ratio:.2f}x one process; redis {redis_us:.0f} us per command")


if __name__ == "__main__":
    main()
