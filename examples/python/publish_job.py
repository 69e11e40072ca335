#!/usr/bin/python3
"""Publish a notification job to Pushworker (pika). Usage:
    publish_job.py TOKEN [TOKEN...] [--group NAME] [--alert TEXT] [--app APP]
The job is published persistent, with publisher confirms, to the queue push.jobs."""
import argparse, json, os, uuid
import pika

parser = argparse.ArgumentParser()
parser.add_argument("tokens", nargs="*")
parser.add_argument("--group", action="append", default=[])
parser.add_argument("--alert", default="Hello from Python")
parser.add_argument("--app", default="default")
parser.add_argument("--url", default=os.environ.get("PUSHWORKER_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/"))
args = parser.parse_args()

job = {
    "id": str(uuid.uuid4()),
    "app": args.app,
    "tokens": args.tokens,
    "groups": args.group,
    "expiration": "+3600",            # APNs may store it for an hour
    "collapse_id": "example",
    "payload": {"aps": {"alert": args.alert, "sound": "default"}},
}
connection = pika.BlockingConnection(pika.URLParameters(args.url))
channel = connection.channel()
channel.confirm_delivery()            # basic_publish raises if the broker does not confirm
channel.queue_declare("push.jobs", durable=True)
channel.basic_publish(
    exchange="", routing_key="push.jobs", body=json.dumps(job),
    properties=pika.BasicProperties(content_type="application/json", delivery_mode=2, message_id=job["id"]),
    mandatory=True)
print(f"published job {job['id']}")
connection.close()
