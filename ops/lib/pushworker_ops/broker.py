"""RabbitMQ through pika: one connection that is opened again whenever the broker went away."""
import time

import pika
import pika.exceptions

from .errors import OpsError
from .log import debug


def amqp_url(port):
    return f"amqp://guest:guest@127.0.0.1:{port}/"


class Broker:
    def __init__(self, port, **options):
        """options: pika.ConnectionParameters' (heartbeat, blocked_connection_timeout, …)."""
        settings = dict(connection_attempts=1, socket_timeout=5, blocked_connection_timeout=30)
        settings.update(options)
        self.parameters = pika.ConnectionParameters(host="127.0.0.1", port=port,
                                                    credentials=pika.PlainCredentials("guest", "guest"), **settings)
        self.connection = None
        self.channel = None

    def _channel(self):
        if self.connection is None or self.connection.is_closed:
            self.connection = pika.BlockingConnection(self.parameters)
            self.channel = None
        if self.channel is None or self.channel.is_closed:
            self.channel = self.connection.channel()
            self.channel.confirm_delivery()
        return self.channel

    def drop(self):
        try:
            if self.connection and self.connection.is_open:
                self.connection.close()
        except Exception:
            pass
        self.connection = self.channel = None

    def call(self, fn, attempts=1):
        """Runs fn(channel); returns None when the broker is unreachable."""
        for _ in range(attempts):
            try:
                return fn(self._channel())
            except pika.exceptions.ChannelClosedByBroker:
                self.channel = None
                raise
            except (pika.exceptions.AMQPError, OSError) as error:
                debug(f"broker: {error!r}")
                self.drop()
                time.sleep(0.2)
        return None

    def ready(self, queues):
        """Ready messages per queue (missing queues count 0), or None when the broker is down."""
        def count(ch):
            result = {}
            for queue in queues:
                try:
                    result[queue] = ch.queue_declare(queue, passive=True).method.message_count
                except pika.exceptions.ChannelClosedByBroker:
                    ch = self.channel = self.connection.channel()
                    result[queue] = 0
            return result
        return self.call(count)

    def exists(self, queue):
        try:
            return self.call(lambda ch: ch.queue_declare(queue, passive=True)) is not None
        except pika.exceptions.ChannelClosedByBroker:
            return False

    def drain(self, queue, limit=100000):
        """Takes (and acks) everything ready in a queue: [(routing key, body, headers)]."""
        def take(ch):
            items = []
            while len(items) < limit:
                method, properties, body = ch.basic_get(queue, auto_ack=True)
                if method is None:
                    break
                items.append((method.routing_key, body, properties.headers or {}))
            return items
        try:
            return self.call(take) or []
        except pika.exceptions.ChannelClosedByBroker:
            return []

    def publish(self, queue, messages):
        """messages: (message id or None, body[, extra properties]); persistent JSON, confirmed."""
        def send(ch):
            for message_id, body, *extra in messages:
                properties = {"content_type": "application/json", "delivery_mode": 2, "message_id": message_id}
                properties.update(extra[0] if extra else {})
                ch.basic_publish("", queue, body, pika.BasicProperties(**properties))
            return True
        if not self.call(send, attempts=5):
            raise OpsError(f"could not publish to {queue}")

    def delete(self, queues=(), exchanges=()):
        def remove(ch):
            for queue in queues:
                ch.queue_delete(queue)
            for exchange in exchanges:
                ch.exchange_delete(exchange)
            return True
        return self.call(remove, attempts=3)

    def exchange_exists(self, exchange):
        try:
            return self.call(lambda ch: ch.exchange_declare(exchange, passive=True)) is not None
        except pika.exceptions.ChannelClosedByBroker:         # 404
            return False

    def bind_events(self, exchange, queue, declare=False):
        """Binds our events queue to the results exchange. The worker declares the exchange, with
        the arguments it chooses (its alternate exchange <exchange>.unrouted; an older worker
        none), so it must exist already: a declaration of ours with other arguments would be a 406
        for one of them. `declare` makes a plain one if there is none (no worker declared it)."""
        def bind(ch):
            if declare and not self.exchange_exists(exchange):
                ch = self._channel()
                ch.exchange_declare(exchange, exchange_type="topic", durable=True)
            ch.queue_declare(queue, durable=True)
            ch.queue_bind(queue, exchange, routing_key="#")
            return True
        try:
            bound = self.call(bind, attempts=5)
        except pika.exceptions.ChannelClosedByBroker:        # the worker declared it meanwhile
            bound = self.call(bind, attempts=5) if declare else None
        if not bound:
            raise OpsError("could not bind the events queue")


def unacknowledged(services, queues):
    """Unacknowledged messages over the queues (rabbitmqctl; pika cannot see them), None if unknown."""
    out = services.rabbitmqctl("list_queues", "name", "messages_unacknowledged")
    if out is None:
        return None
    total = 0
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in queues and parts[1].isdigit():
            total += int(parts[1])
    return total
