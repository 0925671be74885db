#!/usr/bin/env python3
"""The AWS SDK's adaptive retry mode, unmodified, against the same nginx as the adaptive client
(issue 39: side by side with its anchor). A botocore S3 client made with
`Config(retries={"mode": "adaptive"})` (its ClientRateLimiter: a token bucket whose rate follows
CUBIC on throttling errors and the measured send rate; botocore's own attempt limit and backoff)
sends GetObject for keys 0 ..< --total of bucket "limited" at --url, path-style, from --tasks
threads; nginx serves them as /limited/<key>, its 429 carrying S3's throttling error (SlowDown), as
AWS services answer, so that botocore recognises it. Nothing of botocore is changed or stubbed: the
credentials are fake and nothing checks them. Prints {"completed", "failed", "seconds"} on one line.
--version prints botocore's version. Needs botocore (RATELIMIT_BOTOCORE_PYTHON names a Python
that has it)."""

import argparse
import json
import threading
import time

import botocore.session
from botocore.config import Config

import botocore

parser = argparse.ArgumentParser()
parser.add_argument("--version", action="version", version=botocore.__version__)
parser.add_argument("--url", required=True)
parser.add_argument("--tasks", type=int, required=True)
parser.add_argument("--total", type=int, required=True)
arguments = parser.parse_args()

client = botocore.session.get_session().create_client(
    "s3", region_name="us-east-1", endpoint_url=arguments.url, aws_access_key_id="test",
    aws_secret_access_key="test",
    config=Config(retries={"mode": "adaptive"}, s3={"addressing_style": "path"}, max_pool_connections=64))

lock = threading.Lock()
next_key = [0]
completed = [0]
failed = [0]


def worker():
    while True:
        with lock:
            if next_key[0] >= arguments.total:
                return
            key = next_key[0]
            next_key[0] += 1
        try:
            client.get_object(Bucket="limited", Key=str(key))["Body"].read()
            outcome = completed
        except Exception:  # botocore gave up: its attempts ran out on throttling errors
            outcome = failed
        with lock:
            outcome[0] += 1


start = time.monotonic()
threads = [threading.Thread(target=worker) for _ in range(arguments.tasks)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps({"completed": completed[0], "failed": failed[0], "seconds": time.monotonic() - start}))
