#!/usr/bin/env ruby
# A producer in Ruby: enqueue one APNs notification with the pg gem, then wait for its outcome.
#
#   gem install pg        # or Debian's ruby-pg
#   PUSHQ_DATABASE_URL=postgresql://pushq@db.internal/pushq ruby examples/ruby/enqueue.rb DEVICE_TOKEN
#
# Prints the row's id, then its final status; exits 0 only if it was sent. A producer usually
# does not wait: the outcome stays in the row (status, last_status, last_reason).
# The contract: docs/producers.md.
require "json"
require "pg"

FINAL = %w[sent failed expired cancelled].freeze

abort("usage: enqueue.rb DEVICE_TOKEN") unless ARGV.length == 1
token = ARGV[0]
payload = { aps: { alert: { title: "Order 1042", body: "Your order has shipped" }, sound: "default" } }

conn = PG.connect(ENV.fetch("PUSHQ_DATABASE_URL"))
# One transaction: in an application, the change that caused the notification would be
# written in it too, so both commit or neither does.
id = conn.transaction do |tx|
  tx.exec_params(<<~SQL, [token, JSON.generate(payload), JSON.generate({ order: 1042, example: "ruby" })]).getvalue(0, 0)
    INSERT INTO pushq.notifications (device_token, payload, expires_at, metadata)
    VALUES ($1, $2, now() + interval '1 hour', $3)
    RETURNING id
  SQL
end
puts "notification #{id}: enqueued"
$stdout.flush

deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 60
row = nil
loop do
  row = conn.exec_params("SELECT status, last_status, last_reason FROM pushq.notifications WHERE id = $1", [id]).first
  break if FINAL.include?(row["status"]) || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
  sleep 0.2
end
conn.close

puts "notification #{id}: #{row['status']} (HTTP #{row['last_status']}) #{row['last_reason']}".rstrip
exit(row["status"] == "sent" ? 0 : 1)
