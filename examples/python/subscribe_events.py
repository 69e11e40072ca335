#!/usr/bin/python3
"""Subscribe to Pushworker's result events (pika) and act on them. Usage:
    subscribe_events.py [--count N] [--seconds S]
Binds a durable queue to the topic exchange push.results (declared with the worker's arguments). A real application would delete the
token on token.invalid (when the event's timestamp is newer than its last registration)."""
import argparse, json, os, sys, time
import pika

parser = argparse.ArgumentParser()
parser.add_argument("--queue", default="myapp.push-events")
parser.add_argument("--count", type=int, default=0)
parser.add_argument("--seconds", type=float, default=0)
parser.add_argument("--url", default=os.environ.get("PUSHWORKER_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/"))
args = parser.parse_args()

connection = pika.BlockingConnection(pika.URLParameters(args.url))
channel = connection.channel()
# Declared exactly as the worker declares it (the alternate exchange keeps events no queue is bound
# to); other arguments would make the broker refuse the declaration (406 PRECONDITION_FAILED).
channel.exchange_declare("push.results", exchange_type="topic", durable=True,
                         arguments={"alternate-exchange": "push.results.unrouted"})
channel.queue_declare(args.queue, durable=True)
for key in ("token.invalid", "delivery.failed", "job.rejected", "job.completed", "group.missing"):
    channel.queue_bind(args.queue, "push.results", routing_key=key)

seen, deadline = 0, time.time() + args.seconds if args.seconds else None
for method, properties, body in channel.consume(args.queue, inactivity_timeout=1):
    if method is not None:
        event = json.loads(body)
        if method.routing_key == "token.invalid":
            # A Web Push subscription is named by its endpoint, an APNs token by its first hex digits.
            device = event['token'].split('#')[0] if event['token'].startswith('https://') else event['token'][:8] + '…'
            since = f", invalid since {event['timestamp']}" if event.get('timestamp') else ""
            print(f"delete device {device} ({event['reason']}{since})")
        elif method.routing_key == "delivery.failed":
            print(f"could not deliver to {event['token'][:8]}…: {event['status']} {event['reason']} after {event['attempts']} attempts")
        elif method.routing_key == "job.rejected":
            print(f"job {event.get('job_id') or '(no id)'} rejected: {event['error']}")
        elif method.routing_key == "group.missing":
            print(f"job {event['job_id']}: group {event['group']} has no members (Redis key {event['key']})")
        else:
            print(f"job {event['job_id']} done: sent={event['sent']} invalid={event['invalid']} failed={event['failed']} retried={event['retried']}")
        channel.basic_ack(method.delivery_tag)
        seen += 1
        sys.stdout.flush()
    if (args.count and seen >= args.count) or (deadline and time.time() > deadline):
        break
connection.close()
