#!/usr/bin/env node
// Publish a notification job to Pushworker (amqplib: npm install amqplib) and print its events.
// Usage: node publish_job.js TOKEN [TOKEN...]   (env PUSHWORKER_GROUP, PUSHWORKER_ALERT, PUSHWORKER_APP)
// The job goes to the queue push.jobs (env PUSHWORKER_JOB_QUEUE) persistent, mandatory, with
// publisher confirms. Each event about it is printed as "<routing key> <json>" until job.completed
// or job.rejected; exit 1 if none comes within PUSHWORKER_EVENT_TIMEOUT seconds (30).
'use strict';
const amqp = require('amqplib');
const { randomUUID } = require('crypto');

async function main() {
  const jobQueue = process.env.PUSHWORKER_JOB_QUEUE || 'push.jobs';
  const timeout = Number(process.env.PUSHWORKER_EVENT_TIMEOUT || 30);
  const job = {
    id: randomUUID(),
    app: process.env.PUSHWORKER_APP || 'default',
    tokens: process.argv.slice(2),
    groups: process.env.PUSHWORKER_GROUP ? [process.env.PUSHWORKER_GROUP] : [],
    payload: { aps: { alert: process.env.PUSHWORKER_ALERT || 'Hello from Node.js' } },
  };
  const connection = await amqp.connect(process.env.PUSHWORKER_AMQP_URL || 'amqp://guest:guest@127.0.0.1:5672');
  const channel = await connection.createConfirmChannel();

  // Bound before publishing, or the first events could come before the queue exists. Declared exactly
  // as the worker declares it: other arguments would be refused (406 PRECONDITION_FAILED).
  await channel.assertExchange('push.results', 'topic', { durable: true, alternateExchange: 'push.results.unrouted' });
  const { queue: events } = await channel.assertQueue('', { exclusive: true, autoDelete: true, durable: false });
  await channel.bindQueue(events, 'push.results', '#');

  // The workers declare the job queue (its type and arguments are theirs: a quorum queue refuses
  // any other declaration with 406). checkQueue only checks that it exists, whatever its type.
  await channel.checkQueue(jobQueue);
  let returned = false;
  channel.on('return', () => { returned = true; });   // emitted before the confirm of the same message
  channel.sendToQueue(jobQueue, Buffer.from(JSON.stringify(job)), {
    persistent: true, mandatory: true, contentType: 'application/json', messageId: job.id,
  });
  try {
    await channel.waitForConfirms();                   // rejects when the broker nacks
  } catch (error) {
    throw new Error(`job ${job.id} was not confirmed: the broker refused it (nack)`);
  }
  if (returned) throw new Error(`job ${job.id} was returned: no queue ${jobQueue}`);
  console.log(`published job ${job.id}`);

  const timer = setTimeout(() => {
    console.error(`no job.completed or job.rejected for job ${job.id} within ${timeout}s`);
    process.exit(1);
  }, timeout * 1000);
  await channel.consume(events, (message) => {
    const key = message.fields.routingKey;
    if (JSON.parse(message.content.toString()).job_id !== job.id) return;
    console.log(`${key} ${message.content.toString()}`);
    if (key === 'job.completed' || key === 'job.rejected') {
      clearTimeout(timer);
      connection.close();
    }
  }, { noAck: true });
}

main().catch((error) => { console.error(error.message); process.exit(1); });
