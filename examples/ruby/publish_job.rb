#!/usr/bin/ruby
# Publish a notification job to Pushworker (Bunny, Debian's ruby-bunny) and print its events. Usage:
#   publish_job.rb TOKEN [TOKEN...] [--group NAME] [--alert TEXT] [--app APP]
# The job goes to the queue push.jobs (env PUSHWORKER_JOB_QUEUE) persistent, mandatory, with
# publisher confirms. Each event about it is printed as "<routing key> <json>" until job.completed or
# job.rejected; exit 1 if none comes within PUSHWORKER_EVENT_TIMEOUT seconds (30).
require "bunny"
require "json"
require "optparse"
require "securerandom"
require "timeout"

options = { groups: [], alert: "Hello from Ruby", app: "default" }
tokens = OptionParser.new do |o|
  o.on("--group NAME") { |g| options[:groups] << g }
  o.on("--alert TEXT") { |a| options[:alert] = a }
  o.on("--app APP") { |a| options[:app] = a }
end.parse(ARGV)
job_queue = ENV.fetch("PUSHWORKER_JOB_QUEUE", "push.jobs")
timeout = Float(ENV.fetch("PUSHWORKER_EVENT_TIMEOUT", "30"))

job = {
  id: SecureRandom.uuid,
  app: options[:app],
  tokens: tokens,
  groups: options[:groups],
  payload: { aps: { alert: options[:alert] } },
}
# Bunny reads a trailing "/" as the empty vhost name (the AMQP URI spec): leave it off for "/".
connection = Bunny.new(ENV.fetch("PUSHWORKER_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672").chomp("/"))
connection.start
channel = connection.create_channel

# Bound before publishing, or the first events could come before the queue exists. Declared exactly
# as the worker declares it: other arguments would be refused (406 PRECONDITION_FAILED).
results = channel.topic("push.results", durable: true, arguments: { "alternate-exchange" => "push.results.unrouted" })
events = channel.queue("", exclusive: true, auto_delete: true).bind(results, routing_key: "#")
seen = Queue.new
events.subscribe { |delivery, _properties, body| seen << [delivery.routing_key, body] }

channel.confirm_select
# The workers declare the job queue (its type and arguments are theirs: a quorum queue refuses any
# other declaration with 406). A passive declare only checks that it exists, whatever its type.
begin
  channel.queue_declare(job_queue, passive: true)
rescue Bunny::NotFound
  abort "no queue #{job_queue}: start a worker once, it declares the queues"
end
returned = false
# Runs on Bunny's reader thread before the confirm of the same message is handled.
channel.default_exchange.on_return { returned = true }
channel.default_exchange.publish(JSON.generate(job), routing_key: job_queue, persistent: true, mandatory: true,
                                 content_type: "application/json", message_id: job[:id])
abort "job #{job[:id]} was not confirmed: the broker refused it (nack)" unless channel.wait_for_confirms
abort "job #{job[:id]} was returned: no queue #{job_queue}" if returned
puts "published job #{job[:id]}"
$stdout.flush

begin
  Timeout.timeout(timeout) do
    loop do
      key, body = seen.pop
      next unless JSON.parse(body)["job_id"] == job[:id]
      puts "#{key} #{body}"
      $stdout.flush
      break if %w[job.completed job.rejected].include?(key)
    end
  end
rescue Timeout::Error
  abort "no job.completed or job.rejected for job #{job[:id]} within #{timeout}s"
end
connection.close
