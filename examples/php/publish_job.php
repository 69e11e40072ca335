#!/usr/bin/php
<?php
// Publish a notification job to Pushworker (Debian's php-amqplib) and print its events. Usage:
//   publish_job.php [--group=NAME] [--alert=TEXT] [--app=APP] TOKEN [TOKEN...]   (options first)
// The job goes to the queue push.jobs (env PUSHWORKER_JOB_QUEUE) persistent, mandatory, with
// publisher confirms. Each event about it is printed as "<routing key> <json>" until job.completed
// or job.rejected; exit 1 if none comes within PUSHWORKER_EVENT_TIMEOUT seconds (30).
require_once 'PhpAmqpLib/autoload.php';   // Debian's path (/usr/share/php is on the include path)

use PhpAmqpLib\Connection\AMQPStreamConnection;
use PhpAmqpLib\Exception\AMQPTimeoutException;
use PhpAmqpLib\Message\AMQPMessage;
use PhpAmqpLib\Wire\AMQPTable;

$options = getopt('', ['group:', 'alert:', 'app:'], $rest);
$tokens = array_slice($argv, $rest);
$jobQueue = getenv('PUSHWORKER_JOB_QUEUE') ?: 'push.jobs';
$timeout = (float) (getenv('PUSHWORKER_EVENT_TIMEOUT') ?: 30);
$bytes = random_bytes(16);
$bytes[6] = chr(ord($bytes[6]) & 0x0f | 0x40);    // a version 4 (random) UUID
$bytes[8] = chr(ord($bytes[8]) & 0x3f | 0x80);
$id = vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($bytes), 4));
$job = [
    'id' => $id,
    'app' => $options['app'] ?? 'default',
    'tokens' => $tokens,
    'groups' => (array) ($options['group'] ?? []),
    'payload' => ['aps' => ['alert' => $options['alert'] ?? 'Hello from PHP']],
];

$url = parse_url(getenv('PUSHWORKER_AMQP_URL') ?: 'amqp://guest:guest@127.0.0.1:5672/');
$path = $url['path'] ?? '/';
$vhost = $path === '/' || $path === '' ? '/' : rawurldecode(substr($path, 1));
$connection = new AMQPStreamConnection($url['host'], $url['port'] ?? 5672, rawurldecode($url['user'] ?? 'guest'),
                                       rawurldecode($url['pass'] ?? 'guest'), $vhost);
$channel = $connection->channel();

// Bound before publishing, or the first events could come before the queue exists. Declared exactly
// as the worker declares it (durable, not auto-delete): other arguments would be refused (406).
$channel->exchange_declare('push.results', 'topic', false, true, false, false, false,
                           new AMQPTable(['alternate-exchange' => 'push.results.unrouted']));
[$events] = $channel->queue_declare('', false, false, true, true);
$channel->queue_bind($events, 'push.results', '#');

$channel->confirm_select();
// The workers declare the job queue (its type and arguments are theirs: a quorum queue refuses any
// other declaration with 406). A passive declare only checks that it exists, whatever its type.
try {
    $channel->queue_declare($jobQueue, true);
} catch (PhpAmqpLib\Exception\AMQPProtocolChannelException $error) {
    fwrite(STDERR, "no queue $jobQueue ({$error->getMessage()}): start a worker once, it declares the queues\n");
    exit(1);
}
$refused = null;
$channel->set_nack_handler(function () use (&$refused) { $refused = 'was not confirmed: the broker refused it (nack)'; });
$channel->set_return_listener(function ($code, $text) use (&$refused, $jobQueue) {
    $refused = "was returned: no queue $jobQueue ($code $text)";
});
$message = new AMQPMessage(json_encode($job), [
    'content_type' => 'application/json',
    'delivery_mode' => AMQPMessage::DELIVERY_MODE_PERSISTENT,
    'message_id' => $id,
]);
$channel->basic_publish($message, '', $jobQueue, true);
try {
    $channel->wait_for_pending_acks_returns(10);
} catch (AMQPTimeoutException $e) {
    $refused = 'was not confirmed within 10 s';
}
if ($refused !== null) {
    fwrite(STDERR, "job $id $refused\n");
    exit(1);
}
echo "published job $id\n";

$done = false;
$channel->basic_consume($events, '', false, true, true, false, function (AMQPMessage $event) use ($id, &$done) {
    $key = $event->getRoutingKey();
    if ((json_decode($event->getBody(), true)['job_id'] ?? null) !== $id) {
        return;
    }
    echo "$key {$event->getBody()}\n";
    $done = in_array($key, ['job.completed', 'job.rejected'], true);
});
$deadline = microtime(true) + $timeout;
try {
    while (!$done) {
        $channel->wait(null, false, max(0.001, $deadline - microtime(true)));
    }
} catch (AMQPTimeoutException $e) {
    fwrite(STDERR, "no job.completed or job.rejected for job $id within {$timeout}s\n");
    exit(1);
}
$channel->close();
$connection->close();
