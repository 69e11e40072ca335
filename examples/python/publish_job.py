#!/usr/bin/python3
"""Publish a notification job to Pushworker (pika) and print its events. Usage:
    publish_job.py TOKEN [TOKEN...] [--group NAME] [--alert TEXT] [--app APP] [--timeout SECONDS]
The job goes to the queue push.jobs (env PUSHWORKER_JOB_QUEUE) persistent, mandatory, with
publisher confirms. Each event about it is printed as "<routing key> <json>" until job.completed or
job.rejected; exit 1 if none comes within the timeout (env PUSHWORKER_EVENT_TIMEOUT, 30 s)."""
import argparse, json, os, sys, time, uuid
import pika

parser = argparse.ArgumentParser()
parser.add_argument("tokens", nargs="*")
parser.add_argument("--group", action="append", default=[])
parser.add_argument("--alert", default="Hello from Python")
parser.add_argument("--app", default="default")
parser.add_argument("--timeout", type=float, default=float(os.environ.get("PUSHWORKER_EVENT_TIMEOUT", "30")))
parser.add_argument("--url", default=os.environ.get("PUSHWORKER_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/"))
args = parser.parse_args()
job_queue = os.environ.get("PUSHWORKER_JOB_QUEUE", "push.jobs")

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
# Bound before publishing, or the first events could come before the queue exists. Declared exactly
# as the worker declares it: other arguments would be refused (406 PRECONDITION_FAILED).
channel.exchange_declare("push.results", exchange_type="topic", durable=True,
                         arguments={"alternate-exchange": "push.results.unrouted"})
events = channel.queue_declare("", exclusive=True, auto_delete=True).method.queue
channel.queue_bind(events, "push.results", routing_key="#")

channel.confirm_delivery()            # basic_publish now raises unless the broker confirms (ack)
# The workers declare the job queue (its type and arguments are theirs: a quorum queue refuses any
# other declaration with 406). A passive declare only checks that it exists, whatever its type.
try:
    channel.queue_declare(job_queue, passive=True)
except pika.exceptions.ChannelClosedByBroker as error:
    sys.exit(f"no queue {job_queue} ({error}): start a worker once, it declares the queues")
try:
    channel.basic_publish(
        exchange="", routing_key=job_queue, body=json.dumps(job),
        properties=pika.BasicProperties(content_type="application/json", delivery_mode=2, message_id=job["id"]),
        mandatory=True)
except pika.exceptions.UnroutableError:
    sys.exit(f"job {job['id']} was returned: no queue {job_queue}")
except pika.exceptions.NackError:
    sys.exit(f"job {job['id']} was not confirmed: the broker refused it (nack)")
print(f"published job {job['id']}", flush=True)

deadline = time.monotonic() + args.timeout
for method, properties, body in channel.consume(events, auto_ack=True, inactivity_timeout=1):
    if method is not None:
        event = json.loads(body)
        if event.get("job_id") == job["id"]:
            print(method.routing_key, body.decode(), flush=True)
            if method.routing_key in ("job.completed", "job.rejected"):
                break
    if time.monotonic() > deadline:
        sys.exit(f"no job.completed or job.rejected for job {job['id']} within {args.timeout:g}s")
connection.close()
