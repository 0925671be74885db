#!/usr/bin/env python3
"""The naive client the rate-limited client is compared with (Spec/HTTP.md HTTP-11): --tasks
threads share --total requests to --url; each request that gets a 429 is sent again after
sleeping one second (the sleep is the naive strategy being measured). Prints {"rate": requests
completed per second, "refused": 429s met} on one line. Standard library only."""

import argparse
import json
import threading
import time
import urllib.error
import urllib.request

parser = argparse.ArgumentParser()
parser.add_argument("--url", required=True)
parser.add_argument("--tasks", type=int, required=True)
parser.add_argument("--total", type=int, required=True)
arguments = parser.parse_args()

lock = threading.Lock()
next_id = [0]
refused = [0]


def worker():
    while True:
        with lock:
            if next_id[0] >= arguments.total:
                return
            request_id = next_id[0]
            next_id[0] += 1
        while True:
            try:
                urllib.request.urlopen(f"{arguments.url}?id=naive-{request_id}", timeout=20).read()
                break
            except urllib.error.HTTPError as error:
                if error.code != 429:
                    raise
                with lock:
                    refused[0] += 1
                time.sleep(1)


started = time.monotonic()
threads = [threading.Thread(target=worker) for _ in range(arguments.tasks)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
elapsed = time.monotonic() - started
print(json.dumps({"rate": arguments.total / elapsed, "refused": refused[0]}), flush=True)
