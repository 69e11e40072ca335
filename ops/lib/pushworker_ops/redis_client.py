"""Redis on 127.0.0.1 through the redis package (Debian's python3-redis)."""
import redis

Error = redis.RedisError


def connect(port, timeout=15):
    """A client that connects on first use and again after Redis came back."""
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=timeout, socket_connect_timeout=timeout)


def disconnect(client):
    """Closes the client's sockets now, before Redis is stopped (close() keeps them pooled)."""
    client.connection_pool.disconnect()


def replace_set(client, key, members, batch=1000):
    """Makes the set at key hold exactly members, in one round trip."""
    pipe = client.pipeline(transaction=False)
    pipe.delete(key)
    for start in range(0, len(members), batch):
        pipe.sadd(key, *members[start:start + batch])
    pipe.execute()
