"""The Prometheus metrics the dashboard may use: the worker's (its /metrics on the status port) and
the RabbitMQ Prometheus plugin's (rabbitmq_prometheus) that it reads for queue depths.
name -> (type, labels). Prometheus adds `instance` and `job` to every series it scrapes."""

WORKER = {
    # counters
    "pushworker_jobs_consumed_total": ("counter", set()),
    "pushworker_jobs_acked_total": ("counter", set()),
    "pushworker_jobs_rejected_total": ("counter", set()),
    "pushworker_jobs_handed_back_total": ("counter", set()),
    "pushworker_jobs_deferred_total": ("counter", set()),
    "pushworker_chunk_jobs_published_total": ("counter", set()),
    "pushworker_notifications_total": ("counter", {"app", "platform", "outcome"}),
    "pushworker_notification_failures_total": ("counter", {"app", "platform", "reason"}),
    "pushworker_retries_total": ("counter", {"tier"}),
    "pushworker_events_published_total": ("counter", set()),
    "pushworker_http2_goaways_total": ("counter", {"app"}),
    "pushworker_provider_token_refreshes_total": ("counter", {"app"}),
    "pushworker_amqp_reconnects_total": ("counter", set()),
    "pushworker_pauses_total": ("counter", {"cause"}),
    # gauges
    "pushworker_devices_in_flight": ("gauge", set()),
    "pushworker_prefetch": ("gauge", set()),
    "pushworker_http2_connections": ("gauge", {"app"}),
    "pushworker_http2_stream_capacity": ("gauge", {"app"}),
    "pushworker_http2_streams_in_flight": ("gauge", {"app"}),
    "pushworker_amqp_connected": ("gauge", set()),
    "pushworker_redis_healthy": ("gauge", set()),
    "pushworker_paused": ("gauge", {"cause"}),
    # histograms (seconds)
    "pushworker_delivery_to_answer_seconds": ("histogram", set()),
    "pushworker_platform_round_trip_seconds": ("histogram", {"app"}),
    "pushworker_event_confirm_seconds": ("histogram", set()),
}

# rabbitmq_prometheus: /metrics/detailed?family=queue_coarse_metrics (rabbitmq_detailed_queue_*)
# and /metrics/per-object (rabbitmq_queue_*), one series per queue.
RABBITMQ = {
    "rabbitmq_detailed_queue_messages_ready": ("gauge", {"queue", "vhost"}),
    "rabbitmq_detailed_queue_messages_unacked": ("gauge", {"queue", "vhost"}),
    "rabbitmq_queue_messages_ready": ("gauge", {"queue", "vhost"}),
    "rabbitmq_queue_messages_unacked": ("gauge", {"queue", "vhost"}),
}

SCRAPE_LABELS = {"instance", "job"}
