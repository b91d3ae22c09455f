#!/usr/bin/env python3
"""Slow-body load generator and raw HTTP probes for slow_bodies.sh (python3 stdlib only).

Every connection goes to 127.0.0.1 and every run is bounded in time and in count.

  slow_bodies.py attack PORT REPO --trickle N --big M --seconds S --ready FILE
      N connections send a request head with a small Content-Length, then one body byte
      per second; M send a head with Content-Length 60 MiB and 1 KiB of body, then stop.
      All are anonymous POSTs to routes anonymous callers may use (git-upload-pack of the
      public REPO, /login, LFS batch, paths-info; the big ones also the commit API).
      FILE is written once every head went out. Runs until every connection was answered
      or closed, at most S seconds, then prints one JSON summary line.
  slow_bodies.py probe PORT HEAD [--body-after S BODY] [--wait S]
      Sends the request head HEAD (\\r\\n escapes), then waits (at most --wait seconds)
      for an answer without sending any body byte, or sends BODY after S seconds. Prints
      JSON: the status line, the body, seconds until the first answer byte, whether the
      server closed the connection, and whether a 100 Continue came before the answer.
  slow_bodies.py hold PORT HEAD BODY_BYTES --seconds S --ready FILE
      Sends HEAD and BODY_BYTES bytes of body, writes FILE, then holds the connection
      (sending nothing) for S seconds or until the server answers; prints the answer.
"""

import argparse
import asyncio
import json
import os
import sys
import time

MIB = 1 << 20


def unescape(s):
    return s.encode().decode("unicode_escape").encode("latin-1")


def head(method, path, length, extra=""):
    return (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Length: {length}\r\n{extra}\r\n").encode()


class Outcome:
    def __init__(self, kind, route):
        self.kind = kind
        self.route = route
        self.status = None      # HTTP status of the answer, None if none came
        self.message = ""       # the answer's body (at most 64 KiB)
        self.answered_at = None  # seconds after the head went out
        self.sent = 0           # body bytes sent


async def read_answer(reader, out, t0):
    """Reads an answer (status line, headers, some body) into `out`, until EOF."""
    data = b""
    try:
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                break
            if out.answered_at is None:
                out.answered_at = time.monotonic() - t0
            data += chunk
            if len(data) > 65536:
                break
    except (ConnectionError, OSError):
        pass
    # Skip interim 1xx answers.
    while data.startswith(b"HTTP/1.1 1"):
        end = data.find(b"\r\n\r\n")
        if end < 0:
            break
        data = data[end + 4:]
    if data.startswith(b"HTTP/"):
        try:
            out.status = int(data.split(b" ", 2)[1])
        except (IndexError, ValueError):
            pass
        end = data.find(b"\r\n\r\n")
        out.message = data[end + 4:].decode("latin-1") if end >= 0 else ""


async def one(kind, route, raw_head, port, deadline, outcomes, ready):
    out = Outcome(kind, route)
    outcomes.append(out)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError as e:
        out.message = f"connect failed: {e}"
        ready.release()
        return
    t0 = time.monotonic()
    answer = asyncio.ensure_future(read_answer(reader, out, t0))
    try:
        writer.write(raw_head)
        await writer.drain()
        ready.release()
        if kind == "big":
            writer.write(b"x" * 1024)
            out.sent = 1024
            await writer.drain()
        else:
            while not answer.done() and time.monotonic() < deadline:
                writer.write(b"x")
                out.sent += 1
                await writer.drain()
                try:
                    await asyncio.wait_for(asyncio.shield(answer), 1.0)
                except asyncio.TimeoutError:
                    pass
        left = deadline - time.monotonic()
        if left > 0:
            try:
                await asyncio.wait_for(asyncio.shield(answer), left)
            except asyncio.TimeoutError:
                pass
    except (ConnectionError, OSError):
        pass
    finally:
        if not answer.done():
            answer.cancel()
        try:
            await answer
        except asyncio.CancelledError:
            pass
        writer.close()


async def attack(a):
    port = a.port
    repo = a.repo
    # Anonymous bodies to routes anonymous callers may use.
    trickle_routes = [
        ("upload-pack", f"/{repo}.git/git-upload-pack",
         "Content-Type: application/x-git-upload-pack-request\r\n"),
        ("login", "/login", "Content-Type: application/x-www-form-urlencoded\r\n"),
        ("lfs-batch", f"/{repo}.git/info/lfs/objects/batch",
         "Content-Type: application/vnd.git-lfs+json\r\n"),
        ("paths-info", f"/api/models/{repo}/paths-info/main",
         "Content-Type: application/json\r\n"),
    ]
    big_routes = trickle_routes + [
        ("commit", f"/api/models/{repo}/commit/main", "Content-Type: application/x-ndjson\r\n")]
    deadline = time.monotonic() + a.seconds
    outcomes = []
    ready = asyncio.Semaphore(0)
    tasks = []
    for i in range(a.trickle):
        name, path, extra = trickle_routes[i % len(trickle_routes)]
        tasks.append(asyncio.ensure_future(
            one("trickle", name, head("POST", path, 4096, extra), port, deadline, outcomes,
                ready)))
    for i in range(a.big):
        name, path, extra = big_routes[i % len(big_routes)]
        tasks.append(asyncio.ensure_future(
            one("big", name, head("POST", path, 60 * MIB, extra), port, deadline, outcomes,
                ready)))
    for _ in tasks:
        await ready.acquire()
    with open(a.ready, "w") as f:
        f.write("ready\n")
    started = time.monotonic()
    await asyncio.gather(*tasks)
    summary = {"seconds": round(time.monotonic() - started, 2), "classes": {}}
    for kind in ("trickle", "big"):
        group = [o for o in outcomes if o.kind == kind]
        by_status = {}
        slowest = {}  # status -> seconds until the last such answer
        for o in group:
            key = str(o.status) if o.status is not None else "no answer"
            by_status[key] = by_status.get(key, 0) + 1
            if o.answered_at is not None:
                slowest[key] = round(max(slowest.get(key, 0), o.answered_at), 2)
        times = sorted(o.answered_at for o in group if o.answered_at is not None)
        summary["classes"][kind] = {
            "connections": len(group),
            "by_status": by_status,
            "slowest_by_status_s": slowest,
            "rate_rule_messages": sum(1 for o in group if "too slow" in o.message),
            "max_body_bytes_sent": max((o.sent for o in group), default=0),
            "answered_after_s": {
                "min": round(times[0], 2) if times else None,
                "max": round(times[-1], 2) if times else None,
            },
            "example": next((o.message.strip()[:300] for o in group if o.message), ""),
        }
    print(json.dumps(summary))


async def probe(a):
    reader, writer = await asyncio.open_connection("127.0.0.1", a.port)
    t0 = time.monotonic()
    writer.write(unescape(a.head))
    await writer.drain()
    data = b""
    first = None
    closed = False
    deadline = t0 + a.wait
    body_at = t0 + a.body_after[0] if a.body_after else None
    while time.monotonic() < deadline:
        if body_at is not None and time.monotonic() >= body_at:
            body = a.body_after[1]
            # "@FILE": the body is FILE's bytes (for bodies too long for an argument).
            with_file = body.startswith("@")
            writer.write(open(body[1:], "rb").read() if with_file else unescape(body))
            try:
                await writer.drain()
            except (ConnectionError, OSError):
                pass  # the server may answer and close before taking it all
            body_at = None
        step = deadline - time.monotonic()
        if body_at is not None:
            step = min(step, body_at - time.monotonic())
        try:
            chunk = await asyncio.wait_for(reader.read(65536), max(step, 0.01))
        except asyncio.TimeoutError:
            continue
        except (ConnectionError, OSError):
            closed = True
            break
        if not chunk:
            closed = True
            break
        if first is None:
            first = time.monotonic() - t0
        data += chunk
        if b"\r\n\r\n" in data and not data.startswith(b"HTTP/1.1 100"):
            # Enough for the probe: the final head and what body came with it, or EOF.
            try:
                more = await asyncio.wait_for(reader.read(65536), 0.5)
                data += more
                if not more:
                    closed = True
            except asyncio.TimeoutError:
                pass
            except (ConnectionError, OSError):
                closed = True
            break
    writer.close()
    text = data.decode("latin-1")
    got_continue = text.startswith("HTTP/1.1 100")
    final = text
    while final.startswith("HTTP/1.1 1"):
        final = final.split("\r\n\r\n", 1)[1] if "\r\n\r\n" in final else ""
    status_line = final.split("\r\n", 1)[0]
    body = final.split("\r\n\r\n", 1)[1] if "\r\n\r\n" in final else ""
    print(json.dumps({"status_line": status_line, "body": body[:65536],
                      "answer_after_s": None if first is None else round(first, 3),
                      "closed": closed, "continue_first": got_continue,
                      "headers": final.split("\r\n\r\n", 1)[0]}))


async def feed_until(writer, stop_file, room):
    """Sends 4 KiB every half second (8 KiB/s, above any rate rule the tests set) while
    stop_file does not exist, at most room bytes, so the body is held but never ends."""
    while not os.path.exists(stop_file) and room > 0:
        n = min(4096, room)
        writer.write(b"x" * n)
        await writer.drain()
        room -= n
        await asyncio.sleep(0.5)


async def hold(a):
    reader, writer = await asyncio.open_connection("127.0.0.1", a.port)
    writer.write(unescape(a.head))
    writer.write(b"x" * a.body_bytes)
    await writer.drain()
    with open(a.ready, "w") as f:
        f.write("ready\n")
    if a.feed_until:
        await feed_until(writer, a.feed_until, a.feed_room)
    data = b""
    deadline = time.monotonic() + a.seconds
    try:
        while time.monotonic() < deadline:
            chunk = await asyncio.wait_for(reader.read(65536), deadline - time.monotonic())
            if not chunk:
                break
            data += chunk
    except (asyncio.TimeoutError, ConnectionError, OSError):
        pass
    writer.close()
    print(json.dumps({"answer": data.decode("latin-1")}))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    at = sub.add_parser("attack")
    at.add_argument("port", type=int)
    at.add_argument("repo")
    at.add_argument("--trickle", type=int, default=64)
    at.add_argument("--big", type=int, default=32)
    at.add_argument("--seconds", type=float, default=30)
    at.add_argument("--ready", required=True)
    pr = sub.add_parser("probe")
    pr.add_argument("port", type=int)
    pr.add_argument("head")
    pr.add_argument("--body-after", nargs=2, metavar=("SECONDS", "BODY"),
                    help="send BODY (escapes as in HEAD, or @FILE) after SECONDS")
    pr.add_argument("--wait", type=float, default=5)
    ho = sub.add_parser("hold")
    ho.add_argument("port", type=int)
    ho.add_argument("head")
    ho.add_argument("body_bytes", type=int)
    ho.add_argument("--seconds", type=float, default=10)
    ho.add_argument("--ready", required=True)
    ho.add_argument("--feed-until", metavar="FILE",
                    help="keep the body going at 8 KiB/s until FILE exists; --seconds counts from then")
    ho.add_argument("--feed-room", type=int, default=0,
                    help="at most this many bytes fed (keep it under what the head declares)")
    a = p.parse_args()
    if a.cmd == "probe" and a.body_after:
        a.body_after = (float(a.body_after[0]), a.body_after[1])
    if a.cmd == "attack" and (a.trickle + a.big > 512 or a.seconds > 120):
        sys.exit("attack: at most 512 connections and 120 s")
    asyncio.run({"attack": attack, "probe": probe, "hold": hold}[a.cmd](a))


if __name__ == "__main__":
    main()
